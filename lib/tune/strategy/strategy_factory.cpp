#include "tune/strategy/strategy_factory.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "tune/io/yaml_values.hpp"
#include "tune/strategy/bnb_strategy.hpp"
#include "tune/strategy/gpoo_strategy.hpp"
#include "tune/strategy/multi_resolution_search.hpp"
#include "tune/strategy/random_strategy.hpp"

namespace tune {

std::vector<std::string> strategy_names() { return {"random", "sobol", "ucb", "ei", "cmes", "cmets", "gpoo", "bnb"}; }

namespace {

std::string option_error(const std::string& key, const std::string& requirement, double got) {
  return "strategy option '" + key + "' must be " + requirement + " (got " + format_double(got) + ")";
}

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

}  // namespace

std::unique_ptr<Strategy> make_gp_bandit(AcquisitionType acquisition, GpBanditOptions options) {
  check_fit_options(options.fit, options.refit);
  options.acquisition = acquisition;
  return std::make_unique<GpBandit>(std::move(options));
}

namespace {

std::unique_ptr<Strategy> make_named_strategy(const std::string& name, const YAML::Node& options) {
  const bool has_options = options && !options.IsNull() && !(options.IsMap() && options.size() == 0);
  if (name == "random" || name == "sobol") {
    if (has_options) throw std::invalid_argument("strategy '" + name + "' takes no options");
    if (name == "random") return std::make_unique<RandomStrategy>();
    return std::make_unique<SobolStrategy>();
  }
  if (name == "ucb" || name == "ei") {
    GpBanditOptions o = gp_bandit_options_from_yaml(options);
    if (options && options["acquisition"] && o.acquisition != acquisition_type_from_string(name))
      throw std::invalid_argument("strategy '" + name + "' with a different 'acquisition' option");
    return make_gp_bandit(acquisition_type_from_string(name), std::move(o));
  }
  if (name == "cmes" || name == "cmets") {
    MultiResolutionOptions o = multi_resolution_options_from_yaml(options, name == "cmets");
    check_fit_options(o.fit, o.refit);
    return std::make_unique<MultiResolutionSearch>(std::move(o));
  }
  if (name == "gpoo") {
    GpooStrategyOptions o = gpoo_strategy_options_from_yaml(options);
    check_fit_options(o.fit, o.refit);
    return std::make_unique<GpooStrategy>(std::move(o));
  }
  if (name == "bnb") {
    BnbStrategyOptions o = bnb_strategy_options_from_yaml(options);
    check_fit_options(o.fit, o.refit);
    return std::make_unique<BnbStrategy>(std::move(o));
  }
  std::string list;
  for (const std::string& n : strategy_names()) list += (list.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown strategy '" + name + "': expected one of " + list);
}

}  // namespace

std::unique_ptr<Strategy> make_strategy(const std::string& name, const YAML::Node& options) {
  try {
    return make_named_strategy(name, options);
  } catch (const StateError& e) {
    // The options' reader reports a misspelt key, a wrong type or an unknown value as a StateError
    // (a std::runtime_error), which a program catching std::invalid_argument for its bad options,
    // as the header promises, did not catch. Same message, the documented type.
    throw std::invalid_argument(e.what());
  }
}

}  // namespace tune
