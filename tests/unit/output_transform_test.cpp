// Output transform (gp/output_transform.hpp): the map and its inverse, its log-Jacobian against a
// finite difference, the transformed likelihood against a direct Gaussian density with the change of
// variables written out, recovery of a known lambda on generated data, and a saved/loaded ei study
// with an active transform giving the same next suggestions.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <sstream>

#include "functions/test_functions.hpp"
#include "tune/gp/hyperparameter_fit.hpp"
#include "tune/gp/output_transform.hpp"
#include "tune/io/yaml_values.hpp"
#include "tune/random/rng.hpp"
#include "tune/tune.hpp"

namespace {

using tune::Observation;
using tune::OutputTransform;

OutputTransform make(double lambda, double shift) {
  return {.active = true, .reference = 3.0, .scale = 2.5, .shift = shift, .lambda = lambda};
}

TEST(OutputTransform, InactiveIsTheIdentity) {
  const OutputTransform t;
  for (double y : {-1e6, -1.0, 0.0, 2.5, 1e9}) {
    EXPECT_EQ(t(y), y);
    EXPECT_EQ(t.inverse(y), y);
    EXPECT_EQ(t.log_derivative(y), 0.0);
  }
}

TEST(OutputTransform, ClosedFormsAtLambdaZeroAndOne) {
  // lambda = 0: -log of the shifted gap; lambda = 1: 1 - shifted gap (affine).
  for (double y : {-40.0, -1.0, 0.5, 2.9, 3.0}) {
    const double d = (3.0 - y) / 2.5 + 0.01;
    EXPECT_NEAR(make(0.0, 0.01)(y), -std::log(d), 1e-12);
    EXPECT_NEAR(make(1.0, 0.01)(y), 1.0 - d, 1e-12);
    EXPECT_NEAR(make(0.5, 0.01)(y), -(std::sqrt(d) - 1.0) / 0.5, 1e-12);
  }
}

TEST(OutputTransform, InverseRoundTripsAndTheMapIsIncreasing) {
  for (double lambda : {0.0, 0.25, 0.5, 1.0, 1.5, 2.0})
    for (double shift : {1e-4, 1e-2, 1.0}) {
      const OutputTransform t = make(lambda, shift);
      double previous = -std::numeric_limits<double>::infinity();
      // Below the reference (the power branch) and above it (the linear continuation).
      for (double y : {-1e5, -300.0, -2.0, 0.0, 2.0, 2.999, 3.0, 3.001, 3.5, 10.0}) {
        const double z = t(y);
        EXPECT_GT(z, previous) << "lambda " << lambda << " shift " << shift << " y " << y;
        previous = z;
        EXPECT_NEAR(t.inverse(z), y, 1e-9 * std::max(1.0, std::abs(y))) << "lambda " << lambda << " y " << y;
      }
    }
}

TEST(OutputTransform, LogDerivativeMatchesAFiniteDifference) {
  for (double lambda : {0.0, 0.5, 1.5})
    for (double y : {-50.0, -1.0, 1.0, 2.9, 3.2, 6.0}) {
      const OutputTransform t = make(lambda, 0.05);
      const double h = 1e-6 * std::max(1.0, std::abs(y));
      const double slope = (t(y + h) - t(y - h)) / (2 * h);
      EXPECT_NEAR(t.log_derivative(y), std::log(slope), 1e-6) << "lambda " << lambda << " y " << y;
    }
}

std::vector<Observation> points(const Eigen::MatrixXd& X, const Eigen::VectorXd& y) {
  std::vector<Observation> obs;
  for (Eigen::Index i = 0; i < X.cols(); ++i) obs.push_back(Observation{tune::PointQuery{X.col(i)}, y(i), 0});
  return obs;
}

tune::GpHyperparameters hyperparameters_2d() {
  tune::GpHyperparameters hp;
  hp.kernel = tune::KernelType::matern52;
  hp.lengthscales = Eigen::Vector2d(0.3, 0.5);
  hp.outputscale = 1.3;
  hp.noise_variances = {1e-3};
  return hp;
}

TEST(OutputTransform, LikelihoodIsTheDensityOfTheRawValues) {
  // Direct: z_i = T(y_i), standardised by the sample mean and sd; log N(z_std; 0, K + noise I) plus
  // sum log T'(y_i) minus n log sd.
  tune::Rng rng(7);
  const int n = 12;
  Eigen::MatrixXd X(2, n);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    X(0, i) = tune::uniform01(rng);
    X(1, i) = tune::uniform01(rng);
    y(i) = -std::pow(10.0, 3.0 * X(0, i)) + X(1, i);
  }
  const tune::GpHyperparameters hp = hyperparameters_2d();
  const OutputTransform t{.active = true, .reference = y.maxCoeff(), .scale = 4.0, .shift = 0.01, .lambda = 0.25};
  Eigen::VectorXd z(n);
  double jacobian = 0.0;
  for (int i = 0; i < n; ++i) {
    z(i) = t(y(i));
    jacobian += t.log_derivative(y(i));
  }
  const double mean = z.mean();
  const double sd = std::sqrt((z.array() - mean).square().sum() / (n - 1));
  const Eigen::VectorXd zs = (z.array() - mean) / sd;
  const tune::Kernel k = hp.make_kernel();
  Eigen::MatrixXd K(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) K(i, j) = k(X.col(i), X.col(j)) + (i == j ? hp.noise_variances[0] : 0.0);
  const Eigen::LLT<Eigen::MatrixXd> llt(K);
  const double quad = zs.dot(llt.solve(zs));
  const double log_det = 2.0 * llt.matrixL().toDenseMatrix().diagonal().array().log().sum();
  const double direct = -0.5 * quad - 0.5 * log_det - 0.5 * n * std::log(2 * std::numbers::pi) + jacobian - n * std::log(sd);
  EXPECT_NEAR(tune::transformed_log_likelihood(points(X, y), t, hp), direct, 1e-9 * std::abs(direct));

