#include "tune/strategy/gp_bandit.hpp"

#include <algorithm>
#include <limits>
#include <cmath>
#include <set>
#include <sstream>

#include "tune/io/yaml_values.hpp"
#include "tune/space/sampling.hpp"
#include "tune/strategy/failure_probability.hpp"
#include "tune/strategy/gp_state_yaml.hpp"
#include "tune/strategy/option_fields.hpp"
#include "tune/strategy/random_strategy.hpp"

namespace tune {

namespace {
// The unit points of every trial made, running or failed (unit_key).
std::set<std::vector<double>> configurations_run(const std::vector<Trial>& trials) {
  std::set<std::vector<double>> ran;
  for (const Trial& t : trials) ran.insert(unit_key(t.unit));
  return ran;
}

bool every_configuration_ran(const Space& space, const std::set<std::vector<double>>& ran) {
  return space.is_finite() && ran.size() >= space.grid_size();
}

std::string every_configuration_ran_message(const std::set<std::vector<double>>& ran) {
  return "every configuration of the space has run or is running (" + std::to_string(ran.size()) +
         "), and the objective is deterministic";
}

// The point of a finite space, not yet run, with the highest acquisition; none if every
// configuration has run or the space is too large to list.
std::optional<ScoredPoint> best_untried_configuration(const GaussianProcess& gp, const Acquisition& acquisition,
                                                      const Space& space, const ModelInputs& inputs,
                                                      const std::set<std::vector<double>>& ran) {
  constexpr std::size_t kMaxListed = std::size_t{1} << 16;
  const std::size_t size = space.grid_size();
  if (size == 0 || size > kMaxListed || ran.size() >= size) return std::nullopt;
  std::optional<ScoredPoint> best;
  const auto consider = [&](const Eigen::VectorXd& x) {
    if (ran.count(unit_key(x))) return;
    const Prediction p = gp.predict(inputs(x));
    const double score = acquisition.score(p.mean, p.variance);
    if (!best || score > best->score) best = ScoredPoint{x, score, p.variance};
  };
  // With conditions, the configurations (the grid of every parameter's values holds each several times).
  if (space.has_conditions()) {
    for (const Eigen::VectorXd& x : space.grid_points(kMaxListed)) consider(x);
    return best;
  }
  Eigen::VectorXd u(static_cast<Eigen::Index>(space.dim()));
  for (std::size_t index = 0; index < size; ++index) {
    std::size_t rest = index;
    for (std::size_t i = 0; i < space.dim(); ++i) {
      const std::size_t k = space.parameters()[i].cardinality();
      u[static_cast<Eigen::Index>(i)] = (static_cast<double>(rest % k) + 0.5) / static_cast<double>(k);
      rest /= k;
    }
    consider(space.snap(u));
  }
  return best;
}
}  // namespace

double GpBanditOptions::effective_epsilon() const {
  if (horizon > 0.0 && schedule_alpha > 0.0) return epsilon_schedule(horizon, schedule_alpha);
  return epsilon;
}

std::size_t GpBanditOptions::initial_design_size(std::size_t dim) const {
  if (initial_design > 0) return initial_design;
  return std::min<std::size_t>(2 * dim + 1, 20);
}

namespace {
std::string option_error(const std::string& key, const std::string& requirement, double got) {
  return "strategy option '" + key + "' must be " + requirement + " (got " + format_double(got) + ")";
}

}  // namespace

// The bounds, priors and schedule of the GP strategies' hyperparameter fit. Before, they were not
// checked: {fit: {lengthscale_min: 5, lengthscale_max: 1}} was accepted, the initial design ran,
// and every later ask threw "the marginal likelihood could not be evaluated at any start";
// {fit: {noise_min: -1}} threw "kernel: lengthscales must be positive and finite".
void check_fit_options(const HyperparameterFitOptions& f, const RefitSchedule& refit) {
  const auto bounds = [](const char* name, double low, double high) {
    const std::string min = std::string("fit.") + name + "_min", max = std::string("fit.") + name + "_max";
    if (!(std::isfinite(low) && low > 0)) throw std::invalid_argument(option_error(min, "a finite number > 0", low));
    if (!(std::isfinite(high) && high > 0)) throw std::invalid_argument(option_error(max, "a finite number > 0", high));
    if (low > high)
      throw std::invalid_argument("strategy option '" + min + "' (" + format_double(low) + ") exceeds '" + max + "' (" +
                                  format_double(high) + "); give " + min + " <= " + max);
  };
  bounds("lengthscale", f.lengthscale_min, f.lengthscale_max);
  bounds("outputscale", f.outputscale_min, f.outputscale_max);
  bounds("noise", f.noise_min, f.noise_max);
  bounds("discrepancy", f.discrepancy_min, f.discrepancy_max);
  bounds("scale", f.scale_min, f.scale_max);
  bounds("trend", f.trend_min, f.trend_max);
  bounds("discrepancy_lengthscale_factor", f.discrepancy_lengthscale_factor_min, f.discrepancy_lengthscale_factor_max);
  if (!(std::isfinite(f.lengthscale_prior_median_1d) && f.lengthscale_prior_median_1d > 0))
    throw std::invalid_argument(
        option_error("fit.lengthscale_prior_median_1d", "a finite number > 0", f.lengthscale_prior_median_1d));
  const auto finite = [](const char* name, double v) {
    if (!std::isfinite(v)) throw std::invalid_argument(option_error(std::string("fit.") + name, "finite", v));
  };
  finite("lengthscale_prior_log_sd", f.lengthscale_prior_log_sd);
  for (const auto& [name, prior] : {std::pair<const char*, const LogNormalPrior&>{"outputscale", f.outputscale_prior},
                                    {"noise", f.noise_prior},
                                    {"discrepancy", f.discrepancy_prior},
                                    {"scale", f.scale_prior},
                                    {"trend", f.trend_prior},
                                    {"discrepancy_lengthscale_factor", f.discrepancy_lengthscale_factor_prior}}) {
    finite((std::string(name) + "_prior_log_median").c_str(), prior.log_median);
    finite((std::string(name) + "_prior_log_sd").c_str(), prior.log_sd);
  }
  if (!(std::isfinite(f.noise_pooling_log_sd) && f.noise_pooling_log_sd >= 0))
    throw std::invalid_argument(
        option_error("fit.noise_pooling_log_sd", "a finite number >= 0 (0: no pooling)", f.noise_pooling_log_sd));
  if (!(std::isfinite(f.smooth_start_noise) && f.smooth_start_noise >= 0))
    throw std::invalid_argument(
        option_error("fit.smooth_start_noise", "a finite number >= 0 (0: no such start)", f.smooth_start_noise));
  if (f.max_evaluations == 0)
    throw std::invalid_argument("strategy option 'fit.max_evaluations' must be >= 1 (evaluations per start)");
  if (!(std::isfinite(refit.growth) && refit.growth >= 0))
    throw std::invalid_argument(option_error("refit.growth", "a finite number >= 0", refit.growth));
}

GpBandit::GpBandit(GpBanditOptions options) : options_(std::move(options)) {
  check_fit_options(options_.fit, options_.refit);
  if (options_.epsilon < 0.0 || !std::isfinite(options_.epsilon))
    throw std::invalid_argument("strategy option 'epsilon' must be a finite number >= 0 (0 = exact GP)");
  // Each option by its own name, so that a campaign file's error points at its line.
  if (!(std::isfinite(options_.horizon) && options_.horizon >= 0.0))
    throw std::invalid_argument(option_error("horizon", "a finite number >= 0 (0: no schedule)", options_.horizon));
  if (!(std::isfinite(options_.schedule_alpha) && options_.schedule_alpha >= 0.0))
    throw std::invalid_argument(
        option_error("schedule_alpha", "a finite number >= 0 (0: no schedule)", options_.schedule_alpha));
  // The schedule needs both. Before, either one alone was accepted and ignored: `{name: ei, horizon:
  // 1000}` ran the exact GP (epsilon 0) with no word, and `epsilon` given beside the schedule was
  // silently replaced by it.
  if ((options_.horizon > 0.0) != (options_.schedule_alpha > 0.0)) {
    const bool horizon = options_.horizon > 0.0;
    throw std::invalid_argument(std::string("strategy option '") + (horizon ? "horizon" : "schedule_alpha") +
                                "' needs '" + (horizon ? "schedule_alpha" : "horizon") +
                                "' > 0 too: together they set epsilon = 1/2 log(1 + horizon^-schedule_alpha) "
                                "(e.g. horizon: 1000, schedule_alpha: 0.5); or give 'epsilon' alone");
  }
  if (options_.horizon > 0.0 && options_.epsilon > 0.0)
    throw std::invalid_argument("strategy option 'epsilon' (" + format_double(options_.epsilon) +
                                ") would be replaced by the schedule of 'horizon' and 'schedule_alpha' (epsilon " +
                                format_double(options_.effective_epsilon()) + "); give one or the other");
  // The literal policy stops at the max_skipped_steps-th rejection in a row; 0 ("stop before any
  // rejection") cannot be done, and stopped at the first, as 1 does, with no word.
  if (options_.max_skipped_steps == 0)
    throw std::invalid_argument("strategy option 'max_skipped_steps' must be >= 1 (got 0): the rejections in a row "
                                "after which on_reject: literal stops the study, 1 at the first");
  if (!(options_.delta > 0.0 && options_.delta < 1.0))
    throw std::invalid_argument("strategy option 'delta' must lie in (0, 1)");
  // An infinite factor made every UCB score infinite, so the first candidate won every ask.
  if (!(std::isfinite(options_.beta_scale) && options_.beta_scale > 0.0))
    throw std::invalid_argument(option_error("beta_scale", "a finite number > 0, e.g. 0.2", options_.beta_scale));
  // The acquisition's maximisation. A perturbation_fraction above 1 asked for more perturbations
  // than candidates, and the Sobol set's size (the rest) wrapped around: the first ask after the
  // initial design died with std::bad_alloc.
  const AcquisitionOptimizerOptions& opt = options_.optimizer;
  if (!(std::isfinite(opt.perturbation_fraction) && opt.perturbation_fraction >= 0.0 &&
        opt.perturbation_fraction < 1.0))
    throw std::invalid_argument(option_error("optimizer.perturbation_fraction",
                                             "a share of the candidates in [0, 1), e.g. 0.125 (the rest are a Sobol set)",
                                             opt.perturbation_fraction));
  if (!(std::isfinite(opt.perturbation_sd) && opt.perturbation_sd >= 0.0))
    throw std::invalid_argument(option_error("optimizer.perturbation_sd",
                                             "a finite number >= 0 (the spread of the perturbations in the unit cube), e.g. 0.05",
                                             opt.perturbation_sd));
  if (!options_.fit_hyperparameters && !options_.hyperparameters)
    throw std::invalid_argument("fit_hyperparameters is false but no hyperparameters were given");
  // Given hyperparameters hold one lengthscale per parameter: the model keeps each categorical's
  // coordinate, and the saved options say so.
  if (options_.hyperparameters) options_.categorical_encoding = CategoricalEncoding::ordered;
  // Checked here rather than when the model is first built, after the initial design has run, by a
  // message ("kernel: lengthscales must be positive and finite") that named no option.
  if (const std::optional<GpHyperparameters>& h = options_.hyperparameters) {
    for (const double l : h->lengthscales)
      if (!(std::isfinite(l) && l > 0))
        throw std::invalid_argument("strategy option 'hyperparameters.lengthscales' must hold finite numbers > 0 (got " +
                                    format_double(l) + ")");
    if (!(std::isfinite(h->outputscale) && h->outputscale > 0))
      throw std::invalid_argument("strategy option 'hyperparameters.outputscale' must be a finite number > 0 (got " +
                                  format_double(h->outputscale) + ")");
    for (const double v : h->noise_variances)
      if (!(std::isfinite(v) && v > 0))
        throw std::invalid_argument("strategy option 'hyperparameters.noise_variance' must be a finite number > 0 (got " +
                                    format_double(v) + ")");
  }
}

void GpBandit::check_space(const Space& space) const {
  // Before, the count was first checked when the model was built after the initial design, by
  // asks that threw "GP: 2 lengthscales for a 1-dimensional input" once those trials had run.
  if (options_.hyperparameters && static_cast<std::size_t>(options_.hyperparameters->lengthscales.size()) != space.dim())
    throw std::invalid_argument("strategy option 'hyperparameters.lengthscales' has " +
                                std::to_string(options_.hyperparameters->lengthscales.size()) + " values for " +
                                std::to_string(space.dim()) + " parameters (" + parameter_names(space) +
                                "); give one lengthscale per parameter, in the space's order");
}

Observation GpBandit::raw_observation_of(const Trial& trial, Direction direction) const {
  return Observation{PointQuery{inputs_->operator()(trial.unit)}, reward_of(*trial.value, direction), 0};
}

const ModelInputs& GpBandit::inputs(const Space& space) const {
  if (!inputs_) inputs_.emplace(space, options_.categorical_encoding);
  return *inputs_;
}

Observation GpBandit::observation_of(const Trial& trial, Direction direction) const {
  Observation o = raw_observation_of(trial, direction);
  o.value = transform_(o.value);
  return o;
}

ProposalResult GpBandit::propose(const StrategyContext& context) {
  const std::size_t n_init = options_.initial_design_size(context.space.dim());
  // (the scan of the trials for imported results only while the design may still run)
  if ((design_index_ < n_init && design_index_ + imported_results(context.trials) < n_init) || dictionary_.size() < 2) {
    const std::set<std::vector<double>> ran = options_.repeat_configurations ? std::set<std::vector<double>>{}
                                                                              : configurations_run(context.trials);
    for (int attempt = 0; attempt < 1000; ++attempt) {
      Eigen::VectorXd u = shifted_sobol_point(context.space, context.seed, RngStream::initial_design, design_index_++);
      if (coincides_with_pending(u, context.trials) || ran.count(unit_key(u))) continue;
      return {Proposal{.unit = u, .source = "initial_design", .in_model = true, .model_size = dictionary_.size()}, {}};
    }
    if (!options_.repeat_configurations) {
      if (every_configuration_ran(context.space, ran)) return {std::nullopt, every_configuration_ran_message(ran)};
      // A small finite space can run out of fresh design points; the model then picks among the rest.
      if (dictionary_.size() >= 2) return propose_from_model(context);
    }
    return {std::nullopt, "every point of the space is pending"};
  }
  return propose_from_model(context);
}

void GpBandit::refresh_if_due(const StrategyContext& context) {
  const ModelInputs& in = inputs(context.space);
  HyperparameterFitOptions fit = options_.fit;
  fit.lengthscale_prior_median_1d *= in.lengthscale_prior_factor();
  const std::size_t n = dictionary_.size();
  if (model_) {
    const RefitSchedule& s = options_.refit;
    if (s.every == 0 && s.growth <= 0.0) return;
    const auto by_growth = static_cast<std::size_t>(std::ceil(s.growth * static_cast<double>(n)));
    if (n - size_at_refresh_ < std::max<std::size_t>({s.every, by_growth, 1})) return;
  }
  std::vector<Observation> raw;
  raw.reserve(n);
  for (std::uint64_t id : dictionary_) raw.push_back(raw_observation_of(trial_by_id(context.trials, id), context.direction));
  if (refresh_count_ == 0)
    hyperparameters_ = options_.hyperparameters
                           ? *options_.hyperparameters
                           : default_hyperparameters(options_.kernel, in.dim(), 1, fit);
  std::vector<Observation> observations;
  // The transform and the hyperparameters depend on each other: choose the transform under the
  // current hyperparameters, fit them on its values, then choose again under the fitted ones and,
  // if that changes the choice, fit once more.
  const auto fit_model = [&](int round) {
    observations = transformed(raw, transform_);
    standardization_ = options_.standardize ? standardization_of(observations) : Standardization{};
    if (options_.fit_hyperparameters) {
      // Round 0 draws what the fit always drew (so `none` reproduces the plain GP bit for bit).
      Rng rng = make_rng(context.seed, RngStream::hyperparameter_fit, refresh_count_ + (round == 0 ? 0 : std::uint64_t{1} << 32));
      hyperparameters_ = fit_hyperparameters(observations, standardization_, hyperparameters_, fit, rng).hyperparameters;
    }
  };
  // Fixed hyperparameters describe the values as told: a warping chosen from the data would change
  // what they mean, so they get none.
  const OutputTransformKind kind = options_.fit_hyperparameters ? options_.output_transform : OutputTransformKind::none;
  const ValueFloor previous_floor = transform_.floor;
  transform_ = fit_output_transform(raw, kind, hyperparameters_, previous_floor);
  fit_model(0);
  if (kind != OutputTransformKind::none) {
    const OutputTransform again = fit_output_transform(raw, kind, hyperparameters_, previous_floor);
    if (again.active != transform_.active || again.lambda != transform_.lambda || again.shift != transform_.shift) {
      transform_ = again;
      fit_model(1);
    }
  }
  deferred_.reset();
  model_.emplace(in.dim(), hyperparameters_, standardization_);
  model_->add(std::move(observations));
  model_->track(in.columns(candidate_set(context.space, context.seed, refresh_count_)));
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

namespace {
// Candidates weighed by the probability that their run succeeds (failure_probability.hpp): log EI
// plus log(1 - P_fail), i.e. the expected improvement of a run that may fail; UCB's optimistic value
// has no such reading, so candidates more likely to fail than not rank after all the others.
void weigh_by_success(std::vector<ScoredPoint>& ranked, const FailureProbability& failures, AcquisitionType type,
                      const ModelInputs& inputs) {
  std::vector<std::pair<bool, double>> key(ranked.size());  // (likely to fail, score)
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    const double success = failures.success(inputs(ranked[i].x));
    if (type == AcquisitionType::ei) ranked[i].score += std::log(success);
    key[i] = {type == AcquisitionType::ucb && success < 0.5, ranked[i].score};
  }
  std::vector<std::size_t> order(ranked.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (key[a].first != key[b].first) return key[b].first;
    return key[a].second > key[b].second;
  });
  std::vector<ScoredPoint> sorted;
  sorted.reserve(ranked.size());
  for (std::size_t i : order) sorted.push_back(std::move(ranked[i]));
  ranked = std::move(sorted);
}
}  // namespace

