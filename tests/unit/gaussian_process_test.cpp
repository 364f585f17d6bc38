// tune::GaussianProcess (incremental Cholesky) against the batch posterior formula solved here with
// Eigen's LLT, and against central finite differences.
#include "tune/gp/gaussian_process.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tune/random/rng.hpp"

namespace {

using tune::GaussianProcess;
using tune::GpHyperparameters;
using tune::KernelType;
using tune::Observation;
using tune::PointQuery;
using tune::Standardization;

Eigen::VectorXd random_point(std::mt19937_64& rng, Eigen::Index d) {
  Eigen::VectorXd x(d);
  for (Eigen::Index i = 0; i < d; ++i) x(i) = tune::uniform01(rng);
  return x;
}

double uniform(std::mt19937_64& rng, double lo, double hi) { return lo + (hi - lo) * tune::uniform01(rng); }

struct Problem {
  std::size_t dim = 3;
  GpHyperparameters hp;
  Standardization standardization;
  std::vector<Observation> observations;
};

// Random hyperparameters, two noise groups, a non-trivial standardisation and n observations of a
// smooth function plus noise.
Problem make_problem(KernelType kernel, std::uint64_t seed, std::size_t n = 40, std::size_t dim = 3) {
  std::mt19937_64 rng(seed);
  Problem p;
  p.dim = dim;
  p.hp.kernel = kernel;
  p.hp.lengthscales.resize(static_cast<Eigen::Index>(dim));
  for (std::size_t i = 0; i < dim; ++i) p.hp.lengthscales(static_cast<Eigen::Index>(i)) = uniform(rng, 0.2, 0.8);
  p.hp.outputscale = uniform(rng, 0.5, 2.0);
  p.hp.noise_variances = {uniform(rng, 1e-3, 1e-2), uniform(rng, 2e-2, 1e-1)};
  p.standardization = {uniform(rng, 2.0, 5.0), uniform(rng, 1.5, 3.0)};
  for (std::size_t i = 0; i < n; ++i) {
    const Eigen::VectorXd x = random_point(rng, static_cast<Eigen::Index>(dim));
    const double f = std::sin(3.0 * x(0)) + x.squaredNorm() + 0.3 * std::cos(5.0 * x(dim - 1));
    const std::size_t group = i % 3 == 0 ? 1 : 0;
    p.observations.push_back({PointQuery{x}, p.standardization.mean + p.standardization.scale * f +
                                                 0.1 * uniform(rng, -1.0, 1.0),
                              group});
  }
  return p;
}

GaussianProcess grow_one_by_one(const Problem& p, std::size_t n) {
  GaussianProcess gp(p.dim, p.hp, p.standardization);
  for (std::size_t i = 0; i < n; ++i) gp.add(p.observations[i]);
  return gp;
}

// The batch posterior, in the units of the observed values:
//   mean = m + s k^T (K + D)^{-1} (y - m) / s,   var = s^2 (k(x,x) - k^T (K + D)^{-1} k),
// with K, k, D all in standardised units (D = per-group noise variances).
struct Batch {
  Eigen::MatrixXd KD;  // K + D
  Eigen::LLT<Eigen::MatrixXd> llt;
  Eigen::VectorXd alpha;  // (K + D)^{-1} y_std
  tune::Kernel kernel;
  Eigen::MatrixXd X;
  Standardization st;

  explicit Batch(const Problem& p, std::size_t n) : kernel(p.hp.make_kernel()), st(p.standardization) {
    const Eigen::Index nn = static_cast<Eigen::Index>(n);
    X.resize(static_cast<Eigen::Index>(p.dim), nn);
    Eigen::VectorXd y(nn);
    for (Eigen::Index i = 0; i < nn; ++i) {
      const Observation& o = p.observations[static_cast<std::size_t>(i)];
      X.col(i) = std::get<PointQuery>(o.query).x;
      y(i) = (o.value - st.mean) / st.scale;
    }
    KD.resize(nn, nn);
    for (Eigen::Index i = 0; i < nn; ++i)
      for (Eigen::Index j = 0; j < nn; ++j) {
        const Eigen::VectorXd d = X.col(i) - X.col(j);
        const double r2 = (d.array() / p.hp.lengthscales.array()).square().sum();
        KD(i, j) = kernel.of_r2(r2);
      }
    for (Eigen::Index i = 0; i < nn; ++i)
      KD(i, i) += p.hp.noise_variances[p.observations[static_cast<std::size_t>(i)].noise_group];
    llt.compute(KD);
    alpha = llt.solve(y);
  }
  tune::Prediction predict(const Eigen::VectorXd& x) const {
    Eigen::VectorXd k(X.cols());
    for (Eigen::Index i = 0; i < X.cols(); ++i) k(i) = kernel(X.col(i), x);
    const double mean = st.mean + st.scale * k.dot(alpha);
    const double var = st.scale * st.scale * (kernel(x, x) - k.dot(llt.solve(k)));
    return {mean, var};
  }
};

void expect_close(double actual, double expected, double tol, const std::string& what) {
  EXPECT_LE(std::abs(actual - expected), tol * std::max(1.0, std::abs(expected)))
      << what << ": actual " << actual << " expected " << expected;
}

class GpKernels : public ::testing::TestWithParam<KernelType> {};

TEST_P(GpKernels, IncrementalPosteriorEqualsBatchFormula) {
  const Problem p = make_problem(GetParam(), 21);
  const GaussianProcess gp = grow_one_by_one(p, p.observations.size());
  ASSERT_EQ(gp.size(), 40u);
  const Batch batch(p, 40);
  ASSERT_EQ(batch.llt.info(), Eigen::Success);
  std::mt19937_64 rng(22);
  double min_var = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 100; ++i) {
    const Eigen::VectorXd x = random_point(rng, 3);
    const tune::Prediction got = gp.predict(x);
    const tune::Prediction ref = batch.predict(x);
    expect_close(got.mean, ref.mean, 1e-10, "mean");
    expect_close(got.variance, ref.variance, 1e-10, "variance");
    min_var = std::min(min_var, ref.variance);
  }
  // The test points are not degenerate: the variance is resolved well above the tolerance.
  EXPECT_GT(min_var, 1e-6);
  // At the observed points too (variance about the noise level there).
  for (std::size_t i = 0; i < p.observations.size(); i += 7) {
    const Eigen::VectorXd& x = std::get<PointQuery>(p.observations[i].query).x;
    expect_close(gp.predict(x).mean, batch.predict(x).mean, 1e-10, "mean at data");
    expect_close(gp.predict(x).variance, batch.predict(x).variance, 1e-10, "variance at data");
  }
  // Public noise variances are in observed units.
  EXPECT_DOUBLE_EQ(gp.noise_variance(1), p.hp.noise_variances[1] * p.standardization.scale * p.standardization.scale);
}

