// The supervisor of one trial (see supervisor.hpp): a single-threaded process that starts the
// command with fork + execvp, waits for it with sigtimedwait (SIGCHLD, SIGTERM, SIGINT blocked and
// taken synchronously, so there are no signal handlers and no races between a signal and the wait),
// enforces the time limit on the command's whole process group and records the end in exit.yaml.
#include "tune/adapters/executor/supervisor.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <exception>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "tune/adapters/executor/trial_exit.hpp"
#include "tune/io/printable_text.hpp"

extern char** environ;

namespace tune::adapters {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string format_ms(milliseconds d) {
  if (d.count() < 1000) return std::to_string(d.count()) + " ms";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : std::string());
  }
  return "ended with wait status " + std::to_string(status);
}

struct Arguments {
  std::filesystem::path trial_dir;
  milliseconds timeout{0};
  milliseconds grace{0};
  std::vector<std::string> command;
};

std::optional<std::int64_t> parse_ms(std::string_view s) {
  std::int64_t value = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), value);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || value < 0) return std::nullopt;
  // Clamped to ten years, so that adding it to a time point cannot overflow.
  return std::min<std::int64_t>(value, std::int64_t{10} * 365 * 24 * 3600 * 1000);
}

// tune __supervise TRIAL_DIR TIMEOUT_MS GRACE_MS -- COMMAND [ARGS...]
std::optional<Arguments> parse_arguments(int argc, char** argv, std::string& error) {
  int i = 1;
  if (i < argc && std::string_view(argv[i]) == "__supervise") ++i;
  if (argc - i < 5 || std::string_view(argv[i + 3]) != "--") {
    error = "usage: tune __supervise TRIAL_DIR TIMEOUT_MS GRACE_MS -- COMMAND [ARGS...]";
    return std::nullopt;
  }
  const auto timeout = parse_ms(argv[i + 1]);
  const auto grace = parse_ms(argv[i + 2]);
  if (!timeout || !grace) {
    error = std::string("TIMEOUT_MS and GRACE_MS must be non-negative integers, got '") + argv[i + 1] +
            "' and '" + argv[i + 2] + "'";
    return std::nullopt;
  }
  Arguments args;
  args.trial_dir = std::filesystem::absolute(argv[i]).lexically_normal();
  args.timeout = milliseconds(*timeout);
  args.grace = milliseconds(*grace);
  args.command.assign(argv + i + 4, argv + argc);
  return args;
}

// The environment additions from TRIAL_DIR/command.yaml (none if the file is absent).
std::map<std::string, std::string> read_environment_additions(const std::filesystem::path& trial_dir) {
  const std::filesystem::path path = trial_dir / kCommandFile;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  std::map<std::string, std::string> additions;
  try {
    const YAML::Node env = YAML::LoadFile(path.string())["environment"];
    if (env.IsDefined() && !env.IsNull()) {
      if (!env.IsMap()) throw std::runtime_error("field 'environment' must be a map of NAME: value");
      for (const auto& kv : env) additions[kv.first.as<std::string>()] = kv.second.as<std::string>();
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot read the environment from '" + path.string() + "': " + printable_text(e.what()));
  }
  return additions;
}

// The supervisor's environment with `additions` added (an addition replaces a variable of the same
// name).
std::vector<std::string> merged_environment(const std::map<std::string, std::string>& additions) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::string name(entry.substr(0, entry.find('=')));
    if (!additions.contains(name)) env.emplace_back(entry);
  }
  for (const auto& [name, value] : additions) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Descriptors inherited from the tuner must not leak into the command.
