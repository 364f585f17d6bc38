#include "tune/space/space.hpp"

#include "tune/io/flow_yaml.hpp"
#include "tune/io/printable_text.hpp"
#include "tune/io/yaml_values.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <system_error>
#include <utility>

namespace tune {

namespace {

// Integer bounds must be exactly representable as doubles (and their differences too).
constexpr double max_integer_bound = 9007199254740992.0;  // 2^53

std::string quoted(const std::string& name) { return "'" + name + "'"; }

[[noreturn]] void fail(const Parameter& p, const std::string& what) {
  throw SpaceError("parameter " + quoted(p.name) + ": " + what, p.name);
}

double clamp01(double u) {
  if (!(u > 0.0)) return 0.0;  // also maps NaN to 0
  if (u > 1.0) return 1.0;
  return u;
}

bool is_whole(double x) { return std::isfinite(x) && std::floor(x) == x; }


}  // namespace

std::size_t cell_index(double u, std::size_t k) {
  const double scaled = std::floor(clamp01(u) * static_cast<double>(k));
  if (scaled <= 0.0) return 0;
  if (scaled >= static_cast<double>(k - 1)) return k - 1;
  return static_cast<std::size_t>(scaled);
}

double cell_centre(std::size_t i, std::size_t k) {
  return (static_cast<double>(i) + 0.5) / static_cast<double>(k);
}

namespace {

// Log-scale integers live on t = log(v) over [log(low - 0.5), log(high + 0.5)].
double int_log_lo(const Parameter& p) { return std::log(p.low - 0.5); }
double int_log_hi(const Parameter& p) { return std::log(p.high + 0.5); }

void validate(const Parameter& p, std::size_t position) {
  if (p.name.empty()) {
    throw SpaceError("parameter #" + std::to_string(position) +
                     " has an empty name; give every parameter a unique, non-empty name");
  }
  // Built by appends: GCC 12 reports a false -Wrestrict on "literal" + std::string here.
  std::string range = "[";
  range += format_double(p.low);
  range += ", ";
  range += format_double(p.high);
  range += "]";
  switch (p.type) {
    case ParamType::floating:
    case ParamType::integer: {
      if (!std::isfinite(p.low) || !std::isfinite(p.high)) {
        fail(p, "bounds low and high must be finite (got " + range + "); use finite bounds");
      }
      const bool integer = p.type == ParamType::integer;
      if (integer) {
        if (!is_whole(p.low) || !is_whole(p.high)) {
          fail(p, "integer bounds low and high must be whole numbers (got " + range +
                      "); round them or make the parameter floating");
        }
        if (std::fabs(p.low) > max_integer_bound || std::fabs(p.high) > max_integer_bound) {
          fail(p, "integer bounds low and high must lie within +-2^53 (got " + range +
                      "); narrow the range");
        }
        if (p.low > p.high) {
          fail(p, "low must not exceed high (got " + range + "); swap the bounds");
        }
        if (p.low == p.high) {
          fail(p, "has a single value; remove it from the space or widen the range (low = high = " +
                      format_double(p.low) + ")");
        }
      } else {
        if (p.low >= p.high) {
          fail(p, "low must be less than high (got " + range +
                      "); swap the bounds or widen the range");
        }
        if (!std::isfinite(p.high - p.low)) {
          fail(p, "the range high - low overflows (got " + range + "); narrow the range");
        }
      }
      if (p.scale == Scale::log && !(p.low > 0.0)) {
        fail(p, "log scale needs low > 0 (got " + range +
                    "); use a positive low bound or linear scale");
      }
      break;
    }
    case ParamType::categorical:
    case ParamType::ordinal: {
      if (p.choices.empty()) {
        fail(p, "has no choices; list at least two choices");
      }
      std::set<std::string> seen;
      for (const auto& c : p.choices) {
        if (!seen.insert(c).second) {
          fail(p, "duplicate choice '" + c + "'; list each of the choices once");
        }
      }
      if (p.choices.size() == 1) {
        fail(p, "has a single value ('" + p.choices.front() +
                    "'); remove it from the space or add choices");
      }
      break;
    }
  }
}

const char* alternative_name(const Value& v) {
  switch (v.index()) {
    case 0: return "a float";
    case 1: return "an integer";
    default: return "a string";
  }
}

double encode_one(const Parameter& p, const Value& v) {
  switch (p.type) {
    case ParamType::floating: {
      double x;
      if (const auto* d = std::get_if<double>(&v)) {
        x = *d;
      } else if (const auto* i = std::get_if<std::int64_t>(&v)) {
        x = static_cast<double>(*i);
      } else {
        fail(p, "expected a float, got " + std::string(alternative_name(v)) + " (" + to_string(v) +
                    ")");
      }
      if (!(x >= p.low && x <= p.high)) {
        fail(p, "value " + to_string(v) + " is outside the range [" + format_double(p.low) + ", " +
                    format_double(p.high) + "]");
      }
      if (x <= p.low) return 0.0;
      if (x >= p.high) return 1.0;
      double u;
      if (p.scale == Scale::log) {
        u = (std::log(x) - std::log(p.low)) / (std::log(p.high) - std::log(p.low));
      } else {
        u = (x - p.low) / (p.high - p.low);
      }
      return clamp01(u);
    }
    case ParamType::integer: {
      double x;
      if (const auto* i = std::get_if<std::int64_t>(&v)) {
        x = static_cast<double>(*i);
      } else if (const auto* d = std::get_if<double>(&v)) {
        if (!is_whole(*d)) {
          fail(p, "expected an integer, got the non-whole number " + to_string(v));
        }
        x = *d;
      } else {
        fail(p, "expected an integer, got a string (" + to_string(v) + ")");
      }
      if (!(x >= p.low && x <= p.high)) {
        fail(p, "value " + to_string(v) + " is outside the range [" + format_double(p.low) + ", " +
                    format_double(p.high) + "]");
      }
      if (p.scale == Scale::log) {
        const double lo = int_log_lo(p);
        return clamp01((std::log(x) - lo) / (int_log_hi(p) - lo));
      }
      const double k = p.high - p.low + 1.0;
      return (x - p.low + 0.5) / k;
    }
    case ParamType::categorical:
    case ParamType::ordinal: {
      std::string s;
      if (const auto* str = std::get_if<std::string>(&v)) {
        s = *str;
      } else if (p.type == ParamType::ordinal) {
        s = to_string(v);
      } else {
        fail(p, "expected one of the choices (a string), got " + std::string(alternative_name(v)) +
                    " (" + to_string(v) + ")");
      }
      const auto it = std::find(p.choices.begin(), p.choices.end(), s);
      if (it == p.choices.end()) {
        std::string list;
        for (const auto& c : p.choices) list += (list.empty() ? "'" : ", '") + c + "'";
        fail(p, "value '" + s + "' is not one of the choices " + list);
      }
      return cell_centre(static_cast<std::size_t>(it - p.choices.begin()), p.choices.size());
    }
  }
  fail(p, "unknown parameter type");
}

Value decode_one(const Parameter& p, double u) {
  u = clamp01(u);
  switch (p.type) {
    case ParamType::floating: {
      if (u <= 0.0) return p.low;
      if (u >= 1.0) return p.high;
      double x;
      if (p.scale == Scale::log) {
        const double lo = std::log(p.low);
        x = std::exp(lo + u * (std::log(p.high) - lo));
      } else {
        x = p.low + u * (p.high - p.low);
      }
      return std::clamp(x, p.low, p.high);
    }
    case ParamType::integer: {
      double x;
      if (p.scale == Scale::log) {
        const double lo = int_log_lo(p);
        x = std::round(std::exp(lo + u * (int_log_hi(p) - lo)));
      } else {
        const double k = p.high - p.low + 1.0;
        x = std::floor(u * k);
        x = std::clamp(x, 0.0, k - 1.0) + p.low;
      }
      return static_cast<std::int64_t>(std::clamp(x, p.low, p.high));
    }
    case ParamType::categorical:
    case ParamType::ordinal:
      return p.choices[cell_index(u, p.choices.size())];
  }
  fail(p, "unknown parameter type");
}

}  // namespace

std::string to_string(const Value& value) {
  if (const auto* d = std::get_if<double>(&value)) return format_double(*d);
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  return std::get<std::string>(value);
}

namespace {
// A name or choice as a YAML flow map writes it: a choice "ta,nh" or "a: b" is quoted, so that the
// text reads back as the configuration (it printed {act: ta,nh}). Non-ASCII text stays as typed.
std::string flow_text(const std::string& text) {
  const auto is_control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == '\x7f'; };
  if (std::none_of(text.begin(), text.end(), is_control) && flow_scalar_form(text) != FlowScalarForm::double_quoted)
    return text;
  std::string out = "\"";
  for (const char c : text) {
    // A line break inside quotes reads back as a space, and broke `tune status`'s table.
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (is_control(c))
      out += printable_text(std::string_view(&c, 1));  // \xNN, which YAML's double quotes read back
    else {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out + "\"";
}
}  // namespace

std::string to_string(const Config& config) {
  std::string s = "{";
  for (const auto& [name, value] : config) {
    if (s.size() > 1) s += ", ";
    s += flow_text(name);
    s += ": ";
    s += std::holds_alternative<std::string>(value) ? flow_text(std::get<std::string>(value)) : to_string(value);
  }
  return s + "}";
}

const char* to_string(ParamType type) {
  switch (type) {
    case ParamType::floating: return "floating";
    case ParamType::integer: return "integer";
    case ParamType::categorical: return "categorical";
    case ParamType::ordinal: return "ordinal";
  }
  return "unknown";
}

const char* to_string(Scale scale) {
  switch (scale) {
    case Scale::linear: return "linear";
    case Scale::log: return "log";
  }
  return "unknown";
}

Parameter Parameter::floating(std::string name, double low, double high, Scale scale) {
  Parameter p;
  p.name = std::move(name);
  p.type = ParamType::floating;
  p.low = low;
  p.high = high;
  p.scale = scale;
  return p;
}

Parameter Parameter::integer(std::string name, std::int64_t low, std::int64_t high, Scale scale) {
  Parameter p;
  p.name = std::move(name);
  p.type = ParamType::integer;
  p.low = static_cast<double>(low);
  p.high = static_cast<double>(high);
  p.scale = scale;
  return p;
}

Parameter Parameter::categorical(std::string name, std::vector<std::string> choices) {
  Parameter p;
  p.name = std::move(name);
  p.type = ParamType::categorical;
  p.choices = std::move(choices);
  return p;
}

Parameter Parameter::ordinal(std::string name, std::vector<std::string> choices) {
  Parameter p = categorical(std::move(name), std::move(choices));
  p.type = ParamType::ordinal;
  return p;
}

Parameter Parameter::when(std::string parent, std::vector<std::string> values) const {
  Parameter p = *this;
  p.condition = Condition{std::move(parent), std::move(values)};
  return p;
}

std::size_t Parameter::cardinality() const {
  switch (type) {
    case ParamType::floating: return 0;
    case ParamType::integer: {
      if (!(high >= low) || !std::isfinite(high - low)) return 0;
      const double k = high - low + 1.0;
      if (k >= static_cast<double>(std::numeric_limits<std::size_t>::max())) {
        return std::numeric_limits<std::size_t>::max();
      }
      return static_cast<std::size_t>(k);
    }
    case ParamType::categorical:
    case ParamType::ordinal: return choices.size();
  }
  return 0;
}

namespace {
// A parent's value as the space holds it: an integer parent's whole double as an integer, an
// ordinal's number as its text, so that values given either way compare equal.
Value normalised(const Parameter& p, const Value& v) {
  if (p.type == ParamType::integer) {
    if (const double* d = std::get_if<double>(&v); d && is_whole(*d) && std::fabs(*d) <= max_integer_bound)
      return static_cast<std::int64_t>(*d);
    return v;
  }
  if (p.type != ParamType::floating && !std::holds_alternative<std::string>(v)) return to_string(v);
  return v;
}

// A condition's value of its parent, as typed in the space ("3" of an integer parent).
Value condition_value(const Parameter& child, const Parameter& parent, const std::string& text) {
  const std::string where = "its condition on " + quoted(parent.name) + ": ";
  if (parent.type != ParamType::integer) {
    if (std::find(parent.choices.begin(), parent.choices.end(), text) == parent.choices.end()) {
      std::string list;
      for (const auto& c : parent.choices) list += (list.empty() ? "'" : ", '") + c + "'";
      fail(child, where + "'" + text + "' is not one of its choices " + list);
    }
    return text;
  }
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    fail(child, where + "'" + text + "' is not a whole number; list integer values of " + quoted(parent.name));
  if (static_cast<double>(v) < parent.low || static_cast<double>(v) > parent.high)
    fail(child, where + text + " is outside its range [" + format_double(parent.low) + ", " +
                    format_double(parent.high) + "]");
  return v;
}
}  // namespace

Space::Space(std::vector<Parameter> parameters) : parameters_(std::move(parameters)) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const Parameter& p = parameters_[i];
    validate(p, i);
    if (!names.insert(p.name).second) {
      throw SpaceError("duplicate parameter name " + quoted(p.name) +
                       "; give every parameter a unique name");
    }
  }
  std::set<std::size_t> parents;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const Parameter& p = parameters_[i];
    if (!p.condition) continue;
    const std::string& parent_name = p.condition->parent;
    if (parent_name == p.name) fail(p, "its condition names the parameter itself; name another parameter");
    std::size_t j = 0;
    while (j < parameters_.size() && parameters_[j].name != parent_name) ++j;
    if (j == parameters_.size())
      fail(p, "its condition names " + quoted(parent_name) + ", which is not a parameter of the space (" +
                  parameter_names(*this) + ")");
    if (j > i)
      fail(p, "its condition names " + quoted(parent_name) + ", declared after it; declare " +
                  quoted(parent_name) + " first");
    const Parameter& parent = parameters_[j];
    if (parent.type == ParamType::floating)
      fail(p, "its condition names the float " + quoted(parent_name) +
                  ", whose values cannot be listed; make the parent categorical, ordinal or integer");
    if (p.condition->values.empty())
      fail(p, "its condition lists no value of " + quoted(parent_name) + "; list the values under which it applies");
    ResolvedCondition resolved{j, {}};
    for (const std::string& text : p.condition->values) {
      Value v = condition_value(p, parent, text);
      if (std::find(resolved.values.begin(), resolved.values.end(), v) != resolved.values.end())
        fail(p, "its condition lists '" + text + "' twice; list each value once");
      resolved.values.push_back(std::move(v));
    }
    if (parents_by_parameter_.empty()) parents_by_parameter_.resize(parameters_.size());
    parents_by_parameter_[i] = std::move(resolved);
    parents.insert(j);
  }
  parents_.assign(parents.begin(), parents.end());
}

