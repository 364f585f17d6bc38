// Reproduces the two experimental settings of "Indirect Query Bayesian Optimization with Integrated
// Feedback" (Zhang et al.; shared/papers/digest-iqbo-cmets.md, sections 6 and 7.4): CMES against
// MES, UCB and EI with a fixed number of queries (setting 1, the paper's Figure 1), and CMETS
// against flat CMES, MES, UCB and EI under a cost budget on a quadtree of query cells (setting 2,
// Figure 2). Write-up: bench/results/iqbo_paper.md.
//
// Problem. Maximise f = -Branin on x1 in [-5, 10], x2 in [0, 15] (f_* = -0.397887). Every GP of
// f lives on X scaled to the unit square. Queries a live in A = [0,1]^2 and reach X through
//   LT:  h(a) = (15 a0 - 5, 15 a1)                    (the identity in unit X coordinates)
//   NLT: h(a) = (15 cos(pi a0 / 2) - 5, 15 cos(pi a1 / 2))
// An observation is z = g(a) + N(0, sigma^2) with g(a) = E[f(X) | a].
//
// Model: the known-p variant of the paper's CMP (digest 7.1.6). There is no D1 and no conditional
// mean embedding: each query is observed through the exact linear functional of f that p(x|a)
// defines, so the GP's cross-covariances are the closed-form SE window kernels.
// - Setting 1: p(x|a) = N(h(a), tau^2 I), tau^2 = 0.5 in X units, modelled as
//   GaussianWindowQuery{unit(h(a)), tau / 15 per coordinate}. The window is NOT clipped to the box
//   (the paper clips). Branin is defined outside the box, so the unclipped model is exact.
//   Observation noise sd 1.0 on raw Branin values (digest 7.1.8, the paper does not say).
//   Truth g(a): a 64 x 64 product Gauss-Hermite rule on the unclipped window. It is exact to
//   rounding: Branin is a quartic polynomial plus a cosine, and the rule integrates both exactly
//   for practical purposes.
// - Setting 2: a quadtree node at depth l (max depth 6) observes the average of f over h(cell).
//   The model is BoxQuery of the image box in unit X coordinates: digest 7.1.7 (a) without the
//   extra Gaussian. Cost is 0.5 (l + 1) and noise sd is 1 / (l + 1), as in the paper. Truth: the
//   average of f(h(U)), U uniform on the cell, by a 16 x 16 product Gauss-Legendre rule on the
//   cell. For LT this is the box average the model assumes. For NLT the image of a cell is a box
//   (cos is monotone), but the pushed-forward density on it is not uniform, so the NLT model is
//   slightly misspecified, as a learned CME would be.
// - Kernel SE (so every window covariance is exact). One noise group per level. The noise is KNOWN:
//   its variance is the simulated one (in standardised units), not fitted. The acquisitions use the
//   true noise as well, and a fitted noise would make the model disagree with them (--fit-noise
//   fits it). Lengthscales and outputscale come from a MAP fit (fit_hyperparameters, otherwise
//   default options) every 5 queries once there are >= 5 observations, warm-started from the last
//   fit. Before the first fit: lengthscale 0.2, outputscale 1 on standardised data.
//
// Methods (digest 6.1, 7.2, 7.3). All of them get the same 5 initial queries per seed: shifted
// Sobol points in A, kept continuous in setting 1 and snapped to their level-6 leaf in setting 2.
// The initial queries count towards the 100 queries and the budget of 350.
// - CMES-AppA: Appendix A (noisy, corrected) with the query's own noise sd. CMES-Eq14: Eq. 14.
//   Both use the CMP posterior of g at the candidates and 10 Gumbel samples of max f taken from
//   the CMP posterior of f on the 50 x 50 X grid (--fstar thompson: Thompson samples instead).
// - MES, UCB, EI: plain BO on g in A. A GP with point observations (a_j, z_j) is fitted on the
//   queries alone, with the same kernel and fit schedule, ignoring the link p(x|a).
//   MES uses the Appendix A formula with 10 Gumbel samples of max g over the candidates, taken
//   from that GP. UCB uses beta = 2. EI uses the incumbent max_j mu(a_j).
// - MES-CMP (setting 1, ablation, not in the paper): MES on the CMP posterior of g. It separates
//   the model (CMP vs plain GP) from the target (max f vs max g).
// - Setting 2. CMETS: the cleaned Alg. 1 (CmetsActiveSet) over the quadtree, selecting by CMES
//   (Appendix A) / cost with the node's level noise. The f_* samples are drawn once per query and
//   shared by all levels. CMETS-literal: the literal rules. Queries never overshoot the budget.
//   CMES-leaves, MES, UCB, EI: flat over the 4096 level-6 leaves (cost 3.5, noise sd 1/7).
// Candidates: setting 1 uses the 50 x 50 A grid {0, 1/49, .., 1}^2. Setting 2 uses leaf centres
// (baselines) or cells (CMP).
//
// Metrics (digest 1.1, 6.1). The recommendation after each query is x_t = argmax over the
// 50 x 50 X grid of the CMP posterior mean of f, fitted to that method's data. Every method uses
// the same recommender. Simple regret = f_* - max_{s<=t} f(x_s): its floor is the grid's own gap,
// printed. Instant regret = f_* - max_{s<=t} g(a_s), with g the true g of the query's level: it has
// a positive floor because an average never reaches the maximum.
//
// Usage: iqbo_paper [--seeds N] [--setting 1|2|both] [--csv PATH] [--quick]
//                   [--fstar gumbel|thompson] [--fit-noise]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Dense>

