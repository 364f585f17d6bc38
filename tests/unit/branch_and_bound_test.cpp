// Tests for Zoghi's noise-free GP branch and bound (digest-gpoo-zoghi.md 2.3, 4.2, 6.9-6.11): on
// functions drawn from the GP prior on the finest lattice, the true argmax is never pruned, the
// relevant set shrinks, the simple regret decays fast; no point is sampled twice; the per-round
// cap and UCB fallback; replay; the capped refinement (candidates near the survivors, at most the
// cap); rebase (a new kernel without a replay); the default round cap in high dimension.
#include "tune/strategy/branch_and_bound.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numbers>
#include <set>
#include <stdexcept>
#include <vector>

#include "tune/gp/observation.hpp"
#include "tune/random/rng.hpp"

namespace tune {
namespace {

constexpr double kLengthscale = 0.2;

BranchAndBoundOptions options(std::size_t d, std::size_t max_level, double lengthscale = kLengthscale) {
  BranchAndBoundOptions o;
  o.dim = d;
  o.max_level = max_level;
  o.alpha = 0.05;
  o.kernel = Kernel(KernelType::squared_exponential, Eigen::VectorXd::Constant(static_cast<Eigen::Index>(d), lengthscale), 1.0);
  return o;
}

// The finest lattice in key order (dimension 0 most significant) and the lower Cholesky factor of
// the SE prior covariance on it (plus the search's jitter, so draws are consistent with its model).
struct PriorLattice {
  std::size_t d = 1;
  std::int64_t n = 1;  // 2^m_max
  Eigen::MatrixXd points;
  Eigen::MatrixXd chol;

  PriorLattice(std::size_t dim, std::size_t max_level, double lengthscale = kLengthscale) : d(dim), n(std::int64_t{1} << max_level) {
    const auto per_axis = n + 1;
    std::int64_t total = 1;
    for (std::size_t k = 0; k < d; ++k) total *= per_axis;
    points.resize(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(total));
    for (std::int64_t j = 0; j < total; ++j) {
      std::int64_t rest = j;
      for (std::size_t k = d; k-- > 0;) {
        points(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(j)) =
            static_cast<double>(rest % per_axis) / static_cast<double>(n);
        rest /= per_axis;
      }
    }
    const Kernel k(KernelType::squared_exponential, Eigen::VectorXd::Constant(static_cast<Eigen::Index>(d), lengthscale), 1.0);
    Eigen::MatrixXd K = k.cross(points, points);
    K.diagonal().array() += 1e-10;
    Eigen::LLT<Eigen::MatrixXd> llt(K);
    if (llt.info() != Eigen::Success) throw std::runtime_error("prior covariance not positive definite");
    chol = llt.matrixL();
  }

  // f = L z with z standard normals from Box-Muller on a seeded mt19937_64.
  Eigen::VectorXd draw(std::uint64_t seed) const {
    std::mt19937_64 rng(seed);
    const Eigen::Index m = points.cols();
    Eigen::VectorXd z(m);
    for (Eigen::Index i = 0; i < m; i += 2) {
      const double u1 = 1.0 - uniform01(rng);  // (0, 1]
      const double u2 = uniform01(rng);
      const double r = std::sqrt(-2.0 * std::log(u1));
      z(i) = r * std::cos(2.0 * std::numbers::pi * u2);
      if (i + 1 < m) z(i + 1) = r * std::sin(2.0 * std::numbers::pi * u2);
    }
    return chol * z;
  }

