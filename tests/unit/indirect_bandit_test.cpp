// The weighted-point-set query (tune::WeightedPointsQuery) through the indirect-query bandit of the
// IQBO paper (Sec. 3.1, digest-iqbo-cmets.md 1.3): K arms at fixed points with f ~ GP(0, k), so the
// arm values are N(0, Sigma0 = K(X, X)); an observation is z = p(a)^T f + eps with a known policy
// vector p(a). The GP's posterior is checked against the finite-dimensional Gaussian conditioning
// written out here with explicit matrices, the covariance functions against exact identities
// (one-hot weights are the point query, linearity), and the gradients against central finite
// differences.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/hyperparameter_fit.hpp"
#include "tune/gp/observation.hpp"
#include "tune/random/rng.hpp"

namespace {

using tune::BoxQuery;
using tune::GaussianProcess;
using tune::GaussianWindowQuery;
using tune::GpHyperparameters;
using tune::Kernel;
using tune::KernelType;
using tune::Observation;
using tune::PointQuery;
using tune::Query;
using tune::WeightedPointsQuery;

constexpr double kNoise = 0.05;

std::string name_of(const ::testing::TestParamInfo<KernelType>& info) { return tune::to_string(info.param); }

Eigen::VectorXd vec(std::initializer_list<double> v) {
  Eigen::VectorXd x(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double e : v) x(i++) = e;
  return x;
}

// Queries are built through these functions (copies from const references): constructing the
// variant straight from temporaries sets off GCC's false -Wmaybe-uninitialized in Eigen's storage.
Query point(const Eigen::VectorXd& x) { return PointQuery{x}; }
Query box(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) { return BoxQuery{lo, hi}; }
Query gauss(const Eigen::VectorXd& c, const Eigen::VectorXd& sd) { return GaussianWindowQuery{c, sd}; }
Query point_set(const Eigen::MatrixXd& points, const Eigen::VectorXd& weights) {
  return WeightedPointsQuery{points, weights};
}
Observation observe(const Query& q, double value, std::size_t group = 0) { return Observation{q, value, group}; }

// A random point of the simplex (normalised exponentials: uniform on the simplex).
Eigen::VectorXd random_policy(tune::Rng& rng, Eigen::Index k) {
  Eigen::VectorXd p(k);
  for (Eigen::Index i = 0; i < k; ++i) p(i) = -std::log(1.0 - tune::uniform01(rng));
  return p / p.sum();
}

struct Bandit {
  GpHyperparameters hp;
  Eigen::MatrixXd arms;      // 2 x K
  Eigen::MatrixXd policies;  // T x K, row t = p(a_t)
  Eigen::VectorXd z;         // T
};

Bandit make_bandit(KernelType type, Eigen::Index arms, Eigen::Index rounds) {
  tune::Rng rng(20240611);
  Bandit b;
  b.hp.kernel = type;
  b.hp.lengthscales = vec({0.35, 0.5});
  b.hp.outputscale = 1.3;
  b.hp.noise_variances = {kNoise};
  b.arms.resize(2, arms);
  for (Eigen::Index i = 0; i < arms; ++i) b.arms.col(i) << tune::uniform01(rng), tune::uniform01(rng);
  b.policies.resize(rounds, arms);
  b.z.resize(rounds);
  for (Eigen::Index t = 0; t < rounds; ++t) {
    b.policies.row(t) = random_policy(rng, arms).transpose();
    b.z(t) = std::sin(3.0 * static_cast<double>(t)) + 0.2 * tune::standard_normal(rng);
  }
  return b;
}

GaussianProcess bandit_gp(const Bandit& b) {
  GaussianProcess gp(2, b.hp, {0.0, 1.0});
  for (Eigen::Index t = 0; t < b.z.size(); ++t)
    gp.add(observe(point_set(b.arms, b.policies.row(t).transpose()), b.z(t)));
  return gp;
}

// The exact posterior of the arm values by the batch formula, explicit inverse and all.
struct ArmPosterior {
  Eigen::VectorXd mu;
  Eigen::MatrixXd sigma;
};

ArmPosterior batch_posterior(const Bandit& b) {
  const Kernel k = b.hp.make_kernel();
  const Eigen::MatrixXd sigma0 = k.cross(b.arms, b.arms);
  const Eigen::MatrixXd& P = b.policies;
  const Eigen::Index T = P.rows();
  const Eigen::MatrixXd gain =
      sigma0 * P.transpose() * (P * sigma0 * P.transpose() + kNoise * Eigen::MatrixXd::Identity(T, T)).inverse();
  return {gain * b.z, sigma0 - gain * P * sigma0};
}

double rel_err(double got, double ref) { return std::abs(got - ref) / std::abs(ref); }

class IndirectBandit : public ::testing::TestWithParam<KernelType> {};

TEST_P(IndirectBandit, PosteriorOfArmsAndPoliciesIsExactGaussianConditioning) {
  const Bandit b = make_bandit(GetParam(), 6, 9);
  const GaussianProcess gp = bandit_gp(b);
  const ArmPosterior ref = batch_posterior(b);

  // f at the arms: one at a time, in a batch, and jointly.
  double worst = 0.0;
  Eigen::VectorXd mean, variance;
  gp.predict(b.arms, mean, variance);
  const Eigen::MatrixXd cov = gp.posterior_covariance(b.arms);
  for (Eigen::Index i = 0; i < b.arms.cols(); ++i) {
    const tune::Prediction p = gp.predict(Eigen::VectorXd(b.arms.col(i)));
    worst = std::max({worst, rel_err(p.mean, ref.mu(i)), rel_err(p.variance, ref.sigma(i, i)),
                      rel_err(mean(i), ref.mu(i)), rel_err(variance(i), ref.sigma(i, i))});
    for (Eigen::Index j = 0; j < b.arms.cols(); ++j) worst = std::max(worst, rel_err(cov(i, j), ref.sigma(i, j)));
  }
  EXPECT_LT(worst, 1e-10);

  // g at new policies: nu(a) = mu^T p(a), q(a, a) = p(a)^T Sigma p(a).
  tune::Rng rng(7);
  double worst_g = 0.0;
  for (int trial = 0; trial < 10; ++trial) {
    const Eigen::VectorXd p = random_policy(rng, b.arms.cols());
    const tune::Prediction g = gp.predict(observe(point_set(b.arms, p), 0.0));
    worst_g = std::max({worst_g, rel_err(g.mean, ref.mu.dot(p)), rel_err(g.variance, p.dot(ref.sigma * p))});
  }
  EXPECT_LT(worst_g, 1e-10);

  // The test can fail: dropping the last observation moves the posterior far beyond the tolerance.
  GaussianProcess fewer = gp;
  fewer.truncate(gp.size() - 1);
  EXPECT_GT(rel_err(fewer.predict(Eigen::VectorXd(b.arms.col(0))).variance, ref.sigma(0, 0)), 1e-3);
}

// The query zoo the point sets are checked against, in the arms' space [0,1]^2.
std::vector<Query> other_queries() {
  const Eigen::MatrixXd points = (Eigen::MatrixXd(2, 3) << 0.2, 0.7, 0.4, 0.9, 0.1, 0.5).finished();
  return {point(vec({0.3, 0.6})), box(vec({0.1, 0.2}), vec({0.5, 0.4})), gauss(vec({0.6, 0.3}), vec({0.1, 0.2})),
          point_set(points, vec({0.5, -0.2, 1.1}))};
}

TEST_P(IndirectBandit, OneHotWeightsAreThePointQueryBitForBit) {
  const Bandit b = make_bandit(GetParam(), 5, 0);
  const Kernel k = b.hp.make_kernel();
  const Eigen::Index j = 3;
  const Query one_hot = point_set(b.arms, Eigen::VectorXd::Unit(b.arms.cols(), j));
  const Query at_arm = point(b.arms.col(j));
  const Eigen::VectorXd x = vec({0.45, 0.8});
  Eigen::VectorXd g_set(3), g_point(3);
  for (const Query& other : other_queries()) {
    EXPECT_EQ(tune::covariance(k, one_hot, other), tune::covariance(k, at_arm, other));
    EXPECT_EQ(tune::covariance(k, other, one_hot), tune::covariance(k, other, at_arm));
    EXPECT_EQ(tune::covariance_with_log_gradient(k, one_hot, other, g_set),
              tune::covariance_with_log_gradient(k, at_arm, other, g_point));
    EXPECT_EQ(g_set, g_point);
    EXPECT_EQ(tune::covariance_with_log_gradient(k, other, one_hot, g_set),
              tune::covariance_with_log_gradient(k, other, at_arm, g_point));
    EXPECT_EQ(g_set, g_point);
  }
  EXPECT_EQ(tune::covariance(k, one_hot, one_hot), tune::covariance(k, at_arm, at_arm));
  EXPECT_EQ(tune::covariance(k, one_hot, x), tune::covariance(k, at_arm, x));
  EXPECT_EQ(tune::covariance_gradient_x(k, one_hot, x), tune::covariance_gradient_x(k, at_arm, x));

  // So a GP over one-hot observations is the GP over point observations, to the last bit.
  GaussianProcess with_sets(2, b.hp, {0.0, 1.0}), with_points(2, b.hp, {0.0, 1.0});
  for (Eigen::Index i = 0; i < b.arms.cols(); ++i) {
    const double z = std::cos(2.0 * static_cast<double>(i));
    with_sets.add(observe(point_set(b.arms, Eigen::VectorXd::Unit(b.arms.cols(), i)), z));
    with_points.add(observe(point(b.arms.col(i)), z));
  }
  EXPECT_EQ(with_sets.cholesky_factor(), with_points.cholesky_factor());
  EXPECT_EQ(with_sets.whitened_targets(), with_points.whitened_targets());
  const tune::Prediction ps = with_sets.predict(x), pp = with_points.predict(x);
  EXPECT_EQ(ps.mean, pp.mean);
  EXPECT_EQ(ps.variance, pp.variance);
}

TEST_P(IndirectBandit, CovarianceIsLinearInTheWeights) {
  const Bandit b = make_bandit(GetParam(), 5, 0);
  const Kernel k = b.hp.make_kernel();
  tune::Rng rng(3);
  // Signed weights that do not sum to 1: the query is any linear combination of point values.
  const Eigen::VectorXd p = random_policy(rng, 5) - 0.1 * Eigen::VectorXd::Ones(5);
  const Eigen::VectorXd r = 2.5 * random_policy(rng, 5);
  const Query qp = point_set(b.arms, p), qr = point_set(b.arms, r);
  const double ref = p.dot(k.cross(b.arms, b.arms) * r);
  EXPECT_NEAR(tune::covariance(k, qp, qr), ref, 1e-14 * std::abs(ref));
  EXPECT_DOUBLE_EQ(tune::covariance(k, qp, qr), tune::covariance(k, qr, qp));
  for (const Query& other : other_queries()) {
    double sum = 0.0, scale = 0.0;
    for (Eigen::Index i = 0; i < 5; ++i) {
      const double c = tune::covariance(k, point(b.arms.col(i)), other);
      sum += p(i) * c;
      scale += std::abs(p(i) * c);
    }
    EXPECT_NEAR(tune::covariance(k, qp, other), sum, 1e-14 * scale);
    EXPECT_NEAR(tune::covariance(k, other, qp), sum, 1e-14 * scale);
  }
  // A set of repeated points is one point with the summed weight.
  const Eigen::MatrixXd twice = (Eigen::MatrixXd(2, 2) << b.arms.col(0), b.arms.col(0)).finished();
  const Query split = point_set(twice, vec({0.25, 0.5}));
  const Query merged = point_set(b.arms.leftCols(1), vec({0.75}));
  EXPECT_NEAR(tune::covariance(k, split, qr), tune::covariance(k, merged, qr), 1e-15 * std::abs(ref));
}

// Kernel with parameters theta = (log l_1, log l_2, log outputscale).
Kernel with_log_params(KernelType type, const Eigen::VectorXd& theta) {
  return Kernel(type, theta.head(2).array().exp(), std::exp(theta(2)));
}

TEST_P(IndirectBandit, GradientsMatchFiniteDifferences) {
  const KernelType type = GetParam();
  const Bandit b = make_bandit(type, 4, 0);
  const Eigen::VectorXd theta = vec({std::log(0.35), std::log(0.5), std::log(1.3)});
  const Kernel k = with_log_params(type, theta);
  const Query set = point_set(b.arms, vec({0.1, 0.4, 0.3, 0.2}));
  std::vector<Query> queries = other_queries();
  queries.push_back(set);
  const double h = 1e-5;
  for (const Query& other : queries) {
    Eigen::VectorXd grad(3);
    const double value = tune::covariance_with_log_gradient(k, set, other, grad);
    // The fit and the GP must see the same covariance.
    EXPECT_EQ(value, tune::covariance(k, set, other));
    for (Eigen::Index i = 0; i < 3; ++i) {
      Eigen::VectorXd tp = theta, tm = theta;
      tp(i) += h;
      tm(i) -= h;
      const double fd = (tune::covariance(with_log_params(type, tp), set, other) -
                         tune::covariance(with_log_params(type, tm), set, other)) / (2 * h);
      EXPECT_NEAR(grad(i), fd, 1e-7 * std::max(1.0, std::abs(fd))) << "theta " << i;
    }
  }
  // With respect to the point x of Cov(L f, f(x)).
  const Eigen::VectorXd x = vec({0.55, 0.25});
  const Eigen::VectorXd gx = tune::covariance_gradient_x(k, set, x);
  for (Eigen::Index i = 0; i < 2; ++i) {
    const Eigen::VectorXd up = x + 1e-6 * Eigen::VectorXd::Unit(2, i), down = x - 1e-6 * Eigen::VectorXd::Unit(2, i);
    const double fd = (tune::covariance(k, set, up) - tune::covariance(k, set, down)) / 2e-6;
    EXPECT_NEAR(gx(i), fd, 1e-7 * std::max(1.0, std::abs(fd))) << "x " << i;
  }
}

TEST_P(IndirectBandit, MarginalLikelihoodGradientMatchesFiniteDifferences) {
  const KernelType type = GetParam();
  const Bandit b = make_bandit(type, 5, 7);
  std::vector<Observation> observations;
  for (Eigen::Index t = 0; t < b.z.size(); ++t)
    observations.push_back(observe(point_set(b.arms, b.policies.row(t).transpose()), b.z(t)));
  // A mix with the other kinds, in a second noise group.
  observations.push_back(observe(point(vec({0.2, 0.3})), 0.4, 1));
  observations.push_back(observe(box(vec({0.1, 0.5}), vec({0.4, 0.9})), -0.3, 1));
  GpHyperparameters hp = b.hp;
  hp.noise_variances = {kNoise, 0.02};
  const tune::Standardization standardization{0.0, 1.0};
  Eigen::VectorXd grad;
  const double value = tune::log_marginal_likelihood(observations, standardization, hp, &grad);
  ASSERT_EQ(grad.size(), 2 + 1 + 2);
  EXPECT_NEAR(value, tune::log_marginal_likelihood(observations, standardization, hp), 1e-12 * std::abs(value));
  const double h = 1e-5;
  for (Eigen::Index i = 0; i < grad.size(); ++i) {
    auto perturbed = [&](double step) {
      GpHyperparameters q = hp;
      if (i < 2)
        q.lengthscales(i) *= std::exp(step);
      else if (i == 2)
        q.outputscale *= std::exp(step);
      else
        q.noise_variances[static_cast<std::size_t>(i - 3)] *= std::exp(step);
      return tune::log_marginal_likelihood(observations, standardization, q);
    };
    const double fd = (perturbed(h) - perturbed(-h)) / (2 * h);
    EXPECT_NEAR(grad(i), fd, 1e-6 * std::max(1.0, std::abs(fd))) << "theta " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(WeightedPoints, IndirectBandit,
                         ::testing::Values(KernelType::squared_exponential, KernelType::matern52), name_of);

TEST(WeightedPointsQuery, ValidationAndLocation) {
  const Eigen::MatrixXd pts = (Eigen::MatrixXd(2, 3) << 0.0, 1.0, 0.5, 0.2, 0.4, 0.9).finished();
  const Eigen::VectorXd w = vec({1.0, 2.0, 1.0});
  EXPECT_NO_THROW(tune::validate_query(point_set(pts, w)));
  EXPECT_THROW(tune::validate_query(point_set(pts, vec({1.0, 2.0}))), std::invalid_argument);
  EXPECT_THROW(tune::validate_query(point_set(Eigen::MatrixXd(2, 0), Eigen::VectorXd(0))), std::invalid_argument);
  Eigen::MatrixXd bad = pts;
  bad(1, 2) = std::nan("");
  EXPECT_THROW(tune::validate_query(point_set(bad, w)), std::invalid_argument);
  EXPECT_THROW(tune::validate_query(point_set(pts, vec({1.0, std::numeric_limits<double>::infinity(), 1.0}))),
               std::invalid_argument);

  // Weighted mean; the plain mean when the weights cancel.
  EXPECT_TRUE(tune::location(point_set(pts, w)).isApprox(vec({0.625, 0.475}), 1e-15));
  EXPECT_TRUE(tune::location(point_set(pts, vec({1.0, -2.0, 1.0}))).isApprox(vec({0.5, 0.5}), 1e-15));

  // The GP rejects a set of the wrong dimension or a malformed one, and the covariance functions
  // reject sizes they would otherwise read past.
  GpHyperparameters hp;
  hp.lengthscales = vec({0.3, 0.3, 0.3});
  GaussianProcess gp(3, hp);
  const Eigen::MatrixXd pts3 = Eigen::MatrixXd::Constant(3, 2, 0.5);
  EXPECT_THROW(gp.add(observe(point_set(pts, w), 0.0)), std::invalid_argument);
  EXPECT_THROW(gp.add(observe(point_set(pts3, vec({1.0})), 0.0)), std::invalid_argument);
  EXPECT_EQ(gp.size(), 0u);
  const Kernel k = hp.make_kernel();
  const Eigen::VectorXd x3 = vec({0.1, 0.2, 0.3});
  EXPECT_THROW(tune::covariance(k, point_set(pts3, vec({1.0})), point(x3)), std::invalid_argument);
  EXPECT_THROW(tune::covariance(k, point_set(pts, w), x3), std::invalid_argument);
  EXPECT_THROW(tune::covariance_gradient_x(k, point_set(pts, w), x3), std::invalid_argument);
}

}  // namespace
