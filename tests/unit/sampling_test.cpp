// Tests for the unit-cube designs: uniform points and (shifted) Sobol sequences.
#include "tune/space/sampling.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "tune/random/rng.hpp"

namespace tune {
namespace {

// True if the 2-D points (columns) form a (0,k,2)-net in base 2: for every split a + b = k, each
// of the 2^k boxes [i/2^a, (i+1)/2^a) x [j/2^b, (j+1)/2^b) holds exactly one point.
::testing::AssertionResult is_02_net(const Eigen::MatrixXd& points, int k) {
  const auto n = std::size_t{1} << k;
  if (points.rows() != 2 || static_cast<std::size_t>(points.cols()) != n) {
    return ::testing::AssertionFailure() << "wrong shape";
  }
  for (int a = 0; a <= k; ++a) {
    const int b = k - a;
    std::vector<int> counts(n, 0);
    for (Eigen::Index c = 0; c < points.cols(); ++c) {
      const auto i = static_cast<std::size_t>(std::floor(std::ldexp(points(0, c), a)));
      const auto j = static_cast<std::size_t>(std::floor(std::ldexp(points(1, c), b)));
      ++counts[(i << b) + j];
    }
    for (std::size_t box = 0; box < n; ++box) {
      if (counts[box] != 1) {
        return ::testing::AssertionFailure() << "k=" << k << " a=" << a << " box " << box
                                             << " holds " << counts[box] << " points";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// Max over random anchored boxes [0, a) of |fraction of points inside - volume of the box|.
double anchored_box_discrepancy(const Eigen::MatrixXd& points, int boxes, Rng& rng) {
  double worst = 0.0;
  Eigen::VectorXd corner(points.rows());
  for (int t = 0; t < boxes; ++t) {
    double volume = 1.0;
    for (Eigen::Index i = 0; i < corner.size(); ++i) {
      corner[i] = uniform01(rng);
      volume *= corner[i];
    }
    Eigen::Index inside = 0;
    for (Eigen::Index c = 0; c < points.cols(); ++c) {
      inside += (points.col(c).array() < corner.array()).all() ? 1 : 0;
    }
    const double fraction = static_cast<double>(inside) / static_cast<double>(points.cols());
    worst = std::max(worst, std::fabs(fraction - volume));
  }
  return worst;
}

TEST(SobolSequence, FirstPointsMatchKnownValues) {
  SobolSequence sobol(2);
  EXPECT_EQ(sobol.dim(), 2u);
  const double expected[5][2] = {{0.5, 0.5}, {0.75, 0.25}, {0.25, 0.75}, {0.375, 0.375},
                                 {0.875, 0.875}};
  for (const auto& e : expected) {
    const Eigen::VectorXd p = sobol.next();
    ASSERT_EQ(p.size(), 2);
    EXPECT_EQ(p[0], e[0]);
    EXPECT_EQ(p[1], e[1]);
  }
}

TEST(SobolSequence, BlocksFormNets) {
  // With the origin put back, the first 2^k points form a (0,k,2)-net; so does the next block of
  // 2^k points (sequence indices 2^k .. 2^(k+1) - 1).
  for (int k = 1; k <= 10; ++k) {
    const auto n = Eigen::Index{1} << k;
    SobolSequence sobol(2);
    Eigen::MatrixXd first(2, n);
    first.col(0).setZero();
    first.rightCols(n - 1) = sobol.next(static_cast<std::size_t>(n - 1));
    EXPECT_TRUE(is_02_net(first, k));
    EXPECT_TRUE(is_02_net(sobol.next(static_cast<std::size_t>(n)), k));
  }
}

TEST(SobolSequence, NextBatchEqualsRepeatedNext) {
  SobolSequence a(5);
  SobolSequence b(5);
  const Eigen::MatrixXd batch = a.next(20);
  ASSERT_EQ(batch.rows(), 5);
  ASSERT_EQ(batch.cols(), 20);
  for (Eigen::Index c = 0; c < 20; ++c) EXPECT_EQ(batch.col(c), b.next());
  // Moving keeps the position in the sequence.
  SobolSequence moved = std::move(a);
  EXPECT_EQ(moved.next(), b.next());
}

TEST(SobolSequence, ShiftIsUniform01DrawsModuloOne) {
  Rng rng(42);
  SobolSequence shifted(4, rng);
  SobolSequence plain(4);
  Rng reference_rng(42);
  Eigen::VectorXd shift(4);
  for (Eigen::Index i = 0; i < 4; ++i) shift[i] = uniform01(reference_rng);
  for (int t = 0; t < 200; ++t) {
    const Eigen::VectorXd p = shifted.next();
    const Eigen::VectorXd q = plain.next();
    for (Eigen::Index i = 0; i < 4; ++i) {
      ASSERT_GE(p[i], 0.0);
      ASSERT_LT(p[i], 1.0);
      ASSERT_NEAR(p[i], std::fmod(q[i] + shift[i], 1.0), 1e-15);
    }
  }
}

TEST(SobolSequence, ShiftedIsReproducibleAndSeedDependent) {
  Rng r1(7);
  Rng r2(7);
  Rng r3(8);
  const Eigen::MatrixXd a = SobolSequence(3, r1).next(64);
  const Eigen::MatrixXd b = SobolSequence(3, r2).next(64);
  const Eigen::MatrixXd c = SobolSequence(3, r3).next(64);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_GT((a - c).cwiseAbs().minCoeff(), 0.0);  // every coordinate moved
  Rng r4(7);
  EXPECT_EQ(sobol_points(3, 64, r4), a);
}

TEST(SobolSequence, ShiftedBlockStillStratified) {
  // A shift modulo 1 keeps one point per cell of the 2^k-equal-slices stratification of each axis.
  Rng rng(9);
  const Eigen::MatrixXd p = SobolSequence(3, rng).next(255);
  for (Eigen::Index d = 0; d < 3; ++d) {
    Eigen::VectorXd coords(256);
    coords.head(255) = p.row(d).transpose();
    Rng again(9);
    Eigen::VectorXd shift(3);
    for (Eigen::Index i = 0; i < 3; ++i) shift[i] = uniform01(again);
    coords[255] = shift[d];  // the skipped origin, shifted
    std::vector<int> counts(256, 0);
    for (Eigen::Index c = 0; c < 256; ++c) ++counts[static_cast<std::size_t>(coords[c] * 256)];
    EXPECT_TRUE(std::all_of(counts.begin(), counts.end(), [](int n) { return n == 1; })) << d;
  }
}

TEST(SobolSequence, LowerDiscrepancyThanUniform) {
  // The same 1000 anchored boxes (same box seed) for every point set. The reference is the mean
  // over five uniform point sets, whose maxima scatter between about 0.02 and 0.05.
  const std::size_t dim = 6;
  const std::size_t n = 1024;
  const int boxes = 1000;
  const std::uint64_t box_seed = 12;
  double d_uniform = 0.0;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    Rng point_rng(100 + seed);
    Rng box_rng(box_seed);
    d_uniform += anchored_box_discrepancy(uniform_points(dim, n, point_rng), boxes, box_rng) / 5;
  }
  Rng box_rng_a(box_seed);
  const double d_sobol = anchored_box_discrepancy(SobolSequence(dim).next(n), boxes, box_rng_a);
  Rng shift_rng(11);
  Rng box_rng_b(box_seed);
  const double d_shifted =
      anchored_box_discrepancy(SobolSequence(dim, shift_rng).next(n), boxes, box_rng_b);
  EXPECT_LT(d_sobol, 0.5 * d_uniform) << "sobol " << d_sobol << " uniform " << d_uniform;
  EXPECT_LT(d_shifted, 0.6 * d_uniform) << "shifted " << d_shifted << " uniform " << d_uniform;
}

TEST(SobolSequence, RejectsBadDimensions) {
  EXPECT_THROW(SobolSequence(0), std::invalid_argument);
  EXPECT_THROW(SobolSequence(3668), std::invalid_argument);
  Rng rng(1);
  EXPECT_THROW(SobolSequence(0, rng), std::invalid_argument);
  SobolSequence largest(3667);
  const Eigen::VectorXd p = largest.next();
  EXPECT_EQ(p.size(), 3667);
  EXPECT_TRUE((p.array() == 0.5).all());  // the first point after the origin
}

TEST(UniformPoints, RangeMomentsAndReference) {
  Rng rng(13);
  const Eigen::MatrixXd p = uniform_points(3, 100000, rng);
  ASSERT_EQ(p.rows(), 3);
  ASSERT_EQ(p.cols(), 100000);
  EXPECT_GE(p.minCoeff(), 0.0);
  EXPECT_LT(p.maxCoeff(), 1.0);
  for (Eigen::Index i = 0; i < 3; ++i) {
    const double mean = p.row(i).mean();
    const double var = (p.row(i).array() - mean).square().mean();
    EXPECT_NEAR(mean, 0.5, 0.005) << i;      // sd of the mean ~ 0.0009
    EXPECT_NEAR(var, 1.0 / 12, 0.002) << i;  // sd of the variance ~ 0.0003
  }
  // Column-major draws from uniform01: the same seed gives the same points.
  Rng again(13);
  for (Eigen::Index c = 0; c < 10; ++c) {
    for (Eigen::Index i = 0; i < 3; ++i) EXPECT_EQ(p(i, c), uniform01(again));
  }
  Rng empty_rng(1);
  EXPECT_EQ(uniform_points(4, 0, empty_rng).cols(), 0);
}

}  // namespace
}  // namespace tune
