// CMES / MES (max_value_entropy.hpp) against the digest's reference values (digest-iqbo-cmets.md
// 3.3, 3.4), a brute-force trapezoid integration of the literal Appendix A formula, exact
// polynomial moments (Gauss-Hermite), a Monte Carlo of the maximum of independent normals (Gumbel
// samples), Clark's (1961) closed form for E[max] of a bivariate normal (Thompson samples), and the
// batch posterior-covariance formula.
#include "tune/bandit/max_value_entropy.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/random/rng.hpp"

namespace {

using tune::cmes_noiseless;
using tune::cmes_noiseless_term;
using tune::cmes_noisy;

double phi(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi); }
double Phi(double z) { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }

Eigen::VectorXd samples(std::initializer_list<double> values) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(values.size()));
  Eigen::Index i = 0;
  for (double x : values) v(i++) = x;
  return v;
}

double uniform(std::mt19937_64& rng, double lo, double hi) { return lo + (hi - lo) * tune::uniform01(rng); }

// Eq. 14 summand, direct formula (accurate for moderate gamma).
double direct_term(double gamma) { return gamma * phi(gamma) / (2.0 * Phi(gamma)) - std::log(Phi(gamma)); }

// Appendix A written literally (digest 3.4, corrected): H0 - H1 with
//   H1 = -int p(z) r(z) log(r(z) p(z)) dz,  r = Phi(gamma'(z)) / Phi(gamma),
// trapezoid over nu +- 12 predictive sds with 2e5 intervals.
double brute_force_noisy(double nu, double sigma_g, double sigma, double f_star) {
  const double s2 = sigma_g * sigma_g + sigma * sigma;
  const double sz = std::sqrt(s2);
  const double gamma = (f_star - nu) / sigma_g;
  const double Phi_gamma = Phi(gamma);
  const double s = std::sqrt(sigma_g * sigma_g - sigma_g * sigma_g * sigma_g * sigma_g / s2);
  const double h0 = 0.5 * std::log(2.0 * std::numbers::pi * std::numbers::e * s2);
  const int n = 200000;
  const double lo = nu - 12.0 * sz, hi = nu + 12.0 * sz, h = (hi - lo) / n;
  double sum = 0.0;
  for (int i = 0; i <= n; ++i) {
    const double z = lo + h * i;
    const double rho = (z - nu) / sz;
    const double p = phi(rho) / sz;
    const double u = sigma_g * sigma_g * (z - nu) / s2 + nu;
    const double r = Phi((f_star - u) / s) / Phi_gamma;
    const double term = r > 0.0 ? p * r * (std::log(r) + std::log(p)) : 0.0;  // r p may underflow
    sum += (i == 0 || i == n ? 0.5 : 1.0) * term;
  }
  const double h1 = -sum * h;
  return h0 - h1;
}

// ---- Eq. 14 ------------------------------------------------------------------------------------

TEST(CmesNoiseless, DigestReferenceValue) {
  // Digest 3.3: f_* = 1, nu = 0, sigma_g = 1 gives 0.31655 nats.
  EXPECT_NEAR(cmes_noiseless(0.0, 1.0, samples({1.0})), 0.31655, 1e-5);
  EXPECT_NEAR(tune::mes(0.0, 1.0, samples({1.0})), 0.31655, 1e-5);
  // Shift and scale invariance: only gamma matters; and the sample average.
  EXPECT_NEAR(cmes_noiseless(3.0, 2.0, samples({5.0})), 0.31655, 1e-5);
  EXPECT_NEAR(cmes_noiseless(0.0, 1.0, samples({1.0, 2.0})), 0.5 * (direct_term(1.0) + direct_term(2.0)), 1e-14);
}

TEST(CmesNoiseless, TermMatchesDirectFormulaAndAsymptote) {
  for (double g = -8.0; g <= 8.0; g += 0.125)
    EXPECT_NEAR(cmes_noiseless_term(g), direct_term(g), 1e-13 * std::max(1.0, direct_term(g))) << "gamma " << g;
  // gamma -> -inf: log sqrt(2 pi) + log(-gamma) - 1/2 + 2 gamma^-2 + O(gamma^-4) (the direct
  // formula cancels catastrophically there and returns inf - inf = NaN once Phi underflows).
  for (double u : {1e2, 1e3, 1e4, 1e6, 1e100}) {
    const double expected = 0.5 * std::log(2.0 * std::numbers::pi) + std::log(u) - 0.5 + 2.0 / (u * u);
    EXPECT_NEAR(cmes_noiseless_term(-u), expected, 20.0 / (u * u * u * u) + 4e-16 * expected) << "gamma " << -u;
  }
  EXPECT_EQ(cmes_noiseless_term(1e300), 0.0);
  EXPECT_EQ(cmes_noiseless_term(std::numeric_limits<double>::infinity()), 0.0);
}

