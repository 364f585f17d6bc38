// tune::Kernel (squared exponential, Matern-5/2) and covariance_with_log_gradient against closed
// forms and central finite differences written here.
#include "tune/gp/kernel.hpp"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "tune/gp/observation.hpp"
#include "tune/random/rng.hpp"

namespace {

using tune::Kernel;
using tune::KernelType;

Eigen::VectorXd random_point(std::mt19937_64& rng, Eigen::Index d, double lo = 0.0, double hi = 1.0) {
  Eigen::VectorXd x(d);
  for (Eigen::Index i = 0; i < d; ++i) x(i) = lo + (hi - lo) * tune::uniform01(rng);
  return x;
}

// Closed forms, written from the textbook definitions with r the lengthscale-scaled distance.
double closed_form(KernelType type, const Eigen::VectorXd& a, const Eigen::VectorXd& b,
                   const Eigen::VectorXd& lengthscales, double outputscale) {
  double r2 = 0.0;
  for (Eigen::Index i = 0; i < a.size(); ++i) r2 += std::pow((a(i) - b(i)) / lengthscales(i), 2);
  const double r = std::sqrt(r2);
  if (type == KernelType::squared_exponential) return outputscale * std::exp(-r * r / 2.0);
  return outputscale * (1.0 + std::sqrt(5.0) * r + 5.0 * r * r / 3.0) * std::exp(-std::sqrt(5.0) * r);
}

class KernelTypes : public ::testing::TestWithParam<KernelType> {};

TEST_P(KernelTypes, KernelValuesMatchClosedForm) {
  const KernelType type = GetParam();
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const Eigen::Index d = 1 + static_cast<Eigen::Index>(trial % 4);
    const Eigen::VectorXd l = random_point(rng, d, 0.05, 2.0);
    const double s = 0.1 + 3.0 * tune::uniform01(rng);
    const Kernel k(type, l, s);
    const Eigen::VectorXd a = random_point(rng, d), b = random_point(rng, d);
    const double ref = closed_form(type, a, b, l, s);
    EXPECT_NEAR(k(a, b), ref, 1e-14 * s) << "trial " << trial;
    EXPECT_DOUBLE_EQ(k(a, b), k(b, a));
    // k(x, x) = outputscale exactly.
    EXPECT_EQ(k(a, a), s);
    EXPECT_EQ(k.outputscale(), s);
  }
}

TEST_P(KernelTypes, KnownValueAtUnitScaledDistance) {
  const KernelType type = GetParam();
  // Points at scaled distance exactly 1: lengthscales (0.5, 0.25), offset (0.3, 0.2):
  // (0.3/0.5)^2 + (0.2/0.25)^2 = 0.36 + 0.64 = 1.
  Eigen::VectorXd l(2);
  l << 0.5, 0.25;
  const double s = 1.7;
  const Kernel k(type, l, s);
  Eigen::VectorXd a(2), b(2);
  a << 0.1, 0.3;
  b << 0.4, 0.5;
  EXPECT_NEAR(k.scaled_sq_distance(a, b), 1.0, 1e-15);
  const double expected = type == KernelType::squared_exponential
                              ? s * std::exp(-0.5)                                                 // 1.03110...
                              : s * (1.0 + std::sqrt(5.0) + 5.0 / 3.0) * std::exp(-std::sqrt(5.0));  // 0.88237...
  EXPECT_NEAR(k(a, b), expected, 1e-14);
  EXPECT_NEAR(k.of_r2(1.0), expected, 1e-15);
  // Literal decimal values as a second, independent check of the constants.
  EXPECT_NEAR(k.of_r2(1.0) / s, type == KernelType::squared_exponential ? 0.6065306597126334 : 0.5239941088318203,
              1e-15);
}

TEST_P(KernelTypes, DerivativeInR2MatchesFiniteDifference) {
  const Kernel k(GetParam(), Eigen::VectorXd::Constant(1, 0.3), 1.3);
  for (double r2 : {1e-3, 0.1, 0.5, 1.0, 2.0, 5.0, 12.0}) {
    const double h = 1e-6 * std::max(1.0, r2);
    const double fd = (k.of_r2(r2 + h) - k.of_r2(r2 - h)) / (2.0 * h);
    EXPECT_NEAR(k.d_dr2(r2), fd, 1e-7 * std::max(1.0, std::abs(fd))) << "r2 = " << r2;
  }
}

TEST_P(KernelTypes, GradientXMatchesCentralFiniteDifferences) {
  const KernelType type = GetParam();
  std::mt19937_64 rng(12);
  const double h = 1e-6;
  for (int trial = 0; trial < 100; ++trial) {
    const Eigen::Index d = 1 + static_cast<Eigen::Index>(trial % 5);
    const Eigen::VectorXd l = random_point(rng, d, 0.1, 1.5);
    const double s = 0.2 + 2.0 * tune::uniform01(rng);
    const Kernel k(type, l, s);
    const Eigen::VectorXd x = random_point(rng, d), b = random_point(rng, d);
    const Eigen::VectorXd g = k.gradient_x(x, b);
    ASSERT_EQ(g.size(), d);
    for (Eigen::Index i = 0; i < d; ++i) {
      Eigen::VectorXd xp = x, xm = x;
      xp(i) += h;
      xm(i) -= h;
      const double fd = (k(xp, b) - k(xm, b)) / (2.0 * h);
      EXPECT_NEAR(g(i), fd, 1e-6 * std::max(s, std::abs(fd))) << "trial " << trial << " coordinate " << i;
    }
  }
  // At x = b the gradient is zero (both kernels are differentiable there).
  const Kernel k(type, Eigen::VectorXd::Constant(3, 0.4), 1.0);
  const Eigen::VectorXd x = Eigen::VectorXd::Constant(3, 0.5);
  EXPECT_LT(k.gradient_x(x, x).norm(), 1e-15);
}

