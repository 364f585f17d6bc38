// GaussianProcess::track() on a model that already holds its observations (fill_tracked_rows: a
// block of rows and every tracked point at a time, replaying Eigen's row-major gemv) against the
// same points tracked first and the observations added one at a time (append_tracked_row per row):
// the same tracked posterior to the bit, for sizes around the blocks, odd and even, one to many
// points, offset groups and boxes, and after reset(). The same for tracked targets: a batch tracked
// on a full model (fill_target_columns, four columns per pass of a row of L where the processor has
// AVX) against targets tracked first, their rows appended one observation at a time.
// Each test runs with the AVX loops and with them switched off (the SSE2 paths; SimdPaths).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "simd_paths_fixture.hpp"
#include "tune/gp/gaussian_process.hpp"
#include "tune/random/rng.hpp"

namespace {

using GaussianProcessTrackedRows = SimdPaths;
TUNE_SIMD_PATHS_SUITE(GaussianProcessTrackedRows);

using tune::GaussianProcess;
using tune::Observation;

template <class A, class B>
bool same_bits(const A& a, const B& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

tune::GpHyperparameters hyperparameters(tune::KernelType kernel) {
  tune::GpHyperparameters hp;
  hp.kernel = kernel;
  hp.lengthscales = Eigen::Vector3d(0.25, 0.4, 0.15);
  hp.noise_variances = {1e-6, 0.01};
  hp.offset_variance = 1.3;
  hp.discrepancy_ratios = {0.2};
  hp.group_scales = {0.7};
  return hp;
}

std::vector<Observation> observations(std::mt19937_64& rng, int count) {
  std::vector<Observation> out;
  for (int i = 0; i < count; ++i) {
    Eigen::VectorXd x(3);
    for (Eigen::Index k = 0; k < 3; ++k) x(k) = tune::uniform01(rng);
    Observation& o = out.emplace_back();
    if (i % 11 == 4) o.query = tune::BoxQuery{x * 0.5, x * 0.5 + Eigen::Vector3d::Constant(0.2)};
    else o.query = tune::PointQuery{x};
    o.value = std::sin(7.0 * x(0)) + x(1);
    o.noise_group = i % 3 == 0 ? 0 : 1;
    if (o.noise_group == 0) o.offset_group = 0;
  }
  return out;
}

Eigen::MatrixXd points(std::mt19937_64& rng, Eigen::Index m) {
  Eigen::MatrixXd X(3, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (Eigen::Index k = 0; k < 3; ++k) X(k, j) = tune::uniform01(rng);
  return X;
}

TEST_P(GaussianProcessTrackedRows, TrackingAFullModelIsTrackingRowByRowToTheBit) {
  std::mt19937_64 rng(11);
  for (const tune::KernelType kernel : {tune::KernelType::squared_exponential, tune::KernelType::matern52})
    for (const int n : {0, 1, 2, 3, 8, 31, 32, 33, 34, 65, 130, 300})
      for (const Eigen::Index m : {1, 2, 3, 5, 40}) {
        const std::vector<Observation> obs = observations(rng, n);
        const Eigen::MatrixXd X = points(rng, m);
        GaussianProcess by_rows(3, hyperparameters(kernel), {0.3, 1.7});
        by_rows.track(X);
        for (const Observation& o : obs) by_rows.add(o);
        GaussianProcess at_once(3, hyperparameters(kernel), {0.3, 1.7});
        at_once.add(obs);
        at_once.track(X);
        Eigen::VectorXd mean_a, var_a, mean_b, var_b;
        by_rows.tracked_prediction(mean_a, var_a);
        at_once.tracked_prediction(mean_b, var_b);
        EXPECT_TRUE(same_bits(mean_a, mean_b)) << "n " << n << " m " << m;
        EXPECT_TRUE(same_bits(var_a, var_b)) << "n " << n << " m " << m;
        // reset() re-tracks the points the same way.
        at_once.reset(hyperparameters(kernel), {0.3, 1.7});
        at_once.tracked_prediction(mean_b, var_b);
        EXPECT_TRUE(same_bits(mean_a, mean_b)) << "n " << n << " m " << m << " after reset";
        EXPECT_TRUE(same_bits(var_a, var_b)) << "n " << n << " m " << m << " after reset";
        // And the same variance as a solve would give, to round-off (a test that can fail).
        if (n > 0 && m > 0) {
          Eigen::VectorXd mean_c, var_c;
          at_once.predict(X, mean_c, var_c);
          EXPECT_NEAR((mean_c - mean_b).cwiseAbs().maxCoeff(), 0.0, 1e-6);
        }
      }
}

TEST_P(GaussianProcessTrackedRows, TargetsTrackedOnAFullModelHaveTheAppendedColumnsToTheBit) {
  std::mt19937_64 rng(13);
  for (const int n : {3, 4, 5, 6, 7, 41, 150}) {
    const std::vector<Observation> obs = observations(rng, n);
    std::vector<Observation> targets;
    for (int j = 0; j < 13; ++j) {  // three groups of four and one left over
      Eigen::VectorXd x(3);
      for (Eigen::Index k = 0; k < 3; ++k) x(k) = tune::uniform01(rng);
      Observation& t = targets.emplace_back();
      t.query = tune::PointQuery{x};
      t.noise_group = j % 2;
      if (j % 2 == 0) t.offset_group = 0;
    }
    GaussianProcess early(3, hyperparameters(tune::KernelType::squared_exponential), {0.3, 1.7});
    const std::vector<std::size_t> early_slots = early.track_targets(targets);
    for (const Observation& o : obs) early.add(o);
    GaussianProcess late(3, hyperparameters(tune::KernelType::squared_exponential), {0.3, 1.7});
    late.add(obs);
    const std::vector<std::size_t> late_slots = late.track_targets(targets);
    for (std::size_t a = 0; a < targets.size(); ++a) {
      const tune::PairPrediction p = early.predict_tracked_pair(early_slots[a], early_slots[(a + 1) % targets.size()]);
      const tune::PairPrediction q = late.predict_tracked_pair(late_slots[a], late_slots[(a + 1) % targets.size()]);
      EXPECT_TRUE(same_bits(p.mean, q.mean)) << "n " << n << " target " << a;
      EXPECT_TRUE(same_bits(p.covariance.reshaped(), q.covariance.reshaped())) << "n " << n << " target " << a;
    }
  }
}

// predict_tracked_pair(a, a) skips the sums it would make twice: the same bits as a pair of two
// slots holding the same target (every sum made).
TEST_P(GaussianProcessTrackedRows, APairOfOneTargetIsAPairOfTwoCopies) {
  std::mt19937_64 rng(17);
  for (const int n : {0, 1, 5, 40}) {
    const std::vector<Observation> obs = observations(rng, n);
    GaussianProcess gp(3, hyperparameters(tune::KernelType::matern52), {0.3, 1.7});
    gp.add(obs);
    for (const bool offset : {false, true}) {
      Observation t;
      t.query = tune::PointQuery{Eigen::Vector3d(0.3, 0.6, 0.2)};
      if (offset) t.offset_group = 0;
      const std::vector<std::size_t> slots = gp.track_targets({t, t});
      const tune::PairPrediction one = gp.predict_tracked_pair(slots[0], slots[0]);
      const tune::PairPrediction two = gp.predict_tracked_pair(slots[0], slots[1]);
      EXPECT_TRUE(same_bits(one.mean, two.mean)) << n;
      EXPECT_TRUE(same_bits(one.covariance.reshaped(), two.covariance.reshaped())) << n;
      EXPECT_GT(one.covariance(0, 0), 0.0);
    }
  }
}

}  // namespace
