#pragma once
// An exclusive flock on DIR/tune.lock for as long as the object lives: one process drives a campaign
// at a time. The lock dies with the process (kill -9 included), so a crash never leaves it stale.
#include <filesystem>
#include <optional>
#include <string>

namespace tune::tuner {

class CampaignLock {
 public:
  // nullopt if another process holds the lock; `holder` then names it (from the pid file) if known.
  static std::optional<CampaignLock> try_acquire(const std::filesystem::path& dir, std::string* holder = nullptr);
  CampaignLock(CampaignLock&& other) noexcept;
  CampaignLock& operator=(CampaignLock&&) = delete;
  ~CampaignLock();

 private:
  explicit CampaignLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace tune::tuner
