// Sessions at their edges, found by dogfooding: a campaign directory moved while its trials ran, a
// re-queued trial whose collected run's supervisor has not exited yet, a resume typed right after a
// kill -9 while the killed tuner is still a zombie. Each instant is staged (a held lock, a trainer
// that waits for a file, an unreaped process) rather than hoped for.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// How long a test waits for a process or a file (polling).
constexpr std::chrono::seconds kPatience{20};

// How many lines of events.jsonl in `dir` are events `event` (of trial `trial` if given).
int count_events(const fs::path& dir, const std::string& event, int trial = -1) {
  std::istringstream in(slurp(dir / "events.jsonl"));
  int n = 0;
  for (std::string line; std::getline(in, line);)
    n += line.find("\"event\": \"" + event + "\"") != std::string::npos &&
         (trial < 0 || line.find("\"trial\": " + std::to_string(trial) + ",") != std::string::npos ||
          line.find("\"trial\": " + std::to_string(trial) + "}") != std::string::npos);
  return n;
}

// A trainer that logs its start to `log`, waits until the file `go` exists, and reports loss = x.
fs::path waiting_trainer(const fs::path& dir, const fs::path& log, const fs::path& go) {
  return write_script(dir, "wait.sh",
                      "#!/bin/sh\necho \"start $TUNE_TRIAL_ID\" >> " + log.string() + "\nwhile [ ! -e " + go.string() +
                          " ]; do sleep 0.05; done\necho \"loss=$1\"\necho \"end $TUNE_TRIAL_ID\" >> " + log.string() +
                          "\n");
}

std::string waiting_campaign(const std::string& name, const fs::path& trainer, int trials, int workers) {
  return "name: " + name + "\ncommand: [" + trainer.string() +
         ", \"{x}\"]\nspace:\n  x: {type: float, low: -1, high: 1}\nobjective: {name: loss, direction: minimize}\n"
         "budget: {trials: " + std::to_string(trials) + "}\nexecutor: {workers: " + std::to_string(workers) + "}\n";
}

// A campaign directory moved (renamed) while its trials ran: the supervisors were given the old
// paths, so the resumed tuner found none of them ("its run was lost"), ran both trials again beside
// the first runs, and the first runs' exit records, written to the old path, were lost. Now the
// supervisors are recognised by the supervisor.lock they hold open and write their records where
// the directory is now: the runs are re-attached and collected, each trial ran once.
TEST(TuneSessionsDogfood, ACampaignMovedWhileItsTrialsRunReattachesThem) {
  const fs::path d = fresh_dir("sessions-moved");
  const fs::path log = d / "runs.log", go = d / "go";
  write(d / "c.yaml", waiting_campaign("p", waiting_trainer(d, log, go), 2, 2));
  const pid_t first = start(d, {"run", "c.yaml", "--quiet"});
  const bool both_started = wait_until([&] {
    return fs::exists(d / "p" / "trials" / "0" / "supervisor.yaml") &&
           fs::exists(d / "p" / "trials" / "1" / "supervisor.yaml") && starts(log).size() == 2;
  }, kPatience);
  ::kill(first, SIGKILL);
  finish(d, first);
  if (!both_started) write(go, "");
  ASSERT_TRUE(both_started);
  fs::rename(d / "p", d / "moved");

  const pid_t resumed = start(d, {"resume", "moved", "--quiet"});
  // Released once the resumed tuner has decided what to do with the running trials (they wait so
  // long, both decisions happen while they run).
  const bool began = wait_until([&] { return count_events(d / "moved", "session_start") == 2; }, kPatience);
  write(go, "");
  const Result r = finish(d, resumed);
  ASSERT_TRUE(began);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto started = starts(log);
  EXPECT_EQ(started.at("0"), 1) << "trial 0 ran again";
  EXPECT_EQ(started.at("1"), 1) << "trial 1 ran again";
  const YAML::Node s = state_of(d / "moved");
  for (int id : {0, 1}) {
    EXPECT_EQ(s["runs"][id]["status"].as<std::string>(), "complete") << "trial " << id;
    EXPECT_EQ(s["runs"][id]["attempts"].as<int>(), 1) << "trial " << id;
    EXPECT_EQ(count_events(d / "moved", "reattach", id), 1) << "trial " << id;
    EXPECT_EQ(count_events(d / "moved", "complete", id), 1) << "trial " << id;
    EXPECT_TRUE(fs::exists(d / "moved" / "trials" / std::to_string(id) / "exit.yaml")) << "trial " << id;
  }
  EXPECT_EQ(count_events(d / "moved", "requeue"), 0);
}

