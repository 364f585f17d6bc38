#include "tuner/campaign/campaign_spend.hpp"

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <limits>

#include "tune/adapters/command/command_template.hpp"
#include "tuner/campaign/progress.hpp"

namespace tune::tuner {
namespace {

// Inside, a NaN stands for an unknown cost and makes its sums unknown (GCC 12 warned of a
// maybe-uninitialized std::optional in the form that summed optionals).
std::optional<double> known(double sum) { return std::isnan(sum) ? std::nullopt : std::optional(sum); }

// `left` (below `limit`) with the digits that tell it from the limit's format_short: 17.999 s left
// under a limit of 18 s read "the 18s left is less than ... (18s ...)".
std::string below(double left, double limit) {
  std::string text = format_short(left);
  for (int digits = 5; text == format_short(limit) && digits <= 17; ++digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, left);
    text = buf;
  }
  return text;
}

}  // namespace

CampaignSpend campaign_spend(const CampaignState& s) {
  const Resolution& res = *s.config.resolution;
  const std::vector<double> costs = s.study.level_costs();
  const bool calibrated = costs_calibrated(res, s.study.trials());
  const std::size_t n = res.levels();
  std::vector<double> spent(n, 0.0), committed(n, 0.0);
  double spent_total = 0.0, committed_total = 0.0, interrupted = 0.0;
  for (const TrialRun& r : s.runs) {
    const Trial& t = s.study.trial(r.id);
    const std::size_t level = t.level.value_or(res.top());
    if (level >= n || t.imported()) continue;  // a warm start's result spent nothing here (trial_cost)
    const double cost = t.cost ? *t.cost : calibrated ? costs[level] : std::numeric_limits<double>::quiet_NaN();
    const bool finished = t.status != TrialStatus::pending;
    (finished ? spent[level] : committed[level]) += cost;
    (finished ? spent_total : committed_total) += cost;
    spent[level] += t.interrupted_cost;  // spent by runs that were stopped, finished or not
    spent_total += t.interrupted_cost;
    interrupted += t.interrupted_cost;
  }
  CampaignSpend out{known(spent_total), known(committed_total), interrupted, {}, {}};
  for (std::size_t l = 0; l < n; ++l) {
    out.spent_by_level.push_back(known(spent[l]));
    out.committed_by_level.push_back(known(committed[l]));
  }
  return out;
}

std::string no_full_run_note(const CampaignState& s) {
  if (!s.config.resolution || !s.config.budget.cost) return {};
  const Resolution& res = *s.config.resolution;
  bool full_measured = false;
  for (const Trial& t : s.study.trials()) {
    if (t.level.value_or(res.top()) != res.top()) continue;
    if (t.status == TrialStatus::complete) return {};
    full_measured = full_measured || t.cost.has_value();
  }
  std::string note = "; no full-resolution trial (" + res.parameter + " " + adapters::resolution_value_text(res.values.back()) +
                     ") completed, so 'tune best' recommends from cheaper runs only";
  // Full runs that all hit their time limit spent the budget on nothing: the limit is the fix.
  std::size_t timed_out = 0;
  for (const TrialRun& r : s.runs)
    if (r.exit && r.exit->kind == adapters::ExitKind::timeout && s.study.trial(r.id).level.value_or(res.top()) == res.top())
      ++timed_out;
  if (timed_out > 0)
    if (const std::optional<double> limit = s.config.trial_timeout(res.top()))
      note += ": " + std::to_string(timed_out) + " full run" + (timed_out == 1 ? "" : "s") + " timed out at " +
              format_short(*limit) + "s (" + (s.config.level_timeouts.empty() ? "executor.timeout" : "resolution.timeout") +
              " of the full run); raise it so that a full run can finish";
  const double full = s.study.level_costs().at(res.top());
  // (Declared costs above the budget are refused when the campaign file is read.)
  if (res.measured() && costs_calibrated(res, s.study.trials()) && full > *s.config.budget.cost)
    note += ": a full run costs " + format_short(full) + "s (" +
            (full_measured ? "measured" : "guessed from the cheaper levels") + "), more than the whole budget of " +
            format_short(*s.config.budget.cost) + "s; a campaign needs a budget.cost above it to make one";
  return note;
}

std::string unspent_under_limits_note(const CampaignState& s) {
  const std::vector<double>& limits = s.study.level_cost_limits();
  if (limits.empty() || !s.config.budget.cost) return {};
  const double left = *s.config.budget.cost - s.study.spent_cost();
  const double cheapest = *std::min_element(limits.begin(), limits.end());
  const std::string rule = ", and a run starts only if it fits at its limit, so that the budget is never overshot; "
                           "shorter time limits (resolution.timeout) or a shorter executor.grace let more of it be spent";
  if (!(left > 0) || left >= limits.back()) return {};
  if (left < cheapest)
    return "; the " + below(left, cheapest) + "s left is less than any level's time limit (the cheapest " +
           format_short(cheapest) + "s with grace and 5 s)" + rule;
  // Runs at cheaper levels still fit, but the strategy found none worth making: what is left is
  // held for a full run, which does not fit at its limit however short its runs really are.
  return "; the " + below(left, limits.back()) + "s left is less than a full run's time limit (" + format_short(limits.back()) +
         "s with grace and 5 s)" + rule;
}

}  // namespace tune::tuner
