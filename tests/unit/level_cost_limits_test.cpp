// Cost limits per level (Study::set_level_cost_limits): with measured costs and a cost budget, a run
// whose cost is still a guess no longer keeps every other run waiting while the budget left, with
// each such pending run at its limit, covers the largest limit; and with every run costing its limit
// (the worst case) the spend stays within the budget.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tune/tune.hpp"

namespace {

const std::vector<double> kEpochs{1, 3, 9, 27};

tune::Study measured_study(const std::string& strategy, double budget, std::uint64_t seed = 1) {
  tune::StudyOptions o;
  o.seed = seed;
  o.resolution = tune::Resolution{"epochs", kEpochs, {}};
  o.cost_budget = budget;
  return tune::Study(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy(strategy), o);
}

void enqueue_at(tune::Study& study, std::size_t level, int count) {
  for (int i = 0; i < count; ++i) study.enqueue({{"x", 0.01 * (i + 1) + 0.1 * static_cast<double>(level)}}, level);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Before the first cost is in, every pending run is charged its limit, and the next may start while
// the budget left covers the largest limit (40), whichever level it is at: runs at epochs 1 (limit 5)
// start while 100 - 5 k >= 40 for the k already out, so 1 + (100 - 40) / 5 = 13 of them. Without
// limits the first runs alone, as before.
TEST(LevelCostLimits, BeforeTheFirstCostRunsStartWhileTheWorstCaseFits) {
  const std::vector<double> limits{5, 10, 20, 40};
  const std::size_t expected = 1 + static_cast<std::size_t>((100.0 - 40.0) / 5.0);
  ASSERT_EQ(expected, 13u);
  tune::Study study = measured_study("cmets", 100);
  study.set_level_cost_limits(limits);
  enqueue_at(study, 0, 20);
  std::vector<std::uint64_t> out;
  while (const auto s = study.ask()) out.push_back(s->id);
  EXPECT_EQ(out.size(), expected);
  EXPECT_FALSE(study.finished());
  EXPECT_TRUE(has(study.stop_reason(), "waiting for running trials")) << study.stop_reason();
  // The worst case: every run costs its limit.
  for (const std::uint64_t id : out) study.tell(id, 0.5, limits[0]);
  EXPECT_LE(study.spent_cost(), 100.0);
  EXPECT_EQ(study.spent_cost(), 5.0 * static_cast<double>(expected));

  tune::Study without = measured_study("cmets", 100);
  enqueue_at(without, 0, 20);
  ASSERT_TRUE(without.ask());
  EXPECT_FALSE(without.ask()) << "without limits a second run started before the first cost was in";
  EXPECT_TRUE(has(without.stop_reason(), "waiting for the first run's measured cost")) << without.stop_reason();
}

// Once epochs 1 is priced (2 s), runs start while the budget of 88, less trial 0's 2 and every
// pending run at its limit (5 at epochs 1, 40 at epochs 27, whose proportional guess of 54 is capped
// at 40), covers the largest limit, 40: trials 1 and 2 (epochs 1: 88 - 2 - 5 = 81, then 76) and 3
// (epochs 27); then 88 - 2 - 5 - 5 - 40 = 36 < 40 and the study waits. Charged at their level's
// estimate (2) as without limits, the runs at epochs 1 would have left 42 and a fourth run would have
// started: four workers then spent 38 of a budget of 25 when the runs now being made took 15 times
// the estimate. Once trials 1 and 2 are in (2.5 each), 88 - 47 = 41 covers trial 4 beside trial 3.
TEST(LevelCostLimits, RunsStartBesideOthersWhileEveryPendingRunAtItsLimitFits) {
  const std::vector<double> limits{5, 10, 20, 40};
  tune::Study study = measured_study("cmets", 88);
  study.set_level_cost_limits(limits);
  enqueue_at(study, 0, 1);
  const auto first = study.ask();
  ASSERT_TRUE(first);
  study.tell(first->id, 1.5, 2.0);
  const std::vector<double> costs = study.level_costs();
  EXPECT_EQ(costs[3], 40.0) << "the proportional guess of 54 is above the limit";
  EXPECT_EQ(tune::level_costs(*study.resolution(), study.trials())[3], 54.0);
  enqueue_at(study, 0, 2);
  enqueue_at(study, 3, 5);
  std::vector<std::size_t> levels;
  while (const auto s = study.ask()) levels.push_back(*s->level);
  EXPECT_EQ(levels, (std::vector<std::size_t>{0, 0, 3}));
  EXPECT_FALSE(study.finished());
  EXPECT_TRUE(has(study.stop_reason(), "waiting for running trials")) << study.stop_reason();
  study.tell(1, 1.0, 2.5);
  study.tell(2, 1.0, 2.5);
  const auto fourth = study.ask();
  ASSERT_TRUE(fourth) << study.stop_reason();
  EXPECT_EQ(fourth->level, 3u);
  EXPECT_FALSE(study.ask()) << "88 - 47 - 40 = 1 covers no further run";
  // Every run at epochs 27 at its limit: the spend, 2 + 2.5 + 2.5 + 40 + 40 = 87, stays within 88.
  study.tell(3, 0.5, limits[3]);
  study.tell(4, 0.5, limits[3]);
  EXPECT_EQ(study.spent_cost(), 87.0);
  EXPECT_FALSE(study.ask());
  EXPECT_TRUE(study.finished());
  EXPECT_TRUE(study.stopped_for_cost_budget()) << study.stop_reason();
}

// Four workers, every run costing its limit, limits in proportion to the epochs (so that every
// estimate from measured runs is exact and any excess would be the guessed runs'): the spend never
// exceeds the budget, and runs at levels not yet priced did run side by side. The study is saved
// and loaded at every step, and its limits set again, as a resumed tuner does (they are not saved).
TEST(LevelCostLimits, WorstCaseCostsNeverExceedTheBudget) {
  const std::vector<double> limits{2, 6, 18, 54};
  constexpr double kBudget = 200;
  // Also with costs that depend on the configuration: runs near the optimum at their limit, the
  // others 15 times cheaper, so that the level's mean, priced by the cheap runs, is far below the
  // runs being made near the end (spent 38 of 25 when pending runs counted at their level's mean).
  for (const bool varying : {false, true})
  for (const std::string strategy : {"cmets", "cmes", "ei"}) {
    SCOPED_TRACE(varying ? "costs varying with the configuration" : "every run at its limit");
    tune::Study study = measured_study(strategy, kBudget, 5);
    study.set_level_cost_limits(limits);
    std::vector<bool> priced(4, false);  // a run there completed: this test's own record
    std::vector<tune::Suggestion> running;
    double spend = 0.0;
    int beside_a_guess = 0;  // runs handed out while a run of guessed cost was out
    for (int step = 0; step < 400; ++step) {
      while (running.size() < 4) {
        const auto s = study.ask();
        if (!s) break;
        bool calibrated = false;
        for (bool p : priced) calibrated = calibrated || p;
        for (const tune::Suggestion& r : running)
          if (!calibrated || !priced[*r.level]) {
            ++beside_a_guess;
            break;
          }
        running.push_back(*s);
      }
      if (running.empty()) break;
      const tune::Suggestion done = running.front();
      running.erase(running.begin());
      const double x = study.trial(done.id).unit(0);
      const double cost = varying && !(x > 0.2 && x < 0.4) ? limits[*done.level] / 15 : limits[*done.level];
      study.tell(done.id, 0.5 - 0.1 * study.trial(done.id).unit(0) + 1.0 / kEpochs[*done.level], cost);
      priced[*done.level] = true;
      spend += cost;
      EXPECT_LE(spend, kBudget) << strategy << " after trial " << done.id;
      study = tune::Study::from_yaml_string(study.to_yaml_string(), "resumed");
      EXPECT_TRUE(study.level_cost_limits().empty()) << "the limits are not part of the saved study";
      study.set_level_cost_limits(limits);
    }
    EXPECT_TRUE(study.finished()) << strategy << ": " << study.stop_reason();
    if (!varying) {
      EXPECT_GT(beside_a_guess, 0) << strategy << ": no run started beside one of guessed cost";
    }
    EXPECT_LE(spend, kBudget) << strategy;
    EXPECT_EQ(study.spent_cost(), spend) << strategy;
  }
}

// The limits are refused unless one per level, finite and > 0, and change nothing that is saved.
TEST(LevelCostLimits, LimitsAreCheckedAndNotSaved) {
  tune::Study study = measured_study("cmets", 100);
  const std::string saved = study.to_yaml_string();
  EXPECT_THROW(study.set_level_cost_limits({1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(study.set_level_cost_limits({1, 2, 0, 4}), std::invalid_argument);
  EXPECT_THROW(study.set_level_cost_limits({1, 2, 3, std::nan("")}), std::invalid_argument);
  EXPECT_TRUE(study.level_cost_limits().empty());
  study.set_level_cost_limits({1, 2, 3, 4});
  EXPECT_EQ(study.level_cost_limits(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(study.to_yaml_string(), saved);
  study.set_level_cost_limits({});
  EXPECT_TRUE(study.level_cost_limits().empty());
  tune::Study flat(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy("ei"));
  EXPECT_THROW(flat.set_level_cost_limits({1}), std::invalid_argument);
}

}  // namespace