TEST(CmesNoiseless, DecreasingInGamma) {
  double previous = std::numeric_limits<double>::infinity();
  for (double g = -60.0; g <= 12.0; g += 0.01) {
    const double value = cmes_noiseless_term(g);
    ASSERT_TRUE(std::isfinite(value)) << "gamma " << g;
    ASSERT_LT(value, previous) << "gamma " << g;
    ASSERT_GT(value, 0.0) << "gamma " << g;
    previous = value;
  }
  // Through the public score: a larger f_* (or a smaller nu) means a larger gamma, a lower score.
  double last = std::numeric_limits<double>::infinity();
  for (double f = 0.01; f < 5.0; f += 0.05) {
    const double value = cmes_noiseless(0.0, 1.0, samples({f}));
    EXPECT_LT(value, last) << "f_* " << f;
    last = value;
  }
}

TEST(CmesGuards, FStarBelowNuIsClampedAndFinite) {
  // f_* far below nu: clamped to nu + 1e-6 sigma_g, i.e. gamma = 1e-6, about log 2.
  const double value = cmes_noiseless(10.0, 1.0, samples({-1e6, 0.0}));
  EXPECT_TRUE(std::isfinite(value));
  EXPECT_NEAR(value, cmes_noiseless_term(1e-6), 1e-12);
  EXPECT_NEAR(value, std::log(2.0), 1e-5);
  const double noisy = cmes_noisy(10.0, 1.0, 0.3, samples({-1e6}));
  EXPECT_TRUE(std::isfinite(noisy));
  EXPECT_NEAR(noisy, cmes_noisy(10.0, 1.0, 0.3, samples({10.0 + 1e-6})), 1e-12);
  // Over a candidate set the floor is max_a (nu(a) + 1e-6 sigma_g(a)): every gamma >= 1e-6.
  const Eigen::VectorXd nu = samples({0.0, 2.0, 1.0}), sd = samples({1.0, 0.5, 3.0});
  const double floor = 2.0 + 1e-6 * 0.5;
  const Eigen::VectorXd low = tune::cmes_noiseless(nu, sd, samples({-5.0, 4.0}));
  const Eigen::VectorXd raised = tune::cmes_noiseless(nu, sd, samples({floor, 4.0}));
  const Eigen::VectorXd low_noisy = tune::cmes_noisy(nu, sd, 0.2, samples({-5.0, 4.0}));
  const Eigen::VectorXd raised_noisy = tune::cmes_noisy(nu, sd, 0.2, samples({floor, 4.0}));
  for (Eigen::Index i = 0; i < 3; ++i) {
    EXPECT_NEAR(low(i), raised(i), 1e-14);
    EXPECT_NEAR(low_noisy(i), raised_noisy(i), 1e-14);
    EXPECT_TRUE(std::isfinite(low(i)) && std::isfinite(low_noisy(i)));
  }
  // Without the guard the first sample alone would give candidate 1 gamma = -14: a score of ~3.2.
  EXPECT_LT(low(1), 1.0);
}

TEST(CmesGuards, TinyAndZeroSigmaG) {
  for (double sd : {1e-8, 1e-30, 1e-300, 5e-324}) {
    for (double f : {1.0, 1e-300}) {
      const double a = cmes_noiseless(0.0, sd, samples({f}));
      const double b = cmes_noisy(0.0, sd, 0.1, samples({f}));
      const double c = cmes_noisy(0.0, sd, 1e-320, samples({f}));
      EXPECT_TRUE(std::isfinite(a) && a >= 0.0) << sd << " " << f << " " << a;
      EXPECT_TRUE(std::isfinite(b) && b >= 0.0) << sd << " " << f << " " << b;
      EXPECT_TRUE(std::isfinite(c) && c >= 0.0) << sd << " " << f << " " << c;
    }
  }
  // sigma_g = 0: g(a) is known, no information.
  EXPECT_EQ(cmes_noiseless(0.0, 0.0, samples({1.0})), 0.0);
  EXPECT_EQ(cmes_noisy(0.0, 0.0, 0.1, samples({1.0})), 0.0);
  // Huge noise: almost no information.
  EXPECT_LT(cmes_noisy(0.0, 1.0, 1e8, samples({1.0})), 1e-12);
}

