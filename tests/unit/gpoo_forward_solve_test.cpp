// gpoo_forward_solve: the forward solves of a node's new children, done together in one pass over L,
// must give the bits of Eigen's own solve of each column (a told search and its replay, and every
// earlier build's trajectories, depend on them). The reference is Eigen's
// L.triangularView<Lower>().solve(b), column by column, compared bit for bit.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cstring>
#include <random>
#include <vector>

#include "tune/strategy/gpoo_search.hpp"

namespace tune {
namespace {

// A well-conditioned Cholesky factor in the top-left t x t corner of a capacity x capacity matrix
// (the search's L_ has spare capacity: its outer stride exceeds t), garbage elsewhere.
Eigen::MatrixXd factor(Eigen::Index t, Eigen::Index capacity, std::mt19937_64& rng) {
  std::normal_distribution<double> g;
  Eigen::MatrixXd X(t, t + 3);
  for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = g(rng);
  Eigen::MatrixXd A = X * X.transpose() / static_cast<double>(t) + 0.01 * Eigen::MatrixXd::Identity(t, t);
  Eigen::MatrixXd L = Eigen::MatrixXd::Constant(capacity, capacity, 7.0);
  L.topLeftCorner(t, t) = Eigen::LLT<Eigen::MatrixXd>(A).matrixL();
  return L;
}

bool same_bits(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

TEST(GpooForwardSolve, EveryColumnHasTheBitsOfEigensSolve) {
  std::mt19937_64 rng(20261124);
  std::normal_distribution<double> g;
  const std::vector<Eigen::Index> sizes = {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 257, 1000};
  for (Eigen::Index t : sizes) {
    const Eigen::MatrixXd L = factor(t, t + 5 + t / 8, rng);
    for (int m : {1, 2, 3, 5}) {
      std::vector<Eigen::VectorXd> b(static_cast<std::size_t>(m));
      for (int q = 0; q < m; ++q) {
        b[static_cast<std::size_t>(q)] = Eigen::VectorXd(t + 4);  // room beyond t, as a node's column has
        for (Eigen::Index i = 0; i < b[static_cast<std::size_t>(q)].size(); ++i)
          b[static_cast<std::size_t>(q)][i] = g(rng);
        // Zero entries (a kernel value that underflowed): Eigen skips them, so must the batch.
        if (q == 1 && t > 3) b[1].head(t / 2).setZero();
      }
      std::vector<Eigen::VectorXd> x = b;
      std::vector<double*> columns;
      for (auto& v : x) columns.push_back(v.data());
      gpoo_forward_solve(L, t, columns);
      for (int q = 0; q < m; ++q) {
        const auto& bq = b[static_cast<std::size_t>(q)];
        const Eigen::VectorXd want = L.topLeftCorner(t, t).triangularView<Eigen::Lower>().solve(bq.head(t));
        const Eigen::VectorXd got = x[static_cast<std::size_t>(q)].head(t);
        EXPECT_TRUE(same_bits(got, want)) << "t = " << t << ", " << m << " columns, column " << q
                                          << ": largest difference " << (got - want).cwiseAbs().maxCoeff();
        EXPECT_TRUE(same_bits(x[static_cast<std::size_t>(q)].tail(4), bq.tail(4)))
            << "entries beyond t must be left alone";
      }
    }
  }
}

// Columns of different sizes in one call (replay solves the children a block of rounds creates,
// each of the size of the round it was created at): each has the bits of Eigen's solve of its size.
TEST(GpooForwardSolve, ColumnsOfTheirOwnSizesHaveTheBitsOfEigensSolves) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g;
  const Eigen::Index capacity = 360;
  const Eigen::MatrixXd L = factor(300, capacity, rng);
  for (const std::vector<Eigen::Index>& sizes :
       {std::vector<Eigen::Index>{300, 299, 289, 288, 287, 270, 257, 256}, std::vector<Eigen::Index>{5, 300, 9, 64, 1, 100, 101},
        std::vector<Eigen::Index>{33, 33, 40}}) {
    std::vector<Eigen::VectorXd> b, x;
    for (Eigen::Index t : sizes) {
      Eigen::VectorXd v(t + 3);
      for (Eigen::Index i = 0; i < v.size(); ++i) v[i] = g(rng);
      b.push_back(v);
    }
    x = b;
    std::vector<std::pair<double*, Eigen::Index>> columns;
    for (std::size_t q = 0; q < x.size(); ++q) columns.emplace_back(x[q].data(), sizes[q]);
    gpoo_forward_solve(L, columns);
    for (std::size_t q = 0; q < x.size(); ++q) {
      const Eigen::Index t = sizes[q];
      const Eigen::VectorXd want = L.topLeftCorner(t, t).triangularView<Eigen::Lower>().solve(b[q].head(t));
      EXPECT_TRUE(same_bits(x[q].head(t), want)) << "size " << t << ": largest difference "
                                                 << (x[q].head(t) - want).cwiseAbs().maxCoeff();
      EXPECT_TRUE(same_bits(x[q].tail(3), b[q].tail(3))) << "entries beyond the size must be left alone";
    }
  }
}

}  // namespace
}  // namespace tune
