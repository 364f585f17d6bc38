#pragma once
// A campaign made from its definition, a campaign file or the inline form's command line, in its
// directory: for tune run and for tune ask CAMPAIGN.yaml.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tuner/campaign/campaign_config.hpp"
#include "tuner/campaign/campaign_lock.hpp"
#include "tuner/campaign/campaign_state.hpp"

namespace tune::tuner {

// Trials run in their own directory, so a command element that names an existing file relative to
// where the campaign was defined (the campaign file's folder, or the current directory for the
// inline form) is made absolute: `python3 train.py` keeps working from trials/<id>/. So is every
// warm_start directory, so that the saved campaign names the same one from anywhere.
void anchor_relative_paths(CampaignConfig& config, const std::filesystem::path& base);

// What prepare() found or made in the campaign directory.
struct Prepared {
  std::optional<int> refused;  // the exit code of a refusal (its message printed)
  bool created = false;        // a fresh state was written (else DIR already held this campaign)
  std::optional<CampaignState> existing;  // the state DIR held (not when created)
};

// Creates DIR with a fresh state for `config` (defined by `source`, a file or the command line), or
// checks that DIR already holds this campaign, continuing it with `config`'s run settings where only
// those differ (run_settings.hpp; said on stderr, under DIR's lock). A fresh state is written under DIR's lock, so that two
// commands creating one campaign at once cannot both write one: `lock` is DIR's lock if the caller
// holds it already (tune ask, which goes on to change the campaign), else prepare takes it to create
// the campaign and lets it go on return (tune run's runner takes it again).
// `made_directories`: those the caller made for the campaign (make_campaign_directories, before it
// took the lock), removed again if the campaign is refused.
Prepared prepare(const CampaignConfig& config, const std::filesystem::path& dir, const std::string& source,
                 const char* command, const std::optional<CampaignLock>& lock,
                 std::vector<std::filesystem::path> made_directories = {});

// Makes DIR/trials and whatever above it is missing; returns the directories it made, deepest
// first. remove_made_directories removes them again (and DIR's lock file, DIR holding no campaign),
// each only if empty: a campaign refused at its creation leaves nothing behind, and a directory that
// was there before stays.
std::vector<std::filesystem::path> make_campaign_directories(const std::filesystem::path& dir);
void remove_made_directories(const std::filesystem::path& dir, const std::vector<std::filesystem::path>& made);

// cmets is there to choose a cheap level per trial; without levels to choose from it runs every trial
// in full, which the user who asked for it (the inline form had no way to declare levels) should hear
// when the campaign is made, before the budget goes. Conversely, a resolution with a strategy that
// does not choose levels runs every trial at the full run: tune init's file names `strategy: ei`, and
// uncommenting its `resolution:` line gave full runs only, without a word (cmes is flat at the full
// run by design, and chosen for it).
void note_strategy_and_resolution(const CampaignConfig& config, const char* command);

}  // namespace tune::tuner
