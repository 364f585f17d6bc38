// tune::log_marginal_likelihood against the closed form solved here with LDLT and against finite
// differences; fit_hyperparameters recovers the hyperparameters of a GP prior sample.
#include "tune/gp/hyperparameter_fit.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <random>
#include <vector>

namespace {

using tune::GpHyperparameters;
using tune::KernelType;
using tune::Observation;
using tune::PointQuery;
using tune::Standardization;

double uniform(std::mt19937_64& rng, double lo = 0.0, double hi = 1.0) {
  return lo + (hi - lo) * tune::uniform01(rng);
}

double box_muller(std::mt19937_64& rng) {
  const double u1 = 1.0 - tune::uniform01(rng);  // (0, 1]
  const double u2 = tune::uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

struct Data {
  std::vector<Observation> observations;
  Standardization standardization;
  GpHyperparameters hp;
};

Data make_data(KernelType kernel, std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  Data d;
  for (std::size_t i = 0; i < n; ++i) {
    Eigen::VectorXd x(2);
    x << uniform(rng), uniform(rng);
    d.observations.push_back({PointQuery{x}, 3.0 + 2.0 * std::sin(4.0 * x(0)) * x(1) + 0.05 * box_muller(rng),
                              i % 4 == 1 ? std::size_t{1} : std::size_t{0}});
  }
  d.standardization = {2.5, 1.7};
  d.hp.kernel = kernel;
  d.hp.lengthscales.resize(2);
  d.hp.lengthscales << 0.35, 0.6;
  d.hp.outputscale = 1.3;
  d.hp.noise_variances = {4e-3, 3e-2};
  return d;
}

// -1/2 y' K^{-1} y - 1/2 log|K| - n/2 log 2 pi with K = kernel + diag(noise of each point's group),
// y standardised, solved with LDLT. Observations of offset groups with a scale covary by
// rho_i rho_j k, and pairs in a shared offset group g add r_g k_g + t_g (x_i - 1/2) . (x_j - 1/2) + v
// (r_g the discrepancy ratio, k_g the kernel with lengthscales times the group's factor m_g (1
// without one), t_g the trend variance, 0 without one; v the offset variance).
double closed_form_lml(const Data& d, const GpHyperparameters& hp) {
  const Eigen::Index n = static_cast<Eigen::Index>(d.observations.size());
  const tune::Kernel k = hp.make_kernel();
  Eigen::MatrixXd K(n, n);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Observation& oi = d.observations[static_cast<std::size_t>(i)];
    y(i) = (oi.value - d.standardization.mean) / d.standardization.scale;
    for (Eigen::Index j = 0; j < n; ++j) {
      const Observation& oj = d.observations[static_cast<std::size_t>(j)];
      const double kij = k(std::get<PointQuery>(oi.query).x, std::get<PointQuery>(oj.query).x);
      // rho_i rho_j k: each observation of a scaled group sees rho_g f.
      const auto rho = [&](const Observation& o) {
        return o.offset_group && *o.offset_group < hp.group_scales.size() ? hp.group_scales[*o.offset_group] : 1.0;
      };
      K(i, j) = rho(oi) * rho(oj) * kij;
      if (oi.offset_group && oi.offset_group == oj.offset_group) {
        const double r = *oi.offset_group < hp.discrepancy_ratios.size() ? hp.discrepancy_ratios[*oi.offset_group] : 0.0;
        const double t = *oi.offset_group < hp.trend_variances.size() ? hp.trend_variances[*oi.offset_group] : 0.0;
        const double m = *oi.offset_group < hp.discrepancy_lengthscale_factors.size()
                             ? hp.discrepancy_lengthscale_factors[*oi.offset_group]
                             : 1.0;
        const tune::Kernel kg(hp.kernel, hp.lengthscales * m, hp.outputscale);
        const double kg_ij = kg(std::get<PointQuery>(oi.query).x, std::get<PointQuery>(oj.query).x);
        const Eigen::VectorXd ci = std::get<PointQuery>(oi.query).x.array() - 0.5;
        const Eigen::VectorXd cj = std::get<PointQuery>(oj.query).x.array() - 0.5;
        K(i, j) += r * kg_ij + t * ci.dot(cj) + hp.offset_variance;
      }
    }
    K(i, i) += hp.noise_variances[oi.noise_group];
  }
  const Eigen::LDLT<Eigen::MatrixXd> ldlt(K);
  const double log_det = ldlt.vectorD().array().log().sum();
  return -0.5 * y.dot(ldlt.solve(y)) - 0.5 * log_det - 0.5 * static_cast<double>(n) * std::log(2.0 * std::numbers::pi);
}

// hp with its i-th log parameter moved by h, in the order of the gradient: lengthscales,
// outputscale, noise variances, discrepancy ratios, group scales, trend variances, discrepancy
// lengthscale factors.
GpHyperparameters perturb(const GpHyperparameters& hp, Eigen::Index i, double h) {
  GpHyperparameters q = hp;
  const Eigen::Index d = hp.lengthscales.size();
  if (i < d) {
    q.lengthscales(i) *= std::exp(h);
    return q;
  }
  if (i == d) {
    q.outputscale *= std::exp(h);
    return q;
  }
  auto k = static_cast<std::size_t>(i - d - 1);
  for (std::vector<double>* block : {&q.noise_variances, &q.discrepancy_ratios, &q.group_scales, &q.trend_variances,
                                       &q.discrepancy_lengthscale_factors}) {
    if (k < block->size()) {
      (*block)[k] *= std::exp(h);
      return q;
    }
    k -= block->size();
  }
  ADD_FAILURE() << "no log parameter " << i;
  return q;
}

// Every entry of the analytic gradient against central differences of the closed form.
void expect_gradient_matches_finite_differences(const Data& d, const Eigen::VectorXd& grad) {
  const double h = 1e-5;
  for (Eigen::Index i = 0; i < grad.size(); ++i) {
    const double fd = (closed_form_lml(d, perturb(d.hp, i, h)) - closed_form_lml(d, perturb(d.hp, i, -h))) / (2.0 * h);
    EXPECT_NEAR(grad(i), fd, 1e-6 * std::max(1.0, std::abs(fd))) << "theta " << i;
  }
}

// Observations 1 mod 4 and 2 mod 4 form offset groups 0 and 1, with discrepancy ratios.
Data with_two_offset_groups(Data d) {
  for (std::size_t i = 0; i < d.observations.size(); ++i)
    if (i % 4 == 1 || i % 4 == 2) d.observations[i].offset_group = i % 4 - 1;
  d.hp.offset_variance = 2.0;
  d.hp.discrepancy_ratios = {0.3, 1.7};
  return d;
}

// Every third observation reads f itself; the others form offset groups 0 (i % 3 == 1) and 1
// (i % 3 == 2), and add their group's deviation, a function of the point, to f's value.
Data with_deviating_groups(Data d, const std::function<double(const Eigen::VectorXd&)>& group0,
                           const std::function<double(const Eigen::VectorXd&)>& group1) {
  for (std::size_t i = 0; i < d.observations.size(); ++i) {
    Observation& o = d.observations[i];
    if (i % 3 == 0) continue;
    o.offset_group = i % 3 - 1;
    const Eigen::VectorXd& x = std::get<PointQuery>(o.query).x;
    o.value += i % 3 == 1 ? group0(x) : group1(x);
  }
  return d;
}

// A fit with more starts and evaluations than the default, for recovery checks.
tune::HyperparameterFitResult thorough_fit(const Data& d, std::uint64_t seed) {
  tune::Rng rng(seed);
  tune::HyperparameterFitOptions options;
  options.random_restarts = 3;
  options.max_evaluations = 200;
  return tune::fit_hyperparameters(d.observations, d.standardization, d.hp, options, rng);
}

class LmlKernels : public ::testing::TestWithParam<KernelType> {};

TEST_P(LmlKernels, LogMarginalLikelihoodEqualsClosedForm) {
  const Data d = make_data(GetParam(), 41, 30);
  for (double ls_factor : {0.5, 1.0, 3.0}) {
    GpHyperparameters hp = d.hp;
    hp.lengthscales *= ls_factor;
    const double got = tune::log_marginal_likelihood(d.observations, d.standardization, hp);
    const double ref = closed_form_lml(d, hp);
    EXPECT_NEAR(got, ref, 1e-10 * std::max(1.0, std::abs(ref))) << "lengthscale factor " << ls_factor;
  }
  // The standardisation enters: another one gives another value.
  const Standardization other{0.0, 1.0};
  EXPECT_GT(std::abs(tune::log_marginal_likelihood(d.observations, other, d.hp) -
                     tune::log_marginal_likelihood(d.observations, d.standardization, d.hp)),
            1e-3);
}

TEST_P(LmlKernels, GradientMatchesFiniteDifferencesInEveryLogParameter) {
  const Data d = make_data(GetParam(), 42, 30);
  Eigen::VectorXd grad;
  const double value = tune::log_marginal_likelihood(d.observations, d.standardization, d.hp, &grad);
  ASSERT_EQ(grad.size(), 2 + 1 + 2);  // 2 lengthscales, outputscale, 2 noise groups
  EXPECT_NEAR(value, tune::log_marginal_likelihood(d.observations, d.standardization, d.hp), 1e-12 * std::abs(value));
  expect_gradient_matches_finite_differences(d, grad);
}

// Offset groups with discrepancy ratios: observations 1 mod 4 and 2 mod 4 form groups 0 and 1.
TEST_P(LmlKernels, OffsetGroupsAndDiscrepancyRatiosEqualClosedFormWithGradient) {
  const Data d = with_two_offset_groups(make_data(GetParam(), 43, 30));
  Eigen::VectorXd grad;
  const double value = tune::log_marginal_likelihood(d.observations, d.standardization, d.hp, &grad);
  EXPECT_NEAR(value, closed_form_lml(d, d.hp), 1e-10 * std::abs(value));
  ASSERT_EQ(grad.size(), 2 + 1 + 2 + 2);  // ..., 2 noise groups, 2 discrepancy ratios
  expect_gradient_matches_finite_differences(d, grad);
  // A fit moves the ratios and keeps the offset variance.
  tune::Rng rng(3);
  const auto fit = tune::fit_hyperparameters(d.observations, d.standardization, d.hp, {}, rng);
  EXPECT_EQ(fit.hyperparameters.offset_variance, 2.0);
  ASSERT_EQ(fit.hyperparameters.discrepancy_ratios.size(), 2u);
  EXPECT_NE(fit.hyperparameters.discrepancy_ratios[0], 0.3);
}

// Offset groups with discrepancy ratios and scales (the AR(1) rho of each group).
TEST_P(LmlKernels, GroupScalesEqualClosedFormWithGradient) {
  Data d = with_two_offset_groups(make_data(GetParam(), 44, 30));
  d.hp.group_scales = {0.6, 1.4};
  Eigen::VectorXd grad;
  const double value = tune::log_marginal_likelihood(d.observations, d.standardization, d.hp, &grad);
  EXPECT_NEAR(value, closed_form_lml(d, d.hp), 1e-10 * std::abs(value));
  ASSERT_EQ(grad.size(), 2 + 1 + 2 + 2 + 2);  // ..., 2 discrepancy ratios, 2 scales
  expect_gradient_matches_finite_differences(d, grad);
  // Data whose group 0 is drawn at half the amplitude of f: the fit finds a scale near 0.5.
  Data half = make_data(GetParam(), 45, 60);
  for (std::size_t i = 0; i < half.observations.size(); i += 2) {
    half.observations[i].offset_group = 0;
    half.observations[i].value *= 0.5;
  }
  half.hp.offset_variance = 10.0;
  half.hp.group_scales = {1.0};
  const auto fit = thorough_fit(half, 4);
  ASSERT_EQ(fit.hyperparameters.group_scales.size(), 1u);
  EXPECT_NEAR(fit.hyperparameters.group_scales[0], 0.5, 0.1);
}

INSTANTIATE_TEST_SUITE_P(HyperparameterFit, LmlKernels,
                         ::testing::Values(KernelType::squared_exponential, KernelType::matern52),
                         [](const ::testing::TestParamInfo<KernelType>& param_info) {
                           return std::string(tune::to_string(param_info.param));
                         });

// The log prior exactly as the header describes it: independent normal densities (without
// normalising constants) on the log-parameters.
double log_prior(const GpHyperparameters& hp, const tune::HyperparameterFitOptions& o) {
  auto term = [](double value, double mean, double sd) {
    if (sd <= 0) return 0.0;
    const double z = (value - mean) / sd;
    return -0.5 * z * z;
  };
  const double dim = static_cast<double>(hp.lengthscales.size());
  double lp = 0.0;
  for (Eigen::Index i = 0; i < hp.lengthscales.size(); ++i)
    lp += term(std::log(hp.lengthscales(i)), std::log(o.lengthscale_prior_median_1d * std::sqrt(dim)),
               o.lengthscale_prior_log_sd);
  lp += term(std::log(hp.outputscale), o.outputscale_prior.log_median, o.outputscale_prior.log_sd);
  for (double v : hp.noise_variances) lp += term(std::log(v), o.noise_prior.log_median, o.noise_prior.log_sd);
  return lp;
}

TEST(HyperparameterFit, RecoversLengthscalesAndNoiseOfAPriorSample) {
  const Eigen::Index n = 200;
  Eigen::Vector2d true_ls(0.15, 0.4);
  const double true_noise = 1e-2;
  std::mt19937_64 rng(2024);
  Eigen::MatrixXd X(2, n);
  for (Eigen::Index j = 0; j < n; ++j) X(0, j) = uniform(rng), X(1, j) = uniform(rng);
  Eigen::MatrixXd K(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) {
      const double r2 = ((X.col(i) - X.col(j)).array() / true_ls.array()).square().sum();
      K(i, j) = std::exp(-0.5 * r2);  // SE, outputscale 1
    }
  K.diagonal().array() += 1e-9;  // jitter for the factorisation of the noise-free prior
  const Eigen::LLT<Eigen::MatrixXd> llt(K);
  ASSERT_EQ(llt.info(), Eigen::Success);
  Eigen::VectorXd z(n);
  for (Eigen::Index i = 0; i < n; ++i) z(i) = box_muller(rng);
  const Eigen::VectorXd f = llt.matrixL() * z;
  std::vector<Observation> observations;
  for (Eigen::Index i = 0; i < n; ++i)
    observations.push_back({PointQuery{X.col(i)}, f(i) + std::sqrt(true_noise) * box_muller(rng), 0});

  const Standardization st = tune::standardization_of(observations);
  tune::HyperparameterFitOptions options;
  options.max_points = 200;
  options.random_restarts = 2;
  const GpHyperparameters warm = tune::default_hyperparameters(KernelType::squared_exponential, 2, 1, options);
  tune::Rng fit_rng(7);
  const tune::HyperparameterFitResult r = tune::fit_hyperparameters(observations, st, warm, options, fit_rng);
  EXPECT_EQ(r.points_used, 200u);
  const GpHyperparameters& hp = r.hyperparameters;
  ASSERT_EQ(hp.lengthscales.size(), 2);
  ASSERT_EQ(hp.noise_variances.size(), 1u);
  for (Eigen::Index i = 0; i < 2; ++i) {
    EXPECT_GT(hp.lengthscales(i), true_ls(i) / 1.5) << "lengthscale " << i;
    EXPECT_LT(hp.lengthscales(i), true_ls(i) * 1.5) << "lengthscale " << i;
  }
  const double noise_observed_units = hp.noise_variances[0] * st.scale * st.scale;
  EXPECT_GT(noise_observed_units, true_noise / 3.0);
  EXPECT_LT(noise_observed_units, true_noise * 3.0);

  // The reported values are those of the returned hyperparameters, and the MAP fit is at least as
  // good as the truth (expressed in standardised units) under the same objective.
  EXPECT_NEAR(r.log_marginal_likelihood, tune::log_marginal_likelihood(observations, st, hp),
              1e-9 * std::abs(r.log_marginal_likelihood));
  EXPECT_NEAR(r.log_posterior, r.log_marginal_likelihood + log_prior(hp, options),
              1e-9 * std::abs(r.log_posterior));
  GpHyperparameters truth;
  truth.kernel = KernelType::squared_exponential;
  truth.lengthscales = true_ls;
  truth.outputscale = 1.0 / (st.scale * st.scale);
  truth.noise_variances = {true_noise / (st.scale * st.scale)};
  const double truth_log_posterior = tune::log_marginal_likelihood(observations, st, truth) + log_prior(truth, options);
  EXPECT_GE(r.log_posterior, truth_log_posterior - 1e-6);
}

TEST(HyperparameterFit, FewObservationsGiveFiniteNonDegenerateLengthscales) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    std::mt19937_64 rng(seed);
    std::vector<Observation> observations;
    for (int i = 0; i < 5; ++i) {
      Eigen::VectorXd x(2);
      x << uniform(rng), uniform(rng);
      observations.push_back({PointQuery{x}, std::sin(6.0 * x(0)) + x(1) * x(1), 0});
    }
    const Standardization st = tune::standardization_of(observations);
    tune::HyperparameterFitOptions options;
    options.random_restarts = 3;
    tune::Rng fit_rng(seed);
    const auto r = tune::fit_hyperparameters(
        observations, st, tune::default_hyperparameters(KernelType::matern52, 2, 1, options), options, fit_rng);
    const GpHyperparameters& hp = r.hyperparameters;
    for (Eigen::Index i = 0; i < 2; ++i) {
      EXPECT_TRUE(std::isfinite(hp.lengthscales(i)));
      EXPECT_GE(hp.lengthscales(i), options.lengthscale_min * (1 - 1e-12));
      EXPECT_LE(hp.lengthscales(i), options.lengthscale_max * (1 + 1e-12));
      EXPECT_GT(hp.lengthscales(i), 2.0 * options.lengthscale_min) << "seed " << seed << ": collapsed to the bound";
    }
    EXPECT_GE(hp.outputscale, options.outputscale_min * (1 - 1e-12));
    EXPECT_LE(hp.outputscale, options.outputscale_max * (1 + 1e-12));
    EXPECT_GE(hp.noise_variances[0], options.noise_min * (1 - 1e-12));
    EXPECT_LE(hp.noise_variances[0], options.noise_max * (1 + 1e-12));
    EXPECT_TRUE(std::isfinite(r.log_posterior));
  }
}

