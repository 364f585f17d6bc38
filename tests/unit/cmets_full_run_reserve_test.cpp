// cmets makes a full-resolution run whenever the budget allows one: the objective is the full run's.
// It spent whole budgets on cheap runs (the C++ API audit): a 2-D study with a budget of one or two
// full runs in 9 of 10 seeds, and an 8-D one with a budget of 20 full runs, leaving best() null.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tune/strategy/multi_resolution_search.hpp"
#include "tune/tune.hpp"

namespace {

struct Outcome {
  int trials = 0, full = 0, reserved = 0;
  double spent = 0.0;
  bool best = false;
};

// A sphere over [-1, 1]^d (minimum 0), the cheap levels reading 0.1 higher, declared costs.
Outcome run_sphere(int d, const std::vector<double>& levels, double budget, std::uint64_t seed) {
  std::vector<tune::Parameter> ps;
  for (int i = 0; i < d; ++i) ps.push_back(tune::Parameter::floating("p" + std::to_string(i), -1, 1));
  tune::StudyOptions o;
  o.seed = seed;
  o.resolution = tune::Resolution{"epochs", levels, levels};
  o.cost_budget = budget;
  tune::Study study(tune::Space(ps), tune::make_strategy("cmets"), o);
  Outcome out;
  while (const auto s = study.ask()) {
    double v = 0.0;
    for (const auto& [name, x] : s->config) v += std::get<double>(x) * std::get<double>(x);
    const bool full = *s->level + 1 == levels.size();
    if (!full) v += 0.1;
    study.tell(s->id, v);
    ++out.trials;
    out.full += full;
    out.reserved += study.trial(s->id).source == tune::kReservedFullRunSource;
  }
  out.spent = study.spent_cost();
  out.best = study.best() != nullptr;
  return out;
}

TEST(CmetsFullRunReserve, ABudgetOfOneOrTwoFullRunsMakesOne) {
  for (const double budget : {9.0, 18.0})
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const Outcome o = run_sphere(2, {1, 3, 9}, budget, seed);
      EXPECT_GE(o.full, 1) << "budget " << budget << ", seed " << seed << ": " << o.trials << " trials";
      EXPECT_TRUE(o.best) << "budget " << budget << ", seed " << seed;
      EXPECT_LE(o.spent, budget);
    }
}

TEST(CmetsFullRunReserve, AHighDimensionalSpaceMakesOneBeforeTheBudgetEnds) {
  const Outcome o = run_sphere(8, {1, 3}, 60, 1);
  EXPECT_GE(o.full, 1) << o.trials << " trials";
  EXPECT_EQ(o.reserved, 1) << "the reserve made one full run, and only while none had been made";
  EXPECT_TRUE(o.best);
  EXPECT_LE(o.spent, 60.0);
}

// Where the tree reaches full resolution itself (3-D, a budget of 30 full runs), the reserve never acts.
TEST(CmetsFullRunReserve, NeverActsWhereTheTreeMakesFullRunsItself) {
  const Outcome o = run_sphere(3, {1, 3, 9}, 270, 1);
  EXPECT_GE(o.full, 2);
  EXPECT_EQ(o.reserved, 0);
}

}  // namespace
