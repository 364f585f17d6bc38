// A campaign with measured costs, a cost budget and a time limit per level: runs at a level whose
// cost is still a guess start side by side while their worst case (time limit + grace + margin)
// fits the budget, where before every other worker waited for the first run there to end. And what
// a stopped run spent counts against the budget.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// A run from its launch to its end, as the campaign's run record has it.
struct RunSpan {
  double started = 0.0, finished = 0.0;
};
RunSpan span_of(const YAML::Node& run) { return {run["started_at"].as<double>(), run["finished_at"].as<double>()}; }
bool overlap(const RunSpan& a, const RunSpan& b) { return a.started < b.finished && b.started < a.finished; }

// Writes campaign `name` into a fresh directory of that name, returned: the shell script `trainer`
// (given x and the epochs) over x in [0, 1], levels of 1 and 2 epochs with measured costs and
// `more_resolution` keys, cmets, `trials` trials and a cost budget of 20 s, two workers and
// `more_executor` keys, and one trial per entry of `epochs` enqueued at x = 0.1, 0.2, ...
fs::path two_level_campaign(const std::string& name, const std::string& trainer, const std::string& more_resolution,
                            const std::string& more_executor, const std::vector<int>& epochs, std::size_t trials) {
  const fs::path d = fresh_dir("cost-limits-" + name);
  const fs::path script = write_script(d, "trainer.sh", "#!/bin/sh\n" + trainer);
  std::string enqueue;
  for (std::size_t i = 0; i < epochs.size(); ++i)
    enqueue += "  - {x: 0." + std::to_string(i + 1) + ", epochs: " + std::to_string(epochs[i]) + "}\n";
  write(d / "c.yaml", "name: " + name + "\ncommand: [" + script.string() +
                          ", \"{x}\", \"{epochs}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: loss\n"
                          "resolution: {param: epochs, levels: [1, 2], cost: measured" + more_resolution +
                          "}\nstrategy: cmets\nbudget: {trials: " + std::to_string(trials) +
                          ", cost: 20}\nexecutor: {workers: 2" + more_executor + "}\nenqueue:\n" + enqueue);
  return d;
}

// Runs the campaign of two_level_campaign, one trial per entry of `epochs`, to its end; returns its state.
YAML::Node run_two_level_campaign(const std::string& name, const std::string& trainer, const std::string& more_resolution,
                                  const std::string& more_executor, const std::vector<int>& epochs) {
  const fs::path d = two_level_campaign(name, trainer, more_resolution, more_executor, epochs, epochs.size());
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  EXPECT_EQ(r.code, 0) << r.err;
  return state_of(d / name);
}

// Two workers; epochs 1 takes 0.3 s, epochs 2 never ends and is stopped at its limit of 1 s (grace
// 200 ms), so no run at epochs 2 ever completes and its cost stays a guess. Cost limits: 2 + 0.2 + 5
// = 7.2 s and 1 + 0.2 + 5 = 6.2 s; the budget of 20 s leaves room for the largest, 7.2, with one
// guessed run out at its limit, so each run at epochs 2 starts beside the one before it (one at a
// time before: a level whose runs time out ran them one after the other).
TEST(TuneCostLimits, RunsAtAGuessedLevelStartSideBySideWhileTheirWorstCaseFits) {
  const YAML::Node state = run_two_level_campaign(
      "side-by-side", "if [ \"$2\" = 2 ]; then exec sleep 30; fi\nsleep 0.3\necho \"loss=$1\"\n", ", timeout: [2s, 1s]",
      ", grace: 200ms", {1, 2, 2, 2});
  const YAML::Node runs = state["runs"];
  const YAML::Node trials = state["study"]["trials"];
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0]["status"].as<std::string>(), "complete") << runs[0];
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(trials[i]["level"].as<int>(), 1) << trials[i];
    EXPECT_EQ(runs[i]["failure_reason"].as<std::string>(), "timed out after 1.0s") << runs[i];
  }
  // Runs at epochs 2, none of which completed, overlapped in time.
  EXPECT_TRUE(overlap(span_of(runs[1]), span_of(runs[2])))
      << "trials 1 and 2 at epochs 2 ran one after the other: " << runs[1] << "\n" << runs[2];
  EXPECT_TRUE(overlap(span_of(runs[2]), span_of(runs[3])))
      << "trials 2 and 3 at epochs 2 ran one after the other: " << runs[2] << "\n" << runs[3];
  // Each measured cost is within its limit (a timed-out run's too: at least its 1 s), and the spend
  // within the budget.
  const std::vector<double> limits{2 + 0.2 + 5, 1 + 0.2 + 5};
  double spend = 0.0;
  for (const YAML::Node& t : trials) {
    const double cost = t["cost"].as<double>();
    EXPECT_LE(cost, limits[t["level"].as<std::size_t>()]) << t;
    if (t["level"].as<int>() == 1) {
      EXPECT_GE(cost, 1.0) << t;
    }
    spend += cost;
  }
  EXPECT_LE(spend, 20.0);
}