ProposalResult GpBandit::propose_from_model(const StrategyContext& context) {
  refresh_if_due(context);
  build_deferred_model();
  GaussianProcess& gp = *model_;
  const ModelInputs& in = inputs(context.space);
  const std::size_t n_model = gp.size();

  // Best retained rewards: the EI incumbent and the anchors of local candidates.
  std::vector<std::size_t> order(n_model);
  for (std::size_t i = 0; i < n_model; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return gp.observations()[a].value > gp.observations()[b].value;
  });
  std::vector<Eigen::VectorXd> anchors;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, n_model); ++i)
    anchors.push_back(in.unit_of(location(gp.observations()[order[i]].query)));

  // Each pending trial's fantasy is the posterior mean given the fantasies before it, so that, to
  // the last bit, it leaves the mean where it was; so is a failed trial's, but no better than the
  // median reward where runs fail more often than not (failed_run_ceiling), so that a failing
  // configuration is not proposed again.
  const FailureProbability failures(context.trials, gp.kernel(), 0, &in);
  double ceiling = 0.0;
  if (failures.any_failure()) {
    std::vector<double> rewards(n_model);
    for (std::size_t i = 0; i < n_model; ++i) rewards[i] = gp.observations()[i].value;
    ceiling = failed_run_ceiling(std::move(rewards));
  }
  // The failed trials' fantasies stay in the model's factor between asks (attach_fantasy_tail);
  // the pending trials' come after them and are made afresh.
  const TruncateOnExit drop_fantasies(gp);
  std::vector<Observation> failed;
  std::vector<double> caps;
  for (const Trial& t : context.trials)
    if (t.status == TrialStatus::failed) {
      failed.push_back(Observation{PointQuery{in(t.unit)}, 0.0, 0});
      caps.push_back(failures.fails_here(in(t.unit)) ? ceiling : std::numeric_limits<double>::infinity());
    }
  gp.attach_fantasy_tail(std::move(failed), caps);
  for (const Trial& t : context.trials)
    if (t.status == TrialStatus::pending) {
      const Eigen::VectorXd x = in(t.unit);
      gp.add(Observation{PointQuery{x}, gp.predict(x).mean, 0});
    }

  Acquisition acquisition;
  acquisition.type = options_.acquisition;
  acquisition.incumbent = n_model > 0 ? gp.observations()[order[0]].value : 0.0;
  const std::size_t n_candidates = options_.optimizer.candidate_count(context.space.dim());
  const double epsilon = options_.effective_epsilon();
  const double noise = gp.noise_variance(0);
  const double rho = variance_ratio_threshold(epsilon);
  const SnapFunction snap = [&](const Eigen::VectorXd& x) { return context.space.snap(x); };
  const std::set<std::vector<double>> ran = options_.repeat_configurations ? std::set<std::vector<double>>{}
                                                                            : configurations_run(context.trials);

  for (std::size_t attempt = 0;; ++attempt) {
    const std::size_t t = context.trials.size() + skipped_.size() + 1;
    acquisition.sqrt_beta = std::sqrt(ucb_beta(t, n_candidates, options_.delta, options_.beta_scale));
    Rng rng(mix64(derive_seed(context.seed, RngStream::acquisition, context.ask_index) ^ attempt));
    std::vector<ScoredPoint> ranked = rank_acquisition(gp, acquisition, snap, anchors, options_.optimizer, rng, &in);
    if (failures.any_failure()) weigh_by_success(ranked, failures, options_.acquisition, in);
    if (!options_.repeat_configurations) {
      std::erase_if(ranked, [&](const ScoredPoint& p) { return ran.count(unit_key(p.x)) > 0; });
      if (ranked.empty()) {
        const std::optional<ScoredPoint> untried = best_untried_configuration(gp, acquisition, context.space, in, ran);
        if (!untried)
          return {std::nullopt, every_configuration_ran(context.space, ran)
                                    ? every_configuration_ran_message(ran)
                                    : "every candidate point repeats a configuration that has run"};
        ranked.push_back(*untried);
      }
    }
    auto first_free = std::find_if(ranked.begin(), ranked.end(),
                                   [&](const ScoredPoint& p) { return !coincides_with_pending(p.x, context.trials); });
    if (first_free == ranked.end()) return {std::nullopt, "every candidate point is already pending"};
    const InformationTest test = information_test(gp.predict(in(first_free->x)).variance, noise, epsilon);
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
          const InformationTest t2 = information_test(gp.predict(in(it->x)).variance, noise, epsilon);
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
  inputs(context.space);
  dictionary_.push_back(trial.id);
  if (deferred_) deferred_->observations.push_back(observation_of(trial, context.direction));
  else if (model_) model_->add(observation_of(trial, context.direction));  // incremental between refreshes
}

