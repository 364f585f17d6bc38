// Resolutions: validation, declared and measured level costs, the budget a study never overshoots,
// best() among full-resolution trials only, and the YAML round trip of levels and costs.
#include "tune/study/resolution.hpp"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <limits>

#include "tune/tune.hpp"

namespace {

tune::Trial trial_at(std::size_t level, std::optional<double> cost) {
  tune::Trial t;
  t.level = level;
  t.cost = cost;
  t.status = tune::TrialStatus::complete;
  t.value = 0.0;
  return t;
}

TEST(Resolution, ValidationNamesTheProblem) {
  EXPECT_THROW(tune::validate(tune::Resolution{"epochs", {}, {}}), std::invalid_argument);
  EXPECT_THROW(tune::validate(tune::Resolution{"epochs", {3, 1}, {}}), std::invalid_argument);
  EXPECT_THROW(tune::validate(tune::Resolution{"epochs", {0, 1}, {}}), std::invalid_argument);
  EXPECT_THROW(tune::validate(tune::Resolution{"epochs", {1, 3}, {1}}), std::invalid_argument);
  EXPECT_THROW(tune::validate(tune::Resolution{"epochs", {1, 3}, {3, 1}}), std::invalid_argument);
  try {
    tune::validate(tune::Resolution{"epochs", {1, 3}, {1}});
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("1 costs for 2 levels"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(tune::validate(tune::Resolution{"epochs", {1, 3, 9}, {}}));
  // An empty name was accepted (the API audit): the value a trial gets would be '{}'.
  try {
    tune::validate(tune::Resolution{"", {1, 3}, {}});
    ADD_FAILURE() << "an empty parameter name was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the parameter's name is empty"), std::string::npos) << e.what();
  }
}

TEST(Resolution, MeasuredCostsAreLevelMeansExtrapolatedByValueUntilSeen) {
  const tune::Resolution r{"epochs", {1, 3, 9}, {}};
  // Nothing measured: unknown, in proportion to the values and small enough to fit any budget.
  EXPECT_FALSE(tune::costs_calibrated(r, {}));
  const std::vector<double> unknown = tune::level_costs(r, {});
  for (std::size_t l = 0; l < 3; ++l) EXPECT_DOUBLE_EQ(unknown[l], tune::kUncalibratedCostPerValue * r.values[l]);
  // Level 0 measured at 2 s and 4 s (3 s per epoch): levels 1 and 2 guessed at 9 s and 27 s.
  std::vector<tune::Trial> trials{trial_at(0, 2.0), trial_at(0, 4.0)};
  EXPECT_TRUE(tune::costs_calibrated(r, trials));
  std::vector<double> c = tune::level_costs(r, trials);
  EXPECT_DOUBLE_EQ(c[0], 3.0);
  EXPECT_DOUBLE_EQ(c[1], 9.0);
  EXPECT_DOUBLE_EQ(c[2], 27.0);
  // Every level seen: plain means (level 2 turns out cheaper than the proportional guess).
  trials.push_back(trial_at(1, 5.0));
  trials.push_back(trial_at(2, 12.0));
  trials.push_back(trial_at(2, 14.0));
  c = tune::level_costs(r, trials);
  EXPECT_DOUBLE_EQ(c[0], 3.0);
  EXPECT_DOUBLE_EQ(c[1], 5.0);
  EXPECT_DOUBLE_EQ(c[2], 13.0);
  // A failed run's time is spent, but it does not price the level while a run there has completed:
  // a run that diverges at its first step and exits is no measure of one that trains. Full runs of
  // 2 s among 20 failures of 0.01 s were priced at 0.41 s, and four workers spent 10.6 of a budget
  // of 5 on that price.
  tune::Trial failed = trial_at(1, 0.01);
  failed.status = tune::TrialStatus::failed;
  failed.value.reset();
  trials.push_back(failed);
  trials.push_back(failed);
  EXPECT_DOUBLE_EQ(tune::level_costs(r, trials)[1], 5.0);
  // Without a completed run, the failed runs' mean prices the level, as a guess.
  EXPECT_DOUBLE_EQ(tune::level_costs(r, {trial_at(0, 3.0), failed, failed})[1], 0.01);
  EXPECT_FALSE(tune::level_cost_measured(r, {trial_at(0, 3.0), failed, failed}, 1));
  EXPECT_TRUE(tune::level_cost_measured(r, {trial_at(0, 3.0), failed, failed}, 0));
  EXPECT_TRUE(tune::level_cost_measured(tune::Resolution{"epochs", {1, 3}, {1, 2}}, {}, 1));  // declared
  // A failed run alone calibrates the costs (its time per epoch: 2 s for 1 epoch -> 6 s for 3).
  tune::Trial only = trial_at(0, 2.0);
  only.status = tune::TrialStatus::failed;
  EXPECT_TRUE(tune::costs_calibrated(r, {only}));
  EXPECT_DOUBLE_EQ(tune::level_costs(r, {only})[1], 6.0);
  // Two levels seen: a start-up time plus a cost per epoch through their means (closed form: the
  // line through two points). 2 s at 1 epoch (twice) and 3 s at 9: 1.875 s + 0.125 s per epoch, so
  // 3 epochs cost 2.25 s (proportional extrapolation, 7 s for 11 epochs, guessed 1.9 s, below the 2 s
  // of one epoch).
  const std::vector<tune::Trial> startup{trial_at(0, 2.0), trial_at(0, 2.0), trial_at(2, 3.0)};
  c = tune::level_costs(r, startup);
  EXPECT_DOUBLE_EQ(c[0], 2.0);
  EXPECT_DOUBLE_EQ(c[1], 2.25);
  EXPECT_DOUBLE_EQ(c[2], 3.0);
  const std::vector<tune::Trial> proportional{trial_at(0, 1.0), trial_at(2, 9.0)};
  EXPECT_DOUBLE_EQ(tune::level_costs(r, proportional)[1], 3.0);
  // 1 epoch at 10 s, 9 at 12 s: 3 epochs 9.75 + 0.25 * 3 = 10.5 s.
  EXPECT_DOUBLE_EQ(tune::level_costs(r, {trial_at(0, 10.0), trial_at(2, 12.0)})[1], 10.5);
  // 1 epoch at 1 s, 3 at 1.5 s: 9 epochs 0.75 + 0.25 * 9 = 3 s (proportionally, 2.5 / 4 * 9 = 5.6 s).
  EXPECT_DOUBLE_EQ(tune::level_costs(r, {trial_at(0, 1.0), trial_at(1, 1.5)})[2], 3.0);
  // An unseen cheapest level: 3 epochs at 1.5 s, 9 at 2 s -> 1 epoch 1.25 + 1 / 12.
  EXPECT_DOUBLE_EQ(tune::level_costs(r, {trial_at(1, 1.5), trial_at(2, 2.0)})[0], 1.25 + 1.0 / 12.0);
  // Costs that fall as the value rises (a start-up time and the clock's noise: 17.5 ms at 1000
  // boosting rounds, 16.3 ms at 100000): flat, and no lower than the dearest measured cheaper level.
  // Proportionally, 10^7 rounds were guessed at 3.4 s, and a 3 s budget never paid for a full run.
  const tune::Resolution rounds{"rounds", {1e3, 1e5, 1e7}, {}};
  EXPECT_DOUBLE_EQ(tune::level_costs(rounds, {trial_at(0, 0.0175), trial_at(1, 0.0163)})[2], 0.0175);
  // Dearer than linear (1 epoch at 1 s, 3 at 9 s: the line would start at -3 s): through 0, the
  // least-squares slope (1 + 27) / (1 + 9) = 2.8 s per epoch.
  EXPECT_DOUBLE_EQ(tune::level_costs(r, {trial_at(0, 1.0), trial_at(1, 9.0)})[2], 2.8 * 9);
}

// Three levels seen and a fourth unseen: the guess is the least-squares line of the three levels'
// means, here against Eigen's QR solution of the same least-squares problem.
TEST(Resolution, AnUnseenLevelIsGuessedFromTheLeastSquaresLineOfTheSeenOnes) {
  const tune::Resolution r{"epochs", {1, 3, 9, 27}, {}};
  const std::vector<tune::Trial> trials{trial_at(0, 2.0), trial_at(0, 2.2), trial_at(1, 3.0), trial_at(2, 5.0),
                                        trial_at(2, 5.4)};
  Eigen::MatrixXd A(3, 2);
  A << 1, 1, 1, 3, 1, 9;
  const Eigen::Vector3d means(2.1, 3.0, 5.2);
  const Eigen::Vector2d line = A.colPivHouseholderQr().solve(means);
  ASSERT_GT(line(0), 0);
  ASSERT_GT(line(1), 0);
  EXPECT_NEAR(tune::level_costs(r, trials)[3], line(0) + line(1) * 27, 1e-12);
  const tune::AffineCost fit = tune::fit_affine_cost({1, 3, 9}, {2.1, 3.0, 5.2});
  EXPECT_NEAR(fit.start_up, line(0), 1e-12);
  EXPECT_NEAR(fit.per_value, line(1), 1e-12);
}

TEST(Resolution, DeclaredCostsAreUsedAsGiven) {
  const std::vector<tune::Trial> trials{trial_at(0, 2.0)};
  // Declared costs are used as given.
  EXPECT_EQ(tune::level_costs(tune::Resolution{"epochs", {1, 3}, {0.5, 2}}, trials), (std::vector<double>{0.5, 2}));
}

// Levels of 100, 300 and 1000 boosting rounds whose runs take 0.3 ms per round, with a budget of
// 600 seconds: the first run calibrates the costs, one run at a time until then, and the budget is
// then spent. When an unmeasured level was guessed at a second per round, no level fitted and the
// study ended before its first trial ("the cost budget is spent: 0 of 600" in a campaign).
TEST(Resolution, MeasuredCostsRunOneTrialUntilTheFirstCostIsIn) {
  for (const std::string strategy : {"cmets", "cmes", "ei"}) {
    tune::StudyOptions o;
    o.seed = 1;
    o.resolution = tune::Resolution{"rounds", {100, 300, 1000}, {}};
    o.cost_budget = 600;
    tune::Study study(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy(strategy), o);
    const auto first = study.ask();
    ASSERT_TRUE(first) << strategy << ": " << study.stop_reason();
    EXPECT_FALSE(study.ask()) << strategy << ": a second trial before the first one's cost is in";
    EXPECT_FALSE(study.finished()) << strategy;
    EXPECT_NE(study.stop_reason().find("waiting for the first run's measured cost"), std::string::npos) << study.stop_reason();
    const auto run_time = [&](const tune::Suggestion& s) { return 3e-4 * o.resolution->values[*s.level]; };
    study.tell(first->id, 0.5, run_time(*first));
    std::size_t trials = 1;
    while (trials < 60) {
      const auto s = study.ask();
      ASSERT_TRUE(s) << strategy << " after " << trials << " trials: " << study.stop_reason();
      study.tell(s->id, 0.5 - 0.1 * study.trial(s->id).unit(0), run_time(*s));
      ++trials;
    }
    EXPECT_LE(study.spent_cost(), 600.0) << strategy;
  }
}

// Four workers on a trainer whose full run (27 epochs) takes 3 s while the cheaper levels take
// 0.02 s per epoch: the full run's cost is guessed from the cheap levels at about 0.54 s, and four
// full runs at once fitted the budget of 5 on that guess and spent 12 (a campaign: `cost 12.71/5s`).
// While a run at a level no run has completed at is pending nothing else starts, so that the guess
// is replaced by a measurement before the budget is committed to more runs: the spend then exceeds
// the budget by at most one run's error of guess. The study is saved and loaded at every step, as a
// resumed tuner reads it: a proposal made and then withheld left cmets's tree ahead of the trials
// ("node 160 is not in the active set" on resume).
TEST(Resolution, AGuessedLevelRunsAloneUntilItsCostIsMeasured) {
  for (const std::string strategy : {"cmets", "cmes", "ei"}) {
    tune::StudyOptions o;
    o.seed = 3;
    o.resolution = tune::Resolution{"epochs", {1, 3, 9, 27}, {}};
    o.cost_budget = 5;
    tune::Study study(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy(strategy), o);
    const auto run_time = [&](std::size_t level) { return level == 3 ? 3.0 : 0.02 * o.resolution->values[level]; };
    // Levels whose cost a finished trial measured, as the independent record of this test.
    std::vector<bool> measured(4, false);
    std::vector<tune::Suggestion> running;
    double true_spend = 0.0;
    for (int step = 0; step < 400; ++step) {
      while (running.size() < 4) {
        const auto s = study.ask();
        if (!s) break;
        for (const tune::Suggestion& r : running)
          if (!measured[*r.level]) {
            ADD_FAILURE() << strategy << ": trial " << s->id << " started while trial " << r.id << " at level "
                          << *r.level << " ran, the first at that level, at a guessed cost";
          }
        running.push_back(*s);
      }
      if (running.empty()) break;
      const tune::Suggestion done = running.front();
      running.erase(running.begin());
      const double cost = run_time(*done.level);
      study.tell(done.id, 0.5 - 0.1 * study.trial(done.id).unit(0) + 1.0 / o.resolution->values[*done.level], cost);
      measured[*done.level] = true;
      true_spend += cost;
      study = tune::Study::from_yaml_string(study.to_yaml_string(), "resumed");
    }
    EXPECT_TRUE(study.finished()) << strategy << ": " << study.stop_reason();
    EXPECT_LE(true_spend, 5.0 + 3.0) << strategy << ": more than one run beyond the budget";
    EXPECT_TRUE(measured[3]) << strategy << ": the budget paid for a full run";
  }
}

// What a campaign file refuses, the C++ API refuses too, when the Study is made or told.
TEST(Resolution, StudyRefusesWhatACampaignFileWould) {
  const tune::Space space({tune::Parameter::floating("x", 0, 1), tune::Parameter::integer("epochs", 1, 9)});
  const auto message = [&](tune::StudyOptions o, std::unique_ptr<tune::Strategy> s = nullptr) {
    try {
      tune::Study study(space, s ? std::move(s) : tune::make_strategy("cmets"), o);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  tune::StudyOptions o;
  o.resolution = tune::Resolution{"epochs", {1, 3, 9}, {1, 3, 9}};
  EXPECT_NE(message(o).find("'epochs' is also a parameter of the space"), std::string::npos) << message(o);
  o.resolution->parameter = "rounds";
  EXPECT_EQ(message(o), "accepted");
  o.cost_budget = 8.5;  // below one full run (9)
  EXPECT_NE(message(o).find("below the cost 9 of one full-resolution run"), std::string::npos) << message(o);
  o.cost_budget = 9;
  EXPECT_EQ(message(o), "accepted");
  tune::StudyOptions no_resolution;
  no_resolution.cost_budget = 100;
  EXPECT_NE(message(no_resolution, tune::make_strategy("ei")).find("a cost budget counts the costs of resolution levels"),
            std::string::npos);
  tune::MultiResolutionOptions two_noise_sds;
  two_noise_sds.noise_sd = {0.1, 0.1};
  EXPECT_NE(message(o, std::make_unique<tune::MultiResolutionSearch>(two_noise_sds))
                .find("'noise_sd' has 2 values for 3 resolution levels"),
            std::string::npos);
}

// Measured costs against a budget: a tell without the trial's cost would be charged a guess, and
// with none ever told the guesses (1e-9 per unit of level) never spend the budget.
TEST(Resolution, MeasuredCostsWithABudgetNeedEachTellsCost) {
  tune::StudyOptions o;
  o.seed = 2;
  o.resolution = tune::Resolution{"epochs", {1, 3, 9}, {}};
  for (const std::optional<double> budget : {std::optional<double>(30.0), std::optional<double>()}) {
    o.cost_budget = budget;
    tune::Study study(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy("cmets"), o);
    const auto s = study.ask();
    ASSERT_TRUE(s);
    if (budget) {
      EXPECT_THROW(study.tell(s->id, 0.5), std::invalid_argument);
      EXPECT_EQ(study.trial(s->id).status, tune::TrialStatus::pending) << "a refused tell changed the trial";
      study.tell(s->id, 0.5, 2.0);
      EXPECT_EQ(study.spent_cost(), 2.0);
      // A failure's run time may be unknown (a lost run): it is charged the level's measured cost.
      const auto f = study.ask();
      ASSERT_TRUE(f);
      EXPECT_NO_THROW(study.fail(f->id, "lost"));
    } else {
      EXPECT_NO_THROW(study.tell(s->id, 0.5));  // without a budget the levels' costs stay proportional guesses
    }
  }
}

tune::StudyOptions with_resolution(double budget) {
  tune::StudyOptions o;
  o.seed = 1;
  o.resolution = tune::Resolution{"fraction", {0.25, 1.0}, {1, 4}};
  o.cost_budget = budget;
  return o;
}

TEST(Resolution, StudyWithoutCostAwareStrategyRunsAtTheTopAndStopsWithinTheBudget) {
  tune::Space space({tune::Parameter::floating("x", 0, 1)});
  tune::Study study(space, tune::make_strategy("random"), with_resolution(10));
  int asked = 0;
  while (auto s = study.ask()) {
    EXPECT_EQ(s->level, 1u);
    EXPECT_EQ(s->resolution_value, 1.0);
    study.tell(s->id, 1.0);
    ++asked;
  }
  EXPECT_EQ(asked, 2);  // 4 + 4 <= 10, a third would overshoot
  EXPECT_DOUBLE_EQ(study.spent_cost(), 8.0);
  EXPECT_NE(study.stop_reason().find("budget"), std::string::npos);
}

TEST(Resolution, BestIgnoresLowResolutionTrialsAndYamlKeepsLevelsAndCosts) {
  tune::Space space({tune::Parameter::floating("x", 0, 1)});
  tune::MultiResolutionOptions o;
  o.candidates = 256;
  tune::StudyOptions so = with_resolution(100);
  so.resolution->costs.clear();  // measured
  tune::Study study(space, std::make_unique<tune::MultiResolutionSearch>(o), so);
  std::optional<std::uint64_t> low, high;
  for (int i = 0; i < 40 && !(low && high); ++i) {
    auto s = study.ask();
    ASSERT_TRUE(s);
    if (*s->level == 0 && !low) low = s->id;
    if (*s->level == 1 && !high) high = s->id;
    // Low-resolution values are far better: they must not win best().
    study.tell(s->id, *s->level == 0 ? -100.0 : 1.0 + static_cast<double>(i), 0.5 + static_cast<double>(*s->level));
  }
  ASSERT_TRUE(low && high);
  ASSERT_NE(study.best(), nullptr);
  EXPECT_EQ(*study.best()->level, 1u);
  const tune::Study loaded = tune::Study::from_yaml_string(study.to_yaml_string(), "test");
  ASSERT_TRUE(loaded.resolution());
  EXPECT_EQ(loaded.resolution()->parameter, "fraction");
  EXPECT_TRUE(loaded.resolution()->measured());
  EXPECT_EQ(loaded.cost_budget(), 100.0);
  EXPECT_EQ(loaded.trial(*low).level, 0u);
  EXPECT_EQ(loaded.trial(*low).cost, 0.5);
  EXPECT_EQ(loaded.level_costs(), study.level_costs());
  EXPECT_DOUBLE_EQ(loaded.spent_cost(), study.spent_cost());
}

}  // namespace

namespace {

// A study whose cost budget is spent continues with a larger one: it asks again, never overshoots
// the new budget, and a saved study continues from the raise to the same suggestions.
TEST(Resolution, ARaisedCostBudgetIsSpentAndNotOvershot) {
  tune::StudyOptions o;
  o.seed = 3;
  o.resolution = tune::Resolution{"epochs", {1, 3}, {1, 3}};
  o.cost_budget = 10;
  tune::Study study(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy("cmets"), o);
  const auto run = [&](tune::Study& s) {
    while (const auto q = s.ask()) s.tell(q->id, (s.trial(q->id).unit(0) - 0.3) * (s.trial(q->id).unit(0) - 0.3));
  };
  run(study);
  ASSERT_TRUE(study.finished());
  EXPECT_LE(study.spent_cost(), 10.0);
  const std::size_t before = study.trials().size();
  EXPECT_THROW(study.raise_cost_budget(10.0), std::invalid_argument);
  EXPECT_THROW(study.raise_cost_budget(std::numeric_limits<double>::infinity()), std::invalid_argument);
  EXPECT_TRUE(study.finished()) << "a refused raise changed the study";
  study.raise_cost_budget(25.0);
  EXPECT_FALSE(study.finished());
  EXPECT_EQ(*study.cost_budget(), 25.0);
  tune::Study copy = tune::Study::from_yaml_string(study.to_yaml_string(), "copy");
  run(study);
  run(copy);
  EXPECT_GT(study.trials().size(), before);
  EXPECT_LE(study.spent_cost(), 25.0);
  EXPECT_GT(study.spent_cost(), 25.0 - 3.0);  // within one full run of the new budget
  ASSERT_EQ(copy.trials().size(), study.trials().size());
  for (std::size_t i = 0; i < study.trials().size(); ++i) EXPECT_EQ(copy.trials()[i].unit, study.trials()[i].unit) << i;
  // Without a cost budget there is none to raise.
  tune::StudyOptions plain;
  tune::Study no_budget(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy("ei"), plain);
  EXPECT_THROW(no_budget.raise_cost_budget(5.0), std::invalid_argument);
}

}  // namespace
