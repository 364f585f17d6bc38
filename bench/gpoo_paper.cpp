// Reproduces the experiments of "Gaussian Process Bandits with Aggregated Feedback" (Zhang, Tsuchida
// & Ong, AAAI 2022; shared/papers/digest-gpoo-zoghi.md, sections 2.1, 2.2, 5.2-5.5, 6 and Appendix X):
// the Figure 4 comparison of GPOO with StoOO, AVE-StoOO and GP-UCB on two 1-D functions, and the
// S x K sensitivity grid of Figure 6. Write-up: bench/results/gpoo_paper.md.
//
// Test functions (digest 5.2, 5.5 and App. X). Each f is the posterior mean of a GP with an RBF
// kernel of variance 0.1 conditioned on hand-designed points, on X = [0, 1]. Two families:
// - literal (the paper's text): f1 from x = [0.05, 0.2, 0.4, 0.65, 0.9], y = [0.85, 0.1, 0.87,
//   0.05, 0.98] with lengthscale 0.05; f2 from [0, 0.9] split into 10 regions (centre -> 0.1,
//   centre + 2/3 region -> 0.2) plus (0.95, 0.9), lengthscale 0.05; f3 (Figures 5, 6) = f2's points
//   plus (0.94, 0.1), (0.945, 0.2) with lengthscale 0.01. Conditioning noise sd 0.005.
// - code (the authors' run_sim.py): f1 with lengthscale 0.1, f2 and f3 with 9 regions of width 0.1
//   (np.linspace(0, 0.9, 10)), conditioning noise VARIANCE 0.005.
// f* is the maximum over np.linspace(0, 1, 1000), as in the paper.
//
// Feedback: the average of f over the S representatives of the chosen cell (S = 1: the centre;
// S > 1: the centres of S equal sub-intervals) plus N(0, 0.1^2) noise. The noise of round t of run r
// is the same draw for every method (common random numbers).
// Metric: aggregated regret R_N = f* - Fbar(recommended cell) (Def. 2), mean and sd over runs.
//
// Methods. All trees are K-ary (K = 2 in Figure 4), delta(h) = 14 * 2^-h for every method and K
// (App. E; the code keeps 2^-h for K != 2), error probability theta = eta = 0.1.
// - GPOO-paper: tune::GpooSearch, variant paper (root only at the start), beta_t = 2 log(M pi^2 t^2 /
//   (6 theta)) (Lemma 1), model noise variance = the true reward noise 0.01, known kernel (RBF, var
//   0.1, lengthscale 0.05), h_max = 10.
// - GPOO-code: variant code (root expanded, its K children sampled once), beta_t = 0.1 ln(pi^2 t^2 /
//   0.6), model noise variance 0.005 (the code's gp_noise_var), same kernel. The model lengthscale is
//   0.05 even where f was generated with 0.1 (code f1) or 0.01 (f3), as in the code.
// - StoOO (Munos 2014, S = 1 and S = 10): b = mean + sqrt(log(N^2/eta) / (2T)) + delta(h), expand
//   when T >= log(N^2/eta) / (2 delta(h)^2) and h <= h_max. Depends on the budget N, so every N is a
//   separate run.
// - AVE-StoOO (the paper's App. C, Alg. 2): b = mean + sqrt(2 log(t^2/theta) / T) + delta(h), expand
//   when T >= 2 log(t^2/theta) / delta(h)^2 (no h_max). Anytime.
// - StoOO-code (the authors' StoOO class, used for both S): b = mean + log(N^2/eta) / (2T) + delta(h)
//   (no square root), expand when T >= log(N^2/eta) / (2T), no h_max. Separate runs per N.
//   All StoOO variants: unsampled leaves have b = +inf; the recommendation is the deepest expanded
//   node, the first one expanded at that depth (the code's rule; the paper says "any").
// - GP-UCB (not in the paper; digest 6.12): arms = every cell of the complete K-ary tree of depth
//   0..h_max + 1 (4095 cells for K = 2), each observed through the same aggregated feedback, modelled
//   by tune::GaussianProcess with WeightedPointsQuery observations (weights 1/S) and the known
//   kernel. Select argmax mean + sqrt(beta_t) sd; recommend argmax posterior mean over all arms.
//   GP-UCB-theory: beta_t = 2 log(|A| pi^2 t^2 / (6 theta)) (Srinivas et al., finite arms), noise
//   variance 0.01; GP-UCB-code: the code's beta_t and noise variance 0.005 (GPOO-code's model).
// Ties between b-values go to the lower depth, then the lower label i (left first).
//
// Figure 6: GPOO (both variants) on f3, S in {1, 10, 20, 30, 40, 50} x K in {2, 3, 4, 5}, budgets 25
// and 50 (read off one anytime run of 50 rounds: GPOO does not depend on N), log of the mean
// aggregated regret.
//
// Usage: gpoo_paper [--runs N] [--csv PATH] [--part fig4|fig6|both] [--sk code|paper|matched|all] [--quick]
//   --sk matched (default): GPOO-paper on the literal f3 and GPOO-code on the code f3 (the setting
//   that made the paper's figure); code / paper: only one of them; all: both variants on both f3s.
//   Figure 6 dominates the run time (about 2 CPU-minutes per variant at 30 runs: S = 50 costs 2500
//   kernel values per pair of nodes inside GpooSearch). --quick: 3 runs, N = 40 and 25.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Dense>

