#pragma once
// Cost-aware multi-resolution search with conditional max-value entropy (strategies `cmets` and
// `cmes`; digest-iqbo-cmets.md, Alg. 1 and sections 2.5, 3, 7.2, 7.3).
//
// The model. One GP over f on the unit cube observes every trial as a linear functional of f plus
// a per-level offset and per-level noise:
//     z = L_l f + b_l + eps_l,   eps_l ~ N(0, sigma_l^2),   b_top = 0,   b_l ~ N(0, v) for l < top
// - L_top f = f(x): full-resolution trials observe f itself.
// - Below the top, `window: point` (default) models a trial of tree node a as f at the node's
//   centre, where it runs (the classic multi-fidelity model, with the offset and discrepancy
//   below): what a real trainer's cheap run is. `window: cell` is the paper's Eq. 15 with a
//   uniform window (digest 7.1.7 proposal (a)): the average of f over a's cell, a cheap run telling
//   about a region, coarser the shallower the node. For a trainer run at the centre that model is
//   misspecified: on the libsvm example its recommendation promised 105% accuracy.
// - sigma_l: one noise variance per level, fitted by MAP with the kernel (or declared).
// - b_l: a random-effect offset per level (GaussianProcess offset groups): fewer epochs give lower
//   accuracy everywhere, and the offset absorbs it instead of bending f. Its prior variance v is
//   set at each refresh from the data, v = max(1, 1000 max_l m_l^2) with m_l the standardised gap
//   between level l's mean and the reference mean, so that any constant gap is well inside the
//   prior and is absorbed almost exactly (the fixed-effect limit).
// - A floor under each level's rewards (value_floor.hpp, set at each refresh): a diverged run
//   reported as a huge value is modelled at its level's floor instead of setting the scale.
// - Standardisation: the mean of the top-level values (of all values before there is one) and the
//   pooled within-level standard deviation, so that a constant offset of a level changes neither.
//
// The acquisition (CMES, Appendix A with the corrected normalisation, or Eq. 14): f* samples from
// the posterior of f on a candidate set of X (Gumbel by default, or Thompson), shared by every
// candidate query; the posterior (nu, sigma_g) of the functional of f each candidate query
// observes (its cell average, without the level's offset and discrepancy); its noise sd: the
// level's noise plus the posterior variance of the level's offset, because the truncation
// g <= f* holds for the average of f, not for the offset the observation adds. The f* samples are
// clamped to at least max over the candidates of nu + 1e-6 sigma_g (digest 7.2.3).
//
// cmets: the candidates are Algorithm 1's active set over a partition tree of the cube
// (CmetsActiveSet; cleaned variant by default, `variant: literal` for the paper's rules); by
// default (full_resolution_depths 2) only the two deepest depths map to full resolution and the
// cheaper levels share the others (full_resolution_depths 0: level floor(h L / (D + 1)) at depth h,
// the paper's even coupling), and that level is a cap (level_choice capped): a node runs at the
// level up to its depth's with the best CMES per cost. So no full-resolution trial runs until the
// tree is that deep (or has nothing left to learn); with D = 3d for d > 2 a whole budget went to
// cheap runs (measured: d = 10, levels costing 1 and 3, a budget of 300: 300 cheap runs and none at
// full resolution, Study::best() null; max_depth 8 or level_choice acquisition run full ones). With
// a cost budget the last full run's worth is now reserved: while no full run has completed or is
// pending and the dearest cheaper run would leave less than a full run's cost, the trial is a full
// run by CMES (source kReservedFullRunSource). In high dimension that is one full run, not many:
// a smaller max_depth is the fix there. The
// selection is CMES / cost of the node's level among the nodes whose cost fits the remaining budget
// (never overshooting). Tree: the paper's 2^d-ary all-dimensions split (the 2-D quadtree) for d <= 2,
// longest-side binary splits beyond, which keeps the active set at a few nodes per query; default
// D = max(6, 3d, L - 1).
// cmes: flat, every trial at the top level, candidates a Sobol set of the cube plus perturbations
// of the best observed points; an initial Sobol design of min(2d + 1, 20) points first.
//
// Recommendation: argmax of mean - recommendation_sd_penalty sd of f (the full-resolution
// objective) over the full-resolution trials' points (all trials' before the first), refined by
// L-BFGS within `recommendation_radius` of the best.
//
// A full-resolution trial never runs within kRepeatRadius lengthscales of another one, complete or
// pending (unless every candidate of its cell does).
//
// Pending trials enter the model as fantasies (value = posterior mean at their query), so parallel
// workers get different suggestions; failed trials as fantasies too, no better than their level's
// median result where runs fail more often than not, and every candidate's score is weighed by the
// probability that its run succeeds (failure_probability.hpp). A full-resolution run that failed is
// not rerun (kRepeatRadius).
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/hyperparameter_fit.hpp"
#include "tune/gp/value_floor.hpp"
#include "tune/strategy/failure_probability.hpp"
#include "tune/strategy/gp_bandit.hpp"
#include "tune/strategy/strategy.hpp"
#include "tune/tree/cmets_active_set.hpp"

