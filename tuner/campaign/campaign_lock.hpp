#pragma once
// An exclusive flock on DIR/tune.lock for as long as the object lives: one process changes a
// campaign at a time. A tuner (tune run / resume) also holds DIR/tuner.lock for its whole session,
// so that a short command (ask, tell) finding tune.lock held can tell a tuner, which it must not wait
// for, from another short command, which lets go in a moment. The locks die with the process (kill -9
// included), so a crash never leaves them stale.
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace tune::tuner {

// Who holds a campaign's lock, as a read-only probe sees it.
enum class LockHolder {
  none,     // no one: no tuner runs
  command,  // a short command (ask, tell, or a run creating the campaign)
  tuner,    // a tuner, for its whole session
  unknown,  // the lock file cannot be opened (no permission, say): no way to tell
};

// How long a command waits for other short commands to let go of the campaign, unless the
// environment variable TUNE_LOCK_WAIT sets it (a duration: 90, 500ms, 2m; 0 waits not at all).
inline constexpr std::chrono::seconds kLockPatience{60};
inline constexpr const char* kLockWaitVariable = "TUNE_LOCK_WAIT";

// kLockPatience, or TUNE_LOCK_WAIT if it is set. Throws std::runtime_error naming the variable and
// the fix if it is not a duration.
std::chrono::milliseconds lock_patience();

class CampaignLock {
 public:
  enum class Role { command, tuner };

  // Who holds the lock a command did not get: a tuner, or a short command it waited for in vain.
  struct Refusal {
    LockHolder holder = LockHolder::unknown;
    std::string name;  // "the tuner (process 123)", "process 456 (tune tell)"
    std::chrono::milliseconds waited = kLockPatience;  // for a short command: the patience that ran out
    // "DIR is driven by the tuner (process 123); 'tune stop DIR' stops it", or, for a short command
    // waited for in vain, "DIR is still held by ... after 1m00s of waiting for it; try again later".
    std::string text(const std::filesystem::path& dir) const;
  };

  // DIR's lock for `role`. While another short command holds it, waits up to `patience` (polling;
  // default lock_patience()); refuses at once (nullopt) if a tuner holds it, and nullopt when the
  // patience runs out; `refusal` then says who holds it. A tuner gets tuner.lock too. `who` ("tune
  // tell") is recorded in tune.lock for the messages of those who wait.
  static std::optional<CampaignLock> acquire(const std::filesystem::path& dir, Role role, const std::string& who,
                                             Refusal* refusal = nullptr,
                                             std::optional<std::chrono::milliseconds> patience = std::nullopt);
  // Who holds DIR's lock, through read-only descriptors: creates nothing, and needs no write access.
  // With LockHolder::unknown, `why` says why the lock file could not be opened.
  static LockHolder probe(const std::filesystem::path& dir, std::string* why = nullptr);
  // The holder as the messages name it: "the tuner (process 123)", "process 456 (tune tell)".
  static std::string describe_holder(const std::filesystem::path& dir, LockHolder holder);
  // The running tuner's pid: the holder of DIR/tuner.lock as /proc/locks lists it, else what
  // DIR/tuner.pid records ("" if neither says).
  static std::string tuner_pid(const std::filesystem::path& dir);

  CampaignLock(CampaignLock&& other) noexcept;
  CampaignLock& operator=(CampaignLock&&) = delete;
  ~CampaignLock();

 private:
  CampaignLock(int fd, int tuner_fd) : fd_(fd), tuner_fd_(tuner_fd) {}
  int fd_ = -1;
  int tuner_fd_ = -1;  // DIR/tuner.lock, held by a tuner only
};

}  // namespace tune::tuner
