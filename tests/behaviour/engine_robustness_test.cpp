// The engine on what training scripts really print: constant, two-valued, integer, tiny-difference
// and huge results, one outlier, cheap levels far from the full runs, spaces of one parameter, of
// many, of a long categorical or a wide log range. Every strategy must keep suggesting valid points
// (inside the cube, decodable, finite), keep a finite recommendation, refuse what it cannot use with
// a message that says what to do, and resume from a saved copy to the same next suggestion.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tune/tune.hpp"

namespace {

using ValueOf = std::function<double(const Eigen::VectorXd& unit, std::size_t step, std::optional<std::size_t> level)>;

bool multi_resolution(const std::string& strategy) { return strategy == "cmets" || strategy == "cmes"; }

tune::StudyOptions options_for(const std::string& strategy, std::uint64_t seed) {
  tune::StudyOptions o{.direction = tune::Direction::minimize, .seed = seed};
  if (multi_resolution(strategy)) {
    o.resolution = tune::Resolution{"epochs", {1, 3, 9}, {1, 3, 9}};
    o.cost_budget = 90;
  }
  return o;
}

// A smooth bowl with its minimum at 0.3 in every coordinate.
double bowl(const Eigen::VectorXd& u) {
  double v = 0.1 * std::sin(7 * u[0]);
  for (Eigen::Index i = 0; i < u.size(); ++i) v += (u[i] - 0.3) * (u[i] - 0.3);
  return v;
}

void expect_valid(const tune::Study& study, const tune::Suggestion& s, const std::string& what) {
  const Eigen::VectorXd& u = study.trial(s.id).unit;
  for (Eigen::Index i = 0; i < u.size(); ++i) {
    EXPECT_TRUE(std::isfinite(u[i]) && u[i] >= 0.0 && u[i] <= 1.0) << what << ": coordinate " << i << " = " << u[i];
  }
  EXPECT_NO_THROW((void)study.space().encode(s.config)) << what << ": " << tune::to_string(s.config);
}

void expect_finite_recommendation(const tune::Study& study, const std::string& what) {
  std::optional<tune::StudyRecommendation> r;
  ASSERT_NO_THROW(r = study.recommendation()) << what;
  if (r) {
    EXPECT_TRUE(std::isfinite(r->mean) && std::isfinite(r->sd)) << what << ": mean " << r->mean << ", sd " << r->sd;
    EXPECT_TRUE(r->unit.allFinite()) << what;
  }
}

// Asks and tells `steps` times (or until the study stops), every third step first checking that a
// copy made from the saved text asks the same next point; the copy is then dropped.
void run(tune::Study& study, std::size_t steps, const ValueOf& value_of, const std::string& what) {
  for (std::size_t step = 0; step < steps; ++step) {
    std::optional<tune::Suggestion> copy_next;
    if (step % 3 == 0) {
      tune::Study copy = tune::Study::from_yaml_string(study.to_yaml_string(), "copy");
      copy_next = copy.ask();
    }
    std::optional<tune::Suggestion> s;
    ASSERT_NO_THROW(s = study.ask()) << what << ", step " << step;
    if (step % 3 == 0) {
      ASSERT_EQ(bool(copy_next), bool(s)) << what << ", step " << step;
      if (s) {
        EXPECT_EQ(copy_next->config, s->config) << what << ", step " << step;
        EXPECT_EQ(copy_next->level, s->level) << what << ", step " << step;
      }
    }
    if (!s) return;
    expect_valid(study, *s, what + ", step " + std::to_string(step));
    const double v = value_of(study.trial(s->id).unit, step, s->level);
    const std::optional<double> cost =
        s->level ? std::optional<double>(study.resolution()->costs[*s->level]) : std::nullopt;
    ASSERT_NO_THROW(study.tell(s->id, v, cost)) << what << ", step " << step << ", value " << v;
  }
  expect_finite_recommendation(study, what);
}

class EveryStrategy : public ::testing::TestWithParam<std::string> {};

// Values as printed by real scripts; each must leave every strategy working.
TEST_P(EveryStrategy, SurvivesDegenerateObjectiveValues) {
  const std::string strategy = GetParam();
  const tune::Space space({tune::Parameter::floating("x", -5, 10), tune::Parameter::floating("y", 0, 15)});
  const std::vector<std::pair<std::string, ValueOf>> patterns = {
      {"constant", [](const Eigen::VectorXd&, std::size_t, auto) { return 5.0; }},
      {"two values", [](const Eigen::VectorXd& u, std::size_t, auto) { return bowl(u) < 0.3 ? 0.0 : 1.0; }},
      {"integers", [](const Eigen::VectorXd& u, std::size_t, auto) { return std::round(3 * bowl(u)); }},
      {"differences of 1e-15",
       [](const Eigen::VectorXd& u, std::size_t, auto) { return 1.0 + 1e-15 * std::floor(10 * bowl(u)); }},
      {"1e-10 to 1e10",
       [](const Eigen::VectorXd& u, std::size_t, auto) { return std::pow(10.0, -10 + 20 * std::min(1.0, bowl(u))); }},
      {"one outlier of 1e12",
       [](const Eigen::VectorXd& u, std::size_t step, auto) { return step == 7 ? 1e12 : bowl(u); }},
      {"+-1e99", [](const Eigen::VectorXd& u, std::size_t step, auto) { return (step % 2 ? 1e99 : -1e99) * (1 + bowl(u)); }},
  };
  for (const auto& [name, value_of] : patterns) {
    tune::Study study(space, tune::make_strategy(strategy), options_for(strategy, 5));
    run(study, 30, value_of, strategy + ", " + name);
  }
}

TEST_P(EveryStrategy, SurvivesAwkwardSpaces) {
  const std::string strategy = GetParam();
  std::vector<std::string> many_choices;
  for (int i = 0; i < 200; ++i) many_choices.push_back("c" + std::to_string(i));
  const std::vector<std::pair<std::string, tune::Space>> spaces = {
      {"one parameter", tune::Space({tune::Parameter::floating("x", 0, 1)})},
      {"200 choices", tune::Space({tune::Parameter::floating("x", 0, 1), tune::Parameter::categorical("c", many_choices)})},
      {"log 1e-12..1e12", tune::Space({tune::Parameter::floating("x", 1e-12, 1e12, tune::Scale::log),
                                       tune::Parameter::integer("n", 1, 1000000000, tune::Scale::log)})},
      {"int of width 1 and an ordinal",
       tune::Space({tune::Parameter::integer("n", 3, 4), tune::Parameter::ordinal("o", {"s", "m", "l"})})},
  };
  for (const auto& [name, space] : spaces) {
    tune::Study study(space, tune::make_strategy(strategy), options_for(strategy, 2));
    run(study, 25, [](const Eigen::VectorXd& u, std::size_t, auto) { return bowl(u); }, strategy + ", " + name);
  }
}

// A value beyond +-1e100 (a diverged run printing DBL_MAX) is refused before anything changes:
// the trial stays pending and can be failed, and the study goes on. Before, tell accepted it and
// every later ask threw "the marginal likelihood could not be evaluated at any start" (ei, ucb,
// cmets, cmes), gpoo's recommendation threw, and bnb's tell threw after recording the value, so
// its saved study could not be loaded.
TEST_P(EveryStrategy, RefusesAHugeValueAndKeepsTheTrialPending) {
  const std::string strategy = GetParam();
  const tune::Space space({tune::Parameter::floating("x", -5, 10), tune::Parameter::floating("y", 0, 15)});
  tune::Study study(space, tune::make_strategy(strategy), options_for(strategy, 3));
  const auto first = study.ask();
  ASSERT_TRUE(first);
  const std::optional<double> cost = first->level ? std::optional<double>(1.0) : std::nullopt;
  for (double huge : {1.7e308, -1e300, 1e101}) {
    try {
      study.tell(first->id, huge, cost);
      ADD_FAILURE() << strategy << ": the value " << huge << " was accepted";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("beyond"), std::string::npos) << message;
      EXPECT_NE(message.find("fail()"), std::string::npos) << message;
    }
    EXPECT_EQ(study.trial(first->id).status, tune::TrialStatus::pending) << strategy;
  }
  study.fail(first->id, "diverged", cost);
  run(study, 12, [](const Eigen::VectorXd& u, std::size_t, auto) { return 1e99 * bowl(u); }, strategy + ", after a refusal");
  const tune::Study loaded = tune::Study::from_yaml_string(study.to_yaml_string(), "loaded");
  EXPECT_EQ(loaded.to_yaml_string(), study.to_yaml_string()) << strategy;
}

