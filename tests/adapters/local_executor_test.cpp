// The local executor against real processes: /bin/sh scripts run under the real supervisor
// (tune_test_supervisor, which calls supervise_main), with real files under TUNE_TEST_TMPDIR.
#include "tune/adapters/executor/local_executor.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tune/adapters/executor/supervisor.hpp"
#include "tune/adapters/executor/trial_exit.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using tune::adapters::ExitKind;
using tune::adapters::FinishedTrial;
using tune::adapters::LocalExecutor;
using tune::adapters::TrialExit;
using tune::adapters::TrialLaunch;

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(TUNE_TEST_TMPDIR) / "local_executor" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> supervisor_command() { return {TUNE_TEST_SUPERVISOR, "__supervise"}; }

TrialLaunch command_trial(const std::string& id, const fs::path& dir, std::vector<std::string> argv) {
  return {.id = id, .dir = dir, .argv = std::move(argv), .environment = {}, .timeout = 0ms, .grace = 1000ms};
}

TrialLaunch shell_trial(const std::string& id, const fs::path& dir, const std::string& script,
                        std::chrono::milliseconds timeout = 0ms, std::chrono::milliseconds grace = 5000ms) {
  return {.id = id, .dir = dir, .argv = {"/bin/sh", "-c", script}, .environment = {}, .timeout = timeout,
          .grace = grace};
}

// Polls until `count` trials have finished (or 10 s have passed, which fails the test).
std::vector<FinishedTrial> wait_for(LocalExecutor& executor, std::size_t count = 1) {
  std::vector<FinishedTrial> finished;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (finished.size() < count && std::chrono::steady_clock::now() < deadline) {
    for (FinishedTrial& f : executor.poll()) finished.push_back(std::move(f));
    if (finished.size() < count) std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(finished.size(), count) << "trials did not finish within 10 s";
  return finished;
}

bool wait_for_file(const fs::path& path) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!fs::exists(path)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

tune::adapters::SupervisorRecord supervisor_record(const fs::path& dir) {
  EXPECT_TRUE(wait_for_file(dir / tune::adapters::kSupervisorFile));
  const auto record = tune::adapters::read_supervisor_record(dir);
  if (!record) throw std::runtime_error("no supervisor record in " + dir.string());
  return *record;
}

bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

std::vector<pid_t> read_pids(const fs::path& path) {
  std::vector<pid_t> pids;
  std::ifstream in(path);
  for (long pid = 0; in >> pid;) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

// Reaps a supervisor that is our child but whose executor was destroyed without waiting (the
// "tuner died" scenario keeps it in this process).
void reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// "pid state" of every child of this process, from /proc/*/stat (zombies included).
std::vector<std::string> children_of_this_process() {
  std::vector<std::string> children;
  const pid_t self = ::getpid();
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string stat = read_text(entry.path() / "stat");
    const std::size_t paren = stat.rfind(')');
    if (stat.empty() || paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(paren + 1));
    char state = 0;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == self) children.push_back(entry.path().filename().string() + " " + state);
  }
  return children;
}

class LocalExecutorTest : public ::testing::Test {
 protected:
  // Every test waits for what it started: no child process (running or zombie) may be left.
  void TearDown() override {
    std::vector<std::string> children = children_of_this_process();
    for (int i = 0; i < 100 && !children.empty(); ++i) {  // a supervisor may be a few ms from exiting
      std::this_thread::sleep_for(10ms);
      children = children_of_this_process();
    }
    std::string list;
    for (const std::string& c : children) list += c + "; ";
    EXPECT_TRUE(children.empty()) << "child processes left (pid state): " << list;
  }
};

