#include "tune/strategy/strategy_factory.hpp"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "tune/io/yaml_values.hpp"
#include "tune/strategy/bnb_strategy.hpp"
#include "tune/strategy/gpoo_strategy.hpp"
#include "tune/strategy/multi_resolution_search.hpp"
#include "tune/strategy/option_fields.hpp"
#include "tune/strategy/random_strategy.hpp"

namespace tune {

std::vector<std::string> strategy_names() { return {"random", "sobol", "ucb", "ei", "cmes", "cmets", "gpoo", "bnb"}; }


std::unique_ptr<Strategy> make_gp_bandit(AcquisitionType acquisition, GpBanditOptions options) {
  options.acquisition = acquisition;
  return std::make_unique<GpBandit>(std::move(options));
}

namespace {

// An option one strategy reads (so the shared reader accepts it for every strategy with that reader)
// but another does not use: `{name: ei, beta_scale: 0.5}` was accepted and changed nothing, and the
// user believed ei explored less. Refused like an unknown key, saying whose option it is.
struct UnusedOption {
  std::vector<std::string> strategies;  // the strategies that do not use it
  std::string key;                      // dotted: fit.discrepancy_min
  std::string owner;                    // "ucb's"
  std::string why;                      // what the strategy does instead
  // Unused only in some modes of the strategy: the mode's option, its default, and the modes that
  // leave `key` unused (the reader has refused an unknown mode by then).
  std::string mode_key{}, mode_default{};
  std::vector<std::string> unused_in{};
};

const std::vector<UnusedOption>& unused_options() {
  static const std::vector<UnusedOption> table = [] {
    std::vector<UnusedOption> t;
    const std::string ei_why = "its exploration is set by the expected improvement itself, which has no such "
                               "parameter; strategy ucb has one";
    t.push_back({{"ei"}, "beta_scale", "ucb's", ei_why});
    t.push_back({{"ei"}, "delta", "ucb's", ei_why});
    // The model of how cheaper resolution levels relate to the full one (offsets, discrepancies,
    // scales, trends, per-level noise pooling): ei, ucb, gpoo and bnb model one level.
    for (const char* group : {"discrepancy", "scale", "trend", "discrepancy_lengthscale_factor"})
      for (const char* part : {"_min", "_max", "_prior_log_median", "_prior_log_sd"})
        t.push_back({{"ei", "ucb", "gpoo", "bnb"}, std::string("fit.") + group + part, "cmets's and cmes's",
                     "it fits how cheaper resolution levels relate to the full one; this strategy's model has one level"});
    t.push_back({{"ei", "ucb", "gpoo", "bnb"}, "fit.noise_pooling_log_sd", "cmets's and cmes's",
                 "it pools the noise of the resolution levels; this strategy's model has one level"});
    t.push_back({{"ei", "ucb"}, "max_skipped_steps", "on_reject: literal's",
                 "it counts the rejections in a row of the literal policy; the others stop, or go on, by their own rule",
                 "on_reject", "next_informative", {"next_informative", "evaluate_no_add", "stop"}});
    for (const char* key : {"output_transform", "fit"})
      t.push_back({{"ei", "ucb"}, key, "fit_hyperparameters: true's",
                   "its kernel is the hyperparameters as given, never fitted, and the results as told", "fit_hyperparameters",
                   "true", {"false"}});
    t.push_back({{"gpoo"}, "beta_scale", "gpoo's with beta: code",
                 "beta: theory is 2 log(M pi^2 t^2 / (6 beta_theta)), with no factor", "beta", "theory", {"theory"}});
    t.push_back({{"gpoo"}, "delta_c", "gpoo's with delta: paper", "delta: geometric is delta_z sigma_f D1(cell)",
                 "delta", "geometric", {"geometric"}});
    t.push_back({{"gpoo"}, "delta_z", "gpoo's with delta: geometric", "delta: paper is delta_c 2^-h", "delta",
                 "geometric", {"paper"}});
    for (const char* key : {"max_depth", "variant", "full_resolution_depths", "level_choice", "full_resolution_point",
                            "continue_after_tree"})
      t.push_back({{"cmes"}, key, "cmets's",
                   "cmes searches no tree of cells: every trial is a full run chosen by CMES over the whole space"});
    t.push_back({{"cmets"}, "initial_design", "cmes's (and ei's, ucb's)",
                 "cmets starts from its tree's root cell, not from a Sobol design"});
    // bnb assumes a noise-free objective: its noise stays at fit.noise_min, never fitted.
    // `fit: {fit_noise: true}` was accepted and ignored, the user believing bnb allowed for noise.
    const std::string bnb_noise = "bnb never fits a noise: it assumes a noise-free objective and keeps the noise at "
                                  "fit.noise_min; use ei or ucb for a noisy objective";
    for (const char* key : {"fit.fit_noise", "fit.noise_max", "fit.noise_prior_log_median", "fit.noise_prior_log_sd",
                            "fit.smooth_start_noise"})
      t.push_back({{"bnb"}, key, "the noise-fitting strategies'", bnb_noise});
    return t;
  }();
  return table;
}

// Whether `options` are as a strategy's save() writes them: every key of `all` (its options struct
// written with defaults), the unused ones too (GpBandit's to_yaml writes beta_scale for ei). A saved
// study loads as it was saved; a user's options name a few keys, and those are checked.
// Keys a save() began to write later are not required: a study saved before has the others.
bool saved_form(const YAML::Node& options, const YAML::Node& all) {
  static const std::set<std::string> added_later = {"categorical_encoding"};
  for (const auto& kv : all)
    if (!options[kv.first.Scalar()] && !added_later.count(kv.first.Scalar())) return false;
  return true;
}

// Options is the strategy's options struct (its type gives the keys the strategy's save() writes).
template <class Options>
void refuse_unused_options(const std::string& name, const YAML::Node& options, UnusedOptions unused, const Options&) {
  if (unused == UnusedOptions::accept || !options || !options.IsMap() || saved_form(options, to_yaml(Options{}))) return;
  for (const UnusedOption& u : unused_options()) {
    if (std::find(u.strategies.begin(), u.strategies.end(), name) == u.strategies.end()) continue;
    const YAML::Node value = option_fields::node_at(options, u.key);
    if (!value) continue;
    std::string user = name;
    if (!u.mode_key.empty()) {
      const YAML::Node mode = options[u.mode_key];
      const std::string m = mode && mode.IsScalar() ? mode.Scalar() : u.mode_default;
      if (std::find(u.unused_in.begin(), u.unused_in.end(), m) == u.unused_in.end()) continue;
      user += " with " + u.mode_key + ": " + m;
    }
    throw std::invalid_argument("strategy option '" + u.key + "' is " + u.owner + "; " + user +
                                " does not use it (" + u.why + ")");
  }
}

std::unique_ptr<Strategy> make_named_strategy(const std::string& name, const YAML::Node& options, UnusedOptions unused) {
  const bool has_options = options && !options.IsNull() && !(options.IsMap() && options.size() == 0);
  if (name == "random" || name == "sobol") {
    if (has_options) throw std::invalid_argument("strategy '" + name + "' takes no options");
    if (name == "random") return std::make_unique<RandomStrategy>();
    return std::make_unique<SobolStrategy>();
  }
  // Read first (a misspelt key, a wrong type, an unknown value are the reader's), then refuse an
  // option this strategy does not use, then construct (which checks the ranges of those it uses).
  if (name == "ucb" || name == "ei") {
    GpBanditOptions o = gp_bandit_options_from_yaml(options);
    if (options && options["acquisition"] && o.acquisition != acquisition_type_from_string(name))
      throw std::invalid_argument("strategy '" + name + "' with a different 'acquisition' option");
    refuse_unused_options(name, options, unused, o);
    return make_gp_bandit(acquisition_type_from_string(name), std::move(o));
  }
  if (name == "cmes" || name == "cmets") {
    MultiResolutionOptions o = multi_resolution_options_from_yaml(options, name == "cmets");
    refuse_unused_options(name, options, unused, o);
    return std::make_unique<MultiResolutionSearch>(std::move(o));
  }
  if (name == "gpoo") {
    GpooStrategyOptions o = gpoo_strategy_options_from_yaml(options);
    refuse_unused_options(name, options, unused, o);
    return std::make_unique<GpooStrategy>(std::move(o));
  }
  if (name == "bnb") {
    BnbStrategyOptions o = bnb_strategy_options_from_yaml(options);
    refuse_unused_options(name, options, unused, o);
    return std::make_unique<BnbStrategy>(std::move(o));
  }
  std::string list;
  for (const std::string& n : strategy_names()) list += (list.empty() ? "" : ", ") + n;
  const std::vector<std::string> names = strategy_names();
  const std::string hint = option_fields::did_you_mean(name, {names.begin(), names.end()});
  throw std::invalid_argument("unknown strategy '" + name + "': " + hint + "expected one of " + list);
}

// The reader's "unknown key 'k' in GROUP at ...; did you mean 'x'? known keys: a, b, c" for strategy
// `name` without the keys it never uses (ei's reader, shared with ucb, listed ucb's beta_scale and
// delta, which ei then refused as ucb's). Keys unused only in some mode stay: another mode uses them.
std::string without_unused_keys(const std::string& message, const std::string& name) {
  const std::string marker = "known keys: ", in = "' in ";
  const std::size_t at = message.rfind(marker), group_at = message.find(in);
  if (at == std::string::npos || group_at == std::string::npos) return message;
  // A group's keys (fit, refit) are listed by their own names: fit.noise_max as noise_max.
  const std::size_t group_end = message.find(" at ", group_at);
  const std::string group = message.substr(group_at + in.size(), group_end - group_at - in.size());
  const std::string prefix = group == "strategy options" ? "" : group + ".";
  std::set<std::string> unused;
  for (const UnusedOption& u : unused_options())
    if (u.mode_key.empty() && u.key.starts_with(prefix) && u.key.find('.', prefix.size()) == std::string::npos &&
        std::find(u.strategies.begin(), u.strategies.end(), name) != u.strategies.end())
      unused.insert(u.key.substr(prefix.size()));
  std::string list;
  std::stringstream keys(message.substr(at + marker.size()));
  for (std::string key; std::getline(keys, key, ',');) {
    key.erase(0, key.find_first_not_of(' '));
    if (!unused.count(key)) list += (list.empty() ? "" : ", ") + key;
  }
  std::string head = message.substr(0, at);
  for (const std::string& key : unused)  // a suggestion of an unused key would be refused next
    if (const std::string hint = "did you mean '" + key + "'? "; head.size() >= hint.size() && head.ends_with(hint))
      head.erase(head.size() - hint.size());
  return head + marker + list;
}

}  // namespace

std::unique_ptr<Strategy> make_strategy(const std::string& name, const YAML::Node& options, UnusedOptions unused) {
  try {
    return make_named_strategy(name, options, unused);
  } catch (const StateError& e) {
    // The options' reader reports a misspelt key, a wrong type or an unknown value as a StateError
    // (a std::runtime_error), which a program catching std::invalid_argument for its bad options,
    // as the header promises, did not catch. Same message, the documented type.
    throw std::invalid_argument(without_unused_keys(e.what(), name));
  }
}

}  // namespace tune
