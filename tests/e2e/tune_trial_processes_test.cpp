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
  write_script(d, "spawner.sh", kSpawner);
  write(d / "c.yaml", one_trial_per_mode_campaign("s", d / "spawner.sh", {"done", "hang"}, ", timeout: 2s, grace: 200ms"));
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

// A rebuild of `tune` (the linker removes the file and writes it anew) or a package upgrade during a
// campaign: the tuner started each trial's supervisor from its own path, so a launch while the file
// was missing failed and the campaign stopped with exit 1, and after an upgrade an old tuner paired
// with a new supervisor. Supervisors now run the tuner's own image.
TEST(TrialProcesses, RemovingTheTuneProgramDuringACampaignDoesNotStopIt) {
  const fs::path d = fresh_dir("tune-program-removed");
  fs::create_directories(d / "bin");
  const fs::path copy = d / "bin" / "tune";
  fs::copy_file(kTune, copy);
  // start() runs kTune after the wrapper; this one runs the copy instead, with tune's arguments.
  const std::vector<std::string> run_the_copy{"/bin/sh", "-c", "shift; exec \"$0\" \"$@\"", copy.string()};
  const pid_t pid = start(d,
                          {"run", "--name", "r", "--trials", "4", "--workers", "1", "--quiet", "--", "sh", "-c",
                           "sleep 0.3; echo objective={x}", "--x~uniform(0,1)"},
                          {}, run_the_copy);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!fs::exists(d / "r" / "trials" / "0") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(d / "r" / "trials" / "0"));
  fs::remove(copy);
  const Result r = finish(d, pid);
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node runs = state_of(d / "r")["runs"];
  ASSERT_EQ(runs.size(), 4u);
  for (const YAML::Node& run : runs) EXPECT_EQ(run["status"].as<std::string>(), "complete");
}

}  // namespace
