#pragma once
// The search space and configurations as YAML:
//   lr:     {type: float, low: 1.0e-5, high: 1.0, log: true}
//   layers: {type: int, low: 1, high: 8}
//   act:    {type: categorical, choices: [relu, tanh]}
//   batch:  {type: ordinal, choices: [16, 32, 64]}
// Errors name the parameter, the line and column, and what is expected.
#include <yaml-cpp/yaml.h>

#include "tune/space/space.hpp"

namespace tune {

YAML::Node space_to_yaml(const Space& space);
Space space_from_yaml(const YAML::Node& node);  // throws StateError (or SpaceError with position)

YAML::Node config_to_yaml(const Space& space, const Config& config);  // flow style
// The layout of a configuration, for either writer of tune/io/flow_yaml.hpp: the value of each
// parameter the config holds, in the space's order; floats as numbers, the others as their text.
template <class Writer>
void write_config(Writer& writer, const Space& space, const Config& config) {
  writer.begin_map();
  for (const Parameter& p : space.parameters()) {
    const auto it = config.find(p.name);
    if (it == config.end()) continue;
    writer.key(p.name);
    if (const double* d = std::get_if<double>(&it->second)) writer.number(*d);
    else writer.string(to_string(it->second));
  }
  writer.end_map();
}
Config config_from_yaml(const Space& space, const YAML::Node& node);
// One parameter's value as its type reads it (a float, a whole number, or text); throws StateError
// naming `field` and the node's position.
Value value_from_yaml(const Parameter& parameter, const YAML::Node& node, const std::string& field);

}  // namespace tune
