// End-to-end tests of the `tune` program: real subprocesses (the tuner, its supervisors, shell
// trainers), real files, kill -9 at random instants.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

std::string quadratic_campaign(const std::string& name, int trials, int workers, const std::string& extra = "") {
  return quadratic_campaign_with(name, trials, "{workers: " + std::to_string(workers) + "}", extra);
}

// DIR/events.jsonl, one object per line (JSON is YAML).
std::vector<YAML::Node> events_of(const fs::path& campaign) {
  std::vector<YAML::Node> events;
  std::istringstream in(slurp(campaign / "events.jsonl"));
  for (std::string line; std::getline(in, line);) events.push_back(YAML::Load(line));
  return events;
}

// Per trial id, how many outcome events (complete or fail) the campaign's event log holds.
std::map<std::uint64_t, int> outcome_events(const fs::path& campaign) {
  std::map<std::uint64_t, int> n;
  for (const YAML::Node& e : events_of(campaign)) {
    const std::string event = e["event"].as<std::string>();
    if (event == "complete" || event == "fail") ++n[e["trial"].as<std::uint64_t>()];
  }
  return n;
}

TEST(TuneCli, CampaignFindsTheOptimumRegionWithDistinctParallelTrials) {
  const fs::path d = fresh_dir("optimum");
  write(d / "c.yaml", quadratic_campaign("quad", 24, 3));
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node s = state_of(d / "quad");
  const YAML::Node trials = s["study"]["trials"];
  ASSERT_EQ(trials.size(), 24u);
  std::set<std::string> configs;
  double best = 1e9;
  for (const auto& t : trials) {
    EXPECT_EQ(t["status"].as<std::string>(), "complete");
    EXPECT_TRUE(configs.insert(t["config"]["x"].as<std::string>() + "," + t["config"]["y"].as<std::string>()).second);
    best = std::min(best, t["value"].as<double>());
  }
  EXPECT_LT(best, 0.05);  // the optimum is 0 at (0.3, -1); random search over 24 points rarely gets below ~0.05

  const Result b = tune(d, {"best", "quad", "--json"});
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_NE(b.out.find("\"loss\""), std::string::npos) << b.out;
  const Result st = tune(d, {"status", "quad"});
  ASSERT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("24 complete"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("model:"), std::string::npos) << st.out;
  // Every trial directory holds the child's output and the supervisor's record.
  EXPECT_TRUE(fs::exists(d / "quad" / "trials" / "0" / "stdout"));
  EXPECT_TRUE(fs::exists(d / "quad" / "trials" / "0" / "exit.yaml"));
  EXPECT_FALSE(slurp(d / "quad" / "events.jsonl").empty());
}

TEST(TuneCli, InlineFormBuildsTheSpaceFromTheCommand) {
  const fs::path d = fresh_dir("inline");
  const Result r = tune(d, {"run", "--name", "inl", "--trials", "6", "--workers", "2", "--objective", "loss", "--quiet",
                            "--", (kTrainers / "quadratic.sh").string(), "--x~uniform(-1,1)", "--y~uniform(-3,1)"});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node s = state_of(d / "inl");
  EXPECT_EQ(s["study"]["trials"].size(), 6u);
  EXPECT_EQ(s["campaign"]["command"][1].as<std::string>(), "--x");
  EXPECT_EQ(s["campaign"]["command"][2].as<std::string>(), "{x}");
  for (const auto& t : s["study"]["trials"]) EXPECT_EQ(t["status"].as<std::string>(), "complete");
}

// The inline form's campaign is YAML built from the command line: its errors cite the argument or
// option the user wrote, never a line of that YAML, and are usage errors.
TEST(TuneCli, InlineFormErrorsCiteTheArgumentAndExitTwo) {
  const fs::path d = fresh_dir("inline-errors");
  const std::string trainer = (kTrainers / "quadratic.sh").string();
  struct Case {
    std::vector<std::string> options;
    std::vector<std::string> command;
    std::string message;
  };
  const std::vector<Case> cases{
      {{}, {"--x~loguniform(0,1)"},
       "tune run: argument '--x~loguniform(0,1)': parameter 'x': log scale needs low > 0 (got [0, 1])"},
      {{}, {"--x~uniform(1,1)"}, "tune run: argument '--x~uniform(1,1)': parameter 'x': low must be less than high"},
      {{}, {"--x~unifrom(0,1)"}, "tune run: argument '--x~unifrom(0,1)': unknown prior 'unifrom'"},
      {{}, {}, "tune run: no parameter to tune: mark one with NAME~PRIOR"},
      {{"--strategy", "nope"}, {"--x~uniform(0,1)"}, "tune run: --strategy 'nope': unknown strategy 'nope'"},
      {{"--timeout", "0s"}, {"--x~uniform(0,1)"},
       "tune run: --timeout '0s': a timeout of zero would stop every trial as it starts; remove --timeout for no "
       "time limit"},
      {{"--trials", "0"}, {"--x~uniform(0,1)"}, "tune run: --trials 0: expected a whole number >= 1"},
      {{"--objective", ""}, {"--x~uniform(0,1)"}, "tune run: --objective '': expected the name the trial reports"},
      // The argument as typed and its place after --, not its index in the command after --x~... became
      // two elements (that was command[4]).
      {{}, {"--x~uniform(0,1)", "--bad", "{nope}"},
       "tune run: argument '{nope}' (the 4th after --): unknown placeholder '{nope}'; known placeholders: x, "
       "trial_id"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"run", "--name", "e", "--quiet"};
    args.insert(args.end(), c.options.begin(), c.options.end());
    args.insert(args.end(), {"--", trainer});
    args.insert(args.end(), c.command.begin(), c.command.end());
    const Result r = tune(d, args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err.rfind(c.message, 0), 0u) << r.err;
    EXPECT_EQ(r.err.find(", column "), std::string::npos) << r.err;  // no position in YAML the user never wrote
    EXPECT_FALSE(fs::exists(d / "e"));
  }
}

// The inline form's options would silently lose to the campaign file; they are refused, naming the
// key of the file that sets the same thing.
TEST(TuneCli, InlineOptionsWithACampaignFileAreRefusedNamingTheKey) {
  const fs::path d = fresh_dir("inline-with-file");
  write(d / "c.yaml", quadratic_campaign("q", 4, 1));
  const Result r = tune(d, {"run", "c.yaml", "--trials", "2", "--quiet", "--seed", "7", "--maximize"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--trials is an option of the inline form (a command after --); with a campaign file, set "
                       "'budget.trials' in c.yaml instead"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--seed is an option of the inline form"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'objective.direction: maximize'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "q"));
  // --dir is not one of them.
  EXPECT_EQ(tune(d, {"run", "c.yaml", "--dir", "elsewhere", "--quiet"}).code, 0);
  EXPECT_EQ(state_of(d / "elsewhere")["study"]["trials"].size(), 4u);
}

// Runs campaign "k" of d/c.yaml, kill -9-ing the tuner `kills` times at random instants (every
// other time leaving `pause_ms` for trials to end while it is dead) and resuming, then lets it
// finish; expects exit 0. Returns how many kills hit a live tuner.
int run_killing(const fs::path& d, const std::map<std::string, std::string>& env, int kills, int pause_ms,
                std::mt19937& rng) {
  int hits = 0;
  std::vector<std::string> args{"run", "c.yaml", "--quiet"};
  for (int attempt = 0;; ++attempt) {
    const pid_t pid = start(d, args, env);
    if (attempt < kills) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(5, 400)(rng)));
      if (::kill(pid, SIGKILL) == 0) ++hits;
      finish(d, pid);
      if (attempt % 2 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      // Killed before it created the campaign: starting it again is what a user would do.
      if (fs::exists(d / "k" / "state.yaml")) args = {"resume", "k", "--quiet"};
      continue;
    }
    const Result r = finish(d, pid);
    EXPECT_EQ(r.code, 0) << r.err;
    return hits;
  }
}

TEST(TuneCli, KillNineAtRandomInstantsLosesAndRepeatsNothing) {
  std::mt19937 rng(2026);
  int kills = 0;
  for (int campaign = 0; campaign < 4; ++campaign) {
    const fs::path d = fresh_dir("kill9-" + std::to_string(campaign));
    write(d / "c.yaml", quadratic_campaign("k", 10, 2));
    const std::map<std::string, std::string> env{{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"TOY_SLEEP", "0.15"}};
    kills += run_killing(d, env, 6, 300, rng);
    const YAML::Node s = state_of(d / "k");
    ASSERT_EQ(s["study"]["trials"].size(), 10u);
    for (const auto& t : s["study"]["trials"]) EXPECT_EQ(t["status"].as<std::string>(), "complete");
    // Each trial ran exactly once: none lost, none repeated, though the tuner died up to 6 times.
    const auto n = starts(d / "toy.log");
    EXPECT_EQ(n.size(), 10u);
    for (const auto& [id, count] : n) EXPECT_EQ(count, 1) << "campaign " << campaign << " trial " << id;
    // The recorded values are those the trainer printed.
    for (const auto& t : s["study"]["trials"]) {
      const fs::path out = d / "k" / "trials" / t["id"].as<std::string>() / "stdout";
      EXPECT_EQ(slurp(out), "loss=" + slurp(out).substr(5));
      EXPECT_DOUBLE_EQ(t["value"].as<double>(), std::stod(slurp(out).substr(5)));
    }
    // The event log has each trial's outcome once: none lost to a kill, none repeated by a resume.
    const std::map<std::uint64_t, int> outcomes = outcome_events(d / "k");
    EXPECT_EQ(outcomes.size(), 10u) << "campaign " << campaign;
    for (const auto& [id, count] : outcomes) EXPECT_EQ(count, 1) << "campaign " << campaign << " trial " << id;
  }
  EXPECT_GE(kills, 20);
}

