// bounded_argmax (bounded_argmax.hpp) against a plain scan of every score, on random instances
// with ties, ineligible candidates, bounds equal to their scores and several divisors.
#include "tune/bandit/bounded_argmax.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <vector>

namespace {

struct TableScores {
  std::vector<double> scores, bounds;
  mutable std::size_t scored = 0;
  Eigen::Index size() const { return static_cast<Eigen::Index>(scores.size()); }
  double score(Eigen::Index i) const {
    ++scored;
    return scores[static_cast<std::size_t>(i)];
  }
  double upper_bound(Eigen::Index i) const { return bounds[static_cast<std::size_t>(i)]; }
};

// The reference: every eligible score, the first index with the largest ratio.
std::optional<tune::BoundedArgmax> scan(const TableScores& t, const std::vector<double>& divisor,
                                        const std::vector<bool>& eligible) {
  std::optional<tune::BoundedArgmax> best;
  for (std::size_t i = 0; i < t.scores.size(); ++i) {
    if (!eligible[i]) continue;
    const double ratio = t.scores[i] / divisor[i];
    if (!best || ratio > best->ratio) best = tune::BoundedArgmax{static_cast<Eigen::Index>(i), ratio};
  }
  return best;
}

TEST(BoundedArgmax, EqualsAScanOfEveryScore) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> size(0, 60), level(0, 4), coin(0, 3);
  const double divisors[] = {1.0, 0.1, 0.01, 3.0};
  std::size_t pruned = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    TableScores t;
    std::vector<double> divisor;
    std::vector<bool> eligible;
    const int m = size(rng);
    for (int i = 0; i < m; ++i) {
      // Few distinct values, so that ties in the score, in the ratio and between a bound and the
      // leader's ratio are common; a bound is its score (coin 0) or above it.
      const double score = 0.25 * level(rng) + (coin(rng) == 0 ? 0.0 : 1e-3 * level(rng));
      t.scores.push_back(score);
      t.bounds.push_back(coin(rng) == 0 ? score : score + 0.25 * level(rng));
      divisor.push_back(divisors[static_cast<std::size_t>(coin(rng))]);
      eligible.push_back(coin(rng) != 0);
    }
    const auto expected = scan(t, divisor, eligible);
    const auto got = tune::bounded_argmax(
        t, [&](Eigen::Index i) { return divisor[static_cast<std::size_t>(i)]; },
        [&](Eigen::Index i) { return static_cast<bool>(eligible[static_cast<std::size_t>(i)]); });
    ASSERT_EQ(expected.has_value(), got.has_value()) << "trial " << trial;
    if (!expected) continue;
    ASSERT_EQ(expected->index, got->index) << "trial " << trial;
    ASSERT_EQ(expected->ratio, got->ratio) << "trial " << trial;
    pruned += t.scored < static_cast<std::size_t>(m);
  }
  EXPECT_GT(pruned, 1000u);  // the point of it: most instances skip some scores
}

TEST(BoundedArgmax, ScoresOnlyWhatCanStillWin) {
  TableScores t;
  for (int i = 0; i < 100; ++i) {
    t.scores.push_back(i == 37 ? 10.0 : 1.0);
    t.bounds.push_back(i == 37 ? 11.0 : 2.0);
  }
  const auto best = tune::bounded_argmax(t, [](Eigen::Index) { return 1.0; }, [](Eigen::Index) { return true; });
  ASSERT_TRUE(best);
  EXPECT_EQ(best->index, 37);
  EXPECT_EQ(best->ratio, 10.0);
  EXPECT_EQ(t.scored, 1u);
}

TEST(BoundedArgmax, NothingEligibleAndNaN) {
  TableScores t{{1.0, 2.0}, {1.0, 2.0}};
  EXPECT_FALSE(tune::bounded_argmax(t, [](Eigen::Index) { return 1.0; }, [](Eigen::Index) { return false; }));
  EXPECT_FALSE(tune::bounded_argmax(TableScores{}, [](Eigen::Index) { return 1.0; }, [](Eigen::Index) { return true; }));
  TableScores nan_bound{{1.0}, {std::nan("")}};
  EXPECT_THROW(tune::bounded_argmax(nan_bound, [](Eigen::Index) { return 1.0; }, [](Eigen::Index) { return true; }),
               std::runtime_error);
  TableScores nan_score{{std::nan("")}, {1.0}};
  EXPECT_THROW(tune::bounded_argmax(nan_score, [](Eigen::Index) { return 1.0; }, [](Eigen::Index) { return true; }),
               std::runtime_error);
}

// All scores 0 (underflowed): the eligible candidate with the largest key, ties to the lowest index,
// ratio 0; any positive score: bounded_argmax's answer, keys unread.
TEST(BoundedArgmaxOrKey, KeysOrderCandidatesOnlyWhenEveryScoreIsZero) {
  const auto one = [](Eigen::Index) { return 1.0; };
  TableScores zeros{{0.0, 0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0, 0.0}};
  const std::vector<double> keys{-5.0, 2.0, 7.0, 2.0, 7.0};
  const std::vector<bool> eligible{true, true, false, true, true};
  const auto key = [&](Eigen::Index i) { return keys[static_cast<std::size_t>(i)]; };
  const auto is_eligible = [&](Eigen::Index i) { return static_cast<bool>(eligible[static_cast<std::size_t>(i)]); };
  auto best = tune::bounded_argmax_or_key(zeros, one, is_eligible, key);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->index, 4);  // 2 has the same key but is not eligible
  EXPECT_EQ(best->ratio, 0.0);
  best = tune::bounded_argmax_or_key(zeros, one, [](Eigen::Index) { return true; }, key);
  EXPECT_EQ(best->index, 2);  // ties to the lowest index
  best = tune::bounded_argmax_or_key(zeros, one, is_eligible, [](Eigen::Index) { return -std::numeric_limits<double>::infinity(); });
  EXPECT_EQ(best->index, 0);  // no key above -inf: the plain argmax's first eligible

  TableScores one_positive{{0.0, 1e-300, 0.0}, {0.0, 1e-300, 0.0}};
  std::size_t keys_read = 0;
  best = tune::bounded_argmax_or_key(one_positive, one, [](Eigen::Index) { return true; }, [&](Eigen::Index) {
    ++keys_read;
    return 1.0;
  });
  EXPECT_EQ(best->index, 1);
  EXPECT_EQ(best->ratio, 1e-300);
  EXPECT_EQ(keys_read, 0u);

  EXPECT_FALSE(tune::bounded_argmax_or_key(zeros, one, [](Eigen::Index) { return false; }, key));
  EXPECT_THROW(tune::bounded_argmax_or_key(zeros, one, [](Eigen::Index) { return true; },
                                           [](Eigen::Index) { return std::nan(""); }),
               std::runtime_error);
}

}  // namespace
