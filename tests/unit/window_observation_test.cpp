// Window observations (uniform box, Gaussian window): the covariance functions of observation.hpp
// against numerical integration of the point kernel written here (Boost Gauss-Kronrod and
// Gauss-Legendre, Monte Carlo), their gradients against central finite differences, and a GP over
// a mix of point, box and Gaussian observations against the batch formula.
#include "tune/gp/observation.hpp"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <boost/math/quadrature/gauss.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>
#include <functional>
#include <iomanip>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/hyperparameter_fit.hpp"
#include "tune/gp/window_kernels.hpp"
#include "tune/random/rng.hpp"

namespace {

using tune::BoxQuery;
using tune::GaussianWindowQuery;
using tune::Kernel;
using tune::KernelType;
using tune::Observation;
using tune::PointQuery;
using tune::Query;

constexpr KernelType kSe = KernelType::squared_exponential;
constexpr KernelType kMatern = KernelType::matern52;

Eigen::VectorXd vec(std::initializer_list<double> v) {
  Eigen::VectorXd x(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double e : v) x(i++) = e;
  return x;
}

Query point(const Eigen::VectorXd& x) { return PointQuery{x}; }
Query box(const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) { return BoxQuery{lo, hi}; }
Query gauss(const Eigen::VectorXd& c, const Eigen::VectorXd& sd) { return GaussianWindowQuery{c, sd}; }

Kernel kernel(KernelType type, const Eigen::VectorXd& ls, double s = 1.3) { return Kernel(type, ls, s); }

std::string sci(double v) {
  std::ostringstream out;
  out << std::scientific << std::setprecision(2) << v;
  return out.str();
}

double rel_err(double got, double ref) { return std::abs(got - ref) / std::max(std::abs(ref), 1e-300); }

double uniform(std::mt19937_64& rng, double lo, double hi) { return lo + (hi - lo) * tune::uniform01(rng); }

double normal(std::mt19937_64& rng) {  // Box-Muller
  const double u1 = 1.0 - tune::uniform01(rng), u2 = tune::uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// ---------------------------------------------------------------------------------------------
// Reference: E[k(U, V)] by nested quadrature over every random coordinate of U ~ a and V ~ b,
// with the point kernel only. The innermost levels are adaptive Gauss-Kronrod (61 points, relative
// error estimate 1e-12 by default, which for this rule means a far smaller error); outer levels, if
// any, fixed 20-point Gauss-Legendre panels (the inner integrals are smooth functions of the outer
// coordinates).

struct Coordinate {
  bool of_a;         // a coordinate of U (else of V)
  Eigen::Index dim;  // which coordinate
  bool gaussian;     // N(lo, hi^2) if true, else uniform on [lo, hi]
  double lo, hi;
};

std::vector<Coordinate> random_coordinates(const Query& q, bool of_a) {
  std::vector<Coordinate> out;
  if (const auto* b = std::get_if<BoxQuery>(&q)) {
    for (Eigen::Index i = 0; i < b->lower.size(); ++i)
      if (b->upper(i) > b->lower(i)) out.push_back({of_a, i, false, b->lower(i), b->upper(i)});
  } else if (const auto* g = std::get_if<GaussianWindowQuery>(&q)) {
    for (Eigen::Index i = 0; i < g->centre.size(); ++i)
      if (g->sd(i) > 0) out.push_back({of_a, i, true, g->centre(i), g->sd(i)});
  }
  return out;
}

Eigen::VectorXd fixed_part(const Query& q) { return tune::location(q); }

// Both rules integrate over a fixed reference interval ([0, 1] or [-1, 1]): Boost's adaptive
// Gauss-Kronrod compares its unscaled error estimate with a scaled tolerance, so on a very short
// interval it would never meet the tolerance and recurse to the maximum depth.
double integrate_coordinate(const Coordinate& c, bool adaptive, int panels, double tol,
                            const std::function<double(double)>& f) {
  using boost::math::quadrature::gauss;
  using boost::math::quadrature::gauss_kronrod;
  if (!c.gaussian) {
    // The average over [lo, hi] is the integral over t in [0, 1] of f(lo + (hi - lo) t).
    const auto g = [&](double t) { return f(c.lo + (c.hi - c.lo) * t); };
    if (adaptive) return gauss_kronrod<double, 61>::integrate(g, 0.0, 1.0, 12, tol);
    double sum = 0.0;
    for (int p = 0; p < panels; ++p)
      sum += gauss<double, 20>::integrate(g, static_cast<double>(p) / panels, static_cast<double>(p + 1) / panels);
    return sum;
  }
  // Gaussian: the integral of phi(z) f(centre + sd z) over |z| <= 12 (the rest is below 1e-31),
  // with z = 12 t.
  const auto g = [&](double t) {
    const double z = 12.0 * t;
    return 12.0 * std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi) * f(c.lo + c.hi * z);
  };
  if (adaptive) return gauss_kronrod<double, 61>::integrate(g, -1.0, 1.0, 12, tol);
  double sum = 0.0;
  for (int p = 0; p < panels; ++p)
    sum += gauss<double, 20>::integrate(g, -1.0 + 2.0 * p / panels, -1.0 + 2.0 * (p + 1) / panels);
  return sum;
}

struct Rule {
  int adaptive_levels = 2;   // innermost levels integrated adaptively
  double tol = 1e-12;        // their relative error estimate
  int uniform_panels = 1;    // 20-point Gauss-Legendre panels of the outer levels
  int gaussian_panels = 6;   // (over |z| <= 12 for a Gaussian coordinate)
};

double reference_expectation(const Kernel& k, const Query& a, const Query& b, const Rule& rule = {}) {
  std::vector<Coordinate> coords = random_coordinates(a, true);
  for (const Coordinate& c : random_coordinates(b, false)) coords.push_back(c);
  Eigen::VectorXd u = fixed_part(a), v = fixed_part(b);
  const std::size_t n = coords.size();
  std::function<double(std::size_t)> level = [&](std::size_t j) -> double {
    if (j == n) return k(u, v);
    const Coordinate& c = coords[j];
    const bool adaptive = j + static_cast<std::size_t>(rule.adaptive_levels) >= n;
    const int panels = c.gaussian ? rule.gaussian_panels : rule.uniform_panels;
    return integrate_coordinate(c, adaptive, panels, rule.tol, [&](double t) {
      (c.of_a ? u : v)(c.dim) = t;
      return level(j + 1);
    });
  };
  return level(0);
}

// ---------------------------------------------------------------------------------------------
// Squared exponential: closed forms against quadrature.

TEST(WindowSeClosedForm, PointBoxOneDimensionAgainstGaussKronrod) {
  // Lengthscales from far below to far above the width; widths on both sides of the
  // Gauss-Legendre switch (0.25 L); points inside, at the edge, and in the tails.
  double worst = 0.0;
  for (double l : {0.01, 0.1, 0.3, 1.0, 20.0}) {
    const Kernel k = kernel(kSe, vec({l}));
    for (double w_over_l : {1e-6, 1e-3, 0.1, 0.2499, 0.2501, 1.0, 5.0, 60.0}) {
      const double w = w_over_l * l;
      const double lo = 0.4 - 0.5 * w;
      // The centre, just inside the edge, the edge, and 1, 3 and 8 lengthscales beyond it.
      for (double beyond : {-0.5 * w / l, -0.1, 0.0, 1.0, 3.0, 8.0}) {
        const double x = lo + w + std::max(beyond, -0.5 * w / l) * l;
        const Query q = box(vec({lo}), vec({lo + w}));
        const double got = tune::covariance(k, q, vec({x}));
        const double ref = reference_expectation(k, q, point(vec({x})));
        ASSERT_GT(ref, 1e-30);
        worst = std::max(worst, rel_err(got, ref));
        EXPECT_LT(rel_err(got, ref), 1e-10) << "l " << l << " w/l " << w_over_l << " beyond " << beyond;
        // The symmetric call and the point-as-query call agree.
        EXPECT_NEAR(tune::covariance(k, point(vec({x})), q), got, 1e-15 * std::abs(got));
      }
    }
  }
  RecordProperty("worst_relative_error", sci(worst));
}

TEST(WindowSeClosedForm, BoxBoxOneDimensionAgainstGaussKronrod) {
  double worst = 0.0;
  for (double l : {0.05, 0.3, 2.0, 20.0}) {
    const Kernel k = kernel(kSe, vec({l}));
    // (lo1, w1, lo2, w2) in units of l: identical, overlapping, nested, touching, disjoint, far,
    // narrow against wide, narrow against narrow.
    const double cases[][4] = {{0, 1, 0, 1},     {0, 2, 1, 2},       {0, 4, 1, 0.5},   {0, 1, 1, 1},
                               {0, 1, 2.5, 1.5}, {0, 0.7, 5, 0.7},   {0, 3, 1, 0.1},   {0, 0.1, 0.05, 0.2},
                               {0, 1e-3, 0, 2},  {0, 0.3, 0.1, 0.26}, {0, 30, 10, 40}, {0, 1e-4, 0.5, 1e-4}};
    for (const auto& c : cases) {
      const Query a = box(vec({0.2 + c[0] * l}), vec({0.2 + (c[0] + c[1]) * l}));
      const Query b = box(vec({0.2 + c[2] * l}), vec({0.2 + (c[2] + c[3]) * l}));
      const double got = tune::covariance(k, a, b);
      const double ref = reference_expectation(k, a, b);
      worst = std::max(worst, rel_err(got, ref));
      EXPECT_LT(rel_err(got, ref), 1e-10) << "l " << l << " case " << c[0] << " " << c[1] << " " << c[2] << " " << c[3];
      EXPECT_NEAR(tune::covariance(k, b, a), got, 1e-14 * got);
    }
  }
  RecordProperty("worst_relative_error", sci(worst));
}

TEST(WindowSeClosedForm, GaussianWindowsOneDimensionAgainstGaussKronrod) {
  double worst = 0.0;
  int checked = 0;
  auto check = [&](double got, double ref, const std::string& what) {
    // (Below ~1e-30 the reference itself is cut off by its |z| <= 12 range; none of these is.)
    ASSERT_GT(ref, 1e-25) << what;
    ++checked;
    worst = std::max(worst, rel_err(got, ref));
    EXPECT_LT(rel_err(got, ref), 1e-10) << what;
  };
  for (double l : {0.05, 0.3, 3.0}) {
    const Kernel k = kernel(kSe, vec({l}));
    for (double sd : {1e-3, 0.05, 0.3, 1.0}) {
      const Query g = gauss(vec({0.45}), vec({sd}));
      for (double x : {0.45, 0.6, 0.75}) {
        const std::string where = " l " + std::to_string(l) + " sd " + std::to_string(sd) + " x " + std::to_string(x);
        check(tune::covariance(k, g, vec({x})), reference_expectation(k, g, point(vec({x}))), "point-Gaussian" + where);
        const Query g2 = gauss(vec({x}), vec({0.7 * sd + 0.02}));
        check(tune::covariance(k, g, g2), reference_expectation(k, g, g2), "Gaussian-Gaussian" + where);
        // Boxes narrow and wide against L.
        for (double w : {1e-3, 0.1, 0.8}) {
          const Query b = box(vec({x - 0.3 * w}), vec({x + 0.7 * w}));
          const double got = tune::covariance(k, b, g);
          check(got, reference_expectation(k, b, g), "box-Gaussian w " + std::to_string(w) + where);
          EXPECT_NEAR(tune::covariance(k, g, b), got, 1e-14 * got);
        }
      }
    }
  }
  EXPECT_EQ(checked, 3 * 4 * 3 * 5);
  RecordProperty("worst_relative_error", sci(worst));
}

TEST(WindowSeClosedForm, TwoDimensionsAgainstNestedQuadrature) {
  // The full two-dimensional kernel integrated (not a product of one-dimensional integrals), with
  // unequal lengthscales so that a swap of coordinates would show.
  const Kernel k = kernel(kSe, vec({0.25, 0.6}), 0.8);
  const Query b1 = box(vec({0.1, 0.3}), vec({0.5, 0.45}));
  const Query b2 = box(vec({0.35, 0.0}), vec({0.6, 0.9}));
  const Query b3 = box(vec({0.2, 0.7}), vec({0.2, 0.95}));  // first coordinate fixed
  const Query g1 = gauss(vec({0.4, 0.5}), vec({0.1, 0.3}));
  const Query g2 = gauss(vec({0.7, 0.2}), vec({0.0, 0.15}));  // first coordinate fixed
  const Query p = point(vec({0.55, 0.35}));
  // (Pairs with four random coordinates of which some are Gaussian are left to the Monte Carlo
  // test below: their nested quadrature is too slow for a unit test.)
  const std::vector<std::pair<Query, Query>> pairs = {{b1, p}, {b1, b1}, {b1, b2}, {b2, b3}, {b3, p},
                                                     {g1, p}, {g2, p},  {g1, g2}, {b3, g2}, {b2, g2}};
  double worst = 0.0;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const double got = tune::covariance(k, pairs[i].first, pairs[i].second);
    const double ref = reference_expectation(k, pairs[i].first, pairs[i].second);
    worst = std::max(worst, rel_err(got, ref));
    EXPECT_LT(rel_err(got, ref), 1e-10) << "pair " << i << ": " << got << " vs " << ref;
  }
  RecordProperty("worst_relative_error", sci(worst));
}

