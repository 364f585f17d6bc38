// End-to-end tests of `executor: {kind: slurm}` against a real Slurm cluster: the single-node test
// cluster of scripts/slurm-test-cluster.sh (scripts/run-tests.sh starts it before the tests and stops
// it after). The tests that need the cluster SKIP, with the command that starts it, when `sinfo`
// cannot reach one; SLURM_CONF names its configuration (default /tmp/tune-slurm/slurm.conf).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using namespace tune_test;

// Runs a program (argument vector) to completion; returns its exit code and output.
Result run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {}) {
  char out_name[] = "/tmp/tune-slurm-test-XXXXXX";
  const int out = ::mkstemp(out_name);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out, 1);
    ::dup2(out, 2);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(out);
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_name);
  ::unlink(out_name);
  return r;
}

std::string campaign(const std::string& name, int trials, const std::string& executor, const std::string& extra = "") {
  return quadratic_campaign_with(name, trials, executor, extra);
}

// Writes campaign `name` of `trials` trials with `executor` to DIR/c.yaml and runs it (`tune run
// c.yaml --quiet` in `d`) to its end, with extra environment `env`.
Result run_campaign(const fs::path& d, const std::string& name, int trials, const std::string& executor,
                    const std::map<std::string, std::string>& env = {}) {
  write(d / "c.yaml", campaign(name, trials, executor));
  return tune(d, {"run", "c.yaml", "--quiet"}, env);
}

// The most trials the toy trainer ran at once, from its start/end log.
int max_concurrent(const fs::path& log) {
  std::ifstream in(log);
  std::string word, id, rest;
  int now = 0, most = 0;
  while (in >> word >> id) {
    std::getline(in, rest);
    now += word == "start" ? 1 : -1;
    most = std::max(most, now);
  }
  return most;
}

// The most trials launched and not yet collected at once, from events.jsonl.
int max_in_flight(const fs::path& events) {
  std::ifstream in(events);
  std::string line;
  int now = 0, most = 0;
  while (std::getline(in, line)) {
    if (line.find("\"event\": \"launch\"") != std::string::npos) most = std::max(most, ++now);
    if (line.find("\"event\": \"complete\"") != std::string::npos || line.find("\"event\": \"fail\"") != std::string::npos ||
        line.find("\"event\": \"requeue\"") != std::string::npos)
      --now;
  }
  return most;
}

// Waits until `pred` holds (checked every 100 ms) or `limit` passes; returns whether it held.
template <class Pred>
bool wait_for(Pred pred, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return pred();
}

// Job ids in the state (trials with a recorded job), by trial id; {} while the state is unreadable.
std::map<std::string, std::string> jobs_in_state(const fs::path& dir) {
  std::map<std::string, std::string> jobs;
  try {
    for (const auto& r : state_of(dir)["runs"])
      if (r["job"] && r["status"].as<std::string>() == "running") jobs[r["id"].as<std::string>()] = r["job"].as<std::string>();
  } catch (const std::exception&) {
  }
  return jobs;
}

// Slurm's state of a job (squeue %T), or "" if Slurm does not know it.
std::string slurm_state(const std::string& job) {
  const Result r = run({"squeue", "--noheader", "--states=all", "--jobs=" + job, "--format=%T"});
  return r.code == 0 ? r.out.substr(0, r.out.find('\n')) : "";
}

// Waits until the state of campaign `dir` records `running + pending` jobs, of which Slurm runs
// `running` and holds the others pending; returns them (trial id -> job id), {} if that did not come.
std::map<std::string, std::string> jobs_running_and_pending(const fs::path& dir, std::size_t running, std::size_t pending) {
  std::map<std::string, std::string> jobs;
  const bool held = wait_for([&] { return (jobs = jobs_in_state(dir)).size() == running + pending; }, 60s) &&
                    wait_for([&] {
                      std::multiset<std::string> states;
                      for (const auto& [id, job] : jobs) states.insert(slurm_state(job));
                      return states.count("RUNNING") == running && states.count("PENDING") == pending;
                    }, 30s);
  return held ? jobs : std::map<std::string, std::string>{};
}

// Writes campaign `name` (`trials`, `executor`) to DIR/c.yaml and runs it (`tune run c.yaml` in `d`)
// until Slurm runs `running` of its jobs and holds `pending` in the queue, then kills the tuner with
// SIGKILL; returns the jobs (trial id -> job id), {} if they never were so.
std::map<std::string, std::string> kill_tuner_when_jobs_are(const fs::path& d, const std::string& name, int trials,
                                                            const std::string& executor,
                                                            const std::map<std::string, std::string>& env,
                                                            std::size_t running, std::size_t pending) {
  write(d / "c.yaml", campaign(name, trials, executor));
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"}, env);
  const std::map<std::string, std::string> jobs = jobs_running_and_pending(d / name, running, pending);
  ::kill(tuner, SIGKILL);
  finish(d, tuner);
  return jobs;
}