TEST(HyperparameterFit, FixedNoiseAndSubsetOptionsAreHonoured) {
  const Data d = make_data(KernelType::matern52, 43, 60);
  tune::HyperparameterFitOptions options;
  options.fit_noise = false;
  options.max_points = 25;
  tune::Rng rng(3);
  const auto r = tune::fit_hyperparameters(d.observations, d.standardization, d.hp, options, rng);
  EXPECT_EQ(r.points_used, 25u);
  ASSERT_EQ(r.hyperparameters.noise_variances.size(), 2u);
  // Held at the warm start (up to the exp(log(v)) round trip of the log-parametrisation).
  EXPECT_DOUBLE_EQ(r.hyperparameters.noise_variances[0], d.hp.noise_variances[0]);
  EXPECT_DOUBLE_EQ(r.hyperparameters.noise_variances[1], d.hp.noise_variances[1]);
  // ... while the free parameters moved.
  EXPECT_NE(r.hyperparameters.lengthscales, d.hp.lengthscales);
}

TEST(HyperparameterFit, StandardizationIsMeanAndSampleStandardDeviation) {
  std::mt19937_64 rng(44);
  std::vector<Observation> observations;
  for (int i = 0; i < 37; ++i)
    observations.push_back({PointQuery{Eigen::VectorXd::Constant(1, 0.5)}, 10.0 + 4.0 * box_muller(rng), 0});
  double mean = 0.0;
  for (const Observation& o : observations) mean += o.value;
  mean /= 37.0;
  double ss = 0.0;
  for (const Observation& o : observations) ss += (o.value - mean) * (o.value - mean);
  const double sd = std::sqrt(ss / 36.0);  // sample sd: n - 1
  const Standardization st = tune::standardization_of(observations);
  EXPECT_NEAR(st.mean, mean, 1e-13 * std::abs(mean));
  EXPECT_NEAR(st.scale, sd, 1e-13 * sd);

  // Degenerate cases: no values, one value, constant values.
  EXPECT_EQ(tune::standardization_of({}).mean, 0.0);
  EXPECT_EQ(tune::standardization_of({}).scale, 1.0);
  const std::vector<Observation> one{observations[0]};
  EXPECT_EQ(tune::standardization_of(one).mean, observations[0].value);
  EXPECT_EQ(tune::standardization_of(one).scale, 1.0);
  const std::vector<Observation> constant(5, Observation{PointQuery{Eigen::VectorXd::Constant(1, 0.5)}, 3.25, 0});
  EXPECT_EQ(tune::standardization_of(constant).mean, 3.25);
  EXPECT_EQ(tune::standardization_of(constant).scale, 1.0);
}

}  // namespace

