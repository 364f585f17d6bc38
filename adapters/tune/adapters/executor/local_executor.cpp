// LocalExecutor: starts one supervisor per trial (Boost.Process, own session) and follows it.
//
// Which processes are waited for: only the supervisors this executor started, each by its own pid
// (waitpid(pid, WNOHANG)); never waitpid(-1), which would steal the children of other parts of the
// program. Until it is reaped, a started supervisor's pid cannot be reused, so signalling it is safe.
// An attached supervisor (started by an earlier tuner) is not our child: it is followed by polling
// its exit record, and before it is signalled or believed alive its identity is checked: the pid
// must exist and /proc/<pid>/cmdline must hold the trial directory as an argument.
#include "tune/adapters/executor/local_executor.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>
#include <cerrno>
#include <chrono>
#include <thread>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "tune/adapters/executor/supervisor.hpp"

namespace bp = boost::process;

namespace tune::adapters {

namespace {

constexpr const char* kDiedMessage = "the supervisor died without recording an exit (killed?)";

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Runs in the forked child before exec: a new session (no controlling terminal, so a Ctrl-C or a
// hang-up of the tuner's terminal never reaches the trial, and the trial outlives the tuner), and
// the signals the supervisor takes synchronously already blocked, so an early cancel is not lost.
struct DetachedSupervisor : bp::extend::handler {
  bool exec_running_image = false;  // see LocalExecutor::exec_running_image_

  template <class Executor>
  void on_exec_setup(Executor& e) const {
    // argv[0] stays the program's path (what `ps` shows); the image executed is the parent's own.
    if (exec_running_image) e.exe = "/proc/self/exe";
    ::setsid();
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
  }
};

bool same_directory(std::string_view arg, const std::filesystem::path& dir) {
  const std::filesystem::path p(arg);
  if (!p.is_absolute()) return false;
  if (p.lexically_normal() == dir) return true;
  std::error_code ec;
  return std::filesystem::equivalent(p, dir, ec) && !ec;
}

// Whether some entry of /proc/<pid>/<file>, a list of NUL-terminated strings (cmdline, environ),
// satisfies `holds`. False when the file cannot be read.
template <class Holds>
bool any_proc_entry(const std::string& pid, const char* file, const Holds& holds) {
  std::ifstream in("/proc/" + pid + "/" + file, std::ios::binary);
  if (!in) return false;
  const std::string entries{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  for (std::size_t begin = 0; begin < entries.size();) {
    std::size_t end = entries.find('\0', begin);
    if (end == std::string::npos) end = entries.size();
    if (holds(std::string_view(entries).substr(begin, end - begin))) return true;
    begin = end + 1;
  }
  return false;
}

// Whether process `pid` has a descriptor open on the file at `path` (the same inode): the kernel
// follows a file that was moved, so this holds after the campaign directory is renamed, when the
// paths the process was given no longer name anything.
bool holds_open(const std::string& pid, const std::filesystem::path& path) {
  struct stat target {};
  if (::stat(path.c_str(), &target) != 0) return false;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/" + pid + "/fd", ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    if (::stat(it->path().c_str(), &st) == 0 && st.st_dev == target.st_dev && st.st_ino == target.st_ino) return true;
  }
  return false;
}

// Whether `pid`'s working directory is `dir` (the same inode, wherever it has been moved since).
bool works_in(const std::string& pid, const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::equivalent("/proc/" + pid + "/cwd", dir, ec) && !ec;
}

// True if `pid` is alive and is the supervisor of `dir` (guards against a reused pid): its command
// line names the directory, or, the campaign having been moved (renamed) since it started, it holds
// the directory's supervisor.lock open. A zombie has an empty command line and no descriptors, so a
// supervisor that exited but is not reaped counts as gone.
bool is_supervisor_of(pid_t pid, const std::filesystem::path& dir) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  const std::string id = std::to_string(pid);
  return any_proc_entry(id, "cmdline", [&](std::string_view arg) { return same_directory(arg, dir); }) ||
         holds_open(id, dir / kSupervisorLockFile);
}

bool exit_record_exists(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::exists(dir / kExitFile, ec);
}

// The exit record of a trial whose supervisor is gone. Never throws: a damaged or missing record
// becomes a cancelled trial whose message says why. `status` is the supervisor's wait status when
// we reaped it ourselves.
TrialExit collect_exit(const std::filesystem::path& dir, std::optional<int> status) {
  try {
    if (std::optional<TrialExit> exit = read_trial_exit(dir)) return *exit;
  } catch (const std::exception& e) {
    return {.kind = ExitKind::cancelled, .finished_at = wall_seconds(), .message = e.what()};
  }
  TrialExit died{.kind = ExitKind::cancelled, .finished_at = wall_seconds(), .message = kDiedMessage};
  if (status && WIFEXITED(*status))  // it gave up (it could not write its record): not killed
    died.message = "the supervisor exited with code " + std::to_string(WEXITSTATUS(*status)) +
                   " without recording an exit; see " + (dir / kSupervisorLog).string();
  try {
    if (const auto record = read_supervisor_record(dir)) died.started_at = record->started_at;
  } catch (const std::exception&) {
  }
  return died;
}

// A supervisor that died without recording an exit (kill -9, the OOM killer) took its command with
// it (PR_SET_PDEATHSIG), but not the rest of the command's process group (a shell's children, a
// trainer's data loaders), which ran on beside the trial's next attempt. The group is killed as soon
// as poll() sees the death, so its id cannot have been reused meanwhile; and only the group that
// this very supervisor recorded.
void kill_group_left_by(const std::filesystem::path& dir, pid_t supervisor) {
  try {
    const std::optional<SupervisorRecord> record = read_supervisor_record(dir);
    if (record && record->supervisor_pid == supervisor) ::killpg(record->process_group, SIGKILL);
  } catch (const std::exception&) {
    // A damaged record names no group to kill; collect_exit reports it.
  }
}

// Whether /proc/<pid>/environ holds TUNE_TRIAL_DIR naming `dir`: the process descends from this
// trial's command (every command gets it, and its children inherit it); or, the campaign having been
// moved since the command started (its TUNE_TRIAL_DIR names the old place), whether it works in the
// trial directory, where the command starts. False when unreadable.
bool runs_for_trial(const std::string& pid, const std::filesystem::path& dir) {
  constexpr std::string_view key = "TUNE_TRIAL_DIR=";
  bool named = false;
  const bool has_variable = any_proc_entry(pid, "environ", [&](std::string_view variable) {
    if (!variable.starts_with(key)) return false;
    named = same_directory(variable.substr(key.size()), dir);
    return true;
  });
  return named || (has_variable && works_in(pid, dir));
}

// A supervisor that died while no tuner ran (kill -9, the OOM killer, after the tuner had stopped)
// is found dead only by the next tuner, when the group id it recorded may have been reused, so its
// group is not killed by id. What is left of its trial is found by identity instead: every process
// whose environment names this trial's directory (the command's children, in its group or in a
// session of their own), which would otherwise run on beside the trial's next attempt.
void kill_processes_of_trial(const std::filesystem::path& dir) {
  std::error_code ec;
  const std::string self = std::to_string(::getpid());
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename().string();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || pid == self) continue;
    if (runs_for_trial(pid, dir)) ::kill(static_cast<pid_t>(std::stol(pid)), SIGKILL);
  }
}

}  // namespace

