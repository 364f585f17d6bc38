// The multi-fidelity benchmark functions: metadata, published values, agreement of the top level
// with the single-fidelity functions, the stored minima against numerical searches, and how the
// lower levels relate to the top.
#include "functions/multi_fidelity.hpp"
#include "functions/test_functions.hpp"

#include "tune/random/rng.hpp"

#include <gtest/gtest.h>

#include <boost/math/tools/minima.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numbers>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using Eigen::VectorXd;
using tune::testfn::MultiFidelityFunction;

VectorXd random_unit(tune::Rng& rng, std::size_t dim) {
  VectorXd u(static_cast<Eigen::Index>(dim));
  for (Eigen::Index j = 0; j < u.size(); ++j) u(j) = tune::uniform01(rng);
  return u;
}

// Unit-cube coordinates of a point of the box (for quoting points in the functions' own units).
VectorXd to_unit(const MultiFidelityFunction& fn, const VectorXd& x) {
  return ((x - fn.lower).array() / (fn.upper - fn.lower).array()).matrix();
}

// Compass search confined to the unit cube: try +-step along each coordinate (clamped to the cube,
// so that minima on the boundary are reached exactly), keep any improvement, halve the step when
// none is found. Slow but derivative-free and robust to the kinks at the boundary guards.
std::pair<VectorXd, double> compass_refine(const std::function<double(const VectorXd&)>& g, VectorXd u) {
  double fu = g(u);
  double step = 0.05;
  for (int evals = 0; step > 1e-13 && evals < 200000;) {
    bool improved = false;
    for (Eigen::Index j = 0; j < u.size(); ++j) {
      for (const double sign : {-1.0, 1.0}) {
        VectorXd v = u;
        v(j) = std::clamp(u(j) + sign * step, 0.0, 1.0);
        const double fv = g(v);
        ++evals;
        if (fv < fu) {
          u = v;
          fu = fv;
          improved = true;
        }
      }
    }
    if (!improved) step *= 0.5;
  }
  return {u, fu};
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const auto n = static_cast<double>(a.size());
  double ma = 0.0, mb = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ma += a[i];
    mb += b[i];
  }
  ma /= n;
  mb /= n;
  double sab = 0.0, saa = 0.0, sbb = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

const MultiFidelityFunction& by_name(const std::vector<MultiFidelityFunction>& fns, const std::string& name) {
  for (const auto& fn : fns) {
    if (fn.name == name) return fn;
  }
  throw std::invalid_argument("no function " + name);
}

TEST(MultiFidelityFunctions, MetadataIsConsistent) {
  const auto fns = tune::testfn::multi_fidelity_functions();
  std::vector<std::string> names;
  for (const auto& fn : fns) names.push_back(fn.name);
  EXPECT_EQ(names, (std::vector<std::string>{"forrester_mf", "branin_mf", "hartmann3_mf", "park_mf", "currin_mf"}));

  struct Expected {
    std::size_t dim;
    std::vector<double> cost;
  };
  const std::vector<Expected> expected{{1, {0.1, 1.0}}, {2, {0.01, 0.1, 1.0}}, {3, {0.01, 0.1, 1.0}}, {4, {0.1, 1.0}},
                                       {2, {0.1, 1.0}}};
  ASSERT_EQ(fns.size(), expected.size());
  for (std::size_t k = 0; k < fns.size(); ++k) {
    const auto& fn = fns[k];
    SCOPED_TRACE(fn.name);
    EXPECT_EQ(fn.dim(), expected[k].dim);
    EXPECT_EQ(fn.cost, expected[k].cost);
    EXPECT_EQ(fn.levels(), expected[k].cost.size());
    EXPECT_EQ(fn.top(), fn.levels() - 1);
    ASSERT_EQ(fn.upper.size(), fn.lower.size());
    ASSERT_EQ(fn.argmin_unit.size(), fn.lower.size());
    EXPECT_TRUE((fn.lower.array() < fn.upper.array()).all());
    EXPECT_TRUE((fn.argmin_unit.array() >= 0.0).all() && (fn.argmin_unit.array() <= 1.0).all());
    EXPECT_TRUE(std::isfinite(fn.minimum));
    const VectorXd centre = VectorXd::Constant(fn.lower.size(), 0.5);
    EXPECT_TRUE(fn.to_box(centre).isApprox(0.5 * (fn.lower + fn.upper)));
    for (std::size_t level = 0; level < fn.levels(); ++level) {
      EXPECT_EQ(fn.value(centre, level), fn.f(centre, level));
      EXPECT_TRUE(std::isfinite(fn.value(centre, level)));
    }
    EXPECT_THROW(fn.value(centre, fn.levels()), std::invalid_argument);
    EXPECT_THROW(fn.value(VectorXd::Zero(fn.lower.size() + 1), 0), std::invalid_argument);
    EXPECT_THROW(fn.to_box(VectorXd::Zero(fn.lower.size() + 1)), std::invalid_argument);
  }
}

