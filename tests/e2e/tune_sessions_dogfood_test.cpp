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

// Waits (at most 20 s, polling) until `ready` holds; whether it did.
template <class Ready>
bool wait_until(Ready ready) {
  for (int i = 0; i < 2000; ++i) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ready();
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
  const bool unreaped = wait_until([&] { return zombie(tuner); });
  const pid_t resumed = unreaped ? start(d, {"resume", "z", "--trials", "3", "--quiet"}) : -1;
  // Until the resume has opened the lock and looked at it (the refusal came at the first look).
  const bool looked = unreaped && wait_until([&] { return has_open(resumed, campaign / "tune.lock") || !alive(resumed); });
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
