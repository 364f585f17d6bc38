#pragma once
// A tuner session on a campaign, for tune run and tune resume: the refusals of a campaign that has
// nothing it could start, and the session itself.
#include <filesystem>
#include <string>

#include "tuner/campaign/campaign_config.hpp"
#include "tuner/cli/commands.hpp"

namespace tune::tuner {

// Runs the campaign in this process, or in a detached daemon (setsid, output to DIR/tuner.log).
int drive(const std::filesystem::path& dir, const SessionFlags& flags, const char* command);

// A campaign without a command has nothing for tune run or tune resume to launch.
bool refuse_without_command(const CampaignConfig& config, const std::string& where, const char* command);

// A local campaign whose program cannot start would fail every trial with `could not start` and spend
// the failures budget on a typo; Slurm runs it elsewhere, so only the cluster can tell.
bool refuse_unstartable_command(const CampaignConfig& config, const std::filesystem::path& dir,
                                const std::string& where, const char* command);

}  // namespace tune::tuner
