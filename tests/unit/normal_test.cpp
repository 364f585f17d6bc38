// tune::math normal helpers against 50-digit references (boost::multiprecision::cpp_bin_float_50).
#include "tune/math/normal.hpp"

#include <gtest/gtest.h>

#include <boost/math/constants/constants.hpp>
#include <boost/math/quadrature/exp_sinh.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/log1p.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using tune::math::dlog_ei_tau_dz;
using tune::math::ei_tau;
using tune::math::log_ei_tau;
using tune::math::log_normal_cdf;
using tune::math::log_normal_pdf;
using tune::math::normal_cdf;
using tune::math::normal_pdf;

using F = boost::multiprecision::cpp_bin_float_50;

// 50-digit references. The direct tau formula cancels about 2 log10(u) digits for z = -u, i.e. at
// most 8 of the 50 digits on the grid below, which leaves far more than double precision.
F ref_phi(double z) {
  const F x = z;
  return boost::multiprecision::exp(-x * x / 2) / boost::multiprecision::sqrt(2 * boost::math::constants::pi<F>());
}
F ref_Phi(double z) { return boost::math::erfc(-F(z) / boost::multiprecision::sqrt(F(2))) / 2; }
// log Phi(z); for z > 0 as log1p(-Q(z)), since 1 - Q(z) rounds to 1 even at 50 digits once z > 15.
F ref_log_Phi(double z) {
  if (z <= 0) return boost::multiprecision::log(ref_Phi(z));
  return boost::math::log1p(-boost::math::erfc(F(z) / boost::multiprecision::sqrt(F(2))) / 2);
}

// z from -1e4 to 40: geometric on [-1e4, -10], step 1/64 on [-10, 10] (hits the branch switches
// -5 and -3 exactly), step 1/4 on [10, 40].
std::vector<double> grid() {
  std::vector<double> zs;
  for (int i = 0; i < 200; ++i) zs.push_back(-1e4 * std::pow(1e-3, i / 200.0));
  for (int i = -640; i < 640; ++i) zs.push_back(i / 64.0);
  for (int i = 40; i <= 160; ++i) zs.push_back(i / 4.0);
  return zs;
}

struct Reference {
  double z;
  F phi, Phi, log_Phi, tau;
};

// The 50-digit references on the grid, computed once (they dominate the run time).
const std::vector<Reference>& references() {
  static const std::vector<Reference> refs = [] {
    std::vector<Reference> out;
    for (double z : grid()) {
      const F phi = ref_phi(z);
      const F Phi = ref_Phi(z);
      out.push_back({z, phi, Phi, ref_log_Phi(z), F(z) * Phi + phi});
    }
    return out;
  }();
  return refs;
}