namespace tune {

// The source of a cmets trial taken when the tree has nothing left to learn (continue_after_tree);
// `tune status` looks for it.
inline constexpr const char* kTreeUninformativeSource = "cmes_tree_uninformative";
// The source of the full run cmets makes when any cheaper run would leave too little for one.
inline constexpr const char* kReservedFullRunSource = "cmets_reserved_full_run";

enum class ObservationWindow { cell, point };
enum class MaxValueSampler { gumbel, thompson };
// Which level a tree node runs at: the one its depth maps to (the paper's coupling of resolution
// and height), the level that maximises CMES per unit cost at that node among all levels
// (acquisition), or among the levels up to its depth's (capped: shallow nodes stay cheap, deep
// nodes may run cheap as well as full).
enum class LevelChoice { depth, acquisition, capped };
// Where a full-resolution trial of a tree node runs: the cell's centre (the paper), or the point of
// the cell with the highest CMES (the trials then leave the grid of centres and can pin the optimum
// down).
enum class FullResolutionPoint { centre, best_in_cell };

struct MultiResolutionOptions {
  bool tree = true;  // cmets; false: cmes (flat, top level)
  CmetsVariant variant = CmetsVariant::cleaned;
  std::size_t max_depth = 0;  // 0: max(6, 3d, levels - 1)
  // 0: a node at depth h runs at level floor(h L / (D + 1)) (levels share the depths evenly, the
  // paper's coupling). k > 0: only the k deepest depths run at full resolution and the lower levels
  // share the rest, so cheap runs reach finer cells. Default 2: with the even map cmets spent
  // 91-96% of its budget at full resolution on the multi-fidelity benchmark.
  std::size_t full_resolution_depths = 2;
  bool allow_requery = false;
  // Once every node down to max_depth has been queried and budget is left: true spends it on
  // full-resolution runs chosen by CMES over the whole space (as cmes does); false stops there
  // (the paper's tree ends the search). A 2-D tree of the default depth has 127 nodes, which a
  // budget of 30 full runs on Forrester exhausts at 25.
  // true also takes such a run, source "cmes_tree_uninformative", whenever no active node's query
  // carries more than 1e-12 nats about f* per full run's cost (every f* sample ~7 posterior sds
  // above it: the optimum's region is resolved to max_depth and every other node is certainly
  // worse), and ends the campaign there if a full run no longer fits. false orders such nodes by
  // cmes_log_tail (their scores eventually underflow to 0). When no candidate over the cube is
  // informative either, a full run goes to the highest posterior mean that does not repeat one.
  bool continue_after_tree = true;
  // true: the campaign ends once no candidate over the cube that does not repeat a full run (and,
  // with the tree, no active node) carries more than 1e-12 nats about f* per full run's cost: the
  // model is sure that every configuration not yet run is worse than its best. false (default):
  // the rest of the budget goes to full runs in the order of the model's expectation, a check of
  // that belief. For a budget that is a cap rather than a target.
  bool stop_when_nothing_to_learn = false;
  // point: a cheap trial is f_l at its configuration, which is what a real trainer's cheap run is.
  // cell: the paper's indirect query (the average of f over the node's cell).
  ObservationWindow window = ObservationWindow::point;
  // capped: on the multi-fidelity benchmark (10 seeds) it took the cost to target relative to ei
  // from 0.58 to 0.20 on Hartmann-3 and 0.82 to 0.61 on Branin, equal elsewhere; acquisition
  // matched it on Hartmann-3 but spent full runs on coarse cells before the cheap level was
  // trusted (Forrester 1.76, Currin 0.58).
  LevelChoice level_choice = LevelChoice::capped;
  FullResolutionPoint full_resolution_point = FullResolutionPoint::best_in_cell;
  bool level_offsets = true;  // learn a mean offset per level below the top (false: none)
  // Each level below the top also has its own smooth deviation from f (a discrepancy process
  // shaped like f, variance ratio fitted per level): a level that tracks f loosely is trusted less.
  // On the multi-fidelity benchmark it rescues a misleading low fidelity (Branin's recommendation
  // regret ~6 instead of ~60) and lowers the cost to target on Forrester, Park and Hartmann-3.
  bool level_discrepancy = true;
  // Each level below the top sees f at its own fitted scale rho_l (Kennedy and O'Hagan's AR(1)):
  // a cheap run on half the amplitude of f is a copy of f, not f plus a large discrepancy.
  bool level_scales = true;
  // Each level below the top also adds its own linear trend w_l . (x - 1/2), its prior variance
  // fitted per level (GpHyperparameters::trend_variances): a cheap level tilted against f (fewer
  // epochs favouring larger learning rates, say) then keeps its shape information without pulling
  // f's optimum along the tilt. Off by default: on the multi-fidelity benchmark it helps where the
  // cheap level is tilted by construction (Forrester, cost to target 6.8 -> 5.5) and costs where it
  // is not (Park 2.9 -> 6.3, Currin 3.0 -> 9.7, Branin 10.7 -> 16.0): the trend claims part of the
  // cheap runs' slope, which then no longer informs f.
  bool level_trends = false;
  // Each level's discrepancy has its own lengthscales, f's times a factor fitted per level
  // (GpHyperparameters::discrepancy_lengthscale_factors; needs level_discrepancy), once the model
  // holds kDiscrepancyLengthscalesAfter full-resolution results: before, f and the discrepancy are
  // seen only through their sum, and a factor fitted to the cheap runs alone changed what cmets
  // explored (Park 2.9 -> 8.5). A level that deviates from f by a smooth tilt (Forrester's
  // 10 (x - 1/2)) then no longer makes the model believe f flat where the cheap level is. Off by
  // default: with refit_surprise_sd 0 and the factors held >= 1 it meets the benchmark's target on
  // Forrester, Currin, Park and Hartmann-3, but Branin, whose cheap levels deviate roughly, goes
  // from 10.2 to 25.8 (README, "The model").
  bool level_discrepancy_lengthscales = false;

