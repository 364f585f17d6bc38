#pragma once
// Strategies by name: random, sobol, ucb, ei, cmes, cmets, gpoo, bnb. `options` are the strategy's
// options as YAML (the GP bandit options for ucb and ei, the strategy's own for the others; none
// for the baselines). Throws std::invalid_argument naming the name or the option for an unknown
// name, an unknown (misspelt) option, a value of the wrong type or out of range, or options that
// are not a map; options that depend on the study (the space's dimension, the resolution's levels)
// are checked when the Study is made.
#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <vector>

#include "tune/strategy/gp_bandit.hpp"
#include "tune/strategy/strategy.hpp"

namespace tune {

std::vector<std::string> strategy_names();
// What to do with an option the named strategy reads but does not use (`{name: ei, beta_scale: 0.5}`):
// refused in what a user writes now; accepted in what was saved, which an earlier version took
// (a campaign's state.yaml must still load, resume and report).
enum class UnusedOptions { refuse, accept };
std::unique_ptr<Strategy> make_strategy(const std::string& name, const YAML::Node& options = YAML::Node(),
                                        UnusedOptions unused = UnusedOptions::refuse);
std::unique_ptr<Strategy> make_gp_bandit(AcquisitionType acquisition, GpBanditOptions options = {});

}  // namespace tune
