#include "tune/strategy/multi_resolution_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "tune/bandit/acquisition_optimizer.hpp"
#include "tune/bandit/best_lower_bounds.hpp"
#include "tune/bandit/bounded_argmax.hpp"
#include "tune/bandit/max_value_entropy.hpp"
#include "tune/gp/value_floor.hpp"
#include "tune/io/yaml_values.hpp"
#include "tune/space/sampling.hpp"
#include "tune/strategy/failure_probability.hpp"
#include "tune/strategy/gp_state_yaml.hpp"
#include "tune/strategy/option_fields.hpp"
#include "tune/strategy/random_strategy.hpp"

namespace tune {

const char* to_string(ObservationWindow w) { return w == ObservationWindow::cell ? "cell" : "point"; }
ObservationWindow observation_window_from_string(const std::string& name) {
  if (name == "cell") return ObservationWindow::cell;
  if (name == "point") return ObservationWindow::point;
  throw std::invalid_argument("unknown window '" + name + "': expected cell or point");
}
const char* to_string(LevelChoice c) {
  return c == LevelChoice::depth ? "depth" : c == LevelChoice::acquisition ? "acquisition" : "capped";
}
LevelChoice level_choice_from_string(const std::string& name) {
  if (name == "depth") return LevelChoice::depth;
  if (name == "acquisition") return LevelChoice::acquisition;
  if (name == "capped") return LevelChoice::capped;
  throw std::invalid_argument("unknown level_choice '" + name + "': expected depth, acquisition or capped");
}
const char* to_string(FullResolutionPoint p) { return p == FullResolutionPoint::centre ? "centre" : "best_in_cell"; }
FullResolutionPoint full_resolution_point_from_string(const std::string& name) {
  if (name == "centre") return FullResolutionPoint::centre;
  if (name == "best_in_cell") return FullResolutionPoint::best_in_cell;
  throw std::invalid_argument("unknown full_resolution_point '" + name + "': expected centre or best_in_cell");
}
const char* to_string(MaxValueSampler s) { return s == MaxValueSampler::gumbel ? "gumbel" : "thompson"; }
MaxValueSampler max_value_sampler_from_string(const std::string& name) {
  if (name == "gumbel") return MaxValueSampler::gumbel;
  if (name == "thompson") return MaxValueSampler::thompson;
  throw std::invalid_argument("unknown sampler '" + name + "': expected gumbel or thompson");
}

std::size_t MultiResolutionOptions::candidate_count(std::size_t dim) const {
  if (candidates > 0) return candidates;
  return std::clamp<std::size_t>(100 * dim, 256, 1024);
}

std::size_t MultiResolutionOptions::tree_depth(std::size_t dim, std::size_t levels) const {
  if (max_depth > 0) return max_depth;
  return std::max<std::size_t>({6, 3 * dim, levels > 0 ? levels - 1 : 0});
}

MultiResolutionSearch::MultiResolutionSearch(MultiResolutionOptions options) : options_(std::move(options)) {
  check_fit_options(options_.fit, options_.refit);
  // A cheap run of window: cell averages f over a box of the cube: the model keeps each categorical's
  // coordinate, and the saved options say so.
  if (options_.window == ObservationWindow::cell) options_.categorical_encoding = CategoricalEncoding::ordered;
  if (options_.max_value_samples == 0) throw std::invalid_argument("strategy option 'max_value_samples' must be >= 1");
  if (options_.quadrature_nodes == 0) throw std::invalid_argument("strategy option 'quadrature_nodes' must be >= 1");
  for (double sd : options_.noise_sd)
    if (!(sd > 0) || !std::isfinite(sd)) throw std::invalid_argument("strategy option 'noise_sd': every value must be finite and > 0");
  if (!(options_.recommendation_sd_penalty >= 0) || !std::isfinite(options_.recommendation_sd_penalty))
    throw std::invalid_argument("strategy option 'recommendation_sd_penalty' must be >= 0 (0: the plain posterior mean)");
  if (!(options_.recommendation_radius > 0) || !std::isfinite(options_.recommendation_radius))
    throw std::invalid_argument("strategy option 'recommendation_radius' must be > 0 (a distance in the unit cube, e.g. 0.15)");
  if (!(options_.refit_surprise_sd >= 0))
    throw std::invalid_argument("strategy option 'refit_surprise_sd' must be >= 0 (predictive sds; 0: refit after every "
                                "full-resolution result, .inf: on the schedule only)");
  if (options_.variant == CmetsVariant::literal && options_.allow_requery)
    throw std::invalid_argument("strategy option 'allow_requery' applies to the cleaned variant only");
}

void MultiResolutionSearch::check_levels(std::size_t levels) const {
  if (!options_.noise_sd.empty() && options_.noise_sd.size() != levels)
    throw std::invalid_argument("strategy option 'noise_sd' has " + std::to_string(options_.noise_sd.size()) +
                                " values for " + std::to_string(levels) +
                                " resolution levels; give one noise sd per level, cheapest first");
}

std::size_t MultiResolutionSearch::levels_of(const StrategyContext& context) const {
  return context.resolution ? context.resolution->levels() : 1;
}

std::size_t MultiResolutionSearch::level_of_depth(std::size_t depth, std::size_t levels) const {
  const std::size_t D = active_ ? active_->options().max_depth : options_.tree_depth(dim_, levels);
  const std::size_t k = options_.full_resolution_depths;
  if (k == 0 || levels == 1) return std::min(levels - 1, depth * levels / (D + 1));
  // The k deepest depths run at full resolution; the lower levels share the others evenly.
  const std::size_t shallow = D + 1 > k ? D + 1 - k : 0;
  if (depth >= shallow) return levels - 1;
  return std::min(levels - 2, depth * (levels - 1) / shallow);
}

NodeId MultiResolutionSearch::node_of_trial(std::uint64_t id) const {
  return id < trial_nodes_.size() ? trial_nodes_[id] : no_node;
}

void MultiResolutionSearch::ensure_active_set(const StrategyContext& context) {
  if (!space_) space_ = context.space;
  if (active_ || !options_.tree) return;
  CmetsActiveSetOptions o;
  o.variant = options_.variant;
  o.max_depth = options_.tree_depth(context.space.dim(), levels_of(context));
  o.allow_requery = options_.allow_requery;
  std::vector<NodeId> queries;
  for (NodeId n : trial_nodes_)
    if (n != no_node) queries.push_back(n);
  active_.emplace(CmetsActiveSet::replay(context.space.dim(), o, queries));
}

Observation MultiResolutionSearch::query_at(NodeId node, std::size_t level, std::size_t top) const {
  const PartitionNode& cell = active_->tree().node(node);
  Observation o;
  if (level < top && options_.window == ObservationWindow::cell) o.query = BoxQuery{cell.lower, cell.upper};
  // The configuration the trial runs: with a discrete parameter the cell's centre may not be one,
  // and a model that put the run's value there would score a point that never runs.
  else o.query = PointQuery{model_input(space_ ? space_->snap(cell.centre()) : cell.centre())};
  o.noise_group = level;
  if (level < top && options_.level_offsets) o.offset_group = level;
  return o;
}

Observation MultiResolutionSearch::observation_of(const Trial& trial, const StrategyContext& context, double value) const {
  const std::size_t levels = levels_of(context);
  const std::size_t top = levels - 1;
  const std::size_t level = std::min(trial.level.value_or(top), top);
  const NodeId node = node_of_trial(trial.id);
  Observation o;
  if (node != no_node && active_ && level < top) {
    o = query_at(node, level, top);
  } else {
    o.query = PointQuery{model_input(trial.unit)};
    o.noise_group = level;
    if (level < top && options_.level_offsets) o.offset_group = level;
  }
  o.value = level < level_floors_.size() ? level_floors_[level](value) : value;
  if (!level_centres_.empty()) o.value -= level_centre(o);
  return o;
}

namespace {

// Mean of the top level's values (of all values without one) and the pooled within-level standard
// deviation: both unchanged by adding a constant to every value of a lower level.
Standardization standardization_by_level(const std::vector<Observation>& observations, std::size_t top) {
  if (observations.empty()) return {};
  std::map<std::size_t, std::pair<double, std::size_t>> sums;
  for (const Observation& o : observations) {
    auto& s = sums[o.noise_group];
    s.first += o.value;
    ++s.second;
  }
  Standardization st;
  if (sums.count(top)) st.mean = sums[top].first / static_cast<double>(sums[top].second);
  else {
    double total = 0.0;
    for (const Observation& o : observations) total += o.value;
    st.mean = total / static_cast<double>(observations.size());
  }
  double ss = 0.0;
  for (const Observation& o : observations) {
    const auto& s = sums[o.noise_group];
    const double d = o.value - s.first / static_cast<double>(s.second);
    ss += d * d;
  }
  const auto dof = static_cast<double>(observations.size()) - static_cast<double>(sums.size());
  const double sd = dof > 0 ? std::sqrt(ss / dof) : 0.0;
  st.scale = sd > 1e-12 * std::max(1.0, std::abs(st.mean)) && std::isfinite(sd) ? sd : 1.0;
  return st;
}

// The offsets' prior variance (standardised units): a thousand times every level's squared gap to
// the reference mean, so that the offsets act as fixed effects: a constant shift of a level then
// moves neither the posterior nor the fitted hyperparameters (with 10 times, the log-determinant's
// share of the marginal likelihood still moved the fit, and a test's recommendation by 0.03). The
// Cholesky factor stays accurate: v eps stays far below the noise floor for any realistic gap.
double offset_variance_of(const std::vector<Observation>& observations, const Standardization& st, std::size_t top) {
  std::map<std::size_t, std::pair<double, std::size_t>> sums;
  for (const Observation& o : observations)
    if (o.noise_group < top) {
      auto& s = sums[o.noise_group];
      s.first += o.value;
      ++s.second;
    }
  double widest = 0.0;
  for (const auto& [level, s] : sums) {
    const double gap = (s.first / static_cast<double>(s.second) - st.mean) / st.scale;
    widest = std::max(widest, gap * gap);
  }
  return std::max(1.0, 1e3 * widest);
}

// Above this offset prior variance (standardised units) the Cholesky factor of the shared blocks
// loses the noise floor: v eps reaches the noise floor 1e-6 for levels about 3000 pooled sds apart
// (cheap runs reading 1e4 where the full ones read O(1)), and then every fit failed and every ask
// threw. At 1e8 (levels 316 sds apart), v eps is 2e-8.
constexpr double kMaxOffsetVariance = 1e8;

// For each low level, its mean's distance to the reference mean (raw units) where that distance
// would make the offset variance exceed kMaxOffsetVariance, 0 elsewhere; empty when no level is that
// far. The offsets act as fixed effects (offset_variance_of), so taking this constant off a level's
// values hardly moves the posterior of f, and the factor stays accurate. Levels nearer than that keep
// their values as told, so ordinary studies run bit for bit as before.
std::vector<double> distant_level_centres(const std::vector<Observation>& observations, const Standardization& st,
                                          std::size_t top) {
  std::map<std::size_t, std::pair<double, std::size_t>> sums;
  for (const Observation& o : observations)
    if (o.offset_group) {
      auto& s = sums[*o.offset_group];
      s.first += o.value;
      ++s.second;
    }
  std::vector<double> centres(top, 0.0);
  bool any = false;
  for (const auto& [level, s] : sums) {
    const double gap = s.first / static_cast<double>(s.second) - st.mean;
    const double standardised_gap = gap / st.scale;
    if (level < top && 1e3 * standardised_gap * standardised_gap > kMaxOffsetVariance) {
      centres[level] = gap;
      any = true;
    }
  }
  if (!any) centres.clear();
  return centres;
}

}  // namespace

void MultiResolutionSearch::refresh_if_due(const StrategyContext& context) {
  const std::size_t n = in_model_.size();
  if (model_) {
    const RefitSchedule& s = options_.refit;
    const auto by_growth = static_cast<std::size_t>(std::ceil(s.growth * static_cast<double>(n)));
    const bool early = size_at_refresh_ < 5 && n > size_at_refresh_;  // few points: every new one counts
    if (!early && n - size_at_refresh_ < std::max<std::size_t>({s.every, by_growth, 1})) {
      build_deferred_model();
      return;
    }
  }
  rebuild_model(context);
}

void MultiResolutionSearch::build_deferred_model() const {
  if (!deferred_) return;
  model_->add(std::move(deferred_->observations));
  model_->track(std::move(deferred_->candidates));
  deferred_.reset();
}

void MultiResolutionSearch::rebuild_model(const StrategyContext& context) {
  const std::size_t levels = levels_of(context);
  const std::size_t top = levels - 1;
  std::vector<Observation> observations;
  level_centres_.clear();  // the rewards as told; distant levels are centred below
  std::vector<ValueFloor> previous_floors = std::move(level_floors_);
  previous_floors.resize(levels);
  level_floors_.clear();  // and unfloored; each level's floor is set from them below
  for (std::uint64_t id : in_model_) {
    const Trial& t = trial_by_id(context.trials, id);
    observations.push_back(observation_of(t, context, reward_of(*t.value, context.direction)));
  }
  {
    std::vector<std::vector<double>> by_level(levels);
    for (const Observation& o : observations) by_level[std::min(o.noise_group, top)].push_back(o.value);
    level_floors_ = next_level_floors(previous_floors, by_level);
    for (Observation& o : observations) o.value = level_floors_[std::min(o.noise_group, top)](o.value);
  }
  const ModelInputs& in = inputs(context.space);
  HyperparameterFitOptions fit = options_.fit;
  fit.lengthscale_prior_median_1d *= in.lengthscale_prior_factor();
  if (hyperparameters_.lengthscales.size() == 0 || hyperparameters_.noise_variances.size() != levels) {
    hyperparameters_ = default_hyperparameters(options_.kernel, in.dim(), levels, fit);
    if (options_.level_offsets && options_.level_discrepancy)
      hyperparameters_.discrepancy_ratios.assign(top, std::exp(options_.fit.discrepancy_prior.log_median));
    if (options_.level_offsets && options_.level_scales) hyperparameters_.group_scales.assign(top, 1.0);
    if (options_.level_offsets && options_.level_trends)
      hyperparameters_.trend_variances.assign(top, std::exp(options_.fit.trend_prior.log_median));
  }
  if (options_.level_offsets && options_.level_discrepancy && options_.level_discrepancy_lengthscales) {
    const auto full = static_cast<std::size_t>(std::count_if(
        observations.begin(), observations.end(), [&](const Observation& o) { return o.noise_group == top; }));
    std::vector<double>& factors = hyperparameters_.discrepancy_lengthscale_factors;
    if (full < kDiscrepancyLengthscalesAfter) factors.clear();
    else if (factors.size() != top) factors.assign(top, std::exp(options_.fit.discrepancy_lengthscale_factor_prior.log_median));
  }
  standardization_ = standardization_by_level(observations, top);
  hyperparameters_.offset_variance = offset_variance_of(observations, standardization_, top);
  if (hyperparameters_.offset_variance > kMaxOffsetVariance) {
    level_centres_ = distant_level_centres(observations, standardization_, top);
    for (Observation& o : observations) o.value -= level_centre(o);
    standardization_ = standardization_by_level(observations, top);
    hyperparameters_.offset_variance = offset_variance_of(observations, standardization_, top);
  }
  if (!options_.noise_sd.empty()) {
    check_levels(levels);
    for (std::size_t l = 0; l < levels; ++l) {
      const double v = options_.noise_sd[l] / standardization_.scale;
      hyperparameters_.noise_variances[l] = std::max(v * v, 1e-12);
    }
    fit.fit_noise = false;
  }
  if (observations.size() >= 2) {
    Rng rng = make_rng(context.seed, RngStream::hyperparameter_fit, refresh_count_);
    hyperparameters_ = fit_hyperparameters(observations, standardization_, hyperparameters_, fit, rng).hyperparameters;
  }
  node_targets_.clear();
  deferred_.reset();
  kept_.reset();
  model_.emplace(in.dim(), hyperparameters_, standardization_);
  model_->add(std::move(observations));
  model_->track(in.columns(candidate_points(context, refresh_count_)));
  ++refresh_count_;
  size_at_refresh_ = in_model_.size();
}

Eigen::MatrixXd MultiResolutionSearch::candidate_points(const StrategyContext& context, std::size_t refresh) const {
  Rng rng = make_rng(context.seed, RngStream::candidates, refresh);
  Eigen::MatrixXd X = sobol_points(context.space.dim(), options_.candidate_count(context.space.dim()), rng);
  for (Eigen::Index j = 0; j < X.cols(); ++j) X.col(j) = context.space.snap(X.col(j));
  return X;
}

const ModelInputs& MultiResolutionSearch::inputs(const Space& space) const {
  if (!inputs_) inputs_.emplace(space, options_.categorical_encoding);
  return *inputs_;
}

Eigen::VectorXd MultiResolutionSearch::model_input(const Eigen::VectorXd& unit) const {
  if (!inputs_) throw std::logic_error("MultiResolutionSearch: the model's inputs are used before they are made");
  return (*inputs_)(unit);
}

Eigen::VectorXd MultiResolutionSearch::max_value_samples(const GaussianProcess& gp, std::uint64_t seed,
                                                         std::uint64_t ask_index) const {
  Rng rng = make_rng(seed, RngStream::acquisition, ask_index);
  if (options_.sampler == MaxValueSampler::thompson)
    return thompson_max_samples(gp, gp.tracked_points(), options_.max_value_samples, rng);
  // The model keeps the tracked points' posterior current as observations come (O(n) per point
  // and observation); a solve here would cost O(n^2) per point and ask.
  Eigen::VectorXd mean, variance;
  gp.tracked_prediction(mean, variance);
  return gumbel_max_samples(mean, variance.cwiseSqrt(), options_.max_value_samples, rng);
}

namespace {
// A posterior of f at points in QueryScores's form: g alone, in (0, 0).
std::vector<PairPrediction> point_posteriors(const Eigen::VectorXd& mean, const Eigen::VectorXd& variance) {
  std::vector<PairPrediction> out(static_cast<std::size_t>(mean.size()));
  for (Eigen::Index j = 0; j < mean.size(); ++j) {
    out[static_cast<std::size_t>(j)].mean(0) = mean(j);
    out[static_cast<std::size_t>(j)].covariance(0, 0) = variance(j);
  }
  return out;
}

// Candidate queries with their posterior, scored by CMES on demand: the noisy score costs a
// Gauss-Hermite quadrature per f* sample, and a search needs it only for the candidates that can
// still win (bounded_argmax).
class QueryScores {
 public:
  QueryScores(const GaussianProcess& gp, const std::vector<Observation>& queries,
              const std::vector<PairPrediction>& posteriors, Eigen::VectorXd f_star, const MultiResolutionOptions& options)
      : options_(options) {
    // The max-value truncation g <= f* holds for the average g of f a query observes, not for what
    // its level adds (offset and discrepancy): those act as extra noise, scored as below. nu and
    // sigma_g are the posterior of g alone. This also makes the score blind to a constant shift of a
    // level.
    const Eigen::Index m = static_cast<Eigen::Index>(queries.size());
    nu_.resize(m);
    sigma_g_.resize(m);
    noise_sd_.resize(m);
    uninformative_.assign(static_cast<std::size_t>(m), false);
    double floor = -std::numeric_limits<double>::infinity();
    for (Eigen::Index i = 0; i < m; ++i) {
      const Observation& q = queries[static_cast<std::size_t>(i)];
      const PairPrediction& joint = posteriors[static_cast<std::size_t>(i)];
      const Prediction p{joint.mean(0), joint.covariance(0, 0)};
      double scale = 1.0, extra = 0.0;  // y = scale g + e, Var(e) = extra (+ the level's noise)
      if (q.offset_group) {
        // The observation y = g + b + delta adds its level's offset and discrepancy to the average g
        // of f, and their posterior is correlated with g's (a cheap run informs about g + b + delta
        // before a full-resolution one separates them). Regressing y on g, y = a g + e with
        // a = Cov(g, y) / Var(g) and e independent of g: y / a = g + e / a is the form Appendix A
        // scores, with noise variance Var(e) / a^2. A y that hardly moves with g (a ~ 0) informs
        // hardly at all.
        const Eigen::Matrix2d& cov = joint.covariance;
        scale = cov(0, 0) > 0.0 ? cov(0, 1) / cov(0, 0) : 0.0;
        extra = std::max(0.0, cov(1, 1) - scale * cov(0, 1));
      }
      nu_(i) = p.mean;
      sigma_g_(i) = std::sqrt(p.variance);
      uninformative_[static_cast<std::size_t>(i)] = scale <= 1e-6;
      noise_sd_(i) = uninformative_[static_cast<std::size_t>(i)]
                         ? 0.0
                         : std::sqrt((gp.noise_variance(q.noise_group) + extra) / (scale * scale));
      floor = std::max(floor, p.mean + 1e-6 * sigma_g_(i));
    }
    // Clamp f* once over the whole candidate set (digest 7.2.3), so that every candidate is scored
    // against the same samples (the scalar scores clamp per candidate otherwise).
    f_star_ = f_star.cwiseMax(floor);
    // Eq. 14 is cheap and its own bound: each candidate's once, for bounded_argmax's bound and score.
    if (!options_.noisy_cmes) {
      noiseless_ = Eigen::VectorXd::Zero(m);
      for (Eigen::Index i = 0; i < m; ++i)
        if (!uninformative_[static_cast<std::size_t>(i)]) noiseless_(i) = cmes_noiseless(nu_(i), sigma_g_(i), f_star_);
    }
  }