// Leave-one-out z-scores against the definition: the model without observation i (same
// hyperparameters) predicts y_i with mean mu and variance var + the noise of i's group; z_i =
// (y_i - mu) / sqrt(that), in standardised units.
TEST_P(GpKernels, LeaveOneOutZScoresEqualRefitsWithoutEachObservation) {
  const Problem p = make_problem(GetParam(), 17, 30);
  const GaussianProcess gp = grow_one_by_one(p, 30);
  const std::vector<std::size_t> rows{0, 7, 13, 29};
  const Eigen::VectorXd z = gp.leave_one_out_z(rows);
  ASSERT_EQ(z.size(), 4);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    Problem without = p;
    without.observations.erase(without.observations.begin() + static_cast<std::ptrdiff_t>(rows[k]));
    const Batch batch(without, 29);
    const Observation& o = p.observations[rows[k]];
    const tune::Prediction pred = batch.predict(std::get<PointQuery>(o.query).x);
    const double st = p.standardization.scale;
    const double expected =
        (o.value - pred.mean) / st / std::sqrt(pred.variance / (st * st) + p.hp.noise_variances[o.noise_group]);
    expect_close(z(static_cast<Eigen::Index>(k)), expected, 1e-8, "z of row " + std::to_string(rows[k]));
  }
  EXPECT_THROW(gp.leave_one_out_z({30}), std::invalid_argument);
}

TEST_P(GpKernels, CholeskyFactorReproducesKPlusNoise) {
  const Problem p = make_problem(GetParam(), 23);
  const GaussianProcess gp = grow_one_by_one(p, p.observations.size());
  const Batch batch(p, p.observations.size());
  const Eigen::MatrixXd L = gp.cholesky_factor();
  ASSERT_EQ(L.rows(), 40);
  // Lower triangular with a positive diagonal.
  EXPECT_EQ(L.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff(), 0.0);
  EXPECT_GT(L.diagonal().minCoeff(), 0.0);
  EXPECT_LT((L * L.transpose() - batch.KD).cwiseAbs().maxCoeff(), 1e-12 * batch.KD.cwiseAbs().maxCoeff());
  // a = L^{-1} y_std.
  const Eigen::VectorXd a = gp.whitened_targets();
  const Eigen::VectorXd y_std = batch.KD * batch.alpha;
  EXPECT_LT((L * a - y_std).cwiseAbs().maxCoeff(), 1e-10);
}

TEST_P(GpKernels, BatchPredictEqualsSinglePredict) {
  const Problem p = make_problem(GetParam(), 24);
  const GaussianProcess gp = grow_one_by_one(p, p.observations.size());
  std::mt19937_64 rng(25);
  Eigen::MatrixXd X(3, 100);
  for (Eigen::Index j = 0; j < X.cols(); ++j) X.col(j) = random_point(rng, 3);
  Eigen::VectorXd mean, var;
  gp.predict(X, mean, var);
  ASSERT_EQ(mean.size(), 100);
  ASSERT_EQ(var.size(), 100);
  for (Eigen::Index j = 0; j < X.cols(); ++j) {
    const tune::Prediction single = gp.predict(X.col(j));
    expect_close(mean(j), single.mean, 1e-13, "batch mean");
    expect_close(var(j), single.variance, 1e-13, "batch variance");
  }
}