#include "functions/test_functions.hpp"
#include "tune/bandit/acquisition.hpp"
#include "tune/bandit/max_value_entropy.hpp"
#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/hyperparameter_fit.hpp"
#include "tune/gp/observation.hpp"
#include "tune/random/rng.hpp"
#include "tune/space/sampling.hpp"
#include "tune/tree/cmets_active_set.hpp"
#include "tune/tree/partition_tree.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double kTau2 = 0.5;
constexpr Index kGridSide = 50;
constexpr std::size_t kInitialQueries = 5;
constexpr std::size_t kRefitEvery = 5;
constexpr std::size_t kMaxDepth = 6;
constexpr std::size_t kMaxValueSamples = 10;
constexpr double kUcbBeta = 2.0;
constexpr double kInitialLengthscale = 0.2;
// Gauss-Hermite nodes for Appendix A. The library's rewriting leaves only a smooth integrand:
// against 64 nodes, 16 differ by < 3e-11 relative over noise sd 1e-3..3 and sigma_g 1e-2..10.
// 16 nodes are 4x faster, and Appendix A dominates the run time.
constexpr std::size_t kAppendixANodes = 16;
constexpr std::size_t kTruthHermiteNodes = 64;
constexpr std::size_t kTruthLegendreNodes = 16;
constexpr double kCostSlack = 1e-9;  // costs are multiples of 0.5: sums are exact, but be safe

// ---- problem ------------------------------------------------------------------------------------

const tune::testfn::TestFunction& branin() {
  static const tune::testfn::TestFunction fn = tune::testfn::branin();
  return fn;
}

double f_star() { return -branin().minimum; }

// f at a point of the unit square (X scaled); Branin's formula is used outside the box as well.
double f_unit(double u0, double u1) {
  Eigen::VectorXd x(2);
  x << 15.0 * u0 - 5.0, 15.0 * u1;
  return -branin().f(x);
}

enum class MapKind { linear, nonlinear };

const char* map_name(MapKind k) { return k == MapKind::linear ? "LT" : "NLT"; }

// One coordinate of h(a) in unit X coordinates.
double unit_h(MapKind k, double a) { return k == MapKind::linear ? a : std::cos(0.5 * std::numbers::pi * a); }

struct Rule {
  std::vector<double> nodes, weights;  // weights sum to 1
};

// Gauss-Legendre on [0, 1], Newton on P_n from the Chebyshev-like starting guesses.
Rule gauss_legendre01(std::size_t n) {
  Rule r;
  const double nn = static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    double x = std::cos(std::numbers::pi * (static_cast<double>(i) + 0.75) / (nn + 0.5));
    double dp = 1.0;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1.0, p1 = x;
      for (std::size_t k = 2; k <= n; ++k) {
        const double kk = static_cast<double>(k);
        const double p2 = ((2.0 * kk - 1.0) * x * p1 - (kk - 1.0) * p0) / kk;
        p0 = p1;
        p1 = p2;
      }
      dp = nn * (x * p1 - p0) / (x * x - 1.0);
      const double step = p1 / dp;
      x -= step;
      if (std::abs(step) < 1e-15) break;
    }
    r.nodes.push_back(0.5 * (1.0 - x));
    r.weights.push_back(1.0 / ((1.0 - x * x) * dp * dp));  // 2 / ((1 - x^2) P'^2), halved for [0, 1]
  }
  return r;
}

// Setting 1 truth: E[f(h(a) + eps)], eps ~ N(0, tau^2 I) in X units, unclipped.
double window_truth(MapKind map, double a0, double a1) {
  const tune::GaussHermiteRule& gh = tune::gauss_hermite_rule(kTruthHermiteNodes);
  const double sd_unit = std::sqrt(kTau2) / 15.0;
  const double c0 = unit_h(map, a0), c1 = unit_h(map, a1);
  double total = 0.0;
  for (std::size_t i = 0; i < gh.nodes.size(); ++i) {
    double row = 0.0;
    for (std::size_t j = 0; j < gh.nodes.size(); ++j)
      row += gh.weights[j] * f_unit(c0 + sd_unit * gh.nodes[i], c1 + sd_unit * gh.nodes[j]);
    total += gh.weights[i] * row;
  }
  return total;
}

// Setting 2 truth: E[f(h(U))], U uniform on the cell [lo, hi] of A.
double cell_truth(MapKind map, const Rule& gl, double lo0, double hi0, double lo1, double hi1) {
  double total = 0.0;
  for (std::size_t i = 0; i < gl.nodes.size(); ++i) {
    const double u0 = unit_h(map, lo0 + (hi0 - lo0) * gl.nodes[i]);
    double row = 0.0;
    for (std::size_t j = 0; j < gl.nodes.size(); ++j)
      row += gl.weights[j] * f_unit(u0, unit_h(map, lo1 + (hi1 - lo1) * gl.nodes[j]));
    total += gl.weights[i] * row;
  }
  return total;
}

// The CMP model's functional for the cell [lo, hi] of A: the uniform average over its image box.
tune::Query cell_functional(MapKind map, const VectorXd& lo, const VectorXd& hi) {
  VectorXd lower(2), upper(2);
  for (Index d = 0; d < 2; ++d) {
    const double p = unit_h(map, lo(d)), q = unit_h(map, hi(d));
    lower(d) = std::min(p, q);  // NLT reverses the orientation
    upper(d) = std::max(p, q);
  }
  return tune::BoxQuery{lower, upper};
}

tune::Query window_functional(MapKind map, const VectorXd& a) {
  VectorXd centre(2);
  centre << unit_h(map, a(0)), unit_h(map, a(1));
  return tune::GaussianWindowQuery{centre, VectorXd::Constant(2, std::sqrt(kTau2) / 15.0)};
}

// A query the simulation can run: where it sits in A, the CMP functional, the truth and its level.
struct Candidate {
  VectorXd a;                // query point (cell centre in setting 2), for the baselines' GP
  tune::Query functional;    // unit X coordinates, for the CMP model
  double g = 0.0;            // true E[f | a] at its level
  std::size_t level = 0;     // tree depth in setting 2; 0 in setting 1
};

