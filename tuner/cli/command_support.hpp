#pragma once
// Helpers shared by several subcommands (commands.hpp declares the ones other parts of `tune` use
// too: holds_campaign, lock_campaign, parse_number).
#include <cstddef>
#include <string>

#include "tune/space/space.hpp"
#include "tune/study/resolution.hpp"

namespace tune::tuner {

// A resolution level's value as the trial receives it (3, not 3.000000; 100000, not 1e+05).
std::string level_value(const Resolution& resolution, std::size_t level);

// A configuration as a JSON object, its parameters in the space's order (tune best and tune ask --json).
std::string config_json(const Space& space, const Config& c);

}  // namespace tune::tuner
