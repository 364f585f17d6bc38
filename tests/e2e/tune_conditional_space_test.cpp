// A campaign over a conditional space (`when:` in the space), run by the real `tune` with a real
// trainer: a parameter that does not apply reaches the trainer neither as an argument nor as a
// TUNE_PARAM_ variable, the state and the export leave it out, and a command or condition that
// cannot work is refused before anything runs.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

std::string campaign(const std::string& command, const std::string& momentum_condition, int trials) {
  return "name: cond\ncommand: [" + (kTrainers / "conditional.sh").string() + ", " + command +
         "]\n"
         "space:\n"
         "  opt: {type: categorical, choices: [sgd, adam, rmsprop]}\n"
         "  momentum: {type: float, low: 0, high: 0.99, when: " + momentum_condition + "}\n"
         "  lr: {type: float, low: 1.0e-4, high: 1, log: true}\n"
         "objective: {name: loss, direction: minimize}\n"
         "strategy: {name: ei, initial_design: 6}\nseed: 3\n"
         "budget: {trials: " + std::to_string(trials) + "}\n";
}

TEST(TuneConditionalSpace, AParameterThatDoesNotApplyNeverReachesTheTrainer) {
  const fs::path d = fresh_dir("conditional");
  write(d / "c.yaml", campaign("\"--opt={opt}\", \"--momentum={momentum}\", \"--lr={lr}\"", "{opt: [sgd]}", 14));
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node trials = state_of(d / "cond")["study"]["trials"];
  ASSERT_EQ(trials.size(), 14u);
  int sgd = 0, other = 0;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const YAML::Node t = trials[i];
    ASSERT_EQ(t["status"].as<std::string>(), "complete") << i << ": the trainer refused what it got";
    const std::string opt = t["config"]["opt"].as<std::string>();
    const bool applies = opt == "sgd";
    (applies ? sgd : other)++;
    EXPECT_EQ(static_cast<bool>(t["config"]["momentum"]), applies) << i;
    const fs::path dir = d / "cond" / "trials" / std::to_string(i);
    const std::string argv = slurp(dir / "argv");
    EXPECT_EQ(argv.find("--momentum=") != std::string::npos, applies) << i << ": " << argv;
    const std::string env = slurp(dir / "env");
    EXPECT_EQ(env.find("TUNE_PARAM_MOMENTUM=") != std::string::npos, applies) << i << ": " << env;
    EXPECT_NE(env.find("TUNE_PARAM_OPT=" + opt + "\n"), std::string::npos) << env;
  }
  EXPECT_GT(sgd, 0);
  EXPECT_GT(other, 0);
  // The export leaves the cell empty where the parameter does not apply.
  const Result x = tune(d, {"export", "cond"});
  ASSERT_EQ(x.code, 0) << x.err;
  EXPECT_NE(x.out.find("param.momentum"), std::string::npos) << x.out;
  const Result best = tune(d, {"best", "cond"});
  EXPECT_EQ(best.code, 0) << best.err;
  // tune enqueue wants exactly the parameters that apply.
  const Result extra = tune(d, {"enqueue", "cond", "opt=adam", "momentum=0.5", "lr=0.01"});
  EXPECT_NE(extra.code, 0);
  EXPECT_NE(extra.err.find("applies only when opt is sgd"), std::string::npos) << extra.err;
  const Result missing = tune(d, {"enqueue", "cond", "opt=sgd", "lr=0.01"});
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.err.find("'momentum' has no value"), std::string::npos) << missing.err;
  const Result adam = tune(d, {"enqueue", "cond", "opt=adam", "lr=0.01"});
  EXPECT_EQ(adam.code, 0) << adam.err;
  // It runs when the budget is raised, and the trainer gets no --momentum.
  const Result more = tune(d, {"resume", "cond", "--trials", "15", "--quiet"});
  ASSERT_EQ(more.code, 0) << more.err;
  const YAML::Node last = state_of(d / "cond")["study"]["trials"][14];
  EXPECT_EQ(last["source"].as<std::string>(), "enqueued");
  EXPECT_EQ(last["status"].as<std::string>(), "complete");
  EXPECT_EQ(slurp(d / "cond" / "trials" / "14" / "argv"), "--opt=adam\n--lr=0.01\n");
}

TEST(TuneConditionalSpace, ACommandOrConditionThatCannotWorkIsRefusedBeforeAnythingRuns) {
  const fs::path d = fresh_dir("conditional-refused");
  write(d / "flag.yaml", campaign("\"--opt={opt}\", \"--momentum\", \"{momentum}\", \"--lr={lr}\"", "{opt: [sgd]}", 4));
  const Result flag = tune(d, {"run", "flag.yaml", "--quiet"});
  EXPECT_EQ(flag.code, 1);
  EXPECT_NE(flag.err.find("leave '--momentum' behind"), std::string::npos) << flag.err;
  EXPECT_NE(flag.err.find("'--momentum={momentum}'"), std::string::npos) << flag.err;
  write(d / "typo.yaml", campaign("\"--opt={opt}\", \"--momentum={momentum}\", \"--lr={lr}\"", "{opt: [sdg]}", 4));
  const Result typo = tune(d, {"run", "typo.yaml", "--quiet"});
  EXPECT_EQ(typo.code, 1);
  EXPECT_NE(typo.err.find("'momentum'"), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("'sdg' is not one of its choices"), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("parameter 'momentum' at line 5"), std::string::npos) << typo.err;
  EXPECT_EQ(typo.err.find("field 'space' at"), std::string::npos) << "led with the space's line: " << typo.err;
  EXPECT_NE(flag.err.find("line 2"), std::string::npos) << flag.err;
  // An enqueued value of a parameter that does not apply: at its own line, with the one fix.
  write(d / "enqueue.yaml", campaign("\"--opt={opt}\", \"--momentum={momentum}\", \"--lr={lr}\"", "{opt: [sgd]}", 4) +
                                "enqueue:\n  - opt: adam\n    lr: 0.01\n    momentum: 0.5\n");
  const Result enqueued = tune(d, {"run", "enqueue.yaml", "--quiet"});
  EXPECT_EQ(enqueued.code, 1);
  EXPECT_NE(enqueued.err.find("field 'enqueue[0].momentum' at line 14"), std::string::npos) << enqueued.err;
  EXPECT_NE(enqueued.err.find("remove it"), std::string::npos) << enqueued.err;
  EXPECT_EQ(enqueued.err.find("give a value the space allows"), std::string::npos) << enqueued.err;
  EXPECT_FALSE(fs::exists(d / "cond")) << "a refused campaign left a directory";
}

}  // namespace
