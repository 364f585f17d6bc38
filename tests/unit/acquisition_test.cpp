// tune::Acquisition (UCB, log EI), ucb_beta and rank_acquisition against direct formulas, finite
// differences through a real GP and a brute-force random search.
#include "tune/bandit/acquisition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "tune/bandit/acquisition_optimizer.hpp"
#include "tune/gp/gaussian_process.hpp"
#include "tune/random/rng.hpp"

namespace {

using tune::Acquisition;
using tune::AcquisitionType;
using tune::GaussianProcess;

// A 2-D GP on a few observations of a smooth, multi-modal function.
GaussianProcess make_gp(std::uint64_t seed, std::size_t n = 12) {
  tune::GpHyperparameters hp;
  hp.kernel = tune::KernelType::matern52;
  hp.lengthscales = Eigen::Vector2d(0.25, 0.35);
  hp.outputscale = 1.2;
  hp.noise_variances = {1e-3};
  GaussianProcess gp(2, hp, {0.4, 1.6});
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < n; ++i) {
    Eigen::VectorXd x(2);
    x << tune::uniform01(rng), tune::uniform01(rng);
    const double f = std::sin(7.0 * x(0)) * std::cos(4.0 * x(1)) + 0.5 * x(0);
    gp.add(tune::Observation{tune::PointQuery{x}, 0.4 + 1.6 * f, 0});
  }
  return gp;
}

double best_observed(const GaussianProcess& gp) {
  double best = -std::numeric_limits<double>::infinity();
  for (const tune::Observation& o : gp.observations()) best = std::max(best, o.value);
  return best;
}

// log(sd * (z Phi(z) + phi(z))), written directly.
double direct_log_ei(double mean, double variance, double incumbent) {
  const double sd = std::sqrt(variance);
  const double z = (mean - incumbent) / sd;
  const double Phi = 0.5 * std::erfc(-z / std::sqrt(2.0));
  const double phi = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
  return std::log(sd * (z * Phi + phi));
}

TEST(Acquisition, UcbScoreIsMeanPlusSqrtBetaTimesSd) {
  Acquisition a;
  a.type = AcquisitionType::ucb;
  for (double sqrt_beta : {0.0, 0.5, 2.0, 3.7})
    for (double mean : {-2.0, 0.0, 1.5})
      for (double var : {0.0, 1e-8, 0.3, 4.0}) {
        a.sqrt_beta = sqrt_beta;
        EXPECT_DOUBLE_EQ(a.score(mean, var), mean + sqrt_beta * std::sqrt(var));
      }
}

TEST(Acquisition, LogEiMatchesDirectFormulaWhereItDoesNotUnderflow) {
  Acquisition a;
  a.type = AcquisitionType::ei;
  a.incumbent = 1.25;
  for (double sd : {0.01, 0.3, 2.0})
    for (double z = -6.0; z <= 6.0; z += 0.25) {
      const double mean = a.incumbent + z * sd;
      const double ref = direct_log_ei(mean, sd * sd, a.incumbent);
      ASSERT_TRUE(std::isfinite(ref));
      EXPECT_NEAR(a.score(mean, sd * sd), ref, 1e-11 * std::max(1.0, std::abs(ref))) << "z = " << z << " sd = " << sd;
    }
  // Zero variance: no improvement possible, log EI = -inf.
  EXPECT_EQ(a.score(2.0, 0.0), -std::numeric_limits<double>::infinity());
}

TEST(Acquisition, LogEiStaysFiniteAndAccurateFarInTheTail) {
  Acquisition a;
  a.type = AcquisitionType::ei;
  a.incumbent = 0.0;
  for (double z : {-40.0, -100.0}) {
    const double sd = 0.5;
    const double got = a.score(z * sd, sd * sd);
    // The direct formula underflows to log(0) = -inf here.
    EXPECT_EQ(direct_log_ei(z * sd, sd * sd, 0.0), -std::numeric_limits<double>::infinity());
    ASSERT_TRUE(std::isfinite(got)) << "z = " << z;
    // Asymptotic series for z -> -inf: tau(z) = phi(z) / z^2 (1 - 3/z^2 + 15/z^4 - 105/z^6 + ...);
    // the omitted term is 945/z^8 ~ 1.5e-10 relative at z = -40.
    const double z2 = z * z;
    const double log_tau = -0.5 * z2 - 0.5 * std::log(2.0 * std::numbers::pi) - std::log(z2) +
                           std::log1p(-3.0 / z2 + 15.0 / (z2 * z2) - 105.0 / (z2 * z2 * z2));
    EXPECT_NEAR(got, std::log(sd) + log_tau, 1e-9) << "z = " << z;
  }
}

TEST(Acquisition, GradientMatchesFiniteDifferencesThroughAGp) {
  const GaussianProcess gp = make_gp(51);
  std::mt19937_64 rng(52);
  const double h = 1e-6;
  for (AcquisitionType type : {AcquisitionType::ucb, AcquisitionType::ei}) {
    Acquisition a;
    a.type = type;
    a.sqrt_beta = 1.7;
    a.incumbent = best_observed(gp);
    for (int trial = 0; trial < 40; ++trial) {
      Eigen::VectorXd x(2);
      x << 0.05 + 0.9 * tune::uniform01(rng), 0.05 + 0.9 * tune::uniform01(rng);
      Eigen::VectorXd grad;
      const double value = a.score(gp.predict_with_gradient(x), grad);
      const tune::Prediction p = gp.predict(x);
      EXPECT_NEAR(value, a.score(p.mean, p.variance), 1e-12 * std::max(1.0, std::abs(value)));
      ASSERT_EQ(grad.size(), 2);
      for (Eigen::Index i = 0; i < 2; ++i) {
        Eigen::VectorXd xp = x, xm = x;
        xp(i) += h;
        xm(i) -= h;
        const tune::Prediction up = gp.predict(xp), down = gp.predict(xm);
        const double fd = (a.score(up.mean, up.variance) - a.score(down.mean, down.variance)) / (2.0 * h);
        EXPECT_NEAR(grad(i), fd, 1e-5 * std::max(std::abs(fd), 1e-2))
            << tune::to_string(type) << " trial " << trial << " coordinate " << i << " score " << value;
      }
    }
  }
}

