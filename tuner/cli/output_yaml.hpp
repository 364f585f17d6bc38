#pragma once
// The YAML that `tune ask` and `tune best` print for other programs to read. A choice is text, but
// written plainly YAML readers take `true`, `yes`, `0x10`, `1.10` or `null` for a boolean, a number
// or nothing (PyYAML read the choice "true" as True, "0x10" as 16): the choices of categorical and
// ordinal parameters are written in double quotes, as --json writes them as strings.
#include <string>

#include <yaml-cpp/yaml.h>

#include "tune/space/space.hpp"

namespace tune::tuner {

// The configuration as a block map in the space's order, each choice marked to be quoted.
YAML::Node config_for_readers(const Space& space, const Config& config);

// A choice as a scalar marked to be quoted (the choices of a recommended region).
YAML::Node quoted_text(const std::string& text);

// The node as YAML::Emitter writes it (its maps' and lists' styles kept), the marked choices in
// double quotes.
std::string emit_for_readers(const YAML::Node& node);

}  // namespace tune::tuner