void mark_inherited_descriptors_cloexec() {
  std::vector<int> fds;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) {
    int fd = -1;
    const std::string name = it->path().filename().string();
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec == std::errc() && fd > 2) fds.push_back(fd);
  }
  for (int fd : fds) {
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

// What the child reports through the close-on-exec pipe when it cannot start the command.
struct StartFailure {
  enum Step : int { chdir_dir, open_stdin, open_stdout, open_stderr, exec } step;
  int error;
};

// Runs in the forked child: only async-signal-safe calls (the supervisor is single-threaded, but
// this keeps it correct regardless).
[[noreturn]] void exec_command(const char* dir, const char* stdout_path, const char* stderr_path,
                               char* const* argv, char** envp, int report_fd, pid_t supervisor) {
  auto fail = [report_fd](StartFailure::Step step) {
    const StartFailure failure{step, errno};
    [[maybe_unused]] const ssize_t n = ::write(report_fd, &failure, sizeof failure);
    ::_exit(127);
  };
  ::setpgid(0, 0);
  // The command dies with its supervisor (kill -9, the OOM killer): else it ran on unwatched while
  // the tuner, finding no exit record, ran the trial again beside it. (The tuner kills the rest of
  // the group.) A supervisor gone before this call is seen by the parent check.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (::getppid() != supervisor) ::_exit(127);
  // Dispositions set to "ignore" survive exec; the command starts with defaults and nothing blocked.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  if (::chdir(dir) != 0) fail(StartFailure::chdir_dir);
  auto redirect = [&](const char* path, int flags, int target, StartFailure::Step step) {
    const int fd = ::open(path, flags | O_CLOEXEC, 0644);
    if (fd < 0 || ::dup2(fd, target) < 0) fail(step);  // dup2 clears O_CLOEXEC on the target
    ::close(fd);
  };
  redirect("/dev/null", O_RDONLY, STDIN_FILENO, StartFailure::open_stdin);
  redirect(stdout_path, O_WRONLY | O_CREAT | O_TRUNC, STDOUT_FILENO, StartFailure::open_stdout);
  redirect(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, STDERR_FILENO, StartFailure::open_stderr);
  environ = envp;  // execvp searches the PATH of the command's environment
  ::execvp(argv[0], argv);
  fail(StartFailure::exec);
  ::_exit(127);
}

std::string describe_failure(const StartFailure& failure, const Arguments& args) {
  const std::string reason = std::strerror(failure.error);
  switch (failure.step) {
    case StartFailure::chdir_dir:
      return "cannot enter the trial directory '" + args.trial_dir.string() + "': " + reason;
    case StartFailure::open_stdin:
      return "cannot open /dev/null for the command's stdin: " + reason;
    case StartFailure::open_stdout:
      return "cannot create '" + (args.trial_dir / kStdoutFile).string() + "': " + reason;
    case StartFailure::open_stderr:
      return "cannot create '" + (args.trial_dir / kStderrFile).string() + "': " + reason;
    case StartFailure::exec:
      break;
  }
  return "cannot execute '" + args.command.front() + "': " + reason;
}

struct Started {
  pid_t pid = -1;
  std::optional<std::string> failure;  // set if the command could not be started
};

Started start_command(const Arguments& args, const std::map<std::string, std::string>& additions) {
  std::vector<std::string> argv_strings = args.command;
  std::vector<std::string> env_strings = merged_environment(additions);
  std::vector<char*> argv = c_strings(argv_strings);
  std::vector<char*> envp = c_strings(env_strings);
  const std::string dir = args.trial_dir.string();
  const std::string out = (args.trial_dir / kStdoutFile).string();
  const std::string err = (args.trial_dir / kStderrFile).string();

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return {-1, std::string("cannot create a pipe: ") + std::strerror(errno)};
  const pid_t supervisor = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int saved = errno;
    ::close(report[0]);
    ::close(report[1]);
    return {-1, std::string("cannot fork: ") + std::strerror(saved)};
  }
  if (pid == 0) {
    ::close(report[0]);
    exec_command(dir.c_str(), out.c_str(), err.c_str(), argv.data(), envp.data(), report[1], supervisor);
  }
  ::close(report[1]);
  ::setpgid(pid, pid);  // also here, so the group exists before we may signal it (EACCES after exec: fine)

  // EOF: the exec succeeded (the pipe closed on exec). A full record: the child failed and exits.
  StartFailure failure{};
  std::size_t got = 0;
  while (got < sizeof failure) {
    const ssize_t n = ::read(report[0], reinterpret_cast<char*>(&failure) + got, sizeof failure - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(report[0]);
  if (got < sizeof failure) return {pid, std::nullopt};
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {pid, describe_failure(failure, args)};
}

// Reaps descendants other than `leader` that were reparented to us (we are a subreaper) and have
// exited; returns true once `leader` has exited (it is left unreaped, so its pid, which is the
// process group's id, cannot be reused while we still signal the group).
bool leader_exited(pid_t leader) {
  for (;;) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return false;  // ECHILD: none
    if (info.si_pid == 0) return false;
    if (info.si_pid == leader) return true;
    ::waitpid(info.si_pid, nullptr, WNOHANG);
  }
}

// The pids of our children (processes whose parent is this supervisor), from /proc: descendants of
// the command that left its process group (setsid, setpgid) are reparented to us, a subreaper, when
// their parent exits.
std::vector<pid_t> own_children() {
  std::vector<pid_t> children;
  const pid_t self = ::getpid();
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    pid_t pid = 0;
    if (std::from_chars(name.data(), name.data() + name.size(), pid).ec != std::errc() || pid == self) continue;
    std::FILE* f = std::fopen(("/proc/" + name + "/stat").c_str(), "r");
    if (!f) continue;
    char buf[512];
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
    const char* close = std::strrchr(buf, ')');
    char state = 0;
    int ppid = 0;
    if (close && std::sscanf(close + 1, " %c %d", &state, &ppid) == 2 && ppid == self) children.push_back(pid);
  }
  return children;
}