  // An affine member (lambda = 1) leaves the standardised values unchanged, so it has exactly the
  // identity's density: the Jacobian and the standardisation cancel.
  const OutputTransform affine{.active = true, .reference = y.maxCoeff(), .scale = 4.0, .shift = 0.3, .lambda = 1.0};
  EXPECT_NEAR(tune::transformed_log_likelihood(points(X, y), affine, hp),
              tune::transformed_log_likelihood(points(X, y), OutputTransform{}, hp), 1e-8);
}

// Values y whose transform under a known member is a GP sample: z ~ GP(hp), then y = T^-1(z) with T
// anchored so that the largest z maps to the reference (as the fit anchors it).
std::vector<Observation> generated(double lambda, double shift, std::uint64_t seed, Eigen::MatrixXd& X) {
  tune::Rng rng(seed);
  const int n = 60;
  X.resize(2, n);
  for (int i = 0; i < n; ++i) {
    X(0, i) = tune::uniform01(rng);
    X(1, i) = tune::uniform01(rng);
  }
  const tune::GpHyperparameters hp = hyperparameters_2d();
  const tune::Kernel k = hp.make_kernel();
  Eigen::MatrixXd K(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) K(i, j) = k(X.col(i), X.col(j)) + (i == j ? hp.noise_variances[0] : 0.0);
  Eigen::VectorXd e(n);
  for (int i = 0; i < n; ++i) e(i) = tune::standard_normal(rng);
  Eigen::VectorXd z = Eigen::LLT<Eigen::MatrixXd>(K).matrixL() * e;
  const OutputTransform t{.active = true, .reference = 100.0, .scale = 7.0, .shift = shift, .lambda = lambda};
  z.array() += t(100.0) - z.maxCoeff();
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) y(i) = t.inverse(z(i));
  return points(X, y);
}

TEST(OutputTransform, FitRecoversAKnownLambda) {
  const tune::GpHyperparameters hp = hyperparameters_2d();
  for (std::uint64_t seed : {1, 2, 3}) {
    Eigen::MatrixXd X;
    // Log-gap data: the fit picks lambda = 0 (a grid point), not the identity.
    const OutputTransform log_fit = tune::fit_output_transform(generated(0.0, 0.05, seed, X), tune::OutputTransformKind::automatic, hp);
    EXPECT_TRUE(log_fit.active) << "seed " << seed;
    EXPECT_LE(log_fit.lambda, 0.25) << "seed " << seed;
    // Square-root data: lambda within a grid step of 0.5.
    const OutputTransform sqrt_fit = tune::fit_output_transform(generated(0.5, 0.05, seed, X), tune::OutputTransformKind::automatic, hp);
    EXPECT_TRUE(sqrt_fit.active) << "seed " << seed;
    EXPECT_NEAR(sqrt_fit.lambda, 0.5, 0.25 + 1e-12) << "seed " << seed;
    // GP values as they are: the identity (or an affine-like lambda near 1) wins.
    const OutputTransform plain = tune::fit_output_transform(generated(1.0, 1.0, seed, X), tune::OutputTransformKind::automatic, hp);
    if (plain.active) {
      EXPECT_NEAR(plain.lambda, 1.0, 0.5 + 1e-12) << "seed " << seed;
    }
  }
  Eigen::MatrixXd X;
  EXPECT_FALSE(tune::fit_output_transform(generated(0.0, 0.05, 1, X), tune::OutputTransformKind::none, hp).active);
  const OutputTransform forced = tune::fit_output_transform(generated(1.0, 1.0, 1, X), tune::OutputTransformKind::log, hp);
  EXPECT_TRUE(forced.active);
  EXPECT_EQ(forced.lambda, 0.0);
}