  // The recommendation stays within this distance (per coordinate, unit cube) of a trial's point.
  double recommendation_radius = 0.15;
  // The recommendation maximises mean - this many posterior sds of f (0: the plain mean).
  double recommendation_sd_penalty = 1.0;

  std::size_t max_value_samples = 10;
  MaxValueSampler sampler = MaxValueSampler::gumbel;
  bool noisy_cmes = true;  // Appendix A; false: Eq. 14 with the noise-free sigma_g
  std::size_t quadrature_nodes = 32;
  std::size_t candidates = 0;  // X candidates for f* samples and the recommendation; 0: clamp(100 d, 256, 1024)

  // Declared noise standard deviation per level (units of the objective); empty: fitted.
  std::vector<double> noise_sd{};
  // Squared exponential: its window covariances are closed forms; Matern-5/2 integrates boxes by a
  // 64-node quadrature per side, about 100 times slower per covariance.
  KernelType kernel = KernelType::squared_exponential;
  // How the GP sees a categorical parameter of three or more choices (space/model_inputs.hpp): one
  // input per choice, or its one coordinate (the choices in the order given). The tree partitions
  // the unit cube whatever the model sees. `window: cell` (a cheap run averages f over its cell, a
  // box of the cube) keeps the coordinate. A study saved before this option existed is restored
  // with `ordered`, the encoding it was made with.
  CategoricalEncoding categorical_encoding = CategoricalEncoding::one_hot;
  std::size_t initial_design = 0;  // cmes only; 0: min(2d + 1, 20)
  RefitSchedule refit{};
  // A full-resolution result refits the hyperparameters as it is told, whatever the schedule, when
  // it lies more than this many predictive sds (of f plus the top level's noise) from the model's
  // prediction: 0 after every full-resolution result, .inf (the default) never. The schedule counts
  // results, and a campaign makes many cheap ones per full one: on Forrester a fit from the first
  // four cheap runs and one full run (its lengthscale at the upper bound) otherwise stays for four
  // more full runs, every one in the wrong basin (leave-one-out z-scores of 12-21). Not the default:
  // on the multi-fidelity benchmark it pays only together with level_discrepancy_lengthscales (see
  // there), and on its own it cost Currin 3.0 -> 6.3 and Branin 10.2 -> 12.1.
  double refit_surprise_sd = std::numeric_limits<double>::infinity();
  HyperparameterFitOptions fit{};

