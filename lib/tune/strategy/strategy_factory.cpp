#include "tune/strategy/strategy_factory.hpp"

#include <stdexcept>

#include "tune/io/yaml_values.hpp"
#include "tune/strategy/bnb_strategy.hpp"
#include "tune/strategy/gpoo_strategy.hpp"
#include "tune/strategy/multi_resolution_search.hpp"
#include "tune/strategy/random_strategy.hpp"

namespace tune {

std::vector<std::string> strategy_names() { return {"random", "sobol", "ucb", "ei", "cmes", "cmets", "gpoo", "bnb"}; }


std::unique_ptr<Strategy> make_gp_bandit(AcquisitionType acquisition, GpBanditOptions options) {
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
  if (name == "cmes" || name == "cmets")
    return std::make_unique<MultiResolutionSearch>(multi_resolution_options_from_yaml(options, name == "cmets"));
  if (name == "gpoo") return std::make_unique<GpooStrategy>(gpoo_strategy_options_from_yaml(options));
  if (name == "bnb") return std::make_unique<BnbStrategy>(bnb_strategy_options_from_yaml(options));
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
