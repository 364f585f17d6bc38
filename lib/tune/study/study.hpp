#pragma once
// tune::Study: a search space, a strategy and the trials, driven by ask / tell / fail.
//
//   tune::Study study(space, tune::make_strategy("ei"), {.direction = tune::Direction::minimize, .seed = 7});
//   while (auto s = study.ask()) study.tell(s->id, f(s->config));
//
// Several suggestions may be pending at once; they are distinct. The study is deterministic: the
// same seed and the same sequence of tells give the same suggestions, also across save() / load().
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tune/space/space.hpp"
#include "tune/strategy/strategy.hpp"
#include "tune/study/region.hpp"
#include "tune/study/resolution.hpp"
#include "tune/study/trial.hpp"

namespace tune {

// The largest objective magnitude tell() accepts. The models work with squared deviations of the
// values (variances, sums of squares over thousands of trials), which overflow a double beyond about
// 1e150; at 1e100 they keep a wide margin. A value that large is a sentinel (a diverged run printing
// DBL_MAX), not a measurement: before, it made every later ask throw "the marginal likelihood could
// not be evaluated" (ei, ucb, cmets, cmes), gpoo's recommendation throw, and bnb's tell throw after
// recording the value, so that the saved study could not be loaded.
inline constexpr double kMaxObjectiveMagnitude = 1e100;

struct StudyOptions {
  Direction direction = Direction::minimize;
  std::uint64_t seed = 0;
  // Multi-resolution studies: the resolution's levels and costs, and optionally a budget in cost
  // units that cost-aware strategies (cmets) never overshoot.
  std::optional<Resolution> resolution{};
  std::optional<double> cost_budget{};
  // At most this many trials (failed ones included, imported results not): ask() then returns nothing, with the stop
  // reason "the trial budget of N is spent", and the study is finished (finished()) at the first
  // such ask() that finds none pending: telling the last pending trial does not set it.
  std::optional<std::size_t> max_trials{};
};

struct Suggestion {
  std::uint64_t id = 0;
  Config config;
  // With a resolution: the level to run at and its value (e.g. the number of epochs).
  std::optional<std::size_t> level;
  std::optional<double> resolution_value;
};

// A recommended region (gpoo): the box per parameter in the user's units, the box in the unit
// cube, and the model's estimate of the objective's average over it (the aggregated feedback the
// strategy models), in the units of the objective.
struct StudyRegion {
  std::vector<ParameterRange> box;
  Eigen::VectorXd lower, upper;
  double mean = 0.0;
  double sd = 0.0;
};

// The model's recommendation, in the units of the objective.
struct StudyRecommendation {
  Config config;
  Eigen::VectorXd unit;
  double mean = 0.0;  // posterior mean of the objective at the full resolution
  double sd = 0.0;
  // sd includes this factor: the root mean square leave-one-out z-score of the model at the full
  // runs, when above 1 (cmets, cmes; 1 otherwise): how much its own sds understated its errors.
  double sd_scale = 1.0;
  std::optional<StudyRegion> region;  // strategies that recommend a region (gpoo)
};

// The YAML text of trials that can no longer change (complete or failed), kept between saves so
// that writing a study of n trials formats only the few that changed.
class StudyYamlCache {
 private:
  friend class Study;
  std::vector<std::string> trials_;
};

class Study {
 public:
  Study(Space space, std::unique_ptr<Strategy> strategy, StudyOptions options = {});
  Study(Study&&) noexcept;
  Study& operator=(Study&&) noexcept;
  ~Study();

