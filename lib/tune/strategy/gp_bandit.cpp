#include "tune/strategy/gp_bandit.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "tune/io/yaml_values.hpp"
#include "tune/space/sampling.hpp"
#include "tune/strategy/random_strategy.hpp"

namespace tune {

double GpBanditOptions::effective_epsilon() const {
  if (horizon > 0.0 && schedule_alpha > 0.0) return epsilon_schedule(horizon, schedule_alpha);
  return epsilon;
}

std::size_t GpBanditOptions::initial_design_size(std::size_t dim) const {
  if (initial_design > 0) return initial_design;
  return std::min<std::size_t>(2 * dim + 1, 20);
}

GpBandit::GpBandit(GpBanditOptions options) : options_(std::move(options)) {
  if (options_.epsilon < 0.0 || !std::isfinite(options_.epsilon))
    throw std::invalid_argument("strategy option 'epsilon' must be a finite number >= 0 (0 = exact GP)");
  if (options_.horizon < 0.0 || options_.schedule_alpha < 0.0)
    throw std::invalid_argument("strategy options 'horizon' and 'schedule_alpha' must be >= 0");
  if (!(options_.delta > 0.0 && options_.delta < 1.0))
    throw std::invalid_argument("strategy option 'delta' must lie in (0, 1)");
  if (!(options_.beta_scale > 0.0)) throw std::invalid_argument("strategy option 'beta_scale' must be > 0");
  if (!options_.fit_hyperparameters && !options_.hyperparameters)
    throw std::invalid_argument("fit_hyperparameters is false but no hyperparameters were given");
}

Observation GpBandit::observation_of(const Trial& trial, Direction direction) const {
  return Observation{PointQuery{trial.unit}, reward_of(*trial.value, direction), 0};
}

namespace {
const Trial& trial_by_id(const std::vector<Trial>& trials, std::uint64_t id) {
  if (id >= trials.size() || trials[id].id != id)
    throw StateError("strategy state refers to trial " + std::to_string(id) + ", which the study does not hold");
  return trials[id];
}
}  // namespace

ProposalResult GpBandit::propose(const StrategyContext& context) {
  const std::size_t n_init = options_.initial_design_size(context.space.dim());
  if (design_index_ < n_init || dictionary_.size() < 2) {
    for (int attempt = 0; attempt < 1000; ++attempt) {
      Eigen::VectorXd u = shifted_sobol_point(context.space, context.seed, RngStream::initial_design, design_index_++);
      if (coincides_with_pending(u, context.trials)) continue;
      return {Proposal{.unit = u, .source = "initial_design", .in_model = true, .model_size = dictionary_.size()}, {}};
    }
    return {std::nullopt, "every point of the space is pending"};
  }
  return propose_from_model(context);
}

void GpBandit::refresh_if_due(const StrategyContext& context) {
  const std::size_t n = dictionary_.size();
  if (model_) {
    const RefitSchedule& s = options_.refit;
    if (s.every == 0 && s.growth <= 0.0) return;
    const auto by_growth = static_cast<std::size_t>(std::ceil(s.growth * static_cast<double>(n)));
    if (n - size_at_refresh_ < std::max<std::size_t>({s.every, by_growth, 1})) return;
  }
  std::vector<Observation> observations;
  observations.reserve(n);
  for (std::uint64_t id : dictionary_) observations.push_back(observation_of(trial_by_id(context.trials, id), context.direction));
  if (refresh_count_ == 0)
    hyperparameters_ = options_.hyperparameters
                           ? *options_.hyperparameters
                           : default_hyperparameters(options_.kernel, context.space.dim(), 1, options_.fit);
  standardization_ = options_.standardize ? standardization_of(observations) : Standardization{};
  if (options_.fit_hyperparameters) {
    Rng rng = make_rng(context.seed, RngStream::hyperparameter_fit, refresh_count_);
    hyperparameters_ = fit_hyperparameters(observations, standardization_, hyperparameters_, options_.fit, rng).hyperparameters;
  }
  model_.emplace(context.space.dim(), hyperparameters_, standardization_);
  model_->add(std::move(observations));
  model_->track(candidate_set(context.space, context.seed, refresh_count_));
  ++refresh_count_;
  size_at_refresh_ = n;
}

Eigen::MatrixXd GpBandit::candidate_set(const Space& space, std::uint64_t seed, std::size_t refresh) const {
  // A fresh shifted Sobol set per refresh, tracked by the model until the next one.
  const AcquisitionOptimizerOptions& o = options_.optimizer;
  const std::size_t n_total = o.candidate_count(space.dim());
  const auto n_local = static_cast<std::size_t>(o.perturbation_fraction * static_cast<double>(n_total));
  Rng rng = make_rng(seed, RngStream::candidates, refresh);
  Eigen::MatrixXd X = sobol_points(space.dim(), n_total - n_local, rng);
  for (Eigen::Index j = 0; j < X.cols(); ++j) X.col(j) = space.snap(X.col(j));
  return X;
}

ProposalResult GpBandit::propose_from_model(const StrategyContext& context) {
  refresh_if_due(context);
  GaussianProcess& gp = *model_;
  const std::size_t n_model = gp.size();

  // Best retained rewards: the EI incumbent and the anchors of local candidates.
  std::vector<std::size_t> order(n_model);
  for (std::size_t i = 0; i < n_model; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return gp.observations()[a].value > gp.observations()[b].value;
  });
  std::vector<Eigen::VectorXd> anchors;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, n_model); ++i)
    anchors.push_back(location(gp.observations()[order[i]].query));

  std::vector<Observation> fantasies;
  for (const Trial& t : context.trials)
    if (t.status == TrialStatus::pending || t.status == TrialStatus::failed)
      fantasies.push_back(Observation{PointQuery{t.unit}, gp.predict(t.unit).mean, 0});
  for (Observation& f : fantasies) {
    f.value = gp.predict(location(f.query)).mean;  // mean given earlier fantasies: unchanged, kept exact
    gp.add(f);
  }
  struct DropFantasies {
    GaussianProcess& gp;
    std::size_t n;
    ~DropFantasies() { gp.truncate(n); }
  } drop{gp, n_model};

  Acquisition acquisition;
  acquisition.type = options_.acquisition;
  acquisition.incumbent = n_model > 0 ? gp.observations()[order[0]].value : 0.0;
  const std::size_t n_candidates = options_.optimizer.candidate_count(context.space.dim());
  const double epsilon = options_.effective_epsilon();
  const double noise = gp.noise_variance(0);
  const double rho = variance_ratio_threshold(epsilon);
  const SnapFunction snap = [&](const Eigen::VectorXd& x) { return context.space.snap(x); };

  for (std::size_t attempt = 0;; ++attempt) {
    const std::size_t t = context.trials.size() + skipped_.size() + 1;
    acquisition.sqrt_beta = std::sqrt(ucb_beta(t, n_candidates, options_.delta, options_.beta_scale));
    Rng rng(mix64(derive_seed(context.seed, RngStream::acquisition, context.ask_index) ^ attempt));
    const std::vector<ScoredPoint> ranked = rank_acquisition(gp, acquisition, snap, anchors, options_.optimizer, rng);
    auto first_free = std::find_if(ranked.begin(), ranked.end(),
                                   [&](const ScoredPoint& p) { return !coincides_with_pending(p.x, context.trials); });
    if (first_free == ranked.end()) return {std::nullopt, "every candidate point is already pending"};
    const InformationTest test = information_test(gp.predict(first_free->x).variance, noise, epsilon);
    Proposal proposal{.unit = first_free->x, .source = "acquisition", .in_model = true,
                      .test_statistic = test.statistic, .model_size = dictionary_.size(),
                      .acquisition = first_free->score};
    if (test.accepted) return {proposal, {}};

    std::ostringstream why;
    why << "information threshold reached: the best suggestion has posterior variance / noise = "
        << test.statistic << " <= exp(2 eps) - 1 = " << rho << " (eps = " << epsilon << ")";
    switch (options_.on_reject) {
      case RejectPolicy::evaluate_no_add:
        proposal.in_model = false;
        return {proposal, {}};
      case RejectPolicy::stop:
        return {std::nullopt, why.str()};
      case RejectPolicy::next_informative:
        for (auto it = first_free; it != ranked.end(); ++it) {
          if (!(it->variance / noise > rho) || coincides_with_pending(it->x, context.trials)) continue;
          const InformationTest t2 = information_test(gp.predict(it->x).variance, noise, epsilon);
          if (!t2.accepted) continue;
          proposal.unit = it->x;
          proposal.test_statistic = t2.statistic;
          proposal.acquisition = it->score;
          return {proposal, {}};
        }
        return {std::nullopt, "converged: no candidate passes the information threshold (" + why.str() + ")"};
      case RejectPolicy::literal:
        skipped_.push_back({context.ask_index, first_free->x, test.statistic});
        if (attempt + 1 >= options_.max_skipped_steps)
          return {std::nullopt, "converged: " + std::to_string(attempt + 1) +
                                    " consecutive suggestions failed the information test (" + why.str() + ")"};
        continue;
    }
  }
}