// Replaces in file `path` each `from` (the first occurrence) by its `to`; the first `from` missing, if any.
std::optional<std::string> replace_in_file(const fs::path& path, const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string text = slurp(path);
  for (const auto& [from, to] : edits) {
    const std::size_t at = text.find(from);
    if (at == std::string::npos) return from;
    text.replace(at, from.size(), to);
  }
  write(path, text);
  return std::nullopt;
}

// At the end of a test, whatever it passed or failed: kills the tuners it left running and cancels
// the jobs it left on the cluster (those whose working directory is under its directory), so that a
// failed test does not hold the node's CPUs for the next.
struct Cleanup {
  fs::path dir;
  ~Cleanup() {
    for (const pid_t pid : live_tuners()) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    live_tuners().clear();
    const Result q = run({"squeue", "--noheader", "--format=%i|%Z"});
    std::istringstream lines(q.out);
    std::string line;
    std::vector<std::string> jobs{"scancel"};
    while (std::getline(lines, line))
      if (const std::size_t bar = line.find('|'); bar != std::string::npos && line.find(dir.string(), bar) == bar + 1)
        jobs.push_back(line.substr(0, bar));
    if (jobs.size() > 1) run(jobs);
  }
};

// Whether the test cluster answers; the reason if not. SLURM_CONF defaults to the test cluster's.
const std::string& slurm_unavailable() {
  static const std::string reason = [] {
    const std::string start = "start the test cluster with 'scripts/slurm-test-cluster.sh start' (scripts/run-tests.sh "
                              "does) and set SLURM_CONF";
    if (!std::getenv("SLURM_CONF")) {
      // The test cluster's default state directory; without its pid list it is not running (and
      // sinfo would spend seconds retrying to find that out).
      if (!fs::exists("/tmp/tune-slurm/pids")) return "no Slurm cluster: SLURM_CONF is not set and the test cluster is not running; " + start;
      ::setenv("SLURM_CONF", "/tmp/tune-slurm/slurm.conf", 1);
    }
    const Result r = run({"sinfo", "--noheader", "--format=%T"});
    // idle, mixed, allocated, completing: up; down, drained, failing, unknown or not responding (*): not.
    const std::string state = r.out.substr(0, r.out.find('\n'));
    bool up = r.code == 0 && !state.empty() && state.find('*') == std::string::npos;
    for (const char* bad : {"down", "drain", "fail", "unk", "maint", "inval"}) up = up && state.rfind(bad, 0) != 0;
    if (up) return std::string();
    return "no Slurm cluster answers (sinfo: exit " + std::to_string(r.code) + ", '" +
           r.out.substr(0, r.out.find('\n')) + "'); " + start;
  }();
  return reason;
}

// One test at a time on the cluster, across test processes and build directories (ctest's
// RESOURCE_LOCK only orders one ctest run): an flock held until the process exits.
void lock_cluster() {
  static const int fd = [] {
    const std::string path = "/tmp/tune-slurm-tests." + std::to_string(::getuid()) + ".lock";
    const int f = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (f >= 0) ::flock(f, LOCK_EX);
    return f;
  }();
  (void)fd;
}

#define REQUIRE_SLURM()                                                    \
  do {                                                                     \
    if (!slurm_unavailable().empty()) GTEST_SKIP() << slurm_unavailable(); \
    lock_cluster();                                                        \
  } while (0)

TEST(Slurm, TwentyTrialsWithTwoJobsInFlightCompleteWithTheTrainersValues) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-twenty");
  const Cleanup cleanup{d};
  const Result r = run_campaign(d, "twenty", 20, "{kind: slurm, workers: 2, cpus: 1, poll: 1s}",
                                {{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"TOY_SLEEP", "0.5"}});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node s = state_of(d / "twenty");
  ASSERT_EQ(s["study"]["trials"].size(), 20u);
  std::set<std::string> jobs;
  for (const auto& run : s["runs"]) {
    EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
    EXPECT_EQ(run["attempts"].as<int>(), 1);
    ASSERT_TRUE(run["job"]) << "no job id recorded: " << run;
    EXPECT_TRUE(jobs.insert(run["job"].as<std::string>()).second) << "job " << run["job"] << " twice";
  }
  // The recorded values are those the trainer printed in its job.
  for (const auto& t : s["study"]["trials"]) {
    const std::string out = slurp(d / "twenty" / "trials" / t["id"].as<std::string>() / "stdout");
    ASSERT_EQ(out.rfind("loss=", 0), 0u) << out;
    EXPECT_DOUBLE_EQ(t["value"].as<double>(), std::stod(out.substr(5)));
  }
  const auto n = starts(d / "toy.log");
  EXPECT_EQ(n.size(), 20u);
  for (const auto& [id, count] : n) EXPECT_EQ(count, 1) << "trial " << id;
  // Two jobs in flight as the tuner sees them (submitted, not yet collected), never more; as many
  // trainers at once at most (fewer when other jobs hold the node's CPUs).
  EXPECT_EQ(max_in_flight(d / "twenty" / "events.jsonl"), 2);
  EXPECT_LE(max_concurrent(d / "toy.log"), 2);
}

