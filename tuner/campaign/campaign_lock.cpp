#include "tuner/campaign/campaign_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/duration.hpp"

namespace tune::tuner {

namespace {

constexpr const char* kLockFile = campaign_files::kLock;
constexpr const char* kTunerLockFile = campaign_files::kTunerLock;

[[noreturn]] void fail_open(const std::filesystem::path& path) {
  throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
}

// Whether someone holds an exclusive flock on the file open at `fd`. A shared flock, taken and let
// go at once, answers without write access (flock works on an O_RDONLY descriptor).
bool held(int fd) {
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);
    return false;
  }
  return errno == EWOULDBLOCK;
}

// Whether a tuner holds DIR/tuner.lock. No file: no tuner ever ran here (or one from before
// tuner.lock, which tune.lock alone still keeps out).
bool tuner_holds(const std::filesystem::path& dir) {
  const int fd = ::open((dir / kTunerLockFile).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool h = held(fd);
  ::close(fd);
  return h;
}

// The process that holds a flock on `path`, as the kernel lists it in /proc/locks
// ("1: FLOCK  ADVISORY  WRITE 4242 fe:01:1234567 0 EOF": pid, then device major:minor in hex and
// inode); none if no one does or /proc/locks cannot be read.
std::optional<long> flock_holder(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    std::istringstream words(line);
    std::string id, type, advisory, mode, file;
    long pid = 0;
    if (!(words >> id >> type) || type != "FLOCK") continue;  // also skips "->" lines of waiters
    if (!(words >> advisory >> mode >> pid >> file)) continue;
    unsigned major_number = 0, minor_number = 0;
    unsigned long long inode = 0;
    if (std::sscanf(file.c_str(), "%x:%x:%llu", &major_number, &minor_number, &inode) != 3) continue;
    if (major_number == major(st.st_dev) && minor_number == minor(st.st_dev) && inode == st.st_ino) return pid;
  }
  return std::nullopt;
}

// Whether process `pid` has ended: gone, or a zombie its parent has not reaped yet (it runs nothing
// and holds no descriptor, but kill(pid, 0) still succeeds on it).
bool process_ended(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  // "pid (comm) state ...": comm may hold spaces and parentheses, so the state follows the last ')'.
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return text.empty();  // gone since the kill
  const char state = text[close + 2];
  return state == 'Z' || state == 'X';
}

// A tuner killed with SIGKILL just after it forked a supervisor leaves its locks held for a moment
// by the child, whose copies of the descriptors close at its exec (O_CLOEXEC). The kernel still
// names the dead tuner as the holder (as 0 where its pid cannot be translated into our pid
// namespace), so such a lock is let go soon: waited for, not refused. The dead tuner may still be a
// zombie (the shell that started it has not reaped it yet): a `tune resume` typed right after the
// kill -9 was refused as "driven by the tuner (process N)", N the killed tuner.
bool held_by_dead_tuner(const std::filesystem::path& dir) {
  const std::optional<long> holder = flock_holder(dir / kTunerLockFile);
  return holder && (*holder <= 0 || process_ended(static_cast<pid_t>(*holder)));
}

std::string first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

std::chrono::milliseconds lock_patience() {
  const char* text = std::getenv(kLockWaitVariable);
  if (!text) return kLockPatience;
  const std::optional<double> seconds = parse_duration(text);
  if (!seconds || !(*seconds >= 0) || *seconds > 1e9)
    throw std::runtime_error(std::string("environment variable ") + kLockWaitVariable + "='" + text +
                             "' is not a duration; set it to one such as 90, 500ms or 2m (0: do not wait), or "
                             "unset it to wait " + format_duration(kLockPatience.count()));
  return std::chrono::milliseconds(static_cast<long long>(std::llround(*seconds * 1000)));
}