bool Space::applies(std::size_t i, const std::vector<bool>& active, const Value* parent_value) const {
  if (parents_by_parameter_.empty() || !parents_by_parameter_[i]) return true;
  const ResolvedCondition& c = *parents_by_parameter_[i];
  if (!active[c.parent] || !parent_value) return false;
  const Value v = normalised(parameters_[c.parent], *parent_value);
  return std::find(c.values.begin(), c.values.end(), v) != c.values.end();
}

std::vector<bool> Space::active(const Eigen::Ref<const Eigen::VectorXd>& unit) const {
  std::vector<bool> active(parameters_.size(), true);
  if (!has_conditions()) return active;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (!parents_by_parameter_[i]) continue;
    const std::size_t j = parents_by_parameter_[i]->parent;
    const Value parent_value = decode_one(parameters_[j], unit[static_cast<Eigen::Index>(j)]);
    active[i] = applies(i, active, &parent_value);
  }
  return active;
}

std::vector<bool> Space::active(const Config& config) const {
  std::vector<bool> active(parameters_.size(), true);
  if (!has_conditions()) return active;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (!parents_by_parameter_[i]) continue;
    const auto it = config.find(parameters_[parents_by_parameter_[i]->parent].name);
    active[i] = applies(i, active, it == config.end() ? nullptr : &it->second);
  }
  return active;
}