  Eigen::Index size() const { return nu_.size(); }

  double score(Eigen::Index i) const {
    if (!options_.noisy_cmes) return noiseless_(i);
    if (uninformative_[static_cast<std::size_t>(i)]) return 0.0;
    return cmes_noisy(nu_(i), sigma_g_(i), noise_sd_(i), f_star_, options_.quadrature_nodes);
  }

  // >= score(i), bit for bit (cmes_noisy_upper_bound); the noiseless score is its own bound.
  double upper_bound(Eigen::Index i) const {
    if (!options_.noisy_cmes) return noiseless_(i);
    if (uninformative_[static_cast<std::size_t>(i)]) return 0.0;
    return cmes_noisy_upper_bound(nu_(i), sigma_g_(i), noise_sd_(i), f_star_);
  }

  // The order of candidates whose scores are all negligible or 0 (cmes_log_tail).
  double log_tail(Eigen::Index i) const {
    if (uninformative_[static_cast<std::size_t>(i)]) return -std::numeric_limits<double>::infinity();
    return cmes_log_tail(nu_(i), sigma_g_(i), options_.noisy_cmes ? noise_sd_(i) : 0.0, f_star_);
  }

 private:
  const MultiResolutionOptions& options_;
  Eigen::VectorXd nu_, sigma_g_, noise_sd_, f_star_;
  Eigen::VectorXd noiseless_;  // with noisy_cmes: false, every candidate's score
  std::vector<bool> uninformative_;
};

}  // namespace

ProposalResult MultiResolutionSearch::propose(const StrategyContext& context) {
  dim_ = context.space.dim();
  levels_ = levels_of(context);
  check_levels(levels_);
  failures_.reset();  // the trials have changed since the last ask
  inputs(context.space);
  return options_.tree ? propose_tree(context) : propose_flat(context);
}

void MultiResolutionSearch::add_fantasies(const StrategyContext& context) {
  // A failed trial's fantasy is its posterior mean, no better than the median result of its level
  // where runs fail more often than not (failed_run_ceiling): left out of the model, a failed run's
  // region stayed the most uncertain one, and cmets refined it: a 2-D campaign whose quarter
  // x > 0.75 diverged ended after 30 failed cheap runs and 2 results.
  const FailureProbability& failures = failure_probability(context);
  std::map<std::size_t, double> ceiling;  // level -> failed_run_ceiling of its rewards in the model
  if (failures.any_failure()) {
    std::map<std::size_t, std::vector<double>> rewards;
    for (std::uint64_t id : in_model_) {
      const Trial& t = context.trials[id];
      rewards[std::min(t.level.value_or(levels_ - 1), levels_ - 1)].push_back(reward_of(*t.value, context.direction));
    }
    for (auto& [level, r] : rewards) ceiling[level] = failed_run_ceiling(std::move(r));
  }
  // The failed trials' fantasies stay in the model's factor between asks (attach_fantasy_tail);
  // the pending trials' come after them.
  std::vector<Observation> failed;
  KeptFantasies now;
  for (const Trial& t : context.trials)
    if (t.status == TrialStatus::failed) {
      failed.push_back(observation_of(t, context, 0.0));
      now.failed.push_back(t.id);
      const auto it = ceiling.find(failed.back().noise_group);
      // The ceiling is a reward as told; the model holds the level's rewards centred.
      now.caps.push_back(it != ceiling.end() && failures.fails_here(model_input(t.unit)) ? it->second - level_centre(failed.back())
                                                                             : std::numeric_limits<double>::infinity());
    } else if (t.status == TrialStatus::pending) {
      now.pending.push_back(t.id);
    }
  // The last ask's fantasies apply when the failed trials and their caps are the same and the
  // pending trials then are the first of those now (a trial told or failed since drops them).
  const bool reuse = kept_ && kept_->failed == now.failed && kept_->caps == now.caps &&
                     kept_->pending.size() <= now.pending.size() &&
                     std::equal(kept_->pending.begin(), kept_->pending.end(), now.pending.begin());
  std::size_t first_new = 0;
  if (reuse) {
    first_new = kept_->pending.size();
    now.base_size = kept_->base_size;
  } else {
    drop_fantasies();
    now.base_size = model_->size();
  }
  kept_.reset();  // set again once every fantasy is on
  try {
    if (!reuse) model_->attach_fantasy_tail(std::move(failed), now.caps);
    for (std::size_t k = first_new; k < now.pending.size(); ++k) {
      Observation o = observation_of(context.trials[now.pending[k]], context, 0.0);
      o.value = model_->predict_mean(o);
      model_->add(o);
    }
  } catch (...) {
    model_->truncate(now.base_size);
    throw;
  }
  kept_ = std::move(now);
}

void MultiResolutionSearch::drop_fantasies() const {
  if (!kept_) return;
  if (model_) model_->truncate(kept_->base_size);
  kept_.reset();
}

std::vector<std::size_t> MultiResolutionSearch::candidate_levels(NodeId node) const {
  const std::size_t depth_level = level_of_depth(active_->tree().node(node).depth, levels_);
  std::vector<std::size_t> out;
  for (std::size_t l = 0; l < levels_; ++l)
    if (options_.level_choice == LevelChoice::depth ? l == depth_level
                                                    : options_.level_choice == LevelChoice::acquisition || l <= depth_level)
      out.push_back(l);
  return out;
}

namespace {
bool same_query(const Query& a, const Query& b) {
  if (const auto* pa = std::get_if<PointQuery>(&a))
    if (const auto* pb = std::get_if<PointQuery>(&b)) return pa->x == pb->x;
  if (const auto* ba = std::get_if<BoxQuery>(&a))
    if (const auto* bb = std::get_if<BoxQuery>(&b)) return ba->lower == bb->lower && ba->upper == bb->upper;
  return false;
}
}  // namespace

void MultiResolutionSearch::sync_node_targets(const std::vector<NodeId>& active) {
  GaussianProcess& gp = *model_;
  const std::set<NodeId> now(active.begin(), active.end());
  for (auto it = node_targets_.begin(); it != node_targets_.end();) {
    if (now.count(it->first)) {
      ++it;
      continue;
    }
    std::set<std::size_t> slots;
    for (const std::vector<std::size_t>* v : {&it->second.query, &it->second.f})
      for (std::size_t slot : *v)
        if (slot != no_slot) slots.insert(slot);
    for (std::size_t slot : slots) gp.untrack_target(slot);
    it = node_targets_.erase(it);
  }
  // The new nodes' targets, tracked in one batch: per level, f where its query observes it (one
  // target per place) and the query itself when it observes through a level.
  const std::size_t top = levels_ - 1;
  std::vector<Observation> batch;
  std::vector<std::pair<NodeId, std::vector<std::pair<std::size_t, std::size_t>>>> plan;  // batch indices per level
  for (NodeId n : active) {
    if (node_targets_.count(n)) continue;
    std::vector<std::pair<std::size_t, std::size_t>> per_level(levels_, {no_slot, no_slot});  // (f, query)
    std::vector<std::pair<Query, std::size_t>> places;
    for (std::size_t l : candidate_levels(n)) {
      const Observation q = query_at(n, l, top);
      Observation f = q;
      f.offset_group.reset();
      const auto known =
          std::find_if(places.begin(), places.end(), [&](const auto& p) { return same_query(p.first, f.query); });
      std::size_t f_index = batch.size();
      if (known != places.end()) {
        f_index = known->second;
      } else {
        places.emplace_back(f.query, f_index);
        batch.push_back(f);
      }
      std::size_t query_index = f_index;
      if (q.offset_group) {
        query_index = batch.size();
        batch.push_back(q);
      }
      per_level[l] = {f_index, query_index};
    }
    plan.emplace_back(n, std::move(per_level));
  }
  const std::vector<std::size_t> slots = gp.track_targets(std::move(batch));
  for (const auto& [n, per_level] : plan) {
    NodeTargets t{std::vector<std::size_t>(levels_, no_slot), std::vector<std::size_t>(levels_, no_slot)};
    for (std::size_t l = 0; l < levels_; ++l)
      if (per_level[l].first != no_slot) {
        t.f[l] = slots[per_level[l].first];
        t.query[l] = slots[per_level[l].second];
      }
    node_targets_.emplace(n, std::move(t));
  }
}

namespace {
// The key of a full run chosen where nothing is left to learn: the posterior mean, among the
// candidates more likely to succeed than to fail (the others never win on it).
double likely_mean(double mean, double success) {
  return success >= 0.5 ? mean : -std::numeric_limits<double>::infinity();
}
// Whether the top level's cost fits the remaining budget (always without declared costs).
bool full_run_fits(const StrategyContext& context, std::size_t top) {
  return context.level_costs.empty() || !(context.level_costs[top] > context.remaining_budget);
}
constexpr const char* kNoFullRunFits = "cost budget exhausted: a full-resolution run does not fit the remaining budget";
constexpr const char* kNoCandidateFits = "cost budget exhausted: no candidate's cost fits the remaining budget";
static_assert(std::string_view(kNoFullRunFits).starts_with(kCostBudgetExhausted) &&
              std::string_view(kNoCandidateFits).starts_with(kCostBudgetExhausted));
constexpr const char* kEveryConfigurationRan =
    "every configuration the tree can query has run at its level, and every full-resolution candidate repeats a "
    "full run made or pending";
// Information about f* (nats per full run's cost) below which the tree has nothing left to learn:
// CMES that small means every sample of f* is ~7 posterior sds above the query (P ~ 1e-12).
constexpr double kNegligibleInformation = 1e-12;
constexpr const char* kNothingLeftToLearn =
    "nothing left to learn: the model is sure that every configuration not yet run is worse than its best "
    "(stop_when_nothing_to_learn: true)";
}  // namespace

ProposalResult MultiResolutionSearch::propose_tree(const StrategyContext& context) {
  ensure_active_set(context);
  // The stops come before the refit, which would be thrown away: the last ask of a long campaign
  // otherwise rebuilds the model (seconds at a few thousand trials) only to stop. propose_by_cmes
  // checks that a full run fits before it refits.
  const std::vector<NodeId> active = active_->active();
  if (active.empty()) {
    if (options_.continue_after_tree) return propose_by_cmes(context, "cmes_after_tree");
    return {std::nullopt, "the tree is exhausted: every node down to the maximum depth was queried "
                          "(continue_after_tree: true spends the rest on full-resolution runs)"};
  }
  if (!context.level_costs.empty() &&
      *std::min_element(context.level_costs.begin(), context.level_costs.end()) > context.remaining_budget)
    return {std::nullopt, kNoCandidateFits};
  if (full_run_reserved(context)) return propose_reserved_full_run(context);
  refresh_if_due(context);
  // When no active node's query carries more than negligible information about f*
  // (kNegligibleInformation: the optimum's region is resolved down to the maximum depth and every
  // other node is certainly worse), the tree has nothing left to learn: the trial is a full-resolution
  // one where CMES over the cube says, as after the tree. The nodes stay active for when a refit
  // finds them informative. Before, once every score had underflowed, an argmax of zeros took the
  // lowest node id: a 3-D campaign with a budget of 296 full runs found its best (0.982) at trial
  // 44 and then queried the nodes in id order, 964 cheap runs all over the cube.
  // When a full run no longer fits either, the campaign ends: a cheap run would inform nothing.
  // (That stop comes after the ask's refit, if one is due: whether the tree is spent needs the model.)
  bool uninformative = false;
  ProposalResult tree = propose_tree_node(context, active, options_.continue_after_tree, uninformative);
  if (!uninformative) return tree;
  if (!full_run_fits(context, levels_ - 1))
    return {std::nullopt, std::string(kNoFullRunFits) + ", and no cheaper run would inform about the optimum"};
  ProposalResult flat = propose_by_cmes(context, kTreeUninformativeSource);
  if (flat.proposal || flat.stop_reason == kNothingLeftToLearn) return flat;
  return propose_tree_node(context, active, false, uninformative);  // every candidate repeats a full run
}

// The objective is the full run's, and a campaign whose budget allows one must observe it: a 10-D
// space with a budget worth 100 full runs spent it all on cheap runs (the tree never reached the
// depths that run at full resolution), and a 2-D one with a budget of one or two full runs did in 9
// of 10 seeds, leaving no best trial and a recommendation from cheap runs only. So while no full run
// has completed or is pending, once the dearest cheaper run would leave less than a full run's cost,
// the next trial is that full run (the dearest: a step of any cheaper run from above that point
// lands in it, where the cheapest let a run at a dearer level step over it).
bool MultiResolutionSearch::full_run_reserved(const StrategyContext& context) const {
  const std::size_t top = levels_ - 1;
  if (context.level_costs.empty() || !std::isfinite(context.remaining_budget) || !full_run_fits(context, top))
    return false;
  for (const Trial& t : context.trials)
    if (t.level.value_or(top) == top && t.status != TrialStatus::failed) return false;
  const double dearest = *std::max_element(context.level_costs.begin(), context.level_costs.end() - 1);
  return context.remaining_budget - dearest < context.level_costs[top];
}

ProposalResult MultiResolutionSearch::propose_reserved_full_run(const StrategyContext& context) {
  if (!in_model_.empty()) {
    ProposalResult p = propose_by_cmes(context, kReservedFullRunSource);
    if (p.proposal) return p;
  }
  // Nothing to model yet (or no candidate): the centre of the cube, the tree's first query, at full
  // resolution.
  Proposal p{.unit = context.space.snap(Eigen::VectorXd::Constant(static_cast<Eigen::Index>(context.space.dim()), 0.5)),
             .source = kReservedFullRunSource, .in_model = true, .model_size = base_model_size()};
  p.level = levels_ - 1;
  return {p, {}};
}

ProposalResult MultiResolutionSearch::propose_tree_node(const StrategyContext& context, const std::vector<NodeId>& active,
                                                        bool stop_if_uninformative, bool& uninformative) {
  GaussianProcess& gp = *model_;
  const std::size_t levels = levels_;
  const std::size_t top = levels - 1;
  const std::size_t n_model = base_model_size();
  sync_node_targets(active);  // a new target's column is the same with the last ask's fantasies on
  add_fantasies(context);

  const std::vector<double> costs = context.level_costs.empty() ? std::vector<double>(levels, 1.0) : context.level_costs;
  // The candidate queries: each active node at its depth's level (level_choice: depth), at every
  // level that fits the budget (acquisition), or at those up to its depth's level (capped).
  std::vector<Observation> queries;
  std::vector<std::pair<NodeId, std::size_t>> pairs;
  for (NodeId n : active)
    for (std::size_t l : candidate_levels(n)) {
      if (options_.level_choice != LevelChoice::depth && costs[l] > context.remaining_budget) continue;
      queries.push_back(query_at(n, l, top));
      pairs.emplace_back(n, l);
    }
  // With a discrete parameter, neighbouring nodes can snap to one configuration: a dogfooding
  // campaign over 8 layer counts x 4 activations ran one configuration 13 times at full resolution
  // (its cells kept scoring their unsnapped centres as new) and never tried the best activation.
  const std::set<std::pair<std::size_t, std::vector<double>>> ran = runs_by_level(context);
  std::vector<bool> repeats(pairs.size(), false);
  if (!ran.empty())
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const Eigen::VectorXd x = inputs_->unit_of(std::get<PointQuery>(queries[i].query).x);
      repeats[i] = ran.count({pairs[i].second, unit_key(x)}) > 0;
    }
  std::vector<PairPrediction> posteriors;
  for (const auto& [n, l] : pairs) {
    const NodeTargets& t = node_targets_.at(n);
    posteriors.push_back(gp.predict_tracked_pair(t.f[l], t.query[l]));
  }
  const Eigen::VectorXd f_star = max_value_samples(gp, context.seed, context.ask_index);
  const QueryScores scores(gp, queries, posteriors, f_star, options_);
  // A run that fails informs about nothing and costs as much: the expected information per unit
  // cost is CMES x P(success at the node and level) / cost (1 without a failed trial).
  const FailureProbability& failures = failure_probability(context);
  std::vector<double> success(pairs.size(), 1.0);
  if (failures.any_failure()) {
    // A node's levels are consecutive pairs and share its centre's success(x) (O(trials) each),
    // times each level's factor: the product success(x, l) forms.
    double node_success = 0.0;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      if (i == 0 || pairs[i].first != pairs[i - 1].first)
        node_success = failures.success(model_input(active_->tree().node(pairs[i].first).centre()));
      success[i] = node_success * failures.level_factor(pairs[i].second);
    }
  }
  // The best score per unit cost over every node and level (capped, acquisition), or per node at its
  // depth's level, compared by CmetsActiveSet::select with the depth's cost and its budget check.
  std::optional<NodeId> chosen;
  std::size_t level = top;
  double acquisition = 0.0;
  bool all_repeat = false;  // every eligible query repeats a run
  if (options_.level_choice == LevelChoice::depth) {
    // One level per node here, the depth's: pairs[i] is node i's.
    std::map<NodeId, std::pair<double, std::size_t>> best_of;  // node -> (score / cost, level)
    double best_ratio = 0.0;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      const auto [n, l] = pairs[i];
      best_of[n] = {repeats[i] ? 0.0 : scores.score(static_cast<Eigen::Index>(i)) * success[i] / costs[l], l};
      best_ratio = std::max(best_ratio, best_of[n].first);
    }
    const bool negligible = best_ratio * costs[top] <= kNegligibleInformation;
    std::map<NodeId, double> rank;
    if (negligible) {
      // As bounded_argmax_or_key: rank the nodes by the far-tail key, so that select, which
      // compares score / cost, keeps that order without underflowing.
      // A query that repeats a run ranks below every other, whatever its key.
      std::vector<std::tuple<bool, double, NodeId>> keyed;
      for (std::size_t i = 0; i < pairs.size(); ++i)
        keyed.emplace_back(!repeats[i],
                           scores.log_tail(static_cast<Eigen::Index>(i)) + std::log(success[i] / costs[pairs[i].second]),
                           pairs[i].first);
      std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {  // equal keys: the lowest id ranks highest
        if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(b);
        return std::get<1>(a) < std::get<1>(b) || (std::get<1>(a) == std::get<1>(b) && std::get<2>(a) > std::get<2>(b));
      });
      for (std::size_t r = 0; r < keyed.size(); ++r) rank[std::get<2>(keyed[r])] = static_cast<double>(r + 1);
    }
    chosen = active_->select(
        [&](NodeId n) { return (negligible ? rank.at(n) : best_of.at(n).first) * costs[best_of.at(n).second]; },
        [&](std::size_t depth) { return costs[level_of_depth(depth, levels)]; }, context.remaining_budget);
    if (chosen) {
      std::tie(acquisition, level) = best_of.at(*chosen);
      const auto at = std::find(pairs.begin(), pairs.end(), std::make_pair(*chosen, level));
      if (repeats[static_cast<std::size_t>(at - pairs.begin())]) all_repeat = true;
    }
  } else {
    // Pairs run over the active nodes in CmetsActiveSet's order (increasing id) and each node's
    // levels in order, so the lowest index among ties is the node select would keep.
    const auto cost_of = [&](Eigen::Index i) {  // per expected successful run
      return costs[pairs[static_cast<std::size_t>(i)].second] / success[static_cast<std::size_t>(i)];
    };
    const auto best = bounded_argmax_or_key(
        scores, cost_of, [&](Eigen::Index i) { return !repeats[static_cast<std::size_t>(i)]; },
        [&](Eigen::Index i) { return scores.log_tail(i) - std::log(cost_of(i)); }, kNegligibleInformation / costs[top]);
    if (best) {
      chosen = pairs[static_cast<std::size_t>(best->index)].first;
      level = pairs[static_cast<std::size_t>(best->index)].second;
      acquisition = best->ratio;
    } else if (!pairs.empty()) {
      all_repeat = true;
    }
  }
  if (all_repeat) {
    // Every node the tree could query now snaps to a configuration already run at that level: a
    // full run by CMES over the space, as when nothing is left to learn in the tree.
    if (stop_if_uninformative) {
      uninformative = true;
      return {std::nullopt, {}};
    }
    return {std::nullopt, kEveryConfigurationRan};
  }
  if (!chosen) return {std::nullopt, kNoCandidateFits};
  // Negligible, not only 0: a refit can lift a node from an underflowed 0 to 1e-210 nats, and the
  // tree would take it back for a cheap run that informs as little.
  if (stop_if_uninformative && acquisition * costs[top] <= kNegligibleInformation) {
    uninformative = true;
    return {std::nullopt, {}};
  }
  const PartitionNode& node = active_->tree().node(*chosen);
  Proposal p;
  p.unit = context.space.snap(node.centre());
  if (level == top && options_.full_resolution_point == FullResolutionPoint::best_in_cell)
    p.unit = best_point_in_cell(context, node, f_star);
  p.source = "cmets";
  p.in_model = true;
  p.model_size = n_model;
  p.acquisition = acquisition;
  p.level = level;
  active_->record_query(*chosen);
  trial_nodes_.resize(context.trials.size() + 1, no_node);
  trial_nodes_[context.trials.size()] = *chosen;
  return {p, {}};
}