// Kills and reaps every process left of the trial: the command's process group, and every other
// descendant, such as a worker the command started in a session of its own (setsid), which outlived
// the command and was reparented to us. Each is one of our children until we reap it, so its pid
// cannot be reused while we signal it; killing it reparents its own children to us, killed next.
void reap_leftovers(pid_t group) {
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  for (;;) {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    const bool group_gone = ::kill(-group, 0) != 0 && errno == ESRCH;
    const std::vector<pid_t> children = own_children();
    for (const pid_t child : children) {
      if (::getpgid(child) == child) ::killpg(child, SIGKILL);  // its group's id is its (unreaped) pid
      ::kill(child, SIGKILL);
    }
    if (group_gone && children.empty()) return;
    if (Clock::now() >= deadline) return;  // a process stuck in the kernel; do not wait forever
    const timespec ts{0, 10'000'000};
    ::sigtimedwait(&chld, nullptr, &ts);
  }
}

enum class Termination { none, timeout, cancelled };

// The trial directory where it is now, found through the supervisor.lock we hold open (`lock_fd`):
// the campaign directory may have been moved (renamed) while the trial ran, and an exit record
// written to the path we were given failed, so that the tuner resumed in the new place lost the
// trial's result and ran it again. The given path if the lock's cannot be read, or names a deleted
// file (" (deleted)": the directory was removed, or copied to another filesystem and removed).
std::filesystem::path trial_dir_now(const std::filesystem::path& given, int lock_fd) {
  std::error_code ec;
  const std::filesystem::path lock = std::filesystem::read_symlink("/proc/self/fd/" + std::to_string(lock_fd), ec);
  if (ec || !lock.is_absolute() || lock.filename() != kSupervisorLockFile) return given;
  return lock.parent_path();
}