struct Setting {
  int id = 1;
  double budget = 100.0;
  double noise_sd(std::size_t level) const { return id == 1 ? 1.0 : 1.0 / static_cast<double>(level + 1); }
  double cost(std::size_t level) const { return id == 1 ? 1.0 : 0.5 * static_cast<double>(level + 1); }
  std::size_t noise_groups() const { return id == 1 ? 1 : kMaxDepth + 1; }
  std::size_t group(std::size_t level) const { return id == 1 ? 0 : level; }
};

// Everything about one (setting, map) pair that does not depend on the method or the seed.
struct Instance {
  Setting setting;
  MapKind map = MapKind::linear;
  MatrixXd x_grid;          // 2 x 2500, unit X coordinates
  VectorXd f_grid;          // f at x_grid
  std::vector<Candidate> flat;  // setting 1: the A grid; setting 2: the level-6 leaves
  MatrixXd flat_points;     // 2 x |flat|, their a
  std::vector<std::vector<double>> cell_g;  // setting 2: truth by [level][iy * 2^level + ix]
  double grid_floor = 0.0;     // f_* - max f_grid: the smallest simple regret the recommender can reach
  double instant_floor = 0.0;  // f_* - max g over the flat candidates

  Candidate cell(std::size_t level, const VectorXd& lo, const VectorXd& hi) const {
    const double side = std::ldexp(1.0, static_cast<int>(level));
    const auto ix = static_cast<std::size_t>(std::lround(lo(0) * side));
    const auto iy = static_cast<std::size_t>(std::lround(lo(1) * side));
    Candidate c;
    c.a = 0.5 * (lo + hi);
    c.functional = cell_functional(map, lo, hi);
    c.g = cell_g[level][iy * static_cast<std::size_t>(side) + ix];
    c.level = level;
    return c;
  }

  Candidate leaf_containing(const VectorXd& a) const {
    const double side = std::ldexp(1.0, static_cast<int>(kMaxDepth));
    VectorXd lo(2), hi(2);
    for (Index d = 0; d < 2; ++d) {
      const double i = std::min(std::floor(a(d) * side), side - 1.0);
      lo(d) = i / side;
      hi(d) = (i + 1.0) / side;
    }
    return cell(kMaxDepth, lo, hi);
  }

  Candidate initial_query(const VectorXd& a) const {
    if (setting.id == 2) return leaf_containing(a);
    Candidate c;
    c.a = a;
    c.functional = window_functional(map, a);
    c.g = window_truth(map, a(0), a(1));
    return c;
  }
};

double grid_coordinate(Index i) { return static_cast<double>(i) / static_cast<double>(kGridSide - 1); }

Instance make_instance(const Setting& setting, MapKind map) {
  Instance in;
  in.setting = setting;
  in.map = map;
  const Index m = kGridSide * kGridSide;
  in.x_grid.resize(2, m);
  in.f_grid.resize(m);
  for (Index j = 0; j < kGridSide; ++j)
    for (Index i = 0; i < kGridSide; ++i) {
      const Index c = j * kGridSide + i;
      in.x_grid(0, c) = grid_coordinate(i);
      in.x_grid(1, c) = grid_coordinate(j);
      in.f_grid(c) = f_unit(in.x_grid(0, c), in.x_grid(1, c));
    }
  in.grid_floor = f_star() - in.f_grid.maxCoeff();

  if (setting.id == 1) {
    for (Index j = 0; j < kGridSide; ++j)
      for (Index i = 0; i < kGridSide; ++i) {
        VectorXd a(2);
        a << grid_coordinate(i), grid_coordinate(j);
        in.flat.push_back(in.initial_query(a));
      }
  } else {
    const Rule gl = gauss_legendre01(kTruthLegendreNodes);
    in.cell_g.resize(kMaxDepth + 1);
    for (std::size_t l = 0; l <= kMaxDepth; ++l) {
      const std::size_t side = std::size_t{1} << l;
      const double w = 1.0 / static_cast<double>(side);
      in.cell_g[l].resize(side * side);
      for (std::size_t iy = 0; iy < side; ++iy)
        for (std::size_t ix = 0; ix < side; ++ix) {
          const double x0 = static_cast<double>(ix) * w, y0 = static_cast<double>(iy) * w;
          in.cell_g[l][iy * side + ix] = cell_truth(map, gl, x0, x0 + w, y0, y0 + w);
        }
    }
    const std::size_t side = std::size_t{1} << kMaxDepth;
    const double w = 1.0 / static_cast<double>(side);
    for (std::size_t iy = 0; iy < side; ++iy)
      for (std::size_t ix = 0; ix < side; ++ix) {
        VectorXd lo(2), hi(2);
        lo << static_cast<double>(ix) * w, static_cast<double>(iy) * w;
        hi << static_cast<double>(ix + 1) * w, static_cast<double>(iy + 1) * w;
        in.flat.push_back(in.cell(kMaxDepth, lo, hi));
      }
  }
  in.flat_points.resize(2, static_cast<Index>(in.flat.size()));
  double best_g = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < in.flat.size(); ++k) {
    in.flat_points.col(static_cast<Index>(k)) = in.flat[k].a;
    best_g = std::max(best_g, in.flat[k].g);
  }
  in.instant_floor = f_star() - best_g;
  return in;
}

// ---- models -------------------------------------------------------------------------------------

// The posterior of a growing set of linear functionals of f (the CMP model's g at candidates or
// tree nodes). GaussianProcess::track covers points only; this keeps V = L^{-1} K(D, C) for
// window functionals the same way: one new row per observation in O(n |C|), a full solve only
// after a refit.
class FunctionalTracker {
 public:
  // Appends columns for new functionals; returns the index of the first.
  std::size_t add(const tune::GaussianProcess& gp, const std::vector<tune::Query>& queries) {
    const std::size_t first = queries_.size();
    if (queries.empty()) return first;
    reserve(rows_, cols_ + static_cast<Index>(queries.size()));
    const MatrixXd L = gp.cholesky_factor();
    for (const tune::Query& q : queries) {
      queries_.push_back(q);
      const Index j = cols_++;
      prior_(j) = tune::covariance(gp.kernel(), q, q);
      VectorXd c(rows_);
      for (Index i = 0; i < rows_; ++i)
        c(i) = tune::covariance(gp.kernel(), gp.observations()[static_cast<std::size_t>(i)].query, q);
      if (rows_ > 0) L.triangularView<Eigen::Lower>().solveInPlace(c);
      V_.col(j).head(rows_) = c;
    }
    return first;
  }

