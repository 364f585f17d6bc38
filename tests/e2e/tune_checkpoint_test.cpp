// How often a running campaign writes its state. Every write is the whole state.yaml with an fsync
// (2 MB at 4000 trials), so the number of writes per trial is what the tuner's per-trial cost grows
// with; the writes are counted with inotify as the tuner renames each new state into place.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// Renames onto `name` in the directory `fd` watches, read without blocking. The watch must include
// IN_CREATE: the kernel merges an event into an identical one still queued before it, so renames
// onto the same name count one by one only with the temporary's creation between them.
int renames_onto(int fd, const std::string& name) {
  int count = 0;
  alignas(inotify_event) char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) return count;
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buffer + at);
      if ((e->mask & IN_MOVED_TO) && e->len > 0 && name == e->name) ++count;
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
  }
}

// One worker, ten trials: the state was written when a trial's outcome was told and again when the
// next trial launched, 2 per trial (22 for the session). The outcome now goes into the launch's
// write; a session writes once as it starts, once per launch, once after the last outcome and once
// as it ends (and `tune resume --trials` once before, for the new budget).
TEST(TuneCheckpoint, ARunningCampaignWritesItsStateOncePerTrial) {
  const fs::path d = fresh_dir("checkpoint-count");
  write(d / "c.yaml", quadratic_campaign_with("k", 2, "{workers: 1}"));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_GE(::inotify_add_watch(fd, (d / "k").c_str(), IN_CREATE | IN_MOVED_TO), 0) << std::strerror(errno);
  const Result r = tune(d, {"resume", "k", "--trials", "12", "--quiet"});
  const int writes = renames_onto(fd, "state.yaml");
  ::close(fd);
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node state = state_of(d / "k");
  ASSERT_EQ(state["runs"].size(), 12u);
  for (const YAML::Node& run : state["runs"]) EXPECT_EQ(run["status"].as<std::string>(), "complete");
  EXPECT_EQ(writes, 1 + 10 + 3) << "state.yaml written " << writes << " times for 10 trials";
  // Every outcome still reaches the log, after the state that records it.
  const std::string events = slurp(d / "k" / "events.jsonl");
  std::size_t outcomes = 0;
  for (std::size_t at = events.find("\"event\": \"complete\""); at != std::string::npos;
       at = events.find("\"event\": \"complete\"", at + 1))
    ++outcomes;
  EXPECT_EQ(outcomes, 12u);
}

}  // namespace
