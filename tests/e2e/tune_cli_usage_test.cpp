// End-to-end tests of the `tune` program as a new user meets it (dogfooding): real subprocesses,
// real trainers, real files.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// The inline form's objective is `objective` unless --objective says otherwise. A trainer that
// prints `loss=...` then reports no objective; its trials' failure reason names what it reported
// and the fix, not "expected a line 'objective=<value>'" as if it had printed nothing.
TEST(TuneCliUsage, ATrialReportingAnotherMetricThanTheObjectiveSaysWhichAndHowToNameIt) {
  const fs::path d = fresh_dir("usage-other-metric");
  const Result r = tune(d, {"run", "--name", "other", "--trials", "2", "--quiet", "--",
                            (kTrainers / "quadratic.sh").string(), "--x~uniform(-1,1)", "--y~uniform(-3,1)"});
  ASSERT_EQ(r.code, 0) << r.err;  // the trial budget is spent; every trial failed
  const YAML::Node trials = state_of(d / "other")["study"]["trials"];
  ASSERT_EQ(trials.size(), 2u);
  for (const YAML::Node& t : trials) {
    ASSERT_EQ(t["status"].as<std::string>(), "failed");
    const std::string reason = t["failure_reason"].as<std::string>();
    EXPECT_NE(reason.find("the trial reported loss="), std::string::npos) << reason;
    EXPECT_NE(reason.find("but not the objective 'objective'"), std::string::npos) << reason;
    EXPECT_NE(reason.find("--objective loss"), std::string::npos) << reason;
    EXPECT_NE(reason.find("objective: {name: loss}"), std::string::npos) << reason;
  }
  // tune status shows the same reason.
  const Result st = tune(d, {"status", "other"});
  ASSERT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("the trial reported loss="), std::string::npos) << st.out;
}

}  // namespace

namespace {

// A campaign that spent its trial budget continues with a larger one: tune resume --trials N (a new
// total). Before, resume ended at once ("the budget of 3 trials is spent") and tune run with the
// file's budget raised was refused as a different campaign, pointing at that same resume.
TEST(TuneCliUsage, ResumeWithTrialsContinuesACampaignThatSpentItsTrialBudget) {
  const fs::path d = fresh_dir("usage-resume-trials");
  write(d / "c.yaml", quadratic_campaign_with("more", 3, "{workers: 1}"));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  ASSERT_EQ(state_of(d / "more")["study"]["trials"].size(), 3u);

  // A total that is not above the trials so far is a bad command line, and changes nothing.
  const std::string before = slurp(d / "more" / "state.yaml");
  const Result low = tune(d, {"resume", "more", "--trials", "3", "--quiet"});
  EXPECT_EQ(low.code, 2) << low.err;
  EXPECT_NE(low.err.find("has 3 trials already"), std::string::npos) << low.err;
  EXPECT_EQ(slurp(d / "more" / "state.yaml"), before);

  const Result more = tune(d, {"resume", "more", "--trials", "5", "--quiet"});
  ASSERT_EQ(more.code, 0) << more.err;
  const YAML::Node s = state_of(d / "more");
  EXPECT_EQ(s["study"]["trials"].size(), 5u);
  EXPECT_EQ(s["campaign"]["budget"]["trials"].as<int>(), 5);
  EXPECT_EQ(s["stop_reason"].as<std::string>(), "the budget of 5 trials is spent");
  for (const YAML::Node& t : s["study"]["trials"]) EXPECT_EQ(t["status"].as<std::string>(), "complete");

  // A campaign file with a lower budget is refused, and says how a budget changes.
  write(d / "c4.yaml", quadratic_campaign_with("more", 4, "{workers: 1}"));
  const std::string five = slurp(d / "more" / "state.yaml");
  const Result lower = tune(d, {"run", "c4.yaml", "--quiet"});
  EXPECT_EQ(lower.code, 1) << lower.err;
  EXPECT_NE(lower.err.find("(in: budget)"), std::string::npos) << lower.err;
  // The file as it was, after --trials raised the campaign's budget: said as such.
  EXPECT_NE(lower.err.find("the campaign's budget was raised after it was made: write that budget in the file, or "
                           "give the directory"),
            std::string::npos)
      << lower.err;
  EXPECT_NE(lower.err.find("--trials N"), std::string::npos) << lower.err;
  EXPECT_NE(lower.err.find("(budget.trials 5 -> 4: a campaign file may raise budget.trials and budget.cost, not lower"),
            std::string::npos)
      << lower.err;
  EXPECT_EQ(slurp(d / "more" / "state.yaml"), five);

  // One with a higher budget raises the campaign's, as --trials does (it was refused as a different
  // campaign, though the file is the campaign's definition).
  write(d / "c9.yaml", quadratic_campaign_with("more", 9, "{workers: 1}"));
  const Result higher = tune(d, {"run", "c9.yaml"});
  ASSERT_EQ(higher.code, 0) << higher.err;
  EXPECT_NE(higher.err.find("more continues with the budget of c9.yaml: budget.trials 5 -> 9"), std::string::npos)
      << higher.err;
  const YAML::Node nine = state_of(d / "more");
  EXPECT_EQ(nine["study"]["trials"].size(), 9u);
  EXPECT_EQ(nine["campaign"]["budget"]["trials"].as<int>(), 9);
  EXPECT_EQ(nine["stop_reason"].as<std::string>(), "the budget of 9 trials is spent");
  // Each raise is in the event log (--trials 5, then the file's 9).
  const std::string events = slurp(d / "more" / "events.jsonl");
  EXPECT_NE(events.find("\"event\": \"budget_raised\", \"trials\": 5"), std::string::npos) << events;
  EXPECT_NE(events.find("\"event\": \"budget_raised\", \"trials\": 9"), std::string::npos) << events;
}

}  // namespace

