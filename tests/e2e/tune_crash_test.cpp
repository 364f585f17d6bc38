// A campaign whose processes die at awkward instants: writers killed mid-save, a trial's supervisor
// killed under it, a `tune stop` that comes while the tuner starts. Each test stages its instant
// deterministically (planted files, a held lock) rather than hoping a random kill lands there.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// The id of a process that has exited and been reaped: what a writer killed long ago leaves in the
// names of its temporary files.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

// How long a test waits for a process or a file (polling).
constexpr std::chrono::seconds kPatience{10};

std::string campaign_of_one_worker(const std::string& name, int trials) {
  return quadratic_campaign_with(name, trials, "{workers: 1}");
}

// write_file_atomically names its temporary file after its process; a tuner, `tune ask` or `tune
// tell` killed between creating it and renaming it left one more in the campaign (25 after 80 kill -9
// of a busy tuner), and nothing ever removed them. Those of a live process are its work in progress.
TEST(TuneCrash, TemporaryFilesOfWritersKilledMidSaveAreRemoved) {
  const fs::path d = fresh_dir("crash-temporaries");
  write(d / "c.yaml", campaign_of_one_worker("t", 2));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const fs::path k = d / "t";
  const std::string dead = std::to_string(dead_pid()), live = std::to_string(::getpid());
  const std::vector<fs::path> leftovers{k / ("state.yaml.tmp." + dead), k / ("tuner.pid.tmp." + dead),
                                        k / "trials" / "2" / ("command.yaml.tmp." + dead)};
  fs::create_directories(k / "trials" / "2");
  for (const fs::path& p : leftovers) write(p, "kind: tune.campaign\nschema: 1\nruns:\n  - {id: 0, st");
  const fs::path in_progress = k / ("state.yaml.tmp." + live);
  write(in_progress, "kind: tune.campaign\n");

  const Result resumed = tune(d, {"resume", "t", "--trials", "3", "--quiet"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(state_of(k)["runs"][2]["status"].as<std::string>(), "complete");
  for (const fs::path& p : leftovers) EXPECT_FALSE(fs::exists(p)) << p << " was left by a dead writer";
  EXPECT_TRUE(fs::exists(in_progress)) << "the temporary file of a live process was removed";

  // The short commands write state.yaml too, under the same lock.
  write(leftovers[0], "kind: tune.campaign\n");
  const Result asked = tune(d, {"ask", "t", "--trials", "4"});
  ASSERT_EQ(asked.code, 0) << asked.err;
  EXPECT_FALSE(fs::exists(leftovers[0])) << "tune ask kept " << leftovers[0];
  EXPECT_TRUE(fs::exists(in_progress));
}

// A trainer that starts a child in its own process group and waits for it: on its first attempt it
// records both pids and stays (as a training run would), on the next it reports at once.
const char* kStayingTrainer = R"(#!/bin/sh
if [ -e first-attempt ]; then echo "loss=1"; exit 0; fi
touch first-attempt
sleep 1000 &
echo $! > child.pid
echo $$ > leader.pid
wait
)";

// The processes of a one-trial campaign `s` of kStayingTrainer, once its first attempt runs.
struct StayingTrial {
  pid_t tuner = 0, supervisor = 0, leader = 0, child = 0;
};

// Reads the pids of the attempt running in `trial` into `t`; false while it has not written them all.
bool read_staying_pids(const fs::path& trial, StayingTrial& t) {
  if (!fs::exists(trial / "child.pid") || slurp(trial / "child.pid").empty() || !fs::exists(trial / "leader.pid") ||
      !fs::exists(trial / "supervisor.yaml"))
    return false;
  t.leader = static_cast<pid_t>(std::stol(slurp(trial / "leader.pid")));
  t.child = static_cast<pid_t>(std::stol(slurp(trial / "child.pid")));
  t.supervisor = YAML::LoadFile((trial / "supervisor.yaml").string())["supervisor_pid"].as<pid_t>();
  return true;
}

// Starts campaign `s` of `trials` trials of kStayingTrainer, all at once; returns their processes
// (each with the tuner's pid) once every first attempt runs, or what it has after kPatience.
std::vector<StayingTrial> start_staying_trials(const fs::path& d, int trials) {
  write(d / "c.yaml", "name: s\ncommand: [" + write_script(d, "stay.sh", kStayingTrainer).string() +
                          ", \"{x}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\n"
                          "objective: {name: loss}\nbudget: {trials: " + std::to_string(trials) +
                          "}\nexecutor: {workers: " + std::to_string(trials) + "}\n");
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"});
  std::vector<StayingTrial> t(static_cast<std::size_t>(trials), StayingTrial{.tuner = tuner});
  wait_until([&] {
    bool all = true;
    for (std::size_t i = 0; i < t.size(); ++i) all = read_staying_pids(d / "s" / "trials" / std::to_string(i), t[i]) && all;
    return all;
  }, kPatience);
  return t;
}

StayingTrial start_staying_trial(const fs::path& d) { return start_staying_trials(d, 1).front(); }

// A supervisor killed with SIGKILL (by hand, by the OOM killer) recorded no exit, so the tuner ran
// the trial again, as it should; but the first attempt's command and its child ran on under init,
// beside the second attempt, for as long as the training took.
TEST(TuneCrash, AKilledSupervisorLeavesNoneOfItsTrialsProcessesRunning) {
  const fs::path d = fresh_dir("crash-supervisor");
  const auto [tuner, supervisor, leader, child] = start_staying_trial(d);
  ASSERT_GT(child, 0) << "the trial did not start";
  ASSERT_EQ(::kill(supervisor, SIGKILL), 0);

  const Result r = finish(d, tuner);
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node run = state_of(d / "s")["runs"][0];
  EXPECT_EQ(run["status"].as<std::string>(), "complete");
  EXPECT_EQ(run["attempts"].as<int>(), 2);
  for (const pid_t pid : {leader, child}) {
    // SIGKILL is sent before the second attempt starts; its delivery is the kernel's, so allow it a moment.
    const bool gone = wait_until([&] { return !alive(pid); }, kPatience);
    if (!gone) ::kill(pid, SIGKILL);  // not left behind by a failing test
    EXPECT_TRUE(gone) << "process " << pid << (pid == leader ? " (the command)" : " (its child)")
                      << " of the killed supervisor's attempt ran on";
  }
}

// The same kill while no tuner runs (the tuner was killed first, or stopped, and the machine's OOM
// killer took the supervisor later): the command died with its supervisor, but its child ran on
// under init, and the next tuner, finding the supervisor dead, ran the trial again beside it. The
// recorded group id may have been reused by then, so the leftovers are found by their environment.
TEST(TuneCrash, ASupervisorKilledWhileNoTunerRunsLeavesNothingForTheResume) {
  const fs::path d = fresh_dir("crash-supervisor-no-tuner");
  const auto [tuner, supervisor, leader, child] = start_staying_trial(d);
  ASSERT_GT(child, 0) << "the trial did not start";
  ::kill(tuner, SIGKILL);
  finish(d, tuner);
  ASSERT_EQ(::kill(supervisor, SIGKILL), 0);
  ASSERT_TRUE(wait_until([&] { return !alive(supervisor) && !alive(leader); }, kPatience));
  ASSERT_TRUE(alive(child));  // the leftover this test is about

  expect_resume_kills_the_leftover(d, "s", child, kPatience);
}

// `tune stop` finds the tuner by DIR/tuner.pid, written as the session starts; the tuner installed
// its handlers only when its loop began, so a stop in between (while it loads the state and
// re-attaches running trials, seconds for a large campaign) killed it with SIGTERM's default action:
// exit 143, no session_end, though `tune stop` had said it checkpoints and exits. Here the tuner is
// held in that stretch by a trial whose supervisor lock is taken and whose record is not written
// yet (as if the supervisor had just started), which it waits for.
TEST(TuneCrash, TuneStopWhileTheSessionStartsStopsItResumably) {
  const fs::path d = fresh_dir("crash-stop-at-start");
  write(d / "c.yaml", campaign_of_one_worker("p", 2));
  // A session killed while trial 0 ran, with everything of that run gone.
  const pid_t first = start(d, {"run", "c.yaml", "--quiet"}, {{"TOY_SLEEP", "1000"}});
  const fs::path trial = d / "p" / "trials" / "0";
  ASSERT_TRUE(wait_until([&] { return fs::exists(trial / "supervisor.yaml"); }, kPatience));
  ::kill(first, SIGKILL);
  finish(d, first);
  const YAML::Node record = YAML::LoadFile((trial / "supervisor.yaml").string());
  ::kill(record["supervisor_pid"].as<pid_t>(), SIGKILL);
  ::kill(-record["process_group"].as<pid_t>(), SIGKILL);
  ASSERT_TRUE(wait_until([&] { return !alive(record["supervisor_pid"].as<pid_t>()); }, kPatience));
  fs::remove(trial / "supervisor.yaml");
  ASSERT_EQ(state_of(d / "p")["runs"][0]["status"].as<std::string>(), "running");

  const int lock = ::open((trial / "supervisor.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(lock, 0);
  ASSERT_EQ(::flock(lock, LOCK_EX), 0);
  const pid_t tuner = start(d, {"resume", "p", "--quiet"});
  const bool named = wait_until([&] { return slurp(d / "p" / "tuner.pid") == std::to_string(tuner) + "\n"; }, kPatience);
  const Result stop = named ? tune(d, {"stop", "p"}) : Result{};
  ::close(lock);  // the "supervisor" is gone: the tuner goes on
  const Result r = finish(d, tuner);
  ASSERT_TRUE(named);
  ASSERT_EQ(stop.code, 0) << stop.err;
  EXPECT_EQ(r.code, 3) << "exit " << r.code << ": " << r.err;
  const YAML::Node s = state_of(d / "p");
  EXPECT_EQ(s["stop_reason"].as<std::string>(), "stopped by 'tune stop'; 'tune resume' continues");
  EXPECT_EQ(s["runs"][0]["status"].as<std::string>(), "queued");
  EXPECT_EQ(s["runs"].size(), 1u) << "the stopped session launched a trial";
  EXPECT_NE(slurp(d / "p" / "events.jsonl").find("\"event\": \"session_end\""), std::string::npos);
}

// state.yaml cut short at the end of a line (a crash on a filesystem that does not keep rename
// atomic) ends in the study's trial list, its last section: the refusal said only "strategy state
// refers to trial 2, which the study does not hold", naming no line and not what happened.
TEST(TuneCrash, StateCutShortInItsTrialListIsRefusedAtItsLineAndLeftUntouched) {
  const fs::path d = fresh_dir("crash-cut-short");
  write(d / "c.yaml", campaign_of_one_worker("c", 4));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const fs::path state = d / "c" / "state.yaml";
  const std::string text = slurp(state);
  const std::size_t first_trial = text.find("\n    - {id: 0, status: complete, config:");
  const std::size_t third_trial = text.find("\n    - {id: 2, status: complete, config:");
  ASSERT_NE(third_trial, std::string::npos);
  const std::string cut = text.substr(0, third_trial + 1);
  const std::string line = std::to_string(std::count(text.begin(), text.begin() + first_trial + 1, '\n') + 1);
  write(state, cut);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"resume", "c", "--quiet"},
                                               std::vector<std::string>{"status", "c"},
                                               std::vector<std::string>{"ask", "c"}}) {
    const Result r = tune(d, args);
    EXPECT_EQ(r.code, 1) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("state.yaml: field 'study.trials' at line " + line + ", column 5: 2 trials for 4 run records"),
              std::string::npos)
        << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("cut short"), std::string::npos) << args[0] << ": " << r.err;
    EXPECT_EQ(slurp(state), cut) << args[0] << " changed the damaged file";
  }
}