Eigen::VectorXd MultiResolutionSearch::best_point_in_cell(const StrategyContext& context, const PartitionNode& cell,
                                                          const Eigen::VectorXd& f_star) const {
  // Candidates: the centre, a Sobol set mapped into the cell, and the tracked points inside it.
  const GaussianProcess& gp = *model_;
  Rng rng = make_rng(context.seed, RngStream::acquisition, context.ask_index + (std::uint64_t{1} << 32));
  const Eigen::MatrixXd sobol = sobol_points(context.space.dim(), 63, rng);
  std::vector<Eigen::VectorXd> points{cell.centre()};
  for (Eigen::Index j = 0; j < sobol.cols(); ++j)
    points.push_back(cell.lower + sobol.col(j).cwiseProduct(cell.upper - cell.lower));
  const Eigen::MatrixXd tracked = inputs_->units_of(gp.tracked_points());
  for (Eigen::Index j = 0; j < tracked.cols(); ++j)
    if ((tracked.col(j).array() >= cell.lower.array()).all() && (tracked.col(j).array() <= cell.upper.array()).all())
      points.push_back(tracked.col(j));
  std::vector<Observation> queries;
  Eigen::MatrixXd X(static_cast<Eigen::Index>(inputs_->dim()), static_cast<Eigen::Index>(points.size()));
  for (std::size_t j = 0; j < points.size(); ++j) {
    points[j] = context.space.snap(points[j]);
    X.col(static_cast<Eigen::Index>(j)) = model_input(points[j]);
    queries.push_back(Observation{PointQuery{X.col(static_cast<Eigen::Index>(j))}, 0.0, levels_ - 1});
  }
  Eigen::VectorXd mean, variance;
  gp.predict(X, mean, variance);
  const QueryScores scores(gp, queries, point_posteriors(mean, variance), f_star, options_);
  const Eigen::VectorXd success = success_probabilities(context, X);
  const Eigen::MatrixXd full_runs = full_run_inputs(context);
  // A point the kernel can hardly tell from a full-resolution run already made or pending is not
  // a new run: in a noise-free problem it repeats the work, and in a noisy one a point a little
  // further away informs as much. (Neighbouring cells meet on a face, and a cell's best point is
  // often on it: without this, two of them ran the same configuration.)
  const auto best = bounded_argmax_or_key(
      scores, [&](Eigen::Index i) { return 1.0 / success(i); },
      [&](Eigen::Index i) { return !repeats_a_full_run(X.col(i), full_runs); },
      [&](Eigen::Index i) { return likely_mean(mean(i), success(i)); },
      kNegligibleInformation);  // nothing to learn in the cell: its best guess
  if (!best) return points[0];  // every candidate repeats one: the centre, as the node's score assumed
  return points[static_cast<std::size_t>(best->index)];
}