  // After gp gained exactly one observation (no refit).
  void append_row(const tune::GaussianProcess& gp) {
    const Index i = rows_;
    reserve(i + 1, cols_);
    const MatrixXd L = gp.cholesky_factor();
    const tune::Query& q = gp.observations()[static_cast<std::size_t>(i)].query;
    Eigen::RowVectorXd k(cols_);
    for (Index j = 0; j < cols_; ++j) k(j) = tune::covariance(gp.kernel(), q, queries_[static_cast<std::size_t>(j)]);
    if (i > 0) k.noalias() -= L.row(i).head(i) * V_.topLeftCorner(i, cols_);
    V_.row(i).head(cols_) = k / L(i, i);
    rows_ = i + 1;
  }

  // After a reset (new kernel or standardisation): everything is recomputed.
  void rebuild(const tune::GaussianProcess& gp) {
    std::vector<tune::Query> queries;
    queries.swap(queries_);
    rows_ = static_cast<Index>(gp.size());
    cols_ = 0;
    reserve(rows_, static_cast<Index>(queries.size()));
    const Index m = static_cast<Index>(queries.size());
    MatrixXd K(rows_, m);
    for (Index j = 0; j < m; ++j) {
      const tune::Query& q = queries[static_cast<std::size_t>(j)];
      prior_(j) = tune::covariance(gp.kernel(), q, q);
      for (Index i = 0; i < rows_; ++i)
        K(i, j) = tune::covariance(gp.kernel(), gp.observations()[static_cast<std::size_t>(i)].query, q);
    }
    if (rows_ > 0) gp.cholesky_factor().triangularView<Eigen::Lower>().solveInPlace(K);
    V_.topLeftCorner(rows_, m) = K;
    cols_ = m;
    queries_ = std::move(queries);
  }

  // Posterior mean and sd of the functionals at `columns` (units of the observed values).
  void predict(const tune::GaussianProcess& gp, const std::vector<std::size_t>& columns, VectorXd& mean,
               VectorXd& sd) const {
    const Index m = static_cast<Index>(columns.size());
    const VectorXd a = gp.whitened_targets();
    const double mu = gp.standardization().mean, s = gp.standardization().scale;
    mean.resize(m);
    sd.resize(m);
    for (Index k = 0; k < m; ++k) {
      const Index j = static_cast<Index>(columns[static_cast<std::size_t>(k)]);
      const auto v = V_.col(j).head(rows_);
      mean(k) = mu + s * v.dot(a);
      sd(k) = s * std::sqrt(std::max(0.0, prior_(j) - v.squaredNorm()));
    }
  }

  std::size_t size() const { return queries_.size(); }

 private:
  void reserve(Index rows, Index cols) {
    if (rows <= V_.rows() && cols <= V_.cols()) return;
    const Index r = std::max(rows, std::max<Index>(16, rows > V_.rows() ? 2 * V_.rows() : V_.rows()));
    const Index c = std::max(cols, cols > V_.cols() ? 2 * V_.cols() : V_.cols());
    V_.conservativeResize(r, c);
    prior_.conservativeResize(c);
  }

  std::vector<tune::Query> queries_;
  VectorXd prior_;  // standardised units
  MatrixXd V_;      // rows_ x cols_ valid
  Index rows_ = 0, cols_ = 0;
};

struct ModelOptions {
  bool fit_noise = false;
};

// A GP that refits itself on the schedule of the protocol and keeps a FunctionalTracker in step.
class Model {
 public:
  // noise_sd: the simulated noise sd of each noise group, in the units of the observed values.
  Model(std::vector<double> noise_sd, const ModelOptions& options, tune::Rng fit_rng)
      : noise_sd_(std::move(noise_sd)), options_(options), fit_rng_(fit_rng) {
    hp_.kernel = tune::KernelType::squared_exponential;
    hp_.lengthscales = VectorXd::Constant(2, kInitialLengthscale);
    hp_.outputscale = 1.0;
    hp_.noise_variances = known_noise({});
    gp_ = tune::GaussianProcess(2, hp_, {});
  }

  tune::GaussianProcess& gp() { return gp_; }
  const tune::GaussianProcess& gp() const { return gp_; }
  FunctionalTracker& tracker() { return tracker_; }
  std::size_t fits() const { return fits_; }

  void add(const tune::Observation& o) {
    gp_.add(o);
    const std::size_t n = gp_.size();
    if (n < kInitialQueries) {
      // No fit on so few points; the default hyperparameters on the data's own standardisation.
      const tune::Standardization st = tune::standardization_of(gp_.observations());
      hp_.noise_variances = known_noise(st);
      gp_.reset(hp_, st);
      tracker_.rebuild(gp_);
    } else if ((n - kInitialQueries) % kRefitEvery == 0) {
      refit();
      tracker_.rebuild(gp_);
    } else {
      tracker_.append_row(gp_);
    }
  }

 private:
  std::vector<double> known_noise(const tune::Standardization& st) const {
    std::vector<double> v;
    for (double raw : noise_sd_) {
      const double sd = raw / st.scale;
      v.push_back(sd * sd);
    }
    return v;
  }

