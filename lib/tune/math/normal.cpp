#include "tune/math/normal.hpp"

#include <cmath>
#include <limits>
#include <numbers>

namespace tune::math {
namespace {

constexpr double kInvSqrt2Pi = std::numbers::inv_sqrtpi / std::numbers::sqrt2;  // 1/sqrt(2 pi)
constexpr double kLogSqrt2Pi = 0.91893853320467274178;                           // log sqrt(2 pi)

// Below z = kTauSwitch, tau is evaluated as phi(z) * h(-z) instead of z Phi(z) + phi(z): the direct
// formula subtracts two nearly equal numbers (relative cancellation grows like z^2) and then
// underflows to 0 near z = -38, so its logarithm would be useless for the acquisition optimiser.
// At z = -3 the direct formula still loses only about one decimal digit.
constexpr double kTauSwitch = -3.0;
// Below z = kCdfSwitch, log Phi(z) is evaluated as log phi(z) + log M(-z): Phi(z) itself underflows
// to 0 near z = -38, while its logarithm stays perfectly representable.
constexpr double kCdfSwitch = -5.0;

// Tail of Laplace's continued fraction for Mills' ratio, for u >= 3:
//   M(u) = (1 - Phi(u)) / phi(u) = 1/(u + 1/(u + 2/(u + 3/(u + ...)))) = 1/(u + c(u)),
// returns c(u) = 1/(u + 2/(u + 3/(u + ...))). Evaluated backward (all terms are positive, so the
// backward recurrence is stable). The number of terms needed for full double precision is about
// 500/u^2 + 6 (54 at u = 3, 25 at u = 5, 13 at u = 10); we use 800/u^2 + 12, about twice that.
double mills_tail(double u) noexcept {
  const double extra = 800.0 / (u * u);  // u >= 3, so at most ~89; 0 for u = inf
  const int terms = 12 + static_cast<int>(extra);
  double t = 0.0;
  for (int k = terms; k >= 1; --k) t = static_cast<double>(k) / (u + t);
  return t;
}

}  // namespace

// z*z is split exactly into hi + lo (FMA) before exponentiating: rounding z*z alone would put an
// error of about z^2/2 ulp into exp(-z^2/2), i.e. ~1e-13 relative near z = 35.
double normal_pdf(double z) noexcept {
  const double hi = z * z;
  if (!(hi < 1500.0)) return std::isnan(z) ? z : 0.0;  // exp(-750) underflows anyway; avoids inf - inf
  const double lo = std::fma(z, z, -hi);
  return kInvSqrt2Pi * std::exp(-0.5 * hi) * std::exp(-0.5 * lo);
}

// erfc(-z/sqrt2)/2 rather than (1 + erf(z/sqrt2))/2: the latter cancels to 0 for z below about -8,
// erfc keeps full relative accuracy in the lower tail until it underflows (z ~ -38).
double normal_cdf(double z) noexcept { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }

double log_normal_pdf(double z) noexcept { return -0.5 * z * z - kLogSqrt2Pi; }

double log_normal_cdf(double z) noexcept {
  if (z < kCdfSwitch) {
    // log Phi(z) = log phi(u) + log M(u), u = -z, M(u) = 1/(u + c).
    const double u = -z;
    if (std::isinf(u)) return -std::numeric_limits<double>::infinity();
    return log_normal_pdf(z) - std::log(u + mills_tail(u));
  }
  // For z > 0, log Phi(z) = log1p(-Phi(-z)) keeps the tiny upper-tail mass that log(Phi(z)) would
  // round away (Phi(z) rounds to 1 for z above about 8.3).
  if (z > 0.0) return std::log1p(-0.5 * std::erfc(z / std::numbers::sqrt2));
  return std::log(normal_cdf(z));  // also propagates NaN
}

double ei_tau(double z) noexcept {
  if (z < kTauSwitch) {
    // tau(z) = phi(u) h(u), h(u) = 1 - u M(u) = c/(u + c): no cancellation.
    const double u = -z;
    if (std::isinf(u)) return 0.0;
    const double c = mills_tail(u);
    return normal_pdf(z) * (c / (u + c));
  }
  return z * normal_cdf(z) + normal_pdf(z);  // +inf for z = +inf; NaN propagates
}

double log_ei_tau(double z) noexcept {
  if (z < kTauSwitch) {
    // log tau(z) = log phi(u) + log h(u): each term is finite for any finite u, whereas phi(u)
    // underflows near u = 38.6 and the direct formula cancels catastrophically well before that.
    const double u = -z;
    if (std::isinf(u)) return -std::numeric_limits<double>::infinity();
    const double c = mills_tail(u);
    return log_normal_pdf(z) + std::log(c / (u + c));
  }
  return std::log(z * normal_cdf(z) + normal_pdf(z));
}

double dlog_ei_tau_dz(double z) noexcept {
  if (z < kTauSwitch) {
    // Phi(z)/tau(z) = M(u)/h(u) = (1/(u + c)) / (c/(u + c)) = 1/c; the quotient of two underflowing
    // (and, for tau, cancelling) quantities becomes a single well-conditioned division.
    const double u = -z;
    if (std::isinf(u)) return std::numeric_limits<double>::infinity();
    return 1.0 / mills_tail(u);
  }
  if (std::isinf(z)) return 0.0;  // z = +inf: Phi/tau = 1/inf
  return normal_cdf(z) / (z * normal_cdf(z) + normal_pdf(z));
}

}  // namespace tune::math