#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/kernel.hpp"
#include "tune/gp/observation.hpp"
#include "tune/random/rng.hpp"
#include "tune/strategy/gpoo_search.hpp"
#include "tune/tree/partition_tree.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double kSignalVariance = 0.1;
constexpr double kModelLengthscale = 0.05;
constexpr double kRewardNoiseSd = 0.1;
constexpr double kTheta = 0.1;  // GPOO's theta, StoOO's eta
constexpr double kDeltaC = 14.0;
constexpr std::size_t kHmax = 10;
constexpr std::size_t kGrid = 1000;
constexpr double kPaperModelNoise = kRewardNoiseSd * kRewardNoiseSd;  // the known reward noise
constexpr double kCodeModelNoise = 0.005;                             // run_sim.py gp_noise_var

double delta_of(std::size_t h) { return kDeltaC * std::ldexp(1.0, -static_cast<int>(h)); }

// ---- test functions -----------------------------------------------------------------------------

enum class Family { literal, code };
const char* family_name(Family f) { return f == Family::literal ? "literal" : "code"; }

struct TestFunction {
  std::string name;
  Family family = Family::literal;
  double lengthscale = 0.05;
  double noise_variance = 0.0;  // of the conditioning
  VectorXd xs, alpha;           // f(x) = sum_i k(x, xs_i) alpha_i
  double fstar = 0.0, xstar = 0.0;

  double operator()(double x) const {
    const double inv = 0.5 / (lengthscale * lengthscale);
    double s = 0.0;
    for (Index i = 0; i < xs.size(); ++i) {
      const double d = x - xs[i];
      s += alpha[i] * std::exp(-d * d * inv);
    }
    return kSignalVariance * s;
  }
  std::string label() const { return name + "-" + family_name(family); }
};

TestFunction make_function(std::string name, Family family, const std::vector<double>& x,
                           const std::vector<double>& y, double lengthscale) {
  TestFunction f;
  f.name = std::move(name);
  f.family = family;
  f.lengthscale = lengthscale;
  f.noise_variance = family == Family::literal ? 0.005 * 0.005 : 0.005;
  const Index n = static_cast<Index>(x.size());
  f.xs = Eigen::Map<const VectorXd>(x.data(), n);
  const VectorXd yy = Eigen::Map<const VectorXd>(y.data(), n);
  MatrixXd K(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) {
      const double d = x[static_cast<std::size_t>(i)] - x[static_cast<std::size_t>(j)];
      K(i, j) = kSignalVariance * std::exp(-0.5 * d * d / (lengthscale * lengthscale));
    }
  K.diagonal().array() += f.noise_variance;
  f.alpha = K.llt().solve(yy);
  f.fstar = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < kGrid; ++i) {  // np.linspace(0, 1, 1000)
    const double xi = static_cast<double>(i) / static_cast<double>(kGrid - 1);
    const double v = f(xi);
    if (v > f.fstar) {
      f.fstar = v;
      f.xstar = xi;
    }
  }
  return f;
}

// f2's conditioning points: [0, 0.9] in `regions` regions, centre -> 0.1, centre + 2/3 region -> 0.2,
// then the optimum (0.95, 0.9).
void periodic_points(std::size_t regions, std::vector<double>& x, std::vector<double>& y) {
  const double w = 0.9 / static_cast<double>(regions);
  for (std::size_t r = 0; r < regions; ++r) {
    const double c = (static_cast<double>(r) + 0.5) * w;
    x.push_back(c);
    y.push_back(0.1);
    x.push_back(c + 2.0 / 3.0 * w);
    y.push_back(0.2);
  }
  x.push_back(0.95);
  y.push_back(0.9);
}

TestFunction f1(Family family) {
  return make_function("f1", family, {0.05, 0.2, 0.4, 0.65, 0.9}, {0.85, 0.1, 0.87, 0.05, 0.98},
                       family == Family::literal ? 0.05 : 0.1);
}

TestFunction f2(Family family) {
  std::vector<double> x, y;
  periodic_points(family == Family::literal ? 10 : 9, x, y);
  return make_function("f2", family, x, y, 0.05);
}