  // The next configuration to evaluate, or nothing when the strategy has stopped (stop_reason()
  // says why) or, with trials pending, cannot propose a distinct point until one of them is told.
  std::optional<Suggestion> ask();
  // Hands out `config` (every parameter of the space, in range) at the next ask, before anything
  // the strategy proposes; configurations enqueued earlier go first. The trial runs the
  // configuration exactly as given (source "enqueued") and its result reaches the strategy as any
  // other: the user's default or a configuration known to be good, evaluated first (Optuna's
  // enqueue_trial, Ray Tune's points_to_evaluate). With a resolution, `level` (default: the full
  // resolution). Budgets apply as to any trial. Throws std::invalid_argument naming the parameter
  // for a configuration outside the space, and for strategies whose trials must be their own (gpoo,
  // bnb). Saved and loaded with the study until handed out. A study whose strategy has stopped
  // (finished()) still hands it out; a spent trial or cost budget does not.
  void enqueue(Config config, std::optional<std::size_t> level = std::nullopt);
  std::size_t enqueued_count() const { return enqueued_.size(); }
  // A result obtained elsewhere: `config` (every parameter of the space that applies, in range) gave
  // `value`, at `level` with a resolution (default: the full resolution). `origin` says where from
  // ("campaign lr-sweep, trial 12"). It becomes a complete trial (source "imported",
  // Trial::imported_from) that the strategy's model takes in as any other result, and that counts
  // toward the initial design of ei, ucb and cmes, but that no budget counts: it ran elsewhere, so it
  // spent nothing of max_trials or the cost budget here (the warm start of a campaign whose space was
  // widened, Optuna's add_trial). best() may return it. Returns its id. Throws std::invalid_argument,
  // the study unchanged, as enqueue() does (a configuration outside the space, gpoo and bnb), for a
  // value tell() would refuse, and for an empty origin; if the strategy throws taking it in, the
  // exception propagates with the study as before.
  std::uint64_t import_result(Config config, double value, std::optional<std::size_t> level, std::string origin);
  // The same for many at once, in order, all or nothing (the study unchanged if one is refused,
  // named by its index), at the cost of one: importing 2000 one by one took 10 s. Returns the id of
  // the first.
  struct ImportedResult {
    Config config;
    double value = 0.0;
    std::optional<std::size_t> level;
    std::string origin;
  };
  std::uint64_t import_results(std::vector<ImportedResult> results);
  // Results imported so far (import_result); trials().size() minus this is what max_trials counts.
  std::size_t imported_count() const;
  // The objective value of a pending trial. Throws std::invalid_argument for an unknown id, a trial
  // that is not pending, a non-finite value (report those with fail()), or one beyond
  // +-kMaxObjectiveMagnitude; the trial then stays pending. All or nothing: if the strategy throws
  // while taking the result in (it refuses it, an internal error), the exception propagates with the
  // trial pending, without a value, and the strategy as before the call (restored from its save(),
  // taken at every tell unless its on_complete changes nothing), so the trial can be told again or
  // failed, and a save holds no trace of it.
  // With a resolution and measured costs, pass what the trial cost (e.g. its run time in seconds).
  // With declared costs a cost is optional; given, it replaces the level's declared cost for this
  // trial in spent_cost() and the budget, so it must be in the declared costs' unit.
  // Without a resolution a cost is refused (std::invalid_argument): every trial counts 1.
  void tell(std::uint64_t id, double value, std::optional<double> cost = std::nullopt);
  // Pending trial `id` was stopped early at `step` by a pruning rule (prune_verdict in
  // tune/study/pruning_rule.hpp), its last reported value `last_value`. It is recorded as failed,
  // with both kept in Trial::pruned: the run did not finish, so its result is unknown, and the
  // strategies treat it as they treat a failure (no better than the median where runs fail, or are
  // stopped, more often than not; not proposed again). Told its early value as a result instead, a
  // GP took that value, far above the run's end, as the point's: pruning then cost ei more than it
  // saved (bench/results/pruning.md). Checks as fail() does, and a finite `last_value`.
  void tell_pruned(std::uint64_t id, std::int64_t step, double last_value, std::optional<double> cost = std::nullopt);
  // Pending trial `id` could not be evaluated (a crash, a divergence, a timeout): it is recorded as
  // failed with `reason`, keeps counting against max_trials and the cost budget, and is never told
  // a value. Throws std::invalid_argument, the study unchanged, for an unknown id, a trial that is
  // not pending (told or failed already), a cost that is not finite and >= 0 or told without a
  // resolution. The cost may be
  // left out also with measured costs (a lost run's time is unknown): the trial is then charged its
  // level's measured cost.
  void fail(std::uint64_t id, std::string reason, std::optional<double> cost = std::nullopt);
  // What a run of pending trial `id` spent before it was interrupted (stopped, preempted, its node
  // lost), in the cost budget's unit; the trial stays pending and runs again. Charged to the
  // budget (spent_cost()) on top of the trial's own cost, without changing the level's estimated
  // cost; saved with the study. Throws std::invalid_argument for an unknown or finished trial, a cost
  // that is not finite and >= 0, or a study without a resolution (whose budget counts trials).
  void add_interrupted_cost(std::uint64_t id, double cost);

  // The references trials(), trial() and best() return are invalidated by the next ask() (the
  // trials are a vector that grows); copy what must outlive it.
  const std::vector<Trial>& trials() const { return trials_; }
  const Trial& trial(std::uint64_t id) const;
  // Best completed trial, nullptr if none; with a resolution, among the full-resolution trials only
  // (a low-resolution value is not comparable); never a pruned one (failed: its run did not finish).
  const Trial* best() const;
  std::size_t pending_count() const;
  // Set by ask() when it returns nothing and no trial is pending (and saved); cleared when an
  // enqueued configuration is handed out or raise_cost_budget lifts a budget stop.
  bool finished() const { return finished_; }
  const std::string& stop_reason() const { return stop_reason_; }