TEST_P(GpKernels, PredictWithGradientMatchesFiniteDifferences) {
  const Problem p = make_problem(GetParam(), 26);
  const GaussianProcess gp = grow_one_by_one(p, p.observations.size());
  std::mt19937_64 rng(27);
  const double h = 1e-6;
  for (int trial = 0; trial < 50; ++trial) {
    const Eigen::VectorXd x = random_point(rng, 3);
    const tune::PredictionWithGradient pg = gp.predict_with_gradient(x);
    const tune::Prediction plain = gp.predict(x);
    expect_close(pg.mean, plain.mean, 1e-13, "mean");
    expect_close(pg.variance, plain.variance, 1e-13, "variance");
    ASSERT_EQ(pg.mean_gradient.size(), 3);
    ASSERT_EQ(pg.variance_gradient.size(), 3);
    for (Eigen::Index i = 0; i < 3; ++i) {
      Eigen::VectorXd xp = x, xm = x;
      xp(i) += h;
      xm(i) -= h;
      const tune::Prediction up = gp.predict(xp), down = gp.predict(xm);
      const double fd_mean = (up.mean - down.mean) / (2.0 * h);
      const double fd_var = (up.variance - down.variance) / (2.0 * h);
      // Relative 1e-5, with a floor at 1e-3 of the function's scale for gradients near zero.
      EXPECT_NEAR(pg.mean_gradient(i), fd_mean, 1e-5 * std::max(std::abs(fd_mean), 1e-3 * p.standardization.scale))
          << "trial " << trial << " coordinate " << i;
      EXPECT_NEAR(pg.variance_gradient(i), fd_var,
                  1e-5 * std::max(std::abs(fd_var), 1e-3 * plain.variance))
          << "trial " << trial << " coordinate " << i;
    }
  }
}

TEST_P(GpKernels, TruncateEqualsModelOfPrefixBitForBit) {
  const Problem p = make_problem(GetParam(), 28);
  GaussianProcess gp = grow_one_by_one(p, p.observations.size());
  std::mt19937_64 rng(29);
  std::vector<Eigen::VectorXd> probes;
  for (int i = 0; i < 30; ++i) probes.push_back(random_point(rng, 3));
  for (const std::size_t n : {std::size_t{33}, std::size_t{20}, std::size_t{1}, std::size_t{0}}) {
    gp.truncate(n);
    const GaussianProcess fresh = grow_one_by_one(p, n);
    ASSERT_EQ(gp.size(), n);
    ASSERT_EQ(gp.observations().size(), n);
    EXPECT_EQ(gp.cholesky_factor(), fresh.cholesky_factor());
    EXPECT_EQ(gp.whitened_targets(), fresh.whitened_targets());
    for (const Eigen::VectorXd& x : probes) {
      const tune::Prediction a = gp.predict(x), b = fresh.predict(x);
      EXPECT_EQ(a.mean, b.mean) << "n = " << n;
      EXPECT_EQ(a.variance, b.variance) << "n = " << n;
    }
  }
  // Growing again after a truncation (the fantasy pattern) equals growing from scratch.
  for (std::size_t i = 0; i < 25; ++i) gp.add(p.observations[i]);
  const GaussianProcess fresh = grow_one_by_one(p, 25);
  EXPECT_EQ(gp.cholesky_factor(), fresh.cholesky_factor());
  for (const Eigen::VectorXd& x : probes) {
    EXPECT_EQ(gp.predict(x).mean, fresh.predict(x).mean);
    EXPECT_EQ(gp.predict(x).variance, fresh.predict(x).variance);
  }
  // Truncating to a size >= the current one is a no-op.
  gp.truncate(100);
  EXPECT_EQ(gp.size(), 25u);
}

TEST_P(GpKernels, AddVectorEqualsSuccessiveAddsBitForBit) {
  const Problem p = make_problem(GetParam(), 30);
  const GaussianProcess one_by_one = grow_one_by_one(p, p.observations.size());
  GaussianProcess batched(p.dim, p.hp, p.standardization);
  // Two vector adds: a first chunk and the rest (appending to a non-empty model).
  batched.add(std::vector<Observation>(p.observations.begin(), p.observations.begin() + 13));
  batched.add(std::vector<Observation>(p.observations.begin() + 13, p.observations.end()));
  ASSERT_EQ(batched.size(), one_by_one.size());
  EXPECT_EQ(batched.cholesky_factor(), one_by_one.cholesky_factor());
  EXPECT_EQ(batched.whitened_targets(), one_by_one.whitened_targets());
  std::mt19937_64 rng(31);
  for (int i = 0; i < 30; ++i) {
    const Eigen::VectorXd x = random_point(rng, 3);
    EXPECT_EQ(batched.predict(x).mean, one_by_one.predict(x).mean);
    EXPECT_EQ(batched.predict(x).variance, one_by_one.predict(x).variance);
  }
}

TEST_P(GpKernels, ResetWithSameHyperparametersReproducesFactorBitForBit) {
  const Problem p = make_problem(GetParam(), 32);
  GaussianProcess gp = grow_one_by_one(p, p.observations.size());
  const Eigen::MatrixXd L = gp.cholesky_factor();
  const Eigen::VectorXd a = gp.whitened_targets();
  const Eigen::VectorXd x = Eigen::VectorXd::Constant(3, 0.37);
  const tune::Prediction before = gp.predict(x);

  gp.reset(p.hp, p.standardization);
  EXPECT_EQ(gp.cholesky_factor(), L);
  EXPECT_EQ(gp.whitened_targets(), a);
  EXPECT_EQ(gp.predict(x).mean, before.mean);
  EXPECT_EQ(gp.predict(x).variance, before.variance);

  // Different hyperparameters change the factor (the rebuild really uses them) and a reset back
  // restores it exactly.
  GpHyperparameters other = p.hp;
  other.lengthscales *= 1.5;
  other.noise_variances = {2e-2, 3e-2};
  gp.reset(other, {0.0, 1.0});
  EXPECT_GT((gp.cholesky_factor() - L).cwiseAbs().maxCoeff(), 1e-3);
  Problem q = p;
  q.hp = other;
  q.standardization = {0.0, 1.0};
  const Batch batch(q, q.observations.size());
  expect_close(gp.predict(x).mean, batch.predict(x).mean, 1e-10, "mean after reset");
  expect_close(gp.predict(x).variance, batch.predict(x).variance, 1e-10, "variance after reset");
  gp.reset(p.hp, p.standardization);
  EXPECT_EQ(gp.cholesky_factor(), L);
  EXPECT_EQ(gp.whitened_targets(), a);
}

