#pragma once
// What a multi-resolution campaign has spent and committed, for display (tune status, the progress
// line). The study counts finished and pending trials alike against the budget (a pending trial at
// its level's current cost); here they are apart, and a cost not yet measured is unknown (nullopt),
// not the study's stand-in for it (kUncalibratedCostPerValue per unit of a level's value).
#include <optional>
#include <string>
#include <vector>

#include "tuner/campaign/campaign_state.hpp"

namespace tune::tuner {

struct CampaignSpend {
  std::optional<double> spent = 0.0;      // finished trials: their recorded cost, or their level's; and interrupted runs
  std::optional<double> committed = 0.0;  // running and queued trials, at their level's current cost
  double interrupted = 0.0;                // of `spent`: what interrupted runs ran (Trial::interrupted_cost)
  std::vector<std::optional<double>> spent_by_level, committed_by_level;
};

// The campaign must have a resolution.
CampaignSpend campaign_spend(const CampaignState& s);

// Added to why a campaign whose cost budget is spent ended, when no full-resolution trial completed:
// tune best then has no full run to show and its recommendation rests on cheaper runs only. With
// measured costs nothing refuses a budget below one full run beforehand (as declared costs are), so
// it also says when the full run's cost, measured or guessed, exceeds the whole budget. Empty when a
// full run completed, or without a resolution or a cost budget.
std::string no_full_run_note(const CampaignState& s);

// Added to why a campaign whose cost budget is spent ended, when its time limits kept the rest of
// the budget unspent (with limits, a run starts only if it fits at its limit): what is left, the
// cheapest limit (or, when cheaper runs still fit but none was worth making, the full run's), and
// that shorter limits would spend it. Empty otherwise.
std::string unspent_under_limits_note(const CampaignState& s);

}  // namespace tune::tuner