namespace {

// Offset groups with discrepancies, scales and linear trends: every block of the gradient against
// finite differences of the closed form; a fit gives a group tilted against f a large trend
// variance and a group that is f itself a small one.
TEST_P(LmlKernels, TrendVariancesEqualClosedFormWithGradientAndFitFindsTheTiltedGroup) {
  Data d = with_two_offset_groups(make_data(GetParam(), 46, 30));
  d.hp.group_scales = {0.6, 1.4};
  d.hp.trend_variances = {0.5, 3.0};
  Eigen::VectorXd grad;
  const double value = tune::log_marginal_likelihood(d.observations, d.standardization, d.hp, &grad);
  EXPECT_NEAR(value, closed_form_lml(d, d.hp), 1e-10 * std::abs(value));
  ASSERT_EQ(grad.size(), 2 + 1 + 2 + 2 + 2 + 2);  // ..., 2 discrepancy ratios, 2 scales, 2 trends
  expect_gradient_matches_finite_differences(d, grad);

  // Group 0 reads f + 4 (x_1 - 1/2) - 3 (x_2 - 1/2) (raw units; f's sd is about 1.7), group 1 reads
  // f itself; both have their own offset.
  Data tilted = with_deviating_groups(
      make_data(GetParam(), 47, 90), [](const Eigen::VectorXd& x) { return 4.0 * (x(0) - 0.5) - 3.0 * (x(1) - 0.5) + 1.0; },
      [](const Eigen::VectorXd&) { return -2.0; });
  tilted.hp.offset_variance = 10.0;
  tilted.hp.trend_variances = {1.0, 1.0};
  const auto fit = thorough_fit(tilted, 5);
  ASSERT_EQ(fit.hyperparameters.trend_variances.size(), 2u);
  // The slopes are about (2.4, -1.8) in standardised units, mean square 4.4.
  EXPECT_GT(fit.hyperparameters.trend_variances[0], 1.0);
  EXPECT_LT(fit.hyperparameters.trend_variances[1], 0.1);
  EXPECT_GT(fit.log_marginal_likelihood,
            tune::log_marginal_likelihood(tilted.observations, tilted.standardization, [&] {
              GpHyperparameters without = fit.hyperparameters;
              without.trend_variances.clear();
              return without;
            }()) + 5.0);
  std::printf("fitted trend variances %g %g\n", fit.hyperparameters.trend_variances[0], fit.hyperparameters.trend_variances[1]);
}

}  // namespace

