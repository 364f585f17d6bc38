// What a user of ucb / ei with compression, gpoo and bnb met in campaign files: an option of the
// wrong type reported at "line 1, column 1" (of a copy of the strategy's map), an option inside
// `fit` or `optimizer` reported at the strategy's line, options accepted and ignored, and a gpoo
// campaign whose rounds were larger than its trial budget (no round ever completed).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tune_process.hpp"

namespace tune_test {
namespace {

const std::string kHead = "name: opts\ncommand: [echo, \"{x}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\n";

struct Placed {
  std::string strategy;  // the lines from line 5 on
  std::string at;        // "field '...' at line N": where the error must point
  std::string fix;       // part of the message
};

// The option's own line, whatever the error: a wrong type, an unknown value, a bound inside a
// nested map, an option that needs another.
TEST(TuneStrategiesDogfood, AStrategyOptionsErrorNamesItsOwnLine) {
  const fs::path d = fresh_dir("strategies-dogfood-lines");
  const std::vector<Placed> cases{
      {"strategy:\n  name: ucb\n  epsilon: abc\n", "field 'strategy.epsilon' at line 7, column 12", "expected a number"},
      {"strategy:\n  name: bnb\n\n  max_level: many\n", "field 'strategy.max_level' at line 8, column 14", "non-negative integer"},
      {"strategy:\n  name: gpoo\n  beta: sometimes\n", "field 'strategy.beta' at line 7, column 9", "expected 'theory', 'code'"},
      {"strategy:\n  name: ei\n  fit:\n    lengthscale_min: 5\n    lengthscale_max: 1\n",
       "field 'strategy.fit.lengthscale_min' at line 8, column 22", "give fit.lengthscale_min <= fit.lengthscale_max"},
      {"strategy:\n  name: ei\n  optimizer: {perturbation_fraction: 2}\n",
       "field 'strategy.optimizer.perturbation_fraction' at line 7, column 38", "[0, 1)"},
      {"strategy:\n  name: ei\n  horizon: 1000\n", "field 'strategy.horizon' at line 7, column 12", "schedule_alpha"},
  };
  for (const Placed& c : cases) {
    write(d / "bad.yaml", kHead + c.strategy);
    const Result r = tune(d, {"run", "bad.yaml", "--quiet"});
    EXPECT_EQ(r.code, 1) << c.strategy;
    EXPECT_NE(r.err.find(c.at), std::string::npos) << c.strategy << r.err;
    EXPECT_NE(r.err.find(c.fix), std::string::npos) << c.strategy << r.err;
    EXPECT_EQ(r.err.find("line 1, column 1"), std::string::npos) << c.strategy << r.err;
    EXPECT_FALSE(fs::exists(d / "opts")) << "a campaign directory was created for an invalid file";
  }
}

// A gpoo round of S representatives tells their mean once all S have run; a budget below S never
// completes one. Refused at the option's line, naming both numbers; S equal to the budget runs.
TEST(TuneStrategiesDogfood, AGpooRoundLargerThanTheTrialBudgetIsRefused) {
  const fs::path d = fresh_dir("strategies-dogfood-gpoo-round");
  write(d / "big.yaml", kHead + "strategy:\n  name: gpoo\n  representatives: 8\nbudget: {trials: 6}\n");
  const Result r = tune(d, {"ask", "big.yaml"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.err.find("field 'strategy.representatives' at line 7"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("budget.trials (6)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "opts"));
  // The default budget of 50 trials is named as the default.
  write(d / "default.yaml", kHead + "strategy: {name: gpoo, representatives: 64}\n");
  const Result dflt = tune(d, {"ask", "default.yaml"});
  EXPECT_EQ(dflt.code, 1);
  EXPECT_NE(dflt.err.find("budget.trials (50, the default)"), std::string::npos) << dflt.err;
  // One round in the budget: accepted, and its trials are the round's representatives.
  write(d / "one.yaml", kHead + "strategy:\n  name: gpoo\n  representatives: 4\nbudget: {trials: 4}\n");
  for (int i = 0; i < 4; ++i) {
    const Result a = tune(d, {"ask", "one.yaml"});
    ASSERT_EQ(a.code, 0) << a.err;
    ASSERT_EQ(tune(d, {"tell", "opts", std::to_string(i), "1.5"}).code, 0);
  }
  const YAML::Node s = state_of(d / "opts");
  EXPECT_EQ(s["study"]["trials"].size(), 4u);
  EXPECT_EQ(s["study"]["strategy"]["state"]["rounds"].size(), 1u);
  EXPECT_EQ(s["study"]["strategy"]["state"]["rounds"][0]["trials"].size(), 4u);
}


// bnb's first round samples the lattice {0, 1/2, 1}; where 0 and 1 fail, the search's round stayed
// open for good and every ask refined on a copy told fantasies there. The campaign converged on the
// finest lattice, and `tune status` said "lattice level 1 (0% of it pruned)" beside "branch and
// bound has converged: ... (spacing 2^-6)". The status now shows the level the asks work at.
TEST(TuneStrategiesDogfood, BnbStatusShowsTheLevelItConvergedAtWhenPointsFailed) {
  const fs::path d = fresh_dir("strategies-dogfood-bnb-failed");
  const fs::path trainer = write_script(
      d, "edges_fail.sh",
      "#!/bin/sh\nawk -v x=\"$1\" 'BEGIN { if (x < 0.1 || x > 0.9) exit 3; printf \"loss=%.17g\\n\", (x - 0.4) ^ 2 }'\n");
  write(d / "c.yaml", "name: edges\ncommand: [" + trainer.string() +
                          ", \"{x}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: loss\n"
                          "strategy: {name: bnb, max_level: 6}\nbudget: {trials: 60, failures: 10}\n");
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Result st = tune(d, {"status", "edges"});
  ASSERT_EQ(st.code, 0) << st.err;
  ASSERT_NE(st.out.find("branch and bound has converged"), std::string::npos) << st.out;
  ASSERT_NE(st.out.find("(spacing 2^-6)"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("lattice level 6 ("), std::string::npos) << st.out;
  // Both edges failed, and nothing else: the search did not return to them.
  const YAML::Node trials = state_of(d / "edges")["study"]["trials"];
  std::size_t failed = 0;
  for (const auto& t : trials) failed += t["status"].as<std::string>() == "failed" ? 1 : 0;
  EXPECT_EQ(failed, 2u) << st.out;
}


// `tune status` counted every gpoo round as "cells observed", also one whose trial failed (it never
// completes: it stays as a fantasy). Rounds of S = 2 are consecutive asks: trials 0-1 and 2-3;
// with trial 2 failed, one of the two rounds is observed.
TEST(TuneStrategiesDogfood, GpooStatusCountsOnlyTheRoundsWhoseTrialsAllCompleted) {
  const fs::path d = fresh_dir("strategies-dogfood-gpoo-rounds");
  write(d / "c.yaml", kHead + "strategy: {name: gpoo, representatives: 2}\nbudget: {trials: 4}\n");
  for (int i = 0; i < 4; ++i) ASSERT_EQ(tune(d, {"ask", "c.yaml"}).code, 0);
  for (const char* id : {"0", "1", "3"}) ASSERT_EQ(tune(d, {"tell", "opts", id, "0.5"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "opts", "2", "--failed", "diverged"}).code, 0);
  const YAML::Node rounds = state_of(d / "opts")["study"]["strategy"]["state"]["rounds"];
  ASSERT_EQ(rounds.size(), 2u);
  ASSERT_EQ(rounds[1]["trials"][0].as<int>(), 2);
  const Result st = tune(d, {"status", "opts"});
  ASSERT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("model: 2 gpoo rounds, 1 of them observed"), std::string::npos) << st.out;
}

// bnb assumes a deterministic objective; told noisy results it took a lucky draw for the optimum and
// converged with no sign of trouble. It now re-runs its best configuration once (after
// repeat_best_after completed trials) and says so when the two results differ. The trainer adds
// 0.01 times the number of runs so far: a noise-free rule (x - 0.4)^2 plus drift.
TEST(TuneStrategiesDogfood, BnbWarnsWhenItsReRunOfTheBestDisagrees) {
  const fs::path d = fresh_dir("strategies-dogfood-bnb-repeat");
  const fs::path trainer = write_script(
      d, "drifting.sh",
      "#!/bin/sh\nn=$(cat \"$2\" 2>/dev/null || echo 0)\necho $((n + 1)) > \"$2\"\n"
      "awk -v x=\"$1\" -v n=\"$n\" -v drift=\"$3\" 'BEGIN { printf \"loss=%.17g\\n\", (x - 0.4) ^ 2 + drift * n }'\n");
  const auto campaign = [&](const std::string& name, const std::string& drift) {
    write(d / (name + ".yaml"), "name: " + name + "\ncommand: [" + trainer.string() + ", \"{x}\", \"" +
                                    (d / (name + ".count")).string() + "\", \"" + drift +
                                    "\"]\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: loss\n"
                                    "strategy: {name: bnb, max_level: 4, repeat_best_after: 6}\nbudget: {trials: 12}\n");
    const Result r = tune(d, {"run", name + ".yaml"});
    EXPECT_EQ(r.code, 0) << r.err;
    return r.out + r.err;
  };
  // The tuner says so as the re-run's result comes in (once), not only when asked afterwards.
  const std::string output = campaign("drifting", "0.01");
  const std::size_t said = output.find("warning: trial 6 re-ran trial ");
  EXPECT_NE(said, std::string::npos) << output;
  EXPECT_EQ(output.find("warning:", said + 1), std::string::npos) << output;
  EXPECT_LT(said, output.find("trial 7 started")) << output;
  const Result st = tune(d, {"status", "drifting"});
  ASSERT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("warning: trial 6 re-ran trial "), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("the objective is not deterministic"), std::string::npos) << st.out;
  const Result best = tune(d, {"best", "drifting"});
  ASSERT_EQ(best.code, 0) << best.err;
  EXPECT_NE(best.out.find("# warning: trial 6 re-ran"), std::string::npos) << best.out;
  const Result json = tune(d, {"best", "drifting", "--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_NE(json.out.find("\"warning\": \"trial 6 re-ran"), std::string::npos) << json.out;
  // The re-run ran the configuration of an earlier trial, exactly.
  const YAML::Node trials = state_of(d / "drifting")["study"]["trials"];
  ASSERT_GE(trials.size(), 7u);
  bool same_config = false;
  for (std::size_t i = 0; i < 6; ++i)
    same_config |= trials[i]["config"]["x"].as<double>() == trials[6]["config"]["x"].as<double>();
  EXPECT_TRUE(same_config) << st.out;

  // Without drift the same campaign reports agreement, and `tune best` has no warning.
  EXPECT_EQ(campaign("steady", "0").find("warning"), std::string::npos);
  const Result steady = tune(d, {"status", "steady"});
  EXPECT_NE(steady.out.find("noise check: trial 6 re-ran trial "), std::string::npos) << steady.out;
  EXPECT_NE(steady.out.find("got the same value"), std::string::npos) << steady.out;
  EXPECT_EQ(tune(d, {"best", "steady"}).out.find("warning"), std::string::npos);
}

// bnb never fits a noise variance; `fit: {fit_noise: true}` was accepted and ignored.
TEST(TuneStrategiesDogfood, BnbRefusesToFitANoise) {
  const fs::path d = fresh_dir("strategies-dogfood-bnb-fit-noise");
  write(d / "c.yaml", kHead + "strategy:\n  name: bnb\n  fit: {fit_noise: true}\n");
  const Result r = tune(d, {"ask", "c.yaml"});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.err.find("'fit.fit_noise'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use ei or ucb for a noisy objective"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "opts"));
}

}  // namespace
}  // namespace tune_test
