// The information-threshold test of compressed GP bandits (Bedi et al.; digest sections 1.4, 4.2-4.4):
// the three equivalent forms of the test, the replicate count, the budget schedule, and the four
// rejection policies of the GpBandit strategy driven through a Study.
#include "tune/bandit/compression.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/random/rng.hpp"
#include "tune/strategy/gp_bandit.hpp"
#include "tune/strategy/strategy_factory.hpp"
#include "tune/study/study.hpp"

namespace {

using tune::GaussianProcess;
using tune::GpBandit;
using tune::GpBanditOptions;
using tune::GpHyperparameters;
using tune::Observation;
using tune::PointQuery;
using tune::RejectPolicy;

double uniform(std::mt19937_64& rng, double lo, double hi) { return lo + (hi - lo) * tune::uniform01(rng); }

// Coordinates drawn in order (function arguments would be evaluated in an unspecified order).
Eigen::VectorXd uniform_vector(std::mt19937_64& rng, Eigen::Index d, double lo, double hi) {
  Eigen::VectorXd x(d);
  for (Eigen::Index i = 0; i < d; ++i) x(i) = uniform(rng, lo, hi);
  return x;
}

// ---------------------------------------------------------------------------------------------
// The test itself.

TEST(Compression, EntropyVarianceAndRkhsFormsAgree) {
  std::mt19937_64 rng(61);
  const double two_pi_e = 2.0 * std::numbers::pi * std::numbers::e;
  int accepted = 0, rejected = 0, skipped = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    const Eigen::Index d = 2;
    const std::size_t m = 1 + static_cast<std::size_t>(trial % 25);
    GpHyperparameters hp;
    hp.kernel = trial % 2 ? tune::KernelType::matern52 : tune::KernelType::squared_exponential;
    hp.lengthscales = uniform_vector(rng, d, 0.05, 0.6);
    hp.outputscale = uniform(rng, 0.3, 3.0);
    const double s2 = std::exp(uniform(rng, std::log(1e-4), std::log(1e-1)));
    hp.noise_variances = {s2};
    GaussianProcess gp(2, hp);  // identity standardisation: noise_variance(0) == s2
    std::vector<Eigen::VectorXd> D;  // the dictionary
    for (std::size_t i = 0; i < m; ++i) {
      D.push_back(uniform_vector(rng, d, 0.0, 1.0));
      gp.add(Observation{PointQuery{D.back()}, uniform(rng, -1.0, 1.0), 0});
    }
    // Half of the queries next to a dictionary point (small variance), half anywhere.
    Eigen::VectorXd x = uniform_vector(rng, d, 0.0, 1.0);
    if (trial % 2 == 0) {
      const std::size_t j = static_cast<std::size_t>(rng() % m);
      x = D[j] + uniform_vector(rng, d, -0.02, 0.02);
    }
    const double var = gp.predict(x).variance;
    // eps such that rho = exp(2 eps) - 1 lies within a factor e^2 of var / s2 either way.
    const double rho_target = var / s2 * std::exp(uniform(rng, -2.0, 2.0));
    const double eps = 0.5 * std::log1p(rho_target);
    const double rho = std::exp(2.0 * eps) - 1.0;
    if (std::abs(var - s2 * rho) <= 1e-9 * s2 * rho || std::abs(0.5 * std::log1p(var / s2) - eps) <= 1e-9) {
      ++skipped;
      continue;
    }

    // (2.11): entropy of the predictive distribution against the noise entropy plus eps.
    const bool entropy_form = 0.5 * std::log(two_pi_e * (s2 + var)) > std::log(std::sqrt(two_pi_e * s2)) + eps;
    // (2.12): posterior variance against the noise times exp(2 eps) - 1.
    const bool variance_form = var > s2 * (std::exp(2.0 * eps) - 1.0);
    // (7.9) with Lemma 7.1: squared RKHS residual from a batch solve with ridge s2.
    const tune::Kernel k = hp.make_kernel();
    Eigen::MatrixXd K(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(m));
    Eigen::VectorXd kx(static_cast<Eigen::Index>(m));
    for (std::size_t i = 0; i < m; ++i) {
      const Eigen::Index ii = static_cast<Eigen::Index>(i);
      kx(ii) = k(D[i], x);
      for (std::size_t j = 0; j < m; ++j) K(ii, static_cast<Eigen::Index>(j)) = k(D[i], D[j]);
    }
    K.diagonal().array() += s2;
    const double residual = k(x, x) - kx.dot(K.ldlt().solve(kx));
    const bool rkhs_form = residual > s2 * std::expm1(2.0 * eps);
    const tune::InformationTest test = tune::information_test(var, s2, eps);

    EXPECT_EQ(entropy_form, variance_form) << "trial " << trial;
    EXPECT_EQ(rkhs_form, variance_form) << "trial " << trial << " residual " << residual << " var " << var;
    EXPECT_EQ(test.accepted, variance_form) << "trial " << trial;
    EXPECT_NEAR(test.statistic, var / s2, 1e-15 * var / s2);
    EXPECT_NEAR(test.threshold, rho, 1e-12 * rho);
    (variance_form ? accepted : rejected)++;
  }
  // Both outcomes are exercised, and the guard band removed almost nothing.
  EXPECT_GT(accepted, 300);
  EXPECT_GT(rejected, 300);
  EXPECT_LT(skipped, 15);
}