// ---- Appendix A ----------------------------------------------------------------------------------

TEST(CmesNoisy, DigestReferenceValuesAndNoiselessLimit) {
  // Digest 3.4: nu = 0, sigma_g = 1, f_* = 1.
  const double sigmas[] = {0.3, 0.1, 0.01, 0.001};
  const double expected[] = {0.2371, 0.2901, 0.3140, 0.3163};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(cmes_noisy(0.0, 1.0, sigmas[i], samples({1.0})), expected[i], 2e-4) << "sigma " << sigmas[i];
  // sigma -> 0 tends to Eq. 14 (monotonically: noise only removes information).
  const double eq14 = cmes_noiseless(0.0, 1.0, samples({1.0}));
  double previous = 0.0;
  for (double sigma : {1.0, 0.3, 0.1, 1e-2, 1e-3, 1e-4, 1e-6}) {
    const double value = cmes_noisy(0.0, 1.0, sigma, samples({1.0}));
    EXPECT_GT(value, previous) << "sigma " << sigma;
    EXPECT_LT(value, eq14) << "sigma " << sigma;
    previous = value;
  }
  EXPECT_NEAR(cmes_noisy(0.0, 1.0, 1e-6, samples({1.0})), eq14, 1e-6);
  EXPECT_EQ(cmes_noisy(0.0, 1.0, 0.0, samples({1.0})), eq14);
}