// A tuner killed after a trial's outcome event and before the checkpoint that records it (what
// restoring that checkpoint stands for) collects the trial again on resume: the log keeps one
// outcome per trial.
TEST(TuneCli, ResumeDoesNotRepeatAnOutcomeTheEventLogHas) {
  const fs::path d = fresh_dir("events-once");
  write(d / "c.yaml", quadratic_campaign("e", 1, 1));
  const pid_t pid = start(d, {"run", "c.yaml", "--quiet"}, {{"TOY_SLEEP", "1"}});
  const fs::path state = d / "e" / "state.yaml";
  for (int i = 0; i < 100 && slurp(state).find("status: running") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string running = slurp(state);
  ASSERT_NE(running.find("status: running"), std::string::npos);
  ASSERT_EQ(finish(d, pid).code, 0);
  ASSERT_EQ(outcome_events(d / "e"), (std::map<std::uint64_t, int>{{0, 1}}));
  write(state, running);
  const Result resumed = tune(d, {"resume", "e", "--quiet"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(state_of(d / "e")["runs"][0]["status"].as<std::string>(), "complete");
  EXPECT_EQ(outcome_events(d / "e"), (std::map<std::uint64_t, int>{{0, 1}}));
}

// Events carry numbers as JSON numbers, and trials told from outside have their events too.
TEST(TuneCli, EventLogHasJsonNumbersAndTheTrialsOfAskAndTell) {
  const fs::path d = fresh_dir("events-json");
  write(d / "c.yaml", quadratic_campaign("j", 2, 1));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  ASSERT_EQ(tune(d, {"ask", "j", "--trials", "4"}).code, 0);  // the file's budget of 2 is spent
  ASSERT_EQ(tune(d, {"tell", "j", "2", "0.0625"}).code, 0);
  ASSERT_EQ(tune(d, {"ask", "j"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "j", "3", "--failed", "diverged"}).code, 0);
  const std::string log = slurp(d / "j" / "events.jsonl");
  EXPECT_NE(log.find("\"event\": \"launch\", \"trial\": 0, \"attempt\": 1}"), std::string::npos) << log;
  EXPECT_NE(log.find("\"event\": \"session_start\", \"trials\": 0}"), std::string::npos) << log;
  EXPECT_NE(log.find("\"event\": \"ask\", \"trial\": 2}"), std::string::npos) << log;
  EXPECT_NE(log.find("\"event\": \"complete\", \"trial\": 2, \"value\": 0.0625, \"external\": true}"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("\"event\": \"fail\", \"trial\": 3, \"reason\": \"diverged\", \"external\": true}"),
            std::string::npos)
      << log;
  // The tuner's own outcomes: the value as state.yaml has it, as a number.
  const YAML::Node s = state_of(d / "j");
  const std::string value = s["study"]["trials"][0]["value"].as<std::string>();
  EXPECT_NE(log.find("\"event\": \"complete\", \"trial\": 0, \"value\": " + value + "}"), std::string::npos) << log;
  EXPECT_EQ(outcome_events(d / "j"), (std::map<std::uint64_t, int>{{0, 1}, {1, 1}, {2, 1}, {3, 1}}));
}

// With one worker the order of asks and tells is fixed, so a campaign killed and resumed must make
// exactly the suggestions of an uninterrupted one: the saved study resumes to the same next ask.
TEST(TuneCli, ResumedCampaignSuggestsWhatAnUninterruptedOneWould) {
  const auto configs = [](const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& t : state_of(dir)["study"]["trials"])
      out.push_back(t["config"]["x"].as<std::string>() + "," + t["config"]["y"].as<std::string>());
    return out;
  };
  const fs::path a = fresh_dir("same-a");
  write(a / "c.yaml", quadratic_campaign("s", 14, 1));
  ASSERT_EQ(tune(a, {"run", "c.yaml", "--quiet"}).code, 0);

  const fs::path b = fresh_dir("same-b");
  write(b / "c.yaml", quadratic_campaign("s", 14, 1));
  const std::map<std::string, std::string> env{{"TOY_SLEEP", "0.05"}};
  std::mt19937 rng(7);
  std::vector<std::string> args{"run", "c.yaml", "--quiet"};
  for (int kill = 0; kill < 4; ++kill) {
    const pid_t pid = start(b, args, env);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(50, 300)(rng)));
    ::kill(pid, SIGKILL);
    finish(b, pid);
    if (fs::exists(b / "s" / "state.yaml")) args = {"resume", "s", "--quiet"};
  }
  ASSERT_EQ(tune(b, args, env).code, 0);
  EXPECT_EQ(configs(a / "s"), configs(b / "s"));
}

struct Misbehaviour {
  std::string mode;
  std::string status;  // complete or failed
  std::string reason;  // a fragment of the failure reason, or the value for complete ones
};

TEST(TuneCli, MisbehavingTrialsFailWithTheRightReason) {
  const std::vector<Misbehaviour> cases{
      {"crash", "failed", "exited with status 3; last stderr line: about to fail"},
      {"garbage", "failed", "the value '0.5abc' for objective is not a number (stdout line 1: 'objective=0.5abc')"},
      {"nan", "failed", "not a finite number"},
      {"nothing", "failed", "no value reported"},
      {"truncated_json", "failed",
       "no value reported: stdout line 2 looks like a JSON object but does not parse (end of map flow not found at "
       "column 1; a JSON report is one object on one line, closed by '}'): '{\"objective\": 0.9'; no other stdout "
       "line or result file reported a value for objective"},
      {"binary_prefix", "failed",
       "no value reported: stdout line 1 holds bytes that are not UTF-8 (the first is byte 1) and was not read"},
      {"segv", "failed", "killed by signal 11 (SIGSEGV)"},
      {"flood", "complete", "0.25"},
      {"result_file", "complete", "0.125"},
      {"json", "complete", "0.5"},
  };
  for (const Misbehaviour& c : cases) {
    const fs::path d = fresh_dir("misbehave-" + c.mode);
    write(d / "c.yaml", "name: m\ncommand: [" + (kTrainers / "misbehave.sh").string() +
                            ", \"{mode}\"]\nspace:\n  mode: {type: categorical, choices: [" + c.mode + ", " + c.mode +
                            "_]}\nstrategy: random\nbudget: {trials: 1}\n");
    const Result r = tune(d, {"run", "c.yaml", "--quiet"});
    ASSERT_EQ(r.code, 0) << c.mode << ": " << r.err;
    const YAML::Node s = state_of(d / "m");
    const YAML::Node run = s["runs"][0];
    EXPECT_EQ(run["status"].as<std::string>(), c.status) << c.mode;
    if (c.status == "failed") {
      EXPECT_NE(run["failure_reason"].as<std::string>().find(c.reason), std::string::npos)
          << c.mode << ": " << run["failure_reason"].as<std::string>();
    } else {
      EXPECT_EQ(s["study"]["trials"][0]["value"].as<std::string>(), c.reason) << c.mode;
    }
    if (c.mode == "flood") {
      EXPECT_GT(fs::file_size(d / "m" / "trials" / "0" / "stdout"), 10000000u);
    }
    if (c.mode == "json") {
      ASSERT_TRUE(run["intermediate"]);
      EXPECT_EQ(run["intermediate"][0][0].as<int>(), 1);
      EXPECT_EQ(run["intermediate"][0][1].as<double>(), 0.75);
    }
  }
}

// "No trial has completed yet" after a finished campaign suggests waiting; when every trial failed,
// best says so and where the reasons are.
TEST(TuneCli, BestOfACampaignWhoseTrialsAllFailedSaysSoAndWhereToLook) {
  const fs::path d = fresh_dir("all-failed");
  const std::string crashing = "command: [" + (kTrainers / "misbehave.sh").string() +
                               ", \"{mode}\"]\nspace:\n  mode: {type: categorical, choices: [crash, crash_]}\n"
                               "strategy: random\nbudget: {trials: 3}\n";
  write(d / "c.yaml", "name: af\n" + crashing);
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  // The same with a resolution, whose best reports full-resolution trials only.
  write(d / "r.yaml", "name: afr\n" + crashing + "resolution: {param: epochs, levels: [1, 3], cost: [1, 3]}\n");
  ASSERT_EQ(tune(d, {"run", "r.yaml", "--quiet"}).code, 0);
  for (const std::string campaign : {"af", "afr"}) {
    for (const std::vector<std::string>& args : {std::vector<std::string>{"best", campaign},
                                                std::vector<std::string>{"best", campaign, "--json"}}) {
      const Result r = tune(d, args);
      EXPECT_EQ(r.code, 1);
      EXPECT_EQ(r.out, "");
      EXPECT_NE(r.err.find("all 3 trials of " + campaign + " failed"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("'tune status " + campaign + "'"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(campaign + "/trials/<id>/stdout and stderr"), std::string::npos) << r.err;
    }
  }
  // The status it points to holds the reasons.
  EXPECT_NE(tune(d, {"status", "af"}).out.find("exited with status 3; last stderr line: about to fail"),
            std::string::npos);
}

TEST(TuneCli, TimeoutKillsTheTrialAndTheGrandchildrenItForked) {
  const fs::path d = fresh_dir("timeout");
  write(d / "c.yaml", "name: t\ncommand: [" + (kTrainers / "misbehave.sh").string() +
                          ", \"{mode}\"]\nspace:\n  mode: {type: categorical, choices: [fork_and_hang, fork_and_hang_]}\n"
                          "strategy: random\nbudget: {trials: 1}\nexecutor: {timeout: 1s, grace: 500ms}\n");
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(8));
  const YAML::Node run = state_of(d / "t")["runs"][0];
  EXPECT_EQ(run["status"].as<std::string>(), "failed");
  EXPECT_NE(run["failure_reason"].as<std::string>().find("timed out"), std::string::npos);
  const long grandchild = std::stol(slurp(d / "t" / "trials" / "0" / "grandchild.pid"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_NE(::kill(static_cast<pid_t>(grandchild), 0), 0) << "grandchild " << grandchild << " survived the timeout";
}

// The 1-based number of the first line of `text` that contains `fragment`.
int line_of(const std::string& text, const std::string& fragment) {
  const std::size_t at = text.find(fragment);
  EXPECT_NE(at, std::string::npos) << fragment;
  return static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 1;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(TuneCli, DamagedStateIsRefusedAtItsLineAndLeftUntouched) {
  const fs::path d = fresh_dir("damaged");
  write(d / "c.yaml", quadratic_campaign("dmg", 4, 2));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const fs::path state = d / "dmg" / "state.yaml";
  const std::string text = slurp(state);
  const YAML::Node trials = YAML::Load(text)["study"]["trials"];
  ASSERT_EQ(trials.size(), 4u);
  // Trial i's line in the study, and a fragment of it to edit.
  const auto trial_line = [&](int id) {
    return line_of(text, "    - {id: " + std::to_string(id) + ", status: complete, config:");
  };
  const std::string value1 = "value: " + trials[1]["value"].Scalar();
  const std::string y2 = ", y: " + trials[2]["config"]["y"].Scalar() + "}";
  const std::string unit3 = "unit: [" + trials[3]["unit"][0].Scalar() + ", " + trials[3]["unit"][1].Scalar() + "]";
  struct Case {
    std::string damaged, expected;
  };
  const std::vector<Case> cases{
      // Truncated, not YAML, foreign.
      {text.substr(0, text.size() / 2), "line"},
      {text + "\n  - {broken: [\n", "line"},
      {"kind: something.else\n", "not a tune campaign state"},
      // A non-finite result: ei would refuse it later, without a line, and random would report it as the best.
      {replaced(text, value1, "value: .nan"), "trial 1, field 'value' at line " + std::to_string(trial_line(1)) + ","},
      // A config that misses a parameter; a unit point that is another configuration.
      {replaced(text, y2, "}"), "trial 2, field 'config' at line " + std::to_string(trial_line(2)) + ","},
      {replaced(text, unit3, "unit: [0.9, 0.9]"),
       "trial 3, field 'unit' at line " + std::to_string(trial_line(3)) + ","},
      // The wall budget adds up the active time.
      {replaced(text, "active_seconds: " + YAML::Load(text)["active_seconds"].Scalar(), "active_seconds: .nan"),
       "field 'active_seconds' at line " + std::to_string(line_of(text, "active_seconds:")) + ","},
      // Keys the writer never writes, and a key given twice (a reader would see only the first).
      {"colour: red\n" + text, "field 'colour' at line 1, column 1: unknown key"},
      {replaced(text, "attempts: 1,", "attempts: 1, colour: red,"),
       "field 'runs[0].colour' at line " + std::to_string(line_of(text, "  - {id: 0, status: complete, attempts"))},
      {replaced(text, "finished: true\n", "finished: true\nfinished: false\n"),
       "field 'finished' at line " + std::to_string(line_of(text, "finished: true") + 1) +
           ", column 1: duplicate key (also at line " + std::to_string(line_of(text, "finished: true"))},
      // The campaign's space edited without the study's: the command would get other parameters.
      {replaced(text, "  space:\n    x: {type: float, low: -1, high: 1}",
                "  space:\n    x: {type: float, low: -1, high: 2}"),
       "field 'campaign.space' at line " + std::to_string(line_of(text, "\n  space:\n") + 2) +
           ", column 5 disagrees with field 'study.space'"},
  };
  for (const Case& c : cases) {
    write(state, c.damaged);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"resume", "dmg", "--quiet"}, std::vector<std::string>{"status", "dmg"},
          std::vector<std::string>{"best", "dmg"}, std::vector<std::string>{"ask", "dmg"},
          std::vector<std::string>{"tell", "dmg", "0", "1.5"}}) {
      const Result r = tune(d, args);
      EXPECT_EQ(r.code, 1) << args[0] << ": " << r.err;
      EXPECT_NE(r.err.find("state.yaml: "), std::string::npos) << args[0] << ": " << r.err;
      EXPECT_NE(r.err.find(c.expected), std::string::npos) << args[0] << ": " << r.err;
      EXPECT_EQ(slurp(state), c.damaged) << "the damaged file was modified by " << args[0];
    }
  }
  write(state, text);
  EXPECT_EQ(tune(d, {"status", "dmg"}).code, 0);  // the undamaged state loads
}

TEST(TuneCli, CampaignFileWithAKeyTwiceNamesBothLines) {
  const fs::path d = fresh_dir("duplicate-key");
  // yaml-cpp keeps both budgets and a lookup finds the first: the campaign would run 2 trials, not 50.
  const std::string text = quadratic_campaign("dup", 2, 1) + "budget: {trials: 50}\n";
  write(d / "c.yaml", text);
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  EXPECT_EQ(r.code, 1) << r.err;
  const std::string expected = "c.yaml: field 'budget' at line " + std::to_string(line_of(text, "budget: {trials: 50}")) +
                               ", column 1: duplicate key (also at line " +
                               std::to_string(line_of(text, "budget: {trials: 2}")) + ", column 1)";
  EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "dup")) << "a campaign directory was made from a refused file";
}

// A directory that is not a campaign is a mistyped argument, not a damaged state: nothing to restore
// from a backup.
TEST(TuneCli, CommandsOnADirectoryWithoutACampaignSayHowToStartOne) {
  const fs::path d = fresh_dir("no-campaign");
  fs::create_directories(d / "empty");
  const std::vector<std::vector<std::string>> commands{{"status"}, {"best"}, {"ask"}, {"tell", "0", "0.5"},
                                                       {"resume", "--quiet"}, {"stop"}};
  for (const std::string dir : {"missing", "empty"}) {
    for (std::vector<std::string> args : commands) {
      args.insert(args.begin() + 1, dir);
      const Result r = tune(d, args);
      EXPECT_EQ(r.code, 2) << args[0] << " " << dir << ": " << r.err;
      EXPECT_NE(r.err.find(dir == "missing" ? "missing does not exist" : "empty holds no campaign"), std::string::npos)
          << r.err;
      EXPECT_NE(r.err.find("tune run CAMPAIGN.yaml"), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("backup"), std::string::npos) << r.err;
    }
  }
  EXPECT_FALSE(fs::exists(d / "missing"));
  EXPECT_TRUE(fs::is_empty(d / "empty"));  // ask and tell took no lock there
}

TEST(TuneCli, InvalidCampaignFilesNameTheLineTheFieldAndTheFix) {
  const fs::path d = fresh_dir("invalid");
  const std::string base = quadratic_campaign("inv", 4, 1);
  struct Case {
    std::string text, fragment;
  };
  const std::vector<Case> cases{
      {base + "budgett: {trials: 3}\n", "budgett"},
      {base + "seed: many\n", "seed"},
      {"name: x\ncommand: [echo, \"{nope}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\n", "nope"},
      {"name: x\ncommand: \"python3 train.py\"\nspace:\n  x: {type: float, low: 0, high: 1}\n", "argument vector"},
      {"name: x\ncommand: []\nspace:\n  x: {type: float, low: 0, high: 1}\n", "leave it out for a campaign driven by tune ask"},
      {"name: x\ncommand: [echo]\nspace:\n  x: {type: float, low: 1, high: 0}\n", "'x'"},
      {"name: x\ncommand: [echo]\nspace:\n  x: {type: float, low: 0, high: 1}\nexecutor: {workers: 0}\n", "executor.workers"},
      {"name: x\ncommand: [echo]\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: {name: \"\"}\n", "objective.name"},
      {"name: x\ncommand: [echo]\nspace:\n  x: {type: float, low: 0, high: 1}\nstrategy: {name: ei, epsilonn: 1}\n", "epsilonn"},
      {"name: x\ncommand: [echo\nspace: {\n", "line"},
  };
  for (const Case& c : cases) {
    write(d / "bad.yaml", c.text);
    const Result r = tune(d, {"run", "bad.yaml", "--quiet"});
    EXPECT_EQ(r.code, 1) << c.text;
    EXPECT_NE(r.err.find("bad.yaml"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.fragment), std::string::npos) << r.err;
    if (c.fragment != "'x'") {
      EXPECT_NE(r.err.find("line"), std::string::npos) << r.err;
    }
  }
  EXPECT_EQ(tune(d, {"init", "campaign.yaml"}).code, 0);
  EXPECT_NE(tune(d, {"init", "campaign.yaml"}).code, 0);  // never overwrites
}

// A zero is a well-formed duration, so "expected a duration" misleads: the message says what a zero
// would do and what to write instead.
TEST(TuneCli, ZeroDurationsSayWhatIsWrongAndTheFix) {
  const fs::path d = fresh_dir("zero-duration");
  const std::string base = quadratic_campaign_with("z", 4, "{workers: 1}");
  struct Case {
    std::string replaced, by, fix;
  };
  const std::vector<Case> cases{
      {"budget: {trials: 4}", "budget: {trials: 4, wall: 0s}", "remove budget.wall for no time limit"},
      {"executor: {workers: 1}", "executor: {workers: 1, timeout: 0m}", "remove executor.timeout for no time limit"},
  };
  for (const Case& c : cases) {
    std::string text = base;
    ASSERT_NE(text.find(c.replaced), std::string::npos) << text;
    text.replace(text.find(c.replaced), c.replaced.size(), c.by);
    write(d / "zero.yaml", text);
    const Result r = tune(d, {"run", "zero.yaml", "--quiet"});
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("zero.yaml: field '"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(" of zero would "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.fix), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("expected a duration"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "z"));
  }
}

TEST(TuneCli, SecondTunerIsLockedOutAndSigintStopsResumably) {
  const fs::path d = fresh_dir("lock");
  write(d / "c.yaml", quadratic_campaign("lk", 6, 2));
  const std::map<std::string, std::string> env{{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"TOY_SLEEP", "0.5"}};
  const pid_t first = start(d, {"run", "c.yaml", "--quiet"}, env);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const fs::path other = d / "other";
  fs::create_directories(other);
  const Result locked = tune(d, {"resume", "lk", "--quiet"});
  EXPECT_EQ(locked.code, 5) << locked.err;
  ::kill(first, SIGINT);
  const Result stopped = finish(d, first);
  EXPECT_EQ(stopped.code, 3) << stopped.err;
  const Result resumed = tune(d, {"resume", "lk", "--quiet"}, env);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const YAML::Node s = state_of(d / "lk");
  for (const auto& t : s["study"]["trials"]) EXPECT_EQ(t["status"].as<std::string>(), "complete");
  EXPECT_EQ(s["study"]["trials"].size(), 6u);
}

TEST(TuneCli, SecondSignalTerminatesTrialsThatIgnoreSigtermAtOnce) {
  const fs::path d = fresh_dir("second-signal");
  write(d / "c.yaml", "name: g\ncommand: [" + (kTrainers / "misbehave.sh").string() +
                          ", \"{mode}\"]\nspace:\n  mode: {type: categorical, choices: [ignore_term, ignore_term_]}\n"
                          "strategy: random\nbudget: {trials: 2}\nexecutor: {workers: 2, grace: 30s}\n");
  const pid_t pid = start(d, {"run", "c.yaml", "--quiet"});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);  // SIGTERM to the trials, which ignore it; SIGKILL would come after 30 s
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, SIGINT);  // at once
  const Result r = finish(d, pid);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  for (const auto& run : state_of(d / "g")["runs"]) EXPECT_EQ(run["status"].as<std::string>(), "queued");
}

std::string first_line(const fs::path& p) {
  std::istringstream in(slurp(p));
  std::string line;
  std::getline(in, line);
  return line;
}