// Starts `tune run` of a one-trial campaign `name` in `d` whose trial waits for a file `go` in its
// directory, and returns the tuner once the trial's supervisor runs (0, the tuner killed, if it
// did not start).
pid_t start_waiting_trial(const fs::path& d, const std::string& name) {
  write(d / "c.yaml", "name: " + name + "\ncommand: [" +
                          write_script(d, "wait.sh", "#!/bin/sh\nwhile [ ! -e go ]; do sleep 0.02; done\necho objective=1\n")
                              .string() +
                          ", \"{x}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\nbudget: {trials: 1}\n");
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"});
  if (wait_until([&] { return fs::exists(d / name / "trials" / "0" / "supervisor.yaml"); }, kPatience)) return tuner;
  ::kill(tuner, SIGKILL);
  finish(d, tuner);
  return 0;
}

// A trial whose exit record is damaged (by hand, by a disk) runs again: it was re-queued with only
// the log's requeue event naming the record, the terminal saying "interrupted", as after a stop.
TEST(TuneCrash, ADamagedExitRecordIsSaidAsTheTrialRunsAgain) {
  const fs::path d = fresh_dir("crash-damaged-exit");
  const pid_t tuner = start_waiting_trial(d, "x");
  const fs::path trial = d / "x" / "trials" / "0";
  ASSERT_GT(tuner, 0) << "the trial did not start";
  ::kill(tuner, SIGKILL);
  finish(d, tuner);
  write(trial / "go", "");
  ASSERT_TRUE(wait_until([&] { return fs::exists(trial / "exit.yaml"); }, kPatience));
  const pid_t supervisor = YAML::LoadFile((trial / "supervisor.yaml").string())["supervisor_pid"].as<pid_t>();
  ASSERT_TRUE(wait_until([&] { return !alive(supervisor); }, kPatience));
  write(trial / "exit.yaml", "status: [\n");
  const Result r = tune(d, {"resume", "x"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("trial 0 interrupted (damaged record '" + (trial / "exit.yaml").string()), std::string::npos)
      << r.err;
  const YAML::Node run = state_of(d / "x")["runs"][0];
  EXPECT_EQ(run["status"].as<std::string>(), "complete") << run;
  EXPECT_EQ(run["attempts"].as<int>(), 2) << run;
}

// A resume that fails while it re-attaches the running trials (here a supervisor record damaged by
// hand) ended before its session started: no session_start, no session_end, and `tune status` told
// the session before it. Now the session starts first and ends with the error, which names the file.
TEST(TuneCrash, AnErrorWhileReattachingEndsTheSessionWithItsReason) {
  const fs::path d = fresh_dir("crash-reattach-error");
  const StayingTrial t = start_staying_trial(d);
  ASSERT_GT(t.child, 0) << "the trial did not start";
  ::kill(t.tuner, SIGKILL);
  finish(d, t.tuner);
  const fs::path record = d / "s" / "trials" / "0" / "supervisor.yaml";
  write(record, "supervisor_pid: [1\n");
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  const std::string session_start = "\"event\": \"session_start\"";
  const std::size_t sessions_before = count(slurp(d / "s" / "events.jsonl"), session_start);

  const Result r = tune(d, {"resume", "s", "--quiet"});
  for (const pid_t pid : {t.supervisor, t.leader, t.child}) ::kill(pid, SIGKILL);  // nothing left behind
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("supervisor.yaml"), std::string::npos) << r.err;
  const std::string events = slurp(d / "s" / "events.jsonl");
  const std::size_t start_at = events.rfind(session_start);
  const std::size_t end_at = events.rfind("\"event\": \"session_end\"");
  ASSERT_NE(start_at, std::string::npos) << events;
  EXPECT_EQ(count(events, session_start), sessions_before + 1) << events;
  ASSERT_NE(end_at, std::string::npos) << events;
  EXPECT_GT(end_at, start_at) << events;
  EXPECT_NE(events.find("error: ", end_at), std::string::npos) << events;
  const Result status = tune(d, {"status", "s"});
  EXPECT_NE(status.out.find("last session ended: error: "), std::string::npos) << status.out;
}

