// The median (percentile) stopping rule against hand-worked cases, numpy's percentile, and what a
// pruned trial means to a Study: told its last value, never its best trial, saved and loaded.
// (Agreement with Optuna's own pruner on random cases: pruning_rule_optuna_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tune/io/yaml_values.hpp"  // StateError
#include "tune/tune.hpp"

namespace {

using tune::CurvePoint;
using tune::Direction;
using tune::LearningCurve;
using tune::PruningRule;

LearningCurve curve(std::vector<double> values, std::int64_t first_step = 0) {
  LearningCurve c;
  for (double v : values) c.push_back({first_step++, v});
  return c;
}

std::vector<const LearningCurve*> pointers(const std::vector<LearningCurve>& curves) {
  std::vector<const LearningCurve*> out;
  for (const LearningCurve& c : curves) out.push_back(&c);
  return out;
}

PruningRule rule_after(std::size_t startup) {
  PruningRule r;
  r.startup_trials = startup;
  return r;
}

TEST(PercentileOf, InterpolatesLinearlyAsNumpy) {
  // numpy.percentile([1, 2, 3, 4], q) for q = 50, 25, 75, 0, 100: 2.5, 1.75, 3.25, 1, 4.
  EXPECT_DOUBLE_EQ(tune::percentile_of({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(tune::percentile_of({4, 1, 3, 2}, 25), 1.75);
  EXPECT_DOUBLE_EQ(tune::percentile_of({4, 1, 3, 2}, 75), 3.25);
  EXPECT_DOUBLE_EQ(tune::percentile_of({4, 1, 3, 2}, 0), 1);
  EXPECT_DOUBLE_EQ(tune::percentile_of({4, 1, 3, 2}, 100), 4);
  EXPECT_DOUBLE_EQ(tune::percentile_of({10, 0, 5}, 90), 9);  // rank 1.8: 5 + 0.8 * 5
  EXPECT_DOUBLE_EQ(tune::percentile_of({7}, 50), 7);
  EXPECT_THROW(tune::percentile_of({}, 50), std::invalid_argument);
}

TEST(ValueAtStep, TakesTheLastReportAtOrBeforeTheStepOfACurveThatReachesIt) {
  const LearningCurve every_fifth{{0, 9}, {5, 7}, {10, 4}, {10, 3.5}, {15, 2}};
  EXPECT_EQ(tune::value_at_step(every_fifth, 5), 7);
  EXPECT_EQ(tune::value_at_step(every_fifth, 7), 7);     // between reports: the one before
  EXPECT_EQ(tune::value_at_step(every_fifth, 10), 3.5);  // the later of two reports of a step
  EXPECT_EQ(tune::value_at_step(every_fifth, 15), 2);
  EXPECT_FALSE(tune::value_at_step(every_fifth, 16));    // the run ended before step 16
  EXPECT_FALSE(tune::value_at_step(LearningCurve{{3, 1}}, 2));  // nothing at or before step 2
  const LearningCurve with_nan{{0, 5}, {1, std::nan("")}, {2, 4}};
  EXPECT_EQ(tune::value_at_step(with_nan, 1), 5);  // a NaN report is skipped
}

TEST(PruneVerdict, IsTheMedianRuleOnAWorkedExample) {
  // Five completed losses; at step 2 they are 3, 5, 1, 4, 2: the median is 3.
  const std::vector<LearningCurve> done{curve({9, 6, 3, 2}), curve({9, 7, 5, 4}), curve({8, 4, 1, 0.5}),
                                        curve({9, 8, 4, 3}), curve({9, 5, 2, 1})};
  const PruningRule rule = rule_after(5);
  // Best so far 3.5 > 3: stopped, and the verdict says with what.
  const auto v = tune::prune_verdict(rule, Direction::minimize, pointers(done), curve({8, 3.5, 3.6}));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->step, 2);
  EXPECT_EQ(v->best_so_far, 3.5);
  EXPECT_EQ(v->last_value, 3.6);
  EXPECT_EQ(v->threshold, 3);
  EXPECT_EQ(v->compared, 5u);
  EXPECT_EQ(v->explain("loss", 50),
            "at step 2 its best loss 3.5 is worse than 3, the median of the 5 completed trials there");
  // Its best so far counts, not its last value: 2.9 at step 1 keeps it (2.9 <= 3).
  EXPECT_FALSE(tune::prune_verdict(rule, Direction::minimize, pointers(done), curve({8, 2.9, 3.6})));
  // Equal to the median is not worse.
  EXPECT_FALSE(tune::prune_verdict(rule, Direction::minimize, pointers(done), curve({8, 3, 3})));
}

TEST(PruneVerdict, CountsThePercentileFromTheBestForBothDirections) {
  // Accuracies at step 1: 0.1 .. 0.5. Maximised, percentile 25 means the 75th percentile: 0.4.
  const std::vector<LearningCurve> done{curve({0, 0.1}), curve({0, 0.2}), curve({0, 0.3}), curve({0, 0.4}),
                                        curve({0, 0.5})};
  PruningRule quarter = rule_after(5);
  quarter.percentile = 25;
  EXPECT_TRUE(tune::prune_verdict(quarter, Direction::maximize, pointers(done), curve({0, 0.39})));
  EXPECT_FALSE(tune::prune_verdict(quarter, Direction::maximize, pointers(done), curve({0, 0.4})));
  const PruningRule median = rule_after(5);
  EXPECT_FALSE(tune::prune_verdict(median, Direction::maximize, pointers(done), curve({0, 0.3})));
  EXPECT_TRUE(tune::prune_verdict(median, Direction::maximize, pointers(done), curve({0, 0.29})));
  // The same values as losses (the runs start at loss 1): percentile 25 from the best (lowest) is 0.2.
  EXPECT_TRUE(tune::prune_verdict(quarter, Direction::minimize, pointers(done), curve({1, 0.21})));
  EXPECT_FALSE(tune::prune_verdict(quarter, Direction::minimize, pointers(done), curve({1, 0.2})));
  // 100: only a trial worse than every completed one at its step is stopped.
  PruningRule worst = rule_after(5);
  worst.percentile = 100;
  EXPECT_FALSE(tune::prune_verdict(worst, Direction::minimize, pointers(done), curve({1, 0.5})));
  EXPECT_TRUE(tune::prune_verdict(worst, Direction::minimize, pointers(done), curve({1, 0.51})));
}

TEST(PruneVerdict, WaitsForStartupTrialsWarmupStepsAndTrialsThatReachedTheStep) {
  const std::vector<LearningCurve> done{curve({1, 1, 1}), curve({1, 1, 1}), curve({1, 1, 1, 1, 1})};
  const LearningCurve bad = curve({5, 5, 5});
  EXPECT_TRUE(tune::prune_verdict(rule_after(3), Direction::minimize, pointers(done), bad));
  EXPECT_FALSE(tune::prune_verdict(rule_after(4), Direction::minimize, pointers(done), bad));  // 3 completed < 4
  PruningRule warm = rule_after(3);
  warm.warmup_steps = 3;
  EXPECT_FALSE(tune::prune_verdict(warm, Direction::minimize, pointers(done), bad));  // at step 2 < 3
  EXPECT_TRUE(tune::prune_verdict(warm, Direction::minimize, pointers(done), curve({5, 5, 5, 5})));
  // At step 4 only one completed trial ran that long.
  PruningRule two = rule_after(3);
  two.min_trials = 2;
  const LearningCurve long_bad = curve({5, 5, 5, 5, 5});
  EXPECT_FALSE(tune::prune_verdict(two, Direction::minimize, pointers(done), long_bad));
  const auto v = tune::prune_verdict(rule_after(3), Direction::minimize, pointers(done), long_bad);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->compared, 1u);
  // Nothing reported, or only NaN: nothing to judge.
  EXPECT_FALSE(tune::prune_verdict(rule_after(0), Direction::minimize, pointers(done), {}));
  EXPECT_FALSE(tune::prune_verdict(rule_after(0), Direction::minimize, pointers(done), {{0, std::nan("")}}));
  // No completed trial at all, even with startup 0.
  EXPECT_FALSE(tune::prune_verdict(rule_after(0), Direction::minimize, {}, bad));
}

TEST(PruningRule, NamesItsPercentileAsAnOrdinal) {
  EXPECT_EQ(tune::percentile_name(50), "the median");
  EXPECT_EQ(tune::percentile_name(1), "the 1st percentile from the best");
  EXPECT_EQ(tune::percentile_name(2), "the 2nd percentile from the best");
  EXPECT_EQ(tune::percentile_name(23), "the 23rd percentile from the best");
  EXPECT_EQ(tune::percentile_name(11), "the 11th percentile from the best");
  EXPECT_EQ(tune::percentile_name(12.5), "the 12.5th percentile from the best");
  EXPECT_EQ(tune::percentile_name(100), "the 100th percentile from the best");
}

TEST(PruningRule, RefusesSettingsThatMeanNothing) {
  PruningRule r;
  EXPECT_NO_THROW(r.validate());
  r.percentile = 0;
  EXPECT_THROW(r.validate(), std::invalid_argument);
  r.percentile = 100.5;
  EXPECT_THROW(r.validate(), std::invalid_argument);
  r.percentile = std::nan("");
  EXPECT_THROW(r.validate(), std::invalid_argument);
  r = PruningRule{};
  r.min_trials = 0;
  EXPECT_THROW(r.validate(), std::invalid_argument);
}

TEST(StudyTellPruned, IsAFailureThatKeepsItsStepAndLastValueAndIsNeverTheBestTrial) {
  tune::Study study(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy("ei"), tune::StudyOptions{});
  const auto a = study.ask();
  ASSERT_TRUE(a);
  study.tell(a->id, 0.5);
  const auto b = study.ask();
  ASSERT_TRUE(b);
  study.tell_pruned(b->id, 7, 0.1);  // lower than the complete trial's 0.5, yet no result
  const tune::Trial& pruned = study.trial(b->id);
  EXPECT_EQ(pruned.status, tune::TrialStatus::failed);
  EXPECT_FALSE(pruned.value);
  ASSERT_TRUE(pruned.pruned);
  EXPECT_EQ(pruned.pruned->step, 7);
  EXPECT_EQ(pruned.pruned->last_value, 0.1);
  EXPECT_EQ(pruned.failure_reason, "pruned at step 7 (its last value 0.1)");
  ASSERT_NE(study.best(), nullptr);
  EXPECT_EQ(study.best()->id, a->id);
  EXPECT_THROW(study.tell_pruned(b->id, 8, 0.2), std::invalid_argument);  // not pending any more
  const auto c = study.ask();
  ASSERT_TRUE(c);
  EXPECT_THROW(study.tell_pruned(c->id, 1, std::nan("")), std::invalid_argument);
  EXPECT_THROW(study.tell_pruned(c->id, 1, 0.3, 2.0), std::invalid_argument);  // a cost without a resolution
  EXPECT_EQ(study.trial(c->id).status, tune::TrialStatus::pending);  // a refused tell leaves no mark
  EXPECT_FALSE(study.trial(c->id).pruned);

  const std::string text = study.to_yaml_string();
  ASSERT_NE(text.find("pruned: {step: 7, last_value: 0.1}"), std::string::npos) << text;
  const tune::Study loaded = tune::Study::from_yaml_string(text, "s.yaml");
  ASSERT_TRUE(loaded.trial(b->id).pruned);
  EXPECT_EQ(loaded.trial(b->id).pruned->step, 7);
  EXPECT_EQ(loaded.trial(b->id).pruned->last_value, 0.1);
  EXPECT_EQ(loaded.best()->id, a->id);
  EXPECT_EQ(loaded.to_yaml_string(), text);
  // A pending trial marked pruned is damage, refused with the field named.
  std::string damaged = text;
  const std::size_t line = damaged.find("{id: " + std::to_string(c->id) + ",");
  ASSERT_NE(line, std::string::npos) << text;
  damaged.insert(damaged.find('\n', line) - 1, ", pruned: {step: 1, last_value: 2}");
  try {
    (void)tune::Study::from_yaml_string(damaged, "s.yaml");
    ADD_FAILURE() << "a pending trial marked pruned was loaded";
  } catch (const tune::StateError& e) {
    EXPECT_NE(std::string(e.what()).find("pruned"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a pending trial was not pruned"), std::string::npos) << e.what();
  }
}

// The README's loop ("Pruning from C++"), on curves acc(x, epoch) = 1 - (x - 0.3)^2 - 1 / (epoch + 1):
// the trials it stops are exactly those below the median of the finished ones (same shape, so the
// order at every epoch is the order of (x - 0.3)^2), and they cost fewer epochs.
TEST(StudyTellPruned, TheReadmeLoopStopsTheTrialsBehindTheMedian) {
  tune::Study study(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy("random"),
                    {.direction = tune::Direction::maximize, .seed = 11, .max_trials = 30});
  std::vector<tune::LearningCurve> finished;
  std::vector<double> finished_gaps;
  int pruned = 0;
  while (auto s = study.ask()) {
    const double x = std::get<double>(s->config.at("x"));
    const double gap = (x - 0.3) * (x - 0.3);
    const auto train_epoch = [&](std::int64_t epoch) { return 1 - gap - 1.0 / static_cast<double>(epoch + 1); };
    std::vector<double> sorted = finished_gaps;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const bool behind = n >= 5 && gap > (n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]));
    tune::LearningCurve curve;
    bool stopped = false;
    for (std::int64_t epoch = 0; epoch < 30; ++epoch) {
      curve.push_back({epoch, train_epoch(epoch)});
      std::vector<const tune::LearningCurve*> reference;
      for (const auto& c : finished) reference.push_back(&c);
      if (auto v = tune::prune_verdict(tune::PruningRule{}, tune::Direction::maximize, reference, curve)) {
        study.tell_pruned(s->id, v->step, v->last_value);
        EXPECT_EQ(v->step, 0) << "the order of the curves is the same at every epoch";
        stopped = true;
        ++pruned;
        break;
      }
    }
    EXPECT_EQ(stopped, behind) << "trial " << s->id << " x=" << x;
    if (!stopped) {
      study.tell(s->id, curve.back().value);
      finished.push_back(curve);
      finished_gaps.push_back(gap);
    }
  }
  EXPECT_GE(pruned, 5);
  ASSERT_NE(study.best(), nullptr);
  EXPECT_FALSE(study.best()->pruned);
}

}  // namespace
