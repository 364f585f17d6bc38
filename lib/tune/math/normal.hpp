#pragma once
// Standard-normal helpers for the Expected Improvement acquisition, accurate far into the tails.
//
//   phi(z) = exp(-z^2/2) / sqrt(2 pi),  Phi(z) = P(Z <= z),  Z ~ N(0, 1)
//   tau(z) = z Phi(z) + phi(z) = E[max(0, Z + z)],  so  EI = sigma * tau((mu - incumbent) / sigma)
//
// Infinities: every function returns its limit (e.g. log_ei_tau(-inf) = -inf, ei_tau(-inf) = 0,
// dlog_ei_tau_dz(-inf) = +inf, dlog_ei_tau_dz(+inf) = 0). NaN propagates.

namespace tune::math {

double normal_pdf(double z) noexcept;      // phi(z)
double normal_cdf(double z) noexcept;      // Phi(z), relatively accurate in the lower tail
double log_normal_pdf(double z) noexcept;  // log phi(z)
double log_normal_cdf(double z) noexcept;  // log Phi(z), finite for all finite z

double ei_tau(double z) noexcept;          // tau(z) >= 0
double log_ei_tau(double z) noexcept;      // log tau(z), relative error < 1e-10 for all z >= -1e6
double dlog_ei_tau_dz(double z) noexcept;  // d/dz log tau(z) = Phi(z) / tau(z) > 0

}  // namespace tune::math