// Two running trials whose records a crash damaged: the resume named only the first, so the user
// learnt of the second by mending the first and resuming again. A record's raw bytes, quoted by the
// YAML parser, reached the terminal as they were.
TEST(TuneCrash, EveryDamagedRecordIsNamedInOneResumeAndNoneEchoesRawBytes) {
  const fs::path d = fresh_dir("crash-damaged-records");
  const std::vector<StayingTrial> t = start_staying_trials(d, 2);
  ASSERT_GT(t[1].child, 0) << "the trials did not start";
  ::kill(t[0].tuner, SIGKILL);
  finish(d, t[0].tuner);
  write(d / "s" / "trials" / "0" / "supervisor.yaml", "supervisor_pid: \"\\\xB3\x01\"\n");
  write(d / "s" / "trials" / "1" / "supervisor.yaml", "supervisor_pid: [1\n");

  const Result r = tune(d, {"resume", "s", "--quiet"});
  for (const StayingTrial& s : t)
    for (const pid_t pid : {s.supervisor, s.leader, s.child}) ::kill(pid, SIGKILL);  // nothing left behind
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("2 trial records are damaged:"), std::string::npos) << r.err;
  for (const char* trial : {"0", "1"})
    EXPECT_NE(r.err.find("damaged record '" + (d / "s" / "trials" / trial / "supervisor.yaml").string() + "'"),
              std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown escape character: \\xB3"), std::string::npos) << r.err;
  for (const char c : r.err) {
    const auto u = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (u >= 0x20 && u < 0x7F)) << "byte " << int(u) << " in: " << r.err;
  }
}

}  // namespace