TEST(Compression, EpsilonZeroAcceptsEverythingAndTiesAreRejected) {
  // eps = 0 is the exact GP: even a zero variance is accepted.
  EXPECT_TRUE(tune::information_test(0.0, 1e-2, 0.0).accepted);
  // Otherwise the comparison is strict: a statistic equal to the threshold is rejected.
  const double eps = 0.25;
  const double rho = tune::variance_ratio_threshold(eps);
  EXPECT_FALSE(tune::information_test(rho * 1.0, 1.0, eps).accepted);
  EXPECT_TRUE(tune::information_test(std::nextafter(rho, 1.0), 1.0, eps).accepted);
  EXPECT_FALSE(tune::information_test(0.0, 1e-2, 1e-300).accepted);
}

TEST(Compression, VarianceRatioThresholdUsesExpm1) {
  // exp(2 eps) - 1 = x + x^2/2 + x^3/6 + ..., x = 2 eps; for eps = 1e-12 the series to third order
  // is exact in double precision. (It is 2e-12 (1 + 1e-12): equal to 2e-12 only to 1e-12 relative.)
  for (double eps : {1e-12, 1e-9, 1e-6}) {
    const double x = 2.0 * eps;
    const double series = x + x * x / 2.0 + x * x * x / 6.0 + x * x * x * x / 24.0;
    EXPECT_NEAR(tune::variance_ratio_threshold(eps), series, 1e-15 * series) << "eps " << eps;
  }
  const double v = tune::variance_ratio_threshold(1e-12);
  EXPECT_NEAR(v, 2e-12, 2e-12 * 1.1e-12);
  // The naive formula is off by ~1e-5 relative here, so this test can tell the two apart.
  EXPECT_GT(std::abs((std::exp(2e-12) - 1.0) - v), 1e-6 * v);
  EXPECT_DOUBLE_EQ(tune::variance_ratio_threshold(0.5), std::numbers::e - 1.0);
}

