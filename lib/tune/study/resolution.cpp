#include "tune/study/resolution.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tune/io/yaml_values.hpp"

namespace tune {

void validate(const Resolution& r) {
  // The name a campaign gives the level's value ({epochs}); empty, a tuner wrote '{}' placeholders.
  if (r.parameter.empty())
    throw std::invalid_argument("resolution: the parameter's name is empty; name what the level sets, e.g. epochs");
  if (r.values.empty()) throw std::invalid_argument("resolution: 'levels' must list at least one value");
  for (std::size_t i = 0; i < r.values.size(); ++i) {
    if (!std::isfinite(r.values[i]) || r.values[i] <= 0)
      throw std::invalid_argument("resolution: level " + std::to_string(i) + " has value " +
                                  format_double(r.values[i]) + "; levels must be finite and > 0");  // not to_string's 0.000000 for 1e-9
    if (i > 0 && !(r.values[i] > r.values[i - 1]))
      throw std::invalid_argument("resolution: 'levels' must be strictly increasing (cheapest first, full run last)");
  }
  if (r.measured()) return;
  if (r.costs.size() != r.values.size())
    throw std::invalid_argument("resolution: " + std::to_string(r.costs.size()) + " costs for " +
                                std::to_string(r.values.size()) + " levels; give one cost per level or 'measured'");
  for (std::size_t i = 0; i < r.costs.size(); ++i) {
    if (!std::isfinite(r.costs[i]) || r.costs[i] <= 0)
      throw std::invalid_argument("resolution: the cost of level " + std::to_string(i) + " must be finite and > 0");
    if (i > 0 && r.costs[i] < r.costs[i - 1])
      throw std::invalid_argument("resolution: costs must not decrease with the level (a finer run costs at least as much)");
  }
}

std::optional<std::size_t> level_of(const Resolution& r, double value) {
  const auto at = std::find(r.values.begin(), r.values.end(), value);
  if (at == r.values.end()) return std::nullopt;
  return static_cast<std::size_t>(at - r.values.begin());
}

AffineCost fit_affine_cost(const std::vector<double>& values, const std::vector<double>& costs) {
  const double k = static_cast<double>(values.size());
  double sv = 0, sc = 0, svv = 0, svc = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    sv += values[i];
    sc += costs[i];
    svv += values[i] * values[i];
    svc += values[i] * costs[i];
  }
  const double mean_v = sv / k, mean_c = sc / k;
  const double spread = svv - k * mean_v * mean_v;
  AffineCost fit{mean_c, 0.0};  // no spread in the values, or costs that fall as values rise: flat
  if (spread > 0) {
    const double slope = (svc - k * mean_v * mean_c) / spread;
    if (slope > 0) fit = {mean_c - slope * mean_v, slope};
  }
  if (fit.start_up < 0) fit = {0.0, svv > 0 ? std::max(0.0, svc / svv) : 0.0};  // dearer than linear: through 0
  return fit;
}

std::vector<double> level_costs(const Resolution& r, const std::vector<Trial>& trials) {
  if (!r.measured()) return r.costs;
  const std::size_t n = r.levels();
  const auto priced = [&](const Trial& t) {
    return t.cost && t.level && *t.level < n && t.status != TrialStatus::pending;
  };
  // A level with a completed run is priced by its completed runs only: a failed run's time is spent,
  // but a run that diverged at its first step is no measure of one that trains (full runs of 2 s among
  // twenty failures of 0.01 s were priced 0.41 s, and four workers spent 10.6 of a budget of 5).
  std::vector<bool> has_complete(n, false);
  for (const Trial& t : trials)
    if (priced(t) && t.status == TrialStatus::complete) has_complete[*t.level] = true;
  std::vector<double> sum(n, 0.0);
  std::vector<std::size_t> count(n, 0);
  double cost_total = 0.0, value_total = 0.0;
  for (const Trial& t : trials) {
    if (!priced(t) || (has_complete[*t.level] && t.status != TrialStatus::complete)) continue;
    sum[*t.level] += *t.cost;
    ++count[*t.level];
    cost_total += *t.cost;
    value_total += r.values[*t.level];
  }
  const double per_value = value_total > 0 && cost_total > 0 ? cost_total / value_total : kUncalibratedCostPerValue;
  std::vector<double> means;
  std::vector<double> values;
  for (std::size_t l = 0; l < n; ++l)
    if (count[l] > 0) {
      means.push_back(sum[l] / static_cast<double>(count[l]));
      values.push_back(r.values[l]);
    }
  const AffineCost guess = means.size() >= 2 ? fit_affine_cost(values, means) : AffineCost{0.0, per_value};
  std::vector<double> costs(n);
  for (std::size_t l = 0; l < n; ++l) {
    costs[l] = count[l] > 0 ? sum[l] / static_cast<double>(count[l]) : guess.at(r.values[l]);
    // A zero run time (a trial faster than the clock) would make the level free.
    costs[l] = std::max(costs[l], 1e-9 * per_value * r.values[l]);
  }
  // An unseen level costs no less than a measured cheaper level, nor more than a measured dearer
  // one: proportional extrapolation ignores a run's start-up time, and with levels of 1, 3 and 9
  // epochs measured at 2 s and 3 s at levels 0 and 2, level 1 was guessed at 1.9 s, cheaper than 1.
  for (std::size_t l = 0; l < n; ++l) {
    if (count[l] > 0) continue;
    for (std::size_t below = 0; below < l; ++below)
      if (count[below] > 0) costs[l] = std::max(costs[l], costs[below]);
    for (std::size_t above = l + 1; above < n; ++above)
      if (count[above] > 0) costs[l] = std::min(costs[l], costs[above]);
  }
  return costs;
}

bool costs_calibrated(const Resolution& r, const std::vector<Trial>& trials) {
  if (!r.measured()) return true;
  return std::any_of(trials.begin(), trials.end(), [&](const Trial& t) {
    return t.cost && t.level && *t.level < r.levels() && t.status != TrialStatus::pending && *t.cost > 0;
  });
}

bool level_cost_measured(const Resolution& r, const std::vector<Trial>& trials, std::size_t level) {
  if (!r.measured()) return true;
  return std::any_of(trials.begin(), trials.end(), [&](const Trial& t) {
    return t.cost && t.level == level && t.status == TrialStatus::complete;
  });
}

double trial_cost(const Trial& trial, const std::vector<double>& costs) {
  if (trial.imported()) return 0.0;  // it ran elsewhere: nothing was spent here
  if (trial.cost) return *trial.cost + trial.interrupted_cost;
  const std::size_t level = trial.level.value_or(costs.empty() ? 0 : costs.size() - 1);
  return (level < costs.size() ? costs[level] : 0.0) + trial.interrupted_cost;
}

}  // namespace tune