int supervise(const Arguments& args, const sigset_t& handled, int lock_fd) {
  const double attempted_at = wall_seconds();
  TrialExit exit;
  std::map<std::string, std::string> additions;
  try {
    additions = read_environment_additions(args.trial_dir);
  } catch (const std::exception& e) {
    exit = {.kind = ExitKind::launch_failed, .code = 0, .signal = 0, .started_at = attempted_at,
            .finished_at = wall_seconds(), .message = e.what()};
    write_trial_exit(trial_dir_now(args.trial_dir, lock_fd), exit);
    return 0;
  }

  const double started_at = wall_seconds();
  const auto started = Clock::now();
  const Started command = start_command(args, additions);
  if (command.failure) {
    exit = {.kind = ExitKind::launch_failed, .code = 0, .signal = 0, .started_at = started_at,
            .finished_at = wall_seconds(), .message = *command.failure};
    write_trial_exit(trial_dir_now(args.trial_dir, lock_fd), exit);
    return 0;
  }
  const pid_t group = command.pid;
  try {
    write_supervisor_record(args.trial_dir, {.supervisor_pid = ::getpid(), .process_group = group,
                                             .started_at = started_at});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tune supervisor: %s (the trial runs on but cannot be re-attached)\n", e.what());
  }

  Termination reason = Termination::none;
  int request_signal = 0;
  bool killed_hard = false;
  bool asked_again = false;  // a second stop request, answered with SIGKILL at once
  // Instants to act at; kNever when there is nothing to do.
  constexpr Clock::time_point kNever = Clock::time_point::max();
  const Clock::time_point deadline = args.timeout.count() > 0 ? started + args.timeout : kNever;
  Clock::time_point kill_at = kNever;

  auto terminate = [&](Termination why, Clock::time_point now) {
    reason = why;
    ::killpg(group, SIGTERM);
    ::killpg(group, SIGCONT);  // a stopped process must run to act on SIGTERM
    kill_at = now + args.grace;
  };
  auto kill_now = [&] {
    ::killpg(group, SIGKILL);
    killed_hard = true;
    kill_at = kNever;
  };

  while (!leader_exited(group)) {
    auto now = Clock::now();
    if (reason == Termination::none && now >= deadline) terminate(Termination::timeout, now);
    if (now >= kill_at) kill_now();

    auto wake = now + std::chrono::seconds(1);  // a periodic look, in case a SIGCHLD was merged away
    if (reason == Termination::none) wake = std::min(wake, deadline);
    wake = std::min(wake, kill_at);
    const auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(std::max(wake - now, Clock::duration::zero()));
    const timespec ts{static_cast<time_t>(wait.count() / 1'000'000'000), static_cast<long>(wait.count() % 1'000'000'000)};
    const int sig = ::sigtimedwait(&handled, nullptr, &ts);
    if (sig == SIGTERM || sig == SIGINT) {
      now = Clock::now();
      if (reason == Termination::none) {
        request_signal = sig;
        terminate(Termination::cancelled, now);
      } else {
        if (kill_at != kNever) asked_again = true;
        kill_now();  // asked again while terminating: do not wait for the grace period
      }
    }
  }

  // The leader has exited but is not reaped yet: its pid still names the group. Kill whatever is
  // left of the group (grandchildren), then reap the leader and everything reparented to us.
  ::killpg(group, SIGKILL);
  int status = 0;
  while (::waitpid(group, &status, 0) < 0 && errno == EINTR) {
  }
  reap_leftovers(group);

  exit.started_at = started_at;
  exit.finished_at = wall_seconds();
  if (WIFEXITED(status)) exit.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  // A kill on a second request came before the grace period was over: saying "after the grace
  // period" told a user who pressed Ctrl-C twice that the trial had had its 10 s to save its work.
  const std::string how = !killed_hard ? describe_status(status)
                          : asked_again ? "killed with SIGKILL when asked to stop again, within its " +
                                              format_ms(args.grace) + " grace period"
                                        : "killed with SIGKILL after the " + format_ms(args.grace) + " grace period";
  switch (reason) {
    case Termination::timeout:
      exit.kind = ExitKind::timeout;
      exit.message = "timed out after " + format_ms(args.timeout) + "; " + how;
      break;
    case Termination::cancelled:
      exit.kind = ExitKind::cancelled;
      exit.message = std::string("cancelled (the supervisor received ") +
                     (request_signal == SIGINT ? "SIGINT" : "SIGTERM") + "); " + how;
      break;
    case Termination::none:
      exit.kind = WIFSIGNALED(status) ? ExitKind::signaled : ExitKind::exited;
      exit.message = how;
      break;
  }
  write_trial_exit(trial_dir_now(args.trial_dir, lock_fd), exit);
  return 0;
}

}  // namespace

int supervise_main(int argc, char** argv) {
  // First of all: take SIGTERM, SIGINT and SIGCHLD synchronously (LocalExecutor already starts us
  // with them blocked, so a cancel that arrives early is kept pending, not lost).
  sigset_t handled;
  sigemptyset(&handled);
  sigaddset(&handled, SIGTERM);
  sigaddset(&handled, SIGINT);
  sigaddset(&handled, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &handled, nullptr);
  ::signal(SIGCHLD, SIG_DFL);  // SIG_IGN would make the kernel reap the command behind our back
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);

  std::string error;
  const std::optional<Arguments> args = parse_arguments(argc, argv, error);
  if (!args) {
    std::fprintf(stderr, "tune supervisor: %s\n", error.c_str());
    return 2;
  }
  mark_inherited_descriptors_cloexec();
  // Held for the supervisor's whole life (close-on-exec, so the command does not inherit it): a
  // second supervisor for the same trial directory backs off instead of running the trial again.
  const int lock_fd = ::open((args->trial_dir / kSupervisorLockFile).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    std::fprintf(stderr, "tune supervisor: %s is already supervised; not starting it again\n", args->trial_dir.c_str());
    return 75;
  }
  // Orphaned grandchildren are reparented to us, so we can kill and reap them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  try {
    return supervise(*args, handled, lock_fd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tune supervisor: %s\n", e.what());
    return 1;
  }
}

}  // namespace tune::adapters