TEST_F(LocalExecutorTest, ExitCodeOutputWorkingDirectoryAndEnvironment) {
  const fs::path dir = fresh_dir("exit3");
  {
    std::ofstream stale(dir / "stdout");
    stale << std::string(1000, 'x');  // the trial's output replaces it (truncated, not appended)
  }
  ::setenv("TUNE_TEST_INHERITED", "from-tuner", 1);
  ::setenv("TUNE_TEST_OVERRIDE", "old", 1);
  LocalExecutor executor(supervisor_command());
  TrialLaunch trial = shell_trial("t1", dir,
                                  "echo out line; echo err line >&2; pwd -P; echo \"var=$TUNE_TEST_VAR\"; "
                                  "echo \"inherited=$TUNE_TEST_INHERITED\"; echo \"override=$TUNE_TEST_OVERRIDE\"; "
                                  "exit 3");
  trial.environment = {{"TUNE_TEST_VAR", "hello world"}, {"TUNE_TEST_OVERRIDE", "new"}};
  const double before = wall_seconds();
  executor.launch(trial);
  EXPECT_EQ(executor.running(), 1u);
  EXPECT_EQ(executor.running_ids(), std::vector<std::string>{"t1"});
  const std::vector<FinishedTrial> finished = wait_for(executor);
  const double after = wall_seconds();
  ::unsetenv("TUNE_TEST_INHERITED");
  ::unsetenv("TUNE_TEST_OVERRIDE");
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(executor.running(), 0u);
  EXPECT_TRUE(executor.poll().empty()) << "a finished trial is reported once";

  const TrialExit& exit = finished[0].exit;
  EXPECT_EQ(finished[0].id, "t1");
  EXPECT_EQ(exit.kind, ExitKind::exited) << exit.message;
  EXPECT_EQ(exit.code, 3);
  EXPECT_EQ(exit.signal, 0);
  EXPECT_FALSE(exit.succeeded());
  EXPECT_NE(exit.message.find("code 3"), std::string::npos) << exit.message;
  EXPECT_LE(before - 0.01, exit.started_at);
  EXPECT_LE(exit.started_at, exit.finished_at);
  EXPECT_LE(exit.finished_at, after + 0.01);
  EXPECT_LT(exit.duration(), 5.0);

  EXPECT_EQ(read_text(dir / "stdout"), "out line\n" + fs::canonical(dir).string() +
                                           "\nvar=hello world\ninherited=from-tuner\noverride=new\n");
  EXPECT_EQ(read_text(dir / "stderr"), "err line\n");
  const auto recorded = tune::adapters::read_trial_exit(dir);
  ASSERT_TRUE(recorded.has_value());
  EXPECT_EQ(recorded->code, 3);
  const std::string command = read_text(dir / tune::adapters::kCommandFile);
  EXPECT_NE(command.find("TUNE_TEST_VAR"), std::string::npos) << command;
  EXPECT_NE(command.find("exit 3"), std::string::npos) << command;
}

TEST_F(LocalExecutorTest, DescriptorsOfTheTunerDoNotLeakIntoTheTrial) {
  const fs::path dir = fresh_dir("descriptors");
  const int fd = ::open("/dev/null", O_RDONLY);  // inheritable, as a careless library might leave one
  ASSERT_GE(fd, 3);
  LocalExecutor executor(supervisor_command());
  executor.launch(shell_trial("t", dir, "if [ -e /proc/$$/fd/" + std::to_string(fd) +
                                            " ]; then echo leaked; else echo clean; fi; read line; echo \"stdin=$?\""));
  const std::vector<FinishedTrial> finished = wait_for(executor);
  ::close(fd);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_TRUE(finished[0].exit.succeeded()) << finished[0].exit.message;
  EXPECT_EQ(read_text(dir / "stdout"), "clean\nstdin=1\n") << "fd " << fd << " leaked, or stdin is not empty";
}

TEST_F(LocalExecutorTest, SignalEndingTheCommandIsRecorded) {
  const fs::path dir = fresh_dir("signaled");
  LocalExecutor executor(supervisor_command());
  executor.launch(shell_trial("s", dir, "kill -USR1 $$; sleep 5"));
  const std::vector<FinishedTrial> finished = wait_for(executor);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].exit.kind, ExitKind::signaled) << finished[0].exit.message;
  EXPECT_EQ(finished[0].exit.signal, SIGUSR1);
}