std::optional<Recommendation> GpBandit::recommend(const StrategyContext& context) const {
  build_deferred_model();
  if (!model_ || model_->size() == 0) return std::nullopt;
  // A noisy result's value is one draw: the luckiest of many is optimistic by about the noise, and
  // a model that averages the neighbourhood says more of the configuration than its own result.
  std::vector<const Trial*> complete;
  for (const Trial& t : context.trials)
    if (t.status == TrialStatus::complete) complete.push_back(&t);
  if (complete.empty()) return std::nullopt;
  const ModelInputs& in = inputs(context.space);
  Eigen::MatrixXd X(static_cast<Eigen::Index>(in.dim()), static_cast<Eigen::Index>(complete.size()));
  for (std::size_t i = 0; i < complete.size(); ++i) X.col(static_cast<Eigen::Index>(i)) = in(complete[i]->unit);
  // Means only (O(n) each); the variance, O(n^2), at the chosen one.
  Eigen::Index at = 0;
  model_->predict_mean(X).maxCoeff(&at);
  const Trial* best = complete[static_cast<std::size_t>(at)];
  const Prediction at_best = model_->predict(in(best->unit));
  Recommendation r;
  r.unit = best->unit;
  // The sd is a promise too, and a misspecified fit makes it small where the model is wrong (the
  // libsvm example, 10 trials from 54% to 99% accuracy: 99.74 +- 0.008 at a configuration that gave
  // 98.61). Its errors at the trials, each left out, show it: scaled by their root mean square z
  // when above 1, as cmets does (at most the last 200 rows: row i costs O((n - i)^2)).
  const std::size_t n = model_->size();
  std::vector<std::size_t> rows;
  for (std::size_t row = n; row-- > 0 && rows.size() < 200;) rows.push_back(row);
  r.sd_scale = model_->leave_one_out_sd_scale(rows);
  const double sd = r.sd_scale * std::sqrt(std::max(0.0, at_best.variance));
  r.mean = transform_.inverse(at_best.mean);
  r.sd = 0.5 * (transform_.inverse(at_best.mean + sd) - transform_.inverse(at_best.mean - sd));
  return r;
}

