#include "tuner/campaign/campaign_spend.hpp"

#include <cmath>
#include <limits>

namespace tune::tuner {
namespace {

// Inside, a NaN stands for an unknown cost and makes its sums unknown (GCC 12 warned of a
// maybe-uninitialized std::optional in the form that summed optionals).
std::optional<double> known(double sum) { return std::isnan(sum) ? std::nullopt : std::optional(sum); }

}  // namespace

CampaignSpend campaign_spend(const CampaignState& s) {
  const Resolution& res = *s.config.resolution;
  const std::vector<double> costs = s.study.level_costs();
  const bool calibrated = costs_calibrated(res, s.study.trials());
  const std::size_t n = res.levels();
  std::vector<double> spent(n, 0.0), committed(n, 0.0);
  double spent_total = 0.0, committed_total = 0.0;
  for (const TrialRun& r : s.runs) {
    const Trial& t = s.study.trial(r.id);
    const std::size_t level = t.level.value_or(res.top());
    if (level >= n) continue;
    const double cost = t.cost ? *t.cost : calibrated ? costs[level] : std::numeric_limits<double>::quiet_NaN();
    const bool finished = t.status != TrialStatus::pending;
    (finished ? spent[level] : committed[level]) += cost;
    (finished ? spent_total : committed_total) += cost;
  }
  CampaignSpend out{known(spent_total), known(committed_total), {}, {}};
  for (std::size_t l = 0; l < n; ++l) {
    out.spent_by_level.push_back(known(spent[l]));
    out.committed_by_level.push_back(known(committed[l]));
  }
  return out;
}

}  // namespace tune::tuner