  std::size_t candidate_count(std::size_t dim) const;
  std::size_t tree_depth(std::size_t dim, std::size_t levels) const;
};

class MultiResolutionSearch final : public Strategy {
 public:
  explicit MultiResolutionSearch(MultiResolutionOptions options);

  std::string name() const override { return options_.tree ? "cmets" : "cmes"; }
  bool keeps_to_cost_budget() const override { return true; }
  const MultiResolutionOptions& options() const { return options_; }

  ProposalResult propose(const StrategyContext& context) override;
  void check_levels(std::size_t levels) const override;
  void on_complete(const StrategyContext& context, const Trial& trial) override;
  std::optional<Recommendation> recommend(const StrategyContext& context) const override;
  YAML::Node save() const override;
  void restore(const YAML::Node& node, const StrategyContext& context) override;

  // Observability and tests.
  // The model's inputs are model_inputs()(unit) of the unit points (null before the strategy has
  // seen its space).
  const ModelInputs* model_inputs() const { return inputs_ ? &*inputs_ : nullptr; }
  const GaussianProcess* model() const {
    build_deferred_model();
    drop_fantasies();
    return model_ ? &*model_ : nullptr;
  }
  // What the model is made of, without building a loaded one (tune status): whether there is one,
  // the observations it holds, and its hyperparameters and standardisation.
  bool has_model() const { return model_.has_value(); }
  std::size_t model_size() const { return model_ ? base_model_size() + (deferred_ ? deferred_->observations.size() : 0) : 0; }
  const GpHyperparameters& hyperparameters() const { return hyperparameters_; }
  // The floor under each level's rewards (empty before the first refresh; value_floor.hpp).
  const std::vector<ValueFloor>& level_floors() const { return level_floors_; }
  const Standardization& standardization() const { return standardization_; }
  const CmetsActiveSet* active_set() const { return active_ ? &*active_ : nullptr; }
  // How many times the model has been rebuilt with refitted hyperparameters.
  std::size_t refresh_count() const { return refresh_count_; }
  // The tree node of each trial (cmets), by trial id; no_node for trials without one.
  NodeId node_of_trial(std::uint64_t id) const;
  // The resolution level a node at this depth runs at.
  std::size_t level_of_depth(std::size_t depth, std::size_t levels) const;