namespace {

// Discrepancies with their own lengthscales (f's times a factor per group), on top of scales and
// trends: every block of the gradient against finite differences of the closed form. A fit gives
// a group that deviates from f by a smooth tilt a long discrepancy lengthscale, and one that
// deviates by ripples shorter than f's a short one.
TEST_P(LmlKernels, DiscrepancyLengthscaleFactorsEqualClosedFormWithGradientAndFitTellsSmoothFromRough) {
  Data d = with_two_offset_groups(make_data(GetParam(), 48, 30));
  d.hp.group_scales = {0.6, 1.4};
  d.hp.trend_variances = {0.5, 3.0};
  d.hp.discrepancy_lengthscale_factors = {2.5, 0.7};
  Eigen::VectorXd grad;
  const double value = tune::log_marginal_likelihood(d.observations, d.standardization, d.hp, &grad);
  EXPECT_NEAR(value, closed_form_lml(d, d.hp), 1e-10 * std::abs(value));
  ASSERT_EQ(grad.size(), 2 + 1 + 2 + 2 + 2 + 2 + 2);  // ..., 2 trends, 2 lengthscale factors
  expect_gradient_matches_finite_differences(d, grad);
  // Factors of 1 are f's kernel: the value without the factors (to rounding: k rho rho + r k is
  // summed in another order than k (rho rho + r)).
  GpHyperparameters ones = d.hp, none = d.hp;
  ones.discrepancy_lengthscale_factors = {1.0, 1.0};
  none.discrepancy_lengthscale_factors.clear();
  const double without = tune::log_marginal_likelihood(d.observations, d.standardization, none);
  EXPECT_NEAR(tune::log_marginal_likelihood(d.observations, d.standardization, ones), without, 1e-12 * std::abs(without));
  EXPECT_GT(std::abs(value - without), 1e-3);

  // Group 0 reads f + 3 sin(1.2 x_1 + 0.8 x_2) (a deviation far smoother than f), group 1 reads
  // f + 0.8 sin(14 x_1) sin(11 x_2) (rougher than f); each has its own offset.
  Data mixed = with_deviating_groups(
      make_data(GetParam(), 49, 120), [](const Eigen::VectorXd& x) { return 3.0 * std::sin(1.2 * x(0) + 0.8 * x(1)) - 1.0; },
      [](const Eigen::VectorXd& x) { return 0.8 * std::sin(14.0 * x(0)) * std::sin(11.0 * x(1)) + 1.0; });
  mixed.hp.offset_variance = 10.0;
  mixed.hp.discrepancy_ratios = {0.1, 0.1};
  mixed.hp.discrepancy_lengthscale_factors = {1.0, 1.0};
  const auto fit = thorough_fit(mixed, 7);
  const std::vector<double>& m = fit.hyperparameters.discrepancy_lengthscale_factors;
  ASSERT_EQ(m.size(), 2u);
  std::printf("fitted discrepancy lengthscale factors %g %g\n", m[0], m[1]);
  EXPECT_GT(m[0], 2.0);
  EXPECT_LT(m[1], 1.0);
}

}  // namespace