std::set<std::pair<std::size_t, std::vector<double>>> MultiResolutionSearch::runs_by_level(
    const StrategyContext& context) const {
  std::set<std::pair<std::size_t, std::vector<double>>> ran;
  const auto& params = context.space.parameters();
  const bool discrete =
      std::any_of(params.begin(), params.end(), [](const Parameter& p) { return p.type != ParamType::floating; });
  if (!discrete || options_.allow_requery || options_.window == ObservationWindow::cell) return ran;
  const std::size_t top = levels_ - 1;
  for (const Trial& t : context.trials)
    ran.insert({std::min(t.level.value_or(top), top), unit_key(t.unit)});
  return ran;
}

const FailureProbability& MultiResolutionSearch::failure_probability(const StrategyContext& context) const {
  if (!failures_ || failures_refresh_ != refresh_count_) {
    failures_.emplace(context.trials, model_->kernel(), levels_, &inputs(context.space));
    failures_refresh_ = refresh_count_;
  }
  return *failures_;
}

Eigen::VectorXd MultiResolutionSearch::success_probabilities(const StrategyContext& context, const Eigen::MatrixXd& X) const {
  const FailureProbability& failures = failure_probability(context);
  Eigen::VectorXd success = Eigen::VectorXd::Ones(X.cols());
  if (failures.any_failure())
    for (Eigen::Index j = 0; j < X.cols(); ++j) success(j) = failures.success(X.col(j));
  return success;
}