TEST(Slurm, JobOverItsSlurmTimeLimitIsRecordedAsTimeout) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-timeout");
  const Cleanup cleanup{d};
  // Slurm's smallest limit is a minute, checked every 30 s: this takes 60-100 s.
  const Result r = run_campaign(d, "tl", 1, "{kind: slurm, workers: 1, time: 1m, poll: 1s}", {{"TOY_SLEEP", "600"}});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node run = state_of(d / "tl")["runs"][0];
  EXPECT_EQ(run["status"].as<std::string>(), "failed") << run;
  EXPECT_EQ(run["exit"]["kind"].as<std::string>(), "timeout") << run;
  EXPECT_NE(run["failure_reason"].as<std::string>().find("TIMEOUT"), std::string::npos) << run;
  EXPECT_EQ(slurm_state(run["job"].as<std::string>()), "TIMEOUT");
}

TEST(Slurm, ScancelFromOutsideIsRecordedAsCancelled) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-scancel");
  const Cleanup cleanup{d};
  write(d / "c.yaml", campaign("sc", 1, "{kind: slurm, workers: 1, poll: 1s}"));
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"}, {{"TOY_SLEEP", "600"}});
  std::string job;
  ASSERT_TRUE(wait_for([&] {
    const auto jobs = jobs_in_state(d / "sc");
    if (jobs.empty()) return false;
    job = jobs.begin()->second;
    return slurm_state(job) == "RUNNING";
  }, 60s)) << "the trial's job never ran";
  // tune status names the running trial's job, to match it with squeue (once the job's supervisor
  // has started the trial on the node: before that it is pending).
  Result status;
  EXPECT_TRUE(wait_for([&] { return (status = tune(d, {"status", "sc"})).out.find("Slurm job " + job + "\n") != std::string::npos; }, 30s))
      << status.out;
  ASSERT_EQ(run({"scancel", job}).code, 0);
  const Result r = finish(d, tuner);
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node run0 = state_of(d / "sc")["runs"][0];
  EXPECT_EQ(run0["status"].as<std::string>(), "failed") << run0;
  EXPECT_EQ(run0["exit"]["kind"].as<std::string>(), "aborted") << run0;
  EXPECT_NE(run0["failure_reason"].as<std::string>().find("cancelled outside the tuner"), std::string::npos) << run0;
  EXPECT_EQ(slurm_state(job), "CANCELLED");
}

TEST(Slurm, StopCancelsTheTunersJobsAndOnlyThose) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-stop");
  const Cleanup cleanup{d};
  // A job that is not the tuner's, holding one of the two CPUs: the tuner's second job waits.
  const Result other = run({"sbatch", "--parsable", "--job-name=not-the-tuners", "--cpus-per-task=1",
                            "--output=/dev/null", "--wrap", "sleep 300"});
  ASSERT_EQ(other.code, 0) << other.out;
  const std::string other_job = other.out.substr(0, other.out.find_first_of(";\n"));
  write(d / "c.yaml", campaign("st", 4, "{kind: slurm, workers: 2, cpus: 1, poll: 1s}"));
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"}, {{"TOY_SLEEP", "600"}});
  std::map<std::string, std::string> jobs;
  ASSERT_TRUE(wait_for([&] { return (jobs = jobs_in_state(d / "st")).size() == 2; }, 60s));
  ASSERT_TRUE(wait_for([&] {
    std::set<std::string> states;
    for (const auto& [id, job] : jobs) states.insert(slurm_state(job));
    return states == std::set<std::string>{"PENDING", "RUNNING"};
  }, 60s)) << "expected one job running and one pending";
  const Result stop = tune(d, {"stop", "st"});
  EXPECT_EQ(stop.code, 0) << stop.err;
  const Result r = finish(d, tuner);
  EXPECT_EQ(r.code, 3) << r.err;
  for (const auto& [id, job] : jobs) EXPECT_EQ(slurm_state(job), "CANCELLED") << "job " << job;
  const std::string other_state = slurm_state(other_job);
  EXPECT_TRUE(other_state == "RUNNING" || other_state == "PENDING") << other_state;
  run({"scancel", other_job});
  // The stopped trials wait to run again on resume.
  for (const auto& runrec : state_of(d / "st")["runs"]) {
    EXPECT_EQ(runrec["status"].as<std::string>(), "queued") << runrec;
    EXPECT_EQ(runrec["exit"]["kind"].as<std::string>(), "cancelled") << runrec;
  }
}

