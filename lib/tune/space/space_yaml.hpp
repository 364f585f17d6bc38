#pragma once
// The search space and configurations as YAML:
//   lr:     {type: float, low: 1.0e-5, high: 1.0, log: true}
//   layers: {type: int, low: 1, high: 8}
//   act:    {type: categorical, choices: [relu, tanh]}
//   batch:  {type: ordinal, choices: [16, 32, 64]}
//   momentum: {type: float, low: 0, high: 0.99, when: {opt: [sgd]}}   (applies only when opt is sgd)
// Errors name the parameter, the line and column, and what is expected.
#include <yaml-cpp/yaml.h>

#include "tune/io/yaml_values.hpp"
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

// The two readers below take a yaml-cpp node or a record line's FlowNode (tune/io/flow_yaml.hpp,
// whose readers are found by argument-dependent lookup): one definition for both.

// One parameter's value as its type reads it (a float, a whole number, or text); throws StateError
// naming `field` and the node's position.
template <class Node>
Value value_from_yaml(const Parameter& parameter, const Node& node, const std::string& field) {
  switch (parameter.type) {
    case ParamType::floating: return read_double(node, field);
    case ParamType::integer: return read_int(node, field);
    default: return read_string(node, field);
  }
}

// A configuration: a map of parameter values, each read as its parameter's type says.
template <class Node>
Config config_from_yaml(const Space& space, const Node& node) {
  if (!node.IsMap()) throw StateError("config at " + position_of(node) + ": expected a map of parameter values");
  Config config;
  for (const auto& kv : entries_of(node)) {
    const std::string name = key_text(kv.first);
    const Parameter* p = space.find(name);
    if (!p) throw StateError("config at " + position_of(kv.first) + ": unknown parameter '" + name + "'");
    config[name] = value_from_yaml(*p, kv.second, name);
  }
  return config;
}

}  // namespace tune