TEST(MultiFidelityFunctions, StoredMinimumIsTheValueAtTheStoredMinimiser) {
  for (const auto& fn : tune::testfn::multi_fidelity_functions()) {
    SCOPED_TRACE(fn.name);
    EXPECT_NEAR(fn.value(fn.argmin_unit, fn.top()), fn.minimum, 1e-12);
  }
}

// Values quoted in the literature, and reference values of every level at fixed points computed in
// 40-digit arithmetic (mpmath) from the formulas as printed in the cited sources.
TEST(MultiFidelityFunctions, PublishedAndReferenceValues) {
  const auto fns = tune::testfn::multi_fidelity_functions();
  constexpr double pi = std::numbers::pi;

  const auto& forrester = by_name(fns, "forrester_mf");
  EXPECT_NEAR(forrester.value(VectorXd{{0.757249}}, 1), -6.020740, 1e-6);
  EXPECT_NEAR(forrester.minimum, -6.020740, 1e-6);
  EXPECT_NEAR(forrester.value(VectorXd{{0.2}}, 1), -0.63972710594656330518, 1e-13);
  EXPECT_NEAR(forrester.value(VectorXd{{0.2}}, 0), 1.6801364470267183474, 1e-13);

  const auto& branin = by_name(fns, "branin_mf");
  for (const auto& [x1, x2] : std::vector<std::pair<double, double>>{{pi, 2.275}, {-pi, 12.275}, {3 * pi, 2.475}}) {
    SCOPED_TRACE("branin at " + std::to_string(x1) + ", " + std::to_string(x2));
    EXPECT_NEAR(branin.value(to_unit(branin, VectorXd{{x1, x2}}), 2), 0.397887357729738, 1e-12);
  }
  EXPECT_NEAR(branin.minimum, 0.397887357729738, 1e-14);
  const VectorXd b13 = to_unit(branin, VectorXd{{1.0, 3.0}});
  EXPECT_NEAR(branin.value(b13, 2), 17.552365235612323991, 1e-12);
  EXPECT_NEAR(branin.value(b13, 1), 53.689322493466299582, 1e-12);
  EXPECT_NEAR(branin.value(b13, 0), -22.549114914184250796, 1e-12);

  // The literature's minimiser of Hartmann-3; its quoted value -3.86278214782076 is 2.4e-6 below the
  // true minimum of the standard constants (see test_functions.cpp).
  const auto& h3 = by_name(fns, "hartmann3_mf");
  const VectorXd quoted{{0.114614, 0.555649, 0.852547}};
  EXPECT_NEAR(h3.value(quoted, 2), -3.86278214782076, 1e-5);
  EXPECT_GE(h3.value(quoted, 2), h3.minimum);
  EXPECT_NEAR(h3.value(quoted, 2), -3.8627797869493365525, 1e-13);
  EXPECT_NEAR(h3.value(quoted, 1), -3.9508548819936779088, 1e-13);
  EXPECT_NEAR(h3.value(quoted, 0), -4.0389299770380192652, 1e-13);

  const auto& park = by_name(fns, "park_mf");
  EXPECT_NEAR(park.value(VectorXd::Constant(4, 0.5), 1), 8.9261303633639324279, 1e-13);
  EXPECT_NEAR(park.value(VectorXd::Constant(4, 0.5), 0), 9.354071849074640782, 1e-13);
  EXPECT_NEAR(park.value(VectorXd{{0.2, 0.4, 0.6, 0.8}}, 1), 12.733002036749255286, 1e-13);
  EXPECT_NEAR(park.value(VectorXd{{0.2, 0.4, 0.6, 0.8}}, 0), 13.605967736114567886, 1e-13);

  // Negated, as the literature maximises Currin. (0.3, 0.02) puts two of the low fidelity's four
  // points on the clamp max(0, x2 - 0.05) = 0.
  const auto& currin = by_name(fns, "currin_mf");
  EXPECT_NEAR(currin.value(VectorXd{{0.5, 0.5}}, 1), -7.405123913298808916, 1e-13);
  EXPECT_NEAR(currin.value(VectorXd{{0.5, 0.5}}, 0), -7.4424795838711076499, 1e-13);
  EXPECT_NEAR(currin.value(VectorXd{{0.3, 0.02}}, 1), -13.36284470228176154, 1e-13);
  EXPECT_NEAR(currin.value(VectorXd{{0.3, 0.02}}, 0), -13.31087403305938262, 1e-13);
  EXPECT_NEAR(-currin.minimum, 13.7986850, 1e-4);  // Kandasamy et al.'s quoted maximum
}

