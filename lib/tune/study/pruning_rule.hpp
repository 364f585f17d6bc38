#pragma once
// Stopping a running trial early from the values it reports along the way (the median stopping rule
// of Golovin et al., Google Vizier, KDD 2017, in the form of Optuna's MedianPruner and
// PercentilePruner, so that a campaign moved from Optuna prunes as it did):
//
//   at the running trial's latest step s, its best value so far is compared with the given
//   percentile of the completed trials' values at s; worse than it, the trial is stopped.
//
// With the median, a trial that is worse than half the finished ones at the same point of training
// gives way: an expensive run stops as soon as it is clearly not going anywhere, while the
// strategy still learns (roughly) how bad it was. The rule is about curves, not configurations, so
// any strategy can use it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tune/study/learning_curve.hpp"
#include "tune/study/trial.hpp"

namespace tune {

struct PruningRule {
  // The running trial must be at least as good as this percentile of the completed trials (50: the
  // median rule). Lower keeps fewer: 25 stops every trial outside the best quarter. As Optuna's
  // PercentilePruner, the percentile counts from the best (for a maximised objective it is taken at
  // 100 - percentile of the values), with linear interpolation between order statistics.
  double percentile = 50.0;
  // No trial is stopped before this many trials have completed (their curves are the reference).
  std::size_t startup_trials = 5;
  // Nor before the running trial has reported a step >= warmup_steps (early steps are noisy).
  std::int64_t warmup_steps = 0;
  // Nor while fewer completed trials than this have reached the running trial's step.
  std::size_t min_trials = 1;

  // Throws std::invalid_argument naming the setting: percentile outside (0, 100], min_trials 0.
  void validate() const;
};

// Why a trial is stopped, for its record and the user.
struct PruneVerdict {
  std::int64_t step = 0;       // the running trial's latest step
  double best_so_far = 0.0;    // its best value up to then (the objective's own sign)
  double last_value = 0.0;     // its last reported value: what the strategy is told
  double threshold = 0.0;      // the percentile of the completed trials at `step`
  std::size_t compared = 0;    // completed trials that reached `step`
  // "at step 3 its best val_acc 0.71 is worse than 0.83, the median of 6 completed trials there"
  std::string explain(const std::string& objective_name, double percentile) const;
};

// A completed trial's value at step s: the value reported at the largest step <= s, provided the
// curve reaches s (reports some step >= s); the last report of a step wins. Trials report at
// different intervals (every epoch, every 5), and a record that keeps 1000 of 50,000 steps keeps
// every tenth: an exact match of steps, as Optuna requires, would find nothing to compare with.
std::optional<double> value_at_step(const LearningCurve& curve, std::int64_t step);

// The verdict for `running` against the curves of the completed trials, or nothing if it goes on.
// Non-finite values are ignored. Curves of failed or pruned trials do not belong in `completed`
// (a trial stopped early would pull the reference down), nor, in a study with a resolution, those
// of other levels (a run of 3 epochs and one of 27 do not share a schedule).
std::optional<PruneVerdict> prune_verdict(const PruningRule& rule, Direction direction,
                                          const std::vector<const LearningCurve*>& completed,
                                          const LearningCurve& running);

// "the median" for 50, else "the 25th percentile from the best" (1st, 2nd, 3rd, 11th, 12.5th, ...).
std::string percentile_name(double p);

// The p-th percentile (0..100) of `values` with linear interpolation, as numpy.percentile's default.
// `values` must not be empty.
double percentile_of(std::vector<double> values, double p);

}  // namespace tune