namespace {

// The pooled noise prior written out: the log noise variances jointly normal with mean m 1 and
// covariance (t^2 - s^2) 11' + s^2 I, solved here with LLT (without normalising constants).
double pooled_noise_log_prior(const std::vector<double>& noise, double m, double t, double s) {
  const Eigen::Index g = static_cast<Eigen::Index>(noise.size());
  Eigen::MatrixXd cov = Eigen::MatrixXd::Constant(g, g, t * t - s * s);
  cov.diagonal().array() += s * s;
  Eigen::VectorXd r(g);
  for (Eigen::Index i = 0; i < g; ++i) r(i) = std::log(noise[static_cast<std::size_t>(i)]) - m;
  return -0.5 * r.dot(cov.llt().solve(r));
}

// Two groups observe the same function with the same noise (sd 0.1): the first 40 times, the second
// 3 times, at points of its own. On its own the sparse group's noise fell to 0.025-0.05 in 4 of 8
// seeds; pooled, its noise moves towards the dense group's (7 of 8 seeds closer to the truth, the
// log ratio of the two groups' noises about half as large).
std::vector<Observation> dense_and_sparse_groups(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Observation> out;
  for (int i = 0; i < 43; ++i) {
    Eigen::VectorXd x(1);
    x << uniform(rng);
    out.push_back({PointQuery{x}, std::sin(5.0 * x(0)) + 0.1 * box_muller(rng), i < 40 ? std::size_t{0} : std::size_t{1}});
  }
  return out;
}

}  // namespace

