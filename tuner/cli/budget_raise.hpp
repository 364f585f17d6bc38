#pragma once
// Raising a campaign's budgets, with --trials N and --cost-budget B of tune resume and tune ask.
#include <filesystem>
#include <optional>

#include "tuner/campaign/campaign_state.hpp"
#include "tuner/cli/commands.hpp"

namespace tune::tuner {

// Both raises, or neither: the state is written only when every one given is accepted. The caller
// holds the campaign's lock.
std::optional<int> raise_budgets(const std::filesystem::path& dir, CampaignState& s, const BudgetRaise& raise,
                                 const char* command);

}  // namespace tune::tuner