TEST_F(LocalExecutorTest, CommandThatCannotBeExecutedIsLaunchFailed) {
  const fs::path missing = fresh_dir("missing");
  const fs::path on_path = fresh_dir("missing-on-path");
  const fs::path not_exec = fresh_dir("not-executable");
  const fs::path script = not_exec / "script.sh";
  { std::ofstream(script) << "#!/bin/sh\nexit 0\n"; }
  ::chmod(script.c_str(), 0644);

  LocalExecutor executor(supervisor_command());
  executor.launch(command_trial("abs", missing, {"/nonexistent/tune-no-such-program", "x"}));
  executor.launch(command_trial("path", on_path, {"tune-no-such-program-on-path"}));
  executor.launch(command_trial("perm", not_exec, {script.string()}));
  std::vector<FinishedTrial> finished = wait_for(executor, 3);
  ASSERT_EQ(finished.size(), 3u);
  std::sort(finished.begin(), finished.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (const FinishedTrial& f : finished) EXPECT_EQ(f.exit.kind, ExitKind::launch_failed) << f.id;
  EXPECT_NE(finished[0].exit.message.find("/nonexistent/tune-no-such-program"), std::string::npos)
      << finished[0].exit.message;
  EXPECT_NE(finished[0].exit.message.find(std::strerror(ENOENT)), std::string::npos) << finished[0].exit.message;
  EXPECT_NE(finished[1].exit.message.find("tune-no-such-program-on-path"), std::string::npos)
      << finished[1].exit.message;
  EXPECT_NE(finished[2].exit.message.find(script.string()), std::string::npos) << finished[2].exit.message;
  EXPECT_NE(finished[2].exit.message.find(std::strerror(EACCES)), std::string::npos) << finished[2].exit.message;
}

TEST_F(LocalExecutorTest, TimeoutTerminatesWithSigterm) {
  const fs::path dir = fresh_dir("timeout");
  LocalExecutor executor(supervisor_command());
  executor.launch(shell_trial("t", dir, "sleep 1000", 300ms, 5000ms));
  const std::vector<FinishedTrial> finished = wait_for(executor);
  ASSERT_EQ(finished.size(), 1u);
  const TrialExit& exit = finished[0].exit;
  EXPECT_EQ(exit.kind, ExitKind::timeout) << exit.message;
  EXPECT_EQ(exit.signal, SIGTERM) << exit.message;
  EXPECT_GE(exit.duration(), 0.29);
  EXPECT_LT(exit.duration(), 3.0) << "SIGTERM did not end it; the 5 s grace ran out";
}

TEST_F(LocalExecutorTest, IgnoredSigtermIsFollowedBySigkillAfterTheGrace) {
  const fs::path dir = fresh_dir("ignores-term");
  LocalExecutor executor(supervisor_command());
  executor.launch(shell_trial("t", dir, "trap '' TERM; sleep 1000", 300ms, 400ms));
  const std::vector<FinishedTrial> finished = wait_for(executor);
  ASSERT_EQ(finished.size(), 1u);
  const TrialExit& exit = finished[0].exit;
  EXPECT_EQ(exit.kind, ExitKind::timeout) << exit.message;
  EXPECT_EQ(exit.signal, SIGKILL) << exit.message;
  EXPECT_NE(exit.message.find("SIGKILL"), std::string::npos) << exit.message;
  EXPECT_GE(exit.duration(), 0.69);
  EXPECT_LT(exit.duration(), 3.0);
}

// A second stop request (Ctrl-C twice, tune stop during a timeout's grace) kills at once, and the
// record says so rather than that the grace ran out.
TEST_F(LocalExecutorTest, ASecondCancelKillsAtOnceAndSaysSo) {
  const fs::path dir = fresh_dir("cancel-twice");
  LocalExecutor executor(supervisor_command());
  executor.launch(shell_trial("t", dir, "trap '' TERM; sleep 1000", 0ms, 20000ms));
  supervisor_record(dir);  // the command runs
  executor.cancel("t");
  std::this_thread::sleep_for(200ms);  // the supervisor has sent SIGTERM, which the trial ignores
  executor.cancel("t");
  const std::vector<FinishedTrial> finished = wait_for(executor);
  ASSERT_EQ(finished.size(), 1u);
  const TrialExit& exit = finished[0].exit;
  EXPECT_EQ(exit.kind, ExitKind::cancelled) << exit.message;
  EXPECT_EQ(exit.signal, SIGKILL) << exit.message;
  EXPECT_LT(exit.duration(), 5.0) << "the second request waited for the 20 s grace";
  EXPECT_NE(exit.message.find("killed with SIGKILL when asked to stop again, within its 20 s grace period"),
            std::string::npos)
      << exit.message;
}

TEST_F(LocalExecutorTest, TimeoutKillsTheWholeProcessGroup) {
  const fs::path dir = fresh_dir("grandchildren");
  LocalExecutor executor(supervisor_command());
  executor.launch(shell_trial("t", dir, "sleep 1000 & echo $! > pids; sleep 1000 & echo $! >> pids; sleep 1000",
                              300ms, 2000ms));
  const pid_t group = supervisor_record(dir).process_group;
  const std::vector<FinishedTrial> finished = wait_for(executor);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].exit.kind, ExitKind::timeout) << finished[0].exit.message;
  EXPECT_LT(finished[0].exit.duration(), 1.5) << "the background sleeps should die with SIGTERM";
  errno = 0;
  EXPECT_EQ(::kill(-group, 0), -1);
  EXPECT_EQ(errno, ESRCH) << "a process of the trial's group survived";
  const std::vector<pid_t> grandchildren = read_pids(dir / "pids");
  ASSERT_EQ(grandchildren.size(), 2u);
  for (pid_t pid : grandchildren) EXPECT_TRUE(process_gone(pid)) << "grandchild " << pid << " survived";
}

