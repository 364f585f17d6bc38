// bnb re-runs its best configuration once to check that the objective is deterministic
// (BnbStrategy, RepeatCheck): which trial it re-runs and when, what it concludes from the two
// results, that the re-run is not told to the search, and that the check survives save / load.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <limits>
#include <string>
#include <variant>

#include "tune/io/yaml_values.hpp"
#include "tune/strategy/bnb_strategy.hpp"
#include "tune/tune.hpp"

namespace {

using tune::RepeatCheck;
using tune::Study;

std::unique_ptr<tune::Strategy> bnb(const std::string& options = "{}") {
  return tune::make_strategy("bnb", YAML::Load(options));
}

const tune::Space kSpace({tune::Parameter::floating("x", 0, 1), tune::Parameter::floating("y", 0, 1)});

double bowl(const tune::Config& c) {
  const double x = std::get<double>(c.at("x")), y = std::get<double>(c.at("y"));
  return (x - 0.3) * (x - 0.3) + 2 * (y - 0.6) * (y - 0.6);
}

// Asks `n` suggestions of `study` and tells each its bowl value.
void tell_bowl(Study& study, int n) {
  for (int i = 0; i < n; ++i) {
    const auto s = study.ask();
    ASSERT_TRUE(s) << "ask " << i << " of " << n;
    study.tell(s->id, bowl(s->config));
  }
}

const tune::BnbStrategy& strategy_of(const Study& s) { return dynamic_cast<const tune::BnbStrategy&>(s.strategy()); }

// The trial with the lowest value among the first n (ties: the first).
std::uint64_t best_of_first(const Study& s, std::size_t n) {
  std::uint64_t best = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (*s.trial(i).value < *s.trial(best).value) best = i;
  return best;
}

TEST(BnbRepeatCheck, TheBestOfTheFirstTenIsReRunOnceAndNotToldToTheSearch) {
  Study study(kSpace, bnb(), {tune::Direction::minimize, 3});
  ASSERT_NO_FATAL_FAILURE(tell_bowl(study, 10));
  EXPECT_FALSE(strategy_of(study).repeat_check(study.trials()));
  const auto repeat = study.ask();
  ASSERT_TRUE(repeat);
  const std::uint64_t original = best_of_first(study, 10);
  EXPECT_EQ(tune::to_string(repeat->config), tune::to_string(study.trial(original).config));
  EXPECT_NE(study.trial(repeat->id).source.find("re-run of trial " + std::to_string(original)), std::string::npos)
      << study.trial(repeat->id).source;
  const auto pending = strategy_of(study).repeat_check(study.trials());
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->outcome, RepeatCheck::Outcome::pending);
  study.tell(repeat->id, bowl(repeat->config));
  const auto check = strategy_of(study).repeat_check(study.trials());
  ASSERT_TRUE(check);
  EXPECT_EQ(check->outcome, RepeatCheck::Outcome::same);
  EXPECT_EQ(check->original, original);
  EXPECT_EQ(check->repeat, repeat->id);
  EXPECT_NE(check->describe().find("the same value"), std::string::npos) << check->describe();
  EXPECT_FALSE(study.warning());  // agreement is no warning
  // The search was told the ten, not the re-run; and no second re-run comes.
  EXPECT_EQ(strategy_of(study).search()->samples(), 10u);
  for (int i = 0; i < 20; ++i) {
    const auto s = study.ask();
    ASSERT_TRUE(s);
    EXPECT_EQ(study.trial(s->id).source, "bnb") << "trial " << s->id;
    study.tell(s->id, bowl(s->config));
  }
  EXPECT_EQ(strategy_of(study).search()->samples(), 30u);
}

TEST(BnbRepeatCheck, ADifferentResultIsReportedAndTheConvergenceSaysSo) {
  // A 1-D lattice of 9 points converges within a few dozen trials; the objective adds noise.
  const tune::Space line({tune::Parameter::floating("x", 0, 1)});
  Study study(line, bnb("{max_level: 3, repeat_best_after: 4}"), {tune::Direction::minimize, 0});
  int told = 0;
  while (const auto s = study.ask()) {
    ASSERT_LT(++told, 100);
    const double x = std::get<double>(s->config.at("x"));
    study.tell(s->id, (x - 0.4) * (x - 0.4) + 0.01 * std::sin(1000.0 * told));  // differs at every call
  }
  const auto check = strategy_of(study).repeat_check(study.trials());
  ASSERT_TRUE(check);
  EXPECT_EQ(check->outcome, RepeatCheck::Outcome::different);
  EXPECT_EQ(check->first, *study.trial(check->original).value);
  EXPECT_EQ(check->second, *study.trial(check->repeat).value);
  EXPECT_EQ(study.warning(), check->describe());  // what the API's user and the tuner are told
  EXPECT_NE(study.stop_reason().find("converged"), std::string::npos) << study.stop_reason();
  EXPECT_NE(study.stop_reason().find("not deterministic"), std::string::npos) << study.stop_reason();
  EXPECT_NE(study.stop_reason().find("trial " + std::to_string(check->repeat) + " re-ran trial " +
                                     std::to_string(check->original)),
            std::string::npos)
      << study.stop_reason();
}