TEST(OutputTransform, FitIsInvariantToTheObjectivesSignOffsetAndScale) {
  // Rewards a y + b (a > 0, b far negative, as a minimised objective's negation would be) get the same
  // member and the same transformed values as y.
  const tune::GpHyperparameters hp = hyperparameters_2d();
  Eigen::MatrixXd X;
  const std::vector<Observation> y = generated(0.25, 0.3, 4, X);
  std::vector<Observation> moved = y;
  for (Observation& o : moved) o.value = 7.5 * o.value - 1e4;
  const OutputTransform a = tune::fit_output_transform(y, tune::OutputTransformKind::automatic, hp);
  const OutputTransform b = tune::fit_output_transform(moved, tune::OutputTransformKind::automatic, hp);
  ASSERT_TRUE(a.active);
  ASSERT_TRUE(b.active);
  EXPECT_EQ(a.lambda, b.lambda);
  EXPECT_EQ(a.shift, b.shift);
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(a(y[i].value), b(moved[i].value), 1e-9) << i;
}

TEST(OutputTransform, ResumedEiStudyMakesTheSameSuggestions) {
  // Rosenbrock-4's values span six decades: the fitted transform is active at the save.
  const auto fn = tune::testfn::by_name("rosenbrock4");
  std::vector<tune::Parameter> params;
  for (int j = 0; j < 4; ++j) params.push_back(tune::Parameter::floating("x" + std::to_string(j), 0.0, 1.0));
  const tune::Space space(params);
  const auto value = [&](const tune::Config& c) {
    Eigen::VectorXd u(4);
    for (int j = 0; j < 4; ++j) u(j) = std::get<double>(c.at("x" + std::to_string(j)));
    return fn.at_unit(u);
  };
  const auto strategy = [] {
    tune::GpBanditOptions o;
    o.optimizer.candidates = 256;
    return tune::make_gp_bandit(tune::AcquisitionType::ei, o);
  };
  tune::Study original(space, strategy(), {tune::Direction::minimize, 5});
  // 21 tells: the model was refreshed at 19 and is next due at 24, so the first asks after the load
  // use the saved transform rather than a freshly fitted one.
  for (int i = 0; i < 21; ++i) {
    const auto s = original.ask();
    ASSERT_TRUE(s);
    original.tell(s->id, value(s->config));
  }
  const auto& bandit = dynamic_cast<const tune::GpBandit&>(original.strategy());
  ASSERT_TRUE(bandit.output_transform().active);
  EXPECT_LT(bandit.output_transform().lambda, 1.0);

  const auto path = std::filesystem::path(TUNE_TEST_TMPDIR) / "output_transform_resume.yaml";
  std::filesystem::create_directories(path.parent_path());
  original.save(path);
  tune::Study loaded = tune::Study::load(path);
  EXPECT_EQ(loaded.to_yaml_string(), original.to_yaml_string());
  for (int i = 0; i < 8; ++i) {  // across a refresh (every 5 observations)
    const auto a = original.ask();
    const auto b = loaded.ask();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(original.trial(a->id).unit, loaded.trial(b->id).unit) << "step " << i;
    original.tell(a->id, value(a->config));
    loaded.tell(b->id, value(b->config));
  }
  EXPECT_EQ(loaded.to_yaml_string(), original.to_yaml_string());
}

TEST(OutputTransform, OptionRoundTripsAndBadNamesAreRefused) {
  tune::GpBanditOptions o;
  EXPECT_EQ(o.output_transform, tune::OutputTransformKind::automatic);
  o.output_transform = tune::OutputTransformKind::none;
  EXPECT_EQ(tune::gp_bandit_options_from_yaml(tune::to_yaml(o)).output_transform, tune::OutputTransformKind::none);
  EXPECT_EQ(tune::gp_bandit_options_from_yaml(YAML::Load("output_transform: log")).output_transform,
            tune::OutputTransformKind::log);
  EXPECT_THROW(tune::gp_bandit_options_from_yaml(YAML::Load("output_transform: boxcox")), tune::StateError);
}

}  // namespace