  void refit() {
    const tune::Standardization st = tune::standardization_of(gp_.observations());
    tune::HyperparameterFitOptions fo;
    fo.fit_noise = options_.fit_noise;
    tune::GpHyperparameters warm = hp_;
    if (!options_.fit_noise || fits_ == 0) warm.noise_variances = known_noise(st);
    // A fitted noise starts inside its bounds; a known one is held fixed at the simulated value,
    // which may lie below noise_min when the data's spread is large.
    if (options_.fit_noise)
      for (double& v : warm.noise_variances) v = std::clamp(v, fo.noise_min, fo.noise_max);
    hp_ = tune::fit_hyperparameters(gp_.observations(), st, warm, fo, fit_rng_).hyperparameters;
    gp_.reset(hp_, st);
    ++fits_;
  }

  std::vector<double> noise_sd_;
  ModelOptions options_;
  tune::Rng fit_rng_;
  tune::GpHyperparameters hp_;
  tune::GaussianProcess gp_;
  FunctionalTracker tracker_;
  std::size_t fits_ = 0;
};

// ---- methods and runs ---------------------------------------------------------------------------

enum class Method { cmes_appendix_a, cmes_eq14, mes, mes_cmp, ucb, ei, cmets, cmets_literal, cmes_leaves };

const char* method_name(Method m) {
  switch (m) {
    case Method::cmes_appendix_a: return "CMES-AppA";
    case Method::cmes_eq14: return "CMES-Eq14";
    case Method::mes: return "MES";
    case Method::mes_cmp: return "MES-CMP";
    case Method::ucb: return "UCB";
    case Method::ei: return "EI";
    case Method::cmets: return "CMETS";
    case Method::cmets_literal: return "CMETS-literal";
    case Method::cmes_leaves: return "CMES-leaves";
  }
  return "?";
}

bool uses_baseline_gp(Method m) { return m == Method::mes || m == Method::ucb || m == Method::ei; }
bool is_cmets(Method m) { return m == Method::cmets || m == Method::cmets_literal; }

enum class MaxValueSampler { gumbel, thompson };

struct RunOptions {
  ModelOptions model;
  MaxValueSampler sampler = MaxValueSampler::gumbel;
};

struct Step {
  double cost = 0.0;  // cumulative, after this query
  double simple = 0.0;
  double instant = 0.0;
  std::size_t level = 0;
  double a0 = 0.0, a1 = 0.0;
  double g = 0.0;
};

struct Trace {
  std::vector<Step> steps;
  double seconds = 0.0;
  std::size_t fits = 0;
};

std::size_t argmax(const VectorXd& v) {
  Index best = 0;
  for (Index i = 1; i < v.size(); ++i)
    if (v(i) > v(best)) best = i;  // strict: lowest index on ties
  return static_cast<std::size_t>(best);
}

VectorXd max_value_samples(const Model& cmp, const Instance& in, const RunOptions& opt, tune::Rng& rng) {
  if (opt.sampler == MaxValueSampler::thompson)
    return tune::thompson_max_samples(cmp.gp(), in.x_grid, kMaxValueSamples, rng);
  VectorXd mean, var;
  cmp.gp().tracked_prediction(mean, var);
  return tune::gumbel_max_samples(mean, var.cwiseSqrt(), kMaxValueSamples, rng);
}

