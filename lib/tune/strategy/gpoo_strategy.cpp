#include "tune/strategy/gpoo_strategy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "tune/io/yaml_values.hpp"
#include "tune/random/rng.hpp"
#include "tune/strategy/option_fields.hpp"

namespace tune {

namespace {

// Whether `unit` equals the point of a pending or failed trial: parallel suggestions differ, and a
// configuration that failed is not proposed again.
bool blocked(const Eigen::VectorXd& unit, const std::vector<Trial>& trials) {
  for (const Trial& t : trials)
    if (t.status != TrialStatus::complete && t.unit.size() == unit.size() && t.unit == unit) return true;
  return false;
}

bool label_less(const PartitionTree& tree, NodeId a, NodeId b) {
  const PartitionNode& na = tree.node(a);
  const PartitionNode& nb = tree.node(b);
  if (na.depth != nb.depth) return na.depth < nb.depth;
  if (na.index_in_depth && nb.index_in_depth && *na.index_in_depth != *nb.index_in_depth)
    return *na.index_in_depth < *nb.index_in_depth;
  return a < b;
}

}  // namespace

std::size_t GpooStrategyOptions::tree_depth(std::size_t dim) const {
  if (max_depth > 0) return max_depth;
  return std::min<std::size_t>(10 * dim, 60);
}

std::size_t GpooStrategyOptions::trials_per_round() const {
  return aggregation == GpooAggregation::representatives ? representatives : 1;
}

// As a campaign file is refused: with {representatives: 4} and max_trials 2 a Study ran 2 trials of
// a round that never completed, and recommended nothing.
void GpooStrategy::check_trial_budget(std::size_t max_trials) const {
  if (options_.trials_per_round() > max_trials)
    throw std::invalid_argument("a gpoo round runs its " + std::to_string(options_.trials_per_round()) +
                                " representatives and tells their mean as one feedback, but the trial budget (" +
                                std::to_string(max_trials) +
                                ") is smaller, so no round would complete and gpoo would learn nothing; lower "
                                "representatives or raise the trial budget to a multiple of it");
}

GpooStrategy::GpooStrategy(GpooStrategyOptions options) : options_(std::move(options)) {
  check_fit_options(options_.fit, options_.refit);
  const auto& o = options_;
  if (o.representatives == 0)
    throw std::invalid_argument("strategy option 'representatives' must be >= 1 (S, the points of a cell whose "
                                "average is one feedback; 1 runs the cell's centre)");
  // A round's S trials are one observation whose covariance with another cell's is an S x S block of
  // kernel values: {representatives: 10000} took 2.3 s and 790 MB for the first ask, and 100000 died
  // with std::bad_alloc after the campaign was created, reported as a damaged state.yaml.
  if (o.representatives > GpooStrategyOptions::kMaxRepresentatives)
    throw std::invalid_argument("strategy option 'representatives' must be at most " +
                                std::to_string(GpooStrategyOptions::kMaxRepresentatives) +
                                " (S trials make one round, whose covariance with each cell is an S x S block; " +
                                "got " + std::to_string(o.representatives) +
                                "); for the average over a whole cell from one trial per round, use aggregation: cell");
  if (o.branching < 2)
    throw std::invalid_argument("strategy option 'branching' must be >= 2 (K, the children of an expanded cell)");
  if (o.max_depth > 60) throw std::invalid_argument("strategy option 'max_depth' must be at most 60 (0: 10 d)");
  if (!(o.beta_theta > 0.0 && o.beta_theta < 1.0))
    throw std::invalid_argument("strategy option 'beta_theta' must lie in (0, 1), e.g. 0.1");
  if (!(o.beta_scale > 0.0) || !std::isfinite(o.beta_scale))
    throw std::invalid_argument("strategy option 'beta_scale' must be a finite number > 0, e.g. 0.1");
  if (!(o.delta_c > 0.0) || !std::isfinite(o.delta_c))
    throw std::invalid_argument("strategy option 'delta_c' must be a finite number > 0, e.g. 14");
  if (!(o.delta_z > 0.0) || !std::isfinite(o.delta_z))
    throw std::invalid_argument("strategy option 'delta_z' must be a finite number > 0, e.g. 4.4");
}

GpHyperparameters GpooStrategy::hyperparameters(std::size_t dim) const {
  if (refit_.refresh_count > 0) return refit_.hyperparameters;
  return default_hyperparameters(options_.kernel, dim, 1, options_.fit);
}

GpooSearchOptions GpooStrategy::search_options(std::size_t dim) const {
  const GpHyperparameters hp = hyperparameters(dim);
  GpooSearchOptions s;
  s.aggregation = options_.aggregation;
  s.representatives = options_.representatives;
  s.branching = options_.branching;
  s.max_depth = options_.tree_depth(dim);
  s.beta = options_.beta;
  s.beta_theta = options_.beta_theta;
  s.beta_scale = options_.beta_scale;
  s.delta = options_.delta;
  s.delta_c = options_.delta_c;
  s.delta_z = options_.delta_z;
  s.kernel = hp.make_kernel();
  s.noise_variance = hp.noise_variances.at(0);
  s.variant = options_.variant;
  s.recommendation = options_.recommendation;
  return s;
}

bool GpooStrategy::round_complete(const Round& round, const std::vector<Trial>& trials) const {
  if (round.trials.size() < options_.trials_per_round()) return false;
  for (std::uint64_t id : round.trials) {
    const Trial& t = trial_by_id(trials, id);
    if (t.status != TrialStatus::complete || !t.value) return false;
  }
  return true;
}

std::optional<double> GpooStrategy::completed_reward(const Round& round, const StrategyContext& context) const {
  if (!round_complete(round, context.trials)) return std::nullopt;
  double sum = 0.0;
  for (std::uint64_t id : round.trials) sum += reward_of(*trial_by_id(context.trials, id).value, context.direction);
  return sum / static_cast<double>(round.trials.size());
}

// A round with a failed trial has no value, and never will: it stays as a fantasy, the posterior
// mean of its cell when it was first replayed. That mean could be anything the model's prior said:
// the first round, replayed before any result, got the raw reward 0 (a loss of 0, better than any
// run of a positive loss), and a cell whose runs all failed then held the best value. On a 1-D loss
// (x - 0.65)^2 that fails for x > 0.7, a gpoo campaign of S = 3 spent 8 of 18 trials in the
// failing region and recommended [0.75, 1] ("loss averages -0.17"). Capped at the completed
// rounds' median, as ei and ucb cap a failing configuration's fantasy, such a cell is no longer a
// lure, while one that failed by chance next to good ones keeps its (lower) mean.
std::optional<double> GpooStrategy::failed_round_cap(const StrategyContext& context) const {
  std::vector<double> rewards;
  for (const Round& r : rounds_)
    if (const std::optional<double> v = completed_reward(r, context)) rewards.push_back(*v);
  if (rewards.empty()) return std::nullopt;
  const auto mid = rewards.begin() + static_cast<std::ptrdiff_t>(rewards.size() / 2);
  std::nth_element(rewards.begin(), mid, rewards.end());
  if (rewards.size() % 2 == 1) return *mid;
  return 0.5 * (*mid + *std::max_element(rewards.begin(), mid));
}

double GpooStrategy::failed_value(const Round& round, double fantasy, const StrategyContext& context,
                                  const std::optional<double>& cap) const {
  if (!cap) return fantasy;
  for (std::uint64_t id : round.trials)
    if (trial_by_id(context.trials, id).status == TrialStatus::failed) return std::min(fantasy, *cap);
  return fantasy;
}

Observation GpooStrategy::observation_of(const PartitionTree& tree, NodeId node, double reward) const {
  Observation o;
  o.value = reward;
  if (options_.aggregation == GpooAggregation::cell) {
    o.query = BoxQuery{tree.node(node).lower, tree.node(node).upper};
  } else {
    const Eigen::MatrixXd reps = tree.representatives(node, options_.representatives);
    o.query = WeightedPointsQuery{reps, Eigen::VectorXd::Constant(reps.cols(), 1.0 / static_cast<double>(reps.cols()))};
  }
  return o;
}

Eigen::VectorXd GpooStrategy::trial_point(const PartitionTree& tree, NodeId node, std::size_t rep, std::size_t round,
                                          std::uint64_t seed) const {
  const PartitionNode& cell = tree.node(node);
  if (options_.aggregation == GpooAggregation::representatives)
    return tree.representatives(node, options_.representatives).col(static_cast<Eigen::Index>(rep));
  // A point drawn uniformly in the cell, from the study seed and the round number.
  Rng rng = make_rng(seed, RngStream::fallback, round);
  Eigen::VectorXd x(cell.lower.size());
  for (Eigen::Index k = 0; k < x.size(); ++k) x(k) = cell.lower(k) + uniform01(rng) * (cell.upper(k) - cell.lower(k));
  return x;
}

std::vector<GpooObservationRecord> GpooStrategy::decided_observations(const StrategyContext& context) const {
  std::vector<GpooObservationRecord> observations;
  observations.reserve(decided_);
  const std::optional<double> cap = failed_round_cap(context);
  for (std::size_t r = 0; r < decided_; ++r) {
    const std::optional<double> reward = completed_reward(rounds_[r], context);
    if (!reward && !rounds_[r].fantasy)
      throw StateError("gpoo round " + std::to_string(r) + " has neither a completed value nor a fantasy");
    observations.push_back(
        {rounds_[r].node, refit_.standardise(reward ? *reward : failed_value(rounds_[r], *rounds_[r].fantasy, context, cap))});
  }
  return observations;
}

GpooStrategy::CachedSearch GpooStrategy::decided_search(const StrategyContext& context, bool take_cache) const {
  const std::size_t d = context.space.dim();
  const std::vector<GpooObservationRecord> observations = decided_observations(context);
  std::vector<double> values(observations.size());
  for (std::size_t r = 0; r < values.size(); ++r) values[r] = observations[r].value;
  // The search kept from the last proposal serves while the kernel is the same; a round told a
  // fantasy and since completed only changes values (revalue), which a replay would redo from scratch.
  const bool cached = cache_ && cache_->refresh_count == refit_.refresh_count && cache_->values.size() == values.size();
  // Before the first round nothing is recorded, not even the expansion of the root that the `code`
  // variant's search makes as it is constructed (the dimension was not known before): a state saved
  // then is a new search, not a replay.
  const bool fresh = expand_sequence_.empty() && observations.empty();
  // A search of the old kernel is of no use to the proposal that replays under the new one: freed
  // first, the two do not coexist (they did: the peak of a refit was twice the model).
  if (take_cache && !cached) cache_.reset();
  // A replay for a caller that leaves the cache alone (a recommendation, search()) is kept: the first
  // use of a loaded study builds the search (its load does not), and later ones copy it.
  if (!take_cache && !cached && !fresh) {
    cache_.reset();
    cache_ = CachedSearch{GpooSearch::replay(d, search_options(d), observations, expand_sequence_), values,
                          refit_.refresh_count};
    return *cache_;
  }
  CachedSearch out{cached  ? (take_cache ? std::move(cache_->search) : cache_->search)
                   : fresh ? GpooSearch(d, search_options(d))
                           : GpooSearch::replay(d, search_options(d), observations, expand_sequence_),
                   std::move(values), refit_.refresh_count};
  if (cached && cache_->values != out.values) out.search.revalue(out.values);
  if (take_cache) cache_.reset();
  return out;
}

void GpooStrategy::tell_undecided(Built& b, const StrategyContext& context) const {
  const std::optional<double> cap = failed_round_cap(context);
  for (std::size_t r = decided_; r < rounds_.size(); ++r) {
    const std::optional<double> reward = completed_reward(rounds_[r], context);
    double value = 0.0;
    if (reward) {
      value = refit_.standardise(*reward);
      b.new_fantasies.emplace_back();
    } else {
      // A fantasy: the posterior mean leaves the mean where it is and shrinks the variance.
      value = b.search.posterior(rounds_[r].node).mean;
      const double raw = refit_.unstandardise(value);
      b.new_fantasies.emplace_back(raw);
      if (const double capped = failed_value(rounds_[r], raw, context, cap); capped != raw) value = refit_.standardise(capped);
    }
    b.search.tell(rounds_[r].node, value);
    b.values.push_back(value);
  }
}

GpooStrategy::Built GpooStrategy::build(const StrategyContext& context, bool take_cache) const {
  CachedSearch decided = decided_search(context, take_cache);
  Built b{std::move(decided.search), {}, std::move(decided.values)};
  tell_undecided(b, context);
  return b;
}

GpooSearch GpooStrategy::search(const StrategyContext& context) const { return build(context).search; }

void GpooStrategy::refresh_if_due(const StrategyContext& context) {
  std::vector<std::pair<NodeId, double>> complete;
  for (const Round& r : rounds_)
    if (const auto reward = completed_reward(r, context)) complete.emplace_back(r.node, *reward);
  if (!refit_.due(options_.refit, complete.size())) return;
  const std::size_t d = context.space.dim();
  const PartitionTree tree = PartitionTree::replay(
      d, PartitionTreeOptions{.split = SplitRule::longest_side, .branching = options_.branching}, expand_sequence_);
  std::vector<Observation> observations;
  for (const auto& [node, reward] : complete) observations.push_back(observation_of(tree, node, reward));
  refit_.refresh(observations, options_.kernel, d, options_.fit, true, 0.0, context.seed);
}

void GpooStrategy::drop_phantom_trials(std::size_t trial_count) {
  // A proposal the study did not turn into a trial (a cost budget stopped it) leaves an id that
  // does not exist; the next ask reuses it.
  while (!rounds_.empty()) {
    auto& ids = rounds_.back().trials;
    while (!ids.empty() && ids.back() >= trial_count) ids.pop_back();
    if (!ids.empty() || rounds_.size() <= decided_) break;
    rounds_.pop_back();
  }
}

ProposalResult GpooStrategy::propose(const StrategyContext& context) {
  drop_phantom_trials(context.trials.size());
  refresh_if_due(context);
  const std::size_t per_round = options_.trials_per_round();
  const std::uint64_t id = context.trials.size();

  // A round whose representatives are not all handed out yet gets the next one.
  if (!rounds_.empty() && rounds_.back().trials.size() < per_round) {
    Round& round = rounds_.back();
    const PartitionTree tree = PartitionTree::replay(
        context.space.dim(), PartitionTreeOptions{.split = SplitRule::longest_side, .branching = options_.branching},
        expand_sequence_);
    const Eigen::VectorXd unit =
        context.space.snap(trial_point(tree, round.node, round.trials.size(), rounds_.size() - 1, context.seed));
    // Only a pending twin waits (a failed one would stall the round for good; it reruns instead).
    if (coincides_with_pending(unit, context.trials))
      return {std::nullopt, "the next representative of the current cell coincides with a pending trial"};
    round.trials.push_back(id);
    return {Proposal{.unit = unit, .source = "gpoo", .in_model = true, .model_size = decided_}, {}};
  }

  Built b = build(context, true);
  for (std::size_t r = decided_; r < rounds_.size(); ++r)
    if (b.new_fantasies[r - decided_]) rounds_[r].fantasy = b.new_fantasies[r - decided_];
  expand_sequence_ = b.search.expand_sequence();
  decided_ = rounds_.size();
  const GpooSearch& s = b.search;
  const PartitionTree& tree = s.tree();
  const std::size_t round_index = rounds_.size();

  const auto point_of = [&](NodeId n) { return context.space.snap(trial_point(tree, n, 0, round_index, context.seed)); };
  NodeId chosen = s.next().node;
  Eigen::VectorXd unit = point_of(chosen);
  if (blocked(unit, context.trials)) {
    // The largest b-value among the leaves whose point is free (ties: lower depth, then label).
    chosen = no_node;
    double best_b = -std::numeric_limits<double>::infinity();
    for (NodeId leaf : tree.leaves()) {
      const double bv = s.b_value(leaf);
      if (chosen != no_node && !(bv > best_b || (bv == best_b && label_less(tree, leaf, chosen)))) continue;
      Eigen::VectorXd u = point_of(leaf);
      if (blocked(u, context.trials)) continue;
      chosen = leaf;
      best_b = bv;
      unit = std::move(u);
    }
    if (chosen == no_node)
      return {std::nullopt, "every leaf cell's point is pending or has failed; waiting for a pending trial"};
  }
  rounds_.push_back(Round{chosen, {id}, std::nullopt});
  Proposal proposal{.unit = unit, .source = "gpoo", .in_model = true, .model_size = s.rounds(),
                    .acquisition = s.b_value(chosen)};
  cache_ = CachedSearch{std::move(b.search), std::move(b.values), refit_.refresh_count};
  return {std::move(proposal), {}};
}

std::optional<Recommendation> GpooStrategy::recommend(const StrategyContext& context) const {
  // The search's rounds are rounds_, in order; those completed are the data.
  std::vector<char> completed(rounds_.size(), 0);
  bool any = false;
  for (std::size_t j = 0; j < rounds_.size(); ++j)
    any |= (completed[j] = completed_reward(rounds_[j], context) ? 1 : 0) != 0;
  if (!any) return std::nullopt;
  const GpooSearch s = build(context).search;
  const GpooRecommendation r = s.recommend();
  Recommendation out;
  out.unit = r.point;
  // f at the point: the exact GP over the completed rounds' aggregated observations (same kernel,
  // noise and standardisation), from the search's own factor without the rounds told a fantasy.
  // A GaussianProcess built here over every completed round was an O(n^3) factorisation at each
  // `tune status` (2 s at 3000 rounds) for the same posterior up to rounding.
  const GpooPosterior p = s.point_posterior(r.point, completed);
  const double scale = refit_.standardization.scale;
  out.mean = refit_.standardization.mean + scale * p.mean;
  out.sd = std::sqrt(std::max(0.0, scale * scale * p.variance));
  out.region = RecommendedRegion{r.lower, r.upper, refit_.unstandardise(r.mean), r.sd * refit_.standardization.scale};
  return out;
}

// ---- persistence ------------------------------------------------------------------------------

namespace {
using namespace option_fields;

template <class Options, class Visit>
void plain_fields(Options& o, Visit&& visit) {
  visit("representatives", o.representatives);
  visit("branching", o.branching);
  visit("max_depth", o.max_depth);
  visit("beta_theta", o.beta_theta);
  visit("beta_scale", o.beta_scale);
  visit("delta_c", o.delta_c);
  visit("delta_z", o.delta_z);
}
}  // namespace

YAML::Node to_yaml(const GpooStrategyOptions& o) {
  FieldWriter top{YAML::Node(YAML::NodeType::Map)};
  top.node["aggregation"] = to_string(o.aggregation);
  top.node["beta"] = to_string(o.beta);
  top.node["delta"] = to_string(o.delta);
  top.node["variant"] = to_string(o.variant);
  top.node["recommendation"] = to_string(o.recommendation);
  top.node["kernel"] = to_string(o.kernel);
  plain_fields(o, top);
  write_model_groups(top.node, o);
  return top.node;
}

GpooStrategyOptions gpoo_strategy_options_from_yaml(const YAML::Node& n) {
  GpooStrategyOptions o;
  if (!n || n.IsNull()) return o;
  if (!n.IsMap()) throw StateError("strategy options at " + position_of(n) + ": expected a map");
  if (n["aggregation"]) o.aggregation = parse_enum(n["aggregation"], "aggregation", gpoo_aggregation_from_string);
  if (n["beta"]) o.beta = parse_enum(n["beta"], "beta", gpoo_beta_from_string);
  if (n["delta"]) o.delta = parse_enum(n["delta"], "delta", gpoo_delta_from_string);
  if (n["variant"]) o.variant = parse_enum(n["variant"], "variant", gpoo_variant_from_string);
  if (n["recommendation"])
    o.recommendation = parse_enum(n["recommendation"], "recommendation", gpoo_recommendation_rule_from_string);
  if (n["kernel"]) o.kernel = parse_enum(n["kernel"], "kernel", kernel_type_from_string);
  FieldReader top{n, {"aggregation", "beta", "delta", "variant", "recommendation", "kernel", "refit", "fit"}};
  plain_fields(o, top);
  reject_unknown(n, top.known, "strategy options");
  read_model_groups(n, o);
  return o;
}

YAML::Node GpooStrategy::save() const {
  YAML::Node node;
  node["name"] = name();
  node["options"] = to_yaml(options_);
  YAML::Node state;
  YAML::Node rounds(YAML::NodeType::Sequence);
  for (const Round& r : rounds_) {
    YAML::Node round;
    round.SetStyle(YAML::EmitterStyle::Flow);
    round["node"] = r.node;
    YAML::Node trials(YAML::NodeType::Sequence);
    for (std::uint64_t id : r.trials) trials.push_back(id);
    round["trials"] = trials;
    if (r.fantasy) round["fantasy"] = yaml_double(*r.fantasy);
    rounds.push_back(round);
  }
  state["rounds"] = rounds;
  YAML::Node sequence(YAML::NodeType::Sequence);
  sequence.SetStyle(YAML::EmitterStyle::Flow);
  for (NodeId n : expand_sequence_) sequence.push_back(n);
  state["expand_sequence"] = sequence;
  state["decided"] = decided_;
  refit_.write(state);
  node["state"] = state;
  return node;
}

void GpooStrategy::restore(const YAML::Node& node, const StrategyContext& context) {
  const YAML::Node state = require(node, "state");
  cache_.reset();
  rounds_.clear();
  const YAML::Node rounds = require(state, "rounds");
  if (!rounds.IsSequence()) throw StateError("field 'rounds' at " + position_of(rounds) + ": expected a list");
  std::set<std::uint64_t> seen;
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    Round r;
    r.node = static_cast<NodeId>(read_uint(require(rounds[i], "node"), "rounds.node"));
    const YAML::Node trials = require(rounds[i], "trials");
    if (!trials.IsSequence()) throw StateError("field 'rounds.trials' at " + position_of(trials) + ": expected a list");
    for (std::size_t k = 0; k < trials.size(); ++k) {
      const std::uint64_t id = read_uint(trials[k], "rounds.trials");
      if (id >= context.trials.size() && i + 1 == rounds.size()) continue;  // a proposal the study dropped
      trial_by_id(context.trials, id);
      if (!seen.insert(id).second)
        throw StateError("rounds at " + position_of(trials[k]) + ": trial " + std::to_string(id) + " is listed twice");
      r.trials.push_back(id);
    }
    if (r.trials.size() > options_.trials_per_round())
      throw StateError("rounds at " + position_of(rounds[i]) + ": more trials than a round holds");
    if (rounds[i]["fantasy"]) r.fantasy = read_double(rounds[i]["fantasy"], "rounds.fantasy");
    rounds_.push_back(std::move(r));
  }
  expand_sequence_.clear();
  const YAML::Node sequence = require(state, "expand_sequence");
  if (!sequence.IsSequence()) throw StateError("field 'expand_sequence' at " + position_of(sequence) + ": expected a list");
  for (std::size_t i = 0; i < sequence.size(); ++i)
    expand_sequence_.push_back(static_cast<NodeId>(read_uint(sequence[i], "expand_sequence")));
  decided_ = read_uint(require(state, "decided"), "decided");
  if (decided_ > rounds_.size())
    throw StateError("field 'decided' at " + position_of(state["decided"]) + ": more than the rounds listed");
  refit_.read(state);
  try {
    // Every node, expansion and fantasy must fit together; checked on the tree alone. The search is
    // built at its first use (an ask, a recommendation): replaying every round here cost `tune
    // status` and `tune tell`, which use no model, ~4-6 s of CPU at 3000 rounds.
    const std::size_t d = context.space.dim();
    const std::vector<GpooObservationRecord> observations = decided_observations(context);
    const GpooSearch empty(d, search_options(d));  // the options (the fitted kernel) are valid
    if (!(expand_sequence_.empty() && observations.empty()))
      GpooSearch::check_replay(d, search_options(d), observations, expand_sequence_);
    if (decided_ + 1 == rounds_.size()) {
      // The round the last proposal made, chosen among the decided search's leaves.
      const PartitionTree tree = PartitionTree::replay(
          d, PartitionTreeOptions{.split = SplitRule::longest_side, .branching = options_.branching}, expand_sequence_);
      const NodeId undecided = rounds_.back().node;
      if (undecided >= tree.size() || !tree.node(undecided).is_leaf())
        throw std::invalid_argument("GPOO tell: node " + std::to_string(undecided) + " is not a current leaf");
    } else if (decided_ < rounds_.size()) {
      // More undecided rounds than a proposal leaves: whether each is a leaf depends on the expansions
      // the ones before it decide, so the search is built to tell.
      CachedSearch decided = decided_search(context, false);
      Built b{decided.search, {}, decided.values};
      tell_undecided(b, context);
    }
  } catch (const std::exception& e) {
    throw StateError("gpoo state at " + position_of(state) + ": the rounds do not replay (" + e.what() + ")");
  }
}

}  // namespace tune