TEST(TuneCli, ReQueuedTrialKeepsItsDirectoryAndItsEarlierAttemptsLogs) {
  const fs::path d = fresh_dir("rerun-checkpoint");
  write(d / "c.yaml", "name: ck\ncommand: [" + (kTrainers / "checkpoint.sh").string() +
                          ", \"4\", \"{x}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\n"
                          "objective: {name: loss, direction: minimize}\nstrategy: random\n"
                          "budget: {trials: 1}\nexecutor: {workers: 1}\n");
  const pid_t pid = start(d, {"run", "c.yaml", "--quiet"}, {{"CK_HOLD_ONCE", (d / "held").string()}});
  const fs::path trial = d / "ck" / "trials" / "0";
  // The first attempt waits after its second epoch until it is stopped.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (slurp(trial / "checkpoint") != "2\n" && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(slurp(trial / "checkpoint"), "2\n");
  ::kill(pid, SIGINT);
  const Result stopped = finish(d, pid);
  ASSERT_EQ(stopped.code, 3) << stopped.err;

  const Result resumed = tune(d, {"resume", "ck", "--quiet"}, {{"CK_HOLD_ONCE", (d / "held").string()}});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(first_line(trial / "stdout"), "resuming from epoch 2");
  EXPECT_EQ(slurp(trial / "checkpoint"), "4\n");
  // The first attempt's logs and records are kept apart, where the second cannot mistake them for its own.
  EXPECT_EQ(first_line(trial / "attempts" / "1" / "stdout"), "resuming from epoch 0");
  EXPECT_TRUE(fs::exists(trial / "attempts" / "1" / "exit.yaml"));
  EXPECT_TRUE(fs::exists(trial / "attempts" / "1" / "command.yaml"));
  EXPECT_EQ(slurp(trial / "attempts" / "1" / "result.yaml"), "loss: 999\n");
  EXPECT_FALSE(fs::exists(trial / "result.yaml"));  // the second attempt reported on stdout only
  EXPECT_FALSE(fs::exists(trial / "attempts" / "2"));
  const YAML::Node s = state_of(d / "ck");
  ASSERT_EQ(s["study"]["trials"].size(), 1u);
  EXPECT_EQ(s["study"]["trials"][0]["status"].as<std::string>(), "complete");
  EXPECT_EQ(s["study"]["trials"][0]["value"].as<double>(), 2.0);  // the second attempt's
  EXPECT_EQ(s["runs"][0]["attempts"].as<int>(), 2);
}

TEST(TuneCli, ResumeAfterAFailuresStopAllowsBudgetFailuresMore) {
  const fs::path d = fresh_dir("failures-resume");
  const fs::path flag = d / "dataset";
  write(d / "c.yaml", "name: fl\ncommand: [" + (kTrainers / "needs_file.sh").string() + ", " + flag.string() +
                          ", \"{x}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\n"
                          "objective: {name: loss, direction: minimize}\nstrategy: random\n"
                          "budget: {trials: 6, failures: 2}\nexecutor: {workers: 1}\n");
  const auto failed = [&] {
    std::size_t n = 0;
    for (const auto& r : state_of(d / "fl")["runs"]) n += r["status"].as<std::string>() == "failed";
    return n;
  };
  const Result first = tune(d, {"run", "c.yaml"});  // not --quiet: it would not say why it stopped
  ASSERT_EQ(first.code, 4) << first.err;
  EXPECT_EQ(failed(), 2u);
  EXPECT_NE((first.out + first.err).find("fix the cause, then 'tune resume fl' allows budget.failures more"), std::string::npos)
      << first.err;
  // Still failing: a second stop for failures, after budget.failures more.
  const Result second = tune(d, {"resume", "fl"});
  ASSERT_EQ(second.code, 4) << second.err;
  EXPECT_EQ(failed(), 4u);
  EXPECT_NE((second.out + second.err).find("2 trials failed since the campaign last stopped for failures"), std::string::npos)
      << second.err;
  // The cause fixed, the campaign runs to its end.
  write(flag, "data\n");
  const Result fixed = tune(d, {"resume", "fl", "--quiet"});
  ASSERT_EQ(fixed.code, 0) << fixed.err;
  const YAML::Node s = state_of(d / "fl");
  EXPECT_EQ(s["study"]["trials"].size(), 6u);
  EXPECT_EQ(failed(), 4u);
  EXPECT_EQ(s["failed_at_failures_stop"].as<int>(), 4);
}