void GpBandit::on_complete(const StrategyContext& context, const Trial& trial) {
  if (!trial.in_model || !trial.value) return;
  dictionary_.push_back(trial.id);
  if (model_) model_->add(observation_of(trial, context.direction));  // incremental between refreshes
}

YAML::Node GpBandit::save() const {
  YAML::Node node;
  node["name"] = name();
  node["options"] = to_yaml(options_);
  YAML::Node state;
  YAML::Node dictionary(YAML::NodeType::Sequence);
  dictionary.SetStyle(YAML::EmitterStyle::Flow);
  for (std::uint64_t id : dictionary_) dictionary.push_back(id);
  state["dictionary"] = dictionary;
  state["design_index"] = design_index_;
  state["refresh_count"] = refresh_count_;
  state["size_at_refresh"] = size_at_refresh_;
  if (refresh_count_ > 0) {
    YAML::Node hp;
    hp["kernel"] = to_string(hyperparameters_.kernel);
    hp["lengthscales"] = yaml_vector(hyperparameters_.lengthscales);
    hp["outputscale"] = yaml_double(hyperparameters_.outputscale);
    hp["noise_variances"] = yaml_vector(Eigen::Map<const Eigen::VectorXd>(
        hyperparameters_.noise_variances.data(), static_cast<Eigen::Index>(hyperparameters_.noise_variances.size())));
    state["hyperparameters"] = hp;
    state["standardization"]["mean"] = yaml_double(standardization_.mean);
    state["standardization"]["scale"] = yaml_double(standardization_.scale);
  }
  YAML::Node skipped(YAML::NodeType::Sequence);
  for (const SkippedStep& s : skipped_) {
    YAML::Node step;
    step["ask"] = s.ask_index;
    step["unit"] = yaml_vector(s.unit);
    step["test_statistic"] = yaml_double(s.test_statistic);
    skipped.push_back(step);
  }
  state["skipped_steps"] = skipped;
  node["state"] = state;
  return node;
}

