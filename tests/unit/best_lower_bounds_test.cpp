// tune::best_lower_bounds (the recommendation's starting points) against a scan of every point
// with the posterior solved here by Eigen's LLT of the whole covariance matrix.
#include "tune/bandit/best_lower_bounds.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "tune/random/rng.hpp"

namespace {

using tune::Acquisition;
using tune::AcquisitionType;
using tune::GaussianProcess;

struct Fixture {
  GaussianProcess gp;
  Eigen::MatrixXd data;        // the observations' points
  Eigen::MatrixXd candidates;  // the data's points, then as many random ones
};

// n noisy observations of a function with several bumps, so that many points have close means.
// With `below_prior`, the data lie in x < 0.5 and below the prior mean, so that the points of most
// mean are the candidates far from them, whose sd is large: the best bounds come late in the order
// of the mean.
Fixture make_fixture(std::uint64_t seed, Eigen::Index n, bool below_prior = false) {
  std::mt19937_64 rng(seed);
  tune::GpHyperparameters hp;
  hp.kernel = tune::KernelType::matern52;
  hp.lengthscales = Eigen::Vector2d(0.15, 0.3);
  hp.outputscale = 1.3;
  hp.noise_variances = {4e-3};
  Fixture f{GaussianProcess(2, hp, {1.5, 2.0}), Eigen::MatrixXd(2, n), Eigen::MatrixXd(2, 2 * n)};
  std::vector<tune::Observation> observations;
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::Vector2d x((below_prior ? 0.5 : 1.0) * tune::uniform01(rng), tune::uniform01(rng));
    f.data.col(i) = x;
    const double y = std::sin(9.0 * x(0)) * std::cos(7.0 * x(1)) + 0.05 * (tune::uniform01(rng) - 0.5) -
                     (below_prior ? 1.5 : 0.0);
    observations.push_back({tune::PointQuery{x}, 1.5 + 2.0 * y, 0});
  }
  f.gp.add(std::move(observations));
  f.candidates << f.data, Eigen::MatrixXd::NullaryExpr(2, n, [&] { return tune::uniform01(rng); });
  if (below_prior) f.candidates.block(0, n, 1, n).array() = 0.75 + 0.25 * f.candidates.block(0, n, 1, n).array();
  return f;
}

// Every candidate's mean - kappa sd from the batch formulas, best first, ties to the lower column.
std::vector<std::pair<double, Eigen::Index>> scan(const Fixture& f, double kappa) {
  const tune::Kernel& k = f.gp.kernel();
  const double noise = f.gp.hyperparameters().noise_variances[0];
  const double mean = f.gp.standardization().mean, scale = f.gp.standardization().scale;
  Eigen::MatrixXd K = k.cross(f.data, f.data);
  K.diagonal().array() += noise;
  const Eigen::LLT<Eigen::MatrixXd> llt(K);
  Eigen::VectorXd y(f.data.cols());
  for (Eigen::Index i = 0; i < y.size(); ++i) y(i) = (f.gp.observations()[static_cast<std::size_t>(i)].value - mean) / scale;
  const Eigen::VectorXd weights = llt.solve(y);
  const Eigen::MatrixXd C = k.cross(f.data, f.candidates);
  const Eigen::MatrixXd V = llt.matrixL().solve(C);
  std::vector<std::pair<double, Eigen::Index>> all;
  for (Eigen::Index j = 0; j < f.candidates.cols(); ++j) {
    const double m = mean + scale * C.col(j).dot(weights);
    const double var = scale * scale * std::max(0.0, k.outputscale() - V.col(j).squaredNorm());
    all.emplace_back(m - kappa * std::sqrt(var), j);
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  return all;
}

TEST(BestLowerBounds, AreTheBestOfAScanOfEveryPoint) {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    const Fixture f = make_fixture(seed, 300, seed == 4);
    for (double kappa : {0.0, 1.0, 4.0}) {
      const std::vector<std::pair<double, Eigen::Index>> reference = scan(f, kappa);
      for (std::size_t count : {std::size_t{1}, std::size_t{8}, std::size_t{2000}}) {
        SCOPED_TRACE(testing::Message() << "seed " << seed << ", kappa " << kappa << ", count " << count);
        const auto best = tune::best_lower_bounds(f.gp, f.candidates, Acquisition{AcquisitionType::ucb, -kappa, 0.0}, count);
        ASSERT_EQ(best.size(), std::min<std::size_t>(count, reference.size()));
        for (std::size_t r = 0; r < best.size(); ++r) {
          // Scores apart by more than round-off come in the reference's order.
          EXPECT_NEAR(best[r].first, reference[r].first, 1e-9 * (1.0 + std::abs(reference[r].first)));
          if (r + 1 < reference.size() && reference[r].first - reference[r + 1].first > 1e-9 &&
              (r == 0 || reference[r - 1].first - reference[r].first > 1e-9)) {
            EXPECT_EQ(best[r].second, reference[r].second) << "rank " << r;
          }
        }
      }
    }
  }
}

TEST(BestLowerBounds, RefusesAScoreTheMeanDoesNotBound) {
  const Fixture f = make_fixture(4, 20);
  EXPECT_THROW(tune::best_lower_bounds(f.gp, f.candidates, Acquisition{AcquisitionType::ucb, 0.5, 0.0}, 8),
               std::invalid_argument);
  EXPECT_THROW(tune::best_lower_bounds(f.gp, f.candidates, Acquisition{AcquisitionType::ei, 1.0, 0.0}, 8),
               std::invalid_argument);
}

TEST(GaussianProcessPredict, MeanAndVarianceAloneAreWhatPredictGives) {
  const Fixture f = make_fixture(5, 200);
  Eigen::VectorXd mean, variance;
  f.gp.predict(f.candidates, mean, variance);
  const Eigen::VectorXd mean_alone = f.gp.predict_mean(f.candidates);
  for (Eigen::Index j = 0; j < mean.size(); ++j) EXPECT_EQ(mean_alone(j), mean(j)) << j;
  // A block of the points: its solve may round differently from the whole set's.
  const Eigen::VectorXd variance_alone = f.gp.predict_variance(f.candidates.middleCols(17, 40));
  for (Eigen::Index j = 0; j < 40; ++j) EXPECT_NEAR(variance_alone(j), variance(17 + j), 1e-12) << j;
}

}  // namespace