TEST_P(KernelTypes, LogHyperparameterGradientMatchesFiniteDifferences) {
  const KernelType type = GetParam();
  std::mt19937_64 rng(13);
  const double h = 1e-6;
  for (int trial = 0; trial < 100; ++trial) {
    const Eigen::Index d = 1 + static_cast<Eigen::Index>(trial % 4);
    const Eigen::VectorXd l = random_point(rng, d, 0.1, 1.5);
    const double s = 0.2 + 2.0 * tune::uniform01(rng);
    const Kernel k(type, l, s);
    const tune::Query a = tune::PointQuery{random_point(rng, d)};
    const tune::Query b = tune::PointQuery{random_point(rng, d)};
    Eigen::VectorXd grad(d + 1);
    const double value = tune::covariance_with_log_gradient(k, a, b, grad);
    EXPECT_NEAR(value, closed_form(type, tune::location(a), tune::location(b), l, s), 1e-14 * s);
    // Same value as covariance() (the scaled distance is summed in another order: allow round-off).
    EXPECT_NEAR(value, tune::covariance(k, a, b), 4e-16 * s);
    // Log-lengthscales.
    for (Eigen::Index i = 0; i < d; ++i) {
      Eigen::VectorXd lp = l, lm = l;
      lp(i) *= std::exp(h);
      lm(i) *= std::exp(-h);
      const double fd = (tune::covariance(Kernel(type, lp, s), a, b) - tune::covariance(Kernel(type, lm, s), a, b)) /
                        (2.0 * h);
      EXPECT_NEAR(grad(i), fd, 1e-6 * std::max(s, std::abs(fd))) << "trial " << trial << " log l_" << i;
    }
    // Log-outputscale.
    const double fd = (tune::covariance(Kernel(type, l, s * std::exp(h)), a, b) -
                       tune::covariance(Kernel(type, l, s * std::exp(-h)), a, b)) /
                      (2.0 * h);
    EXPECT_NEAR(grad(d), fd, 1e-6 * std::max(s, std::abs(fd))) << "trial " << trial << " log s";
  }
}

TEST_P(KernelTypes, CrossEqualsPairwiseOperator) {
  std::mt19937_64 rng(14);
  const Eigen::Index d = 3;
  const Kernel k(GetParam(), random_point(rng, d, 0.1, 1.0), 1.4);
  Eigen::MatrixXd A(d, 17), B(d, 9);
  for (Eigen::Index j = 0; j < A.cols(); ++j) A.col(j) = random_point(rng, d);
  for (Eigen::Index j = 0; j < B.cols(); ++j) B.col(j) = random_point(rng, d);
  const Eigen::MatrixXd C = k.cross(A, B);
  ASSERT_EQ(C.rows(), A.cols());
  ASSERT_EQ(C.cols(), B.cols());
  for (Eigen::Index i = 0; i < A.cols(); ++i)
    for (Eigen::Index j = 0; j < B.cols(); ++j) EXPECT_EQ(C(i, j), k(A.col(i), B.col(j))) << i << "," << j;
}

TEST_P(KernelTypes, GramMatrixIsPositiveSemidefinite) {
  std::mt19937_64 rng(15);
  for (const double lengthscale : {0.05, 0.3, 2.0}) {
    const Eigen::Index d = 2, n = 50;
    const Kernel k(GetParam(), Eigen::VectorXd::Constant(d, lengthscale), 1.0);
    Eigen::MatrixXd X(d, n);
    for (Eigen::Index j = 0; j < n; ++j) X.col(j) = random_point(rng, d);
    const Eigen::MatrixXd K = k.cross(X, X);
    EXPECT_EQ((K - K.transpose()).cwiseAbs().maxCoeff(), 0.0);
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(K, Eigen::EigenvaluesOnly);
    ASSERT_EQ(eig.info(), Eigen::Success);
    EXPECT_GT(eig.eigenvalues().minCoeff(), -1e-10) << "lengthscale " << lengthscale;
    // Trace = n * outputscale.
    EXPECT_NEAR(eig.eigenvalues().sum(), static_cast<double>(n), 1e-9);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernel, KernelTypes,
                         ::testing::Values(KernelType::squared_exponential, KernelType::matern52),
                         [](const ::testing::TestParamInfo<KernelType>& param_info) {
                           return std::string(tune::to_string(param_info.param));
                         });

TEST(Kernel, RejectsInvalidHyperparameters) {
  EXPECT_THROW(Kernel(KernelType::matern52, Eigen::VectorXd(), 1.0), std::invalid_argument);
  EXPECT_THROW(Kernel(KernelType::matern52, Eigen::VectorXd::Constant(2, -0.1), 1.0), std::invalid_argument);
  EXPECT_THROW(Kernel(KernelType::matern52, Eigen::VectorXd::Constant(2, 0.1), 0.0), std::invalid_argument);
  EXPECT_THROW(Kernel(KernelType::matern52, Eigen::VectorXd::Constant(2, 0.1), std::nan("")),
               std::invalid_argument);
  EXPECT_THROW(tune::kernel_type_from_string("cubic"), std::invalid_argument);
  EXPECT_EQ(tune::kernel_type_from_string(tune::to_string(KernelType::squared_exponential)),
            KernelType::squared_exponential);
}

}  // namespace
