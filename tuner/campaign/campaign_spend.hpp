#pragma once
// What a multi-resolution campaign has spent and committed, for display (tune status, the progress
// line). The study counts finished and pending trials alike against the budget (a pending trial at
// its level's current cost); here they are apart, and a cost not yet measured is unknown (nullopt),
// not the study's stand-in for it (kUncalibratedCostPerValue per unit of a level's value).
#include <optional>
#include <vector>

#include "tuner/campaign/campaign_state.hpp"

namespace tune::tuner {

struct CampaignSpend {
  std::optional<double> spent = 0.0;      // finished trials: their recorded cost, or their level's
  std::optional<double> committed = 0.0;  // running and queued trials, at their level's current cost
  std::vector<std::optional<double>> spent_by_level, committed_by_level;
};

// The campaign must have a resolution.
CampaignSpend campaign_spend(const CampaignState& s);

}  // namespace tune::tuner