double Space::active_fraction(std::size_t i) const {
  if (parents_by_parameter_.empty() || !parents_by_parameter_[i]) return 1.0;
  const ResolvedCondition& c = *parents_by_parameter_[i];
  const Parameter& parent = parameters_[c.parent];
  double share = 0.0;
  for (const Value& v : c.values) {
    if (parent.type == ParamType::integer && parent.scale == Scale::log) {
      const auto x = static_cast<double>(std::get<std::int64_t>(v));
      share += (std::log(x + 0.5) - std::log(x - 0.5)) / (int_log_hi(parent) - int_log_lo(parent));
    } else {
      share += 1.0 / static_cast<double>(parent.cardinality());
    }
  }
  return share * active_fraction(c.parent);
}

std::string Space::condition_text(std::size_t i) const {
  if (parents_by_parameter_.empty() || !parents_by_parameter_[i]) return {};
  const ResolvedCondition& c = *parents_by_parameter_[i];
  std::string values;
  for (std::size_t k = 0; k < c.values.size(); ++k) {
    if (k > 0) values += k + 1 == c.values.size() ? " or " : ", ";
    values += to_string(c.values[k]);
  }
  return "applies only when " + parameters_[c.parent].name + " is " + values;
}

std::size_t Space::index_of(const std::string& name) const {
  if (const Parameter* p = find(name)) return static_cast<std::size_t>(p - parameters_.data());
  throw SpaceError("unknown parameter " + quoted(name) +
                   "; it is not part of the search space (check the spelling)");
}