TEST(TuneCli, CommandWhoseProgramCannotStartIsRefusedBeforeAnyTrial) {
  const fs::path d = fresh_dir("unstartable");
  write(d / "train.sh", "#!/bin/sh\necho loss=1\n");  // no execute bit
  const auto campaign = [](const std::string& program) {
    return "name: un\ncommand: [" + program + ", \"{x}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\n"
           "objective: {name: loss, direction: minimize}\nbudget: {trials: 2}\n";
  };
  const std::vector<std::pair<std::string, std::string>> cases{
      {(d / "no-such-train.sh").string(), "does not exist"},
      {(d / "train.sh").string(), "is not executable"},
      {"no-such-trainer-on-path", "is not found on PATH"},
      // A relative path: neither beside the campaign file nor in the trial's directory (the
      // message named only the latter, a path the user never wrote).
      {"./gone.sh", "does not exist, neither beside the campaign's definition"},
  };
  for (const auto& [program, why] : cases) {
    write(d / "c.yaml", campaign(program));
    const Result r = tune(d, {"run", "c.yaml", "--quiet"});
    EXPECT_EQ(r.code, 1) << program << ": " << r.err;
    EXPECT_NE(r.err.find("field 'command'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(program), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "un")) << "refused before the campaign directory was made";
  }
  // A program that stops being runnable is refused by resume too.
  fs::permissions(d / "train.sh", fs::perms::owner_exec, fs::perm_options::add);
  write(d / "c.yaml", campaign((d / "train.sh").string()));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  fs::permissions(d / "train.sh", fs::perms::owner_exec, fs::perm_options::remove);
  const Result resumed = tune(d, {"resume", "un", "--quiet"});
  EXPECT_EQ(resumed.code, 1) << resumed.err;
  EXPECT_NE(resumed.err.find("is not executable"), std::string::npos) << resumed.err;
}

TEST(TuneCli, DetachOnACampaignAnotherTunerDrivesExitsFive) {
  const fs::path d = fresh_dir("detach-locked");
  write(d / "c.yaml", quadratic_campaign("dl", 4, 1));
  const pid_t first = start(d, {"run", "c.yaml", "--quiet"}, {{"TOY_SLEEP", "30"}});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!fs::exists(d / "dl" / "tuner.pid") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(d / "dl" / "tuner.pid"));
  for (const std::vector<std::string>& args : {std::vector<std::string>{"resume", "dl", "--detach"},
                                               std::vector<std::string>{"run", "c.yaml", "--detach"}}) {
    const Result r = tune(d, args);
    EXPECT_EQ(r.code, 5) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("is driven by the tuner (process "), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("background"), std::string::npos) << r.out;
    // Like every other error of a command, it names the command (it said "tune: ").
    EXPECT_EQ(r.err.rfind("tune " + args[0] + ": ", 0), 0u) << r.err;
  }
  // Without --detach the refusal comes from the session itself.
  const Result r = tune(d, {"resume", "dl"});
  EXPECT_EQ(r.code, 5) << r.err;
  EXPECT_EQ(r.err.rfind("tune resume: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("is driven by the tuner (process "), std::string::npos) << r.err;
  ::kill(first, SIGINT);
  EXPECT_EQ(finish(d, first).code, 3);
}

TEST(TuneCli, AskAndTellDriveACampaignFromOutside) {
  const fs::path d = fresh_dir("asktell");
  write(d / "c.yaml", quadratic_campaign("at", 3, 1));
  // A campaign whose trials tune run ran (AskFromACampaignFile... creates one without running any).
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  // The budget is spent: ask hands out nothing (exit 0, finished) until --trials raises it.
  const Result spent = tune(d, {"ask", "at"});
  EXPECT_EQ(spent.code, 0) << spent.err;
  EXPECT_EQ(spent.out, "");
  EXPECT_NE(spent.err.find("the budget of 3 trials is spent"), std::string::npos) << spent.err;
  const Result low = tune(d, {"ask", "at", "--trials", "3"});
  EXPECT_EQ(low.code, 2);
  EXPECT_EQ(low.err, "tune ask: --trials 3: at has 3 trials already; give the new total, more than 3\n");
  const Result a = tune(d, {"ask", "at", "--trials", "4"});
  ASSERT_EQ(a.code, 0) << a.err;
  const YAML::Node asked = YAML::Load(a.out);
  ASSERT_TRUE(asked["trial"]) << a.out;
  const std::string id = asked["trial"].as<std::string>();
  EXPECT_EQ(tune(d, {"tell", "at", id, "0.0625"}).code, 0);
  EXPECT_NE(tune(d, {"tell", "at", id, "0.5"}).code, 0);  // told already
  const YAML::Node s = state_of(d / "at");
  EXPECT_EQ(s["study"]["trials"][std::stoi(id)]["value"].as<double>(), 0.0625);
  // Ids that are not whole numbers from 0: -1 was read as 2^64 - 1 and 2^64 clamped to it ("the
  // campaign has no trial 18446744073709551615").
  const std::string before = slurp(d / "at" / "state.yaml");
  for (const std::string bad : {"-1", "18446744073709551616", "3x"}) {
    const Result r = tune(d, {"tell", "at", bad, "0.5"});
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_EQ(r.err, "tune tell: '" + bad + "' is not a trial id (a whole number from 0, as tune ask printed it)\n");
  }
  EXPECT_EQ(slurp(d / "at" / "state.yaml"), before);
}

// Parallel workers of an outside scheduler ask and tell at once: each waits its turn for the
// campaign's lock (they were refused with exit 5, and a worker that did not retry lost its result).
TEST(TuneCli, ConcurrentAsksAndTellsWaitTheirTurn) {
  const fs::path d = fresh_dir("ask-tell-concurrent");
  write(d / "par.yaml", "name: par\nspace:\n  x: {type: float, low: 0, high: 1}\nstrategy: random\n");
  ASSERT_EQ(tune(d, {"ask", "par.yaml", "--dir", "par"}).code, 0);  // trial 0, left untold
  const fs::path campaign = d / "par";
  constexpr int kWorkers = 8;
  // Each worker in its own directory: start() writes a command's output to cli.out / cli.err there.
  std::vector<fs::path> workers;
  for (int i = 0; i < kWorkers; ++i) workers.push_back(fresh_dir("ask-tell-concurrent-" + std::to_string(i)));
  std::vector<pid_t> asks;
  for (const fs::path& w : workers) asks.push_back(start(w, {"ask", campaign.string()}));
  std::set<std::string> ids;
  for (int i = 0; i < kWorkers; ++i) {
    const Result a = finish(workers[i], asks[i]);
    EXPECT_EQ(a.code, 0) << a.err;
    if (a.code == 0) {
      ids.insert(YAML::Load(a.out)["trial"].as<std::string>());
    }
  }
  ASSERT_EQ(ids.size(), static_cast<std::size_t>(kWorkers));  // no trial handed out twice
  std::vector<pid_t> tells;
  std::map<std::string, std::string> told;  // trial -> value
  int i = 0;
  for (const std::string& id : ids) {
    told[id] = "0.5" + std::to_string(i);
    tells.push_back(start(workers[i++], {"tell", campaign.string(), id, told[id]}));
  }
  for (int k = 0; k < kWorkers; ++k) {
    const Result t = finish(workers[k], tells[k]);
    EXPECT_EQ(t.code, 0) << t.err;
  }
  const YAML::Node s = state_of(campaign);
  for (const auto& [id, value] : told) {
    const YAML::Node trial = s["study"]["trials"][std::stoi(id)];
    ASSERT_TRUE(trial["value"]) << "trial " << id;
    EXPECT_EQ(trial["value"].as<double>(), std::stod(value)) << "trial " << id;
  }
}

// A tuner holds its campaign for the whole session: ask and tell refuse at once (exit 5, naming
// it) rather than wait for a lock that would not come free.
TEST(TuneCli, AskAndTellRefuseAtOnceWhileATunerRuns) {
  const fs::path d = fresh_dir("ask-tell-tuner");
  write(d / "c.yaml", quadratic_campaign("tr", 4, 1));
  const std::map<std::string, std::string> env{{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"TOY_SLEEP", "30"}};
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"}, env);
  // Wait for the event: the tuner has launched its first trial (it holds the lock by then).
  while (starts(d / "toy.log").empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const fs::path other = fresh_dir("ask-tell-tuner-other");  // cli.out of the tuner stays in d
  const Result a = tune(other, {"ask", (d / "tr").string()});
  EXPECT_EQ(a.code, 5) << a.err;
  EXPECT_NE(a.err.find("is driven by the tuner (process " + std::to_string(tuner) + ")"), std::string::npos) << a.err;
  const Result t = tune(other, {"tell", (d / "tr").string(), "0", "0.5"});
  EXPECT_EQ(t.code, 5) << t.err;
  EXPECT_NE(t.err.find("is driven by the tuner"), std::string::npos) << t.err;
  EXPECT_EQ(t.err.find("waiting"), std::string::npos) << t.err;  // it did not wait out its patience
  const Result st = tune(other, {"status", (d / "tr").string()});
  EXPECT_NE(st.out.find("tuner running"), std::string::npos) << st.out;
  ::kill(tuner, SIGTERM);
  EXPECT_EQ(finish(d, tuner).code, 3);
}

// A trial `tune run` launched runs under its supervisor, which records its exit and output for the
// tuner: after kill -9 of the tuner, `tune tell` refuses it (a told value was replaced by nothing on
// resume, and its run record lost its exit), and `tune resume` collects what the trial printed.
// Trials handed out by `tune ask` are still told, failures included.
TEST(TuneCli, TellRefusesATrialTheTunerLaunchedAndResumeCollectsIt) {
  const fs::path d = fresh_dir("tell-tuner-trial");
  write(d / "c.yaml", quadratic_campaign("k", 2, 1));
  const fs::path log = d / "toy.log";
  const pid_t pid = start(d, {"run", "c.yaml", "--quiet"}, {{"TUNE_TOY_LOG", log.string()}, {"TOY_SLEEP", "1"}});
  for (int i = 0; i < 500 && starts(log).count("0") == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(starts(log).count("0"), 1u) << "trial 0 never started";
  ::kill(pid, SIGKILL);  // while trial 0 sleeps under its supervisor
  finish(d, pid);

  const fs::path state = d / "k" / "state.yaml";
  const std::string before = slurp(state);
  ASSERT_NE(before.find("status: running"), std::string::npos) << before;
  for (const std::vector<std::string>& told : {std::vector<std::string>{"0", "0.5"}, {"0", "--failed", "diverged"}}) {
    std::vector<std::string> args{"tell", "k"};
    args.insert(args.end(), told.begin(), told.end());
    const Result r = tune(d, args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("tune tell: trial 0 was launched by the tuner ('tune run') and runs, or ran, under its "
                         "supervisor, which records its exit and output; 'tune resume k' collects its result"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(slurp(state), before);
  }

  // A trial handed out by tune ask is the caller's to tell, as a failure too.
  const Result asked = tune(d, {"ask", "k"});
  ASSERT_EQ(asked.code, 0) << asked.err;
  ASSERT_EQ(YAML::Load(asked.out)["trial"].as<int>(), 1) << asked.out;
  const Result told = tune(d, {"tell", "k", "1", "--failed", "diverged"});
  ASSERT_EQ(told.code, 0) << told.err;

  const Result resumed = tune(d, {"resume", "k", "--quiet"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  const YAML::Node s = state_of(d / "k");
  const std::string out = slurp(d / "k" / "trials" / "0" / "stdout");
  ASSERT_EQ(out.rfind("loss=", 0), 0u) << out;
  EXPECT_EQ(s["runs"][0]["status"].as<std::string>(), "complete");
  EXPECT_DOUBLE_EQ(s["study"]["trials"][0]["value"].as<double>(), std::stod(out.substr(5)));
  ASSERT_TRUE(s["runs"][0]["exit"]) << s["runs"][0];
  EXPECT_EQ(s["runs"][0]["exit"]["code"].as<int>(), 0) << s["runs"][0];
  EXPECT_EQ(s["runs"][1]["status"].as<std::string>(), "failed");
  EXPECT_EQ(starts(log).at("0"), 1);  // collected, not run again
  // The resumed tuner followed trial 0 and says why (the README lists a reason for reattach).
  bool reattached = false;
  for (const YAML::Node& e : events_of(d / "k"))
    if (e["event"].as<std::string>() == "reattach") {
      reattached = true;
      EXPECT_EQ(e["trial"].as<int>(), 0);
      ASSERT_TRUE(e["reason"]) << "reattach without a reason";
      EXPECT_EQ(e["reason"].as<std::string>(), "the tuner restarted while the trial ran");
    }
  EXPECT_TRUE(reattached);
}

// `tune ask campaign.yaml` creates the campaign as tune run would, runs nothing, and hands out trial 0;
// asked again it continues. A file without `command` is a campaign for ask/tell only, which run and
// resume refuse.
TEST(TuneCli, AskFromACampaignFileCreatesTheCampaignWithoutRunningATrial) {
  const fs::path d = fresh_dir("ask-file");
  const std::string space = "space:\n  x: {type: float, low: -1, high: 1}\n  y: {type: float, low: -3, high: 1}\n";
  write(d / "c.yaml", "name: ext\n" + space + "objective: {name: loss}\nbudget: {trials: 5}\n");

  const Result first = tune(d, {"ask", "c.yaml"});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(YAML::Load(first.out)["trial"].as<int>(), 0) << first.out;
  ASSERT_TRUE(fs::exists(d / "ext" / "state.yaml"));
  YAML::Node s = state_of(d / "ext");
  EXPECT_FALSE(s["campaign"]["command"]) << "a campaign without a command keeps none";
  ASSERT_EQ(s["runs"].size(), 1u);
  EXPECT_EQ(s["runs"][0]["status"].as<std::string>(), "running");
  EXPECT_TRUE(fs::is_empty(d / "ext" / "trials"));  // nothing was launched
  const std::string created_at = s["created_at"].as<std::string>();

  // Asked again through the file: the same campaign continues (trial 1), it is not created again.
  const Result second = tune(d, {"ask", "c.yaml", "--json"});
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(YAML::Load(second.out)["trial"].as<int>(), 1) << second.out;
  s = state_of(d / "ext");
  EXPECT_EQ(s["study"]["trials"].size(), 2u);
  EXPECT_EQ(s["created_at"].as<std::string>(), created_at);
  EXPECT_EQ(tune(d, {"tell", "ext", "0", "0.25"}).code, 0);
  EXPECT_EQ(tune(d, {"tell", "ext", "1", "--failed", "diverged"}).code, 0);
  s = state_of(d / "ext");
  EXPECT_EQ(s["study"]["trials"][0]["value"].as<double>(), 0.25);
  EXPECT_EQ(s["runs"][1]["status"].as<std::string>(), "failed");
  const Result third = tune(d, {"ask", "ext"});  // the directory form, as before
  ASSERT_EQ(third.code, 0) << third.err;
  EXPECT_EQ(YAML::Load(third.out)["trial"].as<int>(), 2) << third.out;

  // Nothing to launch: run and resume refuse, with a usage error, and leave the campaign as it is.
  const std::string no_command =
      "this campaign has no command: it is driven by tune ask / tune tell; add `command:` to run trials";
  const Result run = tune(d, {"run", "c.yaml", "--quiet"});
  EXPECT_EQ(run.code, 2) << run.err;
  EXPECT_EQ(run.err, "tune run: c.yaml: " + no_command + "\n");
  const Result resume = tune(d, {"resume", "ext", "--quiet"});
  EXPECT_EQ(resume.code, 2) << resume.err;
  EXPECT_EQ(resume.err, "tune resume: ext: " + no_command + "\n");
  EXPECT_EQ(tune(d, {"run", "c.yaml", "--dir", "fresh", "--quiet"}).code, 2);
  EXPECT_FALSE(fs::exists(d / "fresh"));
  EXPECT_EQ(state_of(d / "ext")["study"]["trials"].size(), 3u);

  // A file whose campaign differs from the directory's is refused, naming both.
  write(d / "other.yaml", "name: other\n" + space + "objective: {name: loss, direction: maximize}\n");
  const Result other = tune(d, {"ask", "other.yaml", "--dir", "ext"});
  EXPECT_EQ(other.code, 1) << other.err;
  EXPECT_NE(other.err.find("tune ask: ext already holds the campaign 'ext', which differs from the campaign 'other' "
                           "of other.yaml (in: name, objective, budget)"),
            std::string::npos)
      << other.err;
  EXPECT_EQ(state_of(d / "ext")["study"]["trials"].size(), 3u);
  // tune run says the same of a campaign file that differs from its directory's.
  write(d / "q.yaml", quadratic_campaign("ext", 2, 1));
  const Result run_other = tune(d, {"run", "q.yaml", "--quiet"});
  EXPECT_EQ(run_other.code, 1) << run_other.err;
  EXPECT_NE(run_other.err.find("which differs from the campaign 'ext' of q.yaml (in: command, budget); resume it "
                               "with 'tune resume ext'"),
            std::string::npos)
      << run_other.err;

  // --dir chooses the directory, as for run; with a directory argument it has no meaning.
  const Result elsewhere = tune(d, {"ask", "c.yaml", "--dir", "elsewhere"});
  ASSERT_EQ(elsewhere.code, 0) << elsewhere.err;
  EXPECT_EQ(YAML::Load(elsewhere.out)["trial"].as<int>(), 0);
  EXPECT_EQ(state_of(d / "elsewhere")["campaign"]["name"].as<std::string>(), "ext");
  EXPECT_EQ(tune(d, {"ask", "ext", "--dir", "elsewhere"}).code, 2);

  // The file is checked as tune run checks it, and nothing is created for a bad one.
  write(d / "bad.yaml", "name: bad\n" + space + "budget: {trials: 0}\n");
  const Result bad = tune(d, {"ask", "bad.yaml"});
  EXPECT_EQ(bad.code, 1) << bad.err;
  EXPECT_NE(bad.err.find("bad.yaml: field 'budget.trials' at line"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(d / "bad"));
}

// A campaign file with a command: ask creates the state tune run would (the same campaign, paths made
// absolute), and launches nothing.
TEST(TuneCli, AskFromACampaignFileWritesTheCampaignRunWould) {
  const fs::path d = fresh_dir("ask-file-command");
  write(d / "c.yaml", quadratic_campaign("q", 2, 1));
  const Result asked = tune(d, {"ask", "c.yaml", "--dir", "asked"});
  ASSERT_EQ(asked.code, 0) << asked.err;
  EXPECT_EQ(YAML::Load(asked.out)["trial"].as<int>(), 0);
  EXPECT_TRUE(fs::is_empty(d / "asked" / "trials"));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--dir", "ran", "--quiet"}).code, 0);
  YAML::Emitter a, r;
  a << state_of(d / "asked")["campaign"];
  r << state_of(d / "ran")["campaign"];
  EXPECT_EQ(std::string(a.c_str()), std::string(r.c_str()));
}

TEST(TuneCli, DetachedTunerStopsOnRequestAndResumes) {
  const fs::path d = fresh_dir("detach");
  write(d / "c.yaml", quadratic_campaign("dt", 8, 2));
  const std::map<std::string, std::string> env{{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"TOY_SLEEP", "0.3"}};
  const Result r = tune(d, {"run", "c.yaml", "--detach"}, env);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("background"), std::string::npos) << r.out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!fs::exists(d / "dt" / "tuner.pid") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const Result st = tune(d, {"status", "dt"});
  EXPECT_NE(st.out.find("tuner running"), std::string::npos) << st.out;
  const Result stop = tune(d, {"stop", "dt"});
  ASSERT_EQ(stop.code, 0) << stop.err;
  while (fs::exists(d / "dt" / "tuner.pid") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_FALSE(fs::exists(d / "dt" / "tuner.pid")) << "the detached tuner did not stop";
  EXPECT_NE(state_of(d / "dt")["stop_reason"].as<std::string>().find("stopped"), std::string::npos);
  EXPECT_NE(slurp(d / "dt" / "tuner.log").find("stopping"), std::string::npos);
  EXPECT_NE(tune(d, {"stop", "dt"}).code, 0);  // nothing to stop any more
  ASSERT_EQ(tune(d, {"resume", "dt", "--quiet"}, env).code, 0);
  const YAML::Node s = state_of(d / "dt");
  EXPECT_EQ(s["study"]["trials"].size(), 8u);
  for (const auto& t : s["study"]["trials"]) EXPECT_EQ(t["status"].as<std::string>(), "complete");
  // Trials terminated by the stop ran again; every trial ran to its end exactly once.
  const auto ends = starts(d / "toy.log", "end");
  EXPECT_EQ(ends.size(), 8u);
  for (const auto& [id, count] : ends) EXPECT_EQ(count, 1) << id;
}

// Multi-resolution campaigns: tests/e2e/trainers/multires.sh reports the quadratic plus a
// resolution-dependent offset and noise, and fails if its {epochs} argument is not $TUNE_RESOLUTION.
std::string multires_campaign(const std::string& name, const std::string& cost, double budget, int workers,
                              const std::string& budget_extra = "") {
  return "name: " + name + "\ncommand: [" + (kTrainers / "multires.sh").string() +
         ", \"{x}\", \"{y}\", --epochs, \"{epochs}\"]\n"
         "space:\n  x: {type: float, low: -1, high: 1}\n  y: {type: float, low: -3, high: 1}\n"
         "resolution: {param: epochs, levels: [1, 3, 9], cost: " + cost + "}\n"
         "objective: {name: loss, direction: minimize}\nstrategy: {name: cmets}\n"
         "budget: {cost: " + std::to_string(budget) + budget_extra + "}\nexecutor: {workers: " + std::to_string(workers) + "}\n";
}

const std::vector<double> kLevels{1, 3, 9};

// The per-level rows of `tune status`, cell by cell: level, value, cost (with " (est.)" if it is an
// estimate), complete, failed, running, queued, spent, committed.
std::map<int, std::vector<std::string>> status_level_cells(const std::string& out) {
  std::map<int, std::vector<std::string>> rows;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line) && line.find("  level ") != 0) {
  }
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> t;
    for (std::string w; fields >> w;)
      if (w == "(est.)" && !t.empty()) t.back() += " " + w;
      else t.push_back(w);
    if (t.size() != 9) break;
    rows[std::stoi(t[0])] = t;
  }
  return rows;
}

// The per-level rows of `tune status`: level -> {complete, failed, running, queued}.
std::map<int, std::vector<int>> status_levels(const std::string& out) {
  std::map<int, std::vector<int>> rows;
  for (const auto& [level, t] : status_level_cells(out))
    rows[level] = {std::stoi(t[3]), std::stoi(t[4]), std::stoi(t[5]), std::stoi(t[6])};
  return rows;
}

// The ids of the trial rows `tune status` lists (lines after the table's header that start with an id).
std::vector<int> status_trial_ids(const std::string& out) {
  std::vector<int> ids;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line) && line.rfind("   id  status", 0) != 0) {
  }
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string first;
    const auto digit = [](unsigned char c) { return std::isdigit(c) != 0; };
    if (fields >> first && !first.empty() && std::all_of(first.begin(), first.end(), digit)) ids.push_back(std::stoi(first));
  }
  return ids;
}

TEST(TuneCli, DeclaredCostCampaignSpendsWithinItsBudgetAcrossLevels) {
  const fs::path d = fresh_dir("multires-declared");
  const double budget = 60;
  // One worker: the order of tells, hence the campaign, is deterministic. A trial limit far above
  // the ~22 runs the budget pays for, so that a spend counted in the wrong units ends the test
  // instead of running for ever.
  write(d / "c.yaml", multires_campaign("md", "[1, 3, 9]", budget, 1, ", trials: 100"));
  // Every cheap run looks better than any full run (a shift of -1 below the top level): a
  // low-resolution value must never be reported as the best.
  const std::map<std::string, std::string> env{{"MULTIRES_SHIFT", "-1"}};
  const Result r = tune(d, {"run", "c.yaml", "--quiet"}, env);
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node s = state_of(d / "md");
  EXPECT_NE(s["stop_reason"].as<std::string>().find("cost budget is spent"), std::string::npos)
      << s["stop_reason"].as<std::string>();
  const YAML::Node trials = s["study"]["trials"];
  ASSERT_GT(trials.size(), 5u);
  std::map<int, int> per_level;
  double spent = 0, best_full = 1e9, best_any = 1e9;
  int best_any_level = -1;
  for (const auto& t : trials) {
    ASSERT_EQ(t["status"].as<std::string>(), "complete") << t;  // the trainer checked {epochs} == $TUNE_RESOLUTION
    const int level = t["level"].as<int>();
    ++per_level[level];
    spent += kLevels.at(static_cast<std::size_t>(level));  // declared cost = the level's value here
    EXPECT_FALSE(t["cost"]) << "declared costs: no measured cost is told, or seconds would mix with declared units";
    const double v = t["value"].as<double>();
    if (level == 2) best_full = std::min(best_full, v);
    if (v < best_any) best_any = v, best_any_level = level;
    // The trial got its level's value as {epochs}, $TUNE_RESOLUTION and $TUNE_RESOLUTION_LEVEL.
    const YAML::Node command = YAML::LoadFile((d / "md" / "trials" / t["id"].as<std::string>() / "command.yaml").string());
    const std::string value = level == 0 ? "1" : level == 1 ? "3" : "9";
    EXPECT_EQ(command["argv"][4].as<std::string>(), value);
    EXPECT_EQ(command["environment"]["TUNE_RESOLUTION"].as<std::string>(), value);
    EXPECT_EQ(command["environment"]["TUNE_RESOLUTION_LEVEL"].as<int>(), level);
  }
  EXPECT_LE(spent, budget);
  EXPECT_GT(spent, budget - 9.0);  // it stopped because the next run did not fit, not earlier
  EXPECT_GE(per_level.size(), 2u) << "cmets ran every trial at one level";
  ASSERT_TRUE(per_level.count(2)) << "no full-resolution trial";
  ASSERT_NE(best_any_level, 2) << "the test needs a cheap run that looks better than every full run";

  const Result st = tune(d, {"status", "md"});
  ASSERT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("cost: " + std::to_string(static_cast<int>(spent)) + " spent of the budget 60 (declared costs)"),
            std::string::npos) << st.out;
  const auto rows = status_levels(st.out);
  ASSERT_EQ(rows.size(), 3u) << st.out;
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(rows.at(l)[0], per_level[l]) << "level " << l << "\n" << st.out;
    EXPECT_EQ(rows.at(l)[1] + rows.at(l)[2] + rows.at(l)[3], 0) << st.out;
  }
  EXPECT_NE(st.out.find("(full resolution)"), std::string::npos) << st.out;
  // The trainer's cheaper levels are the full run plus a constant and a little noise: the model's
  // fitted relation, which status shows per level, says they track it.
  for (const char* level : {"level 0 (epochs 1): correlation ", "level 1 (epochs 3): correlation "}) {
    const std::size_t at = st.out.find(level);
    ASSERT_NE(at, std::string::npos) << level << "\n" << st.out;
    EXPECT_GT(std::stod(st.out.substr(at + std::string(level).size())), 0.9) << st.out;
  }

  // Every trial is listed by default; --last N lists the N most recent and counts the others.
  const int n = static_cast<int>(trials.size());
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
  EXPECT_EQ(status_trial_ids(st.out), all) << st.out;
  const Result last3 = tune(d, {"status", "md", "--last", "3"});
  ASSERT_EQ(last3.code, 0) << last3.err;
  EXPECT_EQ(status_trial_ids(last3.out), (std::vector<int>{n - 3, n - 2, n - 1})) << last3.out;
  EXPECT_NE(last3.out.find(std::to_string(n - 3) +
                           " earlier trials not shown (none of them failed); without --last every trial is listed"),
            std::string::npos)
      << last3.out;
  EXPECT_NE(last3.out.find(std::to_string(n) + " complete"), std::string::npos) << last3.out;
  const Result last0 = tune(d, {"status", "md", "--last", "0"});
  ASSERT_EQ(last0.code, 0) << last0.err;
  EXPECT_TRUE(status_trial_ids(last0.out).empty()) << last0.out;
  EXPECT_NE(last0.out.find(std::to_string(n) + " earlier trials not shown"), std::string::npos) << last0.out;
  const Result more = tune(d, {"status", "md", "--last", std::to_string(n + 5)});
  EXPECT_EQ(status_trial_ids(more.out), all) << more.out;
  EXPECT_EQ(more.out.find("not shown"), std::string::npos) << more.out;
  const Result negative = tune(d, {"status", "md", "--last", "-1"});
  EXPECT_EQ(negative.code, 2);
  EXPECT_NE(negative.err.find("expected a whole number, not '-1'"), std::string::npos) << negative.err;

  const Result b = tune(d, {"best", "md"});
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_NE(b.out.find("the model recommends"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("best observed full-resolution trial"), std::string::npos) << b.out;
  const YAML::Node best = YAML::Load(b.out);
  EXPECT_EQ(trials[best["trial"].as<std::size_t>()]["level"].as<int>(), 2) << b.out;
  EXPECT_DOUBLE_EQ(best["loss"].as<double>(), best_full);
  EXPECT_GT(best["loss"].as<double>(), best_any);  // the cheaper, better-looking run is not "best"
  EXPECT_EQ(best["resolution"]["value"].as<double>(), 9.0);
  ASSERT_TRUE(best["recommendation"].IsMap()) << b.out;
  EXPECT_TRUE(best["recommendation"]["config"]["x"]) << b.out;
  EXPECT_GE(best["recommendation"]["sd"].as<double>(), 0.0);
  // The model predicts the full-resolution objective (its minimum is 0 at (0.3, -1)), not the cheap
  // runs' values, which are about 1 lower.
  EXPECT_GT(best["recommendation"]["mean"].as<double>(), -0.2) << b.out;

  const Result j = tune(d, {"best", "md", "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const YAML::Node json = YAML::Load(j.out);  // JSON is YAML
  EXPECT_EQ(json["trial"].as<std::size_t>(), best["trial"].as<std::size_t>()) << j.out;
  EXPECT_DOUBLE_EQ(json["loss"].as<double>(), best_full);
  EXPECT_DOUBLE_EQ(json["recommendation"]["mean"].as<double>(), best["recommendation"]["mean"].as<double>());
  EXPECT_DOUBLE_EQ(json["recommendation"]["sd"].as<double>(), best["recommendation"]["sd"].as<double>());
  EXPECT_EQ(json["resolution"]["parameter"].as<std::string>(), "epochs");
}

// With budget for ~120 full runs the model pins the 2-D quadratic's minimum long before the end:
// once every configuration left in cmets's tree is certainly worse than the best, its trials are
// full runs in the order of the model's expectation (the best it has not run yet first), and
// `tune status` says since when: the user's cue that more budget buys little.
TEST(TuneCli, StatusSaysWhenTheTreeHasNothingLeftToLearn) {
  const fs::path d = fresh_dir("multires-saturated");
  write(d / "c.yaml", multires_campaign("ms", "[1, 3, 9]", 1100, 1, ", trials: 500"));
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Result st = tune(d, {"status", "ms", "--last", "0"});
  ASSERT_EQ(st.code, 0) << st.err;
  const std::string cue = "nothing left to learn in the tree since trial ";
  const std::size_t at = st.out.find(cue);
  ASSERT_NE(at, std::string::npos) << st.out;
  const int since = std::stoi(st.out.substr(at + cue.size()));
  const YAML::Node trials = state_of(d / "ms")["study"]["trials"];
  std::vector<double> first_stretch_values;  // from the first trial the tree had nothing to learn
  int after = 0;
  for (const auto& t : trials) {
    const bool uninformative = t["source"].as<std::string>() == "cmes_tree_uninformative";
    if (uninformative || !first_stretch_values.empty()) first_stretch_values.push_back(t["value"].as<double>());
    if (t["id"].as<int>() < since) continue;
    EXPECT_EQ(t["level"].as<int>(), 2) << t;
    EXPECT_TRUE(uninformative) << "the stretch reported goes on to the last trial: " << t;
    after += uninformative;
  }
  ASSERT_GE(after, 10) << st.out;
  ASSERT_GE(first_stretch_values.size(), 10u);
  EXPECT_NE(st.out.find("the " + std::to_string(after) + " full runs since refine the optimum"), std::string::npos)
      << st.out;
  EXPECT_EQ(st.out.find("tune stop ends the campaign"), std::string::npos) << "a finished campaign\n" << st.out;
  // The first ten lie in the best tenth of the square: the loss (x - 0.3)^2 + (y + 1)^2 / 4 on
  // [-1, 1] x [-3, 1] is below 0.127 on a tenth of it (noise sd 0.0022).
  for (std::size_t i = 0; i < 10; ++i) EXPECT_LT(first_stretch_values[i], 0.127) << i;

  // Only the current stretch counts: a tree query inside it (new results or a refit found more to
  // learn in the tree) starts it again, and one after it ends it. The trials' sources are edited in
  // state.yaml, as they would have been recorded.
  const auto with_tree_query_at = [&](int id) {
    std::ifstream in(d / "ms" / "state.yaml");
    std::stringstream text;
    text << in.rdbuf();
    std::string state = text.str();
    const std::string line = "- {id: " + std::to_string(id) + ", status: complete, config: ";  // the study's
    const std::size_t at_line = state.find(line);
    const std::size_t at_source = state.find("source: cmes_tree_uninformative", at_line);
    EXPECT_LT(at_source, state.find('\n', at_line)) << id;
    state.replace(at_source, std::string("source: cmes_tree_uninformative").size(), "source: cmets");
    std::ofstream(d / "ms" / "state.yaml") << state;
    return tune(d, {"status", "ms", "--last", "0"}).out;
  };
  const std::string restarted = with_tree_query_at(since + 3);
  EXPECT_NE(restarted.find(cue + std::to_string(since + 4) + ":"), std::string::npos) << restarted;
  EXPECT_NE(restarted.find("the " + std::to_string(after - 4) + " full runs since"), std::string::npos) << restarted;
  const int last = trials[trials.size() - 1]["id"].as<int>();
  const std::string ended = with_tree_query_at(last);
  EXPECT_EQ(ended.find(cue), std::string::npos) << ended;
  EXPECT_NE(ended.find("the tree had nothing left to learn from trial " + std::to_string(since + 4) +
                       " until the model found more to learn in it at trial " + std::to_string(last)),
            std::string::npos)
      << ended;
}

// A trial told from outside a campaign whose costs are measured against a cost budget needs its
// run time: without one it was charged a guess, and the levels' costs were never learnt.
TEST(TuneCli, TellOnAMeasuredCostCampaignNeedsTheRunTime) {
  const fs::path d = fresh_dir("multires-tell");
  write(d / "c.yaml", multires_campaign("mt", "measured", 100, 1, ", trials: 1"));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}, {{"MULTIRES_SLEEP", "0.01"}}).code, 0);
  const Result a = tune(d, {"ask", "mt", "--trials", "2"});
  ASSERT_EQ(a.code, 0) << a.err;
  const std::string id = YAML::Load(a.out)["trial"].as<std::string>();
  const Result no_cost = tune(d, {"tell", "mt", id, "0.5"});
  EXPECT_EQ(no_cost.code, 2);
  EXPECT_NE(no_cost.err.find("--cost SECONDS"), std::string::npos) << no_cost.err;
  EXPECT_EQ(tune(d, {"tell", "mt", id, "0.5", "--cost", "0.03"}).code, 0);
  const Result unknown = tune(d, {"tell", "mt", "999", "0.5", "--cost", "0.03"});
  EXPECT_NE(unknown.code, 0);
  EXPECT_NE(unknown.err.find("has no trial 999"), std::string::npos) << unknown.err;
  EXPECT_EQ(state_of(d / "mt")["study"]["trials"][std::stoi(id)]["cost"].as<double>(), 0.03);
}

// The progress line's "cost S/B" is what finished trials spent. It showed the study's spend, which
// also counts running and re-queued trials at their level's mean cost (and 1e-09 before any cost is
// measured): after a SIGTERM the re-queued runs were reported as spent at that cost. What they ran
// before the stop is spent (their interrupted_cost), as their exit records time it.
TEST(TuneCli, ProgressLineCostIsWhatFinishedTrialsSpent) {
  const fs::path d = fresh_dir("progress-cost");
  write(d / "c.yaml", multires_campaign("pc", "measured", 100, 2));
  const fs::path log = d / "toy.log";
  const pid_t pid = start(d, {"run", "c.yaml"}, {{"MULTIRES_SLEEP", "0.1"}, {"TUNE_TOY_LOG", log.string()}});
  const auto count = [&](const char* what) {
    std::size_t n = 0;
    for (const auto& [id, k] : starts(log, what)) n += static_cast<std::size_t>(k);
    return n;
  };
  for (int i = 0; i < 3000 && !(count("end") >= 3 && count("start") > count("end")); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_GE(count("end"), 3u);
  ::kill(pid, SIGTERM);
  const Result r = finish(d, pid);
  ASSERT_EQ(r.code, 3) << r.err;
  const YAML::Node s = state_of(d / "pc");
  double spent = 0.0;
  std::size_t pending = 0;
  for (const auto& t : s["study"]["trials"]) {
    if (t["status"].as<std::string>() == "pending") {
      ++pending;
      const YAML::Node exit = YAML::LoadFile((d / "pc" / "trials" / t["id"].as<std::string>() / "exit.yaml").string());
      spent += exit["finished_at"].as<double>() - exit["started_at"].as<double>();
    } else {
      spent += t["cost"].as<double>();
    }
  }
  ASSERT_GT(pending, 0u) << "no re-queued trial: nothing to tell the two spends apart";
  const std::size_t line = r.err.rfind("\ndone ");
  ASSERT_NE(line, std::string::npos) << r.err;
  const std::size_t at = r.err.find("  cost ", line);
  ASSERT_NE(at, std::string::npos) << r.err;
  const double shown = std::stod(r.err.substr(at + 7));
  EXPECT_NEAR(shown, spent, 1e-3 * spent) << r.err;  // four significant digits
  EXPECT_EQ(r.err.substr(r.err.find('/', at), 6), "/100s ") << r.err;
}

TEST(TuneCli, MeasuredCostCampaignRecordsRunTimesAndStopsWithinItsBudget) {
  const fs::path d = fresh_dir("multires-measured");
  const double budget = 1.5;
  write(d / "c.yaml", multires_campaign("mm", "measured", budget, 2));
  const double per_unit = 0.01;  // seconds of sleep per epoch: 10, 30, 90 ms
  const Result r = tune(d, {"run", "c.yaml", "--quiet"}, {{"MULTIRES_SLEEP", std::to_string(per_unit)}});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node s = state_of(d / "mm");
  EXPECT_NE(s["stop_reason"].as<std::string>().find("cost budget is spent"), std::string::npos)
      << s["stop_reason"].as<std::string>();
  double spent = 0, top_cost = 0;
  int top_runs = 0;
  std::set<int> levels;
  for (const auto& t : s["study"]["trials"]) {
    ASSERT_EQ(t["status"].as<std::string>(), "complete") << t;
    ASSERT_TRUE(t["cost"]) << t;
    const double cost = t["cost"].as<double>();
    const int level = t["level"].as<int>();
    levels.insert(level);
    // The cost is the run time the supervisor recorded, at least the trainer's sleep.
    EXPECT_GE(cost, per_unit * kLevels.at(static_cast<std::size_t>(level))) << t;
    EXPECT_DOUBLE_EQ(cost, s["runs"][t["id"].as<std::size_t>()]["exit"]["duration"].as<double>());
    spent += cost;
    if (level == 2) top_cost += cost, ++top_runs;
  }
  EXPECT_GE(levels.size(), 2u);
  ASSERT_GT(top_runs, 0);
  // A run is admitted when its level's mean run time so far fits what is left; it may run somewhat
  // longer than that mean (a loaded machine), but the campaign never starts a run it cannot pay for,
  // so it ends less than one full-resolution run over the budget, and not much under it.
  EXPECT_LE(spent, budget + top_cost / static_cast<double>(top_runs)) << "top-level runs " << top_runs;
  EXPECT_GT(spent, budget - 0.3);
  const Result st = tune(d, {"status", "mm"});
  EXPECT_NE(st.out.find("spent of the budget 1.5s (measured: seconds of trial run time)"), std::string::npos) << st.out;
}

TEST(TuneCli, KilledResolutionCampaignResumesWithLevelsAndCostsIntact) {
  std::mt19937 rng(31);
  int kills = 0;
  for (int campaign = 0; campaign < 2; ++campaign) {
    const fs::path d = fresh_dir("multires-kill9-" + std::to_string(campaign));
    write(d / "c.yaml", multires_campaign("k", "measured", 1.6, 2));
    const std::map<std::string, std::string> env{{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"MULTIRES_SLEEP", "0.02"}};
    kills += run_killing(d, env, 5, 200, rng);
    const YAML::Node s = state_of(d / "k");
    EXPECT_NE(s["stop_reason"].as<std::string>().find("cost budget"), std::string::npos);
    const YAML::Node trials = s["study"]["trials"];
    ASSERT_GT(trials.size(), 3u);
    // Each trial ran exactly once, at the level the study gave it, and its measured cost survived
    // the kills (recorded before the state was written).
    std::map<std::string, std::string> level_run;  // trial id -> "value level" the trainer saw
    {
      std::ifstream in(d / "toy.log");
      std::string word, id, x, y, value, level, rest;
      while (in >> word) {
        if (word == "start" && in >> id >> x >> y >> value >> level) level_run[id] = value + " " + level;
        std::getline(in, rest);
      }
    }
    const auto n = starts(d / "toy.log");
    EXPECT_EQ(n.size(), trials.size());
    for (const auto& [id, count] : n) EXPECT_EQ(count, 1) << "campaign " << campaign << " trial " << id;
    for (const auto& t : trials) {
      EXPECT_EQ(t["status"].as<std::string>(), "complete");
      const std::size_t level = t["level"].as<std::size_t>();
      const std::string id = t["id"].as<std::string>();
      EXPECT_EQ(level_run[id], (level == 0 ? "1 " : level == 1 ? "3 " : "9 ") + std::to_string(level)) << id;
      ASSERT_TRUE(t["cost"]) << t;
      EXPECT_GE(t["cost"].as<double>(), 0.02 * kLevels.at(level)) << t;
    }
  }
  EXPECT_GE(kills, 8);
}

// A campaign of the multi-resolution toy space for ask/tell only (no command), levels [1, 3, 9, 27].
std::string ask_multires_campaign(const std::string& name, const std::string& cost, const std::string& strategy,
                                  double budget) {
  return "name: " + name + "\nspace:\n  x: {type: float, low: -1, high: 1}\n  y: {type: float, low: -3, high: 1}\n"
         "resolution: {param: epochs, levels: [1, 3, 9, 27], cost: " + cost + "}\n"
         "objective: {name: loss}\nstrategy: {name: " + strategy + "}\nbudget: {cost: " + std::to_string(budget) + "}\n";
}

// `tune ask` with nothing to hand out: 6 while results of handed-out trials are awaited (a driver
// loop must tell them and ask again), 0 once the campaign is finished (the loop is done). Both
// printed nothing and exited 0 before.
TEST(TuneCli, AskExitsSixWhileResultsAreAwaitedAndZeroWhenFinished) {
  const fs::path d = fresh_dir("ask-waiting");
  // Measured costs against a cost budget: one trial at a time until its cost is in.
  write(d / "m.yaml", ask_multires_campaign("m", "measured", "cmets", 100));
  ASSERT_EQ(tune(d, {"ask", "m.yaml"}).code, 0);
  const Result waiting = tune(d, {"ask", "m"});
  EXPECT_EQ(waiting.code, 6) << waiting.err;
  EXPECT_EQ(waiting.out, "");
  EXPECT_EQ(waiting.err,
            "tune ask: nothing to hand out now: waiting for the first run's measured cost to estimate the levels' "
            "costs; the result of trial 0 (handed out by 'tune ask') is awaited: tell it with 'tune tell m 0 VALUE "
            "--cost SECONDS', then ask again\n");
  ASSERT_EQ(tune(d, {"tell", "m", "0", "0.5", "--cost", "2"}).code, 0);
  const Result next = tune(d, {"ask", "m"});
  ASSERT_EQ(next.code, 0) << next.err;
  EXPECT_EQ(YAML::Load(next.out)["trial"].as<int>(), 1) << next.out;

  // Declared costs: trials handed out commit their levels' costs, until nothing more fits.
  write(d / "c.yaml", ask_multires_campaign("c", "[1, 3, 9, 27]", "cmets", 30));
  std::vector<std::string> pending;
  Result r;
  for (int asks = 0; asks < 40; ++asks) {
    r = tune(d, {"ask", asks == 0 ? "c.yaml" : "c"});
    if (r.code != 0) break;
    pending.push_back(YAML::Load(r.out)["trial"].as<std::string>());
  }
  ASSERT_EQ(r.code, 6) << r.err;
  ASSERT_GE(pending.size(), 2u);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("tune ask: nothing to hand out now: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; the results of trials 0, 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(handed out by 'tune ask') are awaited: tell them with 'tune tell c ID VALUE', then ask "
                       "again\n"),
            std::string::npos)
      << r.err;
  for (const std::string& id : pending) ASSERT_EQ(tune(d, {"tell", "c", id, "0.5"}).code, 0);
  // Told, the trials have spent what they committed; once nothing more fits and nothing is awaited,
  // the campaign is finished.
  Result finished;
  for (int asks = 0; asks < 40; ++asks) {
    finished = tune(d, {"ask", "c"});
    if (finished.code != 0 || finished.out.empty()) break;
    ASSERT_EQ(tune(d, {"tell", "c", YAML::Load(finished.out)["trial"].as<std::string>(), "0.5"}).code, 0);
  }
  EXPECT_EQ(finished.code, 0) << finished.err;
  EXPECT_EQ(finished.out, "");
  EXPECT_EQ(finished.err.rfind("tune ask: the campaign is finished, nothing more to hand out: cost budget exhausted", 0),
            0u)
      << finished.err;
  EXPECT_TRUE(state_of(d / "c")["study"]["finished"].as<bool>());
  // The campaign too, as a tuner would have ended it: status said "not running".
  EXPECT_TRUE(state_of(d / "c")["finished"].as<bool>());
  const Result st = tune(d, {"status", "c"});
  EXPECT_NE(st.out.find("): finished\n"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("last session ended: cost budget exhausted"), std::string::npos) << st.out;
}

// `tune status` of a measured campaign: "spent" is what finished trials cost; running trials'
// costs are "committed", apart; and before any cost is measured it says "unknown", never the
// study's placeholder (1e-09 per unit of value) that it printed as spent.
// The trial list prints values in full (up to 17 significant digits, wider than the old fixed
// column of 14), so the column takes the widest value: every configuration starts where the
// header's "configuration" does.
// On a terminal the live progress line is redrawn with '\r' and erase-line, which clear only the
// row the cursor is on: a line wider than the terminal wrapped and left a stale row behind at every
// redraw (124-character lines on a 60-column terminal). Run under `script` with a 60-column pty.
TEST(TuneCli, LiveProgressLineFitsTheTerminalWidth) {
  if (std::system("command -v script >/dev/null 2>&1 && command -v stty >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "needs script(1) and stty(1) for a pseudo-terminal";
  const fs::path d = fresh_dir("progress-width");
  write(d / "c.yaml",
        "name: pw\ncommand: [sh, -c, 'sleep 0.2; echo \"loss=$1\"', sh, \"{alpha_long_name}\"]\n"
        "space:\n  alpha_long_name: {type: float, low: 0, high: 1}\n  beta_long_name: {type: float, low: 0, high: 1}\n"
        "objective: loss\nbudget: {trials: 8}\n");
  const std::string command = "cd '" + d.string() + "' && script -qc \"stty cols 60; '" + kTune.string() +
                              "' run c.yaml\" /dev/null > pty.out 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << slurp(d / "pty.out");
  const std::string out = slurp(d / "pty.out");
  // Live redraws: erase-line, the line, then '\r' not followed by '\n' (the pty turns a newline
  // into "\r\n"; log lines above the live line may be as long as they like).
  std::size_t redraws = 0, widest = 0;
  for (std::size_t at = out.find("\x1b[K"); at != std::string::npos; at = out.find("\x1b[K", at + 1)) {
    const std::size_t begin = at + 3, end = out.find_first_of("\r\n", begin);
    if (end == std::string::npos || out[end] != '\r' || (end + 1 < out.size() && out[end + 1] == '\n')) continue;
    ++redraws;
    widest = std::max(widest, end - begin);
  }
  EXPECT_GT(redraws, 0u) << out;
  EXPECT_LE(widest, 59u) << out;
}

TEST(TuneCli, StatusListKeepsItsColumnsAlignedForFullPrecisionValues) {
  const fs::path d = fresh_dir("status-columns");
  write(d / "c.yaml", quadratic_campaign("sc", 6, 1));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const Result st = tune(d, {"status", "sc"});
  ASSERT_EQ(st.code, 0) << st.err;
  std::istringstream in(st.out);
  std::string line;
  std::size_t column = std::string::npos, rows = 0, widest = 0;
  while (std::getline(in, line)) {
    if (column == std::string::npos) {
      column = line.find("configuration / failure");
      continue;
    }
    if (line.find("complete") == std::string::npos) continue;
    ++rows;
    EXPECT_EQ(line.find('{'), column) << st.out;
    std::istringstream fields(line);
    std::string id, status, value;
    fields >> id >> status >> value;
    widest = std::max(widest, value.size());
  }
  EXPECT_EQ(rows, 6u) << st.out;
  EXPECT_GT(widest, 14u) << "no value wider than the old column: the test shows nothing\n" << st.out;
}

TEST(TuneCli, StatusSeparatesSpentFromCommittedAndNeverPrintsAPlaceholderCost) {
  const fs::path d = fresh_dir("status-spend");
  write(d / "m.yaml", ask_multires_campaign("m", "measured", "cmets", 100));
  const Result first = tune(d, {"ask", "m.yaml"});
  ASSERT_EQ(first.code, 0) << first.err;
  const int level0 = YAML::Load(first.out)["resolution"]["level"].as<int>();
  const double value0 = YAML::Load(first.out)["resolution"]["value"].as<double>();

  Result st = tune(d, {"status", "m"});
  ASSERT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("cost: 0s spent + unknown (not yet measured) committed to 1 running of the budget 100s "
                        "(measured: seconds of trial run time)\n"),
            std::string::npos)
      << st.out;
  EXPECT_EQ(st.out.find("e-0"), std::string::npos) << st.out;  // no 1e-09
  auto rows = status_level_cells(st.out);
  ASSERT_EQ(rows.size(), 4u) << st.out;
  for (const auto& [level, cells] : rows) {
    EXPECT_EQ(cells[2], "unknown") << st.out;
    EXPECT_EQ(cells[7], "0s") << st.out;
    EXPECT_EQ(cells[8], level == level0 ? "unknown" : "-") << st.out;
  }

  ASSERT_EQ(tune(d, {"tell", "m", "0", "0.5", "--cost", "2"}).code, 0);
  st = tune(d, {"status", "m"});
  EXPECT_NE(st.out.find("cost: 2s spent of the budget 100s (measured: seconds of trial run time)\n"), std::string::npos)
      << st.out;
  rows = status_level_cells(st.out);
  EXPECT_EQ(rows.at(level0)[2], "2s") << st.out;
  EXPECT_EQ(rows.at(level0)[7], "2s") << st.out;
  EXPECT_EQ(rows.at(level0)[8], "-") << st.out;

  // A running trial's cost is its level's cost now (the one measured cost scaled by the levels'
  // values), committed, not spent.
  const Result second = tune(d, {"ask", "m"});
  ASSERT_EQ(second.code, 0) << second.err;
  const int level1 = YAML::Load(second.out)["resolution"]["level"].as<int>();
  const double value1 = YAML::Load(second.out)["resolution"]["value"].as<double>();
  char expected[64];
  std::snprintf(expected, sizeof expected, "%.4gs", level1 == level0 ? 2.0 : 2.0 * value1 / value0);
  st = tune(d, {"status", "m"});
  EXPECT_NE(st.out.find("cost: 2s spent + " + std::string(expected) + " committed to 1 running of the budget 100s"),
            std::string::npos)
      << st.out;
  rows = status_level_cells(st.out);
  EXPECT_EQ(rows.at(level1)[8], expected) << st.out;
  EXPECT_EQ(rows.at(level1)[7], level1 == level0 ? "2s" : "0s") << st.out;
}

// A level's measured cost is an estimate "(est.)" until the level has a completed trial: the mean of
// failed runs (a crash at start, a timeout) is not what a completed run costs, and once one has
// completed the failed runs no longer price the level.
TEST(TuneCli, StatusMarksALevelWithOnlyFailedRunsAsAnEstimate) {
  const fs::path d = fresh_dir("status-est");
  // cmes runs every trial at the full resolution (level 3).
  write(d / "m.yaml", ask_multires_campaign("m", "measured", "cmes", 1000));
  for (int trial = 0; trial < 2; ++trial) {
    const Result a = tune(d, {"ask", trial == 0 ? "m.yaml" : "m"});
    ASSERT_EQ(a.code, 0) << a.err;
    ASSERT_EQ(YAML::Load(a.out)["resolution"]["level"].as<int>(), 3) << a.out;
    ASSERT_EQ(tune(d, {"tell", "m", std::to_string(trial), "--failed", "timed out", "--cost", "4"}).code, 0);
  }
  Result st = tune(d, {"status", "m"});
  auto rows = status_level_cells(st.out);
  ASSERT_EQ(rows.size(), 4u) << st.out;
  EXPECT_EQ(rows.at(3)[2], "4s (est.)") << st.out;
  EXPECT_EQ(rows.at(3)[4], "2") << st.out;  // failed
  EXPECT_EQ(rows.at(3)[7], "8s") << st.out;

  ASSERT_EQ(tune(d, {"ask", "m"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "m", "2", "0.5", "--cost", "7"}).code, 0);
  st = tune(d, {"status", "m"});
  rows = status_level_cells(st.out);
  // Priced by the completed run alone (the failed runs' 8 s are spent all the same).
  EXPECT_EQ(rows.at(3)[2], "7s") << st.out;
  EXPECT_EQ(rows.at(3)[7], "15s") << st.out;
  EXPECT_EQ(rows.at(0)[2], "0.2593s (est.)") << st.out;  // 7 s for 27 epochs, scaled to 1
}

TEST(TuneCli, InvalidResolutionBlocksNameTheLineTheFieldAndTheFix) {
  const fs::path d = fresh_dir("invalid-resolution");
  const std::string head = "name: x\ncommand: [echo, \"{x}\", \"{epochs}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\n";
  struct Case {
    std::string text, field, fix;
  };
  const std::vector<Case> cases{
      {head + "resolution: {param: x, levels: [1, 3, 9]}\n", "resolution.param", "remove 'x' from 'space'"},
      {head + "resolution: {levels: [1, 3, 9]}\n", "resolution.param", "e.g. {param: epochs"},
      {head + "resolution: {param: epochs, levels: [3, 1, 9]}\n", "resolution.levels", "strictly increasing"},
      {head + "resolution: {param: epochs, levels: [1, three, 9]}\n", "resolution.levels", "found 'three'"},
      {head + "resolution: {param: epochs, levels: [0, 3, 9]}\n", "resolution.levels", "> 0"},
      {head + "resolution: {param: epochs, levels: [1, 3, 9], cost: [1, 3]}\n", "resolution.cost", "one cost per level"},
      {head + "resolution: {param: epochs, levels: [1, 3, 9], cost: often}\n", "resolution.cost", "'measured'"},
      {head + "resolution: {param: epochs, levels: [1, 3, 9], costs: [1, 3, 9]}\n", "resolution.costs", "unknown key"},
      {head + "resolution: [1, 3, 9]\n", "resolution", "expected a map"},
      {head + "resolution: {param: epochs, levels: [1, 3, 9], cost: [1, 3, 9]}\nbudget: {cost: 0.5}\n", "budget.cost",
       "raise it"},
      {head + "resolution: {param: epochs, levels: [1, 3, 9]}\nbudget: {cost: -3}\n", "budget.cost", "positive"},
      {"name: x\ncommand: [echo, \"{x}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\nbudget: {cost: 100}\n",
       "budget.cost", "declare a 'resolution'"},
      {head, "command", "unknown placeholder '{epochs}'"},
      // The objective is the full run's: a budget that cannot pay for one never observes it.
      {head + "resolution: {param: epochs, levels: [1, 3, 9], cost: [1, 3, 9]}\nbudget: {cost: 5}\n", "budget.cost",
       "below the cost 9 of one full-resolution run"},
      // An option that depends on the number of levels: refused before the campaign directory is
      // made, which used to hold the bad strategy and refuse the mended file as another campaign.
      {head + "resolution: {param: epochs, levels: [1, 3, 9]}\nstrategy: {name: cmets, noise_sd: [0.1, 0.1]}\n",
       "strategy.noise_sd", "2 values for 3 resolution levels; give one noise sd per level"},
      // The level's value is also TUNE_PARAM_DATA_FRAC: the resolution, not the command, is at fault.
      {"name: x\ncommand: [echo, \"{data-frac}\", \"{data_frac}\"]\nspace:\n  data-frac: {type: float, low: 0, high: 1}\n"
       "resolution: {param: data_frac, levels: [1, 3, 9]}\n",
       "resolution.param", "'data_frac' and the parameter 'data-frac' of 'space' both map to the environment variable "
       "TUNE_PARAM_DATA_FRAC"},
  };
  for (const Case& c : cases) {
    write(d / "bad.yaml", c.text);
    const Result r = tune(d, {"run", "bad.yaml", "--quiet"});
    EXPECT_EQ(r.code, 1) << c.text;
    EXPECT_NE(r.err.find("bad.yaml"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("field '" + c.field + "'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.fix), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("line"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "x")) << "a campaign directory was created for an invalid file";
  }
}

// A trial's cost in state.yaml is what the tuner records: none with declared costs, the run's
// duration with measured ones. An edited cost moved the spend and the levels' costs without a word.
TEST(TuneCli, TrialCostsTheTunerDidNotRecordAreRefused) {
  const fs::path d = fresh_dir("edited-costs");
  write(d / "declared.yaml", multires_campaign("dc", "[1, 3, 9]", 60, 1, ", trials: 3"));
  ASSERT_EQ(tune(d, {"run", "declared.yaml", "--quiet"}).code, 0);
  write(d / "measured.yaml", multires_campaign("mc", "measured", 100, 1, ", trials: 3"));
  ASSERT_EQ(tune(d, {"run", "measured.yaml", "--quiet"}, {{"MULTIRES_SLEEP", "0.001"}}).code, 0);
  const auto trial_line_of = [](const std::string& text, int id) {
    return line_of(text, "    - {id: " + std::to_string(id) + ", status: complete, config:");
  };
  struct Case {
    std::string dir, from, to, expected;
  };
  const fs::path measured_state = d / "mc" / "state.yaml";
  const std::string measured_cost = YAML::LoadFile(measured_state.string())["study"]["trials"][1]["cost"].Scalar();
  const std::vector<Case> cases{
      {"dc", "level: 0}", "level: 0, cost: 1}", "the campaign declares its levels' costs (resolution.cost)"},
      {"mc", "cost: " + measured_cost + "}", "cost: 1234.5}",
       "1234.5 seconds, but its run record says the run took " + measured_cost + " (exit.duration)"},
  };
  for (const Case& c : cases) {
    const fs::path state = d / c.dir / "state.yaml";
    const std::string text = slurp(state);
    // The first trial of the study (not the run records above it) whose line holds the fragment.
    const std::size_t study = text.find("\nstudy:");
    const std::size_t at = text.find(c.from, study);
    ASSERT_NE(at, std::string::npos) << c.from << "\n" << text;
    const std::size_t line_start = text.rfind('\n', at) + 1;
    const int id = std::stoi(text.substr(line_start + std::string("    - {id: ").size()));
    std::string damaged = text;
    damaged.replace(at, c.from.size(), c.to);
    write(state, damaged);
    for (const std::vector<std::string>& args : {std::vector<std::string>{"status", c.dir},
                                                 std::vector<std::string>{"resume", c.dir, "--quiet"}}) {
      const Result r = tune(d, args);
      EXPECT_EQ(r.code, 1) << r.err;
      EXPECT_NE(r.err.find(c.dir + "/state.yaml: "), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("study trial " + std::to_string(id) + ", field 'cost' at line " +
                           std::to_string(trial_line_of(text, id)) + ","),
                std::string::npos) << r.err;
      EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    }
    EXPECT_EQ(slurp(state), damaged) << "a refused state was rewritten";
    write(state, text);
    EXPECT_EQ(tune(d, {"status", c.dir}).code, 0) << "the state as the tuner wrote it is refused";
  }
}

TEST(TuneCli, GpooCampaignCompletesAndBestReportsTheRecommendedRegion) {
  const fs::path d = fresh_dir("gpoo");
  write(d / "c.yaml", quadratic_campaign("gq", 24, 2, "strategy: {name: gpoo, beta: code}\nseed: 3\n"));
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node s = state_of(d / "gq");
  EXPECT_EQ(s["study"]["strategy"]["name"].as<std::string>(), "gpoo");
  const YAML::Node trials = s["study"]["trials"];
  ASSERT_EQ(trials.size(), 24u);
  for (const auto& t : trials) EXPECT_EQ(t["status"].as<std::string>(), "complete") << t;

  // YAML: a comment naming the region, then trial / loss / config and the recommendation.
  const Result b = tune(d, {"best", "gq"});
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_NE(b.out.find("# gpoo recommends the region {x: ["), std::string::npos) << b.out;
  // One representative (the default): the estimate is the value at the region's centre, not an average.
  EXPECT_NE(b.out.find("where loss at its centre is "), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find("averages"), std::string::npos) << b.out;
  const YAML::Node y = YAML::Load(b.out);
  ASSERT_TRUE(y["recommendation"]["region"]["box"]["x"]) << b.out;
  EXPECT_TRUE(y["loss"]) << b.out;

  // JSON: the same, machine-readable; the point lies in the box, the box in the space, and the
  // region's estimated average is close to the bowl's value there (the loss is noise-free).
  const Result j = tune(d, {"best", "gq", "--json"});
  ASSERT_EQ(j.code, 0) << j.err;
  const YAML::Node js = YAML::Load(j.out);
  const YAML::Node rec = js["recommendation"];
  ASSERT_TRUE(rec["region"]) << j.out;
  const YAML::Node box = rec["region"]["box"];
  const double x0 = box["x"][0].as<double>(), x1 = box["x"][1].as<double>();
  const double y0 = box["y"][0].as<double>(), y1 = box["y"][1].as<double>();
  EXPECT_LE(-1.0, x0);
  EXPECT_LT(x0, x1);
  EXPECT_LE(x1, 1.0);
  EXPECT_LE(-3.0, y0);
  EXPECT_LT(y0, y1);
  EXPECT_LE(y1, 1.0);
  const double px = rec["config"]["x"].as<double>(), py = rec["config"]["y"].as<double>();
  EXPECT_TRUE(x0 <= px && px <= x1 && y0 <= py && py <= y1) << j.out;
  EXPECT_EQ(y["recommendation"]["region"]["box"]["x"][0].as<double>(), x0);  // YAML and JSON agree
  const double truth = (px - 0.3) * (px - 0.3) + (py + 1) * (py + 1) / 4;  // S = 1: the region's centre
  EXPECT_NEAR(rec["region"]["mean"].as<double>(), truth, 3 * rec["region"]["sd"].as<double>() + 0.05) << j.out;
  // Among the best quarter of the space (the bowl's values range over [0, 2.5]).
  EXPECT_LT(truth, 0.3) << j.out;

  // With the whole cell as the feedback, the estimate is the region's average, and said so.
  write(d / "cell.yaml", quadratic_campaign("gc", 12, 2, "strategy: {name: gpoo, aggregation: cell}\nseed: 3\n"));
  ASSERT_EQ(tune(d, {"run", "cell.yaml", "--quiet"}).code, 0);
  const Result c = tune(d, {"best", "gc"});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_NE(c.out.find("where loss averages "), std::string::npos) << c.out;
}

TEST(TuneCli, StatusSaysWhichResultsTheModelHoldsAtItsFloor) {
  const fs::path d = fresh_dir("floor");
  // The quadratic toy, but a run with x > 0.6 "diverges" and prints a huge loss.
  const fs::path trainer = d / "diverging.sh";
  write(trainer,
        "#!/bin/sh\nawk -v x=\"$1\" -v y=\"$2\" 'BEGIN { if (x > 0.6) print \"loss=1e30\"; "
        "else printf \"loss=%.17g\\n\", (x - 0.3) ^ 2 + (y + 1) ^ 2 / 4 }'\n");
  fs::permissions(trainer, fs::perms::owner_all);
  std::string campaign = quadratic_campaign("div", 20, 1, "enqueue:\n  - {x: 0.9, y: 0}\n  - {x: 0.95, y: -2}\n");
  campaign.replace(campaign.find((kTrainers / "quadratic.sh").string()), (kTrainers / "quadratic.sh").string().size(),
                   trainer.string());
  write(d / "c.yaml", campaign);
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const Result st = tune(d, {"status", "div"});
  ASSERT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("out of scale, modelled as the worst ordinary result (trial 0's 1e+30 is modelled as "),
            std::string::npos) << st.out;
  EXPECT_NE(st.out.find("better reported as failed"), std::string::npos) << st.out;
  // An ordinary campaign has no such line.
  write(d / "q.yaml", quadratic_campaign("quad", 12, 1));
  ASSERT_EQ(tune(d, {"run", "q.yaml", "--quiet"}).code, 0);
  const Result plain = tune(d, {"status", "quad"});
  EXPECT_EQ(plain.out.find("out of scale"), std::string::npos) << plain.out;
}

TEST(TuneCli, AMistypedCommandIsNamedWithTheCommandsThereAre) {
  const fs::path d = fresh_dir("mistyped");
  const Result r = tune(d, {"statsu", "somewhere"});
  EXPECT_EQ(r.code, 2);
  // CLI11 alone said "A subcommand is required", as if none had been given.
  EXPECT_NE(r.err.find("unknown command 'statsu'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("status"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("A subcommand is required"), std::string::npos) << r.err;
  EXPECT_EQ(tune(d, {"--help"}).code, 0);  // options before a command are still CLI11's
}

TEST(TuneCli, DeterministicObjectiveRunsNoConfigurationTwice) {
  const fs::path d = fresh_dir("deterministic");
  // 4 x 3 = 12 configurations of the quadratic toy, the optimum (0.3, -1) among them, and a budget
  // of 20 trials: more than the space holds.
  const auto campaign = [&](const std::string& name, bool deterministic, const std::string& extra = "") {
    std::string text = quadratic_campaign(name, 20, 1, extra);
    const std::string floats = "  x: {type: float, low: -1, high: 1}\n  y: {type: float, low: -3, high: 1}\n";
    text.replace(text.find(floats), floats.size(),
                 "  x: {type: ordinal, choices: [-0.5, 0.3, 0.6, 0.9]}\n  y: {type: ordinal, choices: [-2, -1, 0]}\n");
    if (deterministic) {
      const std::string objective = "objective: {name: loss, direction: minimize}";
      text.replace(text.find(objective), objective.size(),
                   "objective: {name: loss, direction: minimize, deterministic: true}");
    }
    return text;
  };
  const auto configurations = [](const YAML::Node& trials) {
    std::map<std::string, int> runs;
    for (const auto& t : trials) ++runs[t["config"]["x"].as<std::string>() + "," + t["config"]["y"].as<std::string>()];
    return runs;
  };

  write(d / "c.yaml", campaign("det", true));
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node s = state_of(d / "det");
  // The default strategy stays ei (bnb trails it: bench/results/bnb_regret.md), told not to repeat.
  EXPECT_EQ(s["campaign"]["strategy"]["name"].as<std::string>(), "ei");
  EXPECT_FALSE(s["campaign"]["strategy"]["repeat_configurations"].as<bool>());
  EXPECT_TRUE(s["campaign"]["objective"]["deterministic"].as<bool>());
  const YAML::Node trials = s["study"]["trials"];
  ASSERT_EQ(trials.size(), 12u) << "every configuration once, then the campaign ends";
  const std::map<std::string, int> runs = configurations(trials);
  EXPECT_EQ(runs.size(), 12u);
  double best = 1e9;
  for (const auto& t : trials) best = std::min(best, t["value"].as<double>());
  EXPECT_EQ(best, 0.0);
  const Result st = tune(d, {"status", "det"});
  ASSERT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("every configuration of the space has run"), std::string::npos) << st.out;

  // The same campaign without `deterministic` spends its 20 trials, repeating configurations
  // (what the setting prevents).
  write(d / "n.yaml", campaign("noisy", false));
  const Result n = tune(d, {"run", "n.yaml", "--quiet"});
  ASSERT_EQ(n.code, 0) << n.err;
  const YAML::Node noisy = state_of(d / "noisy")["study"]["trials"];
  EXPECT_EQ(noisy.size(), 20u);
  EXPECT_LT(configurations(noisy).size(), 20u);

  // An explicit strategy wins over the default, and an explicit repeat_configurations over the implied one.
  write(d / "e.yaml", campaign("det-random", true, "strategy: random\n"));
  const Result e = tune(d, {"run", "e.yaml", "--quiet"});
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_EQ(state_of(d / "det-random")["campaign"]["strategy"]["name"].as<std::string>(), "random");
  write(d / "u.yaml", campaign("det-ucb", true, "strategy: {name: ucb, repeat_configurations: true}\n"));
  const Result u = tune(d, {"run", "u.yaml", "--quiet"});
  ASSERT_EQ(u.code, 0) << u.err;
  EXPECT_TRUE(state_of(d / "det-ucb")["campaign"]["strategy"]["repeat_configurations"].as<bool>());
  EXPECT_EQ(state_of(d / "det-ucb")["study"]["trials"].size(), 20u);
}

TEST(TuneCli, InvalidTreeStrategyOptionsNameTheLineTheFieldAndTheFix) {
  const fs::path d = fresh_dir("invalid-tree");
  const std::string head = "name: x\ncommand: [echo, \"{x}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\n";
  struct Case {
    std::string text, field, fix;
  };
  const std::vector<Case> cases{
      {head + "strategy: {name: gpoo, representatives: 0}\n", "strategy.representatives", "must be >= 1"},
      {head + "strategy:\n  name: gpoo\n  beta_theta: 3\n", "strategy.beta_theta", "(0, 1)"},
      {head + "strategy: {name: gpoo, aggregation: sometimes}\n", "strategy.aggregation",
       "expected 'representatives', 'cell'"},
      {head + "strategy: {name: gpoo, representative: 2}\n", "strategy.representative", "known keys: aggregation"},
      {head + "strategy: {name: bnb, alpha: 2}\n", "strategy.alpha", "(0, 1)"},
      {head + "strategy: {name: cmets, options: {level_trends: true}}\n", "strategy.options",
       "write them in the strategy map itself"},
      {head + "strategy: {name: bnb, max_level: many}\n", "strategy.max_level", "expected a non-negative integer"},
      {head + "strategy: gpo\n", "strategy", "gpoo"},
      {head + "objective: {name: loss, deterministic: maybe}\n", "objective.deterministic", "expected true"},
  };
  for (const Case& c : cases) {
    write(d / "bad.yaml", c.text);
    const Result r = tune(d, {"run", "bad.yaml", "--quiet"});
    EXPECT_EQ(r.code, 1) << c.text;
    EXPECT_NE(r.err.find("bad.yaml"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("field '" + c.field + "'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.fix), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("line"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(d / "x")) << "a campaign directory was created for an invalid file";
  }
}

}  // namespace

// `tune status` on a campaign it may only read (a colleague's, an archive): it probes the lock
// through a read-only descriptor, says when it cannot open the lock at all, and creates nothing.
TEST(TuneCli, StatusReadsACampaignItCannotWriteTo) {
  const fs::path setpriv = "/usr/bin/setpriv";
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to run status as the user nobody (it cannot write as root)";
  if (!fs::exists(setpriv)) GTEST_SKIP() << "needs setpriv (util-linux) to run status as the user nobody";
  const fs::path d = fresh_dir("status-read-only");
  write(d / "c.yaml", "name: ro\nspace:\n  x: {type: float, low: 0, high: 1}\nstrategy: random\n");
  ASSERT_EQ(tune(d, {"ask", "c.yaml"}).code, 0);
  const fs::path campaign = d / "ro";
  // nobody needs to reach the binary and the campaign. The test changes permissions only inside its
  // own directory; a directory above it that others may not search (a checkout under /root) skips it.
  fs::permissions(d, fs::perms::others_exec, fs::perm_options::add);
  for (const fs::path& start : {d.parent_path(), kTune.parent_path()})
    for (fs::path p = start; p != p.root_path(); p = p.parent_path())
      if ((fs::status(p).permissions() & fs::perms::others_exec) == fs::perms::none)
        GTEST_SKIP() << p << " is not searchable by others: the user nobody could not reach the campaign";
  const auto read_only = [&] {
    for (const auto& e : fs::recursive_directory_iterator(campaign))
      fs::permissions(e.path(), fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                      fs::perm_options::remove);
    fs::permissions(campaign, fs::perms::all & ~(fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write));
  };
  const auto status_as_nobody = [&] {
    return finish(d, start(d, {"status", campaign.string()}, {},
                           {setpriv.string(), "--reuid=65534", "--regid=65534", "--clear-groups"}));
  };
  read_only();
  const Result st = status_as_nobody();
  EXPECT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("campaign ro (minimize objective, strategy random): not running"), std::string::npos)
      << st.out << st.err;
  // A lock file it cannot even read: the tuner's state is unknown, the rest is told.
  fs::permissions(campaign / "tune.lock", fs::perms::none);
  const Result unknown = status_as_nobody();
  EXPECT_EQ(unknown.code, 0) << unknown.err;
  EXPECT_NE(unknown.out.find("tuner state unknown (cannot open " + (campaign / "tune.lock").string() +
                             ": Permission denied)"),
            std::string::npos)
      << unknown.out;
  EXPECT_NE(unknown.out.find("trials: 0 complete, 1 running"), std::string::npos) << unknown.out;
  // No lock file at all (an archive without one): status creates none.
  fs::permissions(campaign, fs::perms::owner_all, fs::perm_options::add);
  fs::remove(campaign / "tune.lock");
  read_only();
  EXPECT_EQ(status_as_nobody().code, 0);
  EXPECT_FALSE(fs::exists(campaign / "tune.lock"));
  fs::permissions(campaign, fs::perms::owner_all, fs::perm_options::add);  // for the next run's fresh_dir
}

namespace {

// ask and tell wait for another short command's lock up to TUNE_LOCK_WAIT (60 s without it), then
// exit 5 naming the holder.
TEST(TuneCli, AskAndTellGiveUpAfterTheLockWaitNamingTheHolder) {
  const fs::path d = fresh_dir("lock-wait");
  write(d / "c.yaml", "name: lw\nspace:\n  x: {type: float, low: 0, high: 1}\nstrategy: random\n");
  ASSERT_EQ(tune(d, {"ask", "c.yaml"}).code, 0);
  const fs::path campaign = d / "lw";
  // This test holds the campaign's lock as a short command does, recorded as its holder.
  const int fd = ::open((campaign / "tune.lock").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string record = std::to_string(::getpid()) + " tune tell\n";
  ASSERT_EQ(::ftruncate(fd, 0), 0);
  ASSERT_EQ(::pwrite(fd, record.data(), record.size(), 0), static_cast<ssize_t>(record.size()));
  const std::string holder = "lw is still held by process " + std::to_string(::getpid()) + " (tune tell) after ";

  const auto t0 = std::chrono::steady_clock::now();
  const Result tell = tune(d, {"tell", "lw", "0", "0.5"}, {{"TUNE_LOCK_WAIT", "1s"}});
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(tell.code, 5) << tell.err;
  EXPECT_NE(tell.err.find(holder + "1.0s of waiting for it"), std::string::npos) << tell.err;
  EXPECT_GE(waited, std::chrono::seconds(1));
  EXPECT_LT(waited, std::chrono::seconds(20));
  const Result ask = tune(d, {"ask", "lw"}, {{"TUNE_LOCK_WAIT", "0"}});
  EXPECT_EQ(ask.code, 5) << ask.err;
  EXPECT_NE(ask.err.find(holder), std::string::npos) << ask.err;
  const Result bad = tune(d, {"tell", "lw", "0", "0.5"}, {{"TUNE_LOCK_WAIT", "soon"}});
  EXPECT_EQ(bad.code, 1) << bad.err;
  EXPECT_NE(bad.err.find("TUNE_LOCK_WAIT='soon' is not a duration"), std::string::npos) << bad.err;

  // Another program's flock (a backup tool, a script) leaves the record of the last tune command to
  // take the lock, long finished, which was named as the holder. The kernel's list of locks tells.
  const std::string stale = "999999 tune ask\n";
  ASSERT_EQ(::ftruncate(fd, 0), 0);
  ASSERT_EQ(::pwrite(fd, stale.data(), stale.size(), 0), static_cast<ssize_t>(stale.size()));
  const Result outside = tune(d, {"ask", "lw"}, {{"TUNE_LOCK_WAIT", "0"}});
  EXPECT_EQ(outside.code, 5) << outside.err;
  EXPECT_NE(outside.err.find("lw is still held by process " + std::to_string(::getpid()) + " (tune_e2e_tests, not a tune "
                             "command) after "),
            std::string::npos)
      << outside.err;

  ::close(fd);
  EXPECT_EQ(tune(d, {"tell", "lw", "0", "0.5"}, {{"TUNE_LOCK_WAIT", "1s"}}).code, 0);
  EXPECT_TRUE(state_of(campaign)["study"]["trials"][0]["value"]);
}


// The number of lines of the toy trainers' log saying a run started, once it reaches `n` (or 30 s pass).
std::size_t wait_for_runs(const fs::path& log, std::size_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::size_t runs = 0;
  for (;;) {
    runs = 0;
    for (const auto& [id, count] : starts(log)) runs += static_cast<std::size_t>(count);
    if (runs >= n || std::chrono::steady_clock::now() >= deadline) return runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The events of the last session in DIR/events.jsonl (from its session_start on).
std::vector<YAML::Node> last_session_events(const fs::path& campaign) {
  const std::vector<YAML::Node> all = events_of(campaign);
  std::size_t start = 0;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i]["event"].as<std::string>() == "session_start") start = i;
  return {all.begin() + static_cast<std::ptrdiff_t>(start), all.end()};
}

// `tune stop` says that the user stopped the tuner (terminal, state, events); a SIGTERM from anyone
// else is still reported as a signal.
TEST(TuneCli, StopByTuneStopIsReportedAsSuchAndAPlainSigtermAsASignal) {
  const fs::path d = fresh_dir("stop-reason");
  write(d / "c.yaml", quadratic_campaign("sr", 4, 1));
  const std::map<std::string, std::string> env{{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"TOY_SLEEP", "30"}};
  const fs::path campaign = d / "sr";
  const fs::path other = fresh_dir("stop-reason-other");  // the tuner's cli.out / cli.err stay in d
  const auto expect_ended = [&](const Result& r, const std::string& reason, const std::string& by) {
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("ended: " + reason + "; 'tune resume' continues"), std::string::npos) << r.err;
    EXPECT_EQ(state_of(campaign)["stop_reason"].as<std::string>(), reason + "; 'tune resume' continues");
    const std::vector<YAML::Node> events = last_session_events(campaign);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back()["event"].as<std::string>(), "session_end");
    EXPECT_EQ(events.back()["reason"].as<std::string>(), reason + "; 'tune resume' continues");
    std::string requested_by;
    for (const YAML::Node& e : events)
      if (e["event"].as<std::string>() == "stop_requested") requested_by = e["by"].as<std::string>();
    EXPECT_EQ(requested_by, by);
  };

  const pid_t tuner = start(d, {"run", "c.yaml"}, env);
  ASSERT_EQ(wait_for_runs(d / "toy.log", 1), 1u);
  const Result stop = tune(other, {"stop", campaign.string()});
  ASSERT_EQ(stop.code, 0) << stop.err;
  expect_ended(finish(d, tuner), "stopped by 'tune stop'", "tune stop");

  const pid_t resumed = start(d, {"resume", "sr"}, env);
  ASSERT_EQ(wait_for_runs(d / "toy.log", 2), 2u);
  ::kill(resumed, SIGTERM);
  expect_ended(finish(d, resumed), "stopped by a signal (SIGTERM)", "SIGTERM");
}

// A launch that throws (here: the supervisor's command record cannot be written where a directory
// stands; on a cluster, sbatch refusing the job) ends the session with an error: the state and the
// event log say so, and the trial, which never started, keeps its attempt number for its first run.
TEST(TuneCli, LaunchErrorEndsTheSessionInTheLogAndSpendsNoAttempt) {
  const fs::path d = fresh_dir("launch-error");
  write(d / "c.yaml", quadratic_campaign("le", 2, 1));
  const fs::path campaign = d / "le";
  const fs::path blocker = campaign / "trials" / "0" / "command.yaml";
  fs::create_directories(blocker);
  const Result failed = tune(d, {"run", "c.yaml", "--quiet"});
  EXPECT_EQ(failed.code, 1) << failed.err;
  EXPECT_NE(failed.err.find(blocker.filename().string()), std::string::npos) << failed.err;
  const YAML::Node s = state_of(campaign);
  EXPECT_EQ(s["stop_reason"].as<std::string>().rfind("error: ", 0), 0u) << s["stop_reason"];
  ASSERT_EQ(s["runs"].size(), 1u);
  EXPECT_EQ(s["runs"][0]["status"].as<std::string>(), "queued");
  EXPECT_EQ(s["runs"][0]["attempts"].as<int>(), 0);
  const std::vector<YAML::Node> events = last_session_events(campaign);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["event"].as<std::string>(), "session_end");
  EXPECT_EQ(events.back()["reason"].as<std::string>(), s["stop_reason"].as<std::string>());

  fs::remove(blocker);
  const Result resumed = tune(d, {"resume", "le", "--quiet"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  std::map<std::uint64_t, std::vector<int>> attempts;  // per trial, the attempt of each launch event
  for (const YAML::Node& e : events_of(campaign))
    if (e["event"].as<std::string>() == "launch") attempts[e["trial"].as<std::uint64_t>()].push_back(e["attempt"].as<int>());
  EXPECT_EQ(attempts[0], std::vector<int>{1});
  EXPECT_EQ(state_of(campaign)["runs"][0]["attempts"].as<int>(), 1);
  EXPECT_FALSE(fs::exists(campaign / "trials" / "0" / "attempts"));
}

// A trial terminated by a stop is collected (cancelled) and re-queued, and its exit record stays in its
// directory until its next launch sets it aside: resume must not take that record for a run to follow
// and collect it a second time.
TEST(TuneCli, ResumeDoesNotCollectAReQueuedTrialsOldExitRecordAgain) {
  const fs::path d = fresh_dir("requeued-stale-exit");
  write(d / "c.yaml", quadratic_campaign("rq", 1, 1));
  const fs::path campaign = d / "rq";
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"}, {{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"TOY_SLEEP", "30"}});
  ASSERT_EQ(wait_for_runs(d / "toy.log", 1), 1u);
  ::kill(tuner, SIGINT);
  ASSERT_EQ(finish(d, tuner).code, 3);
  ASSERT_EQ(state_of(campaign)["runs"][0]["status"].as<std::string>(), "queued");
  ASSERT_TRUE(fs::exists(campaign / "trials" / "0" / "exit.yaml"));  // the cancelled run's

  const Result resumed = tune(d, {"resume", "rq"});  // not --quiet: it logs each collection
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(resumed.err.find("re-attached"), std::string::npos) << resumed.err;
  EXPECT_EQ(resumed.err.find("interrupted"), std::string::npos) << resumed.err;
  std::vector<std::string> kinds;
  for (const YAML::Node& e : last_session_events(campaign)) kinds.push_back(e["event"].as<std::string>());
  EXPECT_EQ(kinds, (std::vector<std::string>{"session_start", "launch", "complete", "session_end"}));
  EXPECT_EQ(state_of(campaign)["runs"][0]["attempts"].as<int>(), 2);
  EXPECT_NE(slurp(campaign / "trials" / "0" / "attempts" / "1" / "exit.yaml").find("cancelled"), std::string::npos);
}

}  // namespace

namespace {

// A trial gets the tuner's PATH, but it runs in DIR/trials/<id>/, where execvp resolves PATH's
// relative entries: the check of the program before the first trial resolves them there too.
TEST(TuneCli, ProgramCheckSearchesRelativePathEntriesFromTheTrialsDirectory) {
  const fs::path d = fresh_dir("relative-path-entry");
  const auto trainer = [](const fs::path& p) {
    fs::create_directories(p.parent_path());
    write(p, "#!/bin/sh\necho loss=1\n");
    fs::permissions(p, fs::perms::owner_exec, fs::perm_options::add);
  };
  trainer(d / "found" / "tools" / "tools-train");  // ../../tools from found/trials/<id>/
  trainer(d / "bin" / "cwd-train");                // bin/ from where the tuner runs only
  const auto campaign = [](const std::string& name, const std::string& program) {
    return "name: " + name + "\ncommand: [" + program + ", \"{x}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\n"
           "objective: {name: loss, direction: minimize}\nbudget: {trials: 1}\n";
  };
  const std::map<std::string, std::string> env{{"PATH", std::string("../../tools:bin:") + std::getenv("PATH")}};
  write(d / "found.yaml", campaign("found", "tools-train"));
  const Result found = tune(d, {"run", "found.yaml", "--quiet"}, env);
  ASSERT_EQ(found.code, 0) << found.err;
  EXPECT_EQ(state_of(d / "found")["study"]["trials"][0]["status"].as<std::string>(), "complete");
  write(d / "missing.yaml", campaign("missing", "cwd-train"));
  const Result missing = tune(d, {"run", "missing.yaml", "--quiet"}, env);
  EXPECT_EQ(missing.code, 1) << missing.err;
  EXPECT_NE(missing.err.find("'cwd-train' is not found on PATH"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("relative entries are searched from " + (d / "missing" / "trials" / "0").string()),
            std::string::npos)
      << missing.err;
  EXPECT_FALSE(fs::exists(d / "missing")) << "refused before the campaign directory was made";
}

}  // namespace

namespace {

// A tuner session that ends with a trial handed out by `tune ask` still awaited (here the trial
// budget is spent by the tuner's own trials) marked the campaign finished: tune status said
// "finished" while a result was still to come. It stays unfinished and says what it awaits; once
// told, a resume finishes it.
TEST(TuneCli, ASessionEndingWithAnAskedTrialAwaitedLeavesTheCampaignUnfinished) {
  const fs::path d = fresh_dir("cli-awaited-ask");
  write(d / "c.yaml", quadratic_campaign_with("w", 3, "{workers: 1}"));
  const Result ask = tune(d, {"ask", "c.yaml"});
  ASSERT_EQ(ask.code, 0) << ask.err;
  ASSERT_EQ(tune(d, {"resume", "w", "--quiet"}).code, 0);
  YAML::Node s = state_of(d / "w");
  EXPECT_FALSE(s["finished"].as<bool>()) << s["stop_reason"];
  EXPECT_TRUE(s["stop_reason"].as<std::string>().find("1 trial handed out by 'tune ask' awaits its result") != std::string::npos)
      << s["stop_reason"];
  const Result status = tune(d, {"status", "w"});
  EXPECT_EQ(status.out.substr(0, status.out.find('\n')).find("finished"), std::string::npos) << status.out;
  ASSERT_EQ(tune(d, {"tell", "w", "0", "0.5"}).code, 0);
  ASSERT_EQ(tune(d, {"resume", "w", "--quiet"}).code, 0);
  s = state_of(d / "w");
  EXPECT_TRUE(s["finished"].as<bool>()) << s["stop_reason"];
  EXPECT_EQ(s["stop_reason"].as<std::string>().find("awaits"), std::string::npos) << s["stop_reason"];
}

}  // namespace

namespace {

// `tune status` listed every trial: 4000 lines at 4000 trials, the summary scrolled away. A campaign
// of up to 50 trials still lists them all; a larger one its 20 most recent, with a line saying how
// many are not shown and how to list them all (--all); --last N is as before.
TEST(TuneCli, StatusOfALargeCampaignListsItsMostRecentTrialsAndSaysHowToListAll) {
  const fs::path d = fresh_dir("cli-status-large");
  write(d / "c.yaml", quadratic_campaign_with("big", 50, "{workers: 4}", "strategy: {name: random}\n"));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const auto ids = [](int from, int to) {
    std::vector<int> out;
    for (int i = from; i < to; ++i) out.push_back(i);
    return out;
  };
  const Result fifty = tune(d, {"status", "big"});
  ASSERT_EQ(fifty.code, 0) << fifty.err;
  EXPECT_EQ(status_trial_ids(fifty.out), ids(0, 50)) << fifty.out;
  EXPECT_EQ(fifty.out.find("not shown"), std::string::npos) << fifty.out;

  ASSERT_EQ(tune(d, {"resume", "big", "--trials", "61", "--quiet"}).code, 0);
  const Result large = tune(d, {"status", "big"});
  ASSERT_EQ(large.code, 0) << large.err;
  EXPECT_NE(large.out.find("trials: 61 complete"), std::string::npos) << large.out;
  EXPECT_EQ(status_trial_ids(large.out), ids(41, 61)) << large.out;
  EXPECT_NE(large.out.find("...  41 earlier trials not shown (none of them failed); 'tune status big --all' lists "
                           "every trial\n"),
            std::string::npos)
      << large.out;
  const Result all = tune(d, {"status", "big", "--all"});
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(status_trial_ids(all.out), ids(0, 61)) << all.out;
  EXPECT_EQ(all.out.find("not shown"), std::string::npos) << all.out;
  const Result last = tune(d, {"status", "big", "--last", "3"});
  EXPECT_EQ(status_trial_ids(last.out), ids(58, 61)) << last.out;
  EXPECT_NE(last.out.find("...  58 earlier trials not shown (none of them failed); 'tune status big --all' lists"),
            std::string::npos)
      << last.out;
  // The summary above the list is the same whatever is listed.
  EXPECT_EQ(large.out.substr(0, large.out.find("   id  status")), all.out.substr(0, all.out.find("   id  status")));
  EXPECT_NE(tune(d, {"status", "big", "--all", "--last", "3"}).code, 0);
  const Result help = tune(d, {"status", "--help"});
  EXPECT_NE(help.out.find("the 20 most recent of a larger one"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--all"), std::string::npos) << help.out;
}

}  // namespace

namespace {

using namespace tune_test;

// A tuner asked to stop with --wait-on-stop waits for its running trials; tune status said only
// "tuner running (process N)", nothing of the stop. It says the tuner is stopping, and how.
TEST(TuneCli, StatusOfATunerThatWaitsOnStopSaysItIsStopping) {
  const fs::path d = fresh_dir("status-stopping");
  write(d / "c.yaml", quadratic_campaign_with("ws", 4, "{workers: 1}"));
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet", "--wait-on-stop"}, {{"TOY_SLEEP", "3"}});
  ASSERT_TRUE(wait_until([&] { return fs::exists(d / "ws" / "trials" / "0" / "supervisor.yaml"); },
                         std::chrono::seconds(10)));
  const Result before = tune(d, {"status", "ws"});
  EXPECT_EQ(before.out.find("stopping"), std::string::npos) << before.out;
  ASSERT_EQ(tune(d, {"stop", "ws"}).code, 0);
  ASSERT_TRUE(wait_until([&] { return slurp(d / "ws" / "events.jsonl").find("stop_requested") != std::string::npos; },
                         std::chrono::seconds(10)));
  const Result during = tune(d, {"status", "ws"});
  EXPECT_NE(during.out.find("tuner running (process " + std::to_string(tuner) +
                            "), stopping (asked by 'tune stop'): no trial starts, and it waits for the running ones to "
                            "end (--wait-on-stop); 'tune stop' again terminates them"),
            std::string::npos)
      << during.out;
  const Result r = finish(d, tuner);
  EXPECT_EQ(r.code, 3) << r.err;
  const Result after = tune(d, {"status", "ws"});
  EXPECT_EQ(after.out.find("stopping"), std::string::npos) << after.out;
}

}  // namespace