Eigen::MatrixXd MultiResolutionSearch::full_run_inputs(const StrategyContext& context) const {
  const std::size_t top = levels_ - 1;
  std::vector<const Trial*> full;
  for (const Trial& t : context.trials)  // a failed full run too: not rerun
    if (t.level.value_or(top) >= top && static_cast<std::size_t>(t.unit.size()) == context.space.dim()) full.push_back(&t);
  Eigen::MatrixXd X(static_cast<Eigen::Index>(inputs_->dim()), static_cast<Eigen::Index>(full.size()));
  for (std::size_t j = 0; j < full.size(); ++j) X.col(static_cast<Eigen::Index>(j)) = model_input(full[j]->unit);
  return X;
}

bool MultiResolutionSearch::repeats_a_full_run(const Eigen::Ref<const Eigen::VectorXd>& x,
                                               const Eigen::MatrixXd& full_runs) const {
  const Kernel& kernel = model_->kernel();
  for (Eigen::Index j = 0; j < full_runs.cols(); ++j)
    if (kernel.scaled_sq_distance(full_runs.col(j), x) < kRepeatRadius * kRepeatRadius) return true;
  return false;
}

ProposalResult MultiResolutionSearch::propose_flat(const StrategyContext& context) {
  const std::size_t top = levels_ - 1;
  const std::size_t n_init = options_.initial_design > 0 ? options_.initial_design
                                                         : std::min<std::size_t>(2 * context.space.dim() + 1, 20);
  if ((design_index_ < n_init && design_index_ + imported_results(context.trials, top) < n_init) ||
      in_model_.size() < 2) {
    if (!full_run_fits(context, top)) return {std::nullopt, kNoFullRunFits};
    // In a discrete space the design's points snap onto few configurations (fewer still with
    // conditional parameters): one that has run at full resolution is not run again, as the
    // acquisition's choices are not (runs_by_level).
    const auto ran = runs_by_level(context);
    for (int attempt = 0; attempt < 1000; ++attempt) {
      Eigen::VectorXd u = shifted_sobol_point(context.space, context.seed, RngStream::initial_design, design_index_++);
      if (coincides_with_pending(u, context.trials) || ran.count({top, unit_key(u)})) continue;
      Proposal p{.unit = u, .source = "initial_design", .in_model = true, .model_size = in_model_.size()};
      p.level = top;
      return {p, {}};
    }
    if (in_model_.size() < 2) return {std::nullopt, "every point of the space has run or is pending"};
  }
  return propose_by_cmes(context, "acquisition");
}