TEST_P(GpKernels, EmptyModelPredictsThePrior) {
  const Problem p = make_problem(GetParam(), 33, 0);
  const GaussianProcess gp(p.dim, p.hp, p.standardization);
  const Eigen::VectorXd x = Eigen::VectorXd::Constant(3, 0.2);
  EXPECT_EQ(gp.predict(x).mean, p.standardization.mean);
  EXPECT_DOUBLE_EQ(gp.predict(x).variance,
                   p.hp.outputscale * p.standardization.scale * p.standardization.scale);
}

INSTANTIATE_TEST_SUITE_P(GaussianProcess, GpKernels,
                         ::testing::Values(KernelType::squared_exponential, KernelType::matern52),
                         [](const ::testing::TestParamInfo<KernelType>& param_info) {
                           return std::string(tune::to_string(param_info.param));
                         });

TEST(GaussianProcess, InvalidInputsThrowAndLeaveTheModelUnchanged) {
  const Problem p = make_problem(KernelType::matern52, 34, 10);
  GaussianProcess gp = grow_one_by_one(p, 10);
  const Eigen::MatrixXd L = gp.cholesky_factor();

  // Wrong dimension.
  EXPECT_THROW(gp.add(Observation{PointQuery{Eigen::VectorXd::Constant(2, 0.5)}, 1.0, 0}), std::invalid_argument);
  EXPECT_THROW(gp.add(Observation{PointQuery{Eigen::VectorXd::Constant(4, 0.5)}, 1.0, 0}), std::invalid_argument);
  // Non-finite values.
  EXPECT_THROW(gp.add(Observation{PointQuery{Eigen::VectorXd::Constant(3, 0.5)},
                                  std::numeric_limits<double>::quiet_NaN(), 0}),
               std::invalid_argument);
  EXPECT_THROW(gp.add(Observation{PointQuery{Eigen::VectorXd::Constant(3, 0.5)},
                                  std::numeric_limits<double>::infinity(), 0}),
               std::invalid_argument);
  // A noise group without a noise variance (two groups: 0 and 1).
  EXPECT_THROW(gp.add(Observation{PointQuery{Eigen::VectorXd::Constant(3, 0.5)}, 1.0, 2}), std::out_of_range);
  EXPECT_THROW((void)gp.noise_variance(2), std::out_of_range);

  EXPECT_EQ(gp.size(), 10u);
  EXPECT_EQ(gp.observations().size(), 10u);
  EXPECT_EQ(gp.cholesky_factor(), L);

  // Bad hyperparameters and standardisations.
  GpHyperparameters bad = p.hp;
  bad.lengthscales = Eigen::VectorXd::Constant(2, 0.3);
  EXPECT_THROW(GaussianProcess(3, bad), std::invalid_argument);
  bad = p.hp;
  bad.noise_variances = {};
  EXPECT_THROW(GaussianProcess(3, bad), std::invalid_argument);
  bad.noise_variances = {1e-2, 0.0};
  EXPECT_THROW(GaussianProcess(3, bad), std::invalid_argument);
  EXPECT_THROW(GaussianProcess(3, p.hp, Standardization{0.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(GaussianProcess(3, p.hp, Standardization{std::numeric_limits<double>::infinity(), 1.0}),
               std::invalid_argument);
  EXPECT_THROW(gp.reset(bad, p.standardization), std::invalid_argument);
  EXPECT_EQ(gp.cholesky_factor(), L);
}

// Regression: add(vector) with an invalid element after valid ones used to append the valid prefix
// to L and observations_ and throw before update_weights(), leaving weights_ one short (predict()
// then read out of bounds). The model must stay consistent: unchanged, or the prefix fully added.
TEST(GaussianProcess, AddVectorWithInvalidElementLeavesConsistentModel) {
  const Problem p = make_problem(KernelType::matern52, 35, 6);
  GaussianProcess gp = grow_one_by_one(p, 5);
  std::vector<Observation> chunk{p.observations[5],
                                 Observation{PointQuery{Eigen::VectorXd::Constant(3, 0.5)}, 1.0, 7}};
  EXPECT_THROW(gp.add(chunk), std::out_of_range);
  const Problem prefix = p;
  const std::size_t n = gp.size();
  ASSERT_TRUE(n == 5 || n == 6);
  const Batch batch(prefix, n);
  const Eigen::VectorXd x = Eigen::VectorXd::Constant(3, 0.3);
  expect_close(gp.predict(x).mean, batch.predict(x).mean, 1e-10, "mean after a failed add");
}

// Regression: reset() with fewer noise groups than the stored observations use used to index
// hp_.noise_variances out of range while replaying them. It must throw and leave the model alone.
TEST(GaussianProcess, ResetWithTooFewNoiseGroupsThrows) {
  const Problem p = make_problem(KernelType::matern52, 36, 10);
  GaussianProcess gp = grow_one_by_one(p, 10);
  const Eigen::MatrixXd L = gp.cholesky_factor();
  GpHyperparameters one_group = p.hp;
  one_group.noise_variances = {1e-2};
  EXPECT_THROW(gp.reset(one_group, p.standardization), std::out_of_range);
  EXPECT_EQ(gp.cholesky_factor(), L);
}

}  // namespace

namespace tracked_points_test {

// The tracked posterior (rows of L^{-1} K(D, X) grown per observation) equals batch predictions,
// and does not depend on whether track() came before or after the observations.
TEST(GaussianProcessTracking, TrackedPosteriorEqualsBatchPredictionAndIsOrderIndependent) {
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::size_t dim = 3;
  tune::GpHyperparameters hp{tune::KernelType::matern52, Eigen::Vector3d(0.3, 0.5, 0.8), 1.3, {0.01}};
  Eigen::MatrixXd X(3, 50);
  for (Eigen::Index j = 0; j < X.cols(); ++j)
    for (Eigen::Index i = 0; i < 3; ++i) X(i, j) = u(rng);
  std::vector<tune::Observation> obs;
  for (int k = 0; k < 30; ++k) {
    Eigen::VectorXd x(3);
    for (Eigen::Index i = 0; i < 3; ++i) x(i) = u(rng);
    obs.push_back({tune::PointQuery{x}, std::sin(6 * x(0)) + x(1), 0});
  }
  tune::GaussianProcess before(dim, hp, {0.2, 1.7});
  before.track(X);
  for (const auto& o : obs) before.add(o);  // rows appended one at a time
  tune::GaussianProcess after(dim, hp, {0.2, 1.7});
  after.add(obs);
  after.track(X);  // rows built at once

  Eigen::VectorXd m1, v1, m2, v2, mb, vb;
  before.tracked_prediction(m1, v1);
  after.tracked_prediction(m2, v2);
  after.predict(X, mb, vb);
  EXPECT_EQ(m1, m2);
  EXPECT_EQ(v1, v2);
  EXPECT_LT((m1 - mb).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((v1 - vb).cwiseAbs().maxCoeff(), 1e-10);

  // Truncation (fantasies dropped) and reset (new hyperparameters) keep it consistent.
  before.truncate(12);
  before.tracked_prediction(m1, v1);
  before.predict(X, mb, vb);
  EXPECT_LT((m1 - mb).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((v1 - vb).cwiseAbs().maxCoeff(), 1e-10);
  hp.lengthscales *= 2.0;
  before.reset(hp, {0.0, 1.0});
  before.tracked_prediction(m1, v1);
  before.predict(X, mb, vb);
  EXPECT_LT((m1 - mb).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((v1 - vb).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_THROW(before.track(Eigen::MatrixXd::Zero(2, 4)), std::invalid_argument);
}

// predict_tracked_and(Y) is predict() at [tracked points, Y] in that order, with pending-trial
// fantasies added and truncated as a strategy's ask does.
TEST(GaussianProcessTracking, PredictTrackedAndEqualsAPredictionOfBothSetsInOrder) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const auto points = [&](Eigen::Index m) {
    Eigen::MatrixXd P(2, m);
    for (Eigen::Index j = 0; j < m; ++j) P.col(j) = Eigen::Vector2d(u(rng), u(rng));
    return P;
  };
  tune::GpHyperparameters hp{tune::KernelType::squared_exponential, Eigen::Vector2d(0.2, 0.4), 0.8, {1e-4}};
  tune::GaussianProcess gp(2, hp, {0.5, 2.0});
  const Eigen::MatrixXd X = points(40), Y = points(7);
  gp.track(X);
  for (Eigen::Index j = 0; j < 25; ++j) {
    const Eigen::Vector2d x(u(rng), u(rng));
    gp.add({tune::PointQuery{x}, std::cos(5 * x(0)) * x(1), 0});
  }
  Eigen::MatrixXd both(2, X.cols() + Y.cols());
  both << X, Y;
  for (int fantasies : {0, 3}) {
    const tune::TruncateOnExit drop(gp);
    for (int k = 0; k < fantasies; ++k) gp.add({tune::PointQuery{Eigen::Vector2d(u(rng), u(rng))}, 0.1 * k, 0});
    Eigen::VectorXd mean, variance, ref_mean, ref_variance;
    gp.predict_tracked_and(Y, mean, variance);
    gp.predict(both, ref_mean, ref_variance);
    ASSERT_EQ(mean.size(), both.cols());
    ASSERT_EQ(variance.size(), both.cols());
    EXPECT_LT((mean - ref_mean).cwiseAbs().maxCoeff(), 1e-10) << fantasies;
    EXPECT_LT((variance - ref_variance).cwiseAbs().maxCoeff(), 1e-10) << fantasies;
    EXPECT_GT(ref_variance.tail(Y.cols()).minCoeff(), 1e-6);  // Y is away from the data: the test can tell
  }
}

}  // namespace tracked_points_test

namespace {

// The offset groups checked against a model that carries the offsets explicitly: the latent vector
// (f at the points, b_0, b_1, discrepancies, trend slopes w_0, w_1) is Gaussian with a
// block-diagonal prior, each observation reads one point value plus (maybe) its group's offset,
// discrepancy and trend w_g . (x - 1/2), and the posterior is the batch Gaussian conditioning
// formula. With lengthscale factors (the parameter), group g's discrepancy has kernel r_g k_g, k_g
// being k with lengthscales m_g times as long; without, k_g = k.
class GaussianProcessOffsetsExplicit : public ::testing::TestWithParam<bool> {};

TEST_P(GaussianProcessOffsetsExplicit, PosteriorEqualsExplicitOffsetModel) {
  std::mt19937_64 rng(11);
  const Eigen::Index d = 2;
  GpHyperparameters hp;
  hp.kernel = KernelType::squared_exponential;
  hp.lengthscales = Eigen::Vector2d(0.3, 0.5);
  hp.outputscale = 1.3;
  hp.noise_variances = {0.02, 0.1, 0.3};
  hp.offset_variance = 2.5;
  hp.discrepancy_ratios = {0.4, 1.5};
  hp.group_scales = {0.7, 1.3};  // group g reads rho_g f
  hp.trend_variances = {0.8, 2.0};
  if (GetParam()) hp.discrepancy_lengthscale_factors = {2.5, 0.6};
  const Standardization standardization{0.0, 1.0};
  GaussianProcess gp(2, hp, standardization);
  const int n = 12;
  std::vector<Observation> observations;
  for (int i = 0; i < n; ++i) {
    Observation o{PointQuery{random_point(rng, d)}, uniform(rng, -1.0, 1.0), static_cast<std::size_t>(i % 3)};
    if (i % 3 > 0) o.offset_group = static_cast<std::size_t>(i % 3 - 1);  // group 0 (top level) has no offset
    observations.push_back(o);
  }
  gp.add(observations);
  const Eigen::VectorXd x_test = random_point(rng, d);

  // Latent u = (f(x_1) .. f(x_n), f(x_test), b_0, b_1, d_1 .. d_n, d_test0, d_test1); observation i
  // reads H_i u: f at its point (times its group's scale), its group's offset and its group's discrepancy d (a GP with kernel
  // r_g k, independent across groups) at its point.
  const tune::Kernel k = hp.make_kernel();
  std::vector<tune::Kernel> kg;  // each group's discrepancy kernel, built here from its definition
  for (std::size_t g = 0; g < 2; ++g)
    kg.emplace_back(hp.kernel, hp.lengthscales * (GetParam() ? hp.discrepancy_lengthscale_factors[g] : 1.0), hp.outputscale);
  std::vector<Eigen::VectorXd> pts;
  for (const Observation& o : observations) pts.push_back(std::get<PointQuery>(o.query).x);
  pts.push_back(x_test);
  const Eigen::Index dis = n + 3;           // first discrepancy entry
  const Eigen::Index slope = dis + n + 2;   // w_0 (d entries), then w_1
  const Eigen::Index m = slope + 2 * d;
  Eigen::MatrixXd P = Eigen::MatrixXd::Zero(m, m);
  for (int i = 0; i <= n; ++i)
    for (int j = 0; j <= n; ++j) P(i, j) = k(pts[static_cast<std::size_t>(i)], pts[static_cast<std::size_t>(j)]);
  P(n + 1, n + 1) = P(n + 2, n + 2) = hp.offset_variance;
  // Discrepancy entries: d_i for observation i (in its group, if any), then d at x_test for groups 0, 1.
  std::vector<std::pair<int, int>> dis_point_group;  // (point index into pts, group) per entry
  for (int i = 0; i < n; ++i)
    dis_point_group.push_back({i, observations[static_cast<std::size_t>(i)].offset_group
                                      ? static_cast<int>(*observations[static_cast<std::size_t>(i)].offset_group) : -1});
  dis_point_group.push_back({n, 0});
  dis_point_group.push_back({n, 1});
  for (std::size_t a = 0; a < dis_point_group.size(); ++a)
    for (std::size_t b = 0; b < dis_point_group.size(); ++b) {
      const auto [pa, ga] = dis_point_group[a];
      const auto [pb, gb] = dis_point_group[b];
      if (ga < 0 || ga != gb) continue;
      P(dis + static_cast<Eigen::Index>(a), dis + static_cast<Eigen::Index>(b)) =
          hp.discrepancy_ratios[static_cast<std::size_t>(ga)] *
          kg[static_cast<std::size_t>(ga)](pts[static_cast<std::size_t>(pa)], pts[static_cast<std::size_t>(pb)]);
    }
  for (Eigen::Index g = 0; g < 2; ++g)
    for (Eigen::Index c = 0; c < d; ++c) P(slope + g * d + c, slope + g * d + c) = hp.trend_variances[static_cast<std::size_t>(g)];
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(n, m);
  Eigen::VectorXd y(n), noise(n);
  for (int i = 0; i < n; ++i) {
    const Observation& o = observations[static_cast<std::size_t>(i)];
    H(i, i) = o.offset_group ? hp.group_scales[*o.offset_group] : 1.0;
    if (o.offset_group) {
      H(i, n + 1 + static_cast<Eigen::Index>(*o.offset_group)) = 1.0;
      H(i, dis + i) = 1.0;
      H.block(i, slope + static_cast<Eigen::Index>(*o.offset_group) * d, 1, d) =
          (pts[static_cast<std::size_t>(i)].array() - 0.5).matrix().transpose();
    }
    y(i) = o.value;
    noise(i) = hp.noise_variances[o.noise_group];
  }
  const Eigen::MatrixXd S = H * P * H.transpose() + Eigen::MatrixXd(noise.asDiagonal());
  const Eigen::LLT<Eigen::MatrixXd> llt(S);
  const Eigen::VectorXd mean = P * H.transpose() * llt.solve(y);
  const Eigen::MatrixXd cov = P - P * H.transpose() * llt.solve(H * P);

  const tune::Prediction at_test = gp.predict(x_test);
  EXPECT_NEAR(at_test.mean, mean(n), 1e-10);
  EXPECT_NEAR(at_test.variance, cov(n, n), 1e-10);
  // A new observation at x_test in offset group 1 has value rho_1 f(x_test) + b_1 + d_1(x_test).
  Observation target{PointQuery{x_test}, 0.0, 2};
  target.offset_group = 1;
  Eigen::VectorXd h = Eigen::VectorXd::Zero(m);
  h(n) = hp.group_scales[1];
  h(n + 2) = 1.0;
  h(dis + n + 1) = 1.0;  // group 1's discrepancy at x_test
  h.segment(slope + d, d) = x_test.array() - 0.5;  // group 1's trend at x_test
  const tune::Prediction g = gp.predict(target);
  EXPECT_NEAR(g.mean, h.dot(mean), 1e-10);
  EXPECT_NEAR(g.variance, h.dot(cov * h), 1e-10);
  // The joint posterior of f(x_test) and that observation: the batch formula's 2 x 2 block.
  Eigen::VectorXd e = Eigen::VectorXd::Zero(m);
  e(n) = 1.0;
  Eigen::Vector2d pair_mean;
  Eigen::Matrix2d pair_cov;
  gp.predict_pair(Observation{PointQuery{x_test}, 0.0, 0}, target, pair_mean, pair_cov);
  EXPECT_NEAR(pair_mean(0), mean(n), 1e-10);
  EXPECT_NEAR(pair_mean(1), h.dot(mean), 1e-10);
  EXPECT_NEAR(pair_cov(0, 0), cov(n, n), 1e-10);
  EXPECT_NEAR(pair_cov(1, 1), h.dot(cov * h), 1e-10);
  EXPECT_NEAR(pair_cov(0, 1), e.dot(cov * h), 1e-10);
  EXPECT_NEAR(pair_cov(1, 0), e.dot(cov * h), 1e-10);
  // Without an offset group, predict(Observation) of a point is predict(x).
  const tune::Prediction plain = gp.predict(Observation{PointQuery{x_test}, 0.0, 0});
  EXPECT_NEAR(plain.mean, at_test.mean, 1e-14);
  EXPECT_NEAR(plain.variance, at_test.variance, 1e-14);
}

INSTANTIATE_TEST_SUITE_P(GaussianProcessOffsets, GaussianProcessOffsetsExplicit, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "discrepancy_lengthscale_factors" : "shared_lengthscales";
                         });

// A model with two offset groups (scales, discrepancies) and a mix of point and box observations.
GpHyperparameters offset_hyperparameters() {
  GpHyperparameters hp;
  hp.kernel = KernelType::squared_exponential;
  hp.lengthscales = Eigen::Vector2d(0.35, 0.3);
  hp.noise_variances = {0.01, 0.05, 0.1};
  hp.offset_variance = 1.2;
  hp.discrepancy_ratios = {0.3, 0.8};
  hp.group_scales = {0.8, 1.2};
  return hp;
}

Observation random_observation(std::mt19937_64& rng, int i) {
  const Eigen::VectorXd x = random_point(rng, 2);
  Observation o{PointQuery{x}, uniform(rng, -1.0, 1.0), static_cast<std::size_t>(i % 3)};
  if (i % 5 == 4) o.query = tune::BoxQuery{x * 0.5, x * 0.5 + Eigen::Vector2d::Constant(0.2)};
  if (i % 3 > 0) o.offset_group = static_cast<std::size_t>(i % 3 - 1);
  return o;
}

namespace tracked_targets_test {

// The targets a cmets ask scores: f at a point and observations of each level there.
std::vector<Observation> targets_at(std::mt19937_64& rng, int count) {
  std::vector<Observation> out;
  for (int j = 0; j < count; ++j) {
    Observation t = random_observation(rng, j);
    t.value = 0.0;
    out.push_back(t);
  }
  return out;
}

void expect_pairs_as_solved(const GaussianProcess& gp, const std::vector<Observation>& targets,
                            const std::vector<std::size_t>& slots) {
  for (std::size_t j = 0; j + 1 < targets.size(); ++j) {
    Eigen::Vector2d mean;
    Eigen::Matrix2d cov;
    gp.predict_pair(targets[j], targets[j + 1], mean, cov);
    const tune::PairPrediction p = gp.predict_tracked_pair(slots[j], slots[j + 1]);
    EXPECT_LT((p.mean - mean).cwiseAbs().maxCoeff(), 1e-10) << j;
    EXPECT_LT((p.covariance - cov).cwiseAbs().maxCoeff(), 1e-10) << j;
  }
}

// The tracked columns follow adds, fantasies truncated away and a reset with new hyperparameters,
// and predict as the solve does.
TEST(GaussianProcessTrackedTargets, PairsEqualTheSolveThroughAddsTruncationAndReset) {
  std::mt19937_64 rng(41);
  GaussianProcess gp(2, offset_hyperparameters(), Standardization{0.3, 1.4});
  const std::vector<Observation> targets = targets_at(rng, 12);
  std::vector<std::size_t> slots;
  for (std::size_t j = 0; j < 6; ++j) slots.push_back(gp.track_target(targets[j]));  // before any data
  for (int i = 0; i < 25; ++i) gp.add(random_observation(rng, i));
  for (std::size_t j = 6; j < targets.size(); ++j) slots.push_back(gp.track_target(targets[j]));  // after
  expect_pairs_as_solved(gp, targets, slots);
  {
    const tune::TruncateOnExit fantasies(gp);
    for (int i = 0; i < 4; ++i) gp.add(random_observation(rng, i));
    expect_pairs_as_solved(gp, targets, slots);
  }
  for (int i = 0; i < 5; ++i) gp.add(random_observation(rng, i));
  expect_pairs_as_solved(gp, targets, slots);
  GpHyperparameters refitted = offset_hyperparameters();
  refitted.lengthscales = Eigen::Vector2d(0.2, 0.5);
  refitted.group_scales = {0.5, 1.6};
  gp.reset(refitted, Standardization{-0.1, 0.9});
  expect_pairs_as_solved(gp, targets, slots);
  // A freed slot is reused and holds the new target's column, not the old one's.
  gp.untrack_target(slots[3]);
  EXPECT_EQ(gp.tracked_target_count(), targets.size() - 1);
  Observation replacement = targets_at(rng, 1).front();
  EXPECT_EQ(gp.track_target(replacement), slots[3]);
  std::vector<Observation> now = targets;
  now[3] = replacement;
  expect_pairs_as_solved(gp, now, slots);
  EXPECT_THROW(gp.untrack_target(99), std::out_of_range);
  EXPECT_THROW(gp.predict_tracked_pair(99, 0), std::out_of_range);
  EXPECT_THROW(gp.track_target(Observation{PointQuery{Eigen::VectorXd::Zero(3)}, 0.0, 0}), std::invalid_argument);
}

// A resumed model adds every observation first and tracks afterwards, in one batch and other slots;
// the original tracked one target at a time, early and late, saw fantasies come and go, and reused
// slots. Both predict exactly the same.
TEST(GaussianProcessTrackedTargets, ColumnsDoNotDependOnWhenOrWhereTheyWereTracked) {
  std::mt19937_64 rng(43);
  std::vector<Observation> data;
  for (int i = 0; i < 37; ++i) data.push_back(random_observation(rng, i));
  const std::vector<Observation> targets = targets_at(rng, 40);  // more than one block of 32

  GaussianProcess original(2, offset_hyperparameters(), Standardization{0.2, 1.1});
  std::vector<std::size_t> at_original(targets.size());
  const std::size_t scratch = original.track_target(targets[0]);
  for (std::size_t j = 0; j < 5; ++j) at_original[j] = original.track_target(targets[j]);
  for (int i = 0; i < 20; ++i) {
    original.add(data[static_cast<std::size_t>(i)]);
    if (i == 7) {
      const tune::TruncateOnExit fantasies(original);
      original.add(random_observation(rng, 1));
      original.add(random_observation(rng, 2));
    }
  }
  original.untrack_target(scratch);
  for (std::size_t j = 5; j < targets.size(); ++j) at_original[j] = original.track_target(targets[j]);
  for (std::size_t i = 20; i < data.size(); ++i) original.add(data[i]);

  GaussianProcess resumed(2, offset_hyperparameters(), Standardization{0.2, 1.1});
  resumed.add(data);
  std::vector<std::size_t> at_resumed(targets.size());
  const std::vector<std::size_t> batch = resumed.track_targets(std::vector<Observation>(targets.rbegin(), targets.rend()));
  for (std::size_t j = 0; j < targets.size(); ++j) at_resumed[j] = batch[targets.size() - 1 - j];

  for (std::size_t a = 0; a < targets.size(); ++a)
    for (std::size_t b = 0; b < targets.size(); ++b) {
      const tune::PairPrediction p = original.predict_tracked_pair(at_original[a], at_original[b]);
      const tune::PairPrediction q = resumed.predict_tracked_pair(at_resumed[a], at_resumed[b]);
      EXPECT_EQ(p.mean, q.mean) << a << ", " << b;
      EXPECT_EQ(p.covariance, q.covariance) << a << ", " << b;
    }
}

}  // namespace tracked_targets_test

// As the offset prior widens, a constant added to every value of an offset group stops moving the
// posterior of f (the offset absorbs it); with a narrow prior it does move it. The error shrinks
// like 1 / offset_variance.
TEST(GaussianProcessOffsets, ConstantShiftOfAGroupIsAbsorbedByAWideOffsetPrior) {
  const auto build = [&](double offset_variance, double shift) {
    std::mt19937_64 r(17);
    GpHyperparameters hp;
    hp.kernel = KernelType::matern52;
    hp.lengthscales = Eigen::VectorXd::Constant(1, 0.25);
    hp.noise_variances = {1e-3, 1e-2};
    hp.offset_variance = offset_variance;
    GaussianProcess gp(1, hp, Standardization{0.0, 1.0});
    for (int i = 0; i < 20; ++i) {
      const bool low = i % 2 == 1;
      Eigen::VectorXd x = random_point(r, 1);
      const double f = std::sin(6.0 * x(0));
      Observation o{PointQuery{x}, low ? 0.8 * f + shift : f, low ? 1u : 0u};
      if (low) o.offset_group = 0;
      gp.add(o);
    }
    return gp;
  };
  const Eigen::VectorXd x = Eigen::VectorXd::Constant(1, 0.37);
  double previous_error = std::numeric_limits<double>::infinity();
  for (double v : {1.0, 1e2, 1e4}) {
    const double error = std::abs(build(v, 3.0).predict(x).mean - build(v, 0.0).predict(x).mean);
    EXPECT_LT(error, previous_error / 20.0) << "offset variance " << v;
    previous_error = error;
  }
  EXPECT_LT(previous_error, 1e-3);
  // Control: without the offset the shift does leak into f (here damped by the nearby top-level
  // points, but far above the wide-prior error).
  EXPECT_GT(std::abs(build(0.0, 3.0).predict(x).mean - build(0.0, 0.0).predict(x).mean), 100.0 * previous_error);
}

}  // namespace