TEST(HyperparameterFit, PooledNoisePriorIsTheJointNormalAndLendsASparseGroupTheDenseGroupsNoise) {
  double pooled_spread = 0.0, independent_spread = 0.0;  // sum over seeds of |log v1 - log v0|
  int pooled_closer = 0;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const std::vector<Observation> observations = dense_and_sparse_groups(seed);
    const Standardization st = tune::standardization_of(observations);
    auto fit = [&](double pooling) {
      tune::HyperparameterFitOptions o;
      o.noise_pooling_log_sd = pooling;
      tune::Rng rng(seed);
      return std::pair{tune::fit_hyperparameters(
                           observations, st, tune::default_hyperparameters(KernelType::squared_exponential, 1, 2, o), o, rng),
                       o};
    };
    const auto [pooled, options] = fit(1.0);
    const auto [independent, independent_options] = fit(0.0);

    // The reported posterior is the likelihood plus the priors, the noise's the joint normal.
    const GpHyperparameters& hp = pooled.hyperparameters;
    GpHyperparameters without_noise = hp;
    without_noise.noise_variances.clear();
    const double expected = tune::log_marginal_likelihood(observations, st, hp) + log_prior(without_noise, options) +
                            pooled_noise_log_prior(hp.noise_variances, options.noise_prior.log_median,
                                                   options.noise_prior.log_sd, 1.0);
    EXPECT_NEAR(pooled.log_posterior, expected, 1e-9 * std::abs(expected)) << "seed " << seed;
    // Without pooling, the independent priors (the test above's form).
    EXPECT_NEAR(independent.log_posterior,
                tune::log_marginal_likelihood(observations, st, independent.hyperparameters) +
                    log_prior(independent.hyperparameters, independent_options),
                1e-9 * std::abs(independent.log_posterior));

    const auto spread = [](const GpHyperparameters& h) {
      return std::abs(std::log(h.noise_variances[1]) - std::log(h.noise_variances[0]));
    };
    pooled_spread += spread(hp);
    independent_spread += spread(independent.hyperparameters);
    const double truth = std::log(0.01 / (st.scale * st.scale));
    pooled_closer += std::abs(std::log(hp.noise_variances[1]) - truth) <
                     std::abs(std::log(independent.hyperparameters.noise_variances[1]) - truth);
  }
  EXPECT_LT(pooled_spread, 0.75 * independent_spread) << pooled_spread << " " << independent_spread;
  EXPECT_GE(pooled_closer, 6) << pooled_closer;
}