TEST(Acquisition, UcbBetaIsThePaperFormulaTimesScale) {
  for (std::size_t t : {1u, 2u, 10u, 1000u})
    for (std::size_t n : {1u, 256u, 100000u})
      for (double delta : {0.05, 0.1, 0.5})
        for (double scale : {1.0, 0.2}) {
          const double tt = static_cast<double>(t);
          const double ref = 2.0 * std::log(static_cast<double>(n) * tt * tt * std::numbers::pi * std::numbers::pi /
                                             (6.0 * delta)) *
                             scale;
          EXPECT_NEAR(tune::ucb_beta(t, n, delta, scale), ref, 1e-13 * std::abs(ref))
              << "t " << t << " n " << n << " delta " << delta << " scale " << scale;
        }
  // Spot value: N = 100, t = 3, delta = 0.1: 2 log(100 * 9 * pi^2 / 0.6) = 19.2053...
  EXPECT_NEAR(tune::ucb_beta(3, 100, 0.1, 1.0), 19.205360, 1e-5);
}

class RankAcquisition : public ::testing::TestWithParam<AcquisitionType> {};

TEST_P(RankAcquisition, SortedInsideTheCubeAndAsGoodAsDenseRandomSearch) {
  for (std::uint64_t gp_seed : {53u, 56u, 57u, 58u, 59u}) {
    SCOPED_TRACE("gp seed " + std::to_string(gp_seed));
    const GaussianProcess gp = make_gp(gp_seed);
    Acquisition a;
    a.type = GetParam();
    a.sqrt_beta = 2.0;
    a.incumbent = best_observed(gp);
    const tune::SnapFunction identity = [](const Eigen::VectorXd& x) { return x; };
    // Anchors: the three best observed points.
    std::vector<std::pair<double, Eigen::VectorXd>> observed;
    for (const tune::Observation& o : gp.observations()) observed.emplace_back(o.value, tune::location(o.query));
    std::sort(observed.begin(), observed.end(), [](const auto& p, const auto& q) { return p.first > q.first; });
    std::vector<Eigen::VectorXd> anchors{observed[0].second, observed[1].second, observed[2].second};
    const tune::AcquisitionOptimizerOptions options;

    tune::Rng rng(54);
    const std::vector<tune::ScoredPoint> ranked = tune::rank_acquisition(gp, a, identity, anchors, options, rng);
    ASSERT_GE(ranked.size(), options.candidate_count(2));
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      const tune::ScoredPoint& p = ranked[i];
      ASSERT_EQ(p.x.size(), 2);
      EXPECT_TRUE((p.x.array() >= 0.0).all() && (p.x.array() <= 1.0).all()) << "point " << i;
      if (i > 0) {
        EXPECT_GE(ranked[i - 1].score, p.score) << "not sorted at " << i;
      }
      // Scores and variances are those of the GP at the returned point.
      const tune::Prediction pred = gp.predict(p.x);
      EXPECT_NEAR(p.score, a.score(pred.mean, pred.variance), 1e-10 * std::max(1.0, std::abs(p.score))) << i;
      EXPECT_NEAR(p.variance, pred.variance, 1e-12 * std::max(1.0, pred.variance)) << i;
    }

    // Brute force: 20000 uniform points scored with the same acquisition.
    std::mt19937_64 search(55);
    Eigen::MatrixXd X(2, 20000);
    for (Eigen::Index j = 0; j < X.cols(); ++j) X(0, j) = tune::uniform01(search), X(1, j) = tune::uniform01(search);
    Eigen::VectorXd mean, var;
    gp.predict(X, mean, var);
    double best_random = -std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < X.cols(); ++j) best_random = std::max(best_random, a.score(mean(j), var(j)));
    EXPECT_GE(ranked.front().score, best_random - 1e-6 * std::max(1.0, std::abs(best_random)))
        << "optimiser " << ranked.front().score << " vs random search " << best_random;

    // Deterministic for the same Rng seed.
    tune::Rng rng2(54);
    const std::vector<tune::ScoredPoint> again = tune::rank_acquisition(gp, a, identity, anchors, options, rng2);
    ASSERT_EQ(again.size(), ranked.size());
    EXPECT_EQ(again.front().x, ranked.front().x);
    EXPECT_EQ(again.front().score, ranked.front().score);
  }
}

INSTANTIATE_TEST_SUITE_P(Acquisition, RankAcquisition, ::testing::Values(AcquisitionType::ucb, AcquisitionType::ei),
                         [](const ::testing::TestParamInfo<AcquisitionType>& param_info) {
                           return std::string(tune::to_string(param_info.param));
                         });

TEST(Acquisition, NamesRoundTrip) {
  EXPECT_EQ(tune::acquisition_type_from_string("ucb"), AcquisitionType::ucb);
  EXPECT_EQ(tune::acquisition_type_from_string("ei"), AcquisitionType::ei);
  EXPECT_THROW(tune::acquisition_type_from_string("pi"), std::invalid_argument);
}

}  // namespace
