#pragma once
// The campaign definition: what to run, over which space, toward which objective, with which
// strategy and budget. Read from a YAML file (every error names the file, line, column, field and
// what is expected; unknown keys are errors) or built from the inline command-line form.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tune/space/space.hpp"
#include "tune/strategy/strategy_factory.hpp"
#include "tune/study/pruning_rule.hpp"
#include "tune/study/resolution.hpp"
#include "tune/study/trial.hpp"

namespace tune::tuner {

class CampaignError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // An error in one field, whose message reads "field 'F' at <position>: PROBLEM": the parts let the
  // inline form cite its command-line option instead of a position in the YAML it generated.
  CampaignError(const std::string& message, std::string field, std::string problem)
      : std::runtime_error(message), field_(std::move(field)), problem_(std::move(problem)) {}
  const std::string& field() const { return field_; }  // empty when the error is not about one field
  const std::string& problem() const { return problem_; }

 private:
  std::string field_;
  std::string problem_;
};

struct ObjectiveSpec {
  std::string name = "objective";
  Direction direction = Direction::minimize;
  // `objective: {deterministic: true}`: the same configuration always gives the same value (no
  // noise), so `ei` and `ucb` never run one twice (`repeat_configurations: false`). The default
  // strategy stays `ei`: `bnb`, built for this case, trailed it at every budget measured
  // (bench/results/bnb_regret.md: Branin at 25 evaluations 2.1 vs 0.023, Hartmann-3 at 50 0.863
  // vs 1.3e-5).
  bool deterministic = false;
};

struct BudgetSpec {
  static constexpr std::size_t kDefaultTrials = 50;  // when neither trials nor cost is given
  // Trials to run (suggestions issued); none = no limit, which only a campaign with a cost budget has.
  std::optional<std::size_t> trials = kDefaultTrials;
  // `trials` is the default, the file giving neither trials nor cost (not written by to_yaml: a
  // file edited to leave budget.trials out removed it, which is not a raise to the default).
  bool trials_defaulted = true;
  // Multi-resolution campaigns: the budget in cost units (the declared costs' units, or seconds of
  // trial run time when costs are measured); no trial starts whose level's cost does not fit.
  std::optional<double> cost;
  std::optional<double> wall_seconds;    // stop launching after this much time in total
  std::size_t max_failures = 10;         // stop after this many failed trials
};

// `executor: {kind: slurm, ...}`: how each trial's batch job is requested (see SlurmOptions).
struct SlurmSpec {
  std::optional<std::string> partition;
  std::optional<double> time_seconds;  // --time, whole minutes (rounded up); default: the longest trial timeout + grace + 1 min
  std::optional<std::size_t> cpus;     // --cpus-per-task
  std::optional<std::string> memory;   // --mem, e.g. 4G
  std::optional<std::string> gres;     // --gres, e.g. gpu:1
  std::optional<std::string> account;
  std::optional<std::string> qos;
  std::vector<std::string> extra;      // further "#SBATCH ..." lines
  std::string setup;                   // shell lines run in the job before the trial (modules, venv)
  double poll_seconds = 5.0;           // between squeue calls
  std::size_t retries = 3;             // runs lost to node failure or preemption before the trial fails
};

struct ExecutorSpec {
  std::string kind = "local";             // local or slurm
  std::size_t workers = 1;                // trials at a time (for slurm: jobs in flight, pending or running)
  std::optional<double> timeout_seconds;  // per trial
  double grace_seconds = 10.0;            // SIGTERM -> SIGKILL
  SlurmSpec slurm;                        // kind slurm only
};

// The engine's best default (see README: lowest median regret at 25 and 50 evaluations).
inline constexpr const char* kDefaultStrategy = "ei";
// With a resolution: the strategy that chooses the level. ei (or any other) would run every trial at
// the full run and leave the declared levels unused, which a campaign that declares them does not mean.
inline constexpr const char* kDefaultResolutionStrategy = "cmets";
// The top-level keys of a campaign, in the order to_yaml() writes them.
inline constexpr const char* kCampaignKeys[] = {"name",    "command",  "space", "resolution", "objective",
                                                "strategy", "pruning", "budget", "executor", "seed",
                                                "enqueue",  "warm_start"};

// A configuration the campaign runs first (`enqueue:`), at a level of the resolution (by default the
// full run).
struct EnqueuedConfig {
  Config config;
  std::optional<std::size_t> level;
};