TEST(MultiFidelityFunctions, TopLevelIsTheSingleFidelityFunction) {
  const auto fns = tune::testfn::multi_fidelity_functions();
  const std::vector<std::pair<std::string, tune::testfn::TestFunction>> pairs{
      {"branin_mf", tune::testfn::branin()}, {"hartmann3_mf", tune::testfn::hartmann3()}};
  for (const auto& [name, single] : pairs) {
    SCOPED_TRACE(name);
    const auto& fn = by_name(fns, name);
    EXPECT_EQ(fn.lower, single.lower);
    EXPECT_EQ(fn.upper, single.upper);
    EXPECT_EQ(fn.minimum, single.minimum);
    EXPECT_NEAR(fn.value(fn.argmin_unit, fn.top()), single.f(single.argmin), 1e-12);
    tune::Rng rng = tune::make_rng(20240611, tune::RngStream::random_search, 17);
    for (int i = 0; i < 2000; ++i) {
      const VectorXd u = random_unit(rng, fn.dim());
      ASSERT_EQ(fn.value(u, fn.top()), single.at_unit(u)) << "at point " << i;
    }
    for (unsigned mask = 0; mask < (1u << fn.dim()); ++mask) {
      VectorXd u(static_cast<Eigen::Index>(fn.dim()));
      for (Eigen::Index j = 0; j < u.size(); ++j) u(j) = ((mask >> j) & 1u) != 0 ? 1.0 : 0.0;
      EXPECT_EQ(fn.value(u, fn.top()), single.at_unit(u)) << "corner mask " << mask;
    }
  }
}

// The stored minimum is not beaten by a 20000-point random search of the top level, and a compass
// search started from the best of those points ends within 1e-6 of it.
TEST(MultiFidelityFunctions, StoredMinimumSurvivesRandomSearchAndRefinement) {
  std::uint64_t stream_index = 0;
  for (const auto& fn : tune::testfn::multi_fidelity_functions()) {
    SCOPED_TRACE(fn.name);
    const auto top = [&fn](const VectorXd& u) { return fn.value(u, fn.top()); };
    tune::Rng rng = tune::make_rng(20240611, tune::RngStream::random_search, stream_index++);
    VectorXd best_u;
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < 20000; ++i) {
      const VectorXd u = random_unit(rng, fn.dim());
      const double v = top(u);
      if (v < best) {
        best = v;
        best_u = u;
      }
    }
    EXPECT_GE(best, fn.minimum - 1e-12);
    const auto [refined_u, refined] = compass_refine(top, best_u);
    EXPECT_GE(refined, fn.minimum - 1e-12);
    EXPECT_LE(refined, fn.minimum + 1e-6);
  }
}

// Park's minimum 0 (on the face x1 = x4 = 0) against a dense grid refined by a compass search, and
// the guard at the singular x1 = 0.
TEST(MultiFidelityFunctions, ParkMinimumMatchesGridSearchAndGuardHolds) {
  const MultiFidelityFunction fn = tune::testfn::park_mf();
  const int n = 12;  // 13^4 = 28561 points, corners and faces included
  VectorXd u(4), best_u(4);
  double best = std::numeric_limits<double>::infinity();
  for (int a = 0; a <= n; ++a) {
    for (int b = 0; b <= n; ++b) {
      for (int c = 0; c <= n; ++c) {
        for (int d = 0; d <= n; ++d) {
          u << double(a) / n, double(b) / n, double(c) / n, double(d) / n;
          const double v = fn.value(u, 1);
          ASSERT_TRUE(std::isfinite(v));
          ASSERT_TRUE(std::isfinite(fn.value(u, 0)));
          if (v < best) {
            best = v;
            best_u = u;
          }
        }
      }
    }
  }
  const auto [refined_u, refined] = compass_refine([&fn](const VectorXd& p) { return fn.value(p, 1); }, best_u);
  EXPECT_EQ(refined, 0.0);
  EXPECT_EQ(fn.minimum, refined);
  EXPECT_EQ(refined_u(0), 0.0);
  EXPECT_EQ(refined_u(3), 0.0);

  // At x1 = 0 the value is the limit x1 -> 0: sqrt((x2 + x3^2) x4) / 2 + 3 x4 exp(1 + sin x3).
  const std::vector<std::array<double, 3>> rest{{0.3, 0.7, 0.2}, {1.0, 1.0, 1.0}, {0.0, 0.0, 0.5}};
  for (const auto& [x2, x3, x4] : rest) {
    const double limit = std::sqrt((x2 + x3 * x3) * x4) / 2.0 + 3.0 * x4 * std::exp(1.0 + std::sin(x3));
    EXPECT_NEAR(fn.value(VectorXd{{0.0, x2, x3, x4}}, 1), limit, 1e-8);
    EXPECT_NEAR(fn.value(VectorXd{{1e-6, x2, x3, x4}}, 1), limit, 1e-5);  // continuous there
    EXPECT_NEAR(fn.value(VectorXd{{0.0, x2, x3, x4}}, 0), limit + x2 * x2 + x3 * x3 + 0.5, 1e-8);
  }
}

