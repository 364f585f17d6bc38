#pragma once
// A campaign's warm start (`warm_start:`): when the campaign is created, the complete results of
// earlier campaigns enter its study as imported results (Study::import_result): its model starts
// from them, they stand in for the initial design, and no budget counts them. The usual case: a
// campaign whose best configuration sat at the edge of its space, continued on a wider space
// without re-running what it knew (Orion's experiment branching, Optuna's add_trials).
//
// A result carries over when its configuration is one of the new space's: every parameter that
// applies there has a value (its own, or `fixed`), in range, and a parameter the new campaign does
// not search took the value `fixed` names; with a resolution, it ran at one of the new levels
// (`fixed` names the level of campaigns without one). Failed, pruned and unfinished trials do not
// carry over: there is no result to take in.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tuner/campaign/campaign_state.hpp"

namespace tune::tuner {

struct WarmStartOutcome {
  std::string from;            // the source's directory
  std::size_t trials = 0;      // trials the source holds
  std::size_t imported = 0;
  // Why the others did not carry over, each with how many: "3 failed or did not finish".
  std::vector<std::pair<std::string, std::size_t>> skipped;
};

// Imports every source of state.config.warm_start into state (a campaign just created: its study
// and run records). Throws CampaignError, the state unusable, naming the source and the fix when a
// source holds no campaign or a damaged one, measures another objective, is named twice, has a
// `fixed` parameter that is not one campaign's alone, or carries none of its results over.
std::vector<WarmStartOutcome> import_warm_start(CampaignState& state);

// "37 of the 40 trials of /runs/old (not carried over: 2: failed, were stopped early or did not
// finish; 1: lies outside this campaign's space (...))"
std::string describe(const WarmStartOutcome& outcome);

}  // namespace tune::tuner
