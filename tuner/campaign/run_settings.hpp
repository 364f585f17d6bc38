#pragma once
// The settings of how a campaign's trials run, as opposed to what it searches: the executor block
// (workers, timeout, grace, Slurm job options), resolution.timeout, budget.failures and budget.wall.
// A campaign file that differs from the saved campaign in those alone continues the campaign with
// them (`tune run c.yaml` after raising the workers or a level's time limit); any other difference
// changes the search and is refused.
#include <string>
#include <vector>

#include "tuner/campaign/campaign_config.hpp"

namespace tune::tuner {

struct RunSettingChange {
  std::string key;   // dotted: executor.workers, resolution.timeout
  std::string from;  // as the campaign file writes it; "(none)" for a setting not given
  std::string to;
};

// The run settings `edited` changes from `saved`, in the order of the campaign's keys.
std::vector<RunSettingChange> run_setting_changes(const CampaignConfig& saved, const CampaignConfig& edited);

// `saved` with the run settings of `edited`.
CampaignConfig with_run_settings(CampaignConfig saved, const CampaignConfig& edited);

// "executor.workers 2 -> 4, resolution.timeout [1m, 3m] -> [2m, 6m]"
std::string describe(const std::vector<RunSettingChange>& changes);

}  // namespace tune::tuner
