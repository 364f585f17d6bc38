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

}  // namespace
}  // namespace tune::tuner