TestFunction f3(Family family) {
  std::vector<double> x, y;
  periodic_points(family == Family::literal ? 10 : 9, x, y);
  x.insert(x.end(), {0.94, 0.945});
  y.insert(y.end(), {0.1, 0.2});
  return make_function("f3", family, x, y, 0.01);
}

// Fbar of the cell [lo, hi]: the mean of f at the centres of S equal sub-intervals.
double cell_average(const TestFunction& f, double lo, double hi, std::size_t S) {
  double s = 0.0;
  const double w = (hi - lo) / static_cast<double>(S);
  for (std::size_t k = 0; k < S; ++k) s += f(lo + (static_cast<double>(k) + 0.5) * w);
  return s / static_cast<double>(S);
}

// ---- methods ------------------------------------------------------------------------------------

enum class Method { gpoo_paper, gpoo_code, stoo_munos, ave_stoo, stoo_code, gpucb_theory, gpucb_code };

const char* method_name(Method m) {
  switch (m) {
    case Method::gpoo_paper: return "GPOO-paper";
    case Method::gpoo_code: return "GPOO-code";
    case Method::stoo_munos: return "StoOO (Munos)";
    case Method::ave_stoo: return "AVE-StoOO (App. C)";
    case Method::stoo_code: return "StoOO-code";
    case Method::gpucb_theory: return "GP-UCB-theory";
    case Method::gpucb_code: return "GP-UCB-code";
  }
  return "?";
}

// The regret and recommended depth after each round 1..N.
struct Trace {
  std::vector<double> regret;
  std::vector<double> depth;
};

double noise_draw(tune::Rng& rng) { return kRewardNoiseSd * tune::standard_normal(rng); }

tune::GpooSearchOptions gpoo_options(bool code, std::size_t S, std::size_t K) {
  tune::GpooSearchOptions o;
  o.aggregation = tune::GpooAggregation::representatives;
  o.representatives = S;
  o.branching = K;
  o.max_depth = kHmax;
  o.beta = code ? tune::GpooBeta::code : tune::GpooBeta::theory;
  o.beta_theta = kTheta;
  o.beta_scale = 0.1;
  o.delta = tune::GpooDelta::paper;
  o.delta_c = kDeltaC;
  o.kernel = tune::Kernel(tune::KernelType::squared_exponential, VectorXd::Constant(1, kModelLengthscale),
                          kSignalVariance);
  o.noise_variance = code ? kCodeModelNoise : kPaperModelNoise;
  o.variant = code ? tune::GpooVariant::code : tune::GpooVariant::paper;
  return o;
}

Trace run_gpoo(const TestFunction& f, bool code, std::size_t S, std::size_t K, std::size_t N, std::uint64_t seed) {
  tune::GpooSearch search(1, gpoo_options(code, S, K));
  tune::Rng rng(seed);
  Trace tr;
  for (std::size_t t = 1; t <= N; ++t) {
    const tune::GpooQuery q = search.next();
    double truth = 0.0;
    for (Index c = 0; c < q.points.cols(); ++c) truth += f(q.points(0, c));
    truth /= static_cast<double>(q.points.cols());
    search.tell(q.node, truth + noise_draw(rng));
    const tune::GpooRecommendation rec = search.recommend();
    tr.regret.push_back(f.fstar - cell_average(f, rec.lower[0], rec.upper[0], S));
    tr.depth.push_back(static_cast<double>(rec.depth));
  }
  return tr;
}

enum class StoRule { munos, appendix_c, code };

bool label_less(const tune::PartitionTree& tree, tune::NodeId a, tune::NodeId b) {
  const tune::PartitionNode& na = tree.node(a);
  const tune::PartitionNode& nb = tree.node(b);
  if (na.depth != nb.depth) return na.depth < nb.depth;
  return na.lower[0] < nb.lower[0];
}