TEST(CmesNoisy, MatchesBruteForceTrapezoid) {
  std::mt19937_64 rng(20240611);
  double worst = 0.0;
  for (int trial = 0; trial < 12; ++trial) {
    const double nu = uniform(rng, -2.0, 2.0);
    const double sigma_g = std::exp(uniform(rng, std::log(0.05), std::log(3.0)));
    const double sigma = sigma_g * std::exp(uniform(rng, std::log(0.02), std::log(5.0)));
    const double f_star = nu + sigma_g * uniform(rng, 0.02, 3.0);
    const double got = cmes_noisy(nu, sigma_g, sigma, samples({f_star}));
    const double ref = brute_force_noisy(nu, sigma_g, sigma, f_star);
    worst = std::max(worst, std::abs(got - ref) / ref);
    EXPECT_NEAR(got, ref, 1e-6 * ref) << "nu " << nu << " sigma_g " << sigma_g << " sigma " << sigma << " f_* "
                                       << f_star;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", worst);
  RecordProperty("worst_relative_error", buffer);
  // The digest's reference point too.
  EXPECT_NEAR(cmes_noisy(0.0, 1.0, 0.01, samples({1.0})), brute_force_noisy(0.0, 1.0, 0.01, 1.0), 1e-6 * 0.314);
}

TEST(CmesNoisy, VectorEqualsScalarCalls) {
  std::mt19937_64 rng(7);
  const Eigen::Index m = 50;
  Eigen::VectorXd nu(m), sd(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    nu(i) = uniform(rng, -1.0, 1.0);
    sd(i) = uniform(rng, 0.05, 2.0);
  }
  const Eigen::VectorXd fs = samples({1.5, 2.0, 3.5});  // above every nu: the guard is inactive
  const Eigen::VectorXd noisy = tune::cmes_noisy(nu, sd, 0.2, fs, 32);
  const Eigen::VectorXd noiseless = tune::cmes_noiseless(nu, sd, fs);
  for (Eigen::Index i = 0; i < m; ++i) {
    EXPECT_EQ(noisy(i), cmes_noisy(nu(i), sd(i), 0.2, fs, 32));
    EXPECT_EQ(noiseless(i), cmes_noiseless(nu(i), sd(i), fs));
    EXPECT_LT(noisy(i), noiseless(i));
  }
  EXPECT_THROW(tune::cmes_noiseless(nu, sd.head(3), fs), std::invalid_argument);
  EXPECT_THROW(tune::cmes_noisy(nu, sd, -1.0, fs), std::invalid_argument);
  EXPECT_THROW(tune::cmes_noisy(nu, sd, 0.1, Eigen::VectorXd()), std::invalid_argument);
}

// The bound lets cmets skip the quadrature of every candidate that cannot win, so it must hold bit
// for bit (a candidate wrongly skipped changes the suggestion) and be attained without noise.
TEST(CmesNoisy, UpperBoundHoldsForEveryNoiseAndRuleAndIsExactWithoutNoise) {
  std::mt19937_64 rng(11);
  std::size_t strict = 0, cases = 0;
  for (double noise : {0.0, 1e-9, 1e-6, 1e-3, 0.05, 0.3, 1.0, 4.0, 100.0})
    for (double sd : {1e-8, 1e-3, 0.1, 1.0, 10.0})
      for (int k = 0; k < 40; ++k) {
        const double nu = uniform(rng, -5.0, 5.0);
        // f* from below nu (guarded) to far above it (gamma past the negligible cut-off).
        const Eigen::VectorXd fs = samples({nu + uniform(rng, -1.0, 0.5) * sd, nu + uniform(rng, 0.0, 3.0) * sd,
                                            nu + uniform(rng, 0.0, 50.0) * sd});
        const double bound = tune::cmes_noisy_upper_bound(nu, sd, noise, fs);
        ASSERT_TRUE(std::isfinite(bound));
        for (std::size_t nodes : {4, 32, 64}) {
          const double exact = cmes_noisy(nu, sd, noise, fs, nodes);
          ASSERT_LE(exact, bound) << "noise " << noise << " sd " << sd << " nu " << nu << " nodes " << nodes;
          if (noise == 0.0) {
            ASSERT_EQ(exact, bound);
          }
          strict += exact < bound;
          ++cases;
        }
      }
  // Without the quadrature's correction the bound is a different number for most noisy cases.
  EXPECT_GT(strict, cases / 2);
  EXPECT_THROW(tune::cmes_noisy_upper_bound(0.0, 1.0, -0.1, samples({1.0})), std::invalid_argument);
  EXPECT_THROW(tune::cmes_noisy_upper_bound(0.0, 1.0, 0.1, Eigen::VectorXd()), std::invalid_argument);
}

// ---- Gauss-Hermite -------------------------------------------------------------------------------

TEST(MaxValueEntropyGaussHermite, IntegratesPolynomialsUpToDegree2nMinus1) {
  for (std::size_t n : {1, 2, 3, 4, 5, 8, 13, 20, 32, 64, 100}) {
    const tune::GaussHermiteRule& rule = tune::gauss_hermite_rule(n);
    ASSERT_EQ(rule.nodes.size(), n);
    ASSERT_EQ(&rule, &tune::gauss_hermite_rule(n));  // cached
    EXPECT_TRUE(std::is_sorted(rule.nodes.begin(), rule.nodes.end()));
    double moment = 1.0;  // E[T^k] = (k - 1)!! for even k, 0 for odd k
    for (std::size_t k = 0; k <= 2 * n; ++k) {
      if (k >= 2 && k % 2 == 0) moment *= static_cast<double>(k - 1);
      const double exact = k % 2 == 0 ? moment : 0.0;
      double sum = 0.0, scale = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        const double term = rule.weights[i] * std::pow(rule.nodes[i], static_cast<double>(k));
        sum += term;
        scale += std::abs(term);
      }
      if (k < 2 * n) {
        EXPECT_NEAR(sum, exact, 1e-12 * scale + 1e-14) << "n " << n << " degree " << k;
      } else {
        // The first inexact degree: the error is exactly n! (x^{2n} - He_n(x)^2 has degree < 2n and
        // He_n vanishes at the nodes). Checked where it is resolvable in double precision.
        double factorial = 1.0;
        for (std::size_t j = 2; j <= n; ++j) factorial *= static_cast<double>(j);
        if (n <= 20) {
          EXPECT_NEAR(exact - sum, factorial, 1e-10 * exact) << "n " << n;
        }
      }
    }
  }
  EXPECT_THROW(tune::gauss_hermite_rule(0), std::invalid_argument);
}

// ---- max-value samples ---------------------------------------------------------------------------

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const std::size_t i = static_cast<std::size_t>(pos);
  const double frac = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1.0 - frac) + v[i + 1] * frac : v[i];
}