const Parameter& Space::parameter(const std::string& name) const {
  return parameters_[index_of(name)];
}

const Parameter* Space::find(const std::string& name) const {
  for (const Parameter& p : parameters_)
    if (p.name == name) return &p;
  return nullptr;
}

Space without_conditions(const Space& space) {
  std::vector<Parameter> parameters = space.parameters();
  for (Parameter& p : parameters) p.condition.reset();
  return Space(std::move(parameters));
}

std::string parameter_names(const Space& space) {
  std::string names;
  for (const Parameter& p : space.parameters()) names += (names.empty() ? "" : ", ") + p.name;
  return names;
}

Eigen::VectorXd Space::encode(const Config& config) const {
  Eigen::VectorXd unit(static_cast<Eigen::Index>(parameters_.size()));
  const std::vector<bool> applying = active(config);
  std::size_t found = 0;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const Parameter& p = parameters_[i];
    const auto it = config.find(p.name);
    if (!applying[i]) {
      if (it != config.end()) {
        const Parameter& parent = parameters_[parents_by_parameter_[i]->parent];
        const auto parent_value = config.find(parent.name);
        fail(p, condition_text(i) + " (here " + parent.name +
                    (parent_value == config.end() ? std::string(" has no value")
                                                  : " is " + to_string(parent_value->second)) +
                    "); remove it from the configuration");
      }
      unit[static_cast<Eigen::Index>(i)] = inactive_coordinate;
      continue;
    }
    if (it == config.end()) {
      fail(p, "missing from the configuration; give it a value");
    }
    ++found;
    unit[static_cast<Eigen::Index>(i)] = encode_one(p, it->second);
  }
  if (found != config.size()) {
    for (const auto& [name, value] : config) {
      const bool known = std::any_of(parameters_.begin(), parameters_.end(),
                                     [&](const Parameter& p) { return p.name == name; });
      if (!known) {
        throw SpaceError("unknown parameter " + quoted(name) +
                         " in the configuration; it is not part of the search space "
                         "(remove it or check the spelling)");
      }
    }
  }
  return unit;
}

