// Pruning (`pruning:` in a campaign) with the real `tune` and a real trainer that reports a loss at
// every step: the trials the median rule stops are exactly those it should stop (recomputed here
// from the curves' closed form), their processes really stop, they keep the value they had
// reached (the study records them as failed: no result), and a decision recorded by a tuner killed before it stopped the run is carried out on
// resume.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// loss(x, t) = (x - 0.3)^2 + 1 / (t + 1), reported at steps 0 .. STEPS-1, 0.12 s apart: every
// curve has the same shape, so the rule's verdict on a trial depends on (x - 0.3)^2 alone.
const char* kCurveTrainer = R"(#!/bin/bash
x=$1; steps=$2
for ((t = 0; t < steps; t++)); do
  awk -v x="$x" -v t="$t" 'BEGIN { printf "loss=%.9f step=%d\n", (x - 0.3)^2 + 1 / (t + 1), t }'
  sleep 0.12
done
awk -v x="$x" -v t="$steps" 'BEGIN { printf "loss=%.9f\n", (x - 0.3)^2 + 1 / (t + 1) }'
touch "$TUNE_TRIAL_DIR/finished"
)";

std::string campaign(const fs::path& trainer, int steps, int trials, const std::string& pruning) {
  return "name: prune\ncommand: [" + trainer.string() + ", \"{x}\", \"" + std::to_string(steps) +
         "\"]\n"
         "space:\n  x: {type: float, low: 0, high: 1}\n"
         "objective: {name: loss, direction: minimize}\n"
         "strategy: random\nseed: 5\n"
         "pruning: " + pruning + "\n"
         "budget: {trials: " + std::to_string(trials) + "}\n";
}