void GpBandit::restore(const YAML::Node& node, const StrategyContext& context) {
  const YAML::Node state = require(node, "state");
  dictionary_.clear();
  const YAML::Node dictionary = require(state, "dictionary");
  if (!dictionary.IsSequence()) throw StateError("field 'dictionary' at " + position_of(dictionary) + ": expected a list of trial ids");
  for (std::size_t i = 0; i < dictionary.size(); ++i) {
    const std::uint64_t id = read_uint(dictionary[i], "dictionary");
    const Trial& t = trial_by_id(context.trials, id);
    if (t.status != TrialStatus::complete || !t.in_model)
      throw StateError("dictionary at " + position_of(dictionary[i]) + ": trial " + std::to_string(id) +
                       " is in the model but is not a completed in-model trial");
    dictionary_.push_back(id);
  }
  design_index_ = read_uint(require(state, "design_index"), "design_index");
  refresh_count_ = read_uint(require(state, "refresh_count"), "refresh_count");
  size_at_refresh_ = read_uint(require(state, "size_at_refresh"), "size_at_refresh");
  skipped_.clear();
  const YAML::Node skipped = require(state, "skipped_steps");
  for (std::size_t i = 0; i < skipped.size(); ++i)
    skipped_.push_back({read_uint(require(skipped[i], "ask"), "skipped_steps.ask"),
                        read_vector(require(skipped[i], "unit"), "skipped_steps.unit"),
                        read_double(require(skipped[i], "test_statistic"), "skipped_steps.test_statistic")});
  model_.reset();
  if (refresh_count_ == 0) return;
  const YAML::Node hp = require(state, "hyperparameters");
  try {
    hyperparameters_.kernel = kernel_type_from_string(read_string(require(hp, "kernel"), "kernel"));
  } catch (const std::invalid_argument& e) {
    throw StateError(std::string("hyperparameters.kernel at ") + position_of(hp["kernel"]) + ": " + e.what());
  }
  hyperparameters_.lengthscales = read_vector(require(hp, "lengthscales"), "lengthscales");
  hyperparameters_.outputscale = read_double(require(hp, "outputscale"), "outputscale");
  hyperparameters_.noise_variances = read_doubles(require(hp, "noise_variances"), "noise_variances");
  const YAML::Node st = require(state, "standardization");
  standardization_.mean = read_double(require(st, "mean"), "standardization.mean");
  standardization_.scale = read_double(require(st, "scale"), "standardization.scale");
  std::vector<Observation> observations;
  for (std::uint64_t id : dictionary_) observations.push_back(observation_of(context.trials[id], context.direction));
  try {
    model_.emplace(context.space.dim(), hyperparameters_, standardization_);
  } catch (const std::exception& e) {
    throw StateError(std::string("hyperparameters at ") + position_of(hp) + ": " + e.what());
  }
  model_->add(std::move(observations));
  model_->track(candidate_set(context.space, context.seed, refresh_count_ - 1));
}