  const std::optional<Resolution>& resolution() const { return options_.resolution; }
  const std::optional<double>& cost_budget() const { return options_.cost_budget; }
  // Continues a study with a larger cost budget: one that stopped because its budget was spent
  // asks again. Throws std::invalid_argument (the study unchanged) without a cost budget, or for a
  // budget that is not finite and above the present one.
  void raise_cost_budget(double budget);
  // Whether the last ask stopped because the next run did not fit the cost budget.
  bool stopped_for_cost_budget() const { return stop_reason_.starts_with(kCostBudgetExhausted); }
  // Current cost of each level (declared or measured, a measured one at most its cost limit);
  // empty without a resolution.
  std::vector<double> level_costs() const;
  // With measured costs and a cost budget: the most a run at each level can cost (one per level;
  // empty for none), e.g. its time limit plus the grace to stop it. A run at a level whose cost is a
  // guess then no longer keeps every other one waiting (see waits_for_a_guessed_cost): while runs
  // are pending, the study hands out as long as the budget left, with every pending run at its
  // limit, fits the largest limit, so the budget is never overshot (with nothing pending, the next
  // run starts if its level's cost fits, as without limits). Every pending trial and every one handed out from now on must run under these
  // limits. Not saved: the caller sets them each time it drives the study (a campaign's tuner, from
  // its timeouts at every session). Throws std::invalid_argument (the limits unchanged) without a
  // resolution, for a count other than the levels', or for a limit not finite and > 0.
  void set_level_cost_limits(std::vector<double> limits);
  const std::vector<double>& level_cost_limits() const { return level_cost_limits_; }
  double longest_cost_limit() const;  // of level_cost_limits(), which must not be empty
  // Cost spent so far: every trial asked (pending, complete or failed) at its measured cost or, not
  // yet measured, its level's cost, and what its interrupted runs spent. Without a resolution each
  // trial counts 1.
  double spent_cost() const;
  // The strategy's model recommendation, if it has a model and data.
  std::optional<StudyRecommendation> recommendation() const;
  // What to know about the results before trusting the recommendation, if anything (bnb: its
  // re-run of a configuration gave another value, so the objective is not deterministic).
  std::optional<std::string> warning() const { return strategy_->warning(trials_); }

  const Space& space() const { return space_; }
  const Strategy& strategy() const { return *strategy_; }
  Direction direction() const { return options_.direction; }
  std::uint64_t seed() const { return options_.seed; }
  std::uint64_t ask_count() const { return ask_count_; }

  // Atomic write of the whole study as YAML (tune/io/atomic_file.hpp: a temporary file renamed over
  // `path`, through its symbolic links, keeping its permissions; a path that is not a regular file
  // is refused); throws std::runtime_error, the previous file in place, when it cannot write.
  // load() refuses damaged or foreign files with tune::StateError (a std::runtime_error), naming
  // the file, the position and the field.
  void save(const std::filesystem::path& path) const;
  static Study load(const std::filesystem::path& path);
  std::string to_yaml_string() const;
  static Study from_yaml_string(const std::string& text, const std::string& source_name);
  // The same as a YAML node, for files that embed a study (a campaign's state).
  YAML::Node to_yaml() const;
  // Appends the same YAML as text (every line indented by `indent` spaces, trials one per line in
  // flow style), reusing the cached text of finished trials.
  void append_yaml(std::string& out, int indent, StudyYamlCache& cache) const;
  static Study from_yaml(const YAML::Node& node);  // throws StateError (without a source name)
  // The same, with the trials read from their record lines (tune/io/flow_yaml.hpp's
  // load_with_fast_records: the node's `trials` is then an empty list) when `trial_lines` is given.
  static Study from_yaml(const YAML::Node& node, const std::vector<std::string_view>* trial_lines);

 private:
  Study() = default;
  StrategyContext context() const;
  double spent_cost(const std::vector<double>& costs_by_level) const;
  YAML::Node header_yaml() const;  // everything but the trials
  Trial& pending_trial(std::uint64_t id, const char* action);
  std::optional<Suggestion> ask_enqueued();
  bool waits_for_a_guessed_cost();
  bool worst_case_fits() const;
  bool exceeds_cost_budget(std::size_t level, const std::vector<double>& costs, double remaining,
                           std::string_view which_run);
  Suggestion suggestion_of(const Trial& t) const;
  Config checked_config(Config config, std::optional<std::size_t> level, const char* action) const;

  Space space_;
  std::unique_ptr<Strategy> strategy_;
  StudyOptions options_;
  std::vector<Trial> trials_;  // trials_[i].id == i
  struct Enqueued {
    Config config;
    std::size_t level = 0;  // with a resolution; 0 otherwise
  };
  std::vector<Enqueued> enqueued_;  // handed out front first
  std::vector<double> level_cost_limits_;  // set_level_cost_limits; empty: none
  std::uint64_t ask_count_ = 0;
  bool finished_ = false;
  std::string stop_reason_;
  // save() and to_yaml_string() format only the trials that changed since the last call: a study
  // of thousands of trials saved after every tell would otherwise spend ~50 us per trial.
  mutable StudyYamlCache yaml_cache_;
};

}  // namespace tune