ProposalResult MultiResolutionSearch::propose_by_cmes(const StrategyContext& context, const char* source) {
  const std::size_t top = levels_ - 1;
  if (!full_run_fits(context, top)) return {std::nullopt, kNoFullRunFits};
  if (in_model_.empty()) return {std::nullopt, "no trial has completed yet to model the objective"};
  refresh_if_due(context);
  GaussianProcess& gp = *model_;
  const std::size_t n_model = base_model_size();
  add_fantasies(context);

  // Candidates: the tracked Sobol set plus perturbations of the three best full-resolution results
  // (of the three best results before the first: a cheap level's values are on its own scale, and a
  // cheap level that reads higher everywhere would otherwise hold all three places).
  const Eigen::MatrixXd X = inputs_->units_of(gp.tracked_points());
  std::vector<std::uint64_t> best;
  for (std::uint64_t id : in_model_)
    if (context.trials[id].level.value_or(top) == top) best.push_back(id);
  if (best.empty()) best = in_model_;
  std::stable_sort(best.begin(), best.end(), [&](std::uint64_t a, std::uint64_t b) {
    return reward_of(*context.trials[a].value, context.direction) > reward_of(*context.trials[b].value, context.direction);
  });
  best.resize(std::min<std::size_t>(3, best.size()));
  Rng rng = make_rng(context.seed, RngStream::fallback, context.ask_index);
  const Eigen::Index extra = X.cols() / 8;
  Eigen::MatrixXd all(X.rows(), X.cols() + extra);
  all.leftCols(X.cols()) = X;
  for (Eigen::Index j = 0; j < extra; ++j) {
    Eigen::VectorXd u = context.trials[best[static_cast<std::size_t>(j) % best.size()]].unit;
    for (Eigen::Index k = 0; k < u.size(); ++k) u(k) = std::clamp(u(k) + 0.05 * standard_normal(rng), 0.0, 1.0);
    all.col(X.cols() + j) = context.space.snap(u);
  }
  const Eigen::VectorXd f_star = max_value_samples(gp, context.seed, context.ask_index);
  std::vector<Observation> queries;
  const Eigen::MatrixXd all_inputs = inputs_->columns(all);
  for (Eigen::Index j = 0; j < all.cols(); ++j) queries.push_back(Observation{PointQuery{all_inputs.col(j)}, 0.0, top});
  // The Sobol candidates are the model's tracked points, whose posterior it keeps current: only the
  // perturbations need a solve (O(n^2) each; 78 ms per ask on Hartmann-3 at 1600-1999 trials for all of them, 12 ms for these).
  Eigen::VectorXd mean, variance;
  gp.predict_tracked_and(all_inputs.rightCols(extra), mean, variance);
  const QueryScores scores(gp, queries, point_posteriors(mean, variance), f_star, options_);
  const Eigen::VectorXd success = success_probabilities(context, all_inputs);
  const Eigen::MatrixXd full_runs = full_run_inputs(context);
  // When no candidate carries more than negligible information about f* (kNegligibleInformation;
  // eventually every score underflows), the one where the model expects the most: the budget goes
  // to refining the optimum, not to the first candidate or to a far corner with 1e-15 nats.
  const auto chosen = bounded_argmax_or_key(
      scores, [&](Eigen::Index j) { return 1.0 / success(j); },
      [&](Eigen::Index j) { return !repeats_a_full_run(all_inputs.col(j), full_runs); },
      [&](Eigen::Index j) { return likely_mean(mean(j), success(j)); }, kNegligibleInformation);
  if (!chosen) return {std::nullopt, "every candidate point repeats a full-resolution run made or pending"};
  if (options_.stop_when_nothing_to_learn && chosen->ratio <= kNegligibleInformation)
    return {std::nullopt, kNothingLeftToLearn};
  Proposal p{.unit = all.col(chosen->index), .source = source, .in_model = true, .model_size = n_model,
             .acquisition = chosen->ratio};
  p.level = top;
  return {p, {}};
}