TEST(WindowSeClosedForm, GaussianWindowsThreeDimensionsAgainstMonteCarlo) {
  // 4e6 samples: the closed forms must lie within 5 standard errors (and the standard error is
  // below 5e-4 relative, so this is a real check of the sqrt factors and the ell^2 + tau^2 forms).
  const Kernel k = kernel(kSe, vec({0.3, 0.5, 0.8}), 1.1);
  const Eigen::VectorXd c = vec({0.4, 0.5, 0.6}), sd = vec({0.2, 0.05, 0.4});
  const Eigen::VectorXd c2 = vec({0.6, 0.3, 0.5}), sd2 = vec({0.1, 0.3, 0.0});
  const Eigen::VectorXd lo = vec({0.1, 0.2, 0.5}), hi = vec({0.5, 0.9, 0.6});
  const Eigen::VectorXd x = vec({0.7, 0.1, 0.4});
  std::mt19937_64 rng(5);
  const int n = 4'000'000;
  double s[3] = {0, 0, 0}, ss[3] = {0, 0, 0};
  Eigen::VectorXd u(3), v(3), b(3);
  for (int m = 0; m < n; ++m) {
    for (Eigen::Index i = 0; i < 3; ++i) {
      u(i) = c(i) + sd(i) * normal(rng);
      v(i) = c2(i) + sd2(i) * normal(rng);
      b(i) = uniform(rng, lo(i), hi(i));
    }
    const double f[3] = {k(u, x), k(u, v), k(b, u)};
    for (int j = 0; j < 3; ++j) {
      s[j] += f[j];
      ss[j] += f[j] * f[j];
    }
  }
  const double got[3] = {tune::covariance(k, gauss(c, sd), x), tune::covariance(k, gauss(c, sd), gauss(c2, sd2)),
                         tune::covariance(k, box(lo, hi), gauss(c, sd))};
  for (int j = 0; j < 3; ++j) {
    const double mean = s[j] / n, se = std::sqrt((ss[j] / n - mean * mean) / n);
    EXPECT_LT(se, 5e-4 * mean);
    EXPECT_LT(std::abs(got[j] - mean), 5.0 * se) << "case " << j << ": " << got[j] << " vs MC " << mean << " +- " << se;
  }
}