TEST(MaxValueEntropySamples, GumbelQuartilesMatchMonteCarloOfTheMax) {
  std::mt19937_64 setup(11);
  const Eigen::Index m = 40;
  Eigen::VectorXd mean(m), sd(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    mean(i) = uniform(setup, 0.0, 2.0);
    sd(i) = uniform(setup, 0.2, 1.0);
  }
  tune::Rng rng(5);
  const Eigen::VectorXd g = tune::gumbel_max_samples(mean, sd, 40000, rng);
  const std::vector<double> gumbel(g.data(), g.data() + g.size());
  std::mt19937_64 mc_rng(6);
  std::normal_distribution<double> normal;
  std::vector<double> mc(200000);
  for (double& v : mc) {
    double best = -std::numeric_limits<double>::infinity();
    for (Eigen::Index i = 0; i < m; ++i) best = std::max(best, mean(i) + sd(i) * normal(mc_rng));
    v = best;
  }
  const double iqr = quantile(mc, 0.75) - quantile(mc, 0.25);
  ASSERT_GT(iqr, 0.1);
  for (double q : {0.25, 0.5, 0.75}) {
    const double got = quantile(gumbel, q), ref = quantile(mc, q);
    EXPECT_NEAR(got, ref, 0.02 * std::abs(ref)) << "quantile " << q;
    EXPECT_NEAR(got, ref, 0.05 * iqr) << "quantile " << q;
  }
  // Reproducible from the Rng; deterministic points give a constant.
  tune::Rng again(5);
  EXPECT_EQ(tune::gumbel_max_samples(mean, sd, 40000, again), g);
  const Eigen::VectorXd fixed = tune::gumbel_max_samples(mean, Eigen::VectorXd::Zero(m), 10, rng);
  for (Eigen::Index j = 0; j < fixed.size(); ++j) EXPECT_NEAR(fixed(j), mean.maxCoeff(), 1e-9);
  EXPECT_THROW(tune::gumbel_max_samples(mean, sd.head(3), 10, rng), std::invalid_argument);
}

tune::GaussianProcess prior_gp(tune::Standardization st) {
  tune::GpHyperparameters hp;
  hp.kernel = tune::KernelType::squared_exponential;
  hp.lengthscales = Eigen::Vector2d(0.3, 0.5);
  hp.outputscale = 1.3;
  hp.noise_variances = {1e-2};
  return tune::GaussianProcess(2, hp, st);
}

// Clark (1961): E[max(X1, X2)] = mu1 Phi(alpha) + mu2 Phi(-alpha) + theta phi(alpha),
// theta = sqrt(s1^2 + s2^2 - 2 c12), alpha = (mu1 - mu2) / theta.
double clark_expected_max(double mu1, double mu2, double v1, double v2, double c12) {
  const double theta = std::sqrt(v1 + v2 - 2.0 * c12);
  const double alpha = (mu1 - mu2) / theta;
  return mu1 * Phi(alpha) + mu2 * Phi(-alpha) + theta * phi(alpha);
}

void check_thompson_expected_max(const tune::GaussianProcess& gp, const Eigen::MatrixXd& X, double mu1, double mu2,
                                 double v1, double v2, double c12) {
  const std::size_t count = 200000;
  tune::Rng rng(99);
  const Eigen::VectorXd s = tune::thompson_max_samples(gp, X, count, rng);
  ASSERT_EQ(s.size(), static_cast<Eigen::Index>(count));
  const double mean = s.mean();
  const double sd = std::sqrt((s.array() - mean).square().sum() / static_cast<double>(count - 1));
  const double se = sd / std::sqrt(static_cast<double>(count));
  const double expected = clark_expected_max(mu1, mu2, v1, v2, c12);
  EXPECT_NEAR(mean, expected, 4.0 * se) << "standard error " << se;
  // Second moment of the max too (Clark): E[max^2] = (mu1^2 + v1) Phi(a) + (mu2^2 + v2) Phi(-a) +
  // (mu1 + mu2) theta phi(a).
  const double theta = std::sqrt(v1 + v2 - 2.0 * c12), a = (mu1 - mu2) / theta;
  const double second = (mu1 * mu1 + v1) * Phi(a) + (mu2 * mu2 + v2) * Phi(-a) + (mu1 + mu2) * theta * phi(a);
  EXPECT_NEAR(sd * sd, second - expected * expected, 0.02 * (second - expected * expected));
}

