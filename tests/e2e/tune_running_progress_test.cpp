// `tune status` shows how a running trial is going: how long it has run and the last value its stdout
// reported, read from the file the trial writes while it runs.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// Reports values at steps, leaves a line half written, and waits for `go` before its final value.
// Mode `cut` ends its stdout with a line that status's 64 KiB tail cuts inside a key:
// "noise_val_acc=..." read from its middle would be "val_acc=0.123 step=99".
const char* kTrainer = R"(#!/bin/sh
echo "val_acc=0.25 step=1"
echo "loss=3 step=2"
echo "val_acc=0.5 step=3"
if [ "$1" = cut ]; then
  printf 'noise_'
  printf 'val_acc=0.123 step=99\n'
  head -c 65498 /dev/zero | tr '\0' '#'; echo  # 22 + 65498 + 1 + 15 (the half line) = 64 KiB
fi
printf 'val_acc=0.75 st'
while [ ! -e go ]; do sleep 0.02; done
echo "ep=4"
echo "val_acc=0.9"
)";

bool holds(const fs::path& file, const std::string& text) { return slurp(file).find(text) != std::string::npos; }

TEST(TuneRunningProgress, StatusShowsARunningTrialsTimeAndLastReportedValue) {
  const fs::path d = fresh_dir("running-progress");
  write_script(d, "train.sh", kTrainer);
  write(d / "c.yaml", one_trial_per_mode_campaign("p", d / "train.sh", {"plain", "cut"}, "",
                                                  "objective: {name: val_acc, direction: maximize}\n"));
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"});
  const fs::path plain = d / "p" / "trials" / "0", cut = d / "p" / "trials" / "1";
  for (int i = 0; i < 1000 && !(holds(plain / "stdout", "val_acc=0.75 st") && holds(cut / "stdout", "val_acc=0.75 st")); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const Result st = tune(d, {"status", "p"});
  EXPECT_EQ(st.code, 0) << st.err;
  // The last complete line with the objective and a step; the half-written one is not read yet.
  const std::size_t row0 = st.out.find("\n    0  running");
  const std::size_t row1 = st.out.find("\n    1  running");
  ASSERT_NE(row0, std::string::npos) << st.out;
  ASSERT_NE(row1, std::string::npos) << st.out;
  const std::string trial0 = st.out.substr(row0, row1 + 1 - row0), trial1 = st.out.substr(row1);
  EXPECT_NE(trial0.find("so far: step 3, val_acc 0.5\n"), std::string::npos) << st.out;
  // id, status, value, time: a running trial's time is how long it has run so far.
  std::istringstream row(trial0);
  std::string id, status, value, time;
  row >> id >> status >> value >> time;
  EXPECT_TRUE(time.ends_with("ms") || time.ends_with("s")) << "time column '" << time << "'\n" << st.out;
  // Trial 1's last 64 KiB start inside "noise_val_acc=0.123 step=99": nothing of it is read.
  EXPECT_EQ(trial1.find("step 99"), std::string::npos) << st.out;
  EXPECT_EQ(trial1.find("so far"), std::string::npos) << st.out;

  write(plain / "go", "");
  write(cut / "go", "");
  ASSERT_EQ(finish(d, tuner).code, 0);
  const Result done = tune(d, {"status", "p"});
  EXPECT_EQ(done.out.find("so far"), std::string::npos) << "only running trials have a progress line\n" << done.out;
  EXPECT_NE(done.out.find("0.9"), std::string::npos) << done.out;
}

// The state holds the tuner's active time as of its last write, which comes at a trial's launch and
// end: `tune status` of a session 1.5 s old, its one trial still running, read "active time 16ms".
// While a tuner runs, the time since that write counts too (bounded by the test's own clock).
TEST(TuneRunningProgress, StatusCountsTheActiveTimeOfTheRunningSession) {
  const fs::path d = fresh_dir("running-active-time");
  write_script(d, "train.sh", kTrainer);
  write(d / "c.yaml", one_trial_per_mode_campaign("a", d / "train.sh", {"plain", "cut"}, "",
                                                  "objective: {name: val_acc, direction: maximize}\n"));
  const auto started = std::chrono::steady_clock::now();
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"});
  const fs::path trial = d / "a" / "trials" / "0";
  for (int i = 0; i < 1000 && !holds(trial / "stdout", "val_acc=0.75 st"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const Result st = tune(d, {"status", "a"});
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  write(trial / "go", "");
  write(d / "a" / "trials" / "1" / "go", "");
  ASSERT_EQ(finish(d, tuner).code, 0);
  ASSERT_EQ(st.code, 0) << st.err;
  const std::size_t at = st.out.find("active time ");
  ASSERT_NE(at, std::string::npos) << st.out;
  const std::string shown = st.out.substr(at + 12, st.out.find('\n', at) - at - 12);
  ASSERT_TRUE(shown.ends_with("s") && !shown.ends_with("ms") && shown.find('m') == std::string::npos) << shown;
  const double seconds = std::stod(shown);
  EXPECT_GE(seconds, 1.4) << st.out;
  EXPECT_LE(seconds, elapsed + 0.1) << st.out;
}

}  // namespace