void GpBandit::build_deferred_model() const {
  if (!deferred_) return;
  model_->add(std::move(deferred_->observations));
  model_->track(std::move(deferred_->candidates));
  deferred_.reset();
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
  if (refresh_count_ > 0) write_gp_state(state, hyperparameters_, standardization_);
  write_output_transform(state, transform_);
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
  check_model_holds_results(
      dictionary_, context.trials,
      [](const Trial& t) { return t.status == TrialStatus::complete && t.in_model && t.value.has_value(); },
      "dictionary", dictionary);
  design_index_ = read_uint(require(state, "design_index"), "design_index");
  refresh_count_ = read_uint(require(state, "refresh_count"), "refresh_count");
  size_at_refresh_ = read_uint(require(state, "size_at_refresh"), "size_at_refresh");
  skipped_.clear();
  const YAML::Node skipped = require(state, "skipped_steps");
  for (std::size_t i = 0; i < skipped.size(); ++i)
    skipped_.push_back({read_uint(require(skipped[i], "ask"), "skipped_steps.ask"),
                        read_vector(require(skipped[i], "unit"), "skipped_steps.unit"),
                        read_double(require(skipped[i], "test_statistic"), "skipped_steps.test_statistic")});
  transform_ = read_output_transform(state);
  model_.reset();
  deferred_.reset();
  // A study saved before categorical_encoding existed was made with the one coordinate per parameter.
  const YAML::Node saved_options = node["options"];
  if (!saved_options || !saved_options.IsMap() || !saved_options["categorical_encoding"])
    options_.categorical_encoding = CategoricalEncoding::ordered;
  inputs_.reset();
  const ModelInputs& in = inputs(context.space);
  if (refresh_count_ == 0) return;
  const YAML::Node hp = read_gp_state(state, hyperparameters_, standardization_);
  DeferredModel deferred;
  for (std::uint64_t id : dictionary_) deferred.observations.push_back(observation_of(context.trials[id], context.direction));
  deferred.candidates = in.columns(candidate_set(context.space, context.seed, refresh_count_ - 1));
  try {
    model_.emplace(in.dim(), hyperparameters_, standardization_);  // checks the hyperparameters now
  } catch (const std::exception& e) {
    throw StateError(std::string("hyperparameters at ") + position_of(hp) + ": " + e.what());
  }
  deferred_ = std::move(deferred);
}