struct LocalExecutor::Running {
  std::filesystem::path dir;
  pid_t pid = 0;       // the supervisor
  bool child = false;  // started by this executor: reaped with waitpid; otherwise attached
};

LocalExecutor::LocalExecutor(std::vector<std::string> supervisor_command)
    : supervisor_command_(std::move(supervisor_command)) {
  if (supervisor_command_.empty()) throw std::invalid_argument("LocalExecutor: empty supervisor command");
  std::error_code ec;
  exec_running_image_ = std::filesystem::equivalent(supervisor_command_.front(), "/proc/self/exe", ec) && !ec;
}

// Started supervisors are neither stopped nor reaped: they finish their trials and record them. (In
// the `tune` program the process exits next; a long-lived embedding program that destroys an
// executor early leaves them to be reaped by itself or by init.)
LocalExecutor::~LocalExecutor() = default;

std::string LocalExecutor::launch(const TrialLaunch& trial) {
  if (trial.argv.empty()) throw std::runtime_error("trial " + trial.id + ": the command is empty");
  if (running_.contains(trial.id)) throw std::runtime_error("trial " + trial.id + " is already running");
  const std::filesystem::path dir = std::filesystem::absolute(trial.dir).lexically_normal();
  std::filesystem::create_directories(dir);
  // Records of an earlier run of this trial would be mistaken for this run's.
  std::filesystem::remove(dir / kExitFile);
  std::filesystem::remove(dir / kSupervisorFile);
  write_command_record(dir, trial);

  std::vector<std::string> args(supervisor_command_.begin() + 1, supervisor_command_.end());
  args.push_back(dir.string());
  args.push_back(std::to_string(trial.timeout.count()));
  args.push_back(std::to_string(trial.grace.count()));
  args.emplace_back("--");
  args.insert(args.end(), trial.argv.begin(), trial.argv.end());
  pid_t pid = 0;
  try {
    bp::child supervisor(bp::exe = supervisor_command_.front(), bp::args = args, bp::std_in < bp::null,
                         bp::std_out > bp::null, bp::std_err > (dir / kSupervisorLog).string(),
                         DetachedSupervisor{.exec_running_image = exec_running_image_});
    pid = supervisor.id();
    supervisor.detach();  // an attached bp::child would kill it on destruction; we waitpid it ourselves
  } catch (const std::exception& e) {
    throw std::runtime_error("trial " + trial.id + ": cannot start the supervisor '" + supervisor_command_.front() +
                             "': " + e.what());
  }
  running_.emplace(trial.id, std::make_unique<Running>(Running{.dir = dir, .pid = pid, .child = true}));
  return {};
}