// One StoOO-family run with budget n; the trace holds the recommendation after every round.
Trace run_stoo(const TestFunction& f, StoRule rule, std::size_t S, std::size_t K, std::size_t n, std::uint64_t seed) {
  tune::PartitionTree tree(1, tune::PartitionTreeOptions{.split = tune::SplitRule::longest_side, .branching = K});
  std::vector<double> sum(1, 0.0);
  std::vector<std::size_t> count(1, 0);
  std::vector<tune::NodeId> leaves{tune::PartitionTree::root};
  tune::NodeId rec = tune::PartitionTree::root;
  long rec_depth = -1;  // deepest expanded depth so far
  const double log_n = std::log(static_cast<double>(n) * static_cast<double>(n) / kTheta);
  tune::Rng rng(seed);
  Trace tr;
  for (std::size_t t = 1; t <= n; ++t) {
    const double log_t = std::log(static_cast<double>(t) * static_cast<double>(t) / kTheta);
    auto width = [&](std::size_t T) {
      const double TT = static_cast<double>(T);
      switch (rule) {
        case StoRule::munos: return std::sqrt(log_n / (2.0 * TT));
        case StoRule::appendix_c: return std::sqrt(2.0 * log_t / TT);
        case StoRule::code: return log_n / (2.0 * TT);
      }
      return 0.0;
    };
    std::size_t best_k = 0;
    double best_b = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < leaves.size(); ++k) {
      const tune::NodeId id = leaves[k];
      const std::size_t T = count[id];
      const double b = T == 0 ? std::numeric_limits<double>::infinity()
                              : sum[id] / static_cast<double>(T) + width(T) + delta_of(tree.node(id).depth);
      if (k == 0 || b > best_b || (b == best_b && label_less(tree, id, leaves[best_k]))) {
        best_k = k;
        best_b = b;
      }
    }
    const tune::NodeId id = leaves[best_k];
    const double lo = tree.node(id).lower[0], hi = tree.node(id).upper[0];
    const std::size_t depth = tree.node(id).depth;
    sum[id] += cell_average(f, lo, hi, S) + noise_draw(rng);
    const std::size_t T = ++count[id];
    const double TT = static_cast<double>(T), d = delta_of(depth);
    bool expand = false;
    switch (rule) {
      case StoRule::munos: expand = TT >= log_n / (2.0 * d * d) && depth <= kHmax; break;
      case StoRule::appendix_c: expand = TT >= 2.0 * log_t / (d * d); break;
      case StoRule::code: expand = TT >= log_n / (2.0 * TT); break;
    }
    if (expand) {
      const std::vector<tune::NodeId> children = tree.expand(id);
      leaves.erase(leaves.begin() + static_cast<std::ptrdiff_t>(best_k));
      leaves.insert(leaves.end(), children.begin(), children.end());
      sum.resize(tree.size(), 0.0);
      count.resize(tree.size(), 0);
      if (static_cast<long>(depth) > rec_depth) {
        rec = id;
        rec_depth = static_cast<long>(depth);
      }
    }
    tr.regret.push_back(f.fstar - cell_average(f, tree.node(rec).lower[0], tree.node(rec).upper[0], S));
    tr.depth.push_back(static_cast<double>(tree.node(rec).depth));
  }
  return tr;
}

// StoOO variants whose constants depend on the budget: one run per N, each contributing its end.
Trace run_stoo_per_budget(const TestFunction& f, StoRule rule, std::size_t S, std::size_t K, std::size_t N,
                          std::uint64_t seed) {
  Trace tr;
  for (std::size_t n = 1; n <= N; ++n) {
    const Trace one = run_stoo(f, rule, S, K, n, seed);
    tr.regret.push_back(one.regret.back());
    tr.depth.push_back(one.depth.back());
  }
  return tr;
}

// GP-UCB's arms: every cell of the complete K-ary tree down to depth h_max + 1, with S
// representatives each, in (depth, i) order. Every representative is an odd multiple of
// 1 / (2 S K^(h_max + 1)), so the kernel between two of them is a table lookup by the integer
// distance (the run time of GP-UCB is these S^2 |A| kernel values per round).
struct ArmSet {
  std::size_t S = 1;
  Index count = 0;
  std::vector<std::int64_t> points;  // arm-major, in units of 1 / (2 S K^(h_max + 1))
  std::vector<double> table;          // k(d) at integer distances d
  VectorXd prior;                     // kbar(a, a)
  std::vector<double> lower, upper, depth;
  std::vector<double> point_values;   // the points as doubles, arm-major
};

