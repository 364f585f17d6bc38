#include "tuner/campaign/campaign_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace tune::tuner {

std::optional<CampaignLock> CampaignLock::try_acquire(const std::filesystem::path& dir, std::string* holder) {
  const std::filesystem::path path = dir / "tune.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    if (holder) {
      std::ifstream pid(dir / "tuner.pid");
      std::string p;
      *holder = (pid >> p) ? "process " + p : "another process";
    }
    return std::nullopt;
  }
  return CampaignLock(fd);
}

CampaignLock::CampaignLock(CampaignLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

CampaignLock::~CampaignLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace tune::tuner