// Currin's minimum -4319/313 at (13/60, 0) against a dense grid refined by a compass search, against
// Brent's method along the edge x2 = 0, and the guard at x2 = 0.
TEST(MultiFidelityFunctions, CurrinMinimumMatchesGridSearchAndGuardHolds) {
  const MultiFidelityFunction fn = tune::testfn::currin_mf();
  const int n = 400;
  VectorXd u(2), best_u(2);
  double best = std::numeric_limits<double>::infinity();
  for (int a = 0; a <= n; ++a) {
    for (int b = 0; b <= n; ++b) {
      u << double(a) / n, double(b) / n;
      const double v = fn.value(u, 1);
      ASSERT_TRUE(std::isfinite(v));
      ASSERT_TRUE(std::isfinite(fn.value(u, 0)));
      if (v < best) {
        best = v;
        best_u = u;
      }
    }
  }
  const auto [refined_u, refined] = compass_refine([&fn](const VectorXd& p) { return fn.value(p, 1); }, best_u);
  EXPECT_GE(refined, fn.minimum - 1e-13);
  EXPECT_NEAR(refined, fn.minimum, 1e-12);
  EXPECT_NEAR(refined_u(0), 13.0 / 60.0, 1e-5);
  EXPECT_LE(refined_u(1), 1e-3);  // 1 - exp(-1/(2 x2)) rounds to 1 below x2 ~ 1.4e-3

  const auto edge = [&fn](double x1) { return fn.value(VectorXd{{x1, 0.0}}, 1); };
  const auto [x1, fx1] = boost::math::tools::brent_find_minima(edge, 0.0, 1.0, 52);
  EXPECT_NEAR(x1, 13.0 / 60.0, 1e-7);
  EXPECT_NEAR(fx1, fn.minimum, 1e-13);
  EXPECT_NEAR(fn.minimum, -4319.0 / 313.0, 1e-15);

  // At x2 = 0 the damping factor is its limit 1: the value is minus the rational factor, and it
  // joins continuously with small positive x2.
  for (const double x : {0.0, 0.25, 1.0}) {
    const double rational = (2300.0 * x * x * x + 1900.0 * x * x + 2092.0 * x + 60.0) /
                            (100.0 * x * x * x + 500.0 * x * x + 4.0 * x + 20.0);
    EXPECT_DOUBLE_EQ(fn.value(VectorXd{{x, 0.0}}, 1), -rational);
    EXPECT_NEAR(fn.value(VectorXd{{x, 0.01}}, 1), -rational, 1e-12);  // exp(-50) ~ 2e-22
  }
}

// No level is accidentally a copy of another: on random points every pair of levels differs by a
// sizeable fraction of the top level's range somewhere.
TEST(MultiFidelityFunctions, LevelsDiffer) {
  std::uint64_t stream_index = 100;
  for (const auto& fn : tune::testfn::multi_fidelity_functions()) {
    SCOPED_TRACE(fn.name);
    tune::Rng rng = tune::make_rng(20240611, tune::RngStream::random_search, stream_index++);
    std::vector<VectorXd> points;
    for (int i = 0; i < 500; ++i) points.push_back(random_unit(rng, fn.dim()));
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (const auto& p : points) {
      lo = std::min(lo, fn.value(p, fn.top()));
      hi = std::max(hi, fn.value(p, fn.top()));
    }
    for (std::size_t l = 0; l < fn.levels(); ++l) {
      for (std::size_t m = l + 1; m < fn.levels(); ++m) {
        double max_gap = 0.0;
        for (const auto& p : points) max_gap = std::max(max_gap, std::abs(fn.value(p, l) - fn.value(p, m)));
        EXPECT_GT(max_gap, 0.01 * (hi - lo)) << "levels " << l << " and " << m;
      }
    }
  }
}