void MultiResolutionSearch::on_complete(const StrategyContext& context, const Trial& trial) {
  if (!trial.value) return;
  inputs(context.space);
  in_model_.push_back(trial.id);
  drop_fantasies();
  if (!model_) return;
  Observation o = observation_of(trial, context, reward_of(*trial.value, context.direction));
  if (std::isfinite(options_.refit_surprise_sd) && !o.offset_group && o.noise_group + 1 == levels_of(context)) {
    // Refit now rather than at the next ask, so that the recommendation made after this result
    // already comes from the refitted model.
    build_deferred_model();
    const Prediction p = model_->predict(o);
    const double sd = std::sqrt(p.variance + model_->noise_variance(o.noise_group));
    if (!(std::abs(o.value - p.mean) <= options_.refit_surprise_sd * sd)) {
      rebuild_model(context);
      return;
    }
  }
  if (deferred_) deferred_->observations.push_back(std::move(o));
  else model_->add(std::move(o));
}

std::optional<Recommendation> MultiResolutionSearch::recommend(const StrategyContext& context) const {
  build_deferred_model();
  drop_fantasies();
  if (!model_ || model_->size() == 0) return std::nullopt;
  const GaussianProcess& gp = *model_;
  // The argmax of a lower confidence bound, mean - kappa sd (kappa = recommendation_sd_penalty),
  // and only where there is data: the full-resolution trials' points (every trial's before the
  // first full run), then L-BFGS within a trust box around the eight best of them (clipped to the
  // cube, so an optimum on a face next to the data is reached).
  // With a few full-resolution runs the mean of f is loosely tied down: the plain argmax of the
  // mean over many candidates picks whichever is most over-estimated (the libsvm example's model
  // recommended 112.6% +- 18 accuracy), and a Sobol point far from every trial can carry a trend
  // extrapolated to a corner. Near a cheap run only, f is the cheap level seen through the model
  // of how levels relate: after a refit that model once put a Branin recommendation next to a
  // cheap run, 0.8 above the best full run's value. A recommendation is a promise to the user.
  const std::size_t top = levels_of(context) - 1;
  std::vector<std::size_t> with_data, at_top;
  for (std::size_t i = 0; i < context.trials.size(); ++i)
    if (context.trials[i].status == TrialStatus::complete) {
      with_data.push_back(i);
      if (context.trials[i].level.value_or(top) == top) at_top.push_back(i);
    }
  if (with_data.empty()) return std::nullopt;
  if (!at_top.empty()) with_data = std::move(at_top);
  const ModelInputs& in = inputs(context.space);
  Eigen::MatrixXd X(context.space.dim(), static_cast<Eigen::Index>(with_data.size()));
  for (std::size_t i = 0; i < with_data.size(); ++i) X.col(static_cast<Eigen::Index>(i)) = context.trials[with_data[i]].unit;
  const Acquisition lower_bound{AcquisitionType::ucb, -options_.recommendation_sd_penalty, 0.0};
  const std::vector<std::pair<double, Eigen::Index>> ranked = best_lower_bounds(gp, in.columns(X), lower_bound, 8);
  const std::size_t starts = ranked.size();
  std::vector<Eigen::Index> order;
  for (const auto& [score, j] : ranked) order.push_back(j);
  Eigen::VectorXd best = X.col(order[0]);
  double best_score = ranked[0].first;
  const auto snap = [&](const Eigen::VectorXd& u) { return context.space.snap(u); };
  const double radius = options_.recommendation_radius;
  for (std::size_t i = 0; i < starts; ++i) {
    const Eigen::VectorXd x = X.col(order[i]);
    const ScoredPoint p = refine_within(gp, lower_bound, snap, x, x.array() - radius, x.array() + radius, 60, &in);
    if (p.score > best_score) {
      best = p.x;
      best_score = p.score;
    }
  }
  const Prediction p = gp.predict(in(best));
  Recommendation r{best, p.mean, std::sqrt(p.variance)};
  // The sd is a promise too. With a few noisy full runs the fit can make the model sure of itself
  // (noise at the floor, values interpolated): a dogfooded campaign's recommendation said a loss of
  // -0.011 +- 0.020 where it gave 0.122. Its errors at the full runs, left out one at a time, show
  // it: the sd is scaled by their root mean square z when above 1 (the maximum-likelihood scale of
  // the predictive variances given those errors). The point chosen is the same.
  // At most the last 200 full runs: row i costs O((n - i)^2), so all of them would cost O(n^3) at
  // thousands of trials, and 200 z-scores give the scale to ~5%, measured where the search is now.
  std::vector<std::size_t> full_rows;
  for (std::size_t row = in_model_.size(); row-- > 0 && full_rows.size() < 200;)
    if (context.trials[in_model_[row]].level.value_or(top) == top) full_rows.push_back(row);
  if (gp.size() == in_model_.size()) {
    r.sd_scale = gp.leave_one_out_sd_scale(full_rows);
    r.sd *= r.sd_scale;
  }
  return r;
}

// ---- persistence ------------------------------------------------------------------------------

namespace {
using namespace option_fields;

template <class Options, class Visit>
void plain_fields(Options& o, Visit&& visit) {
  visit("max_depth", o.max_depth);
  visit("allow_requery", o.allow_requery);
  visit("continue_after_tree", o.continue_after_tree);
  visit("stop_when_nothing_to_learn", o.stop_when_nothing_to_learn);
  visit("max_value_samples", o.max_value_samples);
  visit("noisy_cmes", o.noisy_cmes);
  visit("quadrature_nodes", o.quadrature_nodes);
  visit("candidates", o.candidates);
  visit("initial_design", o.initial_design);
  visit("level_offsets", o.level_offsets);
  visit("full_resolution_depths", o.full_resolution_depths);
  visit("level_discrepancy", o.level_discrepancy);
  visit("level_scales", o.level_scales);
  visit("level_trends", o.level_trends);
  visit("level_discrepancy_lengthscales", o.level_discrepancy_lengthscales);
  visit("refit_surprise_sd", o.refit_surprise_sd);
  visit("recommendation_radius", o.recommendation_radius);
  visit("recommendation_sd_penalty", o.recommendation_sd_penalty);
}

}  // namespace