Trace run(const Instance& in, Method method, std::uint64_t seed, const RunOptions& opt) {
  const auto start = Clock::now();
  const Setting& st = in.setting;
  const std::uint64_t stream = static_cast<std::uint64_t>(st.id) * 10 + (in.map == MapKind::linear ? 0 : 1);
  // Common random numbers: every method of a (seed, setting, map) sees the same initial design, the
  // same noise sequence and the same max-value draws, so paired differences are less noisy.
  tune::Rng design_rng = tune::make_rng(seed, tune::RngStream::initial_design, 0);
  tune::Rng noise_rng = tune::make_rng(seed, tune::RngStream::initial_design, 1 + stream);
  tune::Rng sample_rng = tune::make_rng(seed, tune::RngStream::acquisition, stream);

  std::vector<double> level_noise;
  for (std::size_t g = 0; g < st.noise_groups(); ++g) level_noise.push_back(st.noise_sd(g));
  Model cmp(level_noise, opt.model, tune::make_rng(seed, tune::RngStream::hyperparameter_fit, 2 * stream));
  cmp.gp().track(in.x_grid);
  std::vector<std::size_t> flat_columns;
  if (method == Method::cmes_appendix_a || method == Method::cmes_eq14 || method == Method::mes_cmp ||
      method == Method::cmes_leaves) {
    std::vector<tune::Query> qs;
    for (const Candidate& c : in.flat) qs.push_back(c.functional);
    cmp.tracker().add(cmp.gp(), qs);
    for (std::size_t k = 0; k < in.flat.size(); ++k) flat_columns.push_back(k);
  }
  // In setting 2 every flat method queries leaves only, so its noise is the level-6 one.
  const double flat_noise_sd = st.noise_sd(st.id == 1 ? 0 : kMaxDepth);
  // The baselines' own model: point observations of g in A, one noise group.
  std::optional<Model> base;
  if (uses_baseline_gp(method)) {
    base.emplace(std::vector<double>{flat_noise_sd}, opt.model,
                 tune::make_rng(seed, tune::RngStream::hyperparameter_fit, 2 * stream + 1));
    base->gp().track(in.flat_points);
  }

  std::optional<tune::CmetsActiveSet> active;
  std::vector<std::size_t> node_column;  // tracker column of a tree node, by id
  constexpr std::size_t no_column = std::numeric_limits<std::size_t>::max();
  if (is_cmets(method)) {
    tune::CmetsActiveSetOptions o;
    o.variant = method == Method::cmets ? tune::CmetsVariant::cleaned : tune::CmetsVariant::literal;
    o.max_depth = kMaxDepth;
    active.emplace(2, o);
  }

  const MatrixXd initial = tune::sobol_points(2, kInitialQueries, design_rng);
  Trace trace;
  double spent = 0.0;
  double best_f = -std::numeric_limits<double>::infinity();
  double best_g = -std::numeric_limits<double>::infinity();
  std::vector<VectorXd> queried_a;
  for (std::size_t t = 0;; ++t) {
    std::optional<Candidate> next;
    if (t < kInitialQueries) {
      next = in.initial_query(initial.col(static_cast<Index>(t)));
    } else if (active) {
      const std::vector<tune::NodeId> nodes = active->active();
      const tune::PartitionTree& tree = active->tree();
      node_column.resize(tree.size(), no_column);
      std::vector<tune::Query> fresh;
      for (tune::NodeId id : nodes)
        if (node_column[id] == no_column) {
          node_column[id] = cmp.tracker().size() + fresh.size();
          fresh.push_back(cell_functional(in.map, tree.node(id).lower, tree.node(id).upper));
        }
      cmp.tracker().add(cmp.gp(), fresh);
      std::vector<std::size_t> cols;
      for (tune::NodeId id : nodes) cols.push_back(node_column[id]);
      VectorXd nu, sg;
      cmp.tracker().predict(cmp.gp(), cols, nu, sg);
      VectorXd fstar = max_value_samples(cmp, in, opt, sample_rng);
      // cmes_noisy guards f_* over the candidates it is given; scoring level by level would give
      // each level its own floor, so the floor over the whole active set is applied first.
      fstar = fstar.cwiseMax((nu + 1e-6 * sg).maxCoeff());
      std::vector<double> score(tree.size(), 0.0);
      for (std::size_t level = 0; level <= kMaxDepth; ++level) {
        std::vector<Index> members;
        for (std::size_t k = 0; k < nodes.size(); ++k)
          if (tree.node(nodes[k]).depth == level) members.push_back(static_cast<Index>(k));
        if (members.empty()) continue;
        const VectorXd s = tune::cmes_noisy(nu(members), sg(members), st.noise_sd(level), fstar, kAppendixANodes);
        for (std::size_t k = 0; k < members.size(); ++k)
          score[nodes[static_cast<std::size_t>(members[k])]] = s(static_cast<Index>(k));
      }
      const std::optional<tune::NodeId> pick = active->select(
          [&](tune::NodeId id) { return score[id]; }, [&](std::size_t depth) { return st.cost(depth); },
          st.budget - spent + kCostSlack);
      if (!pick) break;
      const tune::PartitionNode& node = tree.node(*pick);
      next = in.cell(node.depth, node.lower, node.upper);
      active->record_query(*pick);
    } else {
      VectorXd scores;
      switch (method) {
        case Method::cmes_appendix_a:
        case Method::cmes_eq14:
        case Method::cmes_leaves: {
          VectorXd nu, sg;
          cmp.tracker().predict(cmp.gp(), flat_columns, nu, sg);
          const VectorXd fstar = max_value_samples(cmp, in, opt, sample_rng);
          scores = method == Method::cmes_eq14 ? tune::cmes_noiseless(nu, sg, fstar)
                                               : tune::cmes_noisy(nu, sg, flat_noise_sd, fstar, kAppendixANodes);
          break;
        }
        case Method::mes_cmp: {
          VectorXd nu, sg;
          cmp.tracker().predict(cmp.gp(), flat_columns, nu, sg);
          const VectorXd gstar = tune::gumbel_max_samples(nu, sg, kMaxValueSamples, sample_rng);
          scores = tune::cmes_noisy(nu, sg, flat_noise_sd, gstar, kAppendixANodes);
          break;
        }
        case Method::mes:
        case Method::ucb:
        case Method::ei: {
          VectorXd mean, var;
          base->gp().tracked_prediction(mean, var);
          if (method == Method::mes) {
            const VectorXd sg = var.cwiseSqrt();
            const VectorXd gstar = tune::gumbel_max_samples(mean, sg, kMaxValueSamples, sample_rng);
            scores = tune::cmes_noisy(mean, sg, flat_noise_sd, gstar, kAppendixANodes);
            break;
          }
          tune::Acquisition acq;
          if (method == Method::ucb) {
            acq.type = tune::AcquisitionType::ucb;
            acq.sqrt_beta = std::sqrt(kUcbBeta);
          } else {
            acq.type = tune::AcquisitionType::ei;
            acq.incumbent = -std::numeric_limits<double>::infinity();
            for (const VectorXd& a : queried_a) acq.incumbent = std::max(acq.incumbent, base->gp().predict(a).mean);
          }
          scores.resize(mean.size());
          for (Index k = 0; k < mean.size(); ++k) scores(k) = acq.score(mean(k), var(k));
          break;
        }
        default:
          break;
      }
      next = in.flat[argmax(scores)];
    }

    const Candidate& c = *next;
    const double cost = st.cost(c.level);
    if (spent + cost > st.budget + kCostSlack) break;
    const double z = c.g + st.noise_sd(c.level) * tune::standard_normal(noise_rng);
    cmp.add(tune::Observation{c.functional, z, st.group(c.level)});
    if (base) base->add(tune::Observation{tune::PointQuery{c.a}, z, 0});
    queried_a.push_back(c.a);
    spent += cost;
    best_g = std::max(best_g, c.g);
    VectorXd mean, var;
    cmp.gp().tracked_prediction(mean, var);
    best_f = std::max(best_f, in.f_grid(static_cast<Index>(argmax(mean))));
    trace.steps.push_back({spent, f_star() - best_f, f_star() - best_g, c.level, c.a(0), c.a(1), c.g});
  }
  trace.fits = cmp.fits();
  trace.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return trace;
}

// ---- summaries ----------------------------------------------------------------------------------

// The trace's value at a checkpoint: the last query whose cumulative cost is within it. Setting 1
// costs 1 per query, so checkpoint t is the t-th query.
std::optional<Step> at_cost(const Trace& trace, double checkpoint) {
  std::optional<Step> out;
  for (const Step& s : trace.steps)
    if (s.cost <= checkpoint + kCostSlack) out = s;
  return out;
}