// Every level keeps the relation to the top level that its published definition states.
TEST(MultiFidelityFunctions, LowerLevelsFollowTheirDefinitions) {
  const auto fns = tune::testfn::multi_fidelity_functions();
  tune::Rng rng = tune::make_rng(20240611, tune::RngStream::random_search, 200);
  for (int i = 0; i < 200; ++i) {
    {
      const auto& fn = by_name(fns, "forrester_mf");
      const VectorXd u = random_unit(rng, 1);
      EXPECT_NEAR(fn.value(u, 0), 0.5 * fn.value(u, 1) + 10.0 * (u(0) - 0.5) + 5.0, 1e-12);
    }
    {
      const auto& fn = by_name(fns, "branin_mf");
      const VectorXd u = random_unit(rng, 2);
      const VectorXd x = fn.to_box(u);
      const auto medium = [&fn](const VectorXd& y) {
        const VectorXd shifted = (y.array() - 2.0).matrix();
        return 10.0 * std::sqrt(fn.value(to_unit(fn, shifted), 2)) + 2.0 * (y(0) - 0.5) -
               3.0 * (3.0 * y(1) - 1.0) - 1.0;
      };
      EXPECT_NEAR(fn.value(u, 1), medium(x), 1e-9 * (1.0 + std::abs(medium(x))));
      const VectorXd stretched = (1.2 * (x.array() + 2.0)).matrix();
      const double low = medium(stretched) - 3.0 * x(1) + 1.0;
      EXPECT_NEAR(fn.value(u, 0), low, 1e-9 * (1.0 + std::abs(low)));
    }
    {
      // The weights change by the same delta from level to level and f is linear in them.
      const auto& fn = by_name(fns, "hartmann3_mf");
      const VectorXd u = random_unit(rng, 3);
      EXPECT_NEAR(fn.value(u, 0) - fn.value(u, 1), fn.value(u, 1) - fn.value(u, 2), 1e-12);
    }
    {
      const auto& fn = by_name(fns, "park_mf");
      const VectorXd u = random_unit(rng, 4);
      const double low = (1.0 + std::sin(u(0)) / 10.0) * fn.value(u, 1) - 2.0 * u(0) + u(1) * u(1) + u(2) * u(2) + 0.5;
      EXPECT_NEAR(fn.value(u, 0), low, 1e-12);
    }
    {
      const auto& fn = by_name(fns, "currin_mf");
      const VectorXd u = random_unit(rng, 2);
      const double up = u(1) + 0.05, down = std::max(0.0, u(1) - 0.05);
      const double avg = 0.25 * (fn.value(VectorXd{{u(0) + 0.05, up}}, 1) + fn.value(VectorXd{{u(0) + 0.05, down}}, 1) +
                                 fn.value(VectorXd{{u(0) - 0.05, up}}, 1) + fn.value(VectorXd{{u(0) - 0.05, down}}, 1));
      EXPECT_NEAR(fn.value(u, 0), avg, 1e-12);
    }
  }
}

// Pearson correlation of each lower level with the top on random points. For Forrester, Hartmann-3,
// Park and Currin it exceeds 0.5. Branin's published levels (Perdikaris et al. 2017, built to show
// off NONLINEAR fusion) are only weakly correlated with the top: 0.31 (level 0) and 0.19 (level 1)
// on these points, 0.24-0.34 and 0.11-0.23 over other seeds of 2000 points. They are pinned here so
// that a change is noticed, rather than the bound being lowered to let them pass.
TEST(MultiFidelityFunctions, LowerLevelsCorrelateWithTop) {
  std::uint64_t stream_index = 300;
  for (const auto& fn : tune::testfn::multi_fidelity_functions()) {
    SCOPED_TRACE(fn.name);
    tune::Rng rng = tune::make_rng(20240611, tune::RngStream::random_search, stream_index++);
    const int n = 20000;
    std::vector<std::vector<double>> values(fn.levels());
    for (int i = 0; i < n; ++i) {
      const VectorXd u = random_unit(rng, fn.dim());
      for (std::size_t l = 0; l < fn.levels(); ++l) values[l].push_back(fn.value(u, l));
    }
    for (std::size_t l = 0; l < fn.top(); ++l) {
      const double r = pearson(values[l], values[fn.top()]);
      RecordProperty(fn.name + "_level" + std::to_string(l), std::to_string(r));
      if (fn.name == "branin_mf") {
        EXPECT_NEAR(r, l == 0 ? 0.31 : 0.19, 0.02) << "level " << l;
      } else {
        EXPECT_GT(r, 0.5) << "level " << l;
      }
    }
  }
}

}  // namespace