namespace {

// The terminal of `tune run` went away (an ssh connection dropped): SIGHUP's default action killed
// the tuner with no session_end and no reason in the state. Now the session ends at once and says so,
// and the running trials, in sessions of their own, go on; a resume re-attaches them and runs none
// again, so the dropped connection costs no work in progress.
TEST(TuneCrash, AHangUpEndsTheSessionAndLeavesTheRunningTrialToTheResume) {
  const fs::path d = fresh_dir("crash-hangup");
  const pid_t tuner = start_waiting_trial(d, "h");
  const fs::path trial = d / "h" / "trials" / "0";
  ASSERT_GT(tuner, 0) << "the trial did not start";
  ::kill(tuner, SIGHUP);
  const Result r = finish(d, tuner);
  EXPECT_EQ(r.code, 3) << "exit " << r.code << ": " << r.err;
  const YAML::Node s = state_of(d / "h");
  EXPECT_NE(s["stop_reason"].as<std::string>().find("the terminal hung up (SIGHUP)"), std::string::npos);
  EXPECT_EQ(s["runs"][0]["status"].as<std::string>(), "running");
  const std::string events = slurp(d / "h" / "events.jsonl");
  EXPECT_NE(events.find("\"by\": \"SIGHUP\""), std::string::npos) << events;
  EXPECT_NE(events.find("\"event\": \"session_end\""), std::string::npos) << events;
  const pid_t supervisor = YAML::LoadFile((trial / "supervisor.yaml").string())["supervisor_pid"].as<pid_t>();
  EXPECT_TRUE(alive(supervisor)) << "the trial went on";
  // tune status says that no tuner follows it, and once it has ended, that it ended (it showed it
  // running, its clock still going, with no word of the resume that collects it).
  const Result following = tune(d, {"status", "h"});
  EXPECT_NE(following.out.find("no tuner follows the 1 trial recorded as running (0 of them ended since); 'tune "
                               "resume h' re-attaches those still running and collects the others"),
            std::string::npos)
      << following.out;

  write(trial / "go", "");
  ASSERT_TRUE(wait_until([&] { return fs::exists(trial / "exit.yaml"); }, kPatience));
  const Result ended = tune(d, {"status", "h"});
  EXPECT_NE(ended.out.find("(1 of them ended since)"), std::string::npos) << ended.out;
  EXPECT_NE(ended.out.find("\n    0  ended "), std::string::npos) << ended.out;
  const Result resumed = tune(d, {"resume", "h", "--quiet"});
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  const YAML::Node after = state_of(d / "h");
  EXPECT_EQ(after["runs"][0]["status"].as<std::string>(), "complete");
  EXPECT_EQ(after["runs"][0]["attempts"].as<int>(), 1) << "re-attached, not run again";
  EXPECT_EQ(after["study"]["trials"][0]["value"].as<double>(), 1.0);
}

}  // namespace