// The same move, with the trial's supervisor killed (-9, the OOM killer) while no tuner ran: what is
// left of its command is found by the resume through TUNE_TRIAL_DIR, which names the old place, so
// its child ran on beside the trial's next attempt. It works in the trial directory, wherever that
// has moved: found by that now, and killed.
TEST(TuneSessionsDogfood, AMovedCampaignsDeadSupervisorLeavesNothingRunning) {
  const fs::path d = fresh_dir("sessions-moved-leftover");
  const fs::path trainer = write_script(d, "stay.sh",
                                        "#!/bin/sh\nif [ -e first-attempt ]; then echo \"loss=1\"; exit 0; fi\n"
                                        "touch first-attempt\nsleep 1000 &\necho $! > child.pid\nwait\n");
  write(d / "c.yaml", waiting_campaign("s", trainer, 1, 1));
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"});
  const fs::path trial = d / "s" / "trials" / "0";
  const bool running = wait_until([&] { return !slurp(trial / "child.pid").empty() && fs::exists(trial / "supervisor.yaml"); }, kPatience);
  ::kill(tuner, SIGKILL);
  finish(d, tuner);
  ASSERT_TRUE(running);
  const pid_t child = static_cast<pid_t>(std::stol(slurp(trial / "child.pid")));
  const pid_t supervisor = YAML::LoadFile((trial / "supervisor.yaml").string())["supervisor_pid"].as<pid_t>();
  ASSERT_EQ(::kill(supervisor, SIGKILL), 0);
  ASSERT_TRUE(wait_until([&] { return !alive(supervisor); }, kPatience));
  ASSERT_TRUE(alive(child));  // the leftover this test is about
  fs::rename(d / "s", d / "moved");

  expect_resume_kills_the_leftover(d, "moved", child, kPatience);
}