TEST(BnbRepeatCheck, ASearchThatConvergesFirstReRunsItsBestBeforeItStops) {
  // 5 lattice points: the search converges before 10 trials; the check comes before the stop.
  const tune::Space line({tune::Parameter::floating("x", 0, 1)});
  Study study(line, bnb("{max_level: 2}"), {tune::Direction::minimize, 0});
  std::size_t trials = 0;
  while (const auto s = study.ask()) {
    ASSERT_LT(++trials, 20u);
    const double x = std::get<double>(s->config.at("x"));
    study.tell(s->id, (x - 0.7) * (x - 0.7));
  }
  const std::size_t sampled = strategy_of(study).search()->samples();
  ASSERT_LT(sampled, 10u);
  EXPECT_EQ(study.trials().size(), sampled + 1);
  const auto check = strategy_of(study).repeat_check(study.trials());
  ASSERT_TRUE(check);
  EXPECT_EQ(check->repeat, study.trials().size() - 1);
  EXPECT_EQ(check->original, best_of_first(study, sampled));
  EXPECT_EQ(check->outcome, RepeatCheck::Outcome::same);
  EXPECT_NE(study.stop_reason().find("converged"), std::string::npos);
  EXPECT_EQ(study.stop_reason().find("but"), std::string::npos) << study.stop_reason();
}

TEST(BnbRepeatCheck, ZeroTurnsTheCheckOffAndAFailedReRunIsNotRepeated) {
  const tune::Space line({tune::Parameter::floating("x", 0, 1)});
  Study off(line, bnb("{max_level: 2, repeat_best_after: 0}"), {tune::Direction::minimize, 0});
  while (const auto s = off.ask()) off.tell(s->id, std::get<double>(s->config.at("x")));
  EXPECT_EQ(off.trials().size(), strategy_of(off).search()->samples());
  EXPECT_FALSE(strategy_of(off).repeat_check(off.trials()));

  Study failing(kSpace, bnb("{repeat_best_after: 3}"), {tune::Direction::minimize, 1});
  ASSERT_NO_FATAL_FAILURE(tell_bowl(failing, 3));
  const auto repeat = failing.ask();
  failing.fail(repeat->id, "out of memory");
  const auto check = strategy_of(failing).repeat_check(failing.trials());
  ASSERT_TRUE(check);
  EXPECT_EQ(check->outcome, RepeatCheck::Outcome::failed);
  for (int i = 0; i < 10; ++i) {
    const auto s = failing.ask();
    ASSERT_TRUE(s);
    EXPECT_EQ(failing.trial(s->id).source, "bnb");
    failing.tell(s->id, bowl(s->config));
  }
}

TEST(BnbRepeatCheck, APendingReRunSurvivesSaveAndLoad) {
  Study study(kSpace, bnb("{repeat_best_after: 5}"), {tune::Direction::minimize, 2});
  ASSERT_NO_FATAL_FAILURE(tell_bowl(study, 5));
  const auto repeat = study.ask();
  ASSERT_TRUE(repeat);
  Study loaded = Study::from_yaml_string(study.to_yaml_string(), "saved");
  const auto before = strategy_of(loaded).repeat_check(loaded.trials());
  ASSERT_TRUE(before);
  EXPECT_EQ(before->repeat, repeat->id);
  EXPECT_EQ(before->outcome, RepeatCheck::Outcome::pending);
  study.tell(repeat->id, bowl(repeat->config) + 0.25);
  loaded.tell(repeat->id, bowl(repeat->config) + 0.25);
  EXPECT_EQ(strategy_of(loaded).repeat_check(loaded.trials())->outcome, RepeatCheck::Outcome::different);
  // Both go on to the same suggestions, with no second re-run.
  for (int i = 0; i < 5; ++i) {
    const auto a = study.ask(), b = loaded.ask();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(tune::to_string(a->config), tune::to_string(b->config));
    study.tell(a->id, bowl(a->config));
    loaded.tell(b->id, bowl(b->config));
  }
}

TEST(BnbRepeatCheck, ADamagedRepeatFieldIsRefusedAtItsLine) {
  Study study(kSpace, bnb("{repeat_best_after: 3}"), {tune::Direction::minimize, 0});
  ASSERT_NO_FATAL_FAILURE(tell_bowl(study, 4));
  std::string text = study.to_yaml_string();
  const std::string good = "repeat: {original: ";
  const auto at = text.find(good);
  ASSERT_NE(at, std::string::npos) << text;
  const auto end = text.find('}', at);
  text.replace(at, end - at + 1, "repeat: {original: 3, trial: 3}");
  try {
    (void)Study::from_yaml_string(text, "damaged.yaml");
    FAIL() << "a re-run of itself was loaded";
  } catch (const tune::StateError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("damaged.yaml"), std::string::npos) << what;
    EXPECT_NE(what.find("field 'repeat' at line"), std::string::npos) << what;
    EXPECT_NE(what.find("delete the field"), std::string::npos) << what;
  }
}

TEST(BnbRepeatCheck, ResultsDifferBeyondTheLastBitsOnly) {
  EXPECT_FALSE(tune::results_differ(0.123456, 0.123456, 1.0));
  EXPECT_FALSE(tune::results_differ(0.0, 0.0, 0.0));
  EXPECT_FALSE(tune::results_differ(1.0, 1.0 + 1e-12, 0.5));         // a reduction's last bits
  EXPECT_FALSE(tune::results_differ(1e-30, 2e-30, 1.0));             // below the spread's 1e-9
  EXPECT_TRUE(tune::results_differ(1.0, 1.0 + 1e-6, 0.5));
  EXPECT_TRUE(tune::results_differ(1e-30, 2e-30, 0.0));              // no spread: relative to the values
  EXPECT_TRUE(tune::results_differ(-3.0, 3.0, 1.0));
}

}  // namespace
