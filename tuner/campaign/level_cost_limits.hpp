#pragma once
// The most a run at each resolution level can cost in a session of a campaign, for
// Study::set_level_cost_limits: what the tuner sets as a session starts, and what `tune status`
// assumes to say why trials wait (or do not).
#include <filesystem>
#include <vector>

#include "tuner/campaign/campaign_state.hpp"

namespace tune::tuner {

// The campaign's limits (CampaignConfig::level_cost_limits, from this session's time limits), each
// raised to the limit a running trial started with (its command.yaml: a resumed campaign whose
// timeouts were raised or lowered since); empty if a running trial has no readable limit, or was
// handed out by tune ask (it runs under no limit of ours).
std::vector<double> session_level_cost_limits(const std::filesystem::path& dir, const CampaignState& state);

}  // namespace tune::tuner