// ---------------------------------------------------------------------------------------------
// Matern-5/2: the quasi-Monte Carlo rule against much finer quadrature.

TEST(WindowMaternQuadrature, AgreesWithFineQuadratureToStatedTolerance) {
  // Stated accuracy of the 64-node rule, for windows up to about two lengthscales wide (boxes) or
  // one lengthscale (Gaussian sd): relative 1e-3 for boxes, 1e-2 for Gaussian windows (worst
  // measured values are recorded as properties).
  constexpr double kBoxTolerance = 1e-3, kGaussianTolerance = 1e-2;
  double worst_box = 0.0, worst_gaussian = 0.0;
  auto check = [&](const Kernel& k, const Query& a, const Query& b, double ref, const std::string& what) {
    const double got = tune::covariance(k, a, b);
    const bool gaussian = a.index() == 2 || b.index() == 2;
    double& worst = gaussian ? worst_gaussian : worst_box;
    worst = std::max(worst, rel_err(got, ref));
    EXPECT_LT(rel_err(got, ref), gaussian ? kGaussianTolerance : kBoxTolerance) << what << ": " << got << " vs " << ref;
  };
  {
    const Kernel k = kernel(kMatern, vec({0.3}));
    const std::vector<std::pair<Query, Query>> pairs = {
        {box(vec({0.2}), vec({0.6})), point(vec({0.5}))},           {box(vec({0.2}), vec({0.6})), point(vec({0.9}))},
        {box(vec({0.2}), vec({0.6})), box(vec({0.3}), vec({0.8}))},  {box(vec({0.2}), vec({0.6})), box(vec({0.2}), vec({0.6}))},
        {box(vec({0.1}), vec({0.2})), box(vec({0.5}), vec({0.55}))}, {gauss(vec({0.4}), vec({0.1})), point(vec({0.5}))},
        {gauss(vec({0.4}), vec({0.3})), point(vec({0.9}))},         {gauss(vec({0.4}), vec({0.1})), gauss(vec({0.6}), vec({0.2}))},
        {gauss(vec({0.4}), vec({0.2})), box(vec({0.2}), vec({0.7}))}};
    for (std::size_t i = 0; i < pairs.size(); ++i)
      check(k, pairs[i].first, pairs[i].second, reference_expectation(k, pairs[i].first, pairs[i].second),
            "1-D pair " + std::to_string(i));
  }
  {
    // Matern is only C^4 at r = 0: a looser adaptive tolerance with outer Gauss-Legendre panels still
    // gives ~1e-7, far below the tolerances under test.
    const Rule rule{.adaptive_levels = 1, .tol = 1e-8, .uniform_panels = 2, .gaussian_panels = 4};
    const Kernel k = kernel(kMatern, vec({0.25, 0.6}), 0.8);
    const Query b1 = box(vec({0.1, 0.3}), vec({0.5, 0.45}));
    const Query b2 = box(vec({0.35, 0.0}), vec({0.6, 0.9}));
    const Query g1 = gauss(vec({0.4, 0.5}), vec({0.1, 0.3}));
    const Query g2 = gauss(vec({0.6, 0.3}), vec({0.2, 0.1}));
    const Query p = point(vec({0.55, 0.35}));
    const std::vector<std::pair<Query, Query>> pairs = {{b1, p}, {b2, p}, {g1, p}, {b1, b2}, {b1, b1}, {g1, b1}};
    for (std::size_t i = 0; i < pairs.size(); ++i)
      check(k, pairs[i].first, pairs[i].second, reference_expectation(k, pairs[i].first, pairs[i].second, rule),
            "2-D pair " + std::to_string(i));
    // Gaussian-Gaussian: U - V ~ N(c1 - c2, sd1^2 + sd2^2), a two-dimensional reference.
    const Query diff = gauss(vec({-0.2, 0.2}), vec({std::hypot(0.1, 0.2), std::hypot(0.3, 0.1)}));
    check(k, g1, g2, reference_expectation(k, diff, point(vec({0.0, 0.0})), rule), "2-D Gaussian-Gaussian");
    const Query self = gauss(vec({0.0, 0.0}), vec({0.1 * std::sqrt(2.0), 0.3 * std::sqrt(2.0)}));
    check(k, g1, g1, reference_expectation(k, self, point(vec({0.0, 0.0})), rule), "2-D Gaussian with itself");
  }
  RecordProperty("worst_relative_error_box", sci(worst_box));
  RecordProperty("worst_relative_error_gaussian", sci(worst_gaussian));
}