// n exact replicates at x (prior variance k, noise s2): var_n = k s2 / (n k + s2). The next
// replicate is rejected iff var_n <= s2 rho, i.e. iff n >= 1/rho - s2/k; the first such n is
// ceil(1/rho - s2/k) (digest 4.2(e), 4.4).
TEST(Compression, FirstRejectedReplicateMatchesClosedForm) {
  const double k = 2.0;
  for (double eps : {0.01, 0.05, 0.1}) {
    for (double ratio : {1e-3, 0.1, 0.6}) {
      const double s2 = ratio * k;
      const double rho = std::expm1(2.0 * eps);
      const double bound = 1.0 / rho - s2 / k;
      // The closed form is only meaningful away from integer ties.
      ASSERT_GT(std::abs(bound - std::round(bound)), 1e-3) << "eps " << eps << " s2/k " << ratio;
      const std::size_t expected = static_cast<std::size_t>(std::ceil(bound));

      GpHyperparameters hp;
      hp.kernel = tune::KernelType::squared_exponential;
      hp.lengthscales = Eigen::VectorXd::Constant(1, 0.3);
      hp.outputscale = k;
      hp.noise_variances = {s2};
      GaussianProcess gp(1, hp);
      const Eigen::VectorXd x = Eigen::VectorXd::Constant(1, 0.4);
      std::optional<std::size_t> first;
      for (std::size_t n = 0; n <= 200; ++n) {
        const double var = gp.predict(x).variance;
        const double nn = static_cast<double>(n);
        EXPECT_NEAR(var, k * s2 / (nn * k + s2), 1e-12 * k) << "n = " << n;
        if (!tune::information_test(var, s2, eps).accepted) {
          first = n;
          break;
        }
        gp.add(Observation{PointQuery{x}, 0.1 * nn, 0});
      }
      ASSERT_TRUE(first.has_value()) << "eps " << eps << " s2/k " << ratio;
      EXPECT_EQ(*first, expected) << "eps " << eps << " s2/k " << ratio << " bound " << bound;
    }
  }
}

TEST(Compression, EpsilonScheduleGivesThresholdTToTheMinusAlpha) {
  for (double horizon : {10.0, 100.0, 5000.0, 1e6})
    for (double alpha : {0.0, 0.25, 0.5, 1.0, 2.0}) {
      const double eps = tune::epsilon_schedule(horizon, alpha);
      EXPECT_DOUBLE_EQ(tune::variance_ratio_threshold(eps), std::pow(horizon, -alpha))
          << "T " << horizon << " alpha " << alpha;
      EXPECT_NEAR(eps, 0.5 * std::log(1.0 + std::pow(horizon, -alpha)), 1e-15);
    }
  GpBanditOptions o;
  o.epsilon = 0.3;
  EXPECT_EQ(o.effective_epsilon(), 0.3);
  o.horizon = 400.0;
  o.schedule_alpha = 0.5;
  EXPECT_DOUBLE_EQ(tune::variance_ratio_threshold(o.effective_epsilon()), 0.05);
}

