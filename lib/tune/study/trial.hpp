#pragma once
// A trial: one suggested configuration, its status, its result, and how it was chosen.
#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "tune/space/space.hpp"

namespace tune {

enum class Direction { minimize, maximize };
enum class TrialStatus { pending, complete, failed };

const char* to_string(Direction direction);
Direction direction_from_string(const std::string& name);  // throws std::invalid_argument
const char* to_string(TrialStatus status);
TrialStatus trial_status_from_string(const std::string& name);  // throws std::invalid_argument

struct Trial {
  std::uint64_t id = 0;
  Config config;
  Eigen::VectorXd unit;  // the configuration's point of the unit cube
  TrialStatus status = TrialStatus::pending;
  std::optional<double> value;  // objective value, as told (not sign-flipped)
  std::string failure_reason;

  // How the suggestion was made, for observability.
  std::string source;           // initial_design, acquisition, random, sobol, gpoo, bnb, cmets,
                                // cmes_after_tree, cmes_tree_uninformative, cmets_reserved_full_run;
                                // "enqueued" for a configuration of Study::enqueue, "imported" for
                                // a result of Study::import_result; bnb's check of
                                // its best: "bnb: a re-run of trial N (is the objective deterministic?)"
  bool in_model = false;        // joins (or joined) the GP dictionary when complete
  double test_statistic = std::numeric_limits<double>::quiet_NaN();  // posterior var / noise at x
  std::size_t model_size = 0;   // dictionary size when suggested
  double acquisition = std::numeric_limits<double>::quiet_NaN();     // acquisition score at x

  // Studies with a resolution: the level the trial runs at (0 = cheapest), and what it cost (run
  // time, or whatever unit the budget counts) when the caller measured it.
  std::optional<std::size_t> level;
  std::optional<double> cost;
  // What earlier runs of the trial that were interrupted (stopped, preempted) spent before it ran
  // again: charged to the cost budget beside `cost`, but not part of what a run at the level costs.
  double interrupted_cost = 0.0;
  // A trial stopped early by a pruning rule (tune/study/pruning_rule.hpp, Study::tell_pruned): failed
  // for the strategies (no result), with the step it was stopped at and its last value then.
  struct Pruned {
    std::int64_t step = 0;
    double last_value = 0.0;
  };
  std::optional<Pruned> pruned;
  // A result from elsewhere (Study::import_result: another campaign's run, an earlier study): where it
  // comes from; empty for a trial of this study. Complete, taken in by the model, counted by no budget.
  std::string imported_from;

  bool imported() const { return !imported_from.empty(); }
};

// The reward the strategies maximise: the value, negated when minimising.
inline double reward_of(double value, Direction direction) {
  return direction == Direction::maximize ? value : -value;
}

}  // namespace tune