namespace {

// The plain option fields, listed once for both directions (write and read), grouped as in the
// YAML. `o` is a GpBanditOptions or a const one; `visit(key, field)` is called for each field.
template <class Options, class Visit>
void top_level_fields(Options& o, Visit&& visit) {
  visit("epsilon", o.epsilon);
  visit("horizon", o.horizon);
  visit("schedule_alpha", o.schedule_alpha);
  visit("max_skipped_steps", o.max_skipped_steps);
  visit("repeat_configurations", o.repeat_configurations);
  visit("beta_scale", o.beta_scale);
  visit("delta", o.delta);
  visit("initial_design", o.initial_design);
  visit("fit_hyperparameters", o.fit_hyperparameters);
  visit("standardize", o.standardize);
}

template <class Options, class Visit>
void optimizer_fields(Options& o, Visit&& visit) {
  visit("candidates", o.optimizer.candidates);
  visit("local_starts", o.optimizer.local_starts);
  visit("local_max_evaluations", o.optimizer.local_max_evaluations);
  visit("perturbation_fraction", o.optimizer.perturbation_fraction);
  visit("perturbation_sd", o.optimizer.perturbation_sd);
}

}  // namespace

using namespace option_fields;

YAML::Node to_yaml(const GpBanditOptions& o) {
  FieldWriter top{YAML::Node(YAML::NodeType::Map)};
  top.node["acquisition"] = to_string(o.acquisition);
  top.node["on_reject"] = to_string(o.on_reject);
  top.node["kernel"] = to_string(o.kernel);
  top.node["categorical_encoding"] = to_string(o.categorical_encoding);
  top.node["output_transform"] = to_string(o.output_transform);
  top_level_fields(o, top);
  if (o.hyperparameters) {
    top.node["hyperparameters"]["lengthscales"] = yaml_vector(o.hyperparameters->lengthscales);
    top.node["hyperparameters"]["outputscale"] = yaml_double(o.hyperparameters->outputscale);
    top.node["hyperparameters"]["noise_variance"] = yaml_double(o.hyperparameters->noise_variances.at(0));
  }
  write_model_groups(top.node, o);
  FieldWriter optimizer{YAML::Node(YAML::NodeType::Map)};
  optimizer_fields(o, optimizer);
  top.node["optimizer"] = optimizer.node;
  return top.node;
}

