#include "tuner/cli/budget_raise.hpp"

#include <cmath>
#include <cstdio>
#include <string_view>

#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/campaign_runner.hpp"
#include "tuner/campaign/duration.hpp"
#include "tuner/campaign/event_log.hpp"
#include "tuner/campaign/progress.hpp"

namespace tune::tuner {

namespace {

// --cost-budget B: B cost units in all, above the present budget, for a campaign with one. A refusal is
// an exit code, with nothing changed.
std::optional<int> raise_cost_budget(const std::filesystem::path& dir, CampaignState& s, double budget,
                                     const char* given_as, const char* command) {
  if (!s.config.budget.cost) {
    std::fprintf(stderr,
                 "tune %s: %s: %s has no cost budget to raise (budget.cost is given with a resolution when "
                 "the campaign is made)\n",
                 command, given_as, dir.c_str());
    return kExitUsage;
  }
  if (!(std::isfinite(budget) && budget > *s.config.budget.cost)) {
    std::fprintf(stderr, "tune %s: %s %s: give the new total, more than the present budget of %s (%s spent)\n",
                 command, given_as, format_short(budget).c_str(), format_short(*s.config.budget.cost).c_str(),
                 format_short(s.study.spent_cost()).c_str());
    return kExitUsage;
  }
  s.study.raise_cost_budget(budget);
  s.config.budget.cost = budget;
  return std::nullopt;
}

// --trials N: N trials in all, more than the trials so far. A refusal is an exit code, with nothing
// changed.
std::optional<int> raise_trial_budget(const std::filesystem::path& dir, CampaignState& s, std::size_t trials,
                                      const char* given_as, const char* command) {
  // A study that stopped (its cost budget spent, its strategy done) hands out nothing more, whatever
  // the trial budget: raising it ended the session at once, and left a campaign that had no trial
  // limit with one.
  if (s.study.finished()) {
    const bool cost = s.study.stopped_for_cost_budget();
    std::fprintf(stderr,
                 "tune %s: %s %zu: %s is finished (%s), which a larger trial budget does not change%s; nothing was "
                 "written\n",
                 command, given_as, trials, dir.c_str(), s.study.stop_reason().c_str(),
                 cost ? " ('--cost-budget B' raises the cost budget to B)" : "");
    return kExitUsage;
  }
  const std::size_t so_far = s.study.trials().size() - s.study.imported_count();  // a warm start's count in no budget
  if (trials <= so_far) {
    std::fprintf(stderr, "tune %s: %s %zu: %s has %zu trials already; give the new total, more than %zu\n",
                 command, given_as, trials, dir.c_str(), so_far, so_far);
    return kExitUsage;
  }
  s.config.budget.trials = trials;
  return std::nullopt;
}

}  // namespace

std::optional<int> raise_budgets(const std::filesystem::path& dir, CampaignState& s, const BudgetRaise& raise,
                                 const char* command) {
  // A resume whose wall-time budget is spent starts no trial, whatever the other budgets: the raise
  // was accepted and the session ended at once on the wall budget.
  if (const std::optional<double> wall = s.config.budget.wall_seconds;
      wall && std::string_view(command) == "resume" && s.active_seconds >= *wall) {
    std::fprintf(stderr,
                 "tune %s: %s: the wall-time budget of %s is spent, so no trial would start; raise budget.wall in "
                 "the campaign file and 'tune run' it (a run setting; a raised budget.trials or budget.cost there "
                 "counts too); nothing was written\n",
                 command, raise.trials ? raise.trials_given_as : raise.cost_given_as,
                 format_duration(*wall).c_str());
    return kExitUsage;
  }
  if (raise.cost)
    if (const std::optional<int> refused = raise_cost_budget(dir, s, *raise.cost, raise.cost_given_as, command)) return refused;
  if (raise.trials)
    if (const std::optional<int> refused = raise_trial_budget(dir, s, *raise.trials, raise.trials_given_as, command)) return refused;
  s.finished = false;
  s.stop_reason.clear();
  save_state(dir, s);
  EventFields fields;  // the log tells every change of a budget, as it tells run settings'
  if (raise.trials) fields.push_back({"trials", json_number(std::uint64_t{*raise.trials})});
  if (raise.cost) fields.push_back({"cost", json_number(*raise.cost)});
  EventLog(dir / campaign_files::kEvents).write("budget_raised", fields);
  return std::nullopt;
}

}  // namespace tune::tuner