namespace {

template <class T>
void read_optional(const YAML::Node& node, const char* key, T& out, std::set<std::string>& seen);

template <>
void read_optional<double>(const YAML::Node& node, const char* key, double& out, std::set<std::string>& seen) {
  seen.insert(key);
  if (node[key]) out = read_double(node[key], key);
}
template <>
void read_optional<std::size_t>(const YAML::Node& node, const char* key, std::size_t& out, std::set<std::string>& seen) {
  seen.insert(key);
  if (node[key]) out = read_uint(node[key], key);
}
template <>
void read_optional<bool>(const YAML::Node& node, const char* key, bool& out, std::set<std::string>& seen) {
  seen.insert(key);
  if (node[key]) out = read_bool(node[key], key);
}

void reject_unknown(const YAML::Node& node, const std::set<std::string>& known, const std::string& where) {
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (!known.count(key)) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw StateError("unknown key '" + key + "' in " + where + " at " + position_of(kv.first) + "; known keys: " + list);
    }
  }
}

template <class F>
auto parse_enum(const YAML::Node& node, const char* key, F parse) {
  try {
    return parse(read_string(node, key));
  } catch (const std::invalid_argument& e) {
    throw StateError(std::string("field '") + key + "' at " + position_of(node) + ": " + e.what());
  }
}

}  // namespace

YAML::Node to_yaml(const GpBanditOptions& o) {
  YAML::Node n;
  n["acquisition"] = to_string(o.acquisition);
  n["epsilon"] = yaml_double(o.epsilon);
  n["horizon"] = yaml_double(o.horizon);
  n["schedule_alpha"] = yaml_double(o.schedule_alpha);
  n["on_reject"] = to_string(o.on_reject);
  n["max_skipped_steps"] = o.max_skipped_steps;
  n["beta_scale"] = yaml_double(o.beta_scale);
  n["delta"] = yaml_double(o.delta);
  n["initial_design"] = o.initial_design;
  n["kernel"] = to_string(o.kernel);
  n["fit_hyperparameters"] = o.fit_hyperparameters;
  if (o.hyperparameters) {
    n["hyperparameters"]["lengthscales"] = yaml_vector(o.hyperparameters->lengthscales);
    n["hyperparameters"]["outputscale"] = yaml_double(o.hyperparameters->outputscale);
    n["hyperparameters"]["noise_variance"] = yaml_double(o.hyperparameters->noise_variances.at(0));
  }
  n["standardize"] = o.standardize;
  n["refit"]["every"] = o.refit.every;
  n["refit"]["growth"] = yaml_double(o.refit.growth);
  const HyperparameterFitOptions& f = o.fit;
  YAML::Node fit;
  fit["lengthscale_min"] = yaml_double(f.lengthscale_min);
  fit["lengthscale_max"] = yaml_double(f.lengthscale_max);
  fit["outputscale_min"] = yaml_double(f.outputscale_min);
  fit["outputscale_max"] = yaml_double(f.outputscale_max);
  fit["noise_min"] = yaml_double(f.noise_min);
  fit["noise_max"] = yaml_double(f.noise_max);
  fit["lengthscale_prior_median_1d"] = yaml_double(f.lengthscale_prior_median_1d);
  fit["lengthscale_prior_log_sd"] = yaml_double(f.lengthscale_prior_log_sd);
  fit["outputscale_prior_log_median"] = yaml_double(f.outputscale_prior.log_median);
  fit["outputscale_prior_log_sd"] = yaml_double(f.outputscale_prior.log_sd);
  fit["noise_prior_log_median"] = yaml_double(f.noise_prior.log_median);
  fit["noise_prior_log_sd"] = yaml_double(f.noise_prior.log_sd);
  fit["fit_noise"] = f.fit_noise;
  fit["random_restarts"] = f.random_restarts;
  fit["max_evaluations"] = f.max_evaluations;
  fit["max_points"] = f.max_points;
  n["fit"] = fit;
  n["optimizer"]["candidates"] = o.optimizer.candidates;
  n["optimizer"]["local_starts"] = o.optimizer.local_starts;
  n["optimizer"]["local_max_evaluations"] = o.optimizer.local_max_evaluations;
  n["optimizer"]["perturbation_fraction"] = yaml_double(o.optimizer.perturbation_fraction);
  n["optimizer"]["perturbation_sd"] = yaml_double(o.optimizer.perturbation_sd);
  return n;
}