// `--wait-on-stop` let the running job finish but also left the pending one in the queue, and the
// tuner waited for it to start and run (on a busy cluster, hours) although asked to stop.
TEST(Slurm, StopWithWaitOnStopCancelsPendingJobsAndLetsRunningOnesFinish) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-wait-on-stop");
  const Cleanup cleanup{d};
  // Three jobs of 2 CPUs each on the node's two CPUs: one runs, two wait.
  write(d / "c.yaml", campaign("ws", 6, "{kind: slurm, workers: 3, cpus: 2, poll: 1s}"));
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet", "--wait-on-stop"}, {{"TOY_SLEEP", "6"}});
  std::map<std::string, std::string> jobs;
  ASSERT_TRUE(wait_for([&] { return (jobs = jobs_in_state(d / "ws")).size() == 3; }, 60s));
  ASSERT_TRUE(wait_for([&] {
    std::multiset<std::string> states;
    for (const auto& [id, job] : jobs) states.insert(slurm_state(job));
    return states == std::multiset<std::string>{"PENDING", "PENDING", "RUNNING"};
  }, 60s)) << "expected one job running and two pending";
  // tune status tells the jobs waiting in Slurm's queue from the one running: all three were shown
  // as running since their submission.
  Result shown;
  EXPECT_TRUE(wait_for([&] {
    shown = tune(d, {"status", "ws"});
    return shown.out.find("3 running (2 of them pending in the Slurm queue)") != std::string::npos;
  }, 30s)) << shown.out;
  std::size_t pending_rows = 0, pending_jobs = 0;
  for (const auto& [id, job] : jobs) {
    const bool pending = slurm_state(job) == "PENDING";
    pending_rows += shown.out.find("\n    " + id + "  pending ") != std::string::npos;
    pending_jobs += pending && shown.out.find("Slurm job " + job + ", pending in the queue since its submission") !=
                                  std::string::npos;
  }
  EXPECT_EQ(pending_rows, 2u) << shown.out;
  EXPECT_EQ(pending_jobs, 2u) << shown.out;
  const Result stop = tune(d, {"stop", "ws"});
  EXPECT_EQ(stop.code, 0) << stop.err;
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = finish(d, tuner);
  EXPECT_EQ(r.code, 3) << r.err;
  // The running job's 6 s, not three jobs one after the other.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 12s);
  std::map<std::string, int> by_status;
  for (const auto& runrec : state_of(d / "ws")["runs"]) {
    const std::string status = runrec["status"].as<std::string>();
    ++by_status[status];
    if (status == "queued") {
      EXPECT_EQ(runrec["exit"]["kind"].as<std::string>(), "cancelled") << runrec;
      EXPECT_FALSE(fs::exists(d / "ws" / "trials" / runrec["id"].as<std::string>() / "stdout")) << "a pending job ran";
    }
  }
  EXPECT_EQ(by_status["complete"], 1);  // the one that was running finished
  EXPECT_EQ(by_status["queued"], 2);    // the pending ones run again on resume
  for (const auto& [id, job] : jobs) EXPECT_NE(slurm_state(job), "PENDING") << "job " << job;
}

TEST(Slurm, SpentWallBudgetCancelsPendingJobsAndLetsRunningOnesFinish) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-wall");
  const Cleanup cleanup{d};
  // Four jobs in flight on two CPUs, each 5 s; the wall budget is spent while two still wait.
  std::string text = campaign("w", 10, "{kind: slurm, workers: 4, cpus: 1, poll: 1s}");
  const std::string budget = "budget: {trials: 10}";
  text.replace(text.find(budget), budget.size(), "budget: {trials: 10, wall: 3s}");
  write(d / "c.yaml", text);
  const Result r = tune(d, {"run", "c.yaml", "--quiet"}, {{"TOY_SLEEP", "5"}});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node s = state_of(d / "w");
  EXPECT_NE(s["stop_reason"].as<std::string>().find("wall-time budget"), std::string::npos) << s["stop_reason"];
  std::map<std::string, int> by_status;
  for (const auto& run : s["runs"]) {
    ++by_status[run["status"].as<std::string>()];
    if (run["status"].as<std::string>() == "queued") {
      EXPECT_EQ(run["exit"]["kind"].as<std::string>(), "cancelled") << run;
      EXPECT_FALSE(fs::exists(d / "w" / "trials" / run["id"].as<std::string>() / "stdout")) << "a cancelled job ran";
    }
  }
  EXPECT_EQ(by_status["complete"], 2);  // the two that were running when the budget ran out
  EXPECT_EQ(by_status["queued"], 2);    // the two that were still pending
}

