// The campaign definition as the tuner reads it from a campaign file or from state.yaml.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "tuner/campaign/campaign_config.hpp"

namespace tune::tuner {
namespace {

// campaign_from_yaml assigned the document's own option nodes into the config, which made the
// config share the document's node pool: read from state.yaml, that pool is every node of the file
// (all trial and run records), merged into the config's pool at every load and kept alive as long
// as the config, i.e. a tuner's whole session. Sharing shows as aliasing: an option changed in the
// document changed in the config too.
TEST(CampaignConfig, StrategyOptionsAreCopiesNotTheDocumentsNodes) {
  YAML::Node doc = YAML::Load(
      "name: c\n"
      "space: {x: {type: float, low: 0, high: 1}}\n"
      "strategy: {name: ei, epsilon: 0.05, on_reject: evaluate_no_add}\n");
  const CampaignConfig config = campaign_from_yaml(doc, "c.yaml");
  doc["strategy"]["epsilon"] = 0.5;
  doc["strategy"]["on_reject"] = "stop";
  EXPECT_EQ(config.strategy_options["epsilon"].as<double>(), 0.05);
  EXPECT_EQ(config.strategy_options["on_reject"].as<std::string>(), "evaluate_no_add");
  EXPECT_EQ(config.strategy, "ei");
}

// resolution.timeout: a trial's limit is its level's, in place of executor.timeout; a trial without
// a level (none in such a campaign) and a campaign without the list keep executor.timeout. A Slurm
// job's default time limit allows for the longest.
TEST(CampaignConfig, EachLevelsTimeoutReplacesTheExecutors) {
  const std::string head =
      "name: c\ncommand: [train, \"{epochs}\"]\nspace: {x: {type: float, low: 0, high: 1}}\nexecutor: {timeout: 1h}\n";
  const CampaignConfig levels = campaign_from_yaml(
      YAML::Load(head + "resolution: {param: epochs, levels: [1, 3, 9], timeout: [1m, 90s, 20m]}\n"), "c.yaml");
  EXPECT_EQ(levels.trial_timeout(0), 60.0);
  EXPECT_EQ(levels.trial_timeout(1), 90.0);
  EXPECT_EQ(levels.trial_timeout(2), 1200.0);
  EXPECT_EQ(levels.trial_timeout(std::nullopt), 3600.0);
  EXPECT_EQ(levels.longest_trial_timeout(), 1200.0);
  // Written to state.yaml and read back, the same limits.
  const CampaignConfig again = campaign_from_yaml(levels.to_yaml(), "state.yaml");
  EXPECT_EQ(again.level_timeouts, levels.level_timeouts);
  const CampaignConfig one = campaign_from_yaml(YAML::Load(head + "resolution: {param: epochs, levels: [1, 3, 9]}\n"), "c.yaml");
  EXPECT_EQ(one.trial_timeout(0), 3600.0);
  EXPECT_EQ(one.longest_trial_timeout(), 3600.0);
}

// pruning: the short and the full form, the percentile rule, and the same rule read back from the
// state's copy; absent, no pruning.
TEST(CampaignConfig, PruningIsReadInEitherFormAndReadBackTheSame) {
  const std::string head = "name: c\ncommand: [train]\nspace: {x: {type: float, low: 0, high: 1}}\n";
  EXPECT_FALSE(campaign_from_yaml(YAML::Load(head), "c.yaml").pruning);
  const CampaignConfig median = campaign_from_yaml(YAML::Load(head + "pruning: median\n"), "c.yaml");
  ASSERT_TRUE(median.pruning);
  EXPECT_EQ(median.pruning->percentile, 50.0);
  EXPECT_EQ(median.pruning->startup_trials, PruningRule{}.startup_trials);
  const CampaignConfig quarter = campaign_from_yaml(
      YAML::Load(head + "pruning: {rule: percentile, percentile: 25, startup_trials: 8, warmup_steps: 3, min_trials: 2}\n"),
      "c.yaml");
  ASSERT_TRUE(quarter.pruning);
  EXPECT_EQ(quarter.pruning->percentile, 25.0);
  EXPECT_EQ(quarter.pruning->startup_trials, 8u);
  EXPECT_EQ(quarter.pruning->warmup_steps, 3);
  EXPECT_EQ(quarter.pruning->min_trials, 2u);
  for (const CampaignConfig* c : {&median, &quarter}) {
    const CampaignConfig again = campaign_from_yaml(c->to_yaml(), "state.yaml");
    ASSERT_TRUE(again.pruning);
    EXPECT_EQ(again.pruning->percentile, c->pruning->percentile);
    EXPECT_EQ(again.pruning->startup_trials, c->pruning->startup_trials);
    EXPECT_EQ(again.pruning->warmup_steps, c->pruning->warmup_steps);
    EXPECT_EQ(again.pruning->min_trials, c->pruning->min_trials);
  }
}

}  // namespace
}  // namespace tune::tuner