YAML::Node to_yaml(const MultiResolutionOptions& o) {
  FieldWriter top{YAML::Node(YAML::NodeType::Map)};
  top.node["variant"] = to_string(o.variant);
  top.node["window"] = to_string(o.window);
  top.node["level_choice"] = to_string(o.level_choice);
  top.node["full_resolution_point"] = to_string(o.full_resolution_point);
  top.node["sampler"] = to_string(o.sampler);
  top.node["kernel"] = to_string(o.kernel);
  top.node["categorical_encoding"] = to_string(o.categorical_encoding);
  plain_fields(o, top);
  if (!o.noise_sd.empty())
    top.node["noise_sd"] = yaml_vector(Eigen::Map<const Eigen::VectorXd>(o.noise_sd.data(), static_cast<Eigen::Index>(o.noise_sd.size())));
  write_model_groups(top.node, o);
  return top.node;
}

MultiResolutionOptions multi_resolution_options_from_yaml(const YAML::Node& n, bool tree) {
  MultiResolutionOptions o;
  o.tree = tree;
  if (!n || n.IsNull()) return o;
  if (!n.IsMap()) throw StateError("strategy options at " + position_of(n) + ": expected a map");
  if (n["variant"]) o.variant = parse_enum(n["variant"], "variant", cmets_variant_from_string);
  if (n["window"]) o.window = parse_enum(n["window"], "window", observation_window_from_string);
  if (n["level_choice"]) o.level_choice = parse_enum(n["level_choice"], "level_choice", level_choice_from_string);
  if (n["full_resolution_point"])
    o.full_resolution_point = parse_enum(n["full_resolution_point"], "full_resolution_point", full_resolution_point_from_string);
  if (n["sampler"]) o.sampler = parse_enum(n["sampler"], "sampler", max_value_sampler_from_string);
  if (n["kernel"]) o.kernel = parse_enum(n["kernel"], "kernel", kernel_type_from_string);
  if (n["categorical_encoding"]) {
    o.categorical_encoding =
        parse_enum(n["categorical_encoding"], "categorical_encoding", categorical_encoding_from_string);
    if (o.categorical_encoding == CategoricalEncoding::one_hot && o.window == ObservationWindow::cell)
      throw std::invalid_argument(
          "strategy option 'categorical_encoding: one_hot' cannot be used with 'window: cell', whose cheap runs "
          "average f over a box of the unit cube (a categorical's one coordinate): drop one of them");
  }
  if (n["noise_sd"]) o.noise_sd = read_doubles(n["noise_sd"], "noise_sd");
  FieldReader top{n, {"variant", "window", "level_choice", "full_resolution_point", "sampler", "kernel",
                      "categorical_encoding", "noise_sd", "refit", "fit"}};
  plain_fields(o, top);
  reject_unknown(n, top.known, "strategy options");
  read_model_groups(n, o);
  return o;
}

YAML::Node MultiResolutionSearch::save() const {
  YAML::Node node;
  node["name"] = name();
  node["options"] = to_yaml(options_);
  YAML::Node state;
  YAML::Node nodes(YAML::NodeType::Sequence), in_model(YAML::NodeType::Sequence);
  nodes.SetStyle(YAML::EmitterStyle::Flow);
  in_model.SetStyle(YAML::EmitterStyle::Flow);
  // Trials without a node are written as -1.
  for (NodeId n : trial_nodes_) nodes.push_back(n == no_node ? std::int64_t{-1} : static_cast<std::int64_t>(n));
  for (std::uint64_t id : in_model_) in_model.push_back(id);
  state["trial_nodes"] = nodes;
  state["in_model"] = in_model;
  state["design_index"] = design_index_;
  state["refresh_count"] = refresh_count_;
  state["size_at_refresh"] = size_at_refresh_;
  if (refresh_count_ > 0) write_gp_state(state, hyperparameters_, standardization_);
  if (!level_centres_.empty()) {
    YAML::Node centres;
    for (double c : level_centres_) centres.push_back(yaml_double(c));
    centres.SetStyle(YAML::EmitterStyle::Flow);
    state["level_centres"] = centres;
  }
  if (std::any_of(level_floors_.begin(), level_floors_.end(), [](const ValueFloor& f) { return f.exists(); })) {
    // One {fence, value} per level, ~ for a level without a floor.
    YAML::Node floors(YAML::NodeType::Sequence);
    for (const ValueFloor& f : level_floors_) floors.push_back(f.exists() ? value_floor_yaml(f) : YAML::Node());
    state["level_floors"] = floors;
  }
  node["state"] = state;
  return node;
}

void MultiResolutionSearch::restore(const YAML::Node& node, const StrategyContext& context) {
  const YAML::Node state = require(node, "state");
  dim_ = context.space.dim();
  levels_ = levels_of(context);
  trial_nodes_.clear();
  const YAML::Node nodes = require(state, "trial_nodes");
  if (!nodes.IsSequence()) throw StateError("field 'trial_nodes' at " + position_of(nodes) + ": expected a list");
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::int64_t v = read_int(nodes[i], "trial_nodes");
    trial_nodes_.push_back(v < 0 ? no_node : static_cast<NodeId>(v));
  }
  if (trial_nodes_.size() > context.trials.size())
    throw StateError("field 'trial_nodes' at " + position_of(nodes) + ": more entries than the study has trials");
  in_model_.clear();
  const YAML::Node in_model = require(state, "in_model");
  for (std::size_t i = 0; i < in_model.size(); ++i) {
    const std::uint64_t id = read_uint(in_model[i], "in_model");
    const Trial& t = trial_by_id(context.trials, id);
    if (t.status != TrialStatus::complete)
      throw StateError("in_model at " + position_of(in_model[i]) + ": trial " + std::to_string(id) + " is not complete");
    in_model_.push_back(id);
  }
  check_model_holds_results(
      in_model_, context.trials,
      [](const Trial& t) { return t.status == TrialStatus::complete && t.value.has_value(); }, "in_model", in_model);
  design_index_ = read_uint(require(state, "design_index"), "design_index");
  refresh_count_ = read_uint(require(state, "refresh_count"), "refresh_count");
  size_at_refresh_ = read_uint(require(state, "size_at_refresh"), "size_at_refresh");
  // A study saved before categorical_encoding existed was made with the one coordinate per parameter.
  const YAML::Node saved_options = node["options"];
  if (!saved_options || !saved_options.IsMap() || !saved_options["categorical_encoding"])
    options_.categorical_encoding = CategoricalEncoding::ordered;
  inputs_.reset();
  const ModelInputs& in = inputs(context.space);
  active_.reset();
  try {
    ensure_active_set(context);
  } catch (const std::invalid_argument& e) {
    throw StateError("field 'trial_nodes' at " + position_of(nodes) + ": " + e.what());
  }
  model_.reset();
  deferred_.reset();
  kept_.reset();
  node_targets_.clear();
  level_centres_.clear();
  if (state["level_centres"]) {
    level_centres_ = read_doubles(state["level_centres"], "level_centres");
    if (level_centres_.size() + 1 != levels_)
      throw StateError("field 'level_centres' at " + position_of(state["level_centres"]) + ": expected " +
                       std::to_string(levels_ - 1) + " values, one per level below the full resolution");
  }
  // Written since the floors exist; a state without them has none (its model was built without).
  level_floors_.clear();
  if (const YAML::Node floors = state["level_floors"]) {
    if (!floors.IsSequence() || floors.size() != levels_)
      throw StateError("field 'level_floors' at " + position_of(floors) + ": expected a list of " +
                       std::to_string(levels_) + " entries, one per level ({fence: F, value: V}, or ~ for none)");
    for (std::size_t l = 0; l < floors.size(); ++l)
      level_floors_.push_back(floors[l].IsNull() ? ValueFloor{} : read_value_floor(floors[l], "level_floors"));
  }
  if (refresh_count_ == 0) return;
  const YAML::Node hp = read_gp_state(state, hyperparameters_, standardization_);
  // The model as the last refresh left it, then the trials completed since, in the same order;
  // the observations are added at the model's first use (build_deferred_model).
  DeferredModel deferred;
  for (std::uint64_t id : in_model_)
    deferred.observations.push_back(
        observation_of(context.trials[id], context, reward_of(*context.trials[id].value, context.direction)));
  deferred.candidates = in.columns(candidate_points(context, refresh_count_ - 1));  // the set of the refresh that built it
  try {
    model_.emplace(in.dim(), hyperparameters_, standardization_);
    for (const Observation& o : deferred.observations) model_->check(o);  // refused now, not at the next ask
  } catch (const std::exception& e) {
    throw StateError(std::string("hyperparameters at ") + position_of(hp) + ": " + e.what());
  }
  deferred_ = std::move(deferred);
}

}  // namespace tune
