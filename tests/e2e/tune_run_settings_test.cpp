// A campaign file edited between sessions: its run settings (workers, time limits, the executor's
// job options) carry over to the campaign; a change of what it searches is refused as before.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// The most trials running at once by the toy trainer's log (a line "start ID ..." or "end ID" per
// event, in the order they happened).
int most_at_once(const fs::path& log) {
  std::istringstream in(slurp(log));
  std::string word, rest;
  int now = 0, most = 0;
  while (in >> word) {
    std::getline(in, rest);
    now += word == "start" ? 1 : word == "end" ? -1 : 0;
    most = std::max(most, now);
  }
  return most;
}

// Raising the workers (and giving a time limit) in the campaign file was refused as "a different
// campaign", so the only way to run more trials at a time was a new campaign that lost every result.
TEST(TuneRunSettings, AnEditedFilesWorkersAndTimeoutCarryOverToTheCampaign) {
  const fs::path d = fresh_dir("run-settings-workers");
  write(d / "c.yaml", quadratic_campaign_with("w", 2, "{workers: 1}"));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);

  write(d / "c.yaml", quadratic_campaign_with("w", 2, "{workers: 3, timeout: 10m}"));
  const Result edited = tune(d, {"run", "c.yaml"});
  ASSERT_EQ(edited.code, 0) << edited.err;
  EXPECT_NE(edited.err.find("w continues with the run settings of c.yaml: executor.workers 1 -> 3, executor.timeout "
                            "(none) -> 600s"),
            std::string::npos)
      << edited.err;
  const YAML::Node executor = state_of(d / "w")["campaign"]["executor"];
  EXPECT_EQ(executor["workers"].as<int>(), 3) << executor;
  EXPECT_EQ(executor["timeout"].as<std::string>(), "600s") << executor;
  EXPECT_NE(slurp(d / "w" / "events.jsonl").find("\"event\": \"run_settings\", \"executor.workers\": \"1 -> 3\""),
            std::string::npos);

  // tune status shows the settings in effect.
  const Result status = tune(d, {"status", "w"});
  EXPECT_NE(status.out.find("\nruns: 3 at a time on this machine, time limit 10m00s (grace 10.0s)\n"), std::string::npos)
      << status.out;

  // The next session runs three at a time.
  const Result more = tune(d, {"resume", "w", "--trials", "5", "--quiet"},
                           {{"TUNE_TOY_LOG", (d / "toy.log").string()}, {"TOY_SLEEP", "1"}});
  ASSERT_EQ(more.code, 0) << more.err;
  EXPECT_EQ(most_at_once(d / "toy.log"), 3) << slurp(d / "toy.log");

  // The same file again changes nothing and says nothing of run settings.
  write(d / "c.yaml", quadratic_campaign_with("w", 5, "{workers: 3, timeout: 10m}"));
  const Result same = tune(d, {"run", "c.yaml"});
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_EQ(same.err.find("run settings"), std::string::npos) << same.err;
}

// What the campaign searches is not a run setting: an edit of the space beside a new worker count is
// refused whole, naming the key, and the saved campaign keeps its workers.
TEST(TuneRunSettings, AChangeOfTheSearchIsRefusedAndNothingIsApplied) {
  const fs::path d = fresh_dir("run-settings-search");
  write(d / "c.yaml", quadratic_campaign_with("s", 2, "{workers: 1}"));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const std::string state = slurp(d / "s" / "state.yaml");
  std::string text = quadratic_campaign_with("s", 2, "{workers: 4}");
  text.replace(text.find("high: 1}\n"), 9, "high: 2}\n");
  write(d / "c.yaml", text);
  const Result r = tune(d, {"run", "c.yaml"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("which differs from the campaign 's' of c.yaml (in: space)"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(d / "s" / "state.yaml"), state);
}

}  // namespace