 private:
  void ensure_active_set(const StrategyContext& context);
  void refresh_if_due(const StrategyContext& context);
  void rebuild_model(const StrategyContext& context);
  Observation observation_of(const Trial& trial, const StrategyContext& context, double value) const;
  Observation query_at(NodeId node, std::size_t level, std::size_t top) const;
  // Fantasies (value = posterior mean) at the queries of pending trials, after the failed trials'
  // (attach_fantasy_tail). They stay on the model until its next use other than an ask (kept_).
  void add_fantasies(const StrategyContext& context);
  // The fantasies of the last ask, kept on the model: a driver that asks again without a tell (a
  // burst of asks for many workers) pays for the new pending trial's fantasy only, not for all of
  // them afresh, O(n^2 + n T) instead of O(P (n^2 + n T)) at P pending. The ask that reuses them
  // would have added the same rows in the same order to the same model (nothing else changed it),
  // so it computes the same bits. Anything else that uses the model drops them first.
  struct KeptFantasies {
    std::size_t base_size = 0;              // the model's size without them
    std::vector<std::uint64_t> failed;      // the failed trials in the tail, in order
    std::vector<double> caps;               // and their caps
    std::vector<std::uint64_t> pending;     // the pending trials added after it, in order
  };
  mutable std::optional<KeptFantasies> kept_;
  void drop_fantasies() const;
  std::size_t base_model_size() const { return kept_ ? kept_->base_size : model_->size(); }
  // The Sobol candidate set of refresh number `refresh` (tracked by the model until the next one).
  Eigen::MatrixXd candidate_points(const StrategyContext& context, std::size_t refresh) const;
  // The model's inputs of the space's unit points (the identity without one-hot categoricals), made
  // at the first entry (propose, on_complete, recommend, restore); model_input() needs them made.
  const ModelInputs& inputs(const Space& space) const;
  Eigen::VectorXd model_input(const Eigen::VectorXd& unit) const;
  // Samples of f*, the maximum of f over the model's tracked candidate points.
  Eigen::VectorXd max_value_samples(const GaussianProcess& gp, std::uint64_t seed, std::uint64_t ask_index) const;
  // The levels a node's query may take under level_choice (before the budget excludes any).
  std::vector<std::size_t> candidate_levels(NodeId node) const;
  // Tracks each active node's candidate queries in the model (and f where each observes it) and
  // untracks the nodes that left the active set.
  void sync_node_targets(const std::vector<NodeId>& active);
  ProposalResult propose_tree(const StrategyContext& context);
  bool full_run_reserved(const StrategyContext& context) const;
  ProposalResult propose_reserved_full_run(const StrategyContext& context);
  // The tree's query (Algorithm 1's step); with stop_if_uninformative, none when every score is 0,
  // flagged in uninformative.
  ProposalResult propose_tree_node(const StrategyContext& context, const std::vector<NodeId>& active,
                                   bool stop_if_uninformative, bool& uninformative);
  ProposalResult propose_flat(const StrategyContext& context);
  // A full-resolution run chosen by CMES over the whole space (cmes after its design; cmets once
  // the tree is exhausted), labelled `source`.
  ProposalResult propose_by_cmes(const StrategyContext& context, const char* source);
  Eigen::VectorXd best_point_in_cell(const StrategyContext& context, const PartitionNode& cell,
                                     const Eigen::VectorXd& f_star) const;
  std::size_t levels_of(const StrategyContext& context) const;
  // The model's inputs of every full-resolution trial (made, pending or failed), one per column:
  // made once per ask, as repeats_a_full_run runs for each of ~1000 candidates.
  Eigen::MatrixXd full_run_inputs(const StrategyContext& context) const;
  // Whether the input x lies within kRepeatRadius lengthscales of the model's kernel of one of
  // full_runs: the kernel's correlation between the two is above 0.997 (0.9987 for the squared
  // exponential). Needs the model.
  bool repeats_a_full_run(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::MatrixXd& full_runs) const;
  // Whether a query at (node, level) would run a configuration that already ran (or runs, or
  // failed) at that level: nodes whose points snap to one configuration of a discrete parameter.
  // Empty unless the space has a parameter that is not a float (and allow_requery is off).
  std::set<std::pair<std::size_t, std::vector<double>>> runs_by_level(const StrategyContext& context) const;
  // The probability that a run at each column of X succeeds (1 everywhere without a failed trial).
  Eigen::VectorXd success_probabilities(const StrategyContext& context, const Eigen::MatrixXd& X) const;
  // The failure probability of this ask's trials with the model's kernel, built once per propose()
  // (the fantasies' caps, the nodes' and the candidates' success used to build it up to four times,
  // O(trials) each) and again only if the model is refitted meanwhile.
  const FailureProbability& failure_probability(const StrategyContext& context) const;
  mutable std::optional<FailureProbability> failures_;
  mutable std::size_t failures_refresh_ = 0;  // refresh_count_ when failures_ was built
  static constexpr double kRepeatRadius = 0.05;
  static constexpr std::size_t kDiscrepancyLengthscalesAfter = 2;