namespace {

// Creates the campaign `ext` (one parameter x, minimising loss) in `d` with tune ask, which hands
// out trials 0 and 1.
void ask_two_trials_of_new_campaign(const fs::path& d) {
  write(d / "ext.yaml",
        "name: ext\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: {name: loss}\nbudget: {trials: 5}\n");
  ASSERT_EQ(tune(d, {"ask", "ext.yaml"}).code, 0);
  ASSERT_EQ(tune(d, {"ask", "ext"}).code, 0);
}

// Telling a trial twice, or a trial that does not exist, is a bad command line (exit 2, as telling a
// trial the tuner launched), and the refusal says what the trial recorded: it was exit 1 ("error:
// damaged state, I/O") with "trial 1 is not waiting for a result".
// A cost as typed: `--cost-budget 10m` got CLI11's "Could not convert: --cost-budget = 10m".
TEST(TuneCliUsage, ACostThatIsNotAPlainNumberSaysWhatItShouldBe) {
  const fs::path d = fresh_dir("cost-not-a-number");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"resume", "c", "--cost-budget", "10m"}, {"ask", "c", "--cost-budget", "ten"},
        {"tell", "c", "0", "1", "--cost", "3s"}, {"run", "--name", "c", "--cost-budget", "1h", "--", "true"}}) {
    const Result r = tune(d, args);
    EXPECT_EQ(r.code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("expected a plain number (seconds of trial run time when costs are measured"),
              std::string::npos)
        << args[0] << ": " << r.err;
  }
}

TEST(TuneCliUsage, TellingATrialTwiceIsABadCommandLineThatSaysWhatWasRecorded) {
  const fs::path d = fresh_dir("usage-tell-twice");
  ASSERT_NO_FATAL_FAILURE(ask_two_trials_of_new_campaign(d));
  ASSERT_EQ(tune(d, {"tell", "ext", "0", "0.25"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "ext", "1", "--failed", "diverged"}).code, 0);
  const std::string before = slurp(d / "ext" / "state.yaml");

  const Result again = tune(d, {"tell", "ext", "0", "0.5"});
  EXPECT_EQ(again.code, 2) << again.err;
  EXPECT_NE(again.err.find("trial 0 already has its result (complete, with loss = 0.25)"), std::string::npos)
      << again.err;
  const Result failed = tune(d, {"tell", "ext", "1", "0.5"});
  EXPECT_EQ(failed.code, 2) << failed.err;
  EXPECT_NE(failed.err.find("trial 1 already has its result (failed: diverged)"), std::string::npos) << failed.err;
  const Result unknown = tune(d, {"tell", "ext", "7", "0.5"});
  EXPECT_EQ(unknown.code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("has no trial 7 (it has 2)"), std::string::npos) << unknown.err;
  EXPECT_EQ(slurp(d / "ext" / "state.yaml"), before);
}

// `--` before a negative value is the usual way to say "not an option": everything after `--` was
// kept for tune run's inline command and silently dropped by every other command, so `tune tell DIR
// 0 -- -0.5` said "give either a value or --failed REASON". Now it reads the value, and a command
// that takes nothing there refuses what follows `--` instead of ignoring it.
TEST(TuneCliUsage, ArgumentsAfterADoubleDashAreReadByCommandsOtherThanRun) {
  const fs::path d = fresh_dir("usage-double-dash");
  ASSERT_NO_FATAL_FAILURE(ask_two_trials_of_new_campaign(d));
  const Result value = tune(d, {"tell", "ext", "0", "--", "-0.5"});
  ASSERT_EQ(value.code, 0) << value.err;
  EXPECT_EQ(state_of(d / "ext")["study"]["trials"][0]["value"].as<double>(), -0.5);
  const Result both = tune(d, {"tell", "ext", "--", "1", "-2.5e-3"});
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_EQ(state_of(d / "ext")["study"]["trials"][1]["value"].as<double>(), -2.5e-3);
  const Result extra = tune(d, {"status", "ext", "--", "more"});
  EXPECT_EQ(extra.code, 2) << extra.out;
  EXPECT_NE(extra.err.find("more"), std::string::npos) << extra.err;
}

