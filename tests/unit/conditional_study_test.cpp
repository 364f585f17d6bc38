// Studies over a space with conditional parameters (space.hpp, Condition), through every strategy:
// each suggestion holds exactly the parameters that apply to it, a saved study resumes to the same
// next suggestion, a finite space runs each of its configurations once (its size counted by hand),
// and enqueue refuses a value that would not reach the trial.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tune/tune.hpp"

namespace tune {
namespace {

Space optimiser_space() {
  return Space({
      Parameter::categorical("opt", {"sgd", "adam", "rmsprop", "adagrad"}),
      Parameter::floating("momentum", 0.0, 0.99).when("opt", {"sgd", "rmsprop"}),
      Parameter::categorical("nesterov", {"yes", "no"}).when("opt", {"sgd"}),
      Parameter::floating("lr", 1e-4, 1.0, Scale::log),
  });
}

// A loss the parameters that apply decide; reading one that does not apply throws (std::map::at).
double loss(const Config& c) {
  const std::string opt = std::get<std::string>(c.at("opt"));
  const double lr = std::log10(std::get<double>(c.at("lr")));
  double v = (lr + 2.0) * (lr + 2.0) / 4.0;
  if (opt == "sgd") {
    const double m = std::get<double>(c.at("momentum"));
    v += (m - 0.9) * (m - 0.9) + (std::get<std::string>(c.at("nesterov")) == "yes" ? 0.0 : 0.1);
  } else if (opt == "rmsprop") {
    v += 0.2 + 0.5 * std::get<double>(c.at("momentum"));
  } else {
    v += opt == "adam" ? 0.05 : 0.3;
  }
  return v;
}

void expect_exactly_the_parameters_that_apply(const Space& space, const Config& c) {
  EXPECT_NO_THROW((void)space.encode(c)) << to_string(c);
  const std::string opt = std::get<std::string>(c.at("opt"));
  EXPECT_EQ(c.contains("momentum"), opt == "sgd" || opt == "rmsprop") << to_string(c);
  EXPECT_EQ(c.contains("nesterov"), opt == "sgd") << to_string(c);
}

class ConditionalStudy : public ::testing::TestWithParam<std::string> {};

TEST_P(ConditionalStudy, SuggestionsHoldTheParametersThatApplyAndAResumedStudyAsksTheSame) {
  const std::string name = GetParam();
  StudyOptions options;
  options.seed = 5;
  if (name == "cmets") {
    options.resolution = Resolution{"epochs", {1, 3, 9}, {1, 3, 9}};
    options.cost_budget = 200;
  }
  Study study(optimiser_space(), make_strategy(name), options);
  std::set<std::string> asked;
  std::size_t told = 0;
  for (int n = 0; n < 30; ++n) {
    if (n == 20) {  // the saved study resumes to the same next suggestion
      Study loaded = Study::from_yaml_string(study.to_yaml_string(), "test");
      const auto a = study.ask();
      const auto b = loaded.ask();
      ASSERT_EQ(a.has_value(), b.has_value());
      if (!a) break;
      EXPECT_EQ(a->id, b->id);
      EXPECT_EQ(a->config, b->config) << to_string(a->config) << " / " << to_string(b->config);
      study.tell(a->id, loss(a->config));
      ++told;
      continue;
    }
    const auto s = study.ask();
    if (!s) break;
    expect_exactly_the_parameters_that_apply(study.space(), s->config);
    asked.insert(to_string(s->config) + (s->level ? " @" + std::to_string(*s->level) : ""));
    study.tell(s->id, loss(s->config));
    ++told;
  }
  EXPECT_GE(told, 20u) << study.stop_reason();
  // The recommendation (and gpoo's region) names exactly the parameters that apply to it.
  if (const auto rec = study.recommendation()) {
    expect_exactly_the_parameters_that_apply(study.space(), rec->config);
    if (rec->region) {
      std::set<std::string> names;
      for (const ParameterRange& r : rec->region->box) names.insert(r.name);
      std::set<std::string> expected;
      for (const auto& [key, value] : rec->config) expected.insert(key);
      EXPECT_EQ(names, expected) << to_string(rec->config);
    }
  } else if (name != "random" && name != "sobol") {
    ADD_FAILURE() << name << " recommends nothing";
  }
  if (name != "bnb" && name != "gpoo") {
    EXPECT_EQ(asked.size(), told - 1) << "a configuration ran twice";
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, ConditionalStudy,
                         ::testing::Values("random", "sobol", "ei", "ucb", "cmes", "cmets", "gpoo", "bnb"));

TEST(ConditionalStudy, AFiniteSpaceRunsEachConfigurationOnceAndStops) {
  const Space space({
      Parameter::categorical("opt", {"sgd", "adam", "rmsprop"}),
      Parameter::ordinal("momentum", {"0", "0.5", "0.9"}).when("opt", {"sgd", "rmsprop"}),
      Parameter::categorical("nesterov", {"yes", "no"}).when("opt", {"sgd"}),
      Parameter::integer("layers", 1, 3),
  });
  // sgd: 3 momenta x 2 = 6, rmsprop: 3, adam: 1; times 3 layer counts.
  ASSERT_EQ(space.grid_size(), 30u);
  for (const std::string name : {"ei", "ucb"}) {
    Study study(space, make_strategy(name, YAML::Load("{repeat_configurations: false}")), {.seed = 2});
    std::set<std::string> seen;
    std::size_t trials = 0;
    while (const auto s = study.ask()) {
      ASSERT_LE(++trials, 30u) << name << ": a 31st trial, " << to_string(s->config);
      EXPECT_TRUE(seen.insert(to_string(s->config)).second) << name << ": " << to_string(s->config) << " again";
      const double layers = static_cast<double>(std::get<std::int64_t>(s->config.at("layers")));
      study.tell(s->id, layers + (s->config.contains("momentum") ? 1.0 : 0.0));
    }
    EXPECT_EQ(seen.size(), 30u) << name << ": " << study.stop_reason();
  }
}

// cmes's initial design snaps onto few configurations of a small space; it used to run one again
// (a reviewer's campaign ran {opt: adam, layers: 1} three times at full resolution).
TEST(ConditionalStudy, CmesRunsNoConfigurationOfADiscreteSpaceTwice) {
  const Space space({
      Parameter::categorical("opt", {"sgd", "adam", "rmsprop"}),
      Parameter::ordinal("momentum", {"0", "0.5", "0.9"}).when("opt", {"sgd", "rmsprop"}),
      Parameter::integer("layers", 1, 3),
  });
  ASSERT_EQ(space.grid_size(), 21u);
  for (const std::uint64_t seed : {1, 2, 3, 4}) {
    Study study(space, make_strategy("cmes"), {.seed = seed, .max_trials = 15});
    std::set<std::string> seen;
    while (const auto s = study.ask()) {
      EXPECT_TRUE(seen.insert(to_string(s->config)).second) << "seed " << seed << ": " << to_string(s->config) << " again";
      study.tell(s->id, static_cast<double>(std::get<std::int64_t>(s->config.at("layers"))));
    }
  }
}

TEST(ConditionalStudy, EnqueueRefusesAValueThatDoesNotApplyAndRunsOneThatDoes) {
  Study study(optimiser_space(), make_strategy("ei"), {.seed = 1});
  try {
    study.enqueue({{"opt", std::string("adam")}, {"momentum", 0.5}, {"lr", 0.01}});
    ADD_FAILURE() << "accepted momentum for adam";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("applies only when opt is sgd or rmsprop"), std::string::npos) << e.what();
  }
  try {
    study.enqueue({{"opt", std::string("sgd")}, {"momentum", 0.5}, {"lr", 0.01}});
    ADD_FAILURE() << "accepted sgd without nesterov";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'nesterov' has no value"), std::string::npos) << e.what();
  }
  const Config adam{{"opt", std::string("adam")}, {"lr", 0.01}};
  study.enqueue(adam);
  const auto s = study.ask();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->config, adam);
  EXPECT_EQ(study.trial(s->id).unit(1), Space::inactive_coordinate);
}

// A saved trial whose parameter that does not apply sits elsewhere than 1/2 (a hand edit) is the same
// configuration at a second point, which a deterministic study could run again: refused, named.
TEST(ConditionalStudy, ALoadedTrialWithAnotherCoordinateForAParameterThatDoesNotApplyIsRefused) {
  Study study(optimiser_space(), make_strategy("random"), {.seed = 3});
  while (const auto s = study.ask()) {
    study.tell(s->id, loss(s->config));
    if (!s->config.contains("momentum")) break;
  }
  const std::uint64_t id = study.trials().back().id;
  ASSERT_FALSE(study.trial(id).config.contains("momentum"));
  YAML::Node root = YAML::Load(study.to_yaml_string());
  YAML::Node trials = root["trials"] ? root["trials"] : root["study"]["trials"];
  ASSERT_TRUE(trials.IsSequence()) << study.to_yaml_string();
  EXPECT_NO_THROW((void)Study::from_yaml_string(YAML::Dump(root), "state.yaml"));
  trials[static_cast<std::size_t>(id)]["unit"][1] = 0.3;
  try {
    (void)Study::from_yaml_string(YAML::Dump(root), "state.yaml");
    ADD_FAILURE() << "loaded";
  } catch (const StateError& e) {
    const std::string m = e.what();
    for (const char* part : {"state.yaml", "coordinate 2 ('momentum') is 0.3", "applies only when opt is sgd or rmsprop",
                             "coordinate is 0.5"})
      EXPECT_NE(m.find(part), std::string::npos) << m << "\nmissing: " << part;
  }
}

}  // namespace
}  // namespace tune
