// CandidatePosterior: the incrementally maintained posterior over a finite candidate set equals the
// GaussianProcess posterior (same kernel and noise, no standardisation) at every candidate.
#include "tune/gp/candidate_posterior.hpp"

#include "tune/gp/gaussian_process.hpp"
#include "tune/random/rng.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

constexpr double kNoise = 1e-3;

MatrixXd random_candidates(tune::Rng& rng, Eigen::Index dim, Eigen::Index n, double width) {
  MatrixXd X(dim, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < dim; ++i) X(i, j) = width * tune::uniform01(rng);
  return X;
}

tune::GpHyperparameters hyperparameters(const tune::Kernel& k) {
  tune::GpHyperparameters hp;
  hp.kernel = k.type();
  hp.lengthscales = k.lengthscales();
  hp.outputscale = k.outputscale();
  hp.noise_variances = {kNoise};
  return hp;
}

double truth(const VectorXd& x) { return std::sin(2.0 * x(0)) + 0.5 * std::cos(x(1)); }

void expect_matches_gp(tune::KernelType type, double prior_mean) {
  tune::Rng rng = tune::make_rng(7, tune::RngStream::initial_design, static_cast<std::uint64_t>(type));
  const tune::Kernel k(type, VectorXd::Constant(2, 0.8), 1.3);
  const MatrixXd X = random_candidates(rng, 2, 150, 4.0);
  tune::CandidatePosterior post(k, kNoise, X, prior_mean);
  tune::GaussianProcess gp(2, hyperparameters(k), tune::Standardization{prior_mean, 1.0});

  for (int step = 0; step < 60; ++step) {
    // Mostly candidates (with repeats), sometimes an arbitrary point.
    VectorXd x;
    if (step % 5 == 4) {
      x = random_candidates(rng, 2, 1, 4.0).col(0);
    } else {
      const auto i = static_cast<std::size_t>(tune::uniform01(rng) * static_cast<double>(X.cols()));
      x = X.col(static_cast<Eigen::Index>(i));
    }
    const double y = truth(x) + 0.03 * (tune::uniform01(rng) - 0.5);
    if (step % 5 == 4) {
      post.add(x, y);
    } else {
      // Find the index again from the point so that both add paths see the same x.
      Eigen::Index i = 0;
      (X.colwise() - x).colwise().squaredNorm().minCoeff(&i);
      post.add(static_cast<std::size_t>(i), y);
    }
    gp.add(tune::Observation{tune::PointQuery{x}, y, 0});
  }
  ASSERT_EQ(post.size(), 60u);

  VectorXd mean, var;
  gp.predict(X, mean, var);
  for (Eigen::Index j = 0; j < X.cols(); ++j) {
    EXPECT_NEAR(post.mean()(j), mean(j), 1e-9) << "candidate " << j;
    EXPECT_NEAR(post.variance()(j), var(j), 1e-9) << "candidate " << j;
  }
  EXPECT_LT((post.cholesky_factor() - gp.cholesky_factor()).cwiseAbs().maxCoeff(), 1e-9);

  // Arbitrary points: O(M^2) query against the GP.
  for (int q = 0; q < 20; ++q) {
    const VectorXd x = random_candidates(rng, 2, 1, 4.0).col(0);
    const tune::Prediction p = post.predict(x);
    const tune::Prediction g = gp.predict(x);
    EXPECT_NEAR(p.mean, g.mean, 1e-9);
    EXPECT_NEAR(p.variance, g.variance, 1e-9);
    EXPECT_NEAR(post.posterior_variance_at(x), g.variance, 1e-9);
  }
}

TEST(CandidatePosterior, MatchesGaussianProcessAfter60AdditionsSquaredExponential) {
  expect_matches_gp(tune::KernelType::squared_exponential, 0.0);
}

TEST(CandidatePosterior, MatchesGaussianProcessAfter60AdditionsMatern) {
  expect_matches_gp(tune::KernelType::matern52, 0.0);
}

TEST(CandidatePosterior, MatchesGaussianProcessWithPriorMean) {
  expect_matches_gp(tune::KernelType::squared_exponential, 0.7);
}