GpBanditOptions gp_bandit_options_from_yaml(const YAML::Node& n) {
  GpBanditOptions o;
  if (!n || n.IsNull()) return o;
  if (!n.IsMap()) throw StateError("strategy options at " + position_of(n) + ": expected a map");
  std::set<std::string> seen{"acquisition", "on_reject", "kernel", "hyperparameters", "refit", "fit", "optimizer"};
  if (n["acquisition"]) o.acquisition = parse_enum(n["acquisition"], "acquisition", acquisition_type_from_string);
  if (n["on_reject"]) o.on_reject = parse_enum(n["on_reject"], "on_reject", reject_policy_from_string);
  if (n["kernel"]) o.kernel = parse_enum(n["kernel"], "kernel", kernel_type_from_string);
  read_optional(n, "epsilon", o.epsilon, seen);
  read_optional(n, "horizon", o.horizon, seen);
  read_optional(n, "schedule_alpha", o.schedule_alpha, seen);
  read_optional(n, "max_skipped_steps", o.max_skipped_steps, seen);
  read_optional(n, "beta_scale", o.beta_scale, seen);
  read_optional(n, "delta", o.delta, seen);
  read_optional(n, "initial_design", o.initial_design, seen);
  read_optional(n, "fit_hyperparameters", o.fit_hyperparameters, seen);
  read_optional(n, "standardize", o.standardize, seen);
  reject_unknown(n, seen, "strategy options");
  if (const YAML::Node hp = n["hyperparameters"]) {
    GpHyperparameters h;
    h.kernel = o.kernel;
    h.lengthscales = read_vector(require(hp, "lengthscales"), "hyperparameters.lengthscales");
    h.outputscale = read_double(require(hp, "outputscale"), "hyperparameters.outputscale");
    h.noise_variances = {read_double(require(hp, "noise_variance"), "hyperparameters.noise_variance")};
    reject_unknown(hp, {"lengthscales", "outputscale", "noise_variance"}, "hyperparameters");
    o.hyperparameters = h;
  }
  if (const YAML::Node r = n["refit"]) {
    std::set<std::string> s;
    read_optional(r, "every", o.refit.every, s);
    read_optional(r, "growth", o.refit.growth, s);
    reject_unknown(r, s, "refit");
  }
  if (const YAML::Node f = n["fit"]) {
    std::set<std::string> s;
    HyperparameterFitOptions& x = o.fit;
    read_optional(f, "lengthscale_min", x.lengthscale_min, s);
    read_optional(f, "lengthscale_max", x.lengthscale_max, s);
    read_optional(f, "outputscale_min", x.outputscale_min, s);
    read_optional(f, "outputscale_max", x.outputscale_max, s);
    read_optional(f, "noise_min", x.noise_min, s);
    read_optional(f, "noise_max", x.noise_max, s);
    read_optional(f, "lengthscale_prior_median_1d", x.lengthscale_prior_median_1d, s);
    read_optional(f, "lengthscale_prior_log_sd", x.lengthscale_prior_log_sd, s);
    read_optional(f, "outputscale_prior_log_median", x.outputscale_prior.log_median, s);
    read_optional(f, "outputscale_prior_log_sd", x.outputscale_prior.log_sd, s);
    read_optional(f, "noise_prior_log_median", x.noise_prior.log_median, s);
    read_optional(f, "noise_prior_log_sd", x.noise_prior.log_sd, s);
    read_optional(f, "fit_noise", x.fit_noise, s);
    read_optional(f, "random_restarts", x.random_restarts, s);
    read_optional(f, "max_evaluations", x.max_evaluations, s);
    read_optional(f, "max_points", x.max_points, s);
    reject_unknown(f, s, "fit");
  }
  if (const YAML::Node p = n["optimizer"]) {
    std::set<std::string> s;
    read_optional(p, "candidates", o.optimizer.candidates, s);
    read_optional(p, "local_starts", o.optimizer.local_starts, s);
    read_optional(p, "local_max_evaluations", o.optimizer.local_max_evaluations, s);
    read_optional(p, "perturbation_fraction", o.optimizer.perturbation_fraction, s);
    read_optional(p, "perturbation_sd", o.optimizer.perturbation_sd, s);
    reject_unknown(p, s, "optimizer");
  }
  if (o.hyperparameters) o.hyperparameters->kernel = o.kernel;
  return o;
}

}  // namespace tune