INSTANTIATE_TEST_SUITE_P(Strategies, EveryStrategy,
                         ::testing::Values("random", "sobol", "ei", "ucb", "cmets", "cmes", "gpoo", "bnb"));

// Cheap levels whose results lie far from the full runs' (a loss of 1e6 after one epoch against
// O(1) after nine): the offsets' prior variance, 1e3 squared gaps, made every Cholesky factor fail
// from about 3000 pooled sds apart, and every ask threw. The offsets are fixed effects, so cmets
// must search as it does with the levels close: the best full run and the recommendation near the
// optimum, and a saved copy resuming to the same suggestions.
TEST(FarApartLevels, CmetsKeepsFittingAndFindsTheOptimum) {
  const tune::Space space({tune::Parameter::floating("x", 0, 1), tune::Parameter::floating("y", 0, 1)});
  for (double offset : {1e4, 1e6, 1e9}) {
    tune::StudyOptions o = options_for("cmets", 1);
    o.cost_budget = 150;
    tune::Study study(space, tune::make_strategy("cmets"), o);
    double best_full = INFINITY;
    const ValueOf value_of = [&](const Eigen::VectorXd& u, std::size_t, std::optional<std::size_t> level) {
      const double f = bowl(u) - 0.1 * std::sin(7 * u[0]);  // the bowl alone: minimum 0 at (0.3, 0.3)
      if (*level == 2) best_full = std::min(best_full, f);
      return f + offset * static_cast<double>(2 - *level) + 0.02 * static_cast<double>(2 - *level) * u[1];
    };
    const std::string what = "offset " + std::to_string(offset);
    run(study, 200, value_of, what);
    EXPECT_LT(best_full, 0.01) << what << ": " << study.stop_reason();
    const auto r = study.recommendation();
    ASSERT_TRUE(r) << what;
    EXPECT_NEAR(r->unit[0], 0.3, 0.1) << what;
    EXPECT_NEAR(r->unit[1], 0.3, 0.1) << what;
  }
}

// bnb refines a lattice over every parameter at once and indexes it in 63 bits: a larger space
// was accepted, threw "dim must be at most 16" at the first ask, and its saved file did not load.
TEST(BnbSpace, TooManyParametersAreRefusedWhenTheStudyIsMade) {
  std::vector<tune::Parameter> parameters;
  for (int i = 0; i < 20; ++i) parameters.push_back(tune::Parameter::floating("x" + std::to_string(i), 0, 1));
  try {
    tune::Study study(tune::Space(parameters), tune::make_strategy("bnb"));
    ADD_FAILURE() << "a 20-parameter space was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("16"), std::string::npos) << message;
    EXPECT_NE(message.find("20"), std::string::npos) << message;
    EXPECT_NE(message.find("use ei"), std::string::npos) << message;
  }
  YAML::Node fine_lattice;
  fine_lattice["max_level"] = 20;
  parameters.resize(4);
  EXPECT_THROW(tune::Study(tune::Space(parameters), tune::make_strategy("bnb", fine_lattice)), std::invalid_argument);
}

}  // namespace