// budget.trials bounds what tune ask hands out, as it bounds what a tuner launches: a driver loop
// `while tune ask ...` ends with exit 0 and nothing on stdout once the budget's trials are handed out.
TEST(TuneCliUsage, AskHandsOutNoMoreTrialsThanTheTrialBudget) {
  const fs::path d = fresh_dir("usage-ask-budget");
  write(d / "ext.yaml",
        "name: ext\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: {name: loss}\nbudget: {trials: 2}\n");
  const Result a0 = tune(d, {"ask", "ext.yaml", "--json"});
  ASSERT_EQ(a0.code, 0) << a0.err;
  ASSERT_NE(a0.out.find("\"trial\": 0"), std::string::npos) << a0.out;
  const Result a1 = tune(d, {"ask", "ext", "--json"});
  ASSERT_EQ(a1.code, 0) << a1.err;
  ASSERT_NE(a1.out.find("\"trial\": 1"), std::string::npos) << a1.out;
  // Both handed out, neither told: the budget is committed, nothing more will come.
  const Result a2 = tune(d, {"ask", "ext"});
  EXPECT_EQ(a2.code, 0) << a2.err;
  EXPECT_EQ(a2.out, "");
  EXPECT_NE(a2.err.find("the budget of 2 trials is spent"), std::string::npos) << a2.err;
  EXPECT_NE(a2.err.find("2 trials await their result"), std::string::npos) << a2.err;
  EXPECT_EQ(a2.err.rfind("tune ask: nothing more to hand out: ", 0), 0u) << a2.err;  // not finished: results await
  ASSERT_EQ(tune(d, {"tell", "ext", "0", "0.5"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "ext", "1", "--failed", "diverged"}).code, 0);
  const Result a3 = tune(d, {"ask", "ext"});
  EXPECT_EQ(a3.code, 0) << a3.err;
  EXPECT_EQ(a3.out, "");
  EXPECT_NE(a3.err.find("the campaign is finished"), std::string::npos) << a3.err;
  EXPECT_EQ(a3.err.find("await"), std::string::npos) << a3.err;
  const YAML::Node s = state_of(d / "ext");
  EXPECT_EQ(s["study"]["trials"].size(), 2u);
  EXPECT_TRUE(s["finished"].as<bool>());
  const Result st = tune(d, {"status", "ext"});
  ASSERT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("finished"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("the budget of 2 trials is spent"), std::string::npos) << st.out;
}

}  // namespace

namespace {

using namespace tune_test;

// `tune --version` names the build a bug report is about: the project's version in CMakeLists.txt
// (it was "A subcommand is required"), its commit and build type.
TEST(TuneCliUsage, VersionIsTheProjectsVersion) {
  const std::string cmake = slurp(kTrainers.parent_path().parent_path().parent_path() / "CMakeLists.txt");
  const std::string marker = "project(tune VERSION ";
  const std::size_t at = cmake.find(marker);
  ASSERT_NE(at, std::string::npos);
  const std::string version = cmake.substr(at + marker.size(), cmake.find(' ', at + marker.size()) - at - marker.size());
  const Result r = tune(fresh_dir("version"), {"--version"});
  EXPECT_EQ(r.code, 0) << r.err;
  // Then the build: "(commit 59597a7f2c1d, Release)", or "commit unknown" built outside git. Two
  // builds of different commits printed the same "tune 0.1.0".
  const std::string head = "tune " + version + " (commit ";
  ASSERT_EQ(r.out.rfind(head, 0), 0u) << r.out;
  const std::string build = r.out.substr(head.size());
  const std::size_t comma = build.find(", ");
  ASSERT_NE(comma, std::string::npos) << r.out;
  const std::string commit = build.substr(0, comma);
  EXPECT_TRUE(commit == "unknown" || (commit.size() >= 12 && std::isxdigit(static_cast<unsigned char>(commit[0])))) << r.out;
  EXPECT_EQ(build.substr(build.size() - 2), ")\n") << r.out;
}

}  // namespace

namespace {

using namespace tune_test;

// A campaign that ended on its spent wall-time budget: `tune resume --trials N` raised the trial
// budget (exit 0) and the session ended at once on the wall budget, with no trial run. It is refused,
// with nothing written, and says how the wall budget is raised.
TEST(TuneCliUsage, ResumeWithTrialsOfACampaignWhoseWallBudgetIsSpentSaysHowToRaiseIt) {
  const fs::path d = fresh_dir("usage-resume-wall");
  std::string text = quadratic_campaign_with("w", 20, "{workers: 1}");
  text.replace(text.find("budget: {trials: 20}"), 20, "budget: {trials: 20, wall: 1s}");
  write(d / "c.yaml", text);
  const std::map<std::string, std::string> slow{{"TOY_SLEEP", "0.4"}};
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}, slow).code, 0);
  ASSERT_NE(state_of(d / "w")["stop_reason"].as<std::string>().find("wall-time budget"), std::string::npos);
  const std::string before = slurp(d / "w" / "state.yaml");
  const Result r = tune(d, {"resume", "w", "--trials", "30", "--quiet"}, slow);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--trials: the wall-time budget of 1.0s is spent, so no trial would start; raise budget.wall in "
                       "the campaign file and 'tune run' it"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(slurp(d / "w" / "state.yaml"), before);
}

}  // namespace