TEST(WindowMaternQuadrature, NodeSetIsAMidpointSobolNet) {
  for (std::size_t d : {1u, 3u, 7u}) {
    const tune::window::NodeSet& nodes = tune::window::window_nodes(d);
    ASSERT_EQ(nodes.uniform.rows(), static_cast<Eigen::Index>(d));
    ASSERT_EQ(nodes.uniform.cols(), static_cast<Eigen::Index>(tune::window::kWindowNodes));
    for (Eigen::Index i = 0; i < nodes.uniform.rows(); ++i) {
      // Every coordinate is a permutation of the 64 cell midpoints.
      std::vector<double> row;
      for (Eigen::Index j = 0; j < nodes.uniform.cols(); ++j) row.push_back(nodes.uniform(i, j));
      std::sort(row.begin(), row.end());
      for (std::size_t j = 0; j < row.size(); ++j) EXPECT_EQ(row[j], (static_cast<double>(j) + 0.5) / 64.0);
      // The Gaussian nodes: the conditional means of the matching normal cells (ordered as the
      // uniform nodes, mean exactly 0, mean square a little below 1).
      for (Eigen::Index j = 0; j < nodes.uniform.cols(); ++j)
        for (Eigen::Index m = 0; m < nodes.uniform.cols(); ++m) {
          if (nodes.uniform(i, j) < nodes.uniform(i, m)) {
            EXPECT_LT(nodes.normal(i, j), nodes.normal(i, m));
          }
        }
      EXPECT_NEAR(nodes.normal.row(i).mean(), 0.0, 1e-16);
      EXPECT_NEAR(nodes.normal.row(i).squaredNorm() / 64.0, 0.996, 1e-3);
      // E[Z | Z > Phi^{-1}(63/64)] = 64 phi(2.15387) = 2.51018
      EXPECT_NEAR(nodes.normal.row(i).maxCoeff(), 2.51018, 1e-5);
    }
    // Deterministic: the same object every time on this thread, the same values anywhere.
    EXPECT_EQ(&tune::window::window_nodes(d), &nodes);
  }
}