  MultiResolutionOptions options_;
  std::optional<CmetsActiveSet> active_;
  std::vector<NodeId> trial_nodes_;      // by trial id (cmets)
  std::vector<std::uint64_t> in_model_;  // completed trials in the model, in insertion order
  // After a load the model's observations are added at its first use (an ask, the
  // recommendation, model()), not in restore(): `tune tell` loads a study to record a result, and
  // adding n observations is O(n^3). Results told meanwhile join the list (a full-resolution one
  // the refit rule judges builds the model first), so the model has the same observations in the
  // same order, bit for bit the one restore() built (GaussianProcess::add, track()).
  struct DeferredModel {
    std::vector<Observation> observations;
    Eigen::MatrixXd candidates;  // the tracked candidate points
  };
  void build_deferred_model() const;
  mutable std::optional<ModelInputs> inputs_;
  mutable std::optional<GaussianProcess> model_;
  mutable std::optional<DeferredModel> deferred_;  // set only while model_ holds no observation yet
  // The model's tracked-target slots of each active node: per level, its query's and that of f
  // where the query observes it (one f slot serves every level that observes f at the same place).
  // Belongs to model_: cleared whenever model_ is rebuilt.
  struct NodeTargets {
    std::vector<std::size_t> query, f;  // by level; no_slot where not a candidate
  };
  static constexpr std::size_t no_slot = static_cast<std::size_t>(-1);
  std::map<NodeId, NodeTargets> node_targets_;
  GpHyperparameters hyperparameters_;
  Standardization standardization_;
  // Per low level, a constant taken off its rewards before the model sees them; empty (none) unless
  // a level's mean lay too far from the reference mean at the last refresh (rebuild_model).
  std::vector<double> level_centres_;
  // Per level, the floor under its rewards set at the last refresh (empty before one; a level
  // without a floor leaves its rewards as told): a diverged run told as 1e30 is modelled as its
  // level's worst ordinary run (value_floor.hpp).
  std::vector<ValueFloor> level_floors_;
  double level_centre(const Observation& o) const {
    return o.offset_group && *o.offset_group < level_centres_.size() ? level_centres_[*o.offset_group] : 0.0;
  }
  std::size_t refresh_count_ = 0;
  std::size_t size_at_refresh_ = 0;
  std::uint64_t design_index_ = 0;
  std::size_t dim_ = 0;
  // The study's space, to snap a node's point query to a configuration that can run (set with the
  // active set).
  std::optional<Space> space_;
  std::size_t levels_ = 1;
};

const char* to_string(ObservationWindow window);
ObservationWindow observation_window_from_string(const std::string& name);  // throws std::invalid_argument
const char* to_string(LevelChoice choice);
LevelChoice level_choice_from_string(const std::string& name);  // throws std::invalid_argument
const char* to_string(FullResolutionPoint point);
FullResolutionPoint full_resolution_point_from_string(const std::string& name);  // throws std::invalid_argument
const char* to_string(MaxValueSampler sampler);
MaxValueSampler max_value_sampler_from_string(const std::string& name);  // throws std::invalid_argument

YAML::Node to_yaml(const MultiResolutionOptions& options);
MultiResolutionOptions multi_resolution_options_from_yaml(const YAML::Node& node, bool tree);

}  // namespace tune