TEST_F(LocalExecutorTest, NormalExitKillsBackgroundGrandchildren) {
  const fs::path dir = fresh_dir("leftover");
  LocalExecutor executor(supervisor_command());
  executor.launch(shell_trial("t", dir, "sleep 1000 & echo $! > pids; exit 0"));
  const std::vector<FinishedTrial> finished = wait_for(executor);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_TRUE(finished[0].exit.succeeded()) << finished[0].exit.message;
  const std::vector<pid_t> grandchildren = read_pids(dir / "pids");
  ASSERT_EQ(grandchildren.size(), 1u);
  EXPECT_TRUE(process_gone(grandchildren[0])) << "the background sleep survived its trial";
  const pid_t group = tune::adapters::read_supervisor_record(dir)->process_group;
  errno = 0;
  EXPECT_EQ(::kill(-group, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(LocalExecutorTest, SupervisorHasItsOwnSessionAndTheCommandItsOwnGroup) {
  const fs::path dir = fresh_dir("session");
  LocalExecutor executor(supervisor_command());
  executor.launch(shell_trial("t", dir, "sleep 1000", 0ms, 1000ms));
  const auto record = supervisor_record(dir);
  EXPECT_EQ(::getsid(record.supervisor_pid), record.supervisor_pid) << "the supervisor leads a new session";
  EXPECT_NE(::getsid(record.supervisor_pid), ::getsid(0));
  EXPECT_EQ(::getpgid(record.process_group), record.process_group) << "the command leads a new group";
  EXPECT_NE(record.process_group, ::getpgrp());
  executor.cancel("t");
  wait_for(executor);
}

TEST_F(LocalExecutorTest, CancelTerminatesTheTrial) {
  const fs::path running = fresh_dir("cancel");
  const fs::path early = fresh_dir("cancel-early");
  LocalExecutor executor(supervisor_command());
  executor.launch(shell_trial("running", running, "sleep 1000", 0ms, 5000ms));
  supervisor_record(running);  // the command runs
  executor.launch(shell_trial("early", early, "sleep 1000", 0ms, 5000ms));
  executor.cancel("early");  // before the supervisor has started anything: must not be lost
  executor.cancel("running");
  executor.cancel("no-such-trial");  // nothing to do
  std::vector<FinishedTrial> finished = wait_for(executor, 2);
  ASSERT_EQ(finished.size(), 2u);
  for (const FinishedTrial& f : finished) {
    EXPECT_EQ(f.exit.kind, ExitKind::cancelled) << f.id << ": " << f.exit.message;
    EXPECT_LT(f.exit.duration(), 3.0) << f.id;
    EXPECT_EQ(f.exit.message.find("died"), std::string::npos) << f.id << ": " << f.exit.message;
  }
}

TEST_F(LocalExecutorTest, TrialsRunInParallel) {
  LocalExecutor executor(supervisor_command());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i)
    executor.launch(shell_trial("p" + std::to_string(i), fresh_dir("parallel-" + std::to_string(i)), "sleep 0.3"));
  EXPECT_EQ(executor.running(), 4u);
  const std::vector<FinishedTrial> finished = wait_for(executor, 4);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(finished.size(), 4u);
  for (const FinishedTrial& f : finished) {
    EXPECT_TRUE(f.exit.succeeded()) << f.id << ": " << f.exit.message;
    EXPECT_GE(f.exit.duration(), 0.29) << f.id;
  }
  EXPECT_LT(elapsed, 1.0) << "4 x 0.3 s in sequence would take 1.2 s";
}

TEST_F(LocalExecutorTest, TrialThatFinishedWhileTheTunerWasDeadIsCollected) {
  const fs::path dir = fresh_dir("finished-meanwhile");
  {
    LocalExecutor first(supervisor_command());
    first.launch(shell_trial("t", dir, "sleep 0.2; exit 7"));
  }  // the tuner "dies": the supervisor carries on
  ASSERT_TRUE(wait_for_file(dir / tune::adapters::kExitFile));
  const pid_t supervisor = tune::adapters::read_supervisor_record(dir)->supervisor_pid;

  LocalExecutor second(supervisor_command());
  EXPECT_TRUE(second.attach("t", dir));
  const std::vector<FinishedTrial> finished = second.poll();  // at the next poll, at once
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].id, "t");
  EXPECT_EQ(finished[0].exit.kind, ExitKind::exited) << finished[0].exit.message;
  EXPECT_EQ(finished[0].exit.code, 7);
  EXPECT_EQ(second.running(), 0u);
  reap(supervisor);
}