ArmSet make_arms(std::size_t S, std::size_t K) {
  ArmSet arms;
  arms.S = S;
  std::int64_t finest = 1;
  for (std::size_t h = 0; h <= kHmax + 1; ++h) finest *= static_cast<std::int64_t>(K);
  const std::int64_t unit = 2 * static_cast<std::int64_t>(S) * finest;  // units per [0, 1]
  std::int64_t cells = 1;
  for (std::size_t h = 0; h <= kHmax + 1; ++h, cells *= static_cast<std::int64_t>(K)) {
    const std::int64_t width = unit / cells;  // a cell's width in units: 2 S K^(H - h)
    for (std::int64_t i = 0; i < cells; ++i) {
      arms.lower.push_back(static_cast<double>(i) / static_cast<double>(cells));
      arms.upper.push_back(static_cast<double>(i + 1) / static_cast<double>(cells));
      arms.depth.push_back(static_cast<double>(h));
      for (std::size_t s = 0; s < S; ++s) {
        // lo + (s + 1/2) w / S = (i width + (2 s + 1) width / (2 S)) units
        const std::int64_t p = i * width + (2 * static_cast<std::int64_t>(s) + 1) * (width / (2 * static_cast<std::int64_t>(S)));
        arms.points.push_back(p);
        arms.point_values.push_back(static_cast<double>(p) / static_cast<double>(unit));
      }
    }
  }
  arms.count = static_cast<Index>(arms.lower.size());
  arms.table.resize(static_cast<std::size_t>(unit) + 1);
  const double inv = 0.5 / (kModelLengthscale * kModelLengthscale);
  for (std::size_t d = 0; d < arms.table.size(); ++d) {
    const double x = static_cast<double>(d) / static_cast<double>(unit);
    arms.table[d] = kSignalVariance * std::exp(-x * x * inv);
  }
  arms.prior.resize(arms.count);
  for (Index a = 0; a < arms.count; ++a) {
    const std::size_t base = static_cast<std::size_t>(a) * S;
    double sum = 0.0;
    for (std::size_t i = 0; i < S; ++i)
      for (std::size_t j = 0; j < S; ++j)
        sum += arms.table[static_cast<std::size_t>(std::abs(arms.points[base + i] - arms.points[base + j]))];
    arms.prior[a] = sum / static_cast<double>(S * S);
  }
  return arms;
}

// kbar(arm j, a) for every arm a: the mean of k over the S x S representative pairs.
VectorXd kbar_row(const ArmSet& arms, Index j) {
  const std::size_t S = arms.S;
  VectorXd row(arms.count);
  const std::int64_t* obs = arms.points.data() + static_cast<std::size_t>(j) * S;
  const std::int64_t* p = arms.points.data();
  const double* table = arms.table.data();
  for (Index a = 0; a < arms.count; ++a, p += S) {
    double sum = 0.0;
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t r = 0; r < S; ++r) sum += table[std::abs(p[r] - obs[s])];
    row[a] = sum / static_cast<double>(S * S);
  }
  return row;
}

Trace run_gpucb(const TestFunction& f, const ArmSet& arms, const VectorXd& truth, bool code, std::size_t N,
                std::uint64_t seed) {
  tune::GpHyperparameters hp;
  hp.kernel = tune::KernelType::squared_exponential;
  hp.lengthscales = VectorXd::Constant(1, kModelLengthscale);
  hp.outputscale = kSignalVariance;
  hp.noise_variances = {code ? kCodeModelNoise : kPaperModelNoise};
  tune::GaussianProcess gp(1, hp);  // standardisation {0, 1}: raw units, zero prior mean
  const Index A = arms.count, S = static_cast<Index>(arms.S);
  MatrixXd V(static_cast<Index>(N), A);  // rows of L^{-1} K(obs, arms)
  VectorXd mean = VectorXd::Zero(A), sumsq = VectorXd::Zero(A);
  tune::Rng rng(seed);
  Trace tr;
  const double pi2 = std::numbers::pi * std::numbers::pi;
  for (std::size_t t = 1; t <= N; ++t) {
    const double tt = static_cast<double>(t);
    const double beta = code ? 0.1 * std::log(pi2 * tt * tt / (6.0 * kTheta))
                             : 2.0 * std::log(static_cast<double>(A) * pi2 * tt * tt / (6.0 * kTheta));
    const double sb = std::sqrt(beta);
    Index sel = 0;
    double best = -std::numeric_limits<double>::infinity();
    for (Index a = 0; a < A; ++a) {
      const double u = mean[a] + sb * std::sqrt(std::max(0.0, arms.prior[a] - sumsq[a]));
      if (u > best) {  // strict: ties keep the lower depth, then the lower i
        best = u;
        sel = a;
      }
    }
    tune::WeightedPointsQuery q{Eigen::Map<const MatrixXd>(arms.point_values.data() + sel * S, 1, S),
                                VectorXd::Constant(S, 1.0 / static_cast<double>(S))};
    gp.add(tune::Observation{.query = std::move(q), .value = truth[sel] + noise_draw(rng)});
    const Index n = static_cast<Index>(gp.size());
    const MatrixXd L = gp.cholesky_factor();
    const VectorXd krow = kbar_row(arms, sel);
    VectorXd v = krow;
    if (n > 1) v.noalias() -= V.topRows(n - 1).transpose() * L.row(n - 1).head(n - 1).transpose();
    v /= L(n - 1, n - 1);
    V.row(n - 1) = v.transpose();
    mean += gp.whitened_targets()[n - 1] * v;
    sumsq += v.cwiseAbs2();
    Index rec = 0;
    mean.maxCoeff(&rec);
    tr.regret.push_back(f.fstar - truth[rec]);
    tr.depth.push_back(arms.depth[static_cast<std::size_t>(rec)]);
  }
  return tr;
}