GpBanditOptions gp_bandit_options_from_yaml(const YAML::Node& n) {
  GpBanditOptions o;
  if (!n || n.IsNull()) return o;
  if (!n.IsMap()) throw StateError("strategy options at " + position_of(n) + ": expected a map");
  if (n["acquisition"]) o.acquisition = parse_enum(n["acquisition"], "acquisition", acquisition_type_from_string);
  if (n["on_reject"]) o.on_reject = parse_enum(n["on_reject"], "on_reject", reject_policy_from_string);
  if (n["kernel"]) o.kernel = parse_enum(n["kernel"], "kernel", kernel_type_from_string);
  if (n["output_transform"])
    o.output_transform = parse_enum(n["output_transform"], "output_transform", output_transform_kind_from_string);
  if (n["categorical_encoding"]) {
    o.categorical_encoding =
        parse_enum(n["categorical_encoding"], "categorical_encoding", categorical_encoding_from_string);
    if (o.categorical_encoding == CategoricalEncoding::one_hot && n["hyperparameters"])
      throw std::invalid_argument(
          "strategy option 'categorical_encoding: one_hot' cannot be used with 'hyperparameters', which give one "
          "lengthscale per parameter (a categorical's one coordinate): drop one of them");
  }
  FieldReader top{n, {"acquisition", "on_reject", "kernel", "categorical_encoding", "output_transform",
                      "hyperparameters", "refit", "fit", "optimizer"}};
  top_level_fields(o, top);
  reject_unknown(n, top.known, "strategy options");
  if (const YAML::Node hp = n["hyperparameters"]) {
    GpHyperparameters h;
    h.kernel = o.kernel;
    h.lengthscales = read_vector(require(hp, "lengthscales"), "hyperparameters.lengthscales");
    h.outputscale = read_double(require(hp, "outputscale"), "hyperparameters.outputscale");
    h.noise_variances = {read_double(require(hp, "noise_variance"), "hyperparameters.noise_variance")};
    reject_unknown(hp, {"lengthscales", "outputscale", "noise_variance"}, "hyperparameters");
    o.hyperparameters = h;
  }
  read_model_groups(n, o);
  read_group(n, "optimizer", o, [](GpBanditOptions& x, FieldReader& r) { optimizer_fields(x, r); });
  return o;
}

}  // namespace tune