TEST(CandidatePosterior, PriorBeforeAnyObservation) {
  const tune::Kernel k(tune::KernelType::squared_exponential, VectorXd::Constant(1, 1.0), 2.0);
  MatrixXd X(1, 3);
  X << 0.0, 1.0, 2.5;
  const tune::CandidatePosterior post(k, kNoise, X, -0.25);
  EXPECT_EQ(post.size(), 0u);
  for (Eigen::Index j = 0; j < 3; ++j) {
    EXPECT_EQ(post.mean()(j), -0.25);
    EXPECT_EQ(post.variance()(j), 2.0);
  }
  EXPECT_DOUBLE_EQ(post.posterior_variance_at(VectorXd::Constant(1, 7.0)), 2.0);
}

TEST(CandidatePosterior, FirstObservationFollowsTheClosedForm) {
  const double s2 = 0.05;
  const tune::Kernel k(tune::KernelType::squared_exponential, VectorXd::Constant(1, 1.0), 1.5);
  MatrixXd X(1, 4);
  X << 0.0, 0.5, 1.0, 3.0;
  tune::CandidatePosterior post(k, s2, X);
  const double y = 0.8;
  post.add(std::size_t{1}, y);
  const double kxx = k(X.col(1), X.col(1));
  // The observed point: k - k^2 / (k + s2); mean k y / (k + s2).
  EXPECT_NEAR(post.variance()(1), kxx - kxx * kxx / (kxx + s2), 1e-14);
  EXPECT_NEAR(post.mean()(1), kxx * y / (kxx + s2), 1e-14);
  // Any other candidate: k(x,x) - k(x,x1)^2 / (k + s2).
  for (Eigen::Index j : {0, 2, 3}) {
    const double c = k(X.col(j), X.col(1));
    EXPECT_NEAR(post.variance()(j), k(X.col(j), X.col(j)) - c * c / (kxx + s2), 1e-14);
    EXPECT_NEAR(post.mean()(j), c * y / (kxx + s2), 1e-14);
  }
}

TEST(CandidatePosterior, AddingACandidateByIndexOrByPointIsTheSame) {
  const tune::Kernel k(tune::KernelType::matern52, VectorXd::Constant(1, 0.7), 1.0);
  MatrixXd X(1, 5);
  X << 0.0, 0.4, 1.1, 2.0, 2.2;
  tune::CandidatePosterior by_index(k, kNoise, X), by_point(k, kNoise, X);
  const std::size_t order[] = {2, 0, 2, 4};
  double y = 0.1;
  for (std::size_t i : order) {
    by_index.add(i, y);
    by_point.add(X.col(static_cast<Eigen::Index>(i)), y);
    y += 0.3;
  }
  EXPECT_LT((by_index.mean() - by_point.mean()).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((by_index.variance() - by_point.variance()).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(CandidatePosterior, VarianceNeverIncreasesAndStaysNonNegative) {
  const tune::Kernel k(tune::KernelType::squared_exponential, VectorXd::Constant(1, 1.0), 1.0);
  MatrixXd X(1, 11);
  for (Eigen::Index j = 0; j < 11; ++j) X(0, j) = 0.1 * static_cast<double>(j);
  tune::CandidatePosterior post(k, 1e-6, X);
  VectorXd previous = post.variance();
  for (int step = 0; step < 200; ++step) {
    post.add(static_cast<std::size_t>(step % 3), 0.0);
    EXPECT_TRUE((post.variance().array() <= previous.array() + 1e-15).all());
    EXPECT_TRUE((post.variance().array() >= 0.0).all());
    previous = post.variance();
  }
}

TEST(CandidatePosterior, RejectsBadInput) {
  const tune::Kernel k(tune::KernelType::squared_exponential, VectorXd::Constant(2, 1.0), 1.0);
  EXPECT_THROW(tune::CandidatePosterior(k, 0.0, MatrixXd::Zero(2, 3)), std::invalid_argument);
  EXPECT_THROW(tune::CandidatePosterior(k, kNoise, MatrixXd::Zero(1, 3)), std::invalid_argument);
  EXPECT_THROW(tune::CandidatePosterior(k, kNoise, MatrixXd::Zero(2, 0)), std::invalid_argument);
  tune::CandidatePosterior post(k, kNoise, MatrixXd::Zero(2, 3));
  EXPECT_THROW(post.add(std::size_t{3}, 1.0), std::out_of_range);
  EXPECT_THROW(post.add(std::size_t{0}, std::nan("")), std::invalid_argument);
  EXPECT_THROW(post.add(VectorXd::Zero(3), 1.0), std::invalid_argument);
}

}  // namespace