struct MeanSe {
  double mean = std::numeric_limits<double>::quiet_NaN();
  double se = std::numeric_limits<double>::quiet_NaN();
  std::size_t n = 0;
};

MeanSe mean_se(const std::vector<double>& v) {
  MeanSe r;
  r.n = v.size();
  if (v.empty()) return r;
  double s = 0.0;
  for (double x : v) s += x;
  r.mean = s / static_cast<double>(v.size());
  if (v.size() < 2) {
    r.se = 0.0;
    return r;
  }
  double ss = 0.0;
  for (double x : v) ss += (x - r.mean) * (x - r.mean);
  r.se = std::sqrt(ss / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()));
  return r;
}

std::string fmt(const MeanSe& m) {
  if (m.n == 0) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g +- %.2g", m.mean, m.se);
  return buf;
}

std::string fmt_checkpoint(double c) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", c);
  return buf;
}

struct MethodRuns {
  Method method;
  std::vector<Trace> traces;  // by seed
};

// Column of regrets at a checkpoint, one per seed (seeds whose run never reached it are skipped).
std::vector<double> regrets_at(const MethodRuns& r, double checkpoint, bool simple) {
  std::vector<double> v;
  for (const Trace& t : r.traces)
    if (const std::optional<Step> s = at_cost(t, checkpoint)) v.push_back(simple ? s->simple : s->instant);
  return v;
}

void print_tables(const Instance& in, const std::vector<MethodRuns>& runs, const std::vector<double>& checkpoints,
                  std::size_t seeds) {
  const char* unit = in.setting.id == 1 ? "t" : "cost";
  for (int simple = 1; simple >= 0; --simple) {
    std::printf("\n### Setting %d, %s: %s regret, mean +- s.e. over %zu seeds\n\n", in.setting.id, map_name(in.map),
                simple ? "simple" : "instant", seeds);
    std::printf("| method |");
    for (double c : checkpoints) std::printf(" %s=%s |", unit, fmt_checkpoint(c).c_str());
    std::printf("\n|---|");
    for (std::size_t k = 0; k < checkpoints.size(); ++k) std::printf("---|");
    std::printf("\n");
    for (const MethodRuns& r : runs) {
      std::printf("| %s |", method_name(r.method));
      for (double c : checkpoints) std::printf(" %s |", fmt(mean_se(regrets_at(r, c, simple != 0))).c_str());
      std::printf("\n");
    }
  }
}

// Paired differences (reference minus other) per checkpoint: common random numbers make the pairs
// share their initial design and noise draws.
void print_paired(const Instance& in, const std::vector<MethodRuns>& runs, Method reference,
                  const std::vector<double>& checkpoints) {
  const MethodRuns* ref = nullptr;
  for (const MethodRuns& r : runs)
    if (r.method == reference) ref = &r;
  if (!ref) return;
  const char* unit = in.setting.id == 1 ? "t" : "cost";
  for (int simple = 1; simple >= 0; --simple) {
    std::printf("\n%s minus other, %s regret, setting %d %s (paired by seed; negative = %s better; "
                "W/T/L = seeds where %s is lower / equal / higher)\n\n",
                method_name(reference), simple ? "simple" : "instant", in.setting.id, map_name(in.map),
                method_name(reference), method_name(reference));
    std::printf("| other |");
    for (double c : checkpoints) std::printf(" %s=%s diff | W/T/L |", unit, fmt_checkpoint(c).c_str());
    std::printf("\n|---|");
    for (std::size_t k = 0; k < checkpoints.size(); ++k) std::printf("---|---|");
    std::printf("\n");
    for (const MethodRuns& r : runs) {
      if (&r == ref) continue;
      std::printf("| %s |", method_name(r.method));
      for (double c : checkpoints) {
        std::vector<double> diff;
        std::size_t wins = 0, ties = 0;
        for (std::size_t s = 0; s < std::min(ref->traces.size(), r.traces.size()); ++s) {
          const std::optional<Step> a = at_cost(ref->traces[s], c), b = at_cost(r.traces[s], c);
          if (!a || !b) continue;
          const double d = simple ? a->simple - b->simple : a->instant - b->instant;
          diff.push_back(d);
          // Regrets often sit on the same grid point (the floor), so ties are exact.
          if (d < 0.0) ++wins;
          if (d == 0.0) ++ties;
        }
        std::printf(" %s | %zu/%zu/%zu |", fmt(mean_se(diff)).c_str(), wins, ties, diff.size() - wins - ties);
      }
      std::printf("\n");
    }
  }
}