// `warm_start: DIR` (or a list, or {from: DIR, fixed: {PARAM: VALUE}}): an earlier campaign whose
// complete results the campaign takes in when it is created (tuner/campaign/warm_start.hpp).
struct WarmStartSource {
  std::string from;  // its directory; made absolute against the campaign file's folder
  // Parameters one campaign searches (or its resolution's) and the other does not: the value the
  // other ran with, as written.
  std::map<std::string, std::string> fixed;
};

struct CampaignConfig {
  std::string name;
  std::vector<std::string> command;  // empty: no trials to launch, the campaign is driven by tune ask / tell
  Space space;
  ObjectiveSpec objective;
  // Multi-resolution campaigns: `resolution: {param: epochs, levels: [1, 3, 9], cost: measured}`.
  // `parameter` is the name the trial receives the level's value as; it is not a space parameter.
  std::optional<Resolution> resolution;
  // `resolution.timeout: [1m, 3m, 9m, 30m]`: a trial's time limit at each level, in seconds, in place
  // of executor.timeout (a hung one-epoch run waited the full run's limit). Empty: executor.timeout.
  std::vector<double> level_timeouts;
  std::string strategy = kDefaultStrategy;
  YAML::Node strategy_options;  // the strategy's settings (a map, possibly empty)
  // `pruning: median` or `pruning: {rule: percentile, percentile: 25, startup_trials: 5, warmup_steps:
  // 0, min_trials: 1}`: a running trial whose intermediate values fall behind is stopped (see
  // tune/study/pruning_rule.hpp). A run setting: a resume may change or drop it.
  std::optional<PruningRule> pruning;
  BudgetSpec budget;
  ExecutorSpec executor;
  std::uint64_t seed = 0;
  std::vector<EnqueuedConfig> enqueue;  // handed out before the strategy's own suggestions, in order
  std::vector<WarmStartSource> warm_start;

  YAML::Node to_yaml() const;
  // The time limit of a trial at `level` (nullopt: the level of a campaign without a resolution),
  // in seconds; nullopt for none.
  std::optional<double> trial_timeout(std::optional<std::size_t> level) const;
  // The longest time limit any trial has (a cluster job's default time limit allows for it).
  std::optional<double> longest_trial_timeout() const;
  // With measured costs and a cost budget, the most a trial at each level can cost (run_cost_limit
  // of its time limit), for Study::set_level_cost_limits; empty if some level has no time limit, or
  // if the longest limit is above the whole budget (hang_guard_limits()).
  std::vector<double> level_cost_limits() const;
  // Whether every level has a time limit but the longest, with grace and margin, is above the whole
  // cost budget: the limits then guard against hung runs but do not bound costs. As bounds (a run
  // starts only if it fits at its limit) they would start no run at all: the xgboost and libsvm
  // examples, with a 5-minute guard and budgets of 40 and 120 s, ran nothing.
  bool hang_guard_limits() const;
};

// The most a measured cost (a run's time from its start to its exit record, as the supervisor
// records it) can be for a run with this time limit: the supervisor sends SIGTERM at the limit and
// SIGKILL `grace` later, then reaps what is left of the trial (giving up after 2 s) and records the
// end. kRunCostMarginSeconds covers that reaping and the supervisor's wake-ups (on SIGCHLD, else
// its look every second), with room for a loaded machine.
inline constexpr double kRunCostMarginSeconds = 5.0;
double run_cost_limit(double timeout_seconds, double grace_seconds);

// Reads and validates a campaign file. Throws CampaignError.
// The levels' values as a list, "[1, 3, 9, 27]": what a value naming a level must be one of.
std::string level_values_text(const Resolution& resolution);

CampaignConfig load_campaign_file(const std::filesystem::path& path);
// `source` names the origin in messages (a file name, or "state.yaml: campaign").
// `unused`: UnusedOptions::accept for a campaign read back from its state.yaml, whose strategy
// options an earlier version may have taken while the strategy does not use them.
// Refuses (CampaignError) a new campaign's definition named '.' or '..', which name no directory
// of its own (load_campaign_file calls it; the inline form too).
void refuse_a_name_that_is_no_directory(const YAML::Node& root, const CampaignConfig& config);

CampaignConfig campaign_from_yaml(const YAML::Node& node, const std::string& source,
                                  UnusedOptions unused = UnusedOptions::refuse);

// The commented example written by `tune init` to `file` (as typed), whose header names it.
std::string example_campaign_text(const std::string& file = "campaign.yaml");

}  // namespace tune::tuner
