// What interrupted runs spent (Study::add_interrupted_cost): charged to the cost budget on top of
// the trial's own cost, not part of the level's estimated cost, saved with the study, and counted by
// the never-overshoot rule of time limits.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tune/io/yaml_values.hpp"  // StateError
#include "tune/tune.hpp"

namespace {

const std::vector<double> kEpochs{1, 3, 9, 27};

tune::Study measured_study(double budget) {
  tune::StudyOptions o;
  o.seed = 3;
  o.resolution = tune::Resolution{"epochs", kEpochs, {}};
  o.cost_budget = budget;
  return tune::Study(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy("cmets"), o);
}

TEST(InterruptedCost, IsSpentButLeavesTheLevelsCostAsItsCompletedRunsMeasured) {
  tune::Study study = measured_study(1000);
  study.enqueue({{"x", 0.2}}, 1);
  study.enqueue({{"x", 0.4}}, 1);
  const auto a = study.ask();
  ASSERT_TRUE(a);
  study.add_interrupted_cost(a->id, 2.5);  // stopped after 2.5 s, then again after 1 s
  study.add_interrupted_cost(a->id, 1.0);
  study.tell(a->id, 0.3, 4.0);
  const auto b = study.ask();
  ASSERT_TRUE(b);
  study.tell(b->id, 0.5, 6.0);
  EXPECT_EQ(study.trial(a->id).interrupted_cost, 3.5);
  EXPECT_EQ(study.spent_cost(), 4.0 + 3.5 + 6.0);
  EXPECT_EQ(study.level_costs()[1], (4.0 + 6.0) / 2);  // the completed runs' mean, not 6.75
}

TEST(InterruptedCost, OfAPendingTrialIsSpentBesideItsCommittedLevelCost) {
  tune::Study study = measured_study(1000);
  study.enqueue({{"x", 0.2}}, 0);
  study.enqueue({{"x", 0.4}}, 0);
  const auto a = study.ask();
  ASSERT_TRUE(a);
  study.tell(a->id, 0.3, 2.0);
  const auto b = study.ask();
  ASSERT_TRUE(b);
  EXPECT_EQ(study.spent_cost(), 2.0 + 2.0);  // b committed at its level's cost
  study.add_interrupted_cost(b->id, 1.25);
  EXPECT_EQ(study.spent_cost(), 2.0 + 2.0 + 1.25);
}

TEST(InterruptedCost, IsSavedAndLoadedAndRefusedWhenDamaged) {
  tune::Study study = measured_study(1000);
  study.enqueue({{"x", 0.2}}, 2);
  const auto a = study.ask();
  ASSERT_TRUE(a);
  study.add_interrupted_cost(a->id, 7.125);
  const std::string text = study.to_yaml_string();
  ASSERT_NE(text.find("interrupted_cost: 7.125"), std::string::npos) << text;
  const tune::Study loaded = tune::Study::from_yaml_string(text, "s.yaml");
  EXPECT_EQ(loaded.trial(a->id).interrupted_cost, 7.125);
  EXPECT_EQ(loaded.spent_cost(), study.spent_cost());
  EXPECT_EQ(loaded.to_yaml_string(), text);

  std::string damaged = text;
  damaged.replace(damaged.find("interrupted_cost: 7.125"), 23, "interrupted_cost: -1");
  try {
    (void)tune::Study::from_yaml_string(damaged, "s.yaml");
    ADD_FAILURE() << "a negative interrupted cost was loaded";
  } catch (const tune::StateError& e) {
    EXPECT_NE(std::string(e.what()).find("interrupted_cost"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("s.yaml"), std::string::npos) << e.what();
  }
  // A study that never interrupted a run writes no such field (files of earlier versions read the same).
  tune::Study plain = measured_study(1000);
  plain.enqueue({{"x", 0.2}}, 2);
  ASSERT_TRUE(plain.ask());
  EXPECT_EQ(plain.to_yaml_string().find("interrupted_cost"), std::string::npos);
}

TEST(InterruptedCost, IsRefusedForAFinishedTrialANegativeCostAndAStudyWithoutResolution) {
  tune::Study study = measured_study(1000);
  study.enqueue({{"x", 0.2}}, 0);
  const auto a = study.ask();
  ASSERT_TRUE(a);
  EXPECT_THROW(study.add_interrupted_cost(a->id, -1), std::invalid_argument);
  EXPECT_THROW(study.add_interrupted_cost(a->id, std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_THROW(study.add_interrupted_cost(a->id + 1, 1), std::invalid_argument);
  study.tell(a->id, 0.3, 2.0);
  EXPECT_THROW(study.add_interrupted_cost(a->id, 1), std::invalid_argument);
  EXPECT_EQ(study.spent_cost(), 2.0);

  tune::Study flat(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy("ei"), tune::StudyOptions{});
  const auto f = flat.ask();
  ASSERT_TRUE(f);
  EXPECT_THROW(flat.add_interrupted_cost(f->id, 1), std::invalid_argument);
}

// With time limits a trial starts beside running ones only while the budget left, each running
// trial at its limit, covers the longest limit. What a running trial's interrupted runs spent is
// spent already, on top of its limit: budget 100, limits {5, 10, 20, 40}, one trial at epochs 1
// running. Without interrupted cost: 100 - 5 = 95 >= 40, another starts. With 56 spent by its
// interrupted runs: 100 - 5 - 56 = 39 < 40, none does.
TEST(InterruptedCost, CountsInTheNeverOvershootRuleOfTimeLimits) {
  for (const double interrupted : {0.0, 55.0, 56.0}) {
    tune::Study study = measured_study(100);
    study.set_level_cost_limits({5, 10, 20, 40});
    study.enqueue({{"x", 0.2}}, 0);
    study.enqueue({{"x", 0.4}}, 0);
    const auto a = study.ask();
    ASSERT_TRUE(a);
    if (interrupted > 0) study.add_interrupted_cost(a->id, interrupted);
    const bool starts = study.ask().has_value();
    EXPECT_EQ(starts, 100 - 5 - interrupted >= 40) << "interrupted cost " << interrupted;
  }
}

}  // namespace