namespace {

// After a kill -9, a new tuner takes the lock before it rewrites tuner.pid, which meanwhile names the
// dead tuner, whose pid may belong to another process by then: `tune stop` signalled whatever
// tuner.pid named. It now signals the holder of tuner.lock, as the kernel lists it in /proc/locks.
TEST(TuneCrash, TuneStopSignalsTheTunerThatHoldsTheLockNotAStalePid) {
  const fs::path d = fresh_dir("crash-stale-pid");
  write(d / "c.yaml", campaign_of_one_worker("p", 2));
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"}, {{"TOY_SLEEP", "30"}});
  ASSERT_TRUE(wait_until([&] { return fs::exists(d / "p" / "trials" / "0" / "supervisor.yaml"); }, kPatience));
  const pid_t bystander = ::fork();
  if (bystander == 0) {
    ::execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  write(d / "p" / "tuner.pid", std::to_string(bystander) + "\n");  // as a dead tuner's reused pid
  const Result status = tune(d, {"status", "p"});
  EXPECT_NE(status.out.find("tuner running (process " + std::to_string(tuner) + ")"), std::string::npos) << status.out;
  const Result stop = tune(d, {"stop", "p"});
  EXPECT_EQ(stop.code, 0) << stop.err;
  EXPECT_EQ(finish(d, tuner).code, 3);
  const bool bystander_alive = alive(bystander);
  ::kill(bystander, SIGKILL);
  ::waitpid(bystander, nullptr, 0);
  EXPECT_TRUE(bystander_alive) << "tune stop signalled the process tuner.pid named";
}

// A tuner killed with SIGKILL just after forking a supervisor leaves its locks to the child until
// the child's exec closes them (O_CLOEXEC): a `tune resume` in that instant was refused as if a
// tuner drove the campaign ("driven by the tuner (process N)", N dead). Staged here by a process
// that takes both locks, forks a child that keeps them for half a second, and exits.
TEST(TuneCrash, AResumeWaitsForLocksLeftToTheForkOfAKilledTuner) {
  const fs::path d = fresh_dir("crash-lock-fork");
  write(d / "c.yaml", campaign_of_one_worker("f", 2));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const fs::path campaign = d / "f";
  const pid_t tuner = ::fork();
  if (tuner == 0) {
    for (const char* name : {"tune.lock", "tuner.lock"}) {
      const int fd = ::open((campaign / name).c_str(), O_RDWR | O_CREAT, 0644);
      if (fd < 0 || ::flock(fd, LOCK_EX | LOCK_NB) != 0) ::_exit(1);
    }
    if (::fork() == 0) {  // the "supervisor" before its exec
      ::usleep(700 * 1000);
      ::_exit(0);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(tuner, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "could not take the locks";
  const int probe = ::open((campaign / "tuner.lock").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(probe, 0);
  const bool held = ::flock(probe, LOCK_SH | LOCK_NB) != 0;
  ::close(probe);
  ASSERT_TRUE(held) << "the child let go of the lock before the resume";
  const Result r = tune(d, {"resume", "f", "--trials", "3", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(state_of(campaign)["runs"].size(), 3u);
}

}  // namespace
