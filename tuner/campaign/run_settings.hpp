#pragma once
// The settings of how a campaign's trials run, as opposed to what it searches: the executor block
// (workers, timeout, grace, Slurm job options), resolution.timeout, budget.failures and budget.wall.
// A campaign file that differs from the saved campaign in those alone continues the campaign with
// them (`tune run c.yaml` after raising the workers or a level's time limit); any other difference
// changes the search and is refused.
#include <string>
#include <vector>

#include "tuner/campaign/campaign_config.hpp"
#include "tuner/campaign/campaign_state.hpp"

namespace tune::tuner {

struct RunSettingChange {
  std::string key;   // dotted: executor.workers, resolution.timeout
  std::string from;  // as the campaign file writes it; "(none)" for a setting not given
  std::string to;
};

// The run settings `edited` changes from `saved`, in the order of the campaign's keys.
std::vector<RunSettingChange> run_setting_changes(const CampaignConfig& saved, const CampaignConfig& edited);

// The budgets (budget.trials, budget.cost) `edited` gives otherwise than `saved`: what a refusal of
// a lowered, added or removed budget names.
std::vector<RunSettingChange> budget_changes(const CampaignConfig& saved, const CampaignConfig& edited);

// `saved` with the run settings of `edited`.
CampaignConfig with_run_settings(CampaignConfig saved, const CampaignConfig& edited);

// "executor.workers 2 -> 4, resolution.timeout [60s, 180s] -> [120s, 360s]"
std::string describe(const std::vector<RunSettingChange>& changes);

// Why the campaign in `dir` (whose state is `state`) cannot continue with the run settings of
// `edited`, or empty: a change of executor.kind while trials run under the saved one, which the
// other executor could not follow.
std::string run_settings_refusal(const std::filesystem::path& dir, const CampaignState& state, const CampaignConfig& edited);

// Continues the campaign in `dir` (whose state is `state`; the caller holds its lock) with the run
// settings of `edited`: saves the state and logs a `run_settings` event. Returns the refusal
// instead, with nothing changed, where run_settings_refusal gives one.
std::string apply_run_settings(const std::filesystem::path& dir, CampaignState& state, const CampaignConfig& edited);

}  // namespace tune::tuner