TEST_F(LocalExecutorTest, RunningTrialIsFollowedAfterAttach) {
  const fs::path dir = fresh_dir("attach-running");
  const fs::path cancelled = fresh_dir("attach-cancel");
  {
    LocalExecutor first(supervisor_command());
    first.launch(shell_trial("t", dir, "sleep 0.5; exit 5"));
    first.launch(shell_trial("c", cancelled, "sleep 1000", 0ms, 5000ms));
  }
  const pid_t supervisor = supervisor_record(dir).supervisor_pid;
  const pid_t cancelled_supervisor = supervisor_record(cancelled).supervisor_pid;

  LocalExecutor second(supervisor_command());
  ASSERT_TRUE(second.attach("t", dir));
  ASSERT_TRUE(second.attach("c", cancelled));
  EXPECT_EQ(second.running(), 2u);
  EXPECT_TRUE(second.poll().empty()) << "both are still running";
  second.cancel("c");  // cancelling works for attached trials too
  std::vector<FinishedTrial> finished = wait_for(second, 2);
  ASSERT_EQ(finished.size(), 2u);
  std::sort(finished.begin(), finished.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  EXPECT_EQ(finished[0].id, "c");
  EXPECT_EQ(finished[0].exit.kind, ExitKind::cancelled) << finished[0].exit.message;
  EXPECT_EQ(finished[1].exit.kind, ExitKind::exited) << finished[1].exit.message;
  EXPECT_EQ(finished[1].exit.code, 5);
  EXPECT_GE(finished[1].exit.duration(), 0.49);
  reap(supervisor);
  reap(cancelled_supervisor);
}

TEST_F(LocalExecutorTest, SupervisorKilledWithoutRecordIsReportedAndNotReattached) {
  const fs::path dir = fresh_dir("supervisor-killed");
  LocalExecutor executor(supervisor_command());
  executor.launch(shell_trial("t", dir, "sleep 1000"));
  const auto record = supervisor_record(dir);
  ASSERT_EQ(::kill(record.supervisor_pid, SIGKILL), 0);
  const std::vector<FinishedTrial> finished = wait_for(executor);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].exit.kind, ExitKind::cancelled);
  EXPECT_EQ(finished[0].exit.message, "the supervisor died without recording an exit (killed?)");
  EXPECT_FALSE(fs::exists(dir / tune::adapters::kExitFile));

  LocalExecutor second(supervisor_command());
  EXPECT_FALSE(second.attach("t", dir));
  EXPECT_EQ(second.running(), 0u);
  ::killpg(record.process_group, SIGKILL);  // the orphaned command (now init's child)
}