  Eigen::Index index(const Eigen::VectorXd& x) const {
    Eigen::Index j = 0;
    for (std::size_t k = 0; k < d; ++k)
      j = j * static_cast<Eigen::Index>(n + 1) +
          static_cast<Eigen::Index>(std::lround(x(static_cast<Eigen::Index>(k)) * static_cast<double>(n)));
    return j;
  }
};

bool contains_column(const Eigen::MatrixXd& X, const Eigen::VectorXd& x) {
  for (Eigen::Index j = 0; j < X.cols(); ++j)
    if ((X.col(j) - x).cwiseAbs().maxCoeff() < 1e-12) return true;
  return false;
}

// Whether x lies in the bounding box of the columns of X expanded by `margin`.
bool in_expanded_box(const Eigen::MatrixXd& X, const Eigen::VectorXd& x, double margin) {
  if (X.cols() == 0) return false;
  const Eigen::VectorXd lo = X.rowwise().minCoeff().array() - margin;
  const Eigen::VectorXd hi = X.rowwise().maxCoeff().array() + margin;
  return (x.array() >= lo.array() - 1e-12).all() && (x.array() <= hi.array() + 1e-12).all();
}

struct RunResult {
  bool argmax_kept = true;
  bool resampled = false;
  std::size_t evaluations = 0;
  std::size_t final_level = 0;
  std::size_t final_relevant = 0;
  double final_lattice = 0.0;
  std::vector<double> regret;  // simple regret after each evaluation
};

RunResult run(BranchAndBound& bnb, const PriorLattice& lattice, const Eigen::VectorXd& f, std::size_t budget) {
  RunResult out;
  Eigen::Index arg = 0;
  const double fmax = f.maxCoeff(&arg);
  const Eigen::VectorXd xstar = lattice.points.col(arg);
  std::set<Eigen::Index> seen;
  double best = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < budget; ++i) {
    const auto x = bnb.next();
    if (!x) break;
    const Eigen::Index j = lattice.index(*x);
    if (!seen.insert(j).second || bnb.sampled(*x)) { out.resampled = true; }
    bnb.tell(*x, f(j));
    best = std::max(best, f(j));
    out.regret.push_back(fmax - best);
    // The argmax must stay in the region R stands for: R itself at the finest level, else the box
    // the next refinement will cover (R's bounding box plus one level-m spacing).
    const Eigen::MatrixXd R = bnb.relevant_set();
    const bool kept = bnb.level() == bnb.options().max_level
                          ? contains_column(R, xstar)
                          : in_expanded_box(R, xstar, std::ldexp(1.0, -static_cast<int>(bnb.level())));
    if (!kept) out.argmax_kept = false;
  }
  out.evaluations = out.regret.size();
  out.final_level = bnb.level();
  out.final_relevant = bnb.relevant_size();
  out.final_lattice = bnb.lattice_size(bnb.level());
  return out;
}

void prior_draws(std::size_t d, std::size_t max_level, std::size_t budget, std::uint64_t seed0) {
  const PriorLattice lattice(d, max_level);
  int lost = 0;
  double shrink_sum = 0.0;
  std::size_t evals = 0;
  const int draws = 40;
  for (int s = 0; s < draws; ++s) {
    const Eigen::VectorXd f = lattice.draw(seed0 + static_cast<std::uint64_t>(s));
    BranchAndBound bnb(options(d, max_level));
    const RunResult r = run(bnb, lattice, f, budget);
    EXPECT_FALSE(r.resampled) << "draw " << s;
    if (!r.argmax_kept) ++lost;
    ASSERT_EQ(r.final_level, max_level) << "draw " << s << " did not reach the finest level";
    const double frac = static_cast<double>(r.final_relevant) / r.final_lattice;
    EXPECT_LT(frac, 0.1) << "draw " << s;
    shrink_sum += frac;
    evals += r.evaluations;
  }
  std::printf("[bnb d=%zu m_max=%zu] argmax lost in %d/%d draws; mean |R|/|L| at m_max %.4f; mean evaluations %.1f\n",
              d, max_level, lost, draws, shrink_sum / draws, static_cast<double>(evals) / draws);
  // alpha = 0.05 would allow ~2 of 40; the theory beta is conservative.
  EXPECT_LE(lost, 1);
}

TEST(BranchAndBound, StartsWithTheWholeCoarseLattice) {
  BranchAndBound bnb(options(2, 4));
  EXPECT_EQ(bnb.level(), 1u);
  EXPECT_EQ(bnb.relevant_size(), 9u);
  EXPECT_DOUBLE_EQ(bnb.pruned_fraction(), 0.0);
  EXPECT_EQ(bnb.round_cap(), 16u);
  EXPECT_FALSE(bnb.best().has_value());
  const auto x = bnb.next();
  ASSERT_TRUE(x.has_value());
  EXPECT_TRUE(contains_column(bnb.relevant_set(), *x));
  EXPECT_TRUE(x->isApprox(*bnb.next()));  // next() is idempotent
  EXPECT_THROW(bnb.tell(Eigen::Vector2d(0.3, 0.5), 1.0), std::invalid_argument);  // off the lattice
  bnb.tell(*x, 1.0);
  EXPECT_THROW(bnb.tell(*x, 2.0), std::invalid_argument);  // never resample
  EXPECT_NEAR(bnb.beta(10, 3), 2.0 * std::log(81.0 * std::numbers::pi * std::numbers::pi * 100.0 / (6.0 * 0.05)), 1e-12);

  BranchAndBoundOptions bad = options(2, 4);
  bad.alpha = 1.0;
  EXPECT_THROW(BranchAndBound{bad}, std::invalid_argument);
  bad = options(2, 4);
  bad.dim = 1;
  EXPECT_THROW(BranchAndBound{bad}, std::invalid_argument);
}

TEST(BranchAndBound, PriorDraws1dKeepTheArgmaxAndShrink) { prior_draws(1, 8, 120, 1000); }

TEST(BranchAndBound, PriorDraws2dKeepTheArgmaxAndShrink) { prior_draws(2, 5, 250, 2000); }

TEST(BranchAndBound, SimpleRegretDecaysFastOnASmooth1dDraw) {
  // Lengthscale 0.05 on a 1025-point lattice: with 0.2 a 1-D draw is pinned down (R exhausted,
  // regret 0) within ~10 evaluations, too few to see a decay.
  const std::size_t m_max = 10;
  const double l = 0.05;
  const PriorLattice lattice(1, m_max, l);
  const Eigen::VectorXd f = lattice.draw(7);
  BranchAndBound bnb(options(1, m_max, l));
  const RunResult r = run(bnb, lattice, f, 60);
  EXPECT_FALSE(r.resampled);
  EXPECT_TRUE(r.argmax_kept);
  ASSERT_GE(r.evaluations, 20u);
  // Regret after t evaluations; a search that stopped early (R exhausted) keeps its last regret.
  const auto at = [&](std::size_t t) { return r.regret[std::min(t, r.evaluations) - 1]; };
  std::printf("[bnb regret 1-D l=0.05] r5 %.3e r10 %.3e r20 %.3e r60 %.3e (%zu evaluations, next %s)\n", at(5),
              at(10), at(20), at(60), r.evaluations, bnb.next() ? "pending" : "none: R exhausted");
  ASSERT_GT(at(10), 0.0);
  EXPECT_LT(at(10), at(5));
  EXPECT_LT(at(20), 0.1 * at(10));
  EXPECT_LT(at(60), 1e-3 * at(10));
}

TEST(BranchAndBound, CapFallsBackToUcbArgmaxWithinR) {
  const PriorLattice lattice(2, 4);
  const Eigen::VectorXd f = lattice.draw(31);
  BranchAndBoundOptions o = options(2, 4);
  o.round_cap = 3;
  BranchAndBound bnb(o);
  std::size_t checked = 0;
  std::size_t level = bnb.level(), in_level = 0;
  for (int i = 0; i < 80; ++i) {
    const auto x = bnb.next();
    if (!x) break;
    const Eigen::MatrixXd R = bnb.relevant_set();
    ASSERT_TRUE(contains_column(R, *x));
    if (bnb.level() != level) {
      level = bnb.level();
      in_level = 0;
    }
    // Before the finest level every round spends at most the cap.
    if (level < o.max_level) {
      EXPECT_LE(++in_level, o.round_cap);
    }
    if (i >= 9) {  // the first round is 9 points > cap: from there on the proposals are UCB argmaxes
      Eigen::VectorXd mean, var;
      bnb.model().predict(R, mean, var);
      const double b = std::sqrt(bnb.beta(bnb.samples() + 1, bnb.level()));
      double best = -std::numeric_limits<double>::infinity();
      for (Eigen::Index j = 0; j < R.cols(); ++j)
        if (!bnb.sampled(R.col(j))) best = std::max(best, mean(j) + b * std::sqrt(var(j)));
      const Eigen::Index idx = [&] {
        for (Eigen::Index j = 0; j < R.cols(); ++j)
          if ((R.col(j) - *x).cwiseAbs().maxCoeff() < 1e-12) return j;
        return Eigen::Index{-1};
      }();
      EXPECT_NEAR(mean(idx) + b * std::sqrt(var(idx)), best, 1e-6 * (1.0 + std::abs(best)));
      ++checked;
    }
    bnb.tell(*x, f(lattice.index(*x)));
  }
  EXPECT_GT(bnb.capped_rounds(), 0u);
  EXPECT_GT(bnb.ucb_proposals(), 0u);
  EXPECT_GT(checked, 20u);
  // The very first proposal of a capped search is already the UCB argmax (all of L_1 unsampled).
  BranchAndBound fresh(o);
  EXPECT_EQ(fresh.capped_rounds(), 1u);
}

TEST(BranchAndBound, ReplayReproducesTheState) {
  const PriorLattice lattice(2, 4);
  const Eigen::VectorXd f = lattice.draw(99);
  const BranchAndBoundOptions o = options(2, 4);
  BranchAndBound bnb(o);
  for (int i = 0; i < 45; ++i) {
    const auto x = bnb.next();
    if (!x) break;
    bnb.tell(*x, f(lattice.index(*x)));
  }
  const BranchAndBound again = BranchAndBound::replay(o, bnb.observations());
  EXPECT_EQ(again.level(), bnb.level());
  EXPECT_EQ(again.samples(), bnb.samples());
  EXPECT_EQ(again.final_phase(), bnb.final_phase());
  EXPECT_EQ(again.ucb_proposals(), bnb.ucb_proposals());
  EXPECT_EQ(again.capped_rounds(), bnb.capped_rounds());
  EXPECT_EQ(again.pruned_fraction(), bnb.pruned_fraction());
  ASSERT_EQ(again.relevant_set().cols(), bnb.relevant_set().cols());
  EXPECT_TRUE(again.relevant_set() == bnb.relevant_set());
  ASSERT_TRUE(again.best().has_value());
  EXPECT_EQ(again.best()->value, bnb.best()->value);
  EXPECT_TRUE(again.best()->point == bnb.best()->point);
  const auto a = again.next(), b = bnb.next();
  ASSERT_EQ(a.has_value(), b.has_value());
  if (a) {
    EXPECT_TRUE(*a == *b);
  }
}


// The level-(m+1) spacing in Chebyshev distance from x to the nearest column of R.
double chebyshev_to(const Eigen::MatrixXd& R, const Eigen::VectorXd& x) {
  double best = std::numeric_limits<double>::infinity();
  for (Eigen::Index j = 0; j < R.cols(); ++j) best = std::min(best, (R.col(j) - x).cwiseAbs().maxCoeff());
  return best;
}

TEST(BranchAndBound, CappedRefinementStaysNearTheSurvivorsWithinTheCap) {
  // A cap far below the boxes' sizes (up to 33^2 points at level 5): every refinement prunes at most
  // `cap` candidates, all within one level-m spacing of a level-m survivor, and the search still
  // keeps the argmax (it is near the best samples) and gets near it.
  const std::size_t m_max = 5, cap = 40;
  const PriorLattice lattice(2, m_max);
  int lost = 0, capped_searches = 0;
  for (int s = 0; s < 20; ++s) {
    const Eigen::VectorXd f = lattice.draw(5000 + static_cast<std::uint64_t>(s));
    Eigen::Index arg = 0;
    const double fmax = f.maxCoeff(&arg);
    BranchAndBoundOptions o = options(2, m_max);
    o.candidate_cap = cap;
    BranchAndBound bnb(o);
    EXPECT_EQ(bnb.candidate_cap(), cap);
    Eigen::MatrixXd previous = bnb.relevant_set();
    std::size_t level = bnb.level();
    bool kept = true;
    double best = -std::numeric_limits<double>::infinity();
    for (int i = 0; i < 150; ++i) {
      const auto x = bnb.next();
      if (!x) break;
      ASSERT_FALSE(bnb.sampled(*x));
      bnb.tell(*x, f(lattice.index(*x)));
      best = std::max(best, f(lattice.index(*x)));
      const Eigen::MatrixXd R = bnb.relevant_set();
      if (bnb.level() != level) {
        ASSERT_GT(bnb.level(), level) << "draw " << s;
        EXPECT_LE(static_cast<std::size_t>(R.cols()), std::max<std::size_t>(cap, static_cast<std::size_t>(previous.cols())))
            << "draw " << s;
        // One level-m spacing per refinement (a tell can refine twice when a new R has nothing
        // left to sample).
        double reach = 0.0;
        for (std::size_t l = level; l < bnb.level(); ++l) reach += std::ldexp(1.0, -static_cast<int>(l));
        for (Eigen::Index j = 0; j < R.cols(); ++j)
          EXPECT_LE(chebyshev_to(previous, R.col(j)), reach + 1e-12) << "draw " << s << " level " << bnb.level();
        level = bnb.level();
      }
      if (!bnb.final_phase()) {
        EXPECT_LE(static_cast<std::size_t>(R.cols()), std::max<std::size_t>(cap, 9u));
      }
      if (level < m_max && chebyshev_to(R, lattice.points.col(arg)) > std::ldexp(1.0, -static_cast<int>(level)) + 1e-12)
        kept = false;
      previous = R;
    }
    if (bnb.capped_refinements() > 0) ++capped_searches;
    if (!kept) ++lost;
    EXPECT_LT(fmax - best, 0.3) << "draw " << s;
  }
  std::printf("[bnb capped refinements, cap %zu] %d/20 searches capped; argmax farther than one spacing from R in %d\n",
              cap, capped_searches, lost);
  EXPECT_GE(capped_searches, 15);
  EXPECT_LE(lost, 4);
}

TEST(BranchAndBound, AnUncappedSearchEnumeratesTheBoxAsBefore) {
  // The default cap (4096) exceeds every box of a 2-D search to level 5 (33^2 points): the run is
  // the box refinement, identical with an explicit huge cap.
  const PriorLattice lattice(2, 5);
  const Eigen::VectorXd f = lattice.draw(77);
  BranchAndBoundOptions huge = options(2, 5);
  huge.candidate_cap = 1u << 30;
  BranchAndBound a(options(2, 5)), b(huge);
  EXPECT_EQ(a.candidate_cap(), BranchAndBound::kDefaultCandidateCap);
  for (int i = 0; i < 120; ++i) {
    const auto x = a.next(), y = b.next();
    ASSERT_EQ(x.has_value(), y.has_value());
    if (!x) break;
    ASSERT_TRUE(*x == *y) << "step " << i;
    a.tell(*x, f(lattice.index(*x)));
    b.tell(*y, f(lattice.index(*y)));
  }
  EXPECT_EQ(a.capped_refinements(), 0u);
  EXPECT_TRUE(a.relevant_set() == b.relevant_set());
}

TEST(BranchAndBound, RebaseKeepsTheLatticeStateAndRebuildsTheModel) {
  const PriorLattice lattice(2, 5);
  const Eigen::VectorXd f = lattice.draw(123);
  BranchAndBound bnb(options(2, 5));
  for (int i = 0; i < 30; ++i) {
    const auto x = bnb.next();
    ASSERT_TRUE(x);
    bnb.tell(*x, f(lattice.index(*x)));
  }
  const BranchAndBound before = bnb;
  const Kernel k2(KernelType::matern52, Eigen::Vector2d(0.35, 0.15), 2.0);
  std::vector<double> values;
  for (const auto& r : bnb.observations()) values.push_back(2.0 * r.value + 1.0);
  bnb.rebase(k2, values);
  EXPECT_EQ(bnb.rebases(), 1u);
  EXPECT_EQ(bnb.level(), before.level());
  EXPECT_EQ(bnb.final_phase(), before.final_phase());
  EXPECT_EQ(bnb.samples(), before.samples());
  EXPECT_TRUE(bnb.relevant_set() == before.relevant_set());
  EXPECT_EQ(bnb.options().kernel.lengthscales(), k2.lengthscales());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(bnb.observations()[i].value, values[i]);
  // The model is a fresh GP on the new kernel and values: at R, and at the samples (noise-free).
  BranchAndBoundOptions o2 = options(2, 5);
  o2.kernel = k2;
  GpHyperparameters hp;
  hp.kernel = k2.type();
  hp.lengthscales = k2.lengthscales();
  hp.outputscale = k2.outputscale();
  hp.noise_variances = {o2.jitter * k2.outputscale()};
  GaussianProcess fresh(2, hp, Standardization{0.0, 1.0});
  for (std::size_t i = 0; i < values.size(); ++i)
    fresh.add(Observation{PointQuery{bnb.observations()[i].point}, values[i], 0});
  const Eigen::MatrixXd R = bnb.relevant_set();
  Eigen::VectorXd m1, v1, m2, v2;
  bnb.model().tracked_prediction(m1, v1);
  fresh.predict(R, m2, v2);
  ASSERT_EQ(m1.size(), m2.size());
  EXPECT_LT((m1 - m2).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((v1 - v2).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_NEAR(bnb.best()->value, 2.0 * before.best()->value + 1.0, 1e-12);
  // The search goes on under the new kernel.
  const auto x = bnb.next();
  ASSERT_TRUE(x);
  EXPECT_FALSE(bnb.sampled(*x));
  bnb.tell(*x, 2.0 * f(lattice.index(*x)) + 1.0);
  EXPECT_THROW(bnb.rebase(k2, values), std::invalid_argument);  // one value short
  EXPECT_THROW(bnb.rebase(Kernel(KernelType::matern52, Eigen::VectorXd::Constant(3, 0.2), 1.0),
                          std::vector<double>(bnb.samples(), 0.0)),
               std::invalid_argument);
}

TEST(BranchAndBound, SixDimensionsRefineWithinTheDefaultRoundCapAndTheCandidateCap) {
  // In 6-D the old default round cap (4 * 2^6 = 256) kept the search on {0, 1/2, 1}^6 for 256
  // samples, and the level-2 box (5^6 = 15625 points) was enumerated whole.
  EXPECT_EQ(BranchAndBound::default_round_cap(2), 16u);
  EXPECT_EQ(BranchAndBound::default_round_cap(4), 64u);
  EXPECT_EQ(BranchAndBound::default_round_cap(6), 64u);
  BranchAndBound bnb(options(6, 4, 0.3));
  EXPECT_EQ(bnb.round_cap(), 64u);
  const auto f = [](const Eigen::VectorXd& x) {
    return -(x.array() - 0.3).square().sum();
  };
  std::size_t level_at_65 = 0;
  for (int i = 0; i < 200; ++i) {
    const auto x = bnb.next();
    ASSERT_TRUE(x);
    bnb.tell(*x, f(*x));
    if (!bnb.final_phase()) {
      EXPECT_LE(bnb.relevant_size(), std::max<std::size_t>(729, BranchAndBound::kDefaultCandidateCap));
    }
    if (i == 64) level_at_65 = bnb.level();
  }
  EXPECT_GE(level_at_65, 2u);
  EXPECT_GE(bnb.level(), 4u);
  EXPECT_GT(bnb.capped_refinements(), 0u);
  // Better than any point of {0, 1/2, 1}^6 (best: 6 * 0.2^2 = 0.24), where the old default kept the
  // first 256 samples.
  EXPECT_LT(-bnb.best()->value, 0.235);
}

}  // namespace
}  // namespace tune
