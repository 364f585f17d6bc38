#include "tune/strategy/bnb_strategy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "tune/io/yaml_values.hpp"
#include "tune/strategy/gp_state_yaml.hpp"
#include "tune/strategy/option_fields.hpp"

namespace tune {

std::size_t BnbStrategyOptions::lattice_level(std::size_t dim) const {
  if (max_level > 0) return max_level;
  // The finest lattice's (2^m + 1)^d points must be indexable in 63 bits (BranchAndBound).
  std::size_t m = 10;
  while (m > 1 && static_cast<double>(dim) * std::log2(std::ldexp(1.0, static_cast<int>(m)) + 1.0) >= 63.0) --m;
  return m;
}

BnbStrategy::BnbStrategy(BnbStrategyOptions options) : options_(std::move(options)) {
  check_fit_options(options_.fit, options_.refit);
  const auto& o = options_;
  if (o.max_level > 30)
    throw std::invalid_argument("strategy option 'max_level' must be at most 30 (the finest lattice has spacing "
                                "2^-max_level; 0 chooses up to 10)");
  if (!(o.alpha > 0.0 && o.alpha < 1.0))
    throw std::invalid_argument("strategy option 'alpha' must lie in (0, 1), e.g. 0.05");
  if (!(o.beta_scale > 0.0) || !std::isfinite(o.beta_scale))
    throw std::invalid_argument("strategy option 'beta_scale' must be a finite number > 0 (1 is the thesis's beta)");
  if (!(o.jitter > 0.0) || !std::isfinite(o.jitter))
    throw std::invalid_argument("strategy option 'jitter' must be a finite number > 0, e.g. 1e-10");
}

void BnbStrategy::check_space(const Space& space) const {
  const std::size_t dim = space.dim();
  if (dim > BranchAndBound::kMaxDim)
    throw std::invalid_argument("strategy bnb searches at most " + std::to_string(BranchAndBound::kMaxDim) +
                                " parameters (its lattice refines every one at once); this space has " +
                                std::to_string(dim) + ": use ei or ucb, or fix some parameters");
  const double bits = static_cast<double>(dim) *
                      std::log2(std::ldexp(1.0, static_cast<int>(options_.lattice_level(dim))) + 1.0);
  if (bits >= 63.0)
    throw std::invalid_argument("strategy option 'max_level' " + std::to_string(options_.max_level) + " makes a lattice of (2^" +
                                std::to_string(options_.max_level) + " + 1)^" + std::to_string(dim) +
                                " points, too many to index; lower it or leave it at 0 (chosen for the space)");
}

BranchAndBoundOptions BnbStrategy::search_options(std::size_t dim) const {
  // The search starts under the default kernel and is rebased at every refit (history_); a state
  // saved before the history existed replays under the current kernel, as it was made.
  const GpHyperparameters hp = history_.empty() && refit_.refresh_count > 0
                                   ? refit_.hyperparameters
                                   : default_hyperparameters(options_.kernel, dim, 1, options_.fit);
  BranchAndBoundOptions o;
  o.dim = dim;
  o.max_level = options_.lattice_level(dim);
  o.alpha = options_.alpha;
  o.beta_scale = options_.beta_scale;
  o.round_cap = options_.round_cap;
  o.candidate_cap = options_.candidate_cap;
  o.kernel = hp.make_kernel();
  o.jitter = options_.jitter;
  return o;
}

double BnbStrategy::raw_reward(const StrategyContext& context, std::uint64_t id) const {
  const Trial& t = trial_by_id(context.trials, id);
  if (t.status != TrialStatus::complete || !t.value)
    throw StateError("bnb state tells the value of trial " + std::to_string(id) + ", which is not complete");
  return reward_of(*t.value, context.direction);
}

double BnbStrategy::value_of(const StrategyContext& context, std::uint64_t id) const {
  return refit_.standardise(raw_reward(context, id));
}

void BnbStrategy::rebase(BranchAndBound& search, const StrategyContext& context, const Refit& refit) const {
  std::vector<double> values;
  values.reserve(search.samples());
  for (std::size_t i = 0; i < search.samples(); ++i)
    values.push_back(refit.standardise(raw_reward(context, records_[i].trial)));
  search.rebase(refit.hyperparameters.make_kernel(), values);
}

void BnbStrategy::rebuild(const StrategyContext& context) {
  // Replays the tells with the refits where they happened: the same arithmetic as the live search.
  BranchAndBound b(search_options(context.space.dim()));
  // Before the first refit the values were told raw (the default standardisation, no floor).
  Refit current;
  if (history_.empty()) {
    current.standardization = refit_.standardization;
    current.floor = refit_.floor;
  }
  std::size_t h = 0;
  const auto apply_due = [&](std::size_t told) {
    for (; h < history_.size() && history_[h].at == told; ++h) {
      current = history_[h];
      rebase(b, context, history_[h]);
    }
  };
  for (std::size_t j = 0; j < records_.size(); ++j) {
    apply_due(j);
    b.tell(records_[j].point, current.standardise(raw_reward(context, records_[j].trial)));
  }
  apply_due(records_.size());
  if (h != history_.size()) throw StateError("bnb state: a refit after the last record");
  search_.emplace(std::move(b));
}

void BnbStrategy::refresh_if_due(const StrategyContext& context) {
  std::vector<Observation> observations;
  for (const auto& [id, point] : points_) {
    const Trial& t = context.trials[id];
    if (t.status == TrialStatus::complete && t.value) {
      // Built in place (see BranchAndBound::rebase).
      Observation& o = observations.emplace_back();
      o.query = PointQuery{point};
      o.value = reward_of(*t.value, context.direction);
    }
  }
  if (!refit_.due(options_.refit, observations.size())) return;
  refit_.refresh(observations, options_.kernel, context.space.dim(), options_.fit, false, options_.fit.noise_min,
                 context.seed);
  // The search keeps its lattice state and takes the new kernel and standardisation (no replay).
  history_.push_back({records_.size(), refit_.hyperparameters, refit_.standardization, refit_.floor});
  if (search_) rebase(*search_, context, history_.back());
  else rebuild(context);
}

namespace {
void tell_fantasy(BranchAndBound& b, const Eigen::VectorXd& x) { b.tell(x, b.model().predict(x).mean); }
}  // namespace

std::optional<BranchAndBound> BnbStrategy::search_as_asked(const std::vector<Trial>& trials) const {
  if (!search_) return std::nullopt;
  BranchAndBound copy = *search_;
  for (const Trial& t : trials)
    if (t.status != TrialStatus::complete)
      if (auto it = points_.find(t.id); it != points_.end() && !copy.sampled(it->second)) tell_fantasy(copy, it->second);
  return copy;
}

bool results_differ(double a, double b, double spread) {
  const double scale = std::max({std::abs(a), std::abs(b), std::abs(spread)});
  return std::abs(a - b) > 1e-9 * scale;
}

std::string RepeatCheck::describe() const {
  char text[512];
  const auto ids = [&] { return "trial " + std::to_string(repeat) + " re-ran trial " + std::to_string(original) + "'s configuration"; };
  switch (outcome) {
    case Outcome::different:
      std::snprintf(text, sizeof text,
                    "%s and got %.6g against %.6g: the objective is not deterministic, as bnb assumes, so its best is "
                    "likely a lucky draw and what it pruned was pruned on noise; use ei or ucb for a noisy objective",
                    ids().c_str(), second, first);
      return text;
    case Outcome::same:
      std::snprintf(text, sizeof text, "%s and got the same value (%.6g): deterministic, as bnb assumes", ids().c_str(),
                    second);
      return text;
    case Outcome::failed:
      return "trial " + std::to_string(repeat) + ", a re-run of trial " + std::to_string(original) +
             "'s configuration, failed: whether the objective is deterministic is not known";
    case Outcome::pending:
      break;
  }
  return "trial " + std::to_string(repeat) + " re-runs trial " + std::to_string(original) +
         "'s configuration to check that the objective is deterministic";
}

std::optional<std::string> BnbStrategy::warning(const std::vector<Trial>& trials) const {
  const std::optional<RepeatCheck> check = repeat_check(trials);
  if (!check || check->outcome != RepeatCheck::Outcome::different) return std::nullopt;
  return check->describe();
}

std::optional<RepeatCheck> BnbStrategy::repeat_check(const std::vector<Trial>& trials) const {
  if (!repeat_ || repeat_->trial >= trials.size() || repeat_->original >= trials.size()) return std::nullopt;
  RepeatCheck c;
  c.original = repeat_->original;
  c.repeat = repeat_->trial;
  const Trial& first = trials[c.original];
  const Trial& second = trials[c.repeat];
  if (second.status == TrialStatus::failed) {
    c.outcome = RepeatCheck::Outcome::failed;
  } else if (second.status == TrialStatus::complete && second.value && first.value) {
    c.first = *first.value;
    c.second = *second.value;
    c.outcome = results_differ(c.first, c.second, refit_.standardization.scale) ? RepeatCheck::Outcome::different
                                                                              : RepeatCheck::Outcome::same;
  }
  return c;
}

std::optional<Proposal> BnbStrategy::propose_repeat(const StrategyContext& context, bool stopping) {
  if (repeat_ || options_.repeat_best_after == 0 || !search_) return std::nullopt;
  const auto completed = std::count_if(points_.begin(), points_.end(), [&](const auto& entry) {
    const Trial& t = context.trials[entry.first];
    return t.status == TrialStatus::complete && t.value;
  });
  if (!stopping && static_cast<std::size_t>(completed) < options_.repeat_best_after) return std::nullopt;
  const std::optional<BranchAndBoundRecord> best = search_->best();
  if (!best) return std::nullopt;
  const auto record = std::find_if(records_.begin(), records_.end(), [&](const Record& r) { return r.point == best->point; });
  if (record == records_.end()) return std::nullopt;
  const Trial& original = trial_by_id(context.trials, record->trial);
  repeat_ = Repeat{original.id, context.trials.size()};
  return Proposal{.unit = original.unit,
                  .source = "bnb: a re-run of trial " + std::to_string(original.id) +
                            " (is the objective deterministic?)",
                  .in_model = false,
                  .model_size = search_->samples()};
}

ProposalResult BnbStrategy::propose(const StrategyContext& context) {
  // A proposal the study did not turn into a trial (a cost budget stopped it) leaves an id that
  // does not exist; the next ask reuses it.
  points_.erase(points_.lower_bound(context.trials.size()), points_.end());
  if (repeat_ && repeat_->trial >= context.trials.size()) repeat_.reset();
  if (!search_) rebuild(context);
  refresh_if_due(context);
  if (std::optional<Proposal> repeat = propose_repeat(context, false)) return {std::move(repeat), {}};
  BranchAndBound copy = *search_as_asked(context.trials);

  for (std::size_t step = 0; step < 1000000; ++step) {
    const std::optional<Eigen::VectorXd> p = copy.next();
    if (!p) {
      // Before it stops, the check the user is about to rely on.
      if (std::optional<Proposal> repeat = propose_repeat(context, true)) return {std::move(repeat), {}};
      std::string reason = "branch and bound has converged: every point of the relevant set on the finest lattice "
                           "(spacing 2^-" + std::to_string(search_->options().max_level) + ") is sampled";
      if (const std::optional<std::string> disagreed = warning(context.trials)) reason += "; but " + *disagreed;
      return {std::nullopt, reason};
    }
    const Eigen::VectorXd unit = context.space.snap(*p);
    const Trial* same = nullptr;
    for (const Trial& t : context.trials)
      if (t.unit.size() == unit.size() && t.unit == unit && (!same || t.status == TrialStatus::complete)) same = &t;
    if (same && same->status == TrialStatus::complete) {
      // The objective is deterministic: this configuration's value is known.
      const double v = value_of(context, same->id);
      copy.tell(*p, v);
      search_->tell(*p, v);
      records_.push_back({*p, same->id});
      continue;
    }
    if (same) {  // pending or failed
      tell_fantasy(copy, *p);
      continue;
    }
    points_[context.trials.size()] = *p;
    return {Proposal{.unit = unit, .source = "bnb", .in_model = true, .model_size = search_->samples()}, {}};
  }
  return {std::nullopt, "branch and bound found no configuration that is neither evaluated nor pending"};
}

void BnbStrategy::on_complete(const StrategyContext& context, const Trial& trial) {
  const auto it = points_.find(trial.id);
  if (it == points_.end() || !trial.value) return;
  if (!search_) rebuild(context);
  if (search_->sampled(it->second)) return;
  records_.push_back({it->second, trial.id});
  search_->tell(it->second, value_of(context, trial.id));
}

std::optional<Recommendation> BnbStrategy::recommend(const StrategyContext& context) const {
  (void)context;
  if (!search_) return std::nullopt;
  const std::optional<BranchAndBoundRecord> best = search_->best();
  if (!best) return std::nullopt;
  Recommendation r;
  r.unit = best->point;
  r.mean = refit_.unstandardise(best->value);
  r.sd = std::sqrt(std::max(0.0, search_->model().predict(best->point).variance)) * refit_.standardization.scale;
  return r;
}

// ---- persistence ------------------------------------------------------------------------------

namespace {
using namespace option_fields;

template <class Options, class Visit>
void plain_fields(Options& o, Visit&& visit) {
  visit("max_level", o.max_level);
  visit("alpha", o.alpha);
  visit("beta_scale", o.beta_scale);
  visit("round_cap", o.round_cap);
  visit("candidate_cap", o.candidate_cap);
  visit("jitter", o.jitter);
  visit("repeat_best_after", o.repeat_best_after);
}
}  // namespace

YAML::Node to_yaml(const BnbStrategyOptions& o) {
  FieldWriter top{YAML::Node(YAML::NodeType::Map)};
  top.node["kernel"] = to_string(o.kernel);
  plain_fields(o, top);
  write_model_groups(top.node, o);
  return top.node;
}

BnbStrategyOptions bnb_strategy_options_from_yaml(const YAML::Node& n) {
  BnbStrategyOptions o;
  if (!n || n.IsNull()) return o;
  if (!n.IsMap()) throw StateError("strategy options at " + position_of(n) + ": expected a map");
  if (n["kernel"]) o.kernel = parse_enum(n["kernel"], "kernel", kernel_type_from_string);
  FieldReader top{n, {"kernel", "refit", "fit"}};
  plain_fields(o, top);
  reject_unknown(n, top.known, "strategy options");
  read_model_groups(n, o);
  return o;
}

YAML::Node BnbStrategy::save() const {
  YAML::Node node;
  node["name"] = name();
  node["options"] = to_yaml(options_);
  YAML::Node state;
  YAML::Node points(YAML::NodeType::Sequence), records(YAML::NodeType::Sequence);
  for (const auto& [id, point] : points_) {
    YAML::Node p;
    p.SetStyle(YAML::EmitterStyle::Flow);
    p["trial"] = id;
    p["point"] = yaml_vector(point);
    points.push_back(p);
  }
  for (const Record& r : records_) {
    YAML::Node p;
    p.SetStyle(YAML::EmitterStyle::Flow);
    p["point"] = yaml_vector(r.point);
    p["trial"] = r.trial;
    records.push_back(p);
  }
  state["points"] = points;
  state["records"] = records;
  YAML::Node refits(YAML::NodeType::Sequence);
  for (const Refit& r : history_) {
    YAML::Node n;
    n["at"] = r.at;
    write_gp_state(n, r.hyperparameters, r.standardization);
    if (r.floor.exists()) n["value_floor"] = value_floor_yaml(r.floor);
    refits.push_back(n);
  }
  state["refits"] = refits;
  refit_.write(state);
  if (repeat_) {
    YAML::Node r;
    r.SetStyle(YAML::EmitterStyle::Flow);
    r["original"] = repeat_->original;
    r["trial"] = repeat_->trial;
    state["repeat"] = r;
  }
  node["state"] = state;
  return node;
}

void BnbStrategy::restore(const YAML::Node& node, const StrategyContext& context) {
  const YAML::Node state = require(node, "state");
  points_.clear();
  records_.clear();
  history_.clear();
  search_.reset();
  repeat_.reset();
  const YAML::Node points = require(state, "points");
  const YAML::Node records = require(state, "records");
  if (!points.IsSequence()) throw StateError("field 'points' at " + position_of(points) + ": expected a list");
  if (!records.IsSequence()) throw StateError("field 'records' at " + position_of(records) + ": expected a list");
  const auto read_point = [&](const YAML::Node& n, const char* field) {
    Eigen::VectorXd x = read_vector(require(n, "point"), field);
    if (static_cast<std::size_t>(x.size()) != context.space.dim())
      throw StateError(std::string("field '") + field + "' at " + position_of(n) + ": a point of the wrong dimension");
    return x;
  };
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::uint64_t id = read_uint(require(points[i], "trial"), "points.trial");
    if (id >= context.trials.size()) continue;  // a proposal the study dropped
    points_[id] = read_point(points[i], "points.point");
  }
  for (std::size_t i = 0; i < records.size(); ++i)
    records_.push_back({read_point(records[i], "records.point"), read_uint(require(records[i], "trial"), "records.trial")});
  refit_.read(state);
  if (const YAML::Node r = state["repeat"]) {  // absent before the first re-run, and in older states
    const Repeat repeat{read_uint(require(r, "original"), "repeat.original"), read_uint(require(r, "trial"), "repeat.trial")};
    if (repeat.original >= repeat.trial || repeat.original >= context.trials.size())
      throw StateError("field 'repeat' at " + position_of(r) + ": the re-run must come after the trial it repeats, "
                       "which must exist; delete the field to let bnb re-run its best again");
    if (repeat.trial < context.trials.size()) repeat_ = repeat;  // else a proposal the study dropped
  }
  if (const YAML::Node refits = state["refits"]) {  // absent in states saved before the refit history
    if (!refits.IsSequence()) throw StateError("field 'refits' at " + position_of(refits) + ": expected a list");
    for (std::size_t i = 0; i < refits.size(); ++i) {
      Refit r;
      r.at = read_uint(require(refits[i], "at"), "refits.at");
      const YAML::Node hp = read_gp_state(refits[i], r.hyperparameters, r.standardization);
      if (const YAML::Node f = refits[i]["value_floor"]) r.floor = read_value_floor(f, "refits.value_floor");
      if ((i > 0 && r.at < history_.back().at) || r.at > records_.size() || !(r.standardization.scale > 0.0) ||
          static_cast<std::size_t>(r.hyperparameters.lengthscales.size()) != context.space.dim())
        throw StateError("field 'refits' at " + position_of(refits[i]) + ": a refit out of order, after the last "
                         "record, or with a model that cannot be used (" + position_of(hp) + ")");
      history_.push_back(std::move(r));
    }
  }
  try {
    rebuild(context);
  } catch (const std::invalid_argument& e) {
    throw StateError("bnb state at " + position_of(state) + ": the records do not replay (" + e.what() + ")");
  }
}

}  // namespace tune
