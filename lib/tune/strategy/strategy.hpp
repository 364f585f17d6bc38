#pragma once
// The interface every search strategy implements. A strategy proposes the next point of the unit
// cube from the trials so far; it owns no I/O and draws randomness only from Rngs derived from the
// study seed, so that the same seed and the same tells give the same proposals.
#include <yaml-cpp/yaml.h>

#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tune/space/space.hpp"
#include "tune/study/resolution.hpp"
#include "tune/study/trial.hpp"

namespace tune {

struct StrategyContext {
  const Space& space;
  Direction direction;
  std::uint64_t seed;
  std::uint64_t ask_index;  // how many asks the study has answered before this one
  const std::vector<Trial>& trials;
  // Studies with a resolution: its levels, the current cost of each, and the budget left (in the
  // same units; infinity without a budget). Strategies that know nothing of resolutions propose at
  // the top level.
  const Resolution* resolution = nullptr;
  std::vector<double> level_costs;
  double remaining_budget = std::numeric_limits<double>::infinity();
};

struct Proposal {
  Eigen::VectorXd unit;  // snapped
  std::string source;
  bool in_model = false;
  double test_statistic = std::numeric_limits<double>::quiet_NaN();
  std::size_t model_size = 0;
  double acquisition = std::numeric_limits<double>::quiet_NaN();
  std::optional<std::size_t> level;  // resolution level; empty = the top level
};

// A recommended region of the unit cube (a box; `gpoo` recommends a cell rather than a point) and
// the model's estimate of the reward's average over it (the aggregated feedback the strategy
// models: over the cell's representatives, or over the whole cell), in reward units.
struct RecommendedRegion {
  Eigen::VectorXd lower, upper;
  double mean = 0.0;
  double sd = 0.0;
};

// Where the strategy's model puts the optimum, in reward units (larger is better).
struct Recommendation {
  Eigen::VectorXd unit;
  double mean = 0.0;  // posterior mean of the reward there
  double sd = 0.0;    // posterior standard deviation of f there (times sd_scale)
  // The factor sd was scaled by so that the model's errors at the runs it is about match its sds
  // (cmets and cmes: the root mean square of the full runs' leave-one-out z-scores, when above 1).
  double sd_scale = 1.0;
  std::optional<RecommendedRegion> region;  // strategies that recommend a region (gpoo)
};

// How a stop reason begins when the next run does not fit the cost budget, whether the study or a
// cost-aware strategy stopped: a larger budget lifts that stop (Study::raise_cost_budget), and the
// tuner reports it as the budget spent.
inline constexpr std::string_view kCostBudgetExhausted = "cost budget exhausted";

// Either a proposal, or the reason the strategy has nothing more to propose.
struct ProposalResult {
  std::optional<Proposal> proposal;
  std::string stop_reason;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;

  virtual ProposalResult propose(const StrategyContext& context) = 0;
  // Throws std::invalid_argument ("strategy option 'X' ...") when an option does not fit a study of
  // this many resolution levels (1: none), so that a campaign file or a Study is refused before
  // anything runs rather than at the first ask.
  virtual void check_levels(std::size_t levels) const { (void)levels; }
  // Throws std::invalid_argument naming the limit and the fix when the strategy cannot search this
  // space (bnb: too many parameters for its lattice), so that a Study is refused at once rather than
  // at its first ask, and a saved one is not left unloadable.
  virtual void check_space(const Space& space) const { (void)space; }
  // Throws std::invalid_argument naming the fix when a study of at most `max_trials` trials could
  // learn nothing (gpoo: a round of more trials never completes).
  virtual void check_trial_budget(std::size_t max_trials) const { (void)max_trials; }
  // Whether the study may hand out configurations the user enqueued (Study::enqueue) among this
  // strategy's trials: a strategy that models points sees them as any other result; one whose
  // trials must be its own (gpoo's cells, branch and bound's lattice) does not.
  virtual bool accepts_enqueued_trials() const { return true; }
  // Whether the strategy keeps its proposals within StrategyContext::remaining_budget itself
  // (choosing a cheaper level, or stopping). For the others, which propose full-resolution runs, the
  // study checks that a full run fits before asking them: a proposal it then refused would stay in
  // the strategy's state (gpoo's round) without a trial, and its recommendation would throw,
  // naming a trial the study does not hold.
  virtual bool keeps_to_cost_budget() const { return false; }
  // Called once a trial has completed (its value is set), in the order of the tells.
  virtual void on_complete(const StrategyContext& context, const Trial& trial) {
    (void)context;
    (void)trial;
  }
  // Whether on_complete may change the strategy. Study::tell saves the strategy before calling it,
  // to restore it if it throws; a strategy whose on_complete is the no-op above says false and is
  // spared that save (gpoo's took 28 ms at 2000 trials, more than its ask).
  virtual bool updates_on_complete() const { return true; }

  // What the user must know about the results before trusting the recommendation, if anything
  // (bnb: its re-run of a configuration gave another value, so the objective is not deterministic).
  // Shown by the tuner as soon as it appears, by `tune status` and by `tune best`.
  virtual std::optional<std::string> warning(const std::vector<Trial>& trials) const {
    (void)trials;
    return std::nullopt;
  }

  // The model's recommendation (argmax of the posterior mean of f at the full resolution), for
  // strategies that have a model; nothing otherwise or before there is data.
  virtual std::optional<Recommendation> recommend(const StrategyContext& context) const {
    (void)context;
    return std::nullopt;
  }

  // Options and internal state, so that a loaded study continues exactly where it was.
  virtual YAML::Node save() const = 0;
  // Restores the state saved by save() (options are read by make_strategy); the trials are those
  // of the loaded study.
  virtual void restore(const YAML::Node& node, const StrategyContext& context) = 0;
};

// The trial with this id (trials[id]); throws StateError when a strategy's saved state names a
// trial the study does not hold.
const Trial& trial_by_id(const std::vector<Trial>& trials, std::uint64_t id);

// A restored model must hold exactly the results it took in: each id once, and every trial that
// `belongs` says it took in (a hand edit that marks a trial complete loaded, and its value never
// reached the model). `field` and `at` name the saved list in the message.
void check_model_holds_results(const std::vector<std::uint64_t>& ids, const std::vector<Trial>& trials,
                               const std::function<bool(const Trial&)>& belongs, const std::string& field,
                               const YAML::Node& at);

// Whether `unit` equals the point of a pending trial (parallel suggestions must differ).
bool coincides_with_pending(const Eigen::VectorXd& unit, const std::vector<Trial>& trials);

// Imported results (Study::import_result) at `level` (nullopt: any), which stand in for points of
// an initial design: a warm start that brought 20 results of an earlier campaign would otherwise
// spend its first runs on a space-filling design that ignores them.
std::size_t imported_results(const std::vector<Trial>& trials, std::optional<std::size_t> level = std::nullopt);

// A unit point as an ordered key: trials run at snapped points, so in a space with a discrete
// parameter one configuration is one exact point (the strategies' sets of configurations run).
std::vector<double> unit_key(const Eigen::VectorXd& unit);

}  // namespace tune