TEST_F(LocalExecutorTest, AttachRefusesAReusedSupervisorPid) {
  const fs::path dir = fresh_dir("pid-reused");
  const pid_t other = ::fork();  // an unrelated live process standing at the recorded pid
  ASSERT_GE(other, 0);
  if (other == 0) {
    ::execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  tune::adapters::write_supervisor_record(dir, {.supervisor_pid = other, .process_group = other, .started_at = 1.0});
  LocalExecutor executor(supervisor_command());
  EXPECT_EQ(::kill(other, 0), 0);
  EXPECT_FALSE(executor.attach("t", dir)) << "pid " << other << " is alive but is not this trial's supervisor";
  EXPECT_FALSE(executor.attach("u", fresh_dir("never-started"))) << "no records at all";
  EXPECT_EQ(executor.running(), 0u);
  ::kill(other, SIGKILL);
  reap(other);
}

TEST_F(LocalExecutorTest, TenMegabytesOfOutputArriveIntact) {
  const fs::path dir = fresh_dir("large-output");
  constexpr std::size_t size = 10 * 1024 * 1024;
  LocalExecutor executor(supervisor_command());
  executor.launch(shell_trial("t", dir, "yes 0123456789abcdef | head -c " + std::to_string(size)));
  const std::vector<FinishedTrial> finished = wait_for(executor);
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_TRUE(finished[0].exit.succeeded()) << finished[0].exit.message;
  ASSERT_EQ(fs::file_size(dir / "stdout"), size);
  const std::string line = "0123456789abcdef\n";
  std::string expected;
  expected.reserve(size + line.size());
  while (expected.size() < size) expected += line;
  expected.resize(size);
  EXPECT_TRUE(read_text(dir / "stdout") == expected) << "the output differs from what was written";
}

TEST_F(LocalExecutorTest, ExitRecordRoundTripsAndADamagedOneIsRefusedByName) {
  const fs::path dir = fresh_dir("records");
  EXPECT_FALSE(tune::adapters::read_trial_exit(dir).has_value());
  const TrialExit written{.kind = ExitKind::timeout, .code = 0, .signal = SIGKILL, .started_at = 1700000000.125,
                          .finished_at = 1700000001.5, .message = "quotes \" colon: and\nnewline"};
  tune::adapters::write_trial_exit(dir, written);
  const auto read = tune::adapters::read_trial_exit(dir);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->kind, written.kind);
  EXPECT_EQ(read->signal, SIGKILL);
  EXPECT_EQ(read->started_at, written.started_at);
  EXPECT_EQ(read->finished_at, written.finished_at);
  EXPECT_EQ(read->message, written.message);

  const std::string path = (dir / tune::adapters::kExitFile).string();
  for (const char* damaged : {"kind: [unclosed\n", "kind: exploded\ncode: 0\nsignal: 0\nstarted_at: 1\nfinished_at: 2\n",
                              "kind: exited\ncode: three\nsignal: 0\nstarted_at: 1\nfinished_at: 2\n", ""}) {
    { std::ofstream(path, std::ios::trunc) << damaged; }
    try {
      tune::adapters::read_trial_exit(dir);
      ADD_FAILURE() << "accepted a damaged record: " << damaged;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

// A launch that failed before its run started (a refused sbatch) leaves its records in the trial
// directory, and the trial keeps its attempt number: setting the attempt aside again keeps what that
// attempt recorded rather than replacing it with the failed launch's files.
TEST_F(LocalExecutorTest, SettingAsideAnAttemptAgainKeepsItsRecords) {
  const fs::path dir = fresh_dir("set-aside-again");
  { std::ofstream(dir / tune::adapters::kCommandFile) << "the first attempt's\n"; }
  { std::ofstream(dir / tune::adapters::kStdoutFile) << "epoch 1\n"; }
  { std::ofstream(dir / "checkpoint") << "1\n"; }
  tune::adapters::set_aside_attempt(dir, 1);
  { std::ofstream(dir / tune::adapters::kCommandFile) << "a launch that failed\n"; }
  tune::adapters::set_aside_attempt(dir, 1);
  EXPECT_EQ(read_text(dir / "attempts" / "1" / tune::adapters::kCommandFile), "the first attempt's\n");
  EXPECT_EQ(read_text(dir / "attempts" / "1" / tune::adapters::kStdoutFile), "epoch 1\n");
  EXPECT_FALSE(fs::exists(dir / tune::adapters::kCommandFile));  // the next launch writes its own
  EXPECT_EQ(read_text(dir / "checkpoint"), "1\n");              // the trial's own files stay
}

}  // namespace