std::optional<CampaignLock> CampaignLock::acquire(const std::filesystem::path& dir, Role role, const std::string& who,
                                                  Refusal* refusal, std::optional<std::chrono::milliseconds> patience) {
  const std::chrono::milliseconds wait = patience ? *patience : lock_patience();
  const std::filesystem::path path = dir / kLockFile;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) fail_open(path);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  // tune.lock is what excludes: whoever holds it is alone with the campaign. tuner.lock only says
  // who that is. A tuner takes tune.lock first, then tuner.lock, and lets go of them in the reverse
  // order (it exits), so tune.lock held with tuner.lock free is a short command, or a tuner between
  // its two locks: both let go or become a tuner in a moment, and the next poll sees which.
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    // (Held still after the look at /proc/locks: a lock let go in between is no tuner's.)
    const bool tuner = tuner_holds(dir) && !held_by_dead_tuner(dir) && tuner_holds(dir);
    if (tuner || std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
      if (refusal) {
        refusal->holder = tuner ? LockHolder::tuner : LockHolder::command;
        refusal->name = describe_holder(dir, refusal->holder);
        refusal->waited = wait;
      }
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // For the messages of those who wait: who holds it (a reader may see it half written; it names
  // no one then).
  const std::string record = std::to_string(::getpid()) + " " + who + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, record.data(), record.size(), 0) < 0) {
    // Only the messages lose: the lock is held.
  }
  int tuner_fd = -1;
  if (role == Role::tuner) {
    const std::filesystem::path tuner_path = dir / kTunerLockFile;
    tuner_fd = ::open(tuner_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (tuner_fd < 0) {
      ::close(fd);
      fail_open(tuner_path);
    }
    // Blocking: under tune.lock no other tuner gets here; only probes hold it, for an instant.
    while (::flock(tuner_fd, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  return CampaignLock(fd, tuner_fd);
}

LockHolder CampaignLock::probe(const std::filesystem::path& dir, std::string* why) {
  const std::filesystem::path path = dir / kLockFile;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return LockHolder::none;  // no one ever took it
    if (why) *why = "cannot open " + path.string() + ": " + std::strerror(errno);
    return LockHolder::unknown;
  }
  const bool h = held(fd);
  ::close(fd);
  if (!h) return LockHolder::none;
  return tuner_holds(dir) ? LockHolder::tuner : LockHolder::command;
}

// The kernel's record of who holds tuner.lock, where it can be read: tuner.pid is rewritten by a new
// tuner only after it takes the lock, so for a moment after a kill -9 it still names the dead tuner,
// whose pid may already belong to another process (which `tune stop` would have signalled).
std::string CampaignLock::tuner_pid(const std::filesystem::path& dir) {
  if (const std::optional<long> holder = flock_holder(dir / kTunerLockFile); holder && *holder > 0)
    return std::to_string(*holder);
  return first_line(dir / campaign_files::kTunerPid);
}

std::string CampaignLock::describe_holder(const std::filesystem::path& dir, LockHolder holder) {
  if (holder == LockHolder::tuner) {
    const std::string pid = tuner_pid(dir);
    return pid.empty() ? "a tuner" : "the tuner (process " + pid + ")";
  }
  const std::string record = first_line(dir / kLockFile);  // "PID tune tell"
  const std::size_t space = record.find(' ');
  // The record is the last tune command's to take the lock; another program's flock (a backup, a
  // script) was named as that command, long finished. The kernel's list says who holds it.
  if (const std::optional<long> holder_pid = flock_holder(dir / kLockFile);
      holder_pid && (space == std::string::npos || record.substr(0, space) != std::to_string(*holder_pid))) {
    const std::string command = first_line("/proc/" + std::to_string(*holder_pid) + "/comm");
    return "process " + std::to_string(*holder_pid) + (command.empty() ? "" : " (" + command + ", not a tune command)");
  }
  if (space == std::string::npos) return "another process";
  return "process " + record.substr(0, space) + " (" + record.substr(space + 1) + ")";
}

std::string CampaignLock::Refusal::text(const std::filesystem::path& dir) const {
  if (holder == LockHolder::tuner) return dir.string() + " is driven by " + name + "; 'tune stop " + dir.string() + "' stops it";
  return dir.string() + " is still held by " + name + " after " +
         format_duration(std::chrono::duration<double>(waited).count()) + " of waiting for it; try again later (" +
         kLockWaitVariable + " sets how long to wait)";
}

CampaignLock::CampaignLock(CampaignLock&& other) noexcept : fd_(other.fd_), tuner_fd_(other.tuner_fd_) {
  other.fd_ = -1;
  other.tuner_fd_ = -1;
}

CampaignLock::~CampaignLock() {
  if (tuner_fd_ >= 0) ::close(tuner_fd_);  // first: see acquire()
  if (fd_ >= 0) ::close(fd_);              // releases the flock
}

}  // namespace tune::tuner