TEST(Compression, RejectPolicyNamesRoundTrip) {
  for (RejectPolicy p : {RejectPolicy::literal, RejectPolicy::next_informative, RejectPolicy::evaluate_no_add,
                         RejectPolicy::stop})
    EXPECT_EQ(tune::reject_policy_from_string(tune::to_string(p)), p);
  EXPECT_THROW(tune::reject_policy_from_string("skip"), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// The strategy.

tune::Space unit_space(std::size_t dim) {
  std::vector<tune::Parameter> params;
  for (std::size_t i = 0; i < dim; ++i) params.push_back(tune::Parameter::floating("x" + std::to_string(i), 0.0, 1.0));
  return tune::Space(params);
}

// Branin on the unit square (minimum 0.397887).
double branin(const Eigen::VectorXd& u) {
  const double x1 = 15.0 * u(0) - 5.0, x2 = 15.0 * u(1);
  const double b = 5.1 / (4.0 * std::numbers::pi * std::numbers::pi), c = 5.0 / std::numbers::pi;
  const double t = 1.0 / (8.0 * std::numbers::pi);
  return std::pow(x2 - b * x1 * x1 + c * x1 - 6.0, 2) + 10.0 * (1.0 - t) * std::cos(x1) + 10.0;
}

// A smooth objective of order 1 (for fixed, unstandardised hyperparameters).
double smooth(const Eigen::VectorXd& u) {
  double f = 0.0;
  for (Eigen::Index i = 0; i < u.size(); ++i) f += std::sin(5.0 * u(i) + static_cast<double>(i)) + 0.5 * u(i);
  return f;
}

GpBanditOptions fixed_options(std::size_t dim, double eps, RejectPolicy policy) {
  GpBanditOptions o;
  o.epsilon = eps;
  o.on_reject = policy;
  o.fit_hyperparameters = false;
  o.standardize = false;
  GpHyperparameters hp;
  hp.kernel = tune::KernelType::matern52;
  hp.lengthscales = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(dim), 0.2);
  hp.outputscale = 1.0;
  hp.noise_variances = {1e-2};
  o.hyperparameters = hp;
  o.optimizer.candidates = 128;
  return o;
}

const GpBandit& bandit_of(const tune::Study& study) { return dynamic_cast<const GpBandit&>(study.strategy()); }

struct Snapshot {
  std::vector<double> mean, variance;
  bool operator==(const Snapshot&) const = default;
};

Snapshot snapshot(const GaussianProcess& gp, const std::vector<Eigen::VectorXd>& probes) {
  Snapshot s;
  for (const Eigen::VectorXd& x : probes) {
    const tune::Prediction p = gp.predict(x);
    s.mean.push_back(p.mean);
    s.variance.push_back(p.variance);
  }
  return s;
}

std::vector<Eigen::VectorXd> probe_points(std::size_t dim, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Eigen::VectorXd> probes;
  for (std::size_t i = 0; i < n; ++i) {
    Eigen::VectorXd x(static_cast<Eigen::Index>(dim));
    for (auto& v : x) v = tune::uniform01(rng);
    probes.push_back(x);
  }
  return probes;
}

std::vector<Eigen::VectorXd> run_units(double eps, std::vector<bool>& in_model) {
  GpBanditOptions o;
  o.epsilon = eps;
  o.optimizer.candidates = 128;
  tune::Study study(unit_space(2), tune::make_gp_bandit(tune::AcquisitionType::ei, o),
                    {.direction = tune::Direction::minimize, .seed = 5});
  std::vector<Eigen::VectorXd> units;
  for (int i = 0; i < 30; ++i) {
    const auto s = study.ask();
    if (!s) {
      ADD_FAILURE() << "eps " << eps << ": stopped after " << i << " trials: " << study.stop_reason();
      break;
    }
    const tune::Trial& t = study.trial(s->id);
    units.push_back(t.unit);
    in_model.push_back(t.in_model);
    study.tell(s->id, branin(t.unit));
  }
  return units;
}

TEST(Compression, TinyEpsilonIsBitIdenticalToTheExactGp) {
  std::vector<bool> in_exact, in_tiny;
  const std::vector<Eigen::VectorXd> exact = run_units(0.0, in_exact);
  const std::vector<Eigen::VectorXd> tiny = run_units(1e-300, in_tiny);
  ASSERT_EQ(exact.size(), 30u);
  ASSERT_EQ(tiny.size(), 30u);
  for (std::size_t i = 0; i < exact.size(); ++i) {
    EXPECT_EQ(exact[i], tiny[i]) << "trial " << i;
    EXPECT_TRUE(in_exact[i]) << "trial " << i;
    EXPECT_TRUE(in_tiny[i]) << "trial " << i;
  }
}

TEST(Compression, EvaluateNoAddNeverShrinksTheModelAndRejectedTellsChangeNothing) {
  const std::size_t dim = 2;
  const double eps = 0.1, rho = tune::variance_ratio_threshold(eps);
  tune::Study study(unit_space(dim),
                    tune::make_gp_bandit(tune::AcquisitionType::ei, fixed_options(dim, eps, RejectPolicy::evaluate_no_add)),
                    {.direction = tune::Direction::minimize, .seed = 11});
  const GpBandit& bandit = bandit_of(study);
  const std::vector<Eigen::VectorXd> probes = probe_points(dim, 20, 12);
  std::size_t last_size = 0;
  int rejections = 0;
  std::vector<std::uint64_t> in_model_ids;
  for (int i = 0; i < 60; ++i) {
    const std::optional<Snapshot> before =
        bandit.model() ? std::optional<Snapshot>(snapshot(*bandit.model(), probes)) : std::nullopt;
    const auto s = study.ask();
    ASSERT_TRUE(s.has_value()) << study.stop_reason();
    const tune::Trial& t = study.trial(s->id);
    const tune::GaussianProcess* gp = bandit.model();
    if (gp) {
      EXPECT_GE(gp->size(), last_size) << "trial " << i;
      last_size = gp->size();
    }
    const std::optional<Snapshot> mid = gp ? std::optional<Snapshot>(snapshot(*gp, probes)) : std::nullopt;
    if (t.source == "acquisition") {
      ASSERT_NE(gp, nullptr);
      // The recorded statistic is the model's variance / noise at the suggestion, and in_model is
      // exactly the outcome of the test.
      EXPECT_DOUBLE_EQ(t.test_statistic, gp->predict(t.unit).variance / gp->noise_variance(0)) << "trial " << i;
      EXPECT_EQ(t.in_model, t.test_statistic > rho) << "trial " << i;
    }
    const std::size_t size_at_ask = gp ? gp->size() : 0;
    study.tell(s->id, smooth(t.unit));
    if (t.in_model) in_model_ids.push_back(t.id);
    gp = bandit.model();
    if (!gp) continue;
    EXPECT_GE(gp->size(), last_size) << "trial " << i;
    last_size = gp->size();
    if (!t.in_model) {
      ++rejections;
      EXPECT_EQ(gp->size(), size_at_ask) << "trial " << i;
      ASSERT_TRUE(mid.has_value());
      EXPECT_TRUE(snapshot(*gp, probes) == *mid) << "rejected trial " << i << " changed the posterior";
      // Across the whole ask/tell (which may include a rebuild of the factor) the posterior is
      // unchanged too: the rebuild replays the same appends.
      if (before) {
        EXPECT_TRUE(snapshot(*gp, probes) == *before) << "rejected trial " << i;
      }
    } else if (t.source == "acquisition") {
      EXPECT_EQ(gp->size(), size_at_ask + 1) << "trial " << i;
    }
  }
  EXPECT_GE(rejections, 1);
  // The dictionary holds exactly the completed in-model trials, in order.
  EXPECT_EQ(bandit.dictionary(), in_model_ids);
  ASSERT_NE(bandit.model(), nullptr);
  EXPECT_EQ(bandit.model()->size(), in_model_ids.size());
}

TEST(Compression, StopPolicyEndsTheStudyAtTheFirstRejection) {
  const double eps = 0.1, rho = tune::variance_ratio_threshold(eps);
  tune::Study study(unit_space(1), tune::make_gp_bandit(tune::AcquisitionType::ei, fixed_options(1, eps, RejectPolicy::stop)),
                    {.direction = tune::Direction::minimize, .seed = 13});
  bool stopped = false;
  for (int i = 0; i < 200 && !stopped; ++i) {
    const auto s = study.ask();
    if (!s) {
      stopped = true;
      break;
    }
    const tune::Trial& t = study.trial(s->id);
    // Before the stop every suggestion passed the test.
    if (t.source == "acquisition") {
      EXPECT_GT(t.test_statistic, rho) << "trial " << i;
    }
    EXPECT_TRUE(t.in_model);
    study.tell(s->id, smooth(t.unit));
  }
  ASSERT_TRUE(stopped) << "no rejection within 200 trials";
  EXPECT_NE(study.stop_reason().find("threshold"), std::string::npos) << study.stop_reason();
  EXPECT_TRUE(study.finished());
  EXPECT_FALSE(study.ask().has_value());
}

TEST(Compression, NextInformativeReturnsOnlyInformativeSuggestions) {
  const std::size_t dim = 2;
  const double eps = 0.1, rho = tune::variance_ratio_threshold(eps);
  tune::Study study(unit_space(dim),
                    tune::make_gp_bandit(tune::AcquisitionType::ei, fixed_options(dim, eps, RejectPolicy::next_informative)),
                    {.direction = tune::Direction::minimize, .seed = 17});
  const GpBandit& bandit = bandit_of(study);
  int checked = 0;
  for (int i = 0; i < 40; ++i) {
    const auto s = study.ask();
    if (!s) break;  // converged early is allowed; what was returned is checked below
    const tune::Trial& t = study.trial(s->id);
    EXPECT_TRUE(t.in_model) << "trial " << i;
    if (t.source == "acquisition") {
      ++checked;
      EXPECT_GT(t.test_statistic, rho) << "trial " << i;
      const tune::GaussianProcess* gp = bandit.model();
      ASSERT_NE(gp, nullptr);
      EXPECT_DOUBLE_EQ(t.test_statistic, gp->predict(t.unit).variance / gp->noise_variance(0)) << "trial " << i;
    }
    study.tell(s->id, smooth(t.unit));
  }
  EXPECT_GE(checked, 20);
}

TEST(Compression, NextInformativeConvergesOnACoveredInterval) {
  const double eps = 0.5, rho = tune::variance_ratio_threshold(eps);
  tune::Study study(unit_space(1),
                    tune::make_gp_bandit(tune::AcquisitionType::ei, fixed_options(1, eps, RejectPolicy::next_informative)),
                    {.direction = tune::Direction::minimize, .seed = 19});
  bool stopped = false;
  for (int i = 0; i < 300; ++i) {
    const auto s = study.ask();
    if (!s) {
      stopped = true;
      break;
    }
    const tune::Trial& t = study.trial(s->id);
    if (t.source == "acquisition") {
      EXPECT_GT(t.test_statistic, rho) << "trial " << i;
    }
    study.tell(s->id, smooth(t.unit));
  }
  ASSERT_TRUE(stopped) << "did not converge within 300 trials";
  EXPECT_NE(study.stop_reason().find("converged"), std::string::npos) << study.stop_reason();
  EXPECT_TRUE(study.finished());
  // Every trial joined the model (no evaluation was wasted).
  const GpBandit& bandit = bandit_of(study);
  EXPECT_EQ(bandit.dictionary().size(), study.trials().size());
}

TEST(Compression, LiteralPolicySkipsRejectedStepsWithoutTrials) {
  const double eps = 0.1, rho = tune::variance_ratio_threshold(eps);
  GpBanditOptions o = fixed_options(1, eps, RejectPolicy::literal);
  o.max_skipped_steps = 40;
  tune::Study study(unit_space(1), tune::make_gp_bandit(tune::AcquisitionType::ucb, o),
                    {.direction = tune::Direction::minimize, .seed = 23});
  const GpBandit& bandit = bandit_of(study);
  std::size_t total_skipped = 0;
  for (int i = 0; i < 80; ++i) {
    const std::size_t skipped_before = bandit.skipped_steps().size();
    const std::size_t trials_before = study.trials().size();
    const std::size_t model_before = bandit.model() ? bandit.model()->size() : 0;
    const std::uint64_t ask_index = study.ask_count();
    const auto s = study.ask();
    const std::size_t skipped_after = bandit.skipped_steps().size();
    ASSERT_GE(skipped_after, skipped_before);
    total_skipped += skipped_after - skipped_before;
    // Skipped steps add no trial and leave the model alone (no refresh is due without new data).
    EXPECT_EQ(study.trials().size(), trials_before + (s ? 1 : 0)) << "ask " << i;
    if (skipped_after > skipped_before) {
      ASSERT_NE(bandit.model(), nullptr);
      EXPECT_EQ(bandit.model()->size(), model_before) << "ask " << i;
      const tune::GaussianProcess& gp = *bandit.model();
      for (std::size_t k = skipped_before; k < skipped_after; ++k) {
        const tune::SkippedStep& step = bandit.skipped_steps()[k];
        EXPECT_EQ(step.ask_index, ask_index);
        EXPECT_LE(step.test_statistic, rho);
        EXPECT_DOUBLE_EQ(step.test_statistic, gp.predict(step.unit).variance / gp.noise_variance(0));
      }
    }
    if (!s) {
      EXPECT_NE(study.stop_reason().find("converged"), std::string::npos) << study.stop_reason();
      break;
    }
    const tune::Trial& t = study.trial(s->id);
    EXPECT_TRUE(t.in_model) << "trial " << i;
    if (t.source == "acquisition") {
      EXPECT_GT(t.test_statistic, rho) << "trial " << i;
    }
    study.tell(s->id, smooth(t.unit));
  }
  EXPECT_GT(total_skipped, 0u);
  // Every completed trial is in the dictionary: nothing rejected was evaluated.
  EXPECT_EQ(bandit.dictionary().size(), study.trials().size());
}

}  // namespace