TEST(MaxValueEntropySamples, ThompsonPriorMatchesClarkExpectedMax) {
  // No data: f ~ GP(mean, s^2 k), so at two points the max has Clark's closed form.
  const tune::Standardization st{0.7, 1.5};
  const tune::GaussianProcess gp = prior_gp(st);
  Eigen::MatrixXd X(2, 2);
  X << 0.2, 0.45, 0.3, 0.6;
  const tune::Kernel k = gp.kernel();
  const double s2 = st.scale * st.scale;
  const double v = s2 * k(X.col(0), X.col(0)), c12 = s2 * k(X.col(0), X.col(1));
  ASSERT_GT(c12, 0.1 * v);  // genuinely correlated
  check_thompson_expected_max(gp, X, st.mean, st.mean, v, v, c12);
}

TEST(MaxValueEntropySamples, ThompsonPosteriorMatchesClarkExpectedMax) {
  // With data the two means and variances differ; the closed form uses the posterior moments.
  tune::GaussianProcess gp = prior_gp({0.7, 1.5});
  gp.add(tune::Observation{tune::PointQuery{Eigen::Vector2d(0.25, 0.35)}, 2.5, 0});
  gp.add(tune::Observation{tune::PointQuery{Eigen::Vector2d(0.9, 0.1)}, -0.5, 0});
  Eigen::MatrixXd X(2, 2);
  X << 0.2, 0.6, 0.3, 0.5;
  const Eigen::MatrixXd cov = gp.posterior_covariance(X);
  Eigen::VectorXd mean, var;
  gp.predict(X, mean, var);
  ASSERT_GT(std::abs(mean(0) - mean(1)), 0.3);
  check_thompson_expected_max(gp, X, mean(0), mean(1), cov(0, 0), cov(1, 1), cov(0, 1));
  tune::Rng a(1), b(1);
  EXPECT_EQ(tune::thompson_max_samples(gp, X, 10, a), tune::thompson_max_samples(gp, X, 10, b));
}

TEST(MaxValueEntropySamples, ThompsonOnAGridOfPointsIsFinite) {
  // Many nearby points: the covariance is numerically singular and relies on the jitter.
  tune::GaussianProcess gp = prior_gp({0.0, 1.0});
  gp.add(tune::Observation{tune::PointQuery{Eigen::Vector2d(0.5, 0.5)}, 1.0, 0});
  Eigen::MatrixXd X(2, 400);
  for (Eigen::Index i = 0; i < 400; ++i) X.col(i) = Eigen::Vector2d(static_cast<double>(i % 20) / 19.0,
                                                                    static_cast<double>(i / 20) / 19.0);
  tune::Rng rng(3);
  const Eigen::VectorXd s = tune::thompson_max_samples(gp, X, 50, rng);
  EXPECT_TRUE(s.allFinite());
  Eigen::VectorXd mean, var;
  gp.predict(X, mean, var);
  EXPECT_GT(s.mean(), mean.maxCoeff());  // the max of a draw exceeds the max of the mean on average
}

// ---- posterior covariance ------------------------------------------------------------------------