// ---- statistics and printing --------------------------------------------------------------------

struct Stat {
  double mean = 0.0, sd = 0.0;
};

Stat stat_of(const std::vector<double>& v) {
  Stat s;
  if (v.empty()) return s;
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0.0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  return s;
}

std::vector<double> column(const std::vector<Trace>& runs, std::size_t N, bool depth = false) {
  std::vector<double> v;
  for (const Trace& t : runs) v.push_back(depth ? t.depth[N - 1] : t.regret[N - 1]);
  return v;
}

std::uint64_t seed_of(std::uint64_t part, std::uint64_t function, std::uint64_t S, std::uint64_t run) {
  return tune::mix64(tune::mix64(tune::mix64(tune::mix64(part) ^ function) ^ S) ^ run);
}

struct MethodRuns {
  Method method;
  std::vector<Trace> runs;
};

void write_csv_rows(std::ofstream& csv, const char* part, const TestFunction& f, const char* method, std::size_t S,
                    std::size_t K, const std::vector<Trace>& runs, std::size_t N) {
  for (std::size_t n = 1; n <= N; ++n) {
    const Stat r = stat_of(column(runs, n)), d = stat_of(column(runs, n, true));
    csv << part << ',' << family_name(f.family) << ',' << f.name << ',' << method << ',' << S << ',' << K << ',' << n
        << ',' << runs.size() << ',' << r.mean << ',' << r.sd << ',' << d.mean << '\n';
  }
}

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "gpoo_paper: %s\nusage: gpoo_paper [--runs N] [--csv PATH] [--part fig4|fig6|both] [--sk code|paper|matched|all] "
               "[--quick]\n",
               message.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t runs = 30;
  bool runs_set = false, quick = false, fig4 = true, fig6 = true;
  std::string sk = "matched";
  std::string csv_path = "gpoo_paper.csv";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--runs") {
      const std::string v = value();
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n == 0 || v[0] == '-') usage_error("--runs expects a positive integer");
      runs = static_cast<std::size_t>(n);
      runs_set = true;
    } else if (a == "--csv") {
      csv_path = value();
    } else if (a == "--part") {
      const std::string v = value();
      if (v == "fig4") {
        fig6 = false;
      } else if (v == "fig6") {
        fig4 = false;
      } else if (v != "both") {
        usage_error("--part expects fig4, fig6 or both");
      }
    } else if (a == "--sk") {
      sk = value();
      if (sk != "code" && sk != "paper" && sk != "matched" && sk != "all")
        usage_error("--sk expects code, paper, matched or all");
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--help" || a == "-h") {
      std::printf("usage: gpoo_paper [--runs N] [--csv PATH] [--part fig4|fig6|both] [--sk code|paper|matched|all] [--quick]\n");
      return 0;
    } else {
      usage_error("unknown argument '" + a + "'");
    }
  }
  if (quick && !runs_set) runs = 3;

  std::ofstream csv(csv_path);
  if (!csv) {
    std::fprintf(stderr, "gpoo_paper: cannot write '%s'\n", csv_path.c_str());
    return 1;
  }
  csv << "part,family,function,method,S,K,N,runs,regret_mean,regret_sd,rec_depth_mean\n";
  csv.precision(8);

  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  std::printf("# GPOO (Zhang, Tsuchida & Ong, AAAI 2022): Figure 4 and Figure 6 reproduction\n");
  std::printf("%zu runs per cell; reward noise sd %.2g; delta(h) = %g * 2^-h; theta = eta = %g; h_max = %zu; "
              "model kernel RBF var %g lengthscale %g\n",
              runs, kRewardNoiseSd, kDeltaC, kTheta, kHmax, kSignalVariance, kModelLengthscale);
  std::printf("metric: aggregated regret f* - Fbar(recommended cell), mean +- sd over runs\n");

  std::printf("\n## Test functions (f* = max over linspace(0, 1, 1000))\n\n");
  std::printf("| function | generating lengthscale | conditioning noise variance | argmax | f* |\n|---|---|---|---|---|\n");
  const std::vector<TestFunction> functions4 = {f1(Family::literal), f2(Family::literal), f1(Family::code),
                                                f2(Family::code)};
  const std::vector<TestFunction> functions6 = {f3(Family::literal), f3(Family::code)};
  for (const auto* list : {&functions4, &functions6})
    for (const TestFunction& f : *list)
      std::printf("| %s | %g | %g | %.3f | %.4f |\n", f.label().c_str(), f.lengthscale, f.noise_variance, f.xstar,
                  f.fstar);
  std::fflush(stdout);

  if (fig4) {
    const std::size_t N = quick ? 40 : 80;
    const std::vector<std::size_t> checkpoints =
        quick ? std::vector<std::size_t>{5, 10, 20, 40} : std::vector<std::size_t>{5, 10, 20, 40, 60, 80};
    const std::vector<Method> methods = {Method::gpoo_paper, Method::gpoo_code,    Method::stoo_munos,
                                         Method::ave_stoo,   Method::stoo_code,    Method::gpucb_theory,
                                         Method::gpucb_code};
    std::printf("\n## Figure 4: K = 2, h_max = %zu, N = 1..%zu\n", kHmax, N);
    // summary[setting][method] = mean over N = 1..N of the mean regret curve
    std::vector<std::string> settings;
    std::vector<std::vector<double>> summary;
    for (std::size_t S : {std::size_t{1}, std::size_t{10}}) {
      const ArmSet arms = make_arms(S, 2);
      for (std::size_t fi = 0; fi < functions4.size(); ++fi) {
        const TestFunction& f = functions4[fi];
        VectorXd truth(arms.count);
        for (Index a = 0; a < arms.count; ++a)
          truth[a] = cell_average(f, arms.lower[static_cast<std::size_t>(a)], arms.upper[static_cast<std::size_t>(a)], S);
        std::vector<MethodRuns> all;
        for (Method m : methods) {
          const double t0 = elapsed();
          MethodRuns mr{m, {}};
          for (std::size_t r = 0; r < runs; ++r) {
            const std::uint64_t seed = seed_of(4, fi, S, r);
            switch (m) {
              case Method::gpoo_paper: mr.runs.push_back(run_gpoo(f, false, S, 2, N, seed)); break;
              case Method::gpoo_code: mr.runs.push_back(run_gpoo(f, true, S, 2, N, seed)); break;
              case Method::stoo_munos: mr.runs.push_back(run_stoo_per_budget(f, StoRule::munos, S, 2, N, seed)); break;
              case Method::ave_stoo: mr.runs.push_back(run_stoo(f, StoRule::appendix_c, S, 2, N, seed)); break;
              case Method::stoo_code: mr.runs.push_back(run_stoo_per_budget(f, StoRule::code, S, 2, N, seed)); break;
              case Method::gpucb_theory: mr.runs.push_back(run_gpucb(f, arms, truth, false, N, seed)); break;
              case Method::gpucb_code: mr.runs.push_back(run_gpucb(f, arms, truth, true, N, seed)); break;
            }
          }
          std::fprintf(stderr, "[%7.1f s] fig4 %s S=%zu %s: %zu runs in %.1f s\n", elapsed(), f.label().c_str(), S,
                       method_name(m), runs, elapsed() - t0);
          write_csv_rows(csv, "fig4", f, method_name(m), S, 2, mr.runs, N);
          all.push_back(std::move(mr));
        }
        std::printf("\n### %s, S = %zu (f* = %.4f)\n\n| method |", f.label().c_str(), S, f.fstar);
        for (std::size_t c : checkpoints) std::printf(" N=%zu |", c);
        std::printf(" depth@%zu |\n|---|", N);
        for (std::size_t k = 0; k <= checkpoints.size(); ++k) std::printf("---|");
        std::printf("\n");
        std::vector<std::string> best(checkpoints.size());
        std::vector<double> best_mean(checkpoints.size(), std::numeric_limits<double>::infinity());
        for (const MethodRuns& mr : all) {
          std::printf("| %s |", method_name(mr.method));
          for (std::size_t k = 0; k < checkpoints.size(); ++k) {
            const Stat s = stat_of(column(mr.runs, checkpoints[k]));
            std::printf(" %.3f ± %.3f |", s.mean, s.sd);
            if (s.mean < best_mean[k]) {
              best_mean[k] = s.mean;
              best[k] = method_name(mr.method);
            }
          }
          std::printf(" %.1f |\n", stat_of(column(mr.runs, N, true)).mean);
        }
        std::printf("\nlowest mean:");
        for (std::size_t k = 0; k < checkpoints.size(); ++k)
          std::printf("%s N=%zu %s", k ? ";" : "", checkpoints[k], best[k].c_str());
        std::printf("\n");
        std::fflush(stdout);
        settings.push_back(f.label() + " S=" + std::to_string(S));
        summary.emplace_back();
        for (const MethodRuns& mr : all) {
          double area = 0.0;
          for (std::size_t n = 1; n <= N; ++n) area += stat_of(column(mr.runs, n)).mean;
          summary.back().push_back(area / static_cast<double>(N));
        }
      }
    }
    std::printf("\n### Figure 4 summary: mean aggregated regret averaged over N = 1..%zu (area under the mean curve / N)\n\n| method |", N);
    for (const std::string& name : settings) std::printf(" %s |", name.c_str());
    std::printf("\n|---|");
    for (std::size_t k = 0; k < settings.size(); ++k) std::printf("---|");
    std::printf("\n");
    for (std::size_t m = 0; m < methods.size(); ++m) {
      std::printf("| %s |", method_name(methods[m]));
      for (std::size_t k = 0; k < settings.size(); ++k) {
        double lowest = std::numeric_limits<double>::infinity();
        for (double v : summary[k]) lowest = std::min(lowest, v);
        std::printf(summary[k][m] == lowest ? " **%.3f** |" : " %.3f |", summary[k][m]);
      }
      std::printf("\n");
    }
    std::fflush(stdout);
  }

  if (fig6) {
    const std::size_t N = quick ? 25 : 50;
    const std::vector<std::size_t> budgets = quick ? std::vector<std::size_t>{25} : std::vector<std::size_t>{25, 50};
    const std::vector<std::size_t> Ss = {1, 10, 20, 30, 40, 50};
    const std::vector<std::size_t> Ks = {2, 3, 4, 5};
    std::printf("\n## Figure 6: GPOO on f3, S x K, budgets");
    for (std::size_t b : budgets) std::printf(" %zu", b);
    std::printf(" (one anytime run of %zu rounds per seed)\n", N);
    struct Combo {
      bool code;
      const TestFunction* f;
      std::size_t fi;
    };
    std::vector<Combo> combos;
    for (bool code : {false, true})
      for (std::size_t fi = 0; fi < functions6.size(); ++fi) {
        const bool matched = (functions6[fi].family == Family::code) == code;
        const bool wanted = sk == "all" || (matched && (sk == "matched" || (sk == "code") == code));
        if (wanted) combos.push_back({code, &functions6[fi], fi});
      }
    for (const Combo& c : combos) {
      const char* vname = c.code ? "GPOO-code" : "GPOO-paper";
      // results[s][k]
      std::vector<std::vector<std::vector<Trace>>> res(Ss.size(), std::vector<std::vector<Trace>>(Ks.size()));
      const double t0 = elapsed();
      for (std::size_t si = 0; si < Ss.size(); ++si)
        for (std::size_t ki = 0; ki < Ks.size(); ++ki) {
          for (std::size_t r = 0; r < runs; ++r)
            res[si][ki].push_back(run_gpoo(*c.f, c.code, Ss[si], Ks[ki], N, seed_of(6, c.fi, Ss[si] * 16 + Ks[ki], r)));
          write_csv_rows(csv, "fig6", *c.f, vname, Ss[si], Ks[ki], res[si][ki], N);
        }
      std::fprintf(stderr, "[%7.1f s] fig6 %s on %s: %.1f s\n", elapsed(), vname, c.f->label().c_str(), elapsed() - t0);
      for (std::size_t b : budgets) {
        std::printf("\n### %s on %s (f* = %.4f), N = %zu: ln(mean aggregated regret)\n\n| S \\ K |", vname,
                    c.f->label().c_str(), c.f->fstar, b);
        for (std::size_t K : Ks) std::printf(" %zu |", K);
        std::printf(" best K |\n|---|");
        for (std::size_t k = 0; k <= Ks.size(); ++k) std::printf("---|");
        std::printf("\n");
        for (std::size_t si = 0; si < Ss.size(); ++si) {
          std::printf("| %zu |", Ss[si]);
          double lowest = std::numeric_limits<double>::infinity();
          std::size_t arg = 0;
          for (std::size_t ki = 0; ki < Ks.size(); ++ki) {
            const double m = stat_of(column(res[si][ki], b)).mean;
            std::printf(" %.2f |", std::log(m));
            if (m < lowest) {
              lowest = m;
              arg = Ks[ki];
            }
          }
          std::printf(" %zu |\n", arg);
        }
        std::printf("\nmean ± sd (depth of the recommended cell)\n\n| S \\ K |");
        for (std::size_t K : Ks) std::printf(" %zu |", K);
        std::printf("\n|---|");
        for (std::size_t k = 0; k < Ks.size(); ++k) std::printf("---|");
        std::printf("\n");
        for (std::size_t si = 0; si < Ss.size(); ++si) {
          std::printf("| %zu |", Ss[si]);
          for (std::size_t ki = 0; ki < Ks.size(); ++ki) {
            const Stat s = stat_of(column(res[si][ki], b));
            std::printf(" %.3f ± %.3f (%.1f) |", s.mean, s.sd, stat_of(column(res[si][ki], b, true)).mean);
          }
          std::printf("\n");
        }
      }
      std::fflush(stdout);
    }
  }
  std::printf("\ntotal %.1f s; per-N means written to %s\n", elapsed(), csv_path.c_str());
  std::fprintf(stderr, "total %.1f s\n", elapsed());
  return 0;
}