// ---------------------------------------------------------------------------------------------
// Degenerate windows.

class WindowKernels : public ::testing::TestWithParam<KernelType> {};

TEST_P(WindowKernels, ZeroWidthBoxAndZeroSdGaussianAreThePointBitForBit) {
  const Kernel k = kernel(GetParam(), vec({0.3, 0.7, 0.5}));
  const Eigen::VectorXd x = vec({0.2, 0.6, 0.9}), y = vec({0.5, 0.1, 0.4});
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(3);
  for (const Query& q : {box(x, x), gauss(x, zero)}) {
    EXPECT_EQ(tune::covariance(k, q, y), k(x, y));
    EXPECT_EQ(tune::covariance(k, q, point(y)), k(x, y));
    EXPECT_EQ(tune::covariance(k, q, q), k(x, x));
    EXPECT_EQ(tune::covariance_gradient_x(k, q, y), k.gradient_x(y, x));
    Eigen::VectorXd g1(4), g2(4);
    EXPECT_EQ(tune::covariance_with_log_gradient(k, q, point(y), g1),
              tune::covariance_with_log_gradient(k, point(x), point(y), g2));
    EXPECT_EQ(g1, g2);
    EXPECT_EQ(tune::location(q), x);
  }
}

TEST(WindowSeClosedForm, ZeroWidthSideFixesThatCoordinate) {
  // A box of zero width in coordinate 1 is the one-dimensional average over coordinate 0 with
  // coordinate 1 fixed.
  const Kernel k = kernel(kSe, vec({0.3, 0.7}));
  const Query b = box(vec({0.2, 0.6}), vec({0.5, 0.6}));
  const Eigen::VectorXd x = vec({0.45, 0.1});
  const double got = tune::covariance(k, b, x);
  const double ref =
      boost::math::quadrature::gauss_kronrod<double, 61>::integrate([&](double t) { return k(vec({t, 0.6}), x); }, 0.2, 0.5, 20, 1e-14) / 0.3;
  EXPECT_LT(rel_err(got, ref), 1e-12);
}

TEST_P(WindowKernels, GaussianWindowTendsToThePointAsSdShrinks) {
  const Kernel k = kernel(GetParam(), vec({0.3, 0.7}));
  const Eigen::VectorXd c = vec({0.4, 0.5}), x = vec({0.6, 0.3});
  const double target = k(c, x);
  double previous = std::numeric_limits<double>::infinity();
  for (double sd : {1e-1, 1e-2, 1e-3, 1e-4}) {
    const double err = std::abs(tune::covariance(k, gauss(c, vec({sd, 2 * sd})), x) - target);
    EXPECT_LT(err, 20.0 * sd * sd * k.outputscale()) << "sd " << sd;  // O(sd^2): the window has mean c
    EXPECT_LT(err, previous);
    previous = err;
  }
  // The same for the window-window covariance and for a box of shrinking width.
  const double self = k(c, c);
  EXPECT_NEAR(tune::covariance(k, gauss(c, vec({1e-4, 1e-4})), gauss(c, vec({1e-4, 2e-4}))), self, 1e-6);
  EXPECT_NEAR(tune::covariance(k, box(c, c + vec({1e-4, 1e-4})), x), k(c + vec({5e-5, 5e-5}), x), 1e-8);
}

// ---------------------------------------------------------------------------------------------
// Gradients against central finite differences, for every pair of alternatives.

std::vector<Query> query_zoo() {
  return {point(vec({0.3, 0.6, 0.5})),
          box(vec({0.1, 0.2, 0.4}), vec({0.5, 0.9, 0.6})),
          box(vec({0.6, 0.3, 0.1}), vec({0.62, 0.3, 0.15})),  // narrow sides and a fixed coordinate
          box(vec({0.0, 0.0, 0.0}), vec({1.0, 1.0, 1.0})),
          gauss(vec({0.5, 0.4, 0.3}), vec({0.1, 0.25, 0.05})),
          gauss(vec({0.2, 0.8, 0.6}), vec({0.0, 0.02, 0.4}))};  // a fixed coordinate
}

Kernel with_log_params(KernelType type, const Eigen::VectorXd& log_params) {
  const Eigen::Index d = log_params.size() - 1;
  return Kernel(type, log_params.head(d).array().exp(), std::exp(log_params(d)));
}