TEST(Slurm, KillNineWithJobsPendingAndRunningThenResumeCollectsEveryJobOnce) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-kill9");
  const Cleanup cleanup{d};
  const std::map<std::string, std::string> env{{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"TOY_SLEEP", "3"}};
  // Four jobs in flight on two CPUs: two run, two wait.
  const std::map<std::string, std::string> jobs =
      kill_tuner_when_jobs_are(d, "k", 8, "{kind: slurm, workers: 4, cpus: 1, poll: 1s}", env, 2, 2);
  ASSERT_FALSE(jobs.empty());
  // While the tuner is dead the running jobs finish and the pending ones start.
  std::this_thread::sleep_for(4s);
  const pid_t tuner = start(d, {"resume", "k", "--quiet"}, env);
  // Killed again a little later, in the middle of its second batch; then resumed to the end.
  std::this_thread::sleep_for(2500ms);
  ::kill(tuner, SIGKILL);
  finish(d, tuner);
  std::this_thread::sleep_for(1s);
  const Result r = tune(d, {"resume", "k", "--quiet"}, env);
  ASSERT_EQ(r.code, 0) << r.err;

  const YAML::Node s = state_of(d / "k");
  ASSERT_EQ(s["study"]["trials"].size(), 8u);
  std::set<std::string> job_ids;
  for (const auto& run : s["runs"]) {
    EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
    EXPECT_EQ(run["attempts"].as<int>(), 1) << run;  // no job was submitted twice
    ASSERT_TRUE(run["job"]) << run;
    EXPECT_TRUE(job_ids.insert(run["job"].as<std::string>()).second);
  }
  for (const auto& [id, job] : jobs) EXPECT_EQ(s["runs"][std::stoi(id)]["job"].as<std::string>(), job);
  const auto n = starts(d / "toy.log");
  EXPECT_EQ(n.size(), 8u);
  for (const auto& [id, count] : n) EXPECT_EQ(count, 1) << "trial " << id << " ran " << count << " times";
  for (const auto& t : s["study"]["trials"]) {
    const std::string out = slurp(d / "k" / "trials" / t["id"].as<std::string>() / "stdout");
    ASSERT_EQ(out.rfind("loss=", 0), 0u) << out;
    EXPECT_DOUBLE_EQ(t["value"].as<double>(), std::stod(out.substr(5)));
  }
}

// A tuner killed after it cancelled its jobs (tune stop then kill -9, a third Ctrl-C) and before it
// collected them: the next session found the jobs CANCELLED and failed their trials as "cancelled
// outside the tuner", although the tuner had said they would run again. The request is recorded in
// the trial directory before scancel.
TEST(Slurm, JobsTheTunerCancelledBeforeItWasKilledRunAgainOnResume) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-cancelled-then-killed");
  const Cleanup cleanup{d};
  write(d / "c.yaml", campaign("ck", 2, "{kind: slurm, workers: 2, cpus: 1, poll: 1s}"));
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"}, {{"TOY_SLEEP", "600"}});
  std::map<std::string, std::string> jobs;
  ASSERT_TRUE(wait_for([&] { return (jobs = jobs_in_state(d / "ck")).size() == 2; }, 60s));
  ASSERT_TRUE(wait_for([&] {
    for (const auto& [id, job] : jobs)
      if (slurm_state(job) != "RUNNING") return false;
    return true;
  }, 60s));
  ::kill(tuner, SIGTERM);  // as tune stop: the tuner cancels its jobs
  const auto requested = [&] {
    for (const auto& [id, job] : jobs)
      if (!fs::exists(d / "ck" / "trials" / id / "scancel-requested")) return false;
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!requested() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(requested());
  ::kill(tuner, SIGKILL);  // before it saw the jobs end
  finish(d, tuner);
  for (const auto& [id, job] : jobs) EXPECT_EQ(slurp(d / "ck" / "trials" / id / "scancel-requested"), job + "\n");
  ASSERT_TRUE(wait_for([&] {
    for (const auto& [id, job] : jobs)
      if (slurm_state(job) != "CANCELLED") return false;
    return true;
  }, 60s));
  const Result r = tune(d, {"resume", "ck", "--quiet"}, {{"TOY_SLEEP", "0"}});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& run : state_of(d / "ck")["runs"]) {
    EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
    EXPECT_EQ(run["attempts"].as<int>(), 2) << run;
  }
}

