// A campaign file edited between sessions: its run settings (workers, time limits, the executor's
// job options) carry over to the campaign; a change of what it searches is refused as before.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

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

// A budget left out of the file is not a raise to the default of 50 trials (it ran 42 more), and
// the inline form's options left out keep the campaign's settings rather than going back to their
// defaults (a re-run without --workers went back to one worker, without --trials to 50 trials).
TEST(TuneRunSettings, WhatALeftOutOptionOrKeyMeansIsTheCampaignsSettingNotTheDefault) {
  const fs::path d = fresh_dir("run-settings-left-out");
  write(d / "c.yaml", quadratic_campaign_with("f", 3, "{workers: 1}"));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  std::string text = quadratic_campaign_with("f", 3, "{workers: 1}");
  text.replace(text.find("budget: {trials: 3}\n"), 19, "");
  write(d / "c.yaml", text);
  const std::string state = slurp(d / "f" / "state.yaml");
  const Result removed = tune(d, {"run", "c.yaml", "--quiet"});
  EXPECT_EQ(removed.code, 1) << removed.err;
  EXPECT_NE(removed.err.find("(in: budget)"), std::string::npos) << removed.err;
  EXPECT_EQ(slurp(d / "f" / "state.yaml"), state);

  const std::vector<std::string> trainer{"--", (kTrainers / "quadratic.sh").string(), "--x~uniform(-1,1)",
                                         "--y~uniform(-3,1)"};
  const auto inline_run = [&](std::vector<std::string> options) {
    options.insert(options.begin(), {"run", "--name", "g", "--objective", "loss"});
    options.insert(options.end(), trainer.begin(), trainer.end());
    return tune(d, options);
  };
  ASSERT_EQ(inline_run({"--trials", "2", "--workers", "3", "--timeout", "1m", "--quiet"}).code, 0);
  const Result again = inline_run({});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err.find("continues with"), std::string::npos) << again.err;
  YAML::Node saved = state_of(d / "g")["campaign"];
  EXPECT_EQ(saved["budget"]["trials"].as<int>(), 2) << saved;
  EXPECT_EQ(saved["executor"]["workers"].as<int>(), 3) << saved;
  EXPECT_EQ(saved["executor"]["timeout"].as<std::string>(), "60s") << saved;
  // One given changes its setting, and only it.
  const Result more = inline_run({"--trials", "4", "--quiet"});
  EXPECT_EQ(more.code, 0) << more.err;
  EXPECT_NE(more.err.find("g continues with the budget of the command line: budget.trials 2 -> 4"), std::string::npos)
      << more.err;
  saved = state_of(d / "g")["campaign"];
  EXPECT_EQ(saved["budget"]["trials"].as<int>(), 4) << saved;
  EXPECT_EQ(saved["executor"]["workers"].as<int>(), 3) << saved;
  EXPECT_EQ(state_of(d / "g")["study"]["trials"].size(), 4u);
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
  // An added enqueue: is the search's too; tune enqueue adds a configuration.
  write(d / "c.yaml", quadratic_campaign_with("s", 2, "{workers: 1}", "enqueue:\n  - {x: 0.1, y: 0.2}\n"));
  const Result enqueued = tune(d, {"run", "c.yaml"});
  EXPECT_EQ(enqueued.code, 1);
  EXPECT_NE(enqueued.err.find("(in: enqueue); resume it with 'tune resume s' ('tune enqueue s NAME=VALUE ...' adds a "
                              "configuration to run)"),
            std::string::npos)
      << enqueued.err;
  // tune resume of the file, not of its directory, says which to give, and what running the file does.
  const Result file = tune(d, {"resume", "c.yaml"});
  EXPECT_EQ(file.code, 2);
  EXPECT_NE(file.err.find("c.yaml is a file, not a campaign directory: give the directory its campaign runs in"),
            std::string::npos)
      << file.err;
  // A file of the campaign (its state.yaml): its directory, not 'tune run' of the state (refused
  // as a campaign file with "unknown key 'kind'").
  for (const char* command : {"resume", "status", "best"}) {
    const Result inside = tune(d, {command, "s/state.yaml"});
    EXPECT_EQ(inside.code, 2) << command;
    EXPECT_NE(inside.err.find("s/state.yaml is a file of the campaign in s; give that directory: 'tune " +
                              std::string(command) + " s'"),
              std::string::npos)
        << inside.err;
  }
  // The state given as a campaign file to run or ask: read as one, it was "unknown key 'kind'".
  for (const auto& [command, suggested] : {std::pair{"run", "resume"}, std::pair{"ask", "ask"}}) {
    const Result as_file = tune(d, {command, "s/state.yaml"});
    EXPECT_EQ(as_file.code, 2) << command;
    EXPECT_NE(as_file.err.find("s/state.yaml is the state of the campaign in s, not a campaign file: 'tune " +
                               std::string(suggested) + " s'"),
              std::string::npos)
        << as_file.err;
  }
  EXPECT_EQ(slurp(d / "s" / "state.yaml"), state);
}

}  // namespace