double gap(double x) { return (x - 0.3) * (x - 0.3); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

TEST(TunePruning, StopsExactlyTheTrialsBehindTheMedianAndTellsThemTheirLastValue) {
  const fs::path d = fresh_dir("pruning");
  const fs::path trainer = write_script(d, "curve.sh", kCurveTrainer);
  write(d / "c.yaml", campaign(trainer, 10, 10, "{rule: median, startup_trials: 3}"));
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node state = state_of(d / "prune");
  const YAML::Node runs = state["runs"];
  const YAML::Node trials = state["study"]["trials"];
  ASSERT_EQ(trials.size(), 10u);
  // One worker: trial i is judged against the trials before it that completed unpruned.
  std::vector<double> reference;
  int pruned = 0;
  for (std::size_t i = 0; i < trials.size(); ++i) {
    const double x = trials[i]["config"]["x"].as<double>();
    const bool should = reference.size() >= 3 && gap(x) > median(reference);
    // Pruned: complete for the campaign, failed for the study (no result: its run did not finish).
    EXPECT_EQ(runs[i]["status"].as<std::string>(), "complete") << i;
    EXPECT_EQ(trials[i]["status"].as<std::string>(), should ? "failed" : "complete") << i;
    const fs::path tdir = d / "prune" / "trials" / std::to_string(i);
    EXPECT_EQ(static_cast<bool>(runs[i]["pruned"]), should) << "trial " << i << " x=" << x;
    EXPECT_EQ(static_cast<bool>(trials[i]["pruned"]), should) << i;
    if (should && runs[i]["pruned"]) {
      ++pruned;
      const auto step = runs[i]["pruned"]["step"].as<long>();
      EXPECT_EQ(trials[i]["pruned"]["step"].as<long>(), step);
      EXPECT_FALSE(trials[i]["value"]);
      EXPECT_LT(step, 9) << "a 10-step run was not stopped early";
      // Told the loss it had reached at that step, which the trainer computed.
      EXPECT_NEAR(runs[i]["pruned"]["value"].as<double>(), gap(x) + 1.0 / (static_cast<double>(step) + 1), 1e-8) << i;
      EXPECT_EQ(trials[i]["pruned"]["last_value"].as<double>(), runs[i]["pruned"]["value"].as<double>()) << i;
      EXPECT_FALSE(fs::exists(tdir / "finished")) << "trial " << i << "'s process ran to its end";
      EXPECT_EQ(runs[i]["exit"]["kind"].as<std::string>(), "cancelled") << i;
      EXPECT_NE(runs[i]["pruned"]["reason"].as<std::string>().find("the median of the"), std::string::npos);
    } else if (!should) {
      EXPECT_TRUE(fs::exists(tdir / "finished")) << i;
      EXPECT_NEAR(trials[i]["value"].as<double>(), gap(x) + 1.0 / 11, 1e-8) << i;
      reference.push_back(gap(x));
    }
  }
  EXPECT_GE(pruned, 2) << "the seed should make the rule stop some trials";
  // Not a failure: the campaign ran its 10 trials without counting any against budget.failures.
  EXPECT_EQ(state["failed_at_failures_stop"].as<std::size_t>(0), 0u);

  // tune status and export say which were pruned, tune best never names one.
  const Result status = tune(d, {"status", "prune"});
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find(std::to_string(pruned) + " of them pruned"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("pruned "), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("pruning: a trial worse than the median"), std::string::npos) << status.out;
  const Result csv = tune(d, {"export", "prune"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  std::size_t pruned_rows = 0;
  for (std::size_t at = csv.out.find(",pruned,"); at != std::string::npos; at = csv.out.find(",pruned,", at + 1))
    ++pruned_rows;
  EXPECT_EQ(pruned_rows, static_cast<std::size_t>(pruned)) << csv.out;
  EXPECT_NE(csv.out.find(",failure,pruned_at_step,"), std::string::npos) << csv.out;
  // Each pruned trial's step and the rule's verdict, as the state records them.
  const Result jsonl = tune(d, {"export", "prune", "--format", "jsonl"});
  ASSERT_EQ(jsonl.code, 0) << jsonl.err;
  std::istringstream lines(jsonl.out);
  std::size_t row = 0;
  for (std::string line; std::getline(lines, line); ++row) {
    const YAML::Node o = YAML::Load(line);
    const YAML::Node run = runs[row];
    EXPECT_EQ(o["status"].as<std::string>() == "pruned", static_cast<bool>(run["pruned"])) << line;
    if (!run["pruned"]) continue;
    EXPECT_EQ(o["pruned_at_step"].as<long>(), run["pruned"]["step"].as<long>()) << line;
    EXPECT_EQ(o["failure"].as<std::string>(), run["pruned"]["reason"].as<std::string>()) << line;
  }
  EXPECT_EQ(row, trials.size());
  const Result best = tune(d, {"best", "prune", "--json"});
  ASSERT_EQ(best.code, 0) << best.err;
  const YAML::Node b = YAML::Load(best.out);
  ASSERT_TRUE(b["trial"]) << best.out;
  EXPECT_FALSE(runs[b["trial"].as<std::size_t>()]["pruned"]) << best.out;
  EXPECT_NE(slurp(d / "prune" / "events.jsonl").find("\"event\": \"prune\", \"trial\": "), std::string::npos);
}

TEST(TunePruning, ADecisionATunerDidNotCarryOutBeforeItDiedIsCarriedOutOnResume) {
  const fs::path d = fresh_dir("pruning-resume");
  const fs::path trainer = write_script(d, "curve.sh", kCurveTrainer);
  write(d / "c.yaml", campaign(trainer, 300, 1, "median"));
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"});
  const fs::path stdout_file = d / "prune" / "trials" / "0" / "stdout";
  ASSERT_TRUE(wait_until([&] { return slurp(stdout_file).find("step=1\n") != std::string::npos; },
                         std::chrono::seconds(20)));
  ::kill(tuner, SIGKILL);
  finish(d, tuner);
  // As if the tuner had recorded its verdict and died before stopping the run.
  std::string text = slurp(d / "prune" / "state.yaml");
  const std::size_t line = text.find("{id: 0, status: running");
  ASSERT_NE(line, std::string::npos) << text;
  text.insert(text.find('\n', line) - 1, ", pruned: {step: 1, value: 0.75, reason: \"recorded before the kill\"}");
  write(d / "prune" / "state.yaml", text);
  const Result r = tune(d, {"resume", "prune", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node state = state_of(d / "prune");
  EXPECT_EQ(state["runs"][0]["status"].as<std::string>(), "complete");
  EXPECT_EQ(state["runs"][0]["attempts"].as<int>(), 1) << "the pruned trial ran again";
  EXPECT_EQ(state["study"]["trials"][0]["pruned"]["last_value"].as<double>(), 0.75);
  EXPECT_EQ(state["study"]["trials"][0]["pruned"]["step"].as<long>(), 1);
  EXPECT_EQ(state["runs"][0]["pruned"]["value"].as<double>(), 0.75);
  EXPECT_FALSE(fs::exists(d / "prune" / "trials" / "0" / "finished")) << "the 36-second run was not stopped";
}

TEST(TunePruning, BadSettingsAreRefusedAtTheirLine) {
  const fs::path d = fresh_dir("pruning-bad");
  const fs::path trainer = write_script(d, "curve.sh", kCurveTrainer);
  const std::vector<std::pair<std::string, std::string>> cases{
      {"{rule: mean}", "field 'pruning.rule' at line"},
      {"{rule: percentile}", "needs 'percentile'"},
      {"{rule: percentile, percentile: 0}", "field 'pruning.percentile' at line"},
      {"{rule: median, percentile: 25}", "write 'rule: percentile'"},
      {"{min_trials: 0}", "field 'pruning.min_trials'"},
      {"{warmup_steps: -1}", "field 'pruning.warmup_steps'"},
      {"{startup: 3}", "pruning.startup"},
      {"always", "expected 'median' or a map"},
  };
  for (const auto& [pruning, expected] : cases) {
    write(d / "c.yaml", campaign(trainer, 3, 3, pruning));
    const Result r = tune(d, {"run", "c.yaml", "--quiet"});
    EXPECT_NE(r.code, 0) << pruning;
    EXPECT_NE(r.err.find(expected), std::string::npos) << pruning << ": " << r.err;
    EXPECT_NE(r.err.find("c.yaml"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "prune" / "state.yaml")) << pruning;
  }
  // The inline form: --pruning median or a percentile.
  const Result word = tune(d, {"run", "--name", "i", "--pruning", "mean", "--", trainer.string(), "x~uniform(0,1)", "3"});
  EXPECT_EQ(word.code, 2);
  EXPECT_NE(word.err.find("--pruning 'mean': expected median, a percentile"), std::string::npos) << word.err;
  const Result range = tune(d, {"run", "--name", "i", "--pruning", "101", "--", trainer.string(), "x~uniform(0,1)", "3"});
  EXPECT_EQ(range.code, 2);
  EXPECT_NE(range.err.find("--pruning '101': must lie in (0, 100]"), std::string::npos) << range.err;
  EXPECT_FALSE(fs::exists(d / "i" / "state.yaml"));
  const Result ok = tune(d, {"run", "--name", "i", "--trials", "1", "--objective", "loss", "--pruning", "25", "--quiet",
                             "--", trainer.string(), "x~uniform(0,1)", "2"});
  ASSERT_EQ(ok.code, 0) << ok.err;
  const YAML::Node p = state_of(d / "i")["campaign"]["pruning"];
  EXPECT_EQ(p["rule"].as<std::string>(), "percentile");
  EXPECT_EQ(p["percentile"].as<double>(), 25.0);
  // Continued with the inline form: a percentile in any number form, and `none`, which drops the rule
  // (an option left out keeps the campaign's).
  const Result tenth = tune(d, {"run", "--name", "i", "--trials", "2", "--objective", "loss", "--pruning", "1e1",
                                "--quiet", "--", trainer.string(), "x~uniform(0,1)", "2"});
  ASSERT_EQ(tenth.code, 0) << tenth.err;
  EXPECT_EQ(state_of(d / "i")["campaign"]["pruning"]["percentile"].as<double>(), 10.0);
  const Result kept = tune(d, {"run", "--name", "i", "--trials", "3", "--objective", "loss", "--quiet", "--",
                               trainer.string(), "x~uniform(0,1)", "2"});
  ASSERT_EQ(kept.code, 0) << kept.err;
  EXPECT_EQ(state_of(d / "i")["campaign"]["pruning"]["percentile"].as<double>(), 10.0);
  const Result none = tune(d, {"run", "--name", "i", "--trials", "4", "--objective", "loss", "--pruning", "none",
                               "--", trainer.string(), "x~uniform(0,1)", "2"});
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_FALSE(state_of(d / "i")["campaign"]["pruning"]);
  EXPECT_NE(none.err.find("pruning"), std::string::npos) << none.err;  // the run settings' change is said
}

// A trial the rule is stopping keeps the grace its SIGTERM gave it when `tune stop` comes meanwhile:
// the stop's own cancel of it was a second SIGTERM, which the supervisor answers with SIGKILL, and
// a trainer saving a checkpoint on SIGTERM lost it (review of the pruning change).
TEST(TunePruning, AStopWhileATrialIsBeingPrunedLeavesItItsGrace) {
  const fs::path d = fresh_dir("pruning-stop");
  // The curve, 5 steps at x = 0.3 (the reference) and 300 elsewhere; SIGTERM takes 1.5 s to handle
  // (a checkpoint being saved).
  const fs::path trainer = write_script(d, "slow_term.sh", R"(#!/bin/bash
x=$1; steps=300
[ "$x" = 0.3 ] && steps=5
trap 'sleep 1.5; touch "$TUNE_TRIAL_DIR/checkpoint"; exit 0' TERM
for ((t = 0; t < steps; t++)); do
  awk -v x="$x" -v t="$t" 'BEGIN { printf "loss=%.9f step=%d\n", (x - 0.3)^2 + 1 / (t + 1), t }'
  sleep 0.1 & wait $!
done
)");
  write(d / "c.yaml", "name: prune\ncommand: [" + trainer.string() + ", \"{x}\"]\n"
                      "space:\n  x: {type: float, low: 0, high: 1}\n"
                      "objective: {name: loss, direction: minimize}\nstrategy: random\n"
                      "pruning: {rule: median, startup_trials: 1}\n"
                      "executor: {workers: 1, grace: 10s}\n"
                      "budget: {trials: 3}\nenqueue: [{x: 0.3}, {x: 0.9}]\n");
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"});
  // Trial 1 (x = 0.9) is behind at its first step: recorded as pruned, then sent SIGTERM.
  ASSERT_TRUE(wait_until([&] { return slurp(d / "prune" / "state.yaml").find("pruned: {step:") != std::string::npos; },
                         std::chrono::seconds(30)));
  EXPECT_EQ(tune(d, {"stop", "prune"}).code, 0);
  const Result r = finish(d, tuner);
  EXPECT_EQ(r.code, 3) << r.err;
  const YAML::Node run = state_of(d / "prune")["runs"][1];
  EXPECT_EQ(run["status"].as<std::string>(), "complete");
  ASSERT_TRUE(run["pruned"]);
  EXPECT_EQ(run["exit"]["signal"].as<int>(), 0) << "the pruned trial was killed: " << run["exit"];
  EXPECT_TRUE(fs::exists(d / "prune" / "trials" / "1" / "checkpoint")) << "its SIGTERM handler did not finish";
}

}  // namespace
