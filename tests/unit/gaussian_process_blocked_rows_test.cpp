// GaussianProcess::add of many observations at once (append_rows, a panel of columns at a time for
// every new row) against the same observations added one at a time (append_row, Eigen's forward
// substitution per row): the same factor and whitened targets to the bit, whatever the sizes, the
// model's size before, exact zeros in the covariances, duplicated points and the pivot's clamp.
// Each test runs with the AVX loops and with them switched off (the SSE2 paths; SimdPaths).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "simd_paths_fixture.hpp"
#include "tune/gp/gaussian_process.hpp"
#include "tune/random/rng.hpp"

namespace {

using GaussianProcessBlockedRows = SimdPaths;
TUNE_SIMD_PATHS_SUITE(GaussianProcessBlockedRows);

using tune::GaussianProcess;
using tune::GpHyperparameters;
using tune::Observation;
using tune::PointQuery;

GpHyperparameters level_hyperparameters(double lengthscale) {
  GpHyperparameters hp;
  hp.kernel = tune::KernelType::squared_exponential;
  hp.lengthscales = Eigen::Vector2d(lengthscale, 0.4 * lengthscale / 0.3);
  hp.noise_variances = {1e-6, 0.05, 0.002};
  hp.offset_variance = 1.1;
  hp.discrepancy_ratios = {0.3, 0.7};
  hp.group_scales = {0.8, 1.3};
  return hp;
}

// Points, boxes, offset groups; every fifth point a copy of an earlier one (a clamped pivot).
std::vector<Observation> observations(std::mt19937_64& rng, int count) {
  std::vector<Observation> out;
  std::vector<Eigen::VectorXd> points;
  for (int i = 0; i < count; ++i) {
    Eigen::VectorXd x(2);
    x << tune::uniform01(rng), tune::uniform01(rng);
    if (i % 5 == 4) x = points[static_cast<std::size_t>(i / 2)];
    points.push_back(x);
    const Eigen::VectorXd lower = 0.5 * x, upper = (0.5 * x.array() + 0.2).matrix();
    tune::Query q = i % 11 == 10 ? tune::Query{tune::BoxQuery{lower, upper}} : tune::Query{PointQuery{x}};
    out.push_back(Observation{std::move(q), std::sin(6 * x(0)) + x(1) + 0.1 * tune::uniform01(rng),
                              static_cast<std::size_t>(i % 3)});
    if (i % 3 > 0) out.back().offset_group = static_cast<std::size_t>(i % 3 - 1);
  }
  return out;
}

bool same_bits(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

void expect_same_model(const GaussianProcess& blocked, const GaussianProcess& one_by_one) {
  ASSERT_EQ(blocked.size(), one_by_one.size());
  EXPECT_TRUE(same_bits(blocked.cholesky_factor(), one_by_one.cholesky_factor()));
  EXPECT_TRUE(same_bits(blocked.whitened_targets(), one_by_one.whitened_targets()));
  Eigen::VectorXd probe(2);
  probe << 0.3, 0.6;
  EXPECT_EQ(blocked.predict(probe).mean, one_by_one.predict(probe).mean);
  EXPECT_EQ(blocked.predict(probe).variance, one_by_one.predict(probe).variance);
}

TEST_P(GaussianProcessBlockedRows, ManyAtOnceEqualOneAtATimeToTheBit) {
  // Lengthscale 0.01: most covariances underflow to exactly 0 (Eigen skips a zero entry's division).
  for (double lengthscale : {0.3, 0.05, 0.01})
    for (int before : {0, 1, 7, 8, 13, 40})
      for (int added : {8, 9, 16, 23, 64, 150}) {
        std::mt19937_64 rng(static_cast<std::uint64_t>(1000 * before + added));
        const std::vector<Observation> obs = observations(rng, before + added);
        GaussianProcess one_by_one(2, level_hyperparameters(lengthscale), {0.2, 1.7});
        GaussianProcess blocked(2, level_hyperparameters(lengthscale), {0.2, 1.7});
        for (const Observation& o : obs) one_by_one.add(o);
        for (int i = 0; i < before; ++i) blocked.add(obs[static_cast<std::size_t>(i)]);
        blocked.add(std::vector<Observation>(obs.begin() + before, obs.end()));
        SCOPED_TRACE(testing::Message() << "lengthscale " << lengthscale << ", " << before << " + " << added);
        expect_same_model(blocked, one_by_one);
      }
}

TEST_P(GaussianProcessBlockedRows, ResetRebuildsTheSameFactorAsAddingAfresh) {
  std::mt19937_64 rng(7);
  const std::vector<Observation> obs = observations(rng, 333);
  GaussianProcess gp(2, level_hyperparameters(0.3), {0.0, 1.0});
  gp.add(obs);
  gp.reset(level_hyperparameters(0.2), {0.1, 2.0});
  GaussianProcess fresh(2, level_hyperparameters(0.2), {0.1, 2.0});
  for (const Observation& o : obs) fresh.add(o);
  expect_same_model(gp, fresh);
}

TEST_P(GaussianProcessBlockedRows, TrackedPointsAndTargetsAreTheSame) {
  std::mt19937_64 rng(11);
  const std::vector<Observation> obs = observations(rng, 120);
  Eigen::MatrixXd X(2, 5);
  for (Eigen::Index j = 0; j < X.cols(); ++j)
    for (Eigen::Index k = 0; k < 2; ++k) X(k, j) = tune::uniform01(rng);
  GaussianProcess one_by_one(2, level_hyperparameters(0.3), {0.0, 1.0});
  GaussianProcess blocked(2, level_hyperparameters(0.3), {0.0, 1.0});
  one_by_one.track(X);
  blocked.track(X);
  const std::size_t a = one_by_one.track_target(obs[3]);
  const std::size_t b = blocked.track_target(obs[3]);
  for (const Observation& o : obs) one_by_one.add(o);
  blocked.add(obs);
  expect_same_model(blocked, one_by_one);
  Eigen::VectorXd m1, v1, m2, v2;
  blocked.tracked_prediction(m1, v1);
  one_by_one.tracked_prediction(m2, v2);
  EXPECT_TRUE(same_bits(m1, m2));
  EXPECT_TRUE(same_bits(v1, v2));
  const tune::PairPrediction pb = blocked.predict_tracked_pair(b, b), pa = one_by_one.predict_tracked_pair(a, a);
  EXPECT_EQ(pb.covariance(0, 0), pa.covariance(0, 0));
  EXPECT_EQ(pb.mean(0), pa.mean(0));
}

// Points tracked after a blocked add (track() fills their rows then) and points tracked before the
// observations came one at a time have the same bits, whatever the number of points and rows: a
// loaded model's candidates predict as the running model's did.
TEST_P(GaussianProcessBlockedRows, PointsTrackedAfterTheRowsEqualPointsTrackedBefore) {
  for (int points : {1, 2, 3, 8, 9, 37})
    for (int rows : {1, 2, 7, 30, 101}) {
      std::mt19937_64 rng(static_cast<std::uint64_t>(100 * points + rows));
      const std::vector<Observation> obs = observations(rng, rows);
      Eigen::MatrixXd X(2, points);
      for (Eigen::Index j = 0; j < X.cols(); ++j)
        for (Eigen::Index k = 0; k < 2; ++k) X(k, j) = tune::uniform01(rng);
      GaussianProcess before(2, level_hyperparameters(0.3), {0.4, 1.2});
      GaussianProcess after(2, level_hyperparameters(0.3), {0.4, 1.2});
      before.track(X);
      for (const Observation& o : obs) before.add(o);
      after.add(obs);
      after.track(X);
      Eigen::VectorXd m1, v1, m2, v2;
      after.tracked_prediction(m1, v1);
      before.tracked_prediction(m2, v2);
      SCOPED_TRACE(testing::Message() << points << " points, " << rows << " rows");
      EXPECT_TRUE(same_bits(m1, m2));
      EXPECT_TRUE(same_bits(v1, v2));
      for (Eigen::Index j = 0; j < X.cols(); ++j) {
        const tune::Prediction p = after.predict(Eigen::VectorXd(X.col(j)));
        EXPECT_NEAR(m1(j), p.mean, 1e-9 * (1.0 + std::abs(p.mean)));  // and they are the posterior
        EXPECT_NEAR(v1(j), p.variance, 1e-9);
      }
    }
}

}  // namespace
