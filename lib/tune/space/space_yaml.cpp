#include "tune/space/space_yaml.hpp"

#include <cmath>
#include <set>

#include "tune/io/flow_yaml.hpp"
#include "tune/io/yaml_values.hpp"

namespace tune {

YAML::Node space_to_yaml(const Space& space) {
  YAML::Node node(YAML::NodeType::Map);
  for (const Parameter& p : space.parameters()) {
    YAML::Node n;
    n.SetStyle(YAML::EmitterStyle::Flow);
    switch (p.type) {
      case ParamType::floating:
      case ParamType::integer:
        n["type"] = p.type == ParamType::floating ? "float" : "int";
        n["low"] = yaml_double(p.low);
        n["high"] = yaml_double(p.high);
        if (p.scale == Scale::log) n["log"] = true;
        break;
      case ParamType::categorical:
      case ParamType::ordinal: {
        n["type"] = p.type == ParamType::categorical ? "categorical" : "ordinal";
        YAML::Node choices(YAML::NodeType::Sequence);
        for (const std::string& c : p.choices) choices.push_back(c);
        n["choices"] = choices;
        break;
      }
    }
    if (p.condition) {
      YAML::Node values(YAML::NodeType::Sequence);
      for (const std::string& v : p.condition->values) values.push_back(v);
      YAML::Node when(YAML::NodeType::Map);
      when[p.condition->parent] = values;
      n["when"] = when;
    }
    node[p.name] = n;
  }
  return node;
}

namespace {
// `when: {opt: [sgd, rmsprop]}` (or `when: {opt: sgd}`): one parent and the values under which the
// parameter applies. The space checks that they exist.
Condition condition_from_yaml(const YAML::Node& when, const std::string& where, const std::string& field) {
  const std::string example = "; write e.g. 'when: {opt: [sgd, rmsprop]}' (the parameter applies only when opt is "
                              "sgd or rmsprop)";
  if (!when.IsMap() || when.size() != 1)
    throw StateError(where + " at " + position_of(when) + ": 'when' must map one parent parameter to its values" +
                     example);
  const auto entry = when.begin();
  Condition condition;
  condition.parent = read_string(entry->first, field);
  const YAML::Node values = entry->second;
  if (values.IsScalar()) {
    condition.values.push_back(read_string(values, field + "." + condition.parent));
  } else if (values.IsSequence()) {
    for (std::size_t i = 0; i < values.size(); ++i)
      condition.values.push_back(read_string(values[i], field + "." + condition.parent));
  } else {
    throw StateError(where + " at " + position_of(values) + ": the values of 'when' must be a value or a list" +
                     example);
  }
  return condition;
}
}  // namespace

Space space_from_yaml(const YAML::Node& node) {
  if (!node.IsMap() || node.size() == 0)
    throw StateError("space at " + position_of(node) + ": expected a map of parameters, e.g. "
                     "'lr: {type: float, low: 1.0e-5, high: 1.0, log: true}'");
  std::vector<Parameter> params;
  for (const auto& kv : node) {
    const std::string name = kv.first.as<std::string>();
    const YAML::Node& p = kv.second;
    const std::string where = "parameter '" + name + "'";
    if (!p.IsMap()) throw StateError(where + " at " + position_of(p) + ": expected a map such as {type: float, low: 0, high: 1}");
    // Keys are checked before the required ones are read, so that a misspelt `lo:` is named as the
    // unknown key it is rather than reported as a missing `low`.
    const std::string field = "space." + name;
    const YAML::Node type_node = p["type"];
    const std::string given = type_node && type_node.IsScalar() ? type_node.Scalar() : std::string();
    std::set<std::string> known{"type", "low", "high", "log", "choices", "when"};  // of every type, while it is unknown
    if (given == "float" || given == "int") known = {"type", "low", "high", "log", "when"};
    if (given == "categorical" || given == "ordinal") known = {"type", "choices", "when"};
    check_known_keys(p, field, known);
    const std::string type = read_string(require(p, "type", field + ".type"), field + ".type");
    Parameter param;
    if (type == "float" || type == "int") {
      const double low = read_double(require(p, "low", field + ".low"), field + ".low");
      const double high = read_double(require(p, "high", field + ".high"), field + ".high");
      const Scale scale = p["log"] && read_bool(p["log"], field + ".log") ? Scale::log : Scale::linear;
      if (type == "float") {
        param = Parameter::floating(name, low, high, scale);
      } else {
        if (low != std::floor(low) || high != std::floor(high))
          throw StateError(where + " at " + position_of(p) + ": integer bounds must be whole numbers");
        param = Parameter::integer(name, static_cast<std::int64_t>(low), static_cast<std::int64_t>(high), scale);
      }
    } else if (type == "categorical" || type == "ordinal") {
      const YAML::Node choices = require(p, "choices", field + ".choices");
      if (!choices.IsSequence()) throw StateError(where + " at " + position_of(choices) + ": 'choices' must be a list");
      std::vector<std::string> values;
      for (std::size_t i = 0; i < choices.size(); ++i) values.push_back(read_string(choices[i], field + ".choices"));
      param = type == "categorical" ? Parameter::categorical(name, values) : Parameter::ordinal(name, values);
    } else {
      throw StateError(where + " at " + position_of(p["type"]) + ": unknown type '" + type +
                       "'; expected float, int, categorical or ordinal");
    }
    if (const YAML::Node when = p["when"]) param.condition = condition_from_yaml(when, where, field + ".when");
    params.push_back(std::move(param));
  }
  try {
    return Space(std::move(params));
  } catch (const SpaceError& e) {
    // A parameter's error at its own line ("parameter 'm' at line 7, column 6: ..."), as the other
    // errors above are; the space's line otherwise.
    const std::string what = e.what();
    const std::string prefix = "parameter '" + e.parameter() + "'";
    if (!e.parameter().empty() && what.starts_with(prefix + ":"))
      for (const auto& kv : node)
        if (kv.first.Scalar() == e.parameter())
          throw SpaceError(prefix + " at " + position_of(kv.second) + what.substr(prefix.size()), e.parameter());
    throw SpaceError(what + " (space at " + position_of(node) + ")");
  }
}

YAML::Node config_to_yaml(const Space& space, const Config& config) {
  YamlNodeWriter writer;
  write_config(writer, space, config);
  YAML::Node node = writer.node();
  node.SetStyle(YAML::EmitterStyle::Flow);
  return node;
}

}  // namespace tune