void print_run_stats(const std::vector<MethodRuns>& runs) {
  std::printf("\n| method | queries (mean) | mean query level | hyperparameter fits (mean) | seconds per run |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const MethodRuns& r : runs) {
    double queries = 0.0, level = 0.0, fits = 0.0, seconds = 0.0;
    std::size_t level_count = 0;
    for (const Trace& t : r.traces) {
      queries += static_cast<double>(t.steps.size());
      fits += static_cast<double>(t.fits);
      seconds += t.seconds;
      for (std::size_t k = kInitialQueries; k < t.steps.size(); ++k, ++level_count)
        level += static_cast<double>(t.steps[k].level);
    }
    const double n = static_cast<double>(std::max<std::size_t>(1, r.traces.size()));
    std::printf("| %s | %.1f | %.2f | %.1f | %.2f |\n", method_name(r.method), queries / n,
                level_count ? level / static_cast<double>(level_count) : 0.0, fits / n, seconds / n);
  }
}

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "iqbo_paper: %s\nusage: iqbo_paper [--seeds N] [--setting 1|2|both] [--csv PATH] [--quick] "
               "[--fstar gumbel|thompson] [--fit-noise]\n",
               message.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t seeds = 10;
  bool seeds_set = false, quick = false;
  bool run1 = true, run2 = true;
  std::string csv_path = "iqbo_paper.csv";
  RunOptions opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--seeds") {
      const std::string v = value();
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n == 0 || v[0] == '-') usage_error("--seeds expects a positive integer");
      seeds = static_cast<std::size_t>(n);
      seeds_set = true;
    } else if (a == "--setting") {
      const std::string v = value();
      if (v == "1") {
        run2 = false;
      } else if (v == "2") {
        run1 = false;
      } else if (v != "both") {
        usage_error("--setting expects 1, 2 or both");
      }
    } else if (a == "--csv") {
      csv_path = value();
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--fstar") {
      const std::string v = value();
      if (v == "gumbel") {
        opt.sampler = MaxValueSampler::gumbel;
      } else if (v == "thompson") {
        opt.sampler = MaxValueSampler::thompson;
      } else {
        usage_error("--fstar expects gumbel or thompson");
      }
    } else if (a == "--fit-noise") {
      opt.model.fit_noise = true;
    } else if (a == "--help" || a == "-h") {
      std::printf("usage: iqbo_paper [--seeds N] [--setting 1|2|both] [--csv PATH] [--quick] "
                  "[--fstar gumbel|thompson] [--fit-noise]\n");
      return 0;
    } else {
      usage_error("unknown argument '" + a + "'");
    }
  }
  if (quick && !seeds_set) seeds = 2;
  const double horizon = quick ? 30.0 : 100.0;
  const double budget = quick ? 105.0 : 350.0;

  std::ofstream csv(csv_path);
  if (!csv) {
    std::fprintf(stderr, "iqbo_paper: cannot write '%s'\n", csv_path.c_str());
    return 1;
  }
  csv << "setting,map,method,seed,query,cost,level,a0,a1,g,simple_regret,instant_regret\n";
  csv.precision(8);

  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  std::printf("# IQBO / CMES / CMETS reproduction (known-p CMP model, SE kernel, -Branin, f_* = %.6f)\n", f_star());
  std::printf("%zu seeds; f_* samples: %zu %s; noise %s; refit every %zu queries from %zu; 5 shared initial "
              "queries per seed%s\n",
              seeds, kMaxValueSamples, opt.sampler == MaxValueSampler::gumbel ? "Gumbel" : "Thompson",
              opt.model.fit_noise ? "fitted (MAP)" : "known (simulated value)", kRefitEvery, kInitialQueries,
              quick ? "; QUICK run (short horizon, few seeds)" : "");

  struct Block {
    Setting setting;
    std::vector<Method> methods;
    std::vector<double> checkpoints;
  };
  std::vector<Block> blocks;
  if (run1)
    blocks.push_back({Setting{1, horizon},
                      {Method::cmes_appendix_a, Method::cmes_eq14, Method::mes, Method::ucb, Method::ei,
                       Method::mes_cmp},
                      quick ? std::vector<double>{10, 20, 30} : std::vector<double>{10, 25, 50, 100}});
  if (run2)
    blocks.push_back({Setting{2, budget},
                      {Method::cmets, Method::cmets_literal, Method::cmes_leaves, Method::mes, Method::ucb, Method::ei},
                      quick ? std::vector<double>{35, 70, 105} : std::vector<double>{35, 87.5, 175, 350}});

  for (const Block& block : blocks) {
    for (MapKind map : {MapKind::linear, MapKind::nonlinear}) {
      const double t0 = elapsed();
      const Instance in = make_instance(block.setting, map);
      std::fprintf(stderr, "[%7.1f s] setting %d %s: truth tables in %.1f s\n", elapsed(), block.setting.id,
                   map_name(map), elapsed() - t0);
      std::vector<MethodRuns> runs;
      for (Method method : block.methods) {
        MethodRuns r{method, {}};
        const double m0 = elapsed();
        for (std::size_t s = 0; s < seeds; ++s) {
          Trace trace = run(in, method, s, opt);
          for (std::size_t k = 0; k < trace.steps.size(); ++k) {
            const Step& st = trace.steps[k];
            csv << block.setting.id << ',' << map_name(map) << ',' << method_name(method) << ',' << s << ',' << (k + 1)
                << ',' << st.cost << ',' << st.level << ',' << st.a0 << ',' << st.a1 << ',' << st.g << ','
                << st.simple << ',' << st.instant << '\n';
          }
          r.traces.push_back(std::move(trace));
        }
        std::fprintf(stderr, "[%7.1f s] setting %d %s %s: %zu seeds in %.1f s\n", elapsed(), block.setting.id,
                     map_name(map), method_name(method), seeds, elapsed() - m0);
        runs.push_back(std::move(r));
      }

      std::printf("\n## Setting %d, %s\n", block.setting.id, map_name(map));
      if (block.setting.id == 1)
        std::printf("\n%g queries (5 initial + %g acquisitions), candidates: 50 x 50 A grid, noise sd 1, tau^2 = 0.5\n",
                    block.setting.budget, block.setting.budget - 5);
      else
        std::printf("\nbudget %g (5 initial level-6 leaves = 17.5 included), cost 0.5 (l + 1), noise sd 1 / (l + 1), "
                    "max depth 6\n",
                    block.setting.budget);
      std::printf("floors: simple regret >= %.4g (best of the 50 x 50 X grid); instant regret >= %.4g (best %s)\n",
                  in.grid_floor, in.instant_floor,
                  block.setting.id == 1 ? "g on the A grid" : "level-6 leaf; coarser nodes have lower g");
      print_tables(in, runs, block.checkpoints, seeds);
      print_paired(in, runs, block.setting.id == 1 ? Method::cmes_appendix_a : Method::cmets, block.checkpoints);
      print_run_stats(runs);
      std::fflush(stdout);
    }
  }
  std::printf("\ntotal %.1f s; per-query rows written to %s\n", elapsed(), csv_path.c_str());
  std::fprintf(stderr, "total %.1f s\n", elapsed());
  return 0;
}