Config Space::decode(const Eigen::VectorXd& unit) const {
  if (static_cast<std::size_t>(unit.size()) != parameters_.size()) {
    throw SpaceError("decode: point has " + std::to_string(unit.size()) +
                     " coordinates but the space has " + std::to_string(parameters_.size()) +
                     " parameters");
  }
  Config config;
  const std::vector<bool> applying = has_conditions() ? active(unit) : std::vector<bool>{};
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (!applying.empty() && !applying[i]) continue;
    config.emplace(parameters_[i].name,
                   decode_one(parameters_[i], unit[static_cast<Eigen::Index>(i)]));
  }
  return config;
}

Eigen::VectorXd Space::snap(const Eigen::VectorXd& unit) const {
  if (static_cast<std::size_t>(unit.size()) != parameters_.size()) {
    throw SpaceError("snap: point has " + std::to_string(unit.size()) +
                     " coordinates but the space has " + std::to_string(parameters_.size()) +
                     " parameters");
  }
  Eigen::VectorXd out(unit.size());
  const std::vector<bool> applying = has_conditions() ? active(unit) : std::vector<bool>{};
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const Parameter& p = parameters_[i];
    const auto j = static_cast<Eigen::Index>(i);
    const double u = clamp01(unit[j]);
    if (!applying.empty() && !applying[i]) out[j] = inactive_coordinate;
    else out[j] = p.type == ParamType::floating ? u : encode_one(p, decode_one(p, u));
  }
  return out;
}

