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

// A time limit whose worst case is above the whole budget guards against hung runs and bounds no
// cost: as a bound (a run starts only if it fits at its limit) it started no run at all, as the
// xgboost example (5-minute guard, budget 120 s) showed.
TEST(LevelCostLimitsConfig, LimitsAboveTheWholeBudgetAreHangGuardsOnly) {
  const std::string levels = "resolution: {param: epochs, levels: [1, 3], cost: measured}\nexecutor: {timeout: 5m}\n";
  const CampaignConfig guard = config_of(levels + "budget: {cost: 120}\n");
  EXPECT_TRUE(guard.hang_guard_limits());
  EXPECT_TRUE(guard.level_cost_limits().empty());
  const CampaignConfig edge = config_of(levels + "budget: {cost: 314.9}\n");  // 300 + 10 + 5 = 315
  EXPECT_TRUE(edge.hang_guard_limits());
  const CampaignConfig bound = config_of(levels + "budget: {cost: 315}\n");
  EXPECT_FALSE(bound.hang_guard_limits());
  EXPECT_EQ(bound.level_cost_limits(), (std::vector<double>{315, 315}));
  // Not without limits on every level, nor without a cost budget.
  EXPECT_FALSE(config_of("resolution: {param: epochs, levels: [1, 3], cost: measured}\nbudget: {cost: 1}\n").hang_guard_limits());
  EXPECT_FALSE(config_of(levels).hang_guard_limits());
}

}  // namespace
}  // namespace tune::tuner
