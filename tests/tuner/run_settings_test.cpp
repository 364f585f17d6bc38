// Which differences between a saved campaign and its edited file are run settings (how the trials
// run), which a campaign continues with, and which change the search.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "tune/io/yaml_values.hpp"
#include "tuner/campaign/run_settings.hpp"

namespace tune::tuner {
namespace {

CampaignConfig campaign(const std::string& executor, const std::string& resolution_timeout = "[1m, 3m]",
                        const std::string& budget = "{cost: 100, failures: 10}") {
  return campaign_from_yaml(
      YAML::Load("name: c\ncommand: [train, \"{epochs}\", \"{x}\"]\nspace: {x: {type: float, low: 0, high: 1}}\n"
                 "resolution: {param: epochs, levels: [1, 3]" +
                 (resolution_timeout.empty() ? "" : ", timeout: " + resolution_timeout) + "}\n"
                 "budget: " + budget + "\nexecutor: " + executor + "\n"),
      "c.yaml");
}

TEST(RunSettings, ChangesAreListedWithTheirValuesAsWritten) {
  const CampaignConfig saved = campaign("{workers: 2, timeout: 1h}");
  const CampaignConfig edited = campaign("{workers: 4, timeout: 1h, grace: 30s}", "[2m, 6m]", "{cost: 100, failures: 3}");
  EXPECT_EQ(describe(run_setting_changes(saved, edited)),
            "resolution.timeout [60s, 180s] -> [120s, 360s], budget.failures 10 -> 3, executor.workers 2 -> 4, "
            "executor.grace 10s -> 30s");
  EXPECT_TRUE(run_setting_changes(saved, saved).empty());
  // Beside resolution.timeout, executor.timeout limits no trial: its change is not listed.
  EXPECT_TRUE(run_setting_changes(saved, campaign("{workers: 2, timeout: 2h}")).empty());
  // A setting given on one side only.
  EXPECT_EQ(describe(run_setting_changes(campaign("{workers: 1}", ""), campaign("{workers: 1, timeout: 10m}", ""))),
            "executor.timeout (none) -> 600s");
  // From this machine to a cluster: the kind and the Slurm keys it brings (with their defaults).
  EXPECT_EQ(describe(run_setting_changes(campaign("{workers: 1}"), campaign("{kind: slurm, workers: 1, partition: gpu}"))),
            "executor.kind local -> slurm, executor.partition (none) -> gpu, executor.poll (none) -> 5s, "
            "executor.retries (none) -> 3");
}

// Applied, the run settings leave nothing for differing_keys to find; the search's keys stay the
// saved campaign's, so an edit of those is still seen (and refused) by comparing the two.
TEST(RunSettings, AppliedTheyMakeTheCampaignsEqualAndLeaveTheSearchAlone) {
  const CampaignConfig saved = campaign("{workers: 2}");
  const CampaignConfig edited = campaign("{workers: 8, timeout: 2h}", "[5m, 15m]", "{cost: 100, failures: 20, wall: 1h}");
  const CampaignConfig applied = with_run_settings(saved, edited);
  EXPECT_EQ(emit_yaml(applied.to_yaml()), emit_yaml(edited.to_yaml()));
  EXPECT_TRUE(run_setting_changes(applied, edited).empty());
  // A different cost budget is not a run setting: it stays the saved one.
  const CampaignConfig more = campaign("{workers: 2}", "[1m, 3m]", "{cost: 500, failures: 10}");
  EXPECT_EQ(with_run_settings(saved, more).budget.cost, 100.0);
  EXPECT_TRUE(run_setting_changes(saved, more).empty());
}

// A trial running under the saved executor could not be followed by another kind: the change is
// refused, naming the trial and how to let it end, and the state is left as it was (not written).
TEST(RunSettings, AnotherExecutorKindIsRefusedWhileATrialRunsUnderTheSavedOne) {
  const std::filesystem::path dir = std::filesystem::path(TUNE_TEST_TMPDIR) / "run-settings-kind";
  std::filesystem::remove_all(dir);
  CampaignState state = CampaignState::create(campaign("{workers: 2}"), 0.0);
  ASSERT_TRUE(state.study.ask().has_value());
  state.runs.push_back(TrialRun{.id = 0, .status = RunStatus::running, .attempts = 1});
  const std::string refusal = apply_run_settings(dir, state, campaign("{kind: slurm, workers: 2}"));
  EXPECT_NE(refusal.find("trial 0 runs under executor.kind local, which executor.kind slurm cannot follow"),
            std::string::npos)
      << refusal;
  EXPECT_EQ(state.config.executor.kind, "local");
  EXPECT_FALSE(std::filesystem::exists(dir / "state.yaml"));
  // Once it has ended, the change is made and saved.
  state.runs[0].status = RunStatus::complete;
  state.study.tell(0, 1.0, 2.0);
  std::filesystem::create_directories(dir);
  EXPECT_EQ(apply_run_settings(dir, state, campaign("{kind: slurm, workers: 2}")), "");
  EXPECT_EQ(load_state(dir).config.executor.kind, "slurm");
}

}  // namespace
}  // namespace tune::tuner