// Without a time limit for every level nothing bounds a guessed run's cost: the first run at
// epochs 2 runs alone, as before, and the next waits for it.
TEST(TuneCostLimits, WithoutATimeLimitAGuessedLevelRunsAlone) {
  const YAML::Node runs = run_two_level_campaign(
      "without", "if [ \"$2\" = 2 ]; then sleep 0.6; else sleep 0.2; fi\necho \"loss=$1\"\n", "", "", {1, 2, 2})["runs"];
  ASSERT_EQ(runs.size(), 3u);
  for (const YAML::Node& run : runs) EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
  EXPECT_FALSE(overlap(span_of(runs[0]), span_of(runs[1]))) << "the second run started before the first cost was in";
  EXPECT_FALSE(overlap(span_of(runs[1]), span_of(runs[2]))) << "trial 2 started while trial 1's cost was a guess";
}

// A run re-attached by a resume started under an earlier session's time limit, which its
// command.yaml records: the resumed tuner bounds its cost by that limit, so the next run at a level
// not yet priced starts beside it (here: before the first cost is in), as within one session. The
// first session runs one trial (the trial budget) and is hung up while it runs; the resume raises
// the budget to three.
TEST(TuneCostLimits, ARunReattachedByAResumeKeepsItsLimitAndOthersStartBesideIt) {
  const fs::path d = two_level_campaign("reattached", "sleep 1\necho \"loss=$1\"\n", ", timeout: [2s, 2s]",
                                        ", grace: 200ms", {2, 2, 2}, 1);
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"});
  ASSERT_TRUE(wait_until([&] { return fs::exists(d / "reattached" / "trials" / "0" / "supervisor.yaml"); },
                         std::chrono::seconds(10)));
  ::kill(tuner, SIGHUP);
  ASSERT_EQ(finish(d, tuner).code, 3);
  // tune status says why the next trial will not wait (it said "one trial runs at a time").
  const Result status = tune(d, {"status", "reattached"});
  EXPECT_NE(status.out.find("with time limits a trial starts beside the running ones while the budget left, with each "
                            "of them at its time limit (+ grace + 5 s), covers one more at the longest (7.2s)"),
            std::string::npos)
      << status.out;
  const Result resumed = tune(d, {"resume", "reattached", "--trials", "3", "--quiet"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const YAML::Node runs = state_of(d / "reattached")["runs"];
  ASSERT_EQ(runs.size(), 3u);
  for (const YAML::Node& run : runs) EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
  EXPECT_EQ(runs[0]["attempts"].as<int>(), 1) << "re-attached, not run again";
  EXPECT_TRUE(overlap(span_of(runs[0]), span_of(runs[1])))
      << "trial 1 waited for the re-attached trial 0: " << runs[0] << "\n" << runs[1];
}

// The xgboost and libsvm examples guard against hung runs with executor.timeout: 5m, above their
// whole cost budgets (120 s, 40 s). Taken as cost bounds, no run fitted at its limit and the
// campaign ended at once, "the cost budget is spent: 0 of 120". The limits guard hangs only, and
// the budget is spent on the runs' measured costs.
TEST(TuneCostLimits, ATimeLimitAboveTheWholeBudgetStillLetsTheBudgetBeSpent) {
  const fs::path d = two_level_campaign("guard", "sleep 0.3\necho \"loss=$1\"\n", "", ", timeout: 5m", {1}, 4);
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node state = state_of(d / "guard");
  const YAML::Node runs = state["runs"];  // one enqueued, three the strategy's
  ASSERT_EQ(runs.size(), 4u) << state["stop_reason"];
  for (const YAML::Node& run : runs) EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
}

// A run stopped by `tune stop` (or Ctrl-C) runs again on resume; the run time it spent before the
// stop was charged to nothing, so stop and resume cycles spent run time the cost budget never
// counted. It is now the trial's interrupted_cost: exactly the span of the stopped attempt's exit
// record (set aside in attempts/1/), counted in `tune status`'s spend, not in the level's cost.
TEST(TuneInterruptedCost, ARunStoppedMidwayIsChargedWhatItRan) {
  const fs::path d = two_level_campaign(
      "stopped", "if [ ! -e first ]; then touch first; exec sleep 30; fi\nsleep 0.2\necho \"loss=$1\"\n", "", "", {2}, 1);
  const fs::path trial = d / "stopped" / "trials" / "0";
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"});
  ASSERT_TRUE(wait_until([&] { return fs::exists(trial / "first"); }, std::chrono::seconds(10)));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ASSERT_EQ(tune(d, {"stop", "stopped"}).code, 0);
  finish(d, tuner);
  const YAML::Node interrupted = state_of(d / "stopped")["study"]["trials"][0];
  EXPECT_EQ(interrupted["status"].as<std::string>(), "pending") << interrupted;
  ASSERT_TRUE(interrupted["interrupted_cost"]) << interrupted;
  const double charged = interrupted["interrupted_cost"].as<double>();
  EXPECT_GE(charged, 0.7);
  // tune export's cost column: what trial 0 has charged, stopped (it was empty) and finished.
  const auto exported_cost = [&] {
    const Result table = tune(d, {"export", "stopped", "--format", "jsonl"});
    EXPECT_EQ(table.code, 0) << table.err;
    return YAML::Load(table.out.substr(0, table.out.find('\n')))["cost"];
  };
  ASSERT_TRUE(exported_cost().IsScalar());
  EXPECT_EQ(exported_cost().as<double>(), charged);

  const Result resumed = tune(d, {"resume", "stopped", "--quiet"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const YAML::Node first = YAML::LoadFile((trial / "attempts" / "1" / "exit.yaml").string());
  EXPECT_EQ(first["kind"].as<std::string>(), "cancelled") << first;
  EXPECT_EQ(charged, first["finished_at"].as<double>() - first["started_at"].as<double>());
  const YAML::Node t = state_of(d / "stopped")["study"]["trials"][0];
  EXPECT_EQ(t["status"].as<std::string>(), "complete") << t;
  EXPECT_EQ(t["interrupted_cost"].as<double>(), charged) << t;
  const double cost = t["cost"].as<double>();
  EXPECT_LT(cost, charged) << "the second attempt, 0.2 s, was charged the first's time too";
  EXPECT_EQ(exported_cost().as<double>(), cost + charged);
  const Result status = tune(d, {"status", "stopped"});
  const std::size_t at = status.out.find("cost: ");
  ASSERT_NE(at, std::string::npos) << status.out;
  EXPECT_NEAR(std::stod(status.out.substr(at + 6)), cost + charged, 0.001 * (cost + charged)) << status.out;  // 4 digits
  EXPECT_NE(status.out.find("s of it by interrupted runs)"), std::string::npos) << status.out;
  EXPECT_NE(slurp(d / "stopped" / "events.jsonl").find("\"interrupted_cost\": "), std::string::npos);
}

}  // namespace
