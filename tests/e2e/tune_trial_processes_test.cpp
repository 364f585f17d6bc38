// What is left of a trial's processes once it ends: nothing, whatever the trainer started (its own
// process group, a session of its own), checked with real subprocesses.
#include <gtest/gtest.h>
#include <signal.h>
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

// A trainer that starts a worker in a session of its own (setsid, as Python's
// subprocess.Popen(start_new_session=True) does), which itself has a child, then reports and exits
// ("done") or hangs until the trial's timeout ("hang").
const char* kSpawner = R"(#!/bin/sh
setsid sh -c 'sleep 1000 & echo $! > nested.pid; echo $$ > session.pid; wait' &
while [ ! -s session.pid ] || [ ! -s nested.pid ]; do sleep 0.01; done
if [ "$1" = hang ]; then sleep 1000; fi
echo "objective=1"
)";

// The supervisor, a child subreaper, killed only the command's process group when the command ended,
// then exited: a worker in its own session was handed to init and ran on after the trial (finished,
// timed out or stopped), holding its CPU, memory or GPU.
TEST(TrialProcesses, AWorkerInItsOwnSessionDoesNotOutliveItsTrial) {
  const fs::path d = fresh_dir("dogfood4-setsid");
  write(d / "c.yaml", "name: s\ncommand: [" + write_script(d, "spawner.sh", kSpawner).string() +
                          ", \"{mode}\"]\nspace:\n  mode: {type: categorical, choices: [done, hang]}\n"
                          "enqueue:\n  - {mode: done}\n  - {mode: hang}\n"
                          "budget: {trials: 2}\nexecutor: {workers: 2, timeout: 2s, grace: 200ms}\n");
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node runs = state_of(d / "s")["runs"];
  EXPECT_EQ(runs[0]["status"].as<std::string>(), "complete");
  EXPECT_EQ(runs[1]["status"].as<std::string>(), "failed");
  EXPECT_NE(runs[1]["failure_reason"].as<std::string>().find("timed out"), std::string::npos);
  for (const std::string trial : {"0", "1"})
    for (const std::string file : {"session.pid", "nested.pid"}) {
      const fs::path p = d / "s" / "trials" / trial / file;
      ASSERT_TRUE(fs::exists(p)) << p;
      const pid_t pid = static_cast<pid_t>(std::stol(slurp(p)));
      const bool survived = alive(pid);
      if (survived) ::kill(pid, SIGKILL);  // not left behind by a failing test
      EXPECT_FALSE(survived) << "trial " << trial << ": " << file << " (pid " << pid << ") outlived its trial";
    }
}

}  // namespace
