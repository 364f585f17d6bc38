// FailureProbability against its closed forms: the Beta posterior mean where every trial sits at
// one point, the campaign's smoothed share far from every trial, and a direct sum of squared
// exponential weights elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tune/strategy/failure_probability.hpp"

namespace {

tune::Trial trial(std::uint64_t id, Eigen::Vector2d unit, tune::TrialStatus status) {
  tune::Trial t;
  t.id = id;
  t.unit = unit;
  t.status = status;
  if (status == tune::TrialStatus::complete) t.value = 1.0;
  return t;
}

const tune::Kernel kSe(tune::KernelType::squared_exponential, Eigen::Vector2d(0.1, 0.2), 3.0);

TEST(FailureProbability, IsZeroEverywhereWithoutAFailedTrial) {
  std::vector<tune::Trial> trials{trial(0, {0.2, 0.2}, tune::TrialStatus::complete),
                                  trial(1, {0.8, 0.8}, tune::TrialStatus::pending)};
  const tune::FailureProbability p(trials, kSe);
  EXPECT_FALSE(p.any_failure());
  EXPECT_EQ(p.failure(Eigen::Vector2d(0.8, 0.8)), 0.0);
  EXPECT_EQ(p.success(Eigen::Vector2d(0.5, 0.1)), 1.0);
}

TEST(FailureProbability, AtThePointOfEveryTrialIsTheBetaPosteriorMean) {
  // k failed of n at one point, prior weight 1 at p0 = (k + 1/2) / (n + 1): (p0 + k) / (1 + n).
  const Eigen::Vector2d x0(0.3, 0.6);
  for (const auto& [k, n] : {std::pair{1, 1}, std::pair{1, 4}, std::pair{3, 7}, std::pair{5, 5}}) {
    std::vector<tune::Trial> trials;
    for (int i = 0; i < n; ++i)
      trials.push_back(trial(static_cast<std::uint64_t>(i), x0, i < k ? tune::TrialStatus::failed : tune::TrialStatus::complete));
    trials.push_back(trial(static_cast<std::uint64_t>(n), {0.9, 0.1}, tune::TrialStatus::pending));  // not counted
    const tune::FailureProbability p(trials, kSe);
    const double p0 = (k + 0.5) / (n + 1.0);
    EXPECT_DOUBLE_EQ(p.prior(), p0);
    EXPECT_NEAR(p.failure(x0), (p0 + k) / (1.0 + n), 1e-15) << k << " of " << n;
  }
}

TEST(FailureProbability, FarFromEveryTrialIsTheCampaignsShareAndElsewhereTheWeightedMean) {
  std::vector<tune::Trial> trials{trial(0, {0.1, 0.1}, tune::TrialStatus::complete),
                                  trial(1, {0.15, 0.2}, tune::TrialStatus::failed),
                                  trial(2, {0.2, 0.1}, tune::TrialStatus::complete),
                                  trial(3, {0.3, 0.4}, tune::TrialStatus::failed)};
  const tune::FailureProbability p(trials, kSe);
  const double p0 = 2.5 / 5.0;
  // 0.9 in x is 6 lengthscales from every trial at least (weights below e^-18).
  EXPECT_NEAR(p.failure(Eigen::Vector2d(1.0, 1.0)), p0, 1e-7);
  // Elsewhere: w_i = exp(-1/2 sum_k (x_k - x_ik)^2 / l_k^2), the outputscale divided out.
  for (const Eigen::Vector2d& x : {Eigen::Vector2d(0.15, 0.15), Eigen::Vector2d(0.25, 0.3), Eigen::Vector2d(0.0, 0.5)}) {
    double weight = 1.0, failed = p0;
    for (const tune::Trial& t : trials) {
      const double dx = (x(0) - t.unit(0)) / 0.1, dy = (x(1) - t.unit(1)) / 0.2;
      const double w = std::exp(-0.5 * (dx * dx + dy * dy));
      weight += w;
      if (t.status == tune::TrialStatus::failed) failed += w;
    }
    EXPECT_NEAR(p.failure(x), failed / weight, 1e-14) << x.transpose();
    EXPECT_NEAR(p.success(x), 1.0 - failed / weight, 1e-14);
  }
}

TEST(FailureProbability, ALevelWhoseRunsFailIsWeighedByItsShareAgainstTheBestLevel) {
  // Three levels: level 0 failed 3 times of 3, level 2 completed once, level 1 has not run (and a
  // pending run of it does not count). Smoothed success shares s = (completed + 1/2) / (finished + 1):
  // 0.5 / 4 = 0.125 and 1.5 / 2 = 0.75, an untried level's 1/2; T(l) = s_l / max s = 1/6, 1, 1.
  const auto at = [](tune::Trial t, std::size_t level) {
    t.level = level;
    return t;
  };
  std::vector<tune::Trial> trials{at(trial(0, {0.1, 0.1}, tune::TrialStatus::failed), 0),
                                  at(trial(1, {0.5, 0.5}, tune::TrialStatus::failed), 0),
                                  at(trial(2, {0.9, 0.2}, tune::TrialStatus::failed), 0),
                                  at(trial(3, {0.4, 0.8}, tune::TrialStatus::complete), 2),
                                  at(trial(4, {0.7, 0.7}, tune::TrialStatus::pending), 1)};
  const tune::FailureProbability leveled(trials, kSe, 3);
  const tune::FailureProbability flat(trials, kSe);
  EXPECT_NEAR(leveled.level_factor(0), 1.0 / 6.0, 1e-15);
  EXPECT_EQ(leveled.level_factor(1), 1.0);
  EXPECT_EQ(leveled.level_factor(2), 1.0);
  EXPECT_EQ(leveled.level_factor(7), 1.0);  // beyond the last: the last
  for (const Eigen::Vector2d& x : {Eigen::Vector2d(0.1, 0.1), Eigen::Vector2d(0.4, 0.8), Eigen::Vector2d(1.0, 0.0)}) {
    // The configuration's part is the estimate without levels, bit for bit.
    EXPECT_EQ(leveled.failure(x), flat.failure(x));
    EXPECT_NEAR(leveled.success(x, 0), flat.success(x) / 6.0, 1e-15);
    EXPECT_EQ(leveled.success(x, 2), flat.success(x));
    EXPECT_EQ(flat.success(x, 0), flat.success(x));  // without levels every factor is 1
  }
  // Levels that fail alike keep factors near 1: 2 of 10 and 1 of 5 failed, s = 8.5 / 11, 4.5 / 6.
  std::vector<tune::Trial> alike;
  for (std::uint64_t i = 0; i < 15; ++i)
    alike.push_back(at(trial(i, {0.05 * static_cast<double>(i), 0.5},
                             (i < 10 ? i < 2 : i < 11) ? tune::TrialStatus::failed : tune::TrialStatus::complete),
                       i < 10 ? 0 : 2));
  const tune::FailureProbability both(alike, kSe, 3);
  EXPECT_EQ(both.level_factor(0), 1.0);
  EXPECT_NEAR(both.level_factor(2), (4.5 / 6.0) / (8.5 / 11.0), 1e-15);  // 0.97
}

TEST(FailureProbability, RefusesAPointOfTheWrongDimension) {
  std::vector<tune::Trial> trials{trial(0, {0.1, 0.1}, tune::TrialStatus::failed)};
  trials[0].unit = Eigen::Vector3d(0.1, 0.1, 0.1);
  EXPECT_THROW(tune::FailureProbability(trials, kSe), std::invalid_argument);
}

TEST(FailedRunCeiling, IsTheMedianRewardCountedFromTheBest) {
  EXPECT_EQ(tune::failed_run_ceiling({}), 0.0);
  EXPECT_EQ(tune::failed_run_ceiling({2.5}), 2.5);
  EXPECT_EQ(tune::failed_run_ceiling({5.0, 1.0, 3.0}), 3.0);
  EXPECT_EQ(tune::failed_run_ceiling({1.0, 4.0, 2.0, 3.0}), 2.0);  // the (n/2 + 1)-th best
  std::vector<double> r;
  for (int i = 0; i < 101; ++i) r.push_back(std::sin(0.7 * i));
  std::vector<double> sorted = r;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(tune::failed_run_ceiling(r), sorted[50]);
}

}  // namespace
