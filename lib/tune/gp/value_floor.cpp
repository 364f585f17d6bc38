#include "tune/gp/value_floor.hpp"

#include <algorithm>
#include <cmath>

namespace tune {

namespace {

// The median of v (the mean of the two middle values for an even count); v is reordered.
double median_of(std::vector<double>& v) {
  const auto mid = static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double upper = v[static_cast<std::size_t>(mid)];
  if (v.size() % 2 == 1) return upper;
  return 0.5 * (upper + *std::max_element(v.begin(), v.begin() + mid));
}

}  // namespace

std::vector<ValueFloor> next_level_floors(const std::vector<ValueFloor>& previous,
                                          const std::vector<std::vector<double>>& rewards_by_level) {
  std::vector<ValueFloor> next(rewards_by_level.size());
  std::vector<double> medians(rewards_by_level.size(), std::numeric_limits<double>::quiet_NaN());
  double robust_sd = 0.0;  // the widest level's
  for (std::size_t l = 0; l < rewards_by_level.size(); ++l) {
    const std::vector<double>& rewards = rewards_by_level[l];
    if (rewards.size() < kValueFloorMinCount) continue;
    bool finite = true;
    for (double r : rewards) finite = finite && std::isfinite(r);
    if (!finite) continue;
    std::vector<double> deviations = rewards;
    medians[l] = median_of(deviations);
    for (double& d : deviations) d = std::abs(d - medians[l]);
    robust_sd = std::max(robust_sd, 1.4826 * median_of(deviations));
  }
  for (std::size_t l = 0; l < rewards_by_level.size(); ++l) {
    const ValueFloor before = l < previous.size() ? previous[l] : ValueFloor{};
    const double now = std::isfinite(medians[l]) && robust_sd > 0.0 && std::isfinite(robust_sd)
                           ? medians[l] - kValueFloorSds * robust_sd
                           : -std::numeric_limits<double>::infinity();
    // Held: never above the previous fence; without a fence now, the previous one.
    ValueFloor& f = next[l];
    f.fence = !before.exists() ? now : now > -std::numeric_limits<double>::infinity() ? std::min(before.fence, now)
                                                                                     : before.fence;
    if (!f.exists()) {
      f = {};
      continue;
    }
    double worst = std::numeric_limits<double>::infinity();
    for (double r : rewards_by_level[l])
      if (r >= f.fence) worst = std::min(worst, r);
    // No reward at or above the fence cannot happen for a fence set from these rewards (the median
    // is above it); should a held fence lie above them all, they are modelled at the fence.
    f.value = std::isfinite(worst) ? worst : f.fence;
  }
  return next;
}

ValueFloor next_value_floor(const ValueFloor& previous, std::vector<double> rewards) {
  return next_level_floors({previous}, {std::move(rewards)})[0];
}

ValueFloor next_value_floor(const ValueFloor& previous, const std::vector<Observation>& observations) {
  std::vector<double> rewards;
  rewards.reserve(observations.size());
  for (const Observation& o : observations) rewards.push_back(o.value);
  return next_value_floor(previous, std::move(rewards));
}

}  // namespace tune