bool trial_is_supervised(const std::filesystem::path& dir) {
  const int fd = ::open((dir / kSupervisorLockFile).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // no supervisor ever started here
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

bool LocalExecutor::attach(const std::string& id, const std::filesystem::path& dir_in) {
  const std::filesystem::path dir = std::filesystem::absolute(dir_in).lexically_normal();
  if (const auto it = running_.find(id); it != running_.end()) {
    if (it->second->dir == dir) return true;
    throw std::runtime_error("trial " + id + " is already followed in '" + it->second->dir.string() +
                             "', cannot attach it to '" + dir.string() + "'");
  }
  // A supervisor that holds the lock but has not written its record yet (it was started just
  // before the previous tuner died) is given a moment to do so.
  for (int i = 0; i < 500 && trial_is_supervised(dir) && !std::filesystem::exists(dir / kSupervisorFile) &&
                  !exit_record_exists(dir);
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::optional<SupervisorRecord> record = read_supervisor_record(dir);  // throws if damaged
  const pid_t pid = record ? record->supervisor_pid : 0;
  // A supervisor that is alive now and later exits is caught by poll(); one that exited between
  // these two looks left its record, hence the second look at exit.yaml.
  if (exit_record_exists(dir) || is_supervisor_of(pid, dir) || exit_record_exists(dir)) {
    running_.emplace(id, std::make_unique<Running>(Running{.dir = dir, .pid = pid, .child = false}));
    return true;
  }
  if (record) kill_processes_of_trial(dir);
  return false;
}

std::vector<FinishedTrial> LocalExecutor::poll() {
  std::vector<FinishedTrial> finished;
  for (auto it = running_.begin(); it != running_.end();) {
    Running& r = *it->second;
    bool ended = false;
    std::optional<int> status;
    if (r.child) {
      int wait_status = 0;
      pid_t got = 0;
      do got = ::waitpid(r.pid, &wait_status, WNOHANG);
      while (got < 0 && errno == EINTR);
      // ECHILD: someone else reaped it (or SIGCHLD is ignored); its record tells the rest.
      ended = got == r.pid || (got < 0 && errno == ECHILD);
      if (got == r.pid) status = wait_status;
    } else {
      ended = exit_record_exists(r.dir) || !is_supervisor_of(r.pid, r.dir);
    }
    if (!ended) {
      ++it;
      continue;
    }
    if (!exit_record_exists(r.dir)) kill_group_left_by(r.dir, r.pid);
    finished.push_back({.id = it->first, .exit = collect_exit(r.dir, status)});
    it = running_.erase(it);
  }
  return finished;
}

void LocalExecutor::cancel(const std::string& id) {
  const auto it = running_.find(id);
  if (it == running_.end()) return;  // unknown or already reported: nothing to stop
  const Running& r = *it->second;
  // Our own child cannot have a reused pid (it is not reaped yet); an attached one is checked.
  if (r.child || is_supervisor_of(r.pid, r.dir)) ::kill(r.pid, SIGTERM);
}

std::size_t LocalExecutor::running() const { return running_.size(); }

std::vector<std::string> LocalExecutor::running_ids() const {
  std::vector<std::string> ids;
  ids.reserve(running_.size());
  for (const auto& [id, r] : running_) ids.push_back(id);
  return ids;
}

}  // namespace tune::adapters
