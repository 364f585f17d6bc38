// `tune stop DIR`: asks the tuner driving a campaign to checkpoint and exit.
#include <cstdio>
#include <sstream>

#include "tuner/cli/commands.hpp"

namespace tune::tuner {

int stop(const std::filesystem::path& dir) {
  if (!holds_campaign(dir, "stop")) return kExitUsage;
  // The holder of tuner.lock where /proc/locks says, not only tuner.pid, which names a dead tuner for
  // a moment after a kill -9 while a new one starts.
  std::istringstream in(CampaignLock::tuner_pid(dir));
  long pid = 0;
  if (!(in >> pid) || pid <= 0) {
    std::fprintf(stderr, "tune stop: no tuner is running for %s (no tuner.pid)\n", dir.c_str());
    return kExitError;
  }
  if (const LockHolder h = CampaignLock::probe(dir); h == LockHolder::none || h == LockHolder::command) {
    std::fprintf(stderr, "tune stop: no tuner is running for %s (stale tuner.pid)\n", dir.c_str());
    return kExitError;
  }
  if (!request_stop(static_cast<pid_t>(pid))) {
    std::perror("tune stop: sigqueue");
    return kExitError;
  }
  std::printf("asked the tuner (pid %ld) to stop; it checkpoints and exits\n", pid);
  return kExitComplete;
}

}  // namespace tune::tuner