TEST_P(WindowKernels, LogParameterGradientMatchesFiniteDifferences) {
  const KernelType type = GetParam();
  const Eigen::VectorXd theta = vec({std::log(0.3), std::log(0.7), std::log(0.2), std::log(1.4)});
  const Kernel k = with_log_params(type, theta);
  const std::vector<Query> zoo = query_zoo();
  const double h = 1e-5;
  for (std::size_t a = 0; a < zoo.size(); ++a)
    for (std::size_t b = 0; b < zoo.size(); ++b) {
      Eigen::VectorXd grad(4);
      const double value = tune::covariance_with_log_gradient(k, zoo[a], zoo[b], grad);
      EXPECT_NEAR(value, tune::covariance(k, zoo[a], zoo[b]), 1e-15 * std::abs(value)) << a << "," << b;
      for (Eigen::Index i = 0; i < 4; ++i) {
        Eigen::VectorXd tp = theta, tm = theta;
        tp(i) += h;
        tm(i) -= h;
        const double fd = (tune::covariance(with_log_params(type, tp), zoo[a], zoo[b]) -
                           tune::covariance(with_log_params(type, tm), zoo[a], zoo[b])) / (2 * h);
        EXPECT_NEAR(grad(i), fd, 1e-7 * std::max(1.0, std::abs(fd))) << "pair " << a << "," << b << " theta " << i;
      }
    }
}

TEST_P(WindowKernels, PointGradientMatchesFiniteDifferences) {
  const Kernel k = kernel(GetParam(), vec({0.3, 0.7, 0.2}));
  std::mt19937_64 rng(9);
  const double h = 1e-6;
  for (const Query& q : query_zoo())
    for (int trial = 0; trial < 6; ++trial) {
      Eigen::VectorXd x(3);
      for (Eigen::Index i = 0; i < 3; ++i) x(i) = uniform(rng, -0.2, 1.2);
      const Eigen::VectorXd g = tune::covariance_gradient_x(k, q, x);
      ASSERT_EQ(g.size(), 3);
      for (Eigen::Index i = 0; i < 3; ++i) {
        Eigen::VectorXd xp = x, xm = x;
        xp(i) += h;
        xm(i) -= h;
        const double fd = (tune::covariance(k, q, xp) - tune::covariance(k, q, xm)) / (2 * h);
        EXPECT_NEAR(g(i), fd, 1e-7 * std::max(1.0, std::abs(fd))) << "query " << q.index() << " coordinate " << i;
      }
    }
}

TEST_P(WindowKernels, GramMatrixOfMixedQueriesIsSymmetricPositiveSemidefinite) {
  const Kernel k = kernel(GetParam(), vec({0.3, 0.7, 0.2}));
  const std::vector<Query> zoo = query_zoo();
  const Eigen::Index n = static_cast<Eigen::Index>(zoo.size());
  Eigen::MatrixXd K(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) K(i, j) = tune::covariance(k, zoo[static_cast<std::size_t>(i)], zoo[static_cast<std::size_t>(j)]);
  EXPECT_LT((K - K.transpose()).cwiseAbs().maxCoeff(), 1e-14);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(K);
  EXPECT_GT(eig.eigenvalues().minCoeff(), -1e-12);
  // Averaging shrinks the variance: Var(mean of f over a window) < k(x, x).
  for (Eigen::Index i = 1; i < n; ++i) EXPECT_LT(K(i, i), k.outputscale());
}

// The GPOO equivalence: the box covariance is the limit of the average kernel over many point
// representatives inside the box (a fine midpoint grid here).
TEST_P(WindowKernels, BoxCovarianceIsTheMeanOverAFineGridOfRepresentatives) {
  const Kernel k = kernel(GetParam(), vec({0.3, 0.5}));
  const Eigen::VectorXd lo = vec({0.2, 0.1}), hi = vec({0.6, 0.5});
  const Eigen::VectorXd lo2 = vec({0.5, 0.3}), hi2 = vec({0.9, 0.6});
  const int m = 300, m2 = 40;
  auto rep = [](const Eigen::VectorXd& a, const Eigen::VectorXd& b, int grid, int i, int j) {
    return vec({a(0) + (b(0) - a(0)) * (i + 0.5) / grid, a(1) + (b(1) - a(1)) * (j + 0.5) / grid});
  };
  for (const Eigen::VectorXd& x : {vec({0.4, 0.3}), vec({0.9, 0.8})}) {
    double mean = 0.0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) mean += k(rep(lo, hi, m, i, j), x);
    mean /= m * m;
    // Midpoint error O((w/m)^2 / l^2) ~ 1e-6; the Matern rule is held to its stated 1e-3.
    EXPECT_LT(rel_err(tune::covariance(k, box(lo, hi), x), mean), GetParam() == kSe ? 1e-5 : 1e-3);
  }
  double mean = 0.0;
  for (int i = 0; i < m2; ++i)
    for (int j = 0; j < m2; ++j)
      for (int p = 0; p < m2; ++p)
        for (int q = 0; q < m2; ++q) mean += k(rep(lo, hi, m2, i, j), rep(lo2, hi2, m2, p, q));
  mean /= std::pow(m2, 4);
  // The 40^4 grid is coarser (midpoint error ~1e-4).
  EXPECT_LT(rel_err(tune::covariance(k, box(lo, hi), box(lo2, hi2)), mean), GetParam() == kSe ? 3e-4 : 1e-3);
}

