// A quarter of the space where every run fails (x > 0.75, next to the optimum at (0.7, 0.3), as a
// learning rate just above the one that diverges): each strategy with a model keeps away from it
// after some failures and still finds the optimum. Before the strategies weighed candidates by
// their success probability and capped a failing configuration's fantasy at the median result, 2
// of 3 ei seeds, 1 of 3 ucb seeds and every cmets and cmes seed reached 30 failures (a campaign's
// failure budget; cmets with 2 results, none at full resolution). Measured since: 6-9 failures of
// 40 trials (ei), 7-12 (ucb), 10-22 of 53-60 (cmets), 14-16 of 40 (cmes); the best full-resolution
// loss within 1e-4 of the optimum (cmes: 3e-4) in every run, as without the failing quarter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "functions/test_functions.hpp"
#include "tune/tune.hpp"
#include "unit_cube.hpp"

namespace {

tune::Space square() {
  return tune::Space({tune::Parameter::floating("x", 0, 1), tune::Parameter::floating("y", 0, 1)});
}

// Loss at the full resolution plus a level's offset; nothing where x > 0.75.
std::optional<double> loss(const tune::Config& c, std::size_t level) {
  const double x = std::get<double>(c.at("x")), y = std::get<double>(c.at("y"));
  if (x > 0.75) return std::nullopt;
  return (x - 0.7) * (x - 0.7) + (y - 0.3) * (y - 0.3) + 0.5 / std::pow(3.0, static_cast<double>(level));
}

struct Outcome {
  std::size_t failed = 0, trials = 0;
  double best = INFINITY;  // best full-resolution loss
};

// Runs to the end of the cost budget (a study with a resolution) or to 40 trials.
Outcome run(tune::Study& study) {
  Outcome o;
  const std::size_t top = study.resolution() ? study.resolution()->top() : 0;
  while (study.resolution() || o.trials < 40) {
    const auto s = study.ask();
    if (!s) break;
    ++o.trials;
    const std::size_t level = s->level.value_or(top);
    if (const auto v = loss(s->config, level)) {
      study.tell(s->id, *v);
      if (level == top) o.best = std::min(o.best, *v - 0.5 / std::pow(3.0, static_cast<double>(top)));
    } else {
      study.fail(s->id, "diverged");
      ++o.failed;
    }
    if (o.failed > 30) break;  // a campaign's failure budget
  }
  return o;
}

class FailureRegion : public ::testing::TestWithParam<std::string> {};

TEST_P(FailureRegion, FewRunsFailAndTheOptimumIsFound) {
  const std::string name = GetParam();
  for (std::uint64_t seed : {1, 2, 3}) {
    tune::StudyOptions options;
    options.seed = seed;
    std::unique_ptr<tune::Strategy> strategy = tune::make_strategy(name);
    if (name == "cmets" || name == "cmes") {
      options.resolution = tune::Resolution{"epochs", {1, 3, 9}, {1, 3, 9}};
      options.cost_budget = 40 * 9;  // 40 full runs
    }
    tune::Study study(square(), std::move(strategy), options);
    const Outcome o = run(study);
    EXPECT_LE(2 * o.failed, o.trials) << name << " seed " << seed << ": " << o.failed << " of " << o.trials << " trials failed";
    EXPECT_LE(o.best, 1e-3) << name << " seed " << seed << ": best " << o.best;
  }
}

// A study saved after some failures (3-8 of 20 trials) and loaded makes the same suggestions as the
// original: the success probabilities and the capped fantasies come from the trials alone.
TEST_P(FailureRegion, ASaveAfterFailuresResumesToTheSameSuggestions) {
  const std::string name = GetParam();
  tune::StudyOptions options;
  options.seed = 5;
  if (name == "cmets" || name == "cmes") {
    options.resolution = tune::Resolution{"epochs", {1, 3, 9}, {1, 3, 9}};
    options.cost_budget = 40 * 9;
  }
  tune::Study study(square(), tune::make_strategy(name), options);
  const std::size_t top = study.resolution() ? study.resolution()->top() : 0;
  std::optional<tune::Study> saved;
  std::vector<std::pair<Eigen::VectorXd, std::optional<double>>> after_save;  // (point, value or failure)
  std::size_t failed_before_save = 0;
  while (after_save.size() < 12) {
    const auto s = study.ask();
    ASSERT_TRUE(s) << study.stop_reason();
    const auto v = loss(s->config, s->level.value_or(top));
    if (saved) after_save.emplace_back(study.trial(s->id).unit, v);
    else if (!v) ++failed_before_save;
    if (v) study.tell(s->id, *v);
    else study.fail(s->id, "diverged");
    if (!saved && study.trials().size() == 20) saved.emplace(tune::Study::from_yaml_string(study.to_yaml_string(), "test"));
  }
  ASSERT_GT(failed_before_save, 0u) << name << ": no failure before the save";
  for (const auto& [unit, value] : after_save) {
    const auto s = saved->ask();
    ASSERT_TRUE(s);
    EXPECT_EQ(saved->trial(s->id).unit, unit) << name;
    if (value) saved->tell(s->id, *value);
    else saved->fail(s->id, "diverged");
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, FailureRegion, ::testing::Values("ei", "ucb", "cmets", "cmes"));

// A level where every run fails (one epoch is too few for the trainer), whatever the
// configuration: cmets must turn to the other levels once a cheap run is no longer worth its cost
// in expectation, and still find the optimum. Measured on seeds 1-10 (level-0 failures before the
// study turned away; best full-resolution loss): 6-8 with each level's success share weighed in,
// 11-12 before, when the failures made every level look alike; the best within 1e-3 either way.
TEST(FailingLevel, CmetsTurnsToTheLevelsThatRun) {
  for (std::uint64_t seed : {1, 2, 3}) {
    tune::StudyOptions options;
    options.seed = seed;
    options.resolution = tune::Resolution{"epochs", {1, 3, 9}, {1, 3, 9}};
    options.cost_budget = 40 * 9;
    tune::Study study(square(), tune::make_strategy("cmets"), options);
    std::size_t failed = 0;
    double best = INFINITY;
    while (const auto s = study.ask()) {
      const std::size_t level = *s->level;
      if (level == 0) {
        study.fail(s->id, "too few epochs");
        ++failed;
        continue;
      }
      // The bowl of loss() without its failing quarter.
      const double x = std::get<double>(s->config.at("x")), y = std::get<double>(s->config.at("y"));
      const double v = (x - 0.7) * (x - 0.7) + (y - 0.3) * (y - 0.3);
      study.tell(s->id, v + 0.5 / std::pow(3.0, static_cast<double>(level)));
      if (level == 2) best = std::min(best, v);
    }
    EXPECT_LE(failed, 9u) << "seed " << seed;
    EXPECT_LE(best, 1e-3) << "seed " << seed;
  }
}

// Runs that fail by chance (20% of them, whatever the configuration: a preempted job, a flaky
// disk) must not make the strategies shun the optimum: after 40 results, ei's and ucb's median
// regret on Branin and Hartmann-6 over 10 seeds stays within 10 times the figure after 40 results
// without failures (or below 1e-4). Measured (without / with failures): Branin ei 5.4e-4 / 3.0e-4,
// ucb 2.0e-5 / 7.8e-6; Hartmann-6 ei 0.024 / 0.155, ucb 0.38 / 0.23; before this change the "with"
// figures were 4.2e-4, 5.5e-6, 0.092, 0.20 (random failures cost ei on Hartmann-6 either way).
// When every failed run's fantasy was capped at the median result, whatever its neighbourhood, a
// failure next to the optimum made it look mediocre: 0.095, 0.035, 0.86, 0.82.
double median_regret(const std::string& function, const std::string& strategy, double failure_rate) {
  const tune::testfn::TestFunction f = tune::testfn::by_name(function);
  const tune::Space space = tune::behaviour::unit_cube(f.dim());
  std::vector<double> regrets;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    tune::StudyOptions options;
    options.seed = seed;
    tune::Study study(space, tune::make_strategy(strategy), options);
    tune::Rng chance(seed + 1000);
    double best = INFINITY;
    for (int results = 0; results < 40;) {
      const auto s = study.ask();
      if (!s) break;
      if (tune::uniform01(chance) < failure_rate) {
        study.fail(s->id, "preempted");
        continue;
      }
      const double v = f.at_unit(study.trial(s->id).unit);
      best = std::min(best, v);
      study.tell(s->id, v);
      ++results;
    }
    regrets.push_back(best - f.minimum);
  }
  return tune::behaviour::median(regrets);
}

TEST(RandomFailures, DoNotKeepTheStrategiesFromTheOptimum) {
  for (const std::string function : {"branin", "hartmann6"})
    for (const std::string strategy : {"ei", "ucb"}) {
      const double without = median_regret(function, strategy, 0.0);
      const double with = median_regret(function, strategy, 0.2);
      EXPECT_LE(with, std::max(10 * without, 1e-4)) << function << " " << strategy << ": without failures " << without;
    }
}

}  // namespace