TEST(MaxValueEntropyGp, PosteriorCovarianceEqualsBatchFormula) {
  for (tune::KernelType type : {tune::KernelType::squared_exponential, tune::KernelType::matern52}) {
    tune::GpHyperparameters hp;
    hp.kernel = type;
    hp.lengthscales = Eigen::Vector3d(0.3, 0.5, 0.4);
    hp.outputscale = 1.1;
    hp.noise_variances = {1e-3, 5e-2};
    const tune::Standardization st{2.0, 1.7};
    tune::GaussianProcess gp(3, hp, st);
    std::mt19937_64 rng(17);
    const Eigen::Index n = 25, m = 30;
    Eigen::MatrixXd D(3, n), X(3, m);
    Eigen::VectorXd noise(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      D.col(i) = Eigen::Vector3d(tune::uniform01(rng), tune::uniform01(rng), tune::uniform01(rng));
      const std::size_t group = i % 4 == 0 ? 1 : 0;
      noise(i) = hp.noise_variances[group];
      gp.add(tune::Observation{tune::PointQuery{D.col(i)}, std::sin(4.0 * D(0, i)) + D(1, i), group});
    }
    for (Eigen::Index j = 0; j < m; ++j)
      X.col(j) = j < 5 ? Eigen::Vector3d(D.col(j)) : Eigen::Vector3d(tune::uniform01(rng), tune::uniform01(rng),
                                                                     tune::uniform01(rng));
    const tune::Kernel k = hp.make_kernel();
    Eigen::MatrixXd KDD(n, n), KDX(n, m), KXX(m, m);
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < n; ++j) KDD(i, j) = k(D.col(i), D.col(j));
    KDD.diagonal() += noise;
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < m; ++j) KDX(i, j) = k(D.col(i), X.col(j));
    for (Eigen::Index i = 0; i < m; ++i)
      for (Eigen::Index j = 0; j < m; ++j) KXX(i, j) = k(X.col(i), X.col(j));
    const Eigen::LLT<Eigen::MatrixXd> llt(KDD);
    const Eigen::MatrixXd expected = st.scale * st.scale * (KXX - KDX.transpose() * llt.solve(KDX));
    const Eigen::MatrixXd got = gp.posterior_covariance(X);
    ASSERT_EQ(got.rows(), m);
    ASSERT_EQ(got.cols(), m);
    EXPECT_LT((got - expected).cwiseAbs().maxCoeff(), 1e-10);
    EXPECT_EQ(got, got.transpose());
    Eigen::VectorXd mean, var;
    gp.predict(X, mean, var);
    for (Eigen::Index j = 0; j < m; ++j) {
      EXPECT_NEAR(got(j, j), var(j), 1e-10);
      EXPECT_NEAR(got(j, j), gp.predict(X.col(j)).variance, 1e-10);
    }
    // Not trivially diagonal: the off-diagonal entries carry real correlation.
    EXPECT_GT(got.cwiseAbs().maxCoeff(), 0.0);
    EXPECT_GT((got - Eigen::MatrixXd(got.diagonal().asDiagonal())).cwiseAbs().maxCoeff(), 0.1);
    // No data: the prior covariance.
    const tune::GaussianProcess empty(3, hp, st);
    EXPECT_LT((empty.posterior_covariance(X) - st.scale * st.scale * KXX).cwiseAbs().maxCoeff(), 1e-14);
  }
}

}  // namespace

// ---- the far tail (cmes_log_tail) ---------------------------------------------------------------

// Where the score is still a normal double (gamma up to ~35), cmes_log_tail is its log within the
// asymptote's error (the next order, 1 + O(1 / gamma^2); measured 0.05 at gamma 6, 0.0017 at 34),
// for every noise ratio and over several samples; it goes on decreasing past the point where the score underflows to 0.
TEST(CmesLogTail, MatchesTheLogOfTheScoreWhereItIsRepresentable) {
  const double sigma_g = 0.01;
  for (const double noise_ratio : {0.0, 0.05, 0.5, 2.0, 10.0}) {
    for (const double gamma : {6.0, 10.0, 16.0, 24.0, 34.0}) {
      const double nu = 1.0, f_star = nu + gamma * sigma_g;
      const Eigen::VectorXd fs = samples({f_star, f_star + 0.5 * sigma_g, f_star + 2.0 * sigma_g});
      const double exact = cmes_noisy(nu, sigma_g, noise_ratio * sigma_g, fs);
      ASSERT_GT(exact, 0.0) << "gamma " << gamma << ", noise ratio " << noise_ratio;
      const double tail = tune::cmes_log_tail(nu, sigma_g, noise_ratio * sigma_g, fs);
      EXPECT_NEAR(tail, std::log(exact), 3.0 / (gamma * gamma)) << "gamma " << gamma << ", noise ratio " << noise_ratio;
    }
  }
  for (const double noise_ratio : {0.0, 1.0}) {
    double previous = std::numeric_limits<double>::infinity();
    for (const double gamma : {30.0, 38.0, 41.0, 60.0, 200.0}) {
      const Eigen::VectorXd fs = samples({1.0 + gamma * 0.01});
      if (gamma > 40.0) {
        EXPECT_EQ(cmes_noisy(1.0, 0.01, noise_ratio * 0.01, fs), 0.0);
      }
      const double tail = tune::cmes_log_tail(1.0, 0.01, noise_ratio * 0.01, fs);
      EXPECT_TRUE(std::isfinite(tail));
      EXPECT_LT(tail, previous) << "gamma " << gamma;
      previous = tail;
    }
  }
  EXPECT_EQ(tune::cmes_log_tail(1.0, 0.0, 0.1, samples({2.0})), -std::numeric_limits<double>::infinity());
  EXPECT_THROW(tune::cmes_log_tail(1.0, 0.1, -1.0, samples({2.0})), std::invalid_argument);
}