// Relative error of a double against a 50-digit reference; results below the normal double range
// (upper-tail masses near z = 40) only need to be right to that absolute level.
::testing::AssertionResult rel_close(double got, const F& ref, double tol) {
  const F err = boost::multiprecision::abs(F(got) - ref);
  const F allowed = tol * boost::multiprecision::abs(ref) + std::numeric_limits<double>::min();
  if (err <= allowed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", reference " << ref.str(20) << ", relative error "
                                       << static_cast<double>(err / boost::multiprecision::abs(ref));
}

TEST(NormalMath, PdfAndCdfMatchReference) {
  for (const auto& [z, phi, Phi, log_Phi, tau] : references()) {
    SCOPED_TRACE("z = " + std::to_string(z));
    EXPECT_TRUE(rel_close(normal_pdf(z), phi, 1e-14));
    // Phi has relative condition number ~ z^2 in the lower tail (erfc's argument z/sqrt2 is itself
    // rounded), so a few z^2 ulp is the best any double implementation can do there.
    EXPECT_TRUE(rel_close(normal_cdf(z), Phi, 1e-14 + 1e-15 * z * z));
    EXPECT_TRUE(rel_close(log_normal_pdf(z), boost::multiprecision::log(phi), 1e-14));
  }
}

TEST(NormalMath, LogCdfMatchesReference) {
  for (const auto& r : references()) {
    SCOPED_TRACE("z = " + std::to_string(r.z));
    EXPECT_TRUE(rel_close(log_normal_cdf(r.z), r.log_Phi, 1e-10));
  }
}

TEST(NormalMath, LogEiTauMatchesReference) {
  for (const auto& r : references()) {
    SCOPED_TRACE("z = " + std::to_string(r.z));
    EXPECT_TRUE(rel_close(log_ei_tau(r.z), boost::multiprecision::log(r.tau), 1e-10));
    EXPECT_TRUE(rel_close(ei_tau(r.z), r.tau, 1e-13));
  }
}

TEST(NormalMath, DlogEiTauMatchesReference) {
  for (const auto& r : references()) {
    SCOPED_TRACE("z = " + std::to_string(r.z));
    EXPECT_TRUE(rel_close(dlog_ei_tau_dz(r.z), r.Phi / r.tau, 1e-10));
    EXPECT_GT(dlog_ei_tau_dz(r.z), 0.0);
  }
}

// Beyond the reach of the 50-digit erfc (exp(-z^2/2) leaves cpp_bin_float's exponent range near
// z = -1e5), check against the asymptotic series h(u) = 1/u^2 - 3/u^4 + 15/u^6 - 105/u^8 + ...
TEST(NormalMath, FarTailMatchesAsymptoticSeries) {
  for (double z : {-1e4, -3e4, -1e5, -1e6}) {
    SCOPED_TRACE("z = " + std::to_string(z));
    const F u = -z;
    const F u2 = u * u;
    const F h = (1 - 3 / u2 + 15 / (u2 * u2) - 105 / (u2 * u2 * u2)) / u2;  // error ~ 945/u^10
    const F log_phi = -u2 / 2 - boost::multiprecision::log(boost::multiprecision::sqrt(2 * boost::math::constants::pi<F>()));
    ASSERT_TRUE(std::isfinite(log_ei_tau(z)));
    EXPECT_TRUE(rel_close(log_ei_tau(z), log_phi + boost::multiprecision::log(h), 1e-10));
    // M(u) = (1 - h(u))/u, and d log tau/dz = M/h.
    const F m = (1 - h) / u;
    EXPECT_TRUE(rel_close(dlog_ei_tau_dz(z), m / h, 1e-10));
    EXPECT_TRUE(rel_close(log_normal_cdf(z), log_phi + boost::multiprecision::log(m), 1e-10));
  }
}

// Values just either side of each branch switch (tau: z = -3, log Phi: z = -5) agree. The points
// are at most 64 ulp from the switch, so the true change of each function between them is far below
// the 1e-12 tolerance and any difference comes from the two formulas.
TEST(NormalMath, ContinuousAcrossBranchSwitches) {
  const auto rel = [](double a, double b) { return std::abs(a - b) / std::abs(b); };
  const auto step = [](double z, int ulps, double dir) {
    for (int i = 0; i < ulps; ++i) z = std::nextafter(z, dir);
    return z;
  };
  for (int ulps : {1, 4, 64}) {
    SCOPED_TRACE("ulps = " + std::to_string(ulps));
    const double tb = step(-3.0, ulps, -10.0);
    const double ta = step(-3.0, ulps - 1, 0.0);  // z = -3 itself is on the direct side
    EXPECT_LT(rel(log_ei_tau(tb), log_ei_tau(ta)), 1e-12);
    EXPECT_LT(rel(ei_tau(tb), ei_tau(ta)), 1e-12);
    EXPECT_LT(rel(dlog_ei_tau_dz(tb), dlog_ei_tau_dz(ta)), 1e-12);
    const double cb = step(-5.0, ulps, -10.0);
    const double ca = step(-5.0, ulps - 1, 0.0);
    EXPECT_LT(rel(log_normal_cdf(cb), log_normal_cdf(ca)), 1e-12);
  }
}

TEST(NormalMath, DerivativeMatchesFiniteDifference) {
  for (double z : grid()) {
    SCOPED_TRACE("z = " + std::to_string(z));
    const double h = 1e-5 * std::max(1.0, std::abs(z));
    const double fd = (log_ei_tau(z + h) - log_ei_tau(z - h)) / (2 * h);
    const double d = dlog_ei_tau_dz(z);
    EXPECT_NEAR(fd, d, 1e-6 * std::abs(d));
  }
}

// tau(z) - tau(-z) = z (Phi(z) + Phi(-z)) = z.
TEST(NormalMath, EiTauReflectionIdentity) {
  for (double z : grid()) {
    if (z < 0) continue;
    SCOPED_TRACE("z = " + std::to_string(z));
    EXPECT_NEAR(ei_tau(z) - ei_tau(-z), z, 1e-14 * std::max(1.0, z));
  }
}

// tau(z) = E[max(0, Z + z)] = int_0^inf s phi(s - z) ds, by exp-sinh quadrature.
TEST(NormalMath, EiTauIsExpectedPositivePart) {
  boost::math::quadrature::exp_sinh<double> integrator;
  for (double z : {-12.0, -6.0, -3.5, -1.0, 0.0, 0.7, 2.5, 8.0}) {
    SCOPED_TRACE("z = " + std::to_string(z));
    const auto integrand = [z](double s) { return s * normal_pdf(s - z); };
    const double integral = integrator.integrate(integrand, 0.0, std::numeric_limits<double>::infinity(), 1e-12);
    EXPECT_NEAR(ei_tau(z), integral, 1e-9 * integral);
  }
}

TEST(NormalMath, InfinitiesAndNaN) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(normal_pdf(-inf), 0.0);
  EXPECT_EQ(normal_pdf(inf), 0.0);
  EXPECT_EQ(normal_cdf(-inf), 0.0);
  EXPECT_EQ(normal_cdf(inf), 1.0);
  EXPECT_EQ(log_normal_pdf(-inf), -inf);
  EXPECT_EQ(log_normal_cdf(-inf), -inf);
  EXPECT_EQ(log_normal_cdf(inf), 0.0);
  EXPECT_EQ(ei_tau(-inf), 0.0);
  EXPECT_EQ(ei_tau(inf), inf);
  EXPECT_EQ(log_ei_tau(-inf), -inf);
  EXPECT_EQ(log_ei_tau(inf), inf);
  EXPECT_EQ(dlog_ei_tau_dz(-inf), inf);
  EXPECT_EQ(dlog_ei_tau_dz(inf), 0.0);
  for (auto fn : {normal_pdf, normal_cdf, log_normal_pdf, log_normal_cdf, ei_tau, log_ei_tau, dlog_ei_tau_dz}) {
    EXPECT_TRUE(std::isnan(fn(nan)));
  }
}

}  // namespace
