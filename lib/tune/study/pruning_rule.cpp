#include "tune/study/pruning_rule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace tune {

namespace {

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string percentile_name(double p) {
  if (p == 50.0) return "the median";
  std::string suffix = "th";
  if (p == std::floor(p)) {
    const auto n = static_cast<long long>(p);
    if (n % 100 < 11 || n % 100 > 13) suffix = n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  }
  return "the " + short_number(p) + suffix + " percentile from the best";
}

void PruningRule::validate() const {
  if (!(percentile > 0.0 && percentile <= 100.0))
    throw std::invalid_argument("pruning 'percentile' must lie in (0, 100] (50: the median rule; 25 keeps the best "
                                "quarter), got " + short_number(percentile));
  if (min_trials == 0)
    throw std::invalid_argument("pruning 'min_trials' must be >= 1 (completed trials that reached a step before a "
                                "trial is judged there)");
}

std::string PruneVerdict::explain(const std::string& objective_name, double percentile) const {
  return "at step " + std::to_string(step) + " its best " + objective_name + " " + short_number(best_so_far) +
         " is worse than " + short_number(threshold) + ", " + percentile_name(percentile) + " of the " +
         std::to_string(compared) + (compared == 1 ? " completed trial" : " completed trials") + " there";
}

std::optional<double> value_at_step(const LearningCurve& curve, std::int64_t step) {
  bool reaches = false;
  std::optional<std::int64_t> best_step;
  double value = 0.0;
  for (const CurvePoint& p : curve) {
    if (!std::isfinite(p.value)) continue;
    reaches |= p.step >= step;
    // The largest step <= `step`; of equal steps, the later report.
    if (p.step <= step && (!best_step || p.step >= *best_step)) {
      best_step = p.step;
      value = p.value;
    }
  }
  if (!reaches || !best_step) return std::nullopt;
  return value;
}

double percentile_of(std::vector<double> values, double p) {
  if (values.empty()) throw std::invalid_argument("percentile_of: no values");
  std::sort(values.begin(), values.end());
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  // numpy's own rounding (its _lerp, numpy >= 1.22): from the upper value when t >= 1/2. With
  // a + t (b - a) throughout, the median of 0.1 and 0.5 was 0.30000000000000004, and a trial at 0.3
  // was stopped that Optuna keeps (tests/unit/pruning_rule_optuna_test.cpp).
  const double t = rank - static_cast<double>(lo);
  const double a = values[lo], b = values[hi];
  return t >= 0.5 ? b - (b - a) * (1.0 - t) : a + (b - a) * t;
}

std::optional<PruneVerdict> prune_verdict(const PruningRule& rule, Direction direction,
                                          const std::vector<const LearningCurve*>& completed,
                                          const LearningCurve& running) {
  if (completed.size() < rule.startup_trials) return std::nullopt;
  std::optional<std::int64_t> step;
  std::optional<double> best;
  double last = 0.0;
  for (const CurvePoint& p : running) {
    if (!std::isfinite(p.value)) continue;
    step = step ? std::max(*step, p.step) : p.step;
    if (!best || reward_of(p.value, direction) > reward_of(*best, direction)) best = p.value;
    last = p.value;
  }
  if (!step || *step < rule.warmup_steps) return std::nullopt;
  std::vector<double> there;
  for (const LearningCurve* c : completed)
    if (const std::optional<double> v = value_at_step(*c, *step)) there.push_back(*v);
  if (there.empty() || there.size() < rule.min_trials) return std::nullopt;
  // Counted from the best: the p-th percentile of a minimised objective, the (100 - p)-th of a maximised one.
  const bool maximize = direction == Direction::maximize;
  const std::size_t compared = there.size();
  const double threshold = percentile_of(std::move(there), maximize ? 100.0 - rule.percentile : rule.percentile);
  const bool worse = maximize ? *best < threshold : *best > threshold;
  if (!worse) return std::nullopt;
  PruneVerdict v;
  v.step = *step;
  v.best_so_far = *best;
  v.last_value = last;
  v.threshold = threshold;
  v.compared = compared;
  return v;
}

}  // namespace tune