TEST(Slurm, ResumeFindsAnUnrecordedJobByNameAndJudgesAForgottenJobByItsDirectory) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-lookup");
  const Cleanup cleanup{d};
  write(d / "c.yaml", campaign("lk", 2, "{kind: slurm, workers: 2, cpus: 1, poll: 1s}"));
  const std::map<std::string, std::string> env{{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"TOY_SLEEP", "3"}};
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"}, env);
  std::map<std::string, std::string> jobs;
  ASSERT_TRUE(wait_for([&] { return (jobs = jobs_in_state(d / "lk")).size() == 2; }, 60s));
  ::kill(tuner, SIGKILL);
  finish(d, tuner);
  // As if the tuner had died between sbatch and its checkpoint (trial 0: no job id recorded), and as
  // if Slurm had forgotten trial 1's job (an id it does not know): the state is edited accordingly.
  const std::optional<std::string> missing = replace_in_file(
      d / "lk" / "state.yaml", {{", job: " + jobs.at("0") + "}", "}"}, {", job: " + jobs.at("1") + "}", ", job: 999999}"}});
  ASSERT_FALSE(missing) << *missing << " is not in the state";
  // Trial 1's job must be over before the tuner looks at it, so that its directory decides.
  ASSERT_TRUE(wait_for([&] { return fs::exists(d / "lk" / "trials" / "1" / "exit.yaml"); }, 60s));
  const Result r = tune(d, {"resume", "lk", "--quiet"}, env);
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node s = state_of(d / "lk");
  for (const auto& run : s["runs"]) {
    EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
    EXPECT_EQ(run["attempts"].as<int>(), 1) << run;
  }
  EXPECT_EQ(s["runs"][0]["job"].as<std::string>(), jobs.at("0"));  // found by its name and directory
  const auto n = starts(d / "toy.log");
  EXPECT_EQ(n.size(), 2u);
  for (const auto& [id, count] : n) EXPECT_EQ(count, 1) << "trial " << id;
}

// Slurm may declare a job's node failed (NODE_FAIL) while the node still runs it, cut off from the
// controller: the trial is re-queued, but its supervisor still holds the trial directory. The tuner
// submitted a second job anyway, whose supervisor backed off ("already supervised"), and the trial
// failed with "before the trial started" while its first run went on unfollowed. A re-queued trial
// whose directory a live supervisor holds is followed through that directory instead.
TEST(Slurm, ARequeuedTrialWhoseFirstRunStillRunsIsFollowedNotSubmittedAgain) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-still-running");
  const Cleanup cleanup{d};
  const std::map<std::string, std::string> env{{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"TOY_SLEEP", "5"}};
  const std::map<std::string, std::string> jobs =
      kill_tuner_when_jobs_are(d, "sr", 1, "{kind: slurm, workers: 1, cpus: 1, poll: 1s}", env, 1, 0);
  ASSERT_FALSE(jobs.empty());
  // As the tuner records a run lost to NODE_FAIL: re-queued, no job, one loss.
  const std::optional<std::string> missing =
      replace_in_file(d / "sr" / "state.yaml",
                      {{"status: running", "status: queued"}, {", job: " + jobs.at("0") + "}", ", lost: 1}"}});
  ASSERT_FALSE(missing) << *missing << " is not in the state";
  const Result r = tune(d, {"resume", "sr", "--quiet"}, env);
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node run = state_of(d / "sr")["runs"][0];
  EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
  EXPECT_EQ(run["attempts"].as<int>(), 1) << run;
  const auto n = starts(d / "toy.log");
  EXPECT_EQ(n.size(), 1u);
  for (const auto& [id, count] : n) EXPECT_EQ(count, 1) << "trial " << id;
  // No second job since the first (one of an earlier run of this test may be remembered still).
  std::istringstream second(::run({"squeue", "--noheader", "--states=all", "--name=sr.0.2", "--format=%i"}).out);
  for (std::string job; second >> job;) EXPECT_LT(std::stol(job), std::stol(jobs.at("0"))) << "a second job, " << job;
}

TEST(Slurm, RefusedJobIsAClearError) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-refused");
  const Cleanup cleanup{d};
  const Result r = run_campaign(d, "bad", 2, "{kind: slurm, partition: no-such-partition}");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("the cluster refused the job"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("invalid partition"), std::string::npos) << r.err;
  // Nothing is left running, and the trial is not recorded as running.
  EXPECT_FALSE(fs::exists(d / "bad" / "tuner.pid"));
  EXPECT_EQ(state_of(d / "bad")["runs"][0]["status"].as<std::string>(), "queued");
}

// The directory on the PATH that holds `program`, or "" if none does.
std::string program_on_path(const std::string& program) {
  std::istringstream dirs(std::getenv("PATH") ? std::getenv("PATH") : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((fs::path(dir) / program).c_str(), X_OK) == 0) return (fs::path(dir) / program).string();
  return "";
}

