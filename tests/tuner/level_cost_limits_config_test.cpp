// The most a trial at each level can cost, as the tuner gives it to the study: its time limit, the
// grace before SIGKILL and kRunCostMarginSeconds for the supervisor to reap the trial and record its end.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "tuner/campaign/campaign_config.hpp"

namespace tune::tuner {
namespace {

CampaignConfig config_of(const std::string& rest) {
  return campaign_from_yaml(
      YAML::Load("name: c\ncommand: [train, \"{epochs}\"]\nspace: {x: {type: float, low: 0, high: 1}}\n" + rest), "c.yaml");
}

TEST(LevelCostLimitsConfig, EachLevelsTimeoutPlusGracePlusTheMargin) {
  ASSERT_EQ(kRunCostMarginSeconds, 5.0);
  const CampaignConfig levels = config_of(
      "resolution: {param: epochs, levels: [1, 3, 9], cost: measured, timeout: [1m, 90s, 20m]}\n"
      "budget: {cost: 3600}\nexecutor: {timeout: 1h, grace: 10s}\n");
  EXPECT_EQ(levels.level_cost_limits(), (std::vector<double>{60 + 10 + 5, 90 + 10 + 5, 1200 + 10 + 5}));
  // executor.timeout for every level when the resolution gives none.
  const CampaignConfig one = config_of(
      "resolution: {param: epochs, levels: [1, 3], cost: measured}\nbudget: {cost: 3600}\n"
      "executor: {timeout: 2m, grace: 500ms}\n");
  EXPECT_EQ(one.level_cost_limits(), (std::vector<double>{120 + 0.5 + 5, 120 + 0.5 + 5}));
}

// No limits where nothing bounds a run, or nothing needs them: no time limit, declared costs (the
// budget counts those, not run times), or no cost budget.
TEST(LevelCostLimitsConfig, NoneWithoutATimeLimitDeclaredCostsOrACostBudget) {
  EXPECT_TRUE(config_of("resolution: {param: epochs, levels: [1, 3], cost: measured}\nbudget: {cost: 3600}\n")
                  .level_cost_limits()
                  .empty());
  EXPECT_TRUE(config_of("resolution: {param: epochs, levels: [1, 3], cost: [1, 3]}\nbudget: {cost: 30}\n"
                        "executor: {timeout: 2m}\n")
                  .level_cost_limits()
                  .empty());
  EXPECT_TRUE(config_of("resolution: {param: epochs, levels: [1, 3], cost: measured}\nexecutor: {timeout: 2m}\n")
                  .level_cost_limits()
                  .empty());
}

}  // namespace
}  // namespace tune::tuner
