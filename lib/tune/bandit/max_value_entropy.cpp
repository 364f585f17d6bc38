#include "tune/bandit/max_value_entropy.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numbers>
#include <stdexcept>
#include <string>

#include "tune/math/normal.hpp"

namespace tune {
namespace {

constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log sqrt(2 pi)
// Each f_* sample is raised to at least max_a (nu(a) + kGuardSds sigma_g(a)) (digest 7.2.3).
constexpr double kGuardSds = 1e-6;
// Above this gamma the Eq. 14 summand is below 1e-340 (it decays like phi(gamma) gamma / 2): 0.
// Also avoids inf * 0 at gamma = +inf (sigma_g tiny).
constexpr double kGammaNegligible = 40.0;
constexpr std::size_t kMaxGaussHermiteNodes = 256;  // beyond this the outer weights underflow

// Inverse Mills ratio lambda(z) = phi(z) / Phi(z) for every z. Above -3 the direct quotient is exact
// to a few ulp. Below, phi and Phi both underflow near z = -38 (and lose relative accuracy in their
// quotient long before if taken as exp(log phi - log Phi), whose two terms are ~z^2/2 and cancel), so
// the quotient is taken from the EI helper through the identity tau(z) = z Phi(z) + phi(z):
//   phi/Phi = tau/Phi - z = 1 / dlog_ei_tau_dz(z) - z,
// where for z < -3 1/dlog_ei_tau_dz(z) is the Mills continued-fraction tail c(u) > 0 (u = -z), so
// both terms are positive and nothing cancels.
double inverse_mills(double z) noexcept {
  if (z < -3.0) return 1.0 / math::dlog_ei_tau_dz(z) - z;
  return math::normal_pdf(z) / math::normal_cdf(z);
}

// H(x) = Phi(x) log Phi(x) / phi(x), the smooth integrand of the noisy correction (see
// cmes_noisy_term); H ~ x/2 as x -> -inf and ~ -1/x as x -> +inf. One erfc per call on |x| < 30
// (it is evaluated 64 times per candidate and sample):
// x <= 0: Phi log Phi / phi directly while Phi and phi are far from underflow (both are relatively
//   accurate there); below -30, log Phi(x) / lambda(x) with the tail-accurate helpers.
// x > 0: log Phi(x) = log1p(-Q) rounds to 0 for large x, so with Q = Phi(-x):
//   H = -Phi(x) M(x) L,  M(x) = Q / phi(x) (Mills ratio; 1 / lambda(-x) beyond 30, where phi
//   underflows),  L = -log1p(-Q) / Q -> 1.
double entropy_kernel(double x) noexcept {
  constexpr double kDirect = 30.0;  // phi(30) ~ 1e-196: quotients of phi and Phi are safe inside
  if (x <= 0.0) {
    if (x < -kDirect) return math::log_normal_cdf(x) / inverse_mills(x);
    const double p = math::normal_cdf(x);
    return p * std::log(p) / math::normal_pdf(x);
  }
  const double q = math::normal_cdf(-x);
  const double mills = x < kDirect ? q / math::normal_pdf(x) : 1.0 / inverse_mills(-x);
  const double l = q > 0.0 ? -std::log1p(-q) / q : 1.0;
  return -(1.0 - q) * mills * l;
}

// One f_* summand of the noisy acquisition (Appendix A), given gamma = (f_* - nu) / sigma_g,
// eps = sigma / s_z and delta = sigma_g / s_z with s_z = sqrt(sigma_g^2 + sigma^2).
//
// Derivation (t = (z - nu) / s_z ~ N(0, 1) under p(z|a), gamma'(t) = (gamma s_z - sigma_g t) / sigma):
//   H0 - H1 = E_t[r log r] + 0.5 (1 - E_t[r t^2])       (using E_t[r] = 1; s_z cancels)
//   E_t[r t^2] = 1 - delta^2 gamma lambda(gamma)         (Stein's lemma twice; closed form)
//   E_t[r log r] = -log Phi(gamma) + E_t[Phi(gamma') log Phi(gamma')] / Phi(gamma)
//   E_t[Phi(gamma') log Phi(gamma')] = eps phi(gamma) E_{x ~ N(eps gamma, delta^2)}[H(x)]
// (substituting x = gamma' and merging the two Gaussian factors), so
//   H0 - H1 = 0.5 delta^2 gamma lambda(gamma) - log Phi(gamma) + eps lambda(gamma) E[H(x)].
// Why not quadrature over z directly: r(z) is a smoothed step of width sigma / sigma_g in t, which a
// 64-node Gauss-Hermite rule cannot resolve for small noise (an error of order 1e-2 at sigma =
// 1e-3 sigma_g). Here the only quadrature is of the smooth H against a Gaussian of sd delta <= 1,
// uniformly accurate from sigma -> 0 (eps = 0: exactly Eq. 14) to sigma -> inf (-> 0).
// The summand without the noise's correction eps lambda E[H]: 0.5 delta^2 gamma lambda - log Phi(gamma).
// One function for the term and its bound, so that both see the same bits.
double cmes_noisy_leading(double gamma, double delta, double lambda) noexcept {
  return 0.5 * delta * delta * gamma * lambda - math::log_normal_cdf(gamma);
}

double cmes_noisy_term(double gamma, double eps, double delta, const GaussHermiteRule& rule) noexcept {
  if (gamma > kGammaNegligible) return 0.0;
  const double lambda = inverse_mills(gamma);
  double expected_h = 0.0;
  if (eps > 0.0) {
    const double centre = eps * gamma;
    const std::size_t n = rule.nodes.size();
    for (std::size_t k = 0; k < n; ++k) expected_h += rule.weights[k] * entropy_kernel(centre + delta * rule.nodes[k]);
  }
  // The exact value is >= 0 (the conditioned density r p is a log-concave reweighting of a Gaussian,
  // so its entropy is at most H0); when the noise dominates (delta -> 0) the terms cancel to 0 and
  // round-off could leave a value of order -1e-16.
  return std::max(0.0, cmes_noisy_leading(gamma, delta, lambda) + eps * lambda * expected_h);
}

// cmes_noisy_term without the correction. H <= 0 (Phi log Phi <= 0), the weights are positive and
// eps, lambda >= 0, so the correction is <= 0 and adding it can only lower the value, in floating
// point too (rounding is monotone): this bounds the term from above at no quadrature.
double cmes_noisy_term_bound(double gamma, double delta) noexcept {
  if (gamma > kGammaNegligible) return 0.0;
  return std::max(0.0, cmes_noisy_leading(gamma, delta, inverse_mills(gamma)));
}

void check_candidates(const Eigen::Ref<const Eigen::VectorXd>& nu, const Eigen::Ref<const Eigen::VectorXd>& sigma_g,
                      const Eigen::Ref<const Eigen::VectorXd>& samples, const char* who) {
  if (nu.size() != sigma_g.size())
    throw std::invalid_argument(std::string(who) + ": " + std::to_string(nu.size()) + " means but " +
                                std::to_string(sigma_g.size()) + " standard deviations");
  if (samples.size() == 0) throw std::invalid_argument(std::string(who) + ": no max-value samples");
  for (Eigen::Index i = 0; i < nu.size(); ++i)
    if (!std::isfinite(nu(i)) || !std::isfinite(sigma_g(i)) || sigma_g(i) < 0.0)
      throw std::invalid_argument(std::string(who) + ": means must be finite and standard deviations finite and >= 0");
  for (Eigen::Index s = 0; s < samples.size(); ++s)
    if (!std::isfinite(samples(s))) throw std::invalid_argument(std::string(who) + ": non-finite max-value sample");
}

// The f_* samples raised to the guard floor max_a (nu(a) + 1e-6 sigma_g(a)), so that gamma >= 1e-6
// for every candidate (see the header).
Eigen::VectorXd guarded_samples(const Eigen::Ref<const Eigen::VectorXd>& nu,
                                const Eigen::Ref<const Eigen::VectorXd>& sigma_g,
                                const Eigen::Ref<const Eigen::VectorXd>& samples) {
  double floor = -std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < nu.size(); ++i) floor = std::max(floor, nu(i) + kGuardSds * sigma_g(i));
  return samples.cwiseMax(floor);
}

// log prod_i Phi((y - mean_i) / sd_i); a point with sd <= 0 is a step at its mean.
double log_max_cdf(double y, const Eigen::Ref<const Eigen::VectorXd>& mean,
                   const Eigen::Ref<const Eigen::VectorXd>& sd) noexcept {
  double total = 0.0;
  for (Eigen::Index i = 0; i < mean.size(); ++i) {
    if (sd(i) > 0.0) {
      total += math::log_normal_cdf((y - mean(i)) / sd(i));
    } else if (y < mean(i)) {
      return -std::numeric_limits<double>::infinity();
    }
  }
  return total;
}

// The y with log_max_cdf(y) = log q, by bisection on the bracket [lo, hi] (widened as needed).
double max_quantile(double q, double lo, double hi, const Eigen::Ref<const Eigen::VectorXd>& mean,
                    const Eigen::Ref<const Eigen::VectorXd>& sd) {
  const double target = std::log(q);
  double width = std::max(hi - lo, 1e-9 * (1.0 + std::abs(lo) + std::abs(hi)));
  for (int i = 0; i < 200 && !(log_max_cdf(lo, mean, sd) < target); ++i, width *= 2.0) lo -= width;
  for (int i = 0; i < 200 && log_max_cdf(hi, mean, sd) < target; ++i, width *= 2.0) hi += width;
  const double tolerance = 1e-12 * (hi - lo);
  for (int i = 0; i < 200 && hi - lo > tolerance; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    (log_max_cdf(mid, mean, sd) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

// ---- max-value samples ---------------------------------------------------------------------------

Eigen::VectorXd gumbel_max_samples(const Eigen::Ref<const Eigen::VectorXd>& mean,
                                   const Eigen::Ref<const Eigen::VectorXd>& sd, std::size_t count, Rng& rng) {
  if (mean.size() != sd.size())
    throw std::invalid_argument("gumbel_max_samples: " + std::to_string(mean.size()) + " means but " +
                                std::to_string(sd.size()) + " standard deviations");
  if (mean.size() == 0) throw std::invalid_argument("gumbel_max_samples: no points");
  if (!mean.allFinite() || !sd.allFinite())
    throw std::invalid_argument("gumbel_max_samples: non-finite mean or standard deviation");
  // Bracket of the digest (7.2.2); max_quantile widens it if a quantile falls outside.
  const Eigen::VectorXd s = sd.cwiseMax(0.0);
  const double lo = (mean - 3.0 * s).minCoeff();
  const double hi = (mean + 5.0 * s).maxCoeff();
  const double y25 = max_quantile(0.25, lo, hi, mean, s);
  const double y50 = max_quantile(0.50, lo, hi, mean, s);
  const double y75 = max_quantile(0.75, lo, hi, mean, s);
  // Gumbel F(y) = exp(-exp(-(y - a) / b)) through the three quartiles (b >= 0 by monotonicity).
  const double b = std::max(0.0, (y25 - y75) / (std::log(std::log(4.0 / 3.0)) - std::log(std::log(4.0))));
  const double a = y50 + b * std::log(std::log(2.0));
  Eigen::VectorXd out(static_cast<Eigen::Index>(count));
  for (Eigen::Index j = 0; j < out.size(); ++j) {
    double u = uniform01(rng);
    while (u <= 0.0) u = uniform01(rng);  // log(-log 0) = +inf: draw again (probability 2^-53)
    out(j) = a - b * std::log(-std::log(u));
  }
  return out;
}

Eigen::VectorXd thompson_max_samples(const GaussianProcess& gp, const Eigen::MatrixXd& points, std::size_t count,
                                     Rng& rng) {
  const Eigen::Index m = points.cols();
  if (m == 0) throw std::invalid_argument("thompson_max_samples: no points");
  Eigen::VectorXd mean, variance;
  gp.predict(points, mean, variance);
  const Eigen::MatrixXd cov = gp.posterior_covariance(points);
  const Eigen::Index c = static_cast<Eigen::Index>(count);
  const double base = cov.diagonal().mean();
  if (!(base > 0.0)) return Eigen::VectorXd::Constant(c, mean.maxCoeff());  // f is known there
  // Posterior covariances are often numerically singular (nearby points, data on the points): a
  // jitter of 1e-6 times the mean variance makes the factorisation succeed while perturbing each
  // sample by ~1e-3 of its sd; raised tenfold on failure.
  Eigen::LLT<Eigen::MatrixXd> chol;
  bool ok = false;
  for (double jitter = 1e-6 * base; !ok && jitter <= 0.1 * base * (1.0 + 1e-12); jitter *= 10.0) {
    Eigen::MatrixXd a = cov;
    a.diagonal().array() += jitter;
    chol.compute(a);
    ok = chol.info() == Eigen::Success;
  }
  if (!ok) throw std::runtime_error("thompson_max_samples: posterior covariance is not positive definite");
  // Standard normals by Box-Muller (both outputs of each pair used), filled column by column.
  Eigen::MatrixXd z(m, c);
  double* data = z.data();
  const Eigen::Index total = m * c;
  for (Eigen::Index k = 0; k < total; k += 2) {
    const double u1 = 1.0 - uniform01(rng);  // (0, 1]: log u1 is finite
    const double u2 = uniform01(rng);
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * std::numbers::pi * u2;
    data[k] = r * std::cos(angle);
    if (k + 1 < total) data[k + 1] = r * std::sin(angle);
  }
  const Eigen::MatrixXd f = (chol.matrixL() * z).colwise() + mean;
  return f.colwise().maxCoeff().transpose();
}

// ---- Gauss-Hermite quadrature --------------------------------------------------------------------

namespace {

// Orthonormal probabilists' Hermite polynomials p_0..p_n at x (p_j = He_j / sqrt(j!)):
// p_{j+1} = (x p_j - sqrt(j) p_{j-1}) / sqrt(j + 1). Returns p_n, sets p_{n-1} and sum_{j<n} p_j^2.
double orthonormal_hermite(std::size_t n, double x, double& previous, double& sum_sq) {
  double p_prev = 0.0, p = 1.0;
  sum_sq = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    sum_sq += p * p;
    const double next = (x * p - std::sqrt(static_cast<double>(j)) * p_prev) / std::sqrt(static_cast<double>(j + 1));
    p_prev = p;
    p = next;
  }
  previous = p_prev;
  return p;
}

GaussHermiteRule make_gauss_hermite(std::size_t n) {
  const Eigen::Index size = static_cast<Eigen::Index>(n);
  // Golub-Welsch: the nodes are the eigenvalues of the symmetric tridiagonal Jacobi matrix of the
  // monic recurrence He_{j+1} = x He_j - j He_{j-1}.
  Eigen::MatrixXd jacobi = Eigen::MatrixXd::Zero(size, size);
  for (Eigen::Index j = 0; j + 1 < size; ++j) jacobi(j, j + 1) = jacobi(j + 1, j) = std::sqrt(static_cast<double>(j + 1));
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(jacobi, Eigen::EigenvaluesOnly);
  GaussHermiteRule rule;
  rule.nodes.resize(n);
  rule.weights.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    double x = solver.eigenvalues()(static_cast<Eigen::Index>(k));
    double previous = 0.0, sum_sq = 0.0;
    // Newton on p_n (p_n' = sqrt(n) p_{n-1}): the eigenvalues are accurate to ~1e-16 max|x| in
    // absolute terms; two steps make the inner nodes accurate to ~1 ulp as well.
    for (int it = 0; it < 2; ++it) {
      const double p = orthonormal_hermite(n, x, previous, sum_sq);
      if (previous != 0.0) x -= p / (std::sqrt(static_cast<double>(n)) * previous);
    }
    orthonormal_hermite(n, x, previous, sum_sq);
    rule.nodes[k] = x;
    rule.weights[k] = 1.0 / sum_sq;  // Christoffel number: relatively accurate even when tiny
  }
  // Exact symmetry about 0 (the rule is symmetric; this removes round-off asymmetry).
  for (std::size_t k = 0; k < n / 2; ++k) {
    const std::size_t mirror = n - 1 - k;
    const double x = 0.5 * (rule.nodes[mirror] - rule.nodes[k]);
    const double w = 0.5 * (rule.weights[k] + rule.weights[mirror]);
    rule.nodes[k] = -x;
    rule.nodes[mirror] = x;
    rule.weights[k] = rule.weights[mirror] = w;
  }
  if (n % 2 == 1) rule.nodes[n / 2] = 0.0;
  double total = 0.0;
  for (double w : rule.weights) total += w;
  for (double& w : rule.weights) w /= total;
  return rule;
}

}  // namespace

const GaussHermiteRule& gauss_hermite_rule(std::size_t n) {
  if (n < 1 || n > kMaxGaussHermiteNodes)
    throw std::invalid_argument("gauss_hermite_rule: the number of nodes must be in [1, " +
                                std::to_string(kMaxGaussHermiteNodes) + "], not " + std::to_string(n));
  static std::mutex mutex;
  static std::map<std::size_t, std::unique_ptr<const GaussHermiteRule>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[n];
  if (!slot) slot = std::make_unique<const GaussHermiteRule>(make_gauss_hermite(n));
  return *slot;
}

// ---- CMES / MES ----------------------------------------------------------------------------------

double cmes_noiseless_term(double gamma) noexcept {
  if (std::isnan(gamma)) return gamma;
  if (gamma > kGammaNegligible) return 0.0;
  if (gamma < -3.0) {
    // With u = -gamma, lambda = phi/Phi = u + c (c = Mills tail) and log Phi = log phi - log lambda:
    //   gamma lambda / 2 - log Phi = log sqrt(2 pi) + log(u + c) - u c / 2.
    // The direct form subtracts two terms ~ gamma^2 / 2 to leave ~ log(-gamma): catastrophic
    // cancellation (and inf - inf once Phi underflows) for very negative gamma.
    const double u = -gamma;
    if (std::isinf(u)) return std::numeric_limits<double>::infinity();
    const double c = 1.0 / math::dlog_ei_tau_dz(gamma);
    return kLogSqrt2Pi + std::log(u + c) - 0.5 * u * c;
  }
  return 0.5 * gamma * inverse_mills(gamma) - math::log_normal_cdf(gamma);
}

Eigen::VectorXd cmes_noiseless(const Eigen::Ref<const Eigen::VectorXd>& nu,
                               const Eigen::Ref<const Eigen::VectorXd>& sigma_g,
                               const Eigen::Ref<const Eigen::VectorXd>& f_star_samples) {
  check_candidates(nu, sigma_g, f_star_samples, "cmes_noiseless");
  const Eigen::VectorXd f_star = guarded_samples(nu, sigma_g, f_star_samples);
  const Eigen::Index n_samples = f_star.size();
  Eigen::VectorXd out(nu.size());
  for (Eigen::Index i = 0; i < nu.size(); ++i) {
    const double sd = sigma_g(i);
    double total = 0.0;
    if (sd > 0.0)  // sigma_g = 0: g(a) is known, the query carries no information
      for (Eigen::Index s = 0; s < n_samples; ++s) total += cmes_noiseless_term((f_star(s) - nu(i)) / sd);
    out(i) = total / static_cast<double>(n_samples);
  }
  return out;
}

double cmes_noiseless(double nu, double sigma_g, const Eigen::Ref<const Eigen::VectorXd>& f_star_samples) {
  return cmes_noiseless(Eigen::VectorXd::Constant(1, nu), Eigen::VectorXd::Constant(1, sigma_g), f_star_samples)(0);
}

namespace {
// The input checks of the noisy scores (candidates, samples, noise) and the guarded f_* samples.
Eigen::VectorXd checked_noisy_samples(const Eigen::Ref<const Eigen::VectorXd>& nu,
                                      const Eigen::Ref<const Eigen::VectorXd>& sigma_g, double noise_sd,
                                      const Eigen::Ref<const Eigen::VectorXd>& f_star_samples, const char* who) {
  check_candidates(nu, sigma_g, f_star_samples, who);
  if (!(noise_sd >= 0.0) || !std::isfinite(noise_sd))
    throw std::invalid_argument(std::string(who) + ": the noise standard deviation must be finite and >= 0");
  return guarded_samples(nu, sigma_g, f_star_samples);
}
}  // namespace

// The mean over the guarded f_* samples of term(gamma, eps, delta) per candidate: cmes_noisy and its
// bound, summed in the same order.
template <class Term>
Eigen::VectorXd noisy_sample_means(const Eigen::Ref<const Eigen::VectorXd>& nu,
                                   const Eigen::Ref<const Eigen::VectorXd>& sigma_g, double noise_sd,
                                   const Eigen::Ref<const Eigen::VectorXd>& f_star_samples, const char* who,
                                   Term term) {
  const Eigen::VectorXd f_star = checked_noisy_samples(nu, sigma_g, noise_sd, f_star_samples, who);
  const Eigen::Index n_samples = f_star.size();
  Eigen::VectorXd out(nu.size());
  for (Eigen::Index i = 0; i < nu.size(); ++i) {
    const double sd = sigma_g(i);
    double total = 0.0;
    if (sd > 0.0) {
      const double s_z = std::hypot(sd, noise_sd);  // predictive sd of z
      const double eps = noise_sd / s_z, delta = sd / s_z;
      for (Eigen::Index s = 0; s < n_samples; ++s) total += term((f_star(s) - nu(i)) / sd, eps, delta);
    }
    out(i) = total / static_cast<double>(n_samples);
  }
  return out;
}

Eigen::VectorXd cmes_noisy(const Eigen::Ref<const Eigen::VectorXd>& nu, const Eigen::Ref<const Eigen::VectorXd>& sigma_g,
                           double noise_sd, const Eigen::Ref<const Eigen::VectorXd>& f_star_samples, std::size_t nodes) {
  const GaussHermiteRule& rule = gauss_hermite_rule(nodes);
  return noisy_sample_means(nu, sigma_g, noise_sd, f_star_samples, "cmes_noisy",
                            [&rule](double gamma, double eps, double delta) {
                              return cmes_noisy_term(gamma, eps, delta, rule);
                            });
}

double cmes_noisy_upper_bound(double nu, double sigma_g, double noise_sd,
                              const Eigen::Ref<const Eigen::VectorXd>& f_star_samples) {
  return noisy_sample_means(Eigen::VectorXd::Constant(1, nu), Eigen::VectorXd::Constant(1, sigma_g), noise_sd,
                            f_star_samples, "cmes_noisy_upper_bound",
                            [](double gamma, double, double delta) { return cmes_noisy_term_bound(gamma, delta); })(0);
}

double cmes_noisy(double nu, double sigma_g, double noise_sd, const Eigen::Ref<const Eigen::VectorXd>& f_star_samples,
                  std::size_t nodes) {
  return cmes_noisy(Eigen::VectorXd::Constant(1, nu), Eigen::VectorXd::Constant(1, sigma_g), noise_sd, f_star_samples,
                    nodes)(0);
}

double cmes_log_tail(double nu, double sigma_g, double noise_sd, const Eigen::Ref<const Eigen::VectorXd>& f_star_samples) {
  const Eigen::VectorXd f_star = checked_noisy_samples(Eigen::VectorXd::Constant(1, nu), Eigen::VectorXd::Constant(1, sigma_g),
                                                       noise_sd, f_star_samples, "cmes_log_tail");
  if (!(sigma_g > 0.0)) return -std::numeric_limits<double>::infinity();
  const double log_delta_sq = 2.0 * (std::log(sigma_g) - std::log(std::hypot(sigma_g, noise_sd)));
  Eigen::VectorXd logs(f_star.size());
  for (Eigen::Index s = 0; s < f_star.size(); ++s) {
    const double gamma = (f_star(s) - nu) / sigma_g;  // >= 1e-6 after the guard
    logs(s) = -0.5 * gamma * gamma - kLogSqrt2Pi + log_delta_sq + std::log(0.5 * gamma + 1.0 / gamma);
  }
  const double top = logs.maxCoeff();
  return top + std::log((logs.array() - top).exp().sum() / static_cast<double>(logs.size()));
}

double mes(double nu, double sigma_g, const Eigen::Ref<const Eigen::VectorXd>& g_star_samples) {
  return cmes_noiseless(nu, sigma_g, g_star_samples);
}

Eigen::VectorXd mes(const Eigen::Ref<const Eigen::VectorXd>& nu, const Eigen::Ref<const Eigen::VectorXd>& sigma_g,
                    const Eigen::Ref<const Eigen::VectorXd>& g_star_samples) {
  return cmes_noiseless(nu, sigma_g, g_star_samples);
}

}  // namespace tune