// A trial re-queued (its run cancelled by tune stop and collected) whose supervisor has written its
// exit record but not exited yet when the next tuner starts: the tuner re-attached it, collected the
// same record again as cancelled ("re-attached", "interrupted; it will run again", a second requeue
// event), and did so again at every launch until the supervisor let go. Staged by holding the
// supervisor's lock, as the exiting supervisor does.
TEST(TuneSessionsDogfood, AQueuedTrialsCollectedExitIsNotReattached) {
  const fs::path d = fresh_dir("sessions-stale-exit");
  const fs::path log = d / "runs.log", go = d / "go";
  write(d / "c.yaml", waiting_campaign("q", waiting_trainer(d, log, go), 1, 1));
  const pid_t first = start(d, {"run", "c.yaml", "--quiet"});
  const fs::path trial = d / "q" / "trials" / "0";
  const bool running = wait_until([&] { return fs::exists(trial / "supervisor.yaml"); }, kPatience);
  const Result stop = running ? tune(d, {"stop", "q"}) : Result{};
  const Result stopped = finish(d, first);
  ASSERT_TRUE(running);
  ASSERT_EQ(stop.code, 0) << stop.err;
  ASSERT_EQ(stopped.code, 3) << stopped.err;
  ASSERT_EQ(state_of(d / "q")["runs"][0]["status"].as<std::string>(), "queued");
  ASSERT_TRUE(fs::exists(trial / "exit.yaml"));
  const int requeues = count_events(d / "q", "requeue", 0);
  ASSERT_EQ(requeues, 1);

  const int lock = ::open((trial / "supervisor.lock").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(lock, 0);
  ASSERT_EQ(::flock(lock, LOCK_EX), 0);
  write(go, "");
  const pid_t resumed = start(d, {"resume", "q"});
  // The old tuner re-attached the trial before it wrote session_start; let the "supervisor" exit then.
  const bool began = wait_until([&] { return count_events(d / "q", "session_start") == 2; }, kPatience);
  ::close(lock);
  const Result r = finish(d, resumed);
  ASSERT_TRUE(began);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(count_events(d / "q", "reattach"), 0);
  EXPECT_EQ(count_events(d / "q", "requeue", 0), requeues);
  EXPECT_EQ(r.out.find("re-attached"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("interrupted"), std::string::npos) << r.out;
  const YAML::Node s = state_of(d / "q");
  EXPECT_EQ(s["runs"][0]["status"].as<std::string>(), "complete");
  EXPECT_EQ(s["runs"][0]["attempts"].as<int>(), 2);
  EXPECT_EQ(starts(log).at("0"), 2);
  EXPECT_TRUE(fs::exists(trial / "attempts" / "1" / "exit.yaml"));
}

// A launch that throws (here the supervisor's command.yaml cannot be written: a directory is in its
// place) is no attempt: the session ends with session_end saying why and the attempt number is
// handed out again, but the run record kept the failed launch's start time, so a trial that never
// ran had one (tune export's started_at, tune status's times).
TEST(TuneSessionsDogfood, ALaunchThatNeverStartedLeavesTheRunRecordAsItWas) {
  const fs::path d = fresh_dir("sessions-launch-error");
  write(d / "c.yaml", quadratic_campaign_with("e", 1, "{workers: 1}"));
  const fs::path blocker = d / "e" / "trials" / "0" / "command.yaml";
  fs::create_directories(blocker);
  const Result failed = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(failed.code, 1) << failed.err;
  const YAML::Node run = state_of(d / "e")["runs"][0];
  EXPECT_EQ(run["status"].as<std::string>(), "queued");
  EXPECT_EQ(run["attempts"].as<int>(), 0);
  EXPECT_EQ(run["started_at"].as<double>(), 0.0);
  EXPECT_FALSE(run["exit"].IsDefined());
  EXPECT_EQ(count_events(d / "e", "session_end"), 1);
  EXPECT_EQ(count_events(d / "e", "launch"), 0);
}

bool zombie(pid_t pid) { return ::kill(pid, 0) == 0 && !alive(pid); }

// Whether process `pid` has the file `path` open.
bool has_open(pid_t pid, const fs::path& path) {
  std::error_code ec;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end; !ec && it != end; it.increment(ec))
    if (fs::equivalent(it->path(), path, ec)) return true;
  return false;
}

// `tune resume` right after a kill -9 of a tuner that had just forked a supervisor: the fork keeps the
// locks until its exec, and the resume waits for a dead tuner's locks, but the killed tuner is a
// zombie until the shell that started it reaps it, and a zombie looked alive: the resume was refused,
// "driven by the tuner (process N)", N the killed tuner. Staged by a process that takes both locks,
// forks a child that keeps them until told, and exits without being reaped.
TEST(TuneSessionsDogfood, AResumeWaitsForLocksOfAKilledTunerNotYetReaped) {
  const fs::path d = fresh_dir("sessions-lock-zombie");
  write(d / "c.yaml", quadratic_campaign_with("z", 2, "{workers: 1}"));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const fs::path campaign = d / "z", release = d / "release";
  const pid_t tuner = ::fork();
  if (tuner == 0) {
    for (const char* name : {"tune.lock", "tuner.lock"}) {
      const int fd = ::open((campaign / name).c_str(), O_RDWR | O_CREAT, 0644);
      if (fd < 0 || ::flock(fd, LOCK_EX | LOCK_NB) != 0) ::_exit(1);
    }
    if (::fork() == 0) {  // the "supervisor" before its exec
      for (int i = 0; i < 2000 && !fs::exists(release); ++i) ::usleep(10 * 1000);
      ::_exit(0);
    }
    ::_exit(0);
  }
  const bool unreaped = wait_until([&] { return zombie(tuner); }, kPatience);
  const pid_t resumed = unreaped ? start(d, {"resume", "z", "--trials", "3", "--quiet"}) : -1;
  // Until the resume has opened the lock and looked at it (the refusal came at the first look).
  const bool looked = unreaped && wait_until([&] { return has_open(resumed, campaign / "tune.lock") || !alive(resumed); }, kPatience);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  write(release, "");
  const Result r = unreaped ? finish(d, resumed) : Result{};
  int status = 0;
  ::waitpid(tuner, &status, 0);
  ASSERT_TRUE(unreaped);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "could not take the locks";
  ASSERT_TRUE(looked);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(state_of(campaign)["runs"].size(), 3u);
}

}  // namespace