// ---------------------------------------------------------------------------------------------
// The GP and the marginal likelihood over a mix of points, boxes and Gaussian windows.

struct Mixed {
  std::size_t dim = 2;
  tune::GpHyperparameters hp;
  tune::Standardization st{1.5, 2.0};
  std::vector<Observation> obs;
};

Mixed make_mixed(KernelType type, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Mixed m;
  m.hp.kernel = type;
  m.hp.lengthscales = vec({0.35, 0.5});
  m.hp.outputscale = 1.2;
  m.hp.noise_variances = {2e-3, 3e-2};
  auto f = [](const Eigen::VectorXd& x) { return std::sin(4.0 * x(0)) + x(1) * x(1); };
  for (int i = 0; i < 30; ++i) {
    const Eigen::VectorXd c = vec({uniform(rng, 0.1, 0.9), uniform(rng, 0.1, 0.9)});
    Query q;
    switch (i % 3) {
      case 0: q = point(c); break;
      case 1: {
        Eigen::VectorXd half = vec({uniform(rng, 0.0, 0.15), uniform(rng, 0.01, 0.2)});
        if (i % 7 == 1) half(0) = 0.0;  // a fixed coordinate
        q = box(c - half, c + half);
        break;
      }
      default: q = gauss(c, vec({uniform(rng, 0.01, 0.2), i % 5 == 2 ? 0.0 : uniform(rng, 0.01, 0.2)}));
    }
    m.obs.push_back({q, m.st.mean + m.st.scale * (f(c) + 0.05 * normal(rng)), i % 4 == 0 ? std::size_t{1} : std::size_t{0}});
  }
  return m;
}

TEST_P(WindowKernels, GaussianProcessOverMixedObservationsEqualsBatchFormula) {
  const Mixed m = make_mixed(GetParam(), 31);
  tune::GaussianProcess gp(m.dim, m.hp, m.st);
  for (const Observation& o : m.obs) gp.add(o);
  ASSERT_EQ(gp.size(), m.obs.size());
  // Batch: K_ij = covariance(q_i, q_j) + noise, in standardised units, solved with LLT.
  const Kernel k = m.hp.make_kernel();
  const Eigen::Index n = static_cast<Eigen::Index>(m.obs.size());
  Eigen::MatrixXd K(n, n);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Observation& oi = m.obs[static_cast<std::size_t>(i)];
    y(i) = (oi.value - m.st.mean) / m.st.scale;
    for (Eigen::Index j = 0; j < n; ++j) K(i, j) = tune::covariance(k, oi.query, m.obs[static_cast<std::size_t>(j)].query);
    K(i, i) += m.hp.noise_variances[oi.noise_group];
  }
  const Eigen::LLT<Eigen::MatrixXd> llt(K);
  ASSERT_EQ(llt.info(), Eigen::Success);
  const Eigen::VectorXd alpha = llt.solve(y);
  std::mt19937_64 rng(32);
  for (int t = 0; t < 40; ++t) {
    const Eigen::VectorXd x = vec({uniform(rng, 0.0, 1.0), uniform(rng, 0.0, 1.0)});
    Eigen::VectorXd kx(n);
    for (Eigen::Index i = 0; i < n; ++i) kx(i) = tune::covariance(k, m.obs[static_cast<std::size_t>(i)].query, x);
    const double mean = m.st.mean + m.st.scale * kx.dot(alpha);
    const double var = m.st.scale * m.st.scale * (k(x, x) - kx.dot(llt.solve(kx)));
    const tune::Prediction got = gp.predict(x);
    EXPECT_NEAR(got.mean, mean, 1e-10 * std::max(1.0, std::abs(mean)));
    EXPECT_NEAR(got.variance, var, 1e-10 * std::max(1.0, std::abs(var)));
    // And the predictive gradients through covariance_gradient_x.
    const tune::PredictionWithGradient pg = gp.predict_with_gradient(x);
    for (Eigen::Index i = 0; i < 2; ++i) {
      Eigen::VectorXd xp = x, xm = x;
      const double h = 1e-6;
      xp(i) += h;
      xm(i) -= h;
      const tune::Prediction up = gp.predict(xp), down = gp.predict(xm);
      EXPECT_NEAR(pg.mean_gradient(i), (up.mean - down.mean) / (2 * h), 1e-6 * std::max(1.0, std::abs(pg.mean_gradient(i))));
      EXPECT_NEAR(pg.variance_gradient(i), (up.variance - down.variance) / (2 * h),
                  1e-6 * std::max(1.0, std::abs(pg.variance_gradient(i))));
    }
  }
}

