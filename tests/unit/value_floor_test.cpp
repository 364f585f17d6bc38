// The floor under modelled rewards (value_floor.hpp): its fence and value against hand-computed
// medians and MADs; held fences; pooled levels; and what it is for, end to end: a study whose
// diverged runs report 1e30 runs exactly as one whose diverged runs report 1e10 (the model sees
// neither), also after a save and a load, while values of an ordinary objective are never touched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "tune/gp/value_floor.hpp"
#include "tune/io/yaml_values.hpp"
#include "tune/tune.hpp"

namespace tune {
namespace {

TEST(ValueFloor, FenceIsAHundredRobustSdsBelowTheMedianAndValueTheWorstRewardAboveIt) {
  // Sorted: -1e30, 1, 2, 3, 4, 5. Median 2.5; absolute deviations 1e30, 1.5, 0.5, 0.5, 1.5, 2.5,
  // whose median is 1.5; robust sd 1.4826 * 1.5.
  const ValueFloor f = next_value_floor({}, {3.0, 1.0, -1e30, 5.0, 2.0, 4.0});
  ASSERT_TRUE(f.exists());
  EXPECT_DOUBLE_EQ(f.fence, 2.5 - 100.0 * 1.4826 * 1.5);
  EXPECT_EQ(f.value, 1.0);  // the worst reward at or above the fence
  EXPECT_EQ(f(-1e30), 1.0);
  EXPECT_EQ(f(-1e10), 1.0);
  EXPECT_EQ(f(0.5), 0.5);  // an ordinary reward below every told one is kept as it is
  EXPECT_EQ(f(f.fence), f.fence);
  EXPECT_EQ(f(7.0), 7.0);
}

TEST(ValueFloor, NoneWithFewValuesOrAMadOfZero) {
  EXPECT_FALSE(next_value_floor({}, {1.0, 2.0, 3.0, -1e30}).exists());            // 4 < 5 values
  EXPECT_FALSE(next_value_floor({}, {1.0, 1.0, 1.0, 2.0, -1e30}).exists());       // MAD 0
  const ValueFloor held{.fence = -10.0, .value = 0.0};
  EXPECT_EQ(next_value_floor(held, {1.0, 1.0, 1.0, 2.0, -1e30}).fence, -10.0);   // MAD 0: the previous fence
  EXPECT_EQ(next_value_floor(held, {1.0, 1.0, 1.0, 2.0, -1e30}).value, 1.0);     // its value from these rewards
}

TEST(ValueFloor, FenceNeverRises) {
  const std::vector<double> wide{0.0, 10.0, 20.0, 30.0, 40.0};  // median 20, MAD 10
  const ValueFloor first = next_value_floor({}, wide);
  EXPECT_DOUBLE_EQ(first.fence, 20.0 - 100.0 * 1.4826 * 10.0);
  // Later samples clustered near the optimum would give a fence just below them; it stays.
  std::vector<double> clustered = wide;
  for (int i = 0; i < 50; ++i) clustered.push_back(40.0 + 0.01 * i);
  EXPECT_EQ(next_value_floor(first, clustered).fence, first.fence);
  // A wider spread lowers it.
  const std::vector<double> wider{0.0, 100.0, 200.0, 300.0, 400.0};
  EXPECT_DOUBLE_EQ(next_value_floor(first, wider).fence, 200.0 - 100.0 * 1.4826 * 100.0);
}

TEST(ValueFloor, LevelsShareTheWidestLevelsSpread) {
  // Level 0 spread out (deviations from its median 20: 20, 10, 0, 10, 20: MAD 10), level 1
  // clustered (deviations from 13.75: 0.05, 0.02, 0, 0.02, 0.05: MAD 0.02) and shifted.
  const std::vector<std::vector<double>> by_level{{0.0, 10.0, 20.0, 30.0, 40.0}, {13.70, 13.73, 13.75, 13.77, 13.80}};
  const std::vector<ValueFloor> f = next_level_floors({}, by_level);
  const double sd = 1.4826 * 10.0;
  ASSERT_EQ(f.size(), 2u);
  EXPECT_DOUBLE_EQ(f[0].fence, 20.0 - 100.0 * sd);
  EXPECT_DOUBLE_EQ(f[1].fence, 13.75 - 100.0 * sd);
  EXPECT_EQ(f[1].value, 13.70);
  // Alone, the clustered level would have fenced off an ordinary 10.
  EXPECT_GT(next_value_floor({}, by_level[1]).fence, 10.0);
  // A level with too few values has none.
  EXPECT_FALSE(next_level_floors({}, {by_level[0], {1.0, 2.0}})[1].exists());
}

// A 2-D study minimising a smooth bowl whose corner x > 0.8 "diverges" (reports `diverged`).
Space square() { return Space({Parameter::floating("x", 0.0, 1.0), Parameter::floating("y", 0.0, 1.0)}); }

double bowl(const Config& c) {
  const double x = std::get<double>(c.at("x")), y = std::get<double>(c.at("y"));
  return (x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6);
}

std::vector<std::vector<double>> run(Study& study, double diverged, std::size_t steps) {
  std::vector<std::vector<double>> asked;
  for (std::size_t k = 0; k < steps; ++k) {
    const std::optional<Suggestion> s = study.ask();
    if (!s) break;
    asked.push_back({std::get<double>(s->config.at("x")), std::get<double>(s->config.at("y"))});
    const bool diverges = std::get<double>(s->config.at("x")) > 0.8;
    study.tell(s->id, diverges ? diverged : bowl(s->config));
  }
  return asked;
}

Study make(const std::string& strategy) {
  StudyOptions o{.direction = Direction::minimize, .seed = 7};
  if (strategy == "cmets") {
    o.resolution = Resolution{"epochs", {1, 3, 9}, {1, 3, 9}};
    o.cost_budget = 60.0;
  }
  return Study(square(), make_strategy(strategy), o);
}

TEST(ValueFloor, DivergedRunsAsHugeAsYouLikeLeaveTheSearchAsItIs) {
  for (const std::string strategy : {"ei", "ucb", "cmes", "cmets", "gpoo", "bnb"}) {
    SCOPED_TRACE(strategy);
    Study a = make(strategy), b = make(strategy);
    const auto path_a = run(a, 1e30, 30), path_b = run(b, 1e10, 30);
    std::size_t diverged = 0;
    for (const auto& p : path_a) diverged += p[0] > 0.8;
    ASSERT_GE(diverged, 2u) << "the test needs diverged runs";
    EXPECT_EQ(path_a, path_b);  // bit for bit: the model saw the same values
    // The recommendation is nowhere near the diverging corner.
    const std::optional<StudyRecommendation> r = a.recommendation();
    if (r) {
      EXPECT_LT(r->unit[0], 0.8);
    }
  }
}

TEST(ValueFloor, SurvivesASaveAndALoad) {
  for (const std::string strategy : {"ei", "cmets", "gpoo", "bnb"}) {
    SCOPED_TRACE(strategy);
    Study straight = make(strategy);
    const auto first = run(straight, 1e30, 20);
    Study copy = Study::from_yaml_string(straight.to_yaml_string(), "study.yaml");
    EXPECT_NE(straight.to_yaml_string().find("floor"), std::string::npos);  // it is in the file
    EXPECT_EQ(run(straight, 1e30, 10), run(copy, 1e30, 10));
  }
}

TEST(ValueFloor, ADamagedFloorIsRefusedAtItsLine) {
  Study study = make("ei");
  run(study, 1e30, 20);
  const std::string text = study.to_yaml_string();
  const std::size_t at = text.find("value_floor: {fence: ");
  ASSERT_NE(at, std::string::npos);
  const std::size_t line = static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 1;
  std::string damaged = text;
  const std::size_t end = damaged.find('}', at);
  damaged.replace(at, end - at + 1, "value_floor: {fence: 5, value: 1}");  // value below the fence
  try {
    (void)Study::from_yaml_string(damaged, "study.yaml");
    ADD_FAILURE() << "a floor whose value lies below its fence was accepted";
  } catch (const StateError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("value_floor"), std::string::npos) << message;
    EXPECT_NE(message.find("line " + std::to_string(line)), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace tune
