// `tune resume DIR`: continues a campaign with a tuner session, first raising its budgets if asked.
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/cli/budget_raise.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/tuner_session.hpp"

namespace tune::tuner {

int resume(const std::filesystem::path& dir, const SessionFlags& flags, const BudgetRaise& raise) {
  if (!holds_campaign(dir, "resume")) return kExitUsage;
  {
    // A raise changes the state: under the lock, which a tuner driving the campaign holds (exit 5
    // then), from the one load. The session takes the lock again for itself.
    const std::optional<CampaignLock> lock = raise.any() ? lock_campaign(dir, "resume") : std::nullopt;
    if (raise.any() && !lock) return kExitLocked;
    CampaignState s = load_state(dir);  // refuse a damaged state before detaching
    if (refuse_without_command(s.config, dir.string(), "resume")) return kExitUsage;
    if (refuse_unstartable_command(s.config, dir, state_path(dir).string(), "resume")) return kExitError;
    if (raise.any())
      if (const std::optional<int> refused = raise_budgets(dir, s, raise, "resume")) return *refused;
  }
  return drive(dir, flags, "resume");
}

}  // namespace tune::tuner