bool Space::is_finite() const {
  return std::none_of(parameters_.begin(), parameters_.end(),
                      [](const Parameter& p) { return p.type == ParamType::floating; });
}

std::size_t Space::grid_size() const {
  if (!is_finite()) return 0;
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  std::size_t size = 1;
  for (const auto& p : parameters_) {
    const std::size_t k = p.cardinality();
    if (k == 0) return 0;
    size = size > max / k ? max : size * k;
  }
  if (!has_conditions()) return size;
  // Distinct configurations: each combination of the parents' values, times the cardinalities of the
  // other parameters that apply under it. Past 2^20 combinations, the product above (an upper bound).
  std::size_t visits = std::size_t{1} << 20;
  std::vector<bool> applying(parameters_.size(), true);
  std::vector<Value> values(parameters_.size());
  const auto saturating_add = [&](std::size_t a, std::size_t b) { return a > max - b ? max : a + b; };
  const auto saturating_mul = [&](std::size_t a, std::size_t b) { return b != 0 && a > max / b ? max : a * b; };
  std::function<std::optional<std::size_t>(std::size_t)> count = [&](std::size_t i) -> std::optional<std::size_t> {
    if (i == parameters_.size()) return 1;
    if (visits-- == 0) return std::nullopt;
    const Parameter& p = parameters_[i];
    const Value* parent_value = parents_by_parameter_[i] ? &values[parents_by_parameter_[i]->parent] : nullptr;
    applying[i] = applies(i, applying, parent_value);
    if (!applying[i]) return count(i + 1);
    if (!std::binary_search(parents_.begin(), parents_.end(), i)) {
      const auto rest = count(i + 1);
      if (!rest) return std::nullopt;
      return saturating_mul(*rest, p.cardinality());
    }
    std::size_t total = 0;
    for (std::size_t k = 0; k < p.cardinality(); ++k) {
      if (p.type == ParamType::integer) values[i] = static_cast<std::int64_t>(p.low) + static_cast<std::int64_t>(k);
      else values[i] = p.choices[k];
      applying[i] = true;
      const auto rest = count(i + 1);
      if (!rest) return std::nullopt;
      total = saturating_add(total, *rest);
    }
    return total;
  };
  return count(0).value_or(size);
}

std::vector<Eigen::VectorXd> Space::grid_points(std::size_t limit) const {
  const std::size_t size = grid_size();
  if (size == 0 || size > limit) return {};
  std::vector<Eigen::VectorXd> points;
  points.reserve(size);
  Eigen::VectorXd unit = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(parameters_.size()), inactive_coordinate);
  // Depth first over the parameters in order: a parameter that does not apply under the values
  // chosen before it takes inactive_coordinate, one that does each of its values' cells in turn.
  std::function<void(std::size_t)> visit = [&](std::size_t i) {
    if (i == parameters_.size()) {
      points.push_back(snap(unit));
      return;
    }
    const auto j = static_cast<Eigen::Index>(i);
    if (!active(unit)[i]) {
      unit[j] = inactive_coordinate;
      visit(i + 1);
      return;
    }
    const Parameter& p = parameters_[i];
    for (std::size_t k = 0; k < p.cardinality(); ++k) {
      unit[j] = p.type == ParamType::integer ? encode_one(p, static_cast<std::int64_t>(p.low) + static_cast<std::int64_t>(k))
                                             : cell_centre(k, p.cardinality());
      visit(i + 1);
    }
  };
  visit(0);
  return points;
}

}  // namespace tune