// A controller that does not answer sbatch (restarted, overloaded) ended the session with "the
// cluster refused the job ... check executor.partition, ...": the campaign stopped for a passing
// outage, with a fix that was not one. The tuner keeps the trial queued and submits it once the
// controller answers. An sbatch wrapper answers as an unreachable controller while d/down exists.
TEST(Slurm, AControllerThatDoesNotAnswerSbatchDelaysTheTrialAndEndsNoSession) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-controller-down");
  const Cleanup cleanup{d};
  const std::string sbatch = program_on_path("sbatch");
  ASSERT_FALSE(sbatch.empty());
  fs::create_directories(d / "bin");
  write_script(d / "bin", "sbatch",
               "#!/bin/sh\nif [ -e '" + (d / "down").string() + "' ]; then echo refused >> '" + (d / "refusals").string() +
                   "'; echo 'sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect "
                   "failure)' >&2; exit 1; fi\nexec '" + sbatch + "' \"$@\"\n");
  write(d / "down", "");
  write(d / "c.yaml", campaign("cd", 3, "{kind: slurm, workers: 1, cpus: 1, poll: 1s}"));
  const std::map<std::string, std::string> env{{"TUNE_TOY_LOG", (d / "toy.log").string()},
                                               {"PATH", (d / "bin").string() + ":" + std::getenv("PATH")}};
  const pid_t tuner = start(d, {"run", "c.yaml"}, env);
  ASSERT_TRUE(wait_for([&] { return fs::exists(d / "refusals") || !alive(tuner); }, 60s));
  EXPECT_TRUE(alive(tuner)) << slurp(d / "cli.err");
  fs::remove(d / "down");
  const Result r = finish(d, tuner);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("the Slurm controller did not answer sbatch"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("refused the job"), std::string::npos) << r.err;
  const YAML::Node s = state_of(d / "cd");
  ASSERT_EQ(s["runs"].size(), 3u);
  for (const auto& run : s["runs"]) {
    EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
    EXPECT_EQ(run["attempts"].as<int>(), 1) << run;
  }
  const auto n = starts(d / "toy.log");
  EXPECT_EQ(n.size(), 3u);
  for (const auto& [id, count] : n) EXPECT_EQ(count, 1) << "trial " << id << " ran " << count << " times";
}

// A campaign directory moved while the tuner was down is resumed at its new path (README: Crash
// safety), but its jobs still waiting in the queue were submitted with the old path: they started
// there, found nothing, and their trials failed with "the campaign directory must be on a file
// system shared with the compute nodes". The resumed tuner cancels them and submits them again
// from the new path; the job that ran through the move is collected as usual.
TEST(Slurm, JobsPendingWhenTheCampaignMovedRunFromItsNewPath) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-moved");
  const Cleanup cleanup{d};
  const std::map<std::string, std::string> env{{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"TOY_SLEEP", "3"}};
  // Three jobs of two CPUs on the node's two: one runs, two wait.
  const std::map<std::string, std::string> jobs =
      kill_tuner_when_jobs_are(d, "mv", 3, "{kind: slurm, workers: 3, cpus: 2, poll: 1s}", env, 1, 2);
  ASSERT_FALSE(jobs.empty());
  fs::rename(d / "mv", d / "moved");
  const Result r = tune(d, {"resume", "moved", "--quiet"}, env);
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node s = state_of(d / "moved");
  ASSERT_EQ(s["runs"].size(), 3u);
  for (const auto& run : s["runs"]) EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
  const auto n = starts(d / "toy.log");
  EXPECT_EQ(n.size(), 3u);
  for (const auto& [id, count] : n) EXPECT_EQ(count, 1) << "trial " << id << " ran " << count << " times";
  for (const auto& [id, job] : jobs) EXPECT_NE(slurm_state(job), "PENDING") << "job " << job << " left in the queue";
}

// executor.extra's lines are "written as sbatch reads them", but sbatch splits a #SBATCH line at
// blanks: `--comment=lr sweep 3` was refused by the cluster ("Invalid directive found in batch
// script: sweep") and ended the campaign. An --option=value is passed with its whole value.
TEST(Slurm, AnExtraOptionWhoseValueHoldsSpacesReachesSlurmWhole) {
  REQUIRE_SLURM();
  // The comment Slurm recorded for a one-trial campaign `name` with `extra` (a YAML flow list).
  const auto comment_of = [](const std::string& name, const std::string& extra) {
    const fs::path d = fresh_dir("slurm-extra-" + name);
    const Cleanup cleanup{d};
    const Result r = run_campaign(d, name, 1, "{kind: slurm, extra: " + extra + ", poll: 1s}");
    EXPECT_EQ(r.code, 0) << r.err;
    const YAML::Node run = state_of(d / name)["runs"][0];
    EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
    return ::run({"squeue", "--noheader", "--states=all", "--jobs=" + run["job"].as<std::string>(), "--format=%k"}).out;
  };
  EXPECT_EQ(comment_of("spaces", "[\"--comment=lr sweep 3, it's ok\"]"), "lr sweep 3, it's ok\n");
  // Both kinds of quote, which no #SBATCH line can carry (sbatch: "Unmatched `'`"): passed on
  // sbatch's command line.
  EXPECT_EQ(comment_of("quotes", "['--comment=say \"hi\", it''s ok']"), "say \"hi\", it's ok\n");
}