TEST_P(WindowKernels, LogMarginalLikelihoodGradientOverMixedObservationsMatchesFiniteDifferences) {
  const Mixed m = make_mixed(GetParam(), 33);
  Eigen::VectorXd grad;
  const double value = tune::log_marginal_likelihood(m.obs, m.st, m.hp, &grad);
  ASSERT_TRUE(std::isfinite(value));
  ASSERT_EQ(grad.size(), 2 + 1 + 2);
  EXPECT_NEAR(value, tune::log_marginal_likelihood(m.obs, m.st, m.hp), 1e-12 * std::abs(value));
  const double h = 1e-5;
  for (Eigen::Index i = 0; i < grad.size(); ++i) {
    auto perturbed = [&](double step) {
      tune::GpHyperparameters q = m.hp;
      if (i < 2) q.lengthscales(i) *= std::exp(step);
      else if (i == 2) q.outputscale *= std::exp(step);
      else q.noise_variances[static_cast<std::size_t>(i - 3)] *= std::exp(step);
      return tune::log_marginal_likelihood(m.obs, m.st, q);
    };
    const double fd = (perturbed(h) - perturbed(-h)) / (2 * h);
    EXPECT_NEAR(grad(i), fd, 1e-6 * std::max(1.0, std::abs(fd))) << "theta " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Window, WindowKernels, ::testing::Values(kSe, kMatern),
                         [](const ::testing::TestParamInfo<KernelType>& tp) { return std::string(tune::to_string(tp.param)); });

// ---------------------------------------------------------------------------------------------
// Validation where windows enter the model.

TEST(WindowValidation, GaussianProcessRejectsMalformedWindowsAndStaysUnchanged) {
  tune::GpHyperparameters hp;
  hp.kernel = kSe;
  hp.lengthscales = vec({0.3, 0.3});
  tune::GaussianProcess gp(2, hp);
  gp.add(Observation{box(vec({0.1, 0.2}), vec({0.3, 0.2})), 1.0, 0});
  gp.add(Observation{gauss(vec({0.5, 0.5}), vec({0.1, 0.0})), 2.0, 0});
  ASSERT_EQ(gp.size(), 2u);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<Query, std::string>> bad = {
      {box(vec({0.4, 0.2}), vec({0.3, 0.5})), "lower bound"},
      {box(vec({0.1, nan}), vec({0.3, 0.5})), "non-finite"},
      {box(vec({0.1, 0.2}), vec({inf, 0.5})), "non-finite"},
      {box(vec({0.1, 0.2}), vec({0.3})), "coordinates"},
      {box(vec({0.1}), vec({0.3})), "dimension"},
      {gauss(vec({0.5, 0.5}), vec({0.1, -0.01})), "negative sd"},
      {gauss(vec({0.5, 0.5}), vec({inf, 0.1})), "non-finite"},
      {gauss(vec({nan, 0.5}), vec({0.1, 0.1})), "non-finite"},
      {gauss(vec({0.5, 0.5}), vec({0.1})), "coordinates"},
      {gauss(vec({0.5, 0.5, 0.5}), vec({0.1, 0.1, 0.1})), "dimension"}};
  for (const auto& [q, needle] : bad) {
    // As the second of two: the whole batch is rejected.
    std::vector<Observation> batch{Observation{point(vec({0.2, 0.2})), 0.0, 0}, Observation{q, 1.0, 0}};
    try {
      gp.add(batch);
      ADD_FAILURE() << "accepted a malformed window (" << needle << ")";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_EQ(gp.size(), 2u);
  }
  EXPECT_EQ(tune::location(box(vec({0.1, 0.2}), vec({0.3, 0.2}))), vec({0.2, 0.2}));
}

}  // namespace

namespace {

// What a linear trend w . (x - 1/2) contributes to each kind of observation, w . trend_feature(q),
// against a Monte Carlo average of the trend under the window (box, Gaussian) or the weighted sum
// of its values (point set).
TEST(TrendFeature, EqualsTheWindowAverageOfALinearFunction) {
  std::mt19937_64 rng(21);
  const Eigen::Vector3d w(1.7, -2.3, 0.6);
  const auto trend = [&](const Eigen::Vector3d& x) { return w.dot((x.array() - 0.5).matrix()); };
  const Eigen::Vector3d lower(0.1, 0.4, 0.7), upper(0.3, 0.9, 0.75), sd(0.05, 0.2, 0.0);
  const int samples = 200000;
  double box_mc = 0.0, gauss_mc = 0.0;
  std::normal_distribution<double> normal;
  for (int s = 0; s < samples; ++s) {
    Eigen::Vector3d u, g;
    for (int i = 0; i < 3; ++i) {
      u(i) = lower(i) + (upper(i) - lower(i)) * tune::uniform01(rng);
      g(i) = 0.5 * (lower(i) + upper(i)) + sd(i) * normal(rng);
    }
    box_mc += trend(u) / samples;
    gauss_mc += trend(g) / samples;
  }
  EXPECT_NEAR(w.dot(tune::trend_feature(BoxQuery{lower, upper})), box_mc, 0.01);
  EXPECT_NEAR(w.dot(tune::trend_feature(GaussianWindowQuery{0.5 * (lower + upper), sd})), gauss_mc, 0.01);
  const Eigen::Vector3d x(0.2, 0.8, 0.35);
  EXPECT_NEAR(w.dot(tune::trend_feature(PointQuery{x})), trend(x), 1e-15);
  Eigen::MatrixXd points(3, 2);
  points << 0.1, 0.9, 0.2, 0.4, 0.7, 0.3;
  const Eigen::Vector2d weights(0.8, -1.5);  // need not sum to 1: the functional is the weighted sum
  EXPECT_NEAR(w.dot(tune::trend_feature(tune::WeightedPointsQuery{points, weights})),
              0.8 * trend(points.col(0)) - 1.5 * trend(points.col(1)), 1e-14);
}

}  // namespace