// Runs campaign `name` (one trial, partition 'low') and preempts its job as soon as it runs, with a
// job in partition 'high' that needs every CPU of the node; returns the tuner's result. (The test
// cluster's 'high' partition preempts 'low' by cancelling: state PREEMPTED.)
Result run_preempted(const fs::path& d, const std::string& name, int retries) {
  write(d / (name + ".yaml"), campaign(name, 1, "{kind: slurm, workers: 1, partition: low, poll: 1s, retries: " +
                                                    std::to_string(retries) + "}"));
  const pid_t tuner = start(d, {"run", name + ".yaml", "--quiet"},
                            {{"TUNE_TOY_LOG", (d / (name + ".log")).string()}, {"TOY_SLEEP", "4"}});
  std::string job;
  const bool running = wait_for([&] {
    const auto jobs = jobs_in_state(d / name);
    return !jobs.empty() && slurm_state(job = jobs.begin()->second) == "RUNNING";
  }, 60s);
  const Result cpus = run({"sinfo", "--noheader", "--nodes=localhost", "--format=%c"});
  const Result high = run({"sbatch", "--parsable", "--partition=high", "--cpus-per-task=" + cpus.out.substr(0, cpus.out.find('\n')),
                           "--output=/dev/null", "--wrap", "sleep 1"});
  Result r = finish(d, tuner);
  EXPECT_TRUE(running) << "the trial's job never ran";
  EXPECT_EQ(high.code, 0) << high.out;
  EXPECT_EQ(slurm_state(job), "PREEMPTED") << "job " << job;
  return r;
}

// Preemption changes what runs on the whole node, so ctest runs these alone (RUN_SERIAL).
TEST(SlurmSerial, PreemptedJobRunsAgainUpToTheRetryLimit) {
  REQUIRE_SLURM();
  const fs::path d = fresh_dir("slurm-preempt");
  const Cleanup cleanup{d};
  // retries: 1: preempted once, the trial runs again and completes.
  Result r = run_preempted(d, "again", 1);
  ASSERT_EQ(r.code, 0) << r.err;
  YAML::Node run = state_of(d / "again")["runs"][0];
  EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
  EXPECT_EQ(run["attempts"].as<int>(), 2) << run;
  EXPECT_EQ(run["lost"].as<int>(), 1) << run;
  EXPECT_EQ(starts(d / "again.log").at("0"), 2);
  // retries: 0: the first preemption fails the trial, saying why.
  r = run_preempted(d, "once", 0);
  ASSERT_EQ(r.code, 0) << r.err;
  run = state_of(d / "once")["runs"][0];
  EXPECT_EQ(run["status"].as<std::string>(), "failed") << run;
  EXPECT_EQ(run["exit"]["kind"].as<std::string>(), "lost") << run;
  EXPECT_NE(run["failure_reason"].as<std::string>().find("PREEMPTED"), std::string::npos) << run;
  EXPECT_NE(run["failure_reason"].as<std::string>().find("executor.retries = 0"), std::string::npos) << run;
}

// These need no cluster.

TEST(Slurm, MissingSbatchIsAClearError) {
  const fs::path d = fresh_dir("slurm-no-sbatch");
  const Result r = run_campaign(d, "nos", 2, "{kind: slurm}", {{"PATH", "/nonexistent"}});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("'sbatch' is not on the PATH"), std::string::npos) << r.err;
}

TEST(Slurm, InvalidExecutorBlocksNameTheLineTheFieldAndTheFix) {
  const fs::path d = fresh_dir("slurm-invalid");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"{kind: slurm, memory: lots}", "field 'executor.memory' at line 8"},
      {"{kind: slurm, time: forever}", "field 'executor.time' at line 8"},
      {"{kind: slurm, cpus: 0}", "field 'executor.cpus' at line 8"},
      {"{kind: slurm, partition: \"a b\"}", "field 'executor.partition' at line 8"},
      {"{kind: slurm, extra: --exclusive}", "field 'executor.extra' at line 8"},
      {"{kind: slurm, partiton: gpu}", "field 'executor.partiton' at line 8"},
      {"{kind: local, partition: gpu}", "add 'kind: slurm'"},
      {"{kind: pbs}", "expected 'local' (subprocesses on this machine) or 'slurm'"},
  };
  for (const auto& [executor, expected] : cases) {
    write(d / "c.yaml", campaign("inv", 2, executor));
    const Result r = tune(d, {"run", "c.yaml", "--quiet"});
    EXPECT_EQ(r.code, 1) << executor;
    EXPECT_NE(r.err.find(expected), std::string::npos) << executor << ": " << r.err;
  }
}

}  // namespace
