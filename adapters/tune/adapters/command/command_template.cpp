#include "tune/adapters/command/command_template.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace tune::adapters {

namespace {

constexpr std::array<std::string_view, 3> builtin_names{"trial_id", "trial_dir", "result_file"};

bool is_builtin(std::string_view name) {
  for (const auto b : builtin_names) {
    if (b == name) return true;
  }
  return false;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

// Expands one element of the command. `resolve(name, out)` appends the value of a placeholder to
// `out` and returns false if the name is unknown; `known()` lists the names for error messages
// (only called when failing, so rendering does not pay for it).
template <class Resolve, class Known>
std::string expand(const std::string& element, std::size_t index, Resolve&& resolve,
                   Known&& known) {
  auto fail = [&](const std::string& what) {
    throw CommandTemplateError(index, element,
                               what + "; known placeholders: " + join_names(known()) +
                                   " (write {{ and }} for literal braces)");
  };
  std::string out;
  out.reserve(element.size());
  std::size_t i = 0;
  const std::size_t n = element.size();
  while (i < n) {
    const char c = element[i];
    if (c == '{') {
      if (i + 1 < n && element[i + 1] == '{') {
        out += '{';
        i += 2;
        continue;
      }
      const std::size_t close = element.find_first_of("{}", i + 1);
      if (close == std::string::npos || element[close] == '{') {
        fail("unclosed '{' at position " + std::to_string(i));
      }
      const std::string name = element.substr(i + 1, close - i - 1);
      if (name.empty()) fail("empty placeholder '{}'");
      if (!resolve(name, out)) fail("unknown placeholder '{" + name + "}'");
      i = close + 1;
    } else if (c == '}') {
      if (i + 1 < n && element[i + 1] == '}') {
        out += '}';
        i += 2;
        continue;
      }
      fail("stray '}' at position " + std::to_string(i));
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

[[noreturn]] void environment_collision(const std::string& first, const std::string& second,
                                        const std::string& variable) {
  throw std::invalid_argument("parameters '" + first + "' and '" + second +
                              "' both map to the environment variable " + variable +
                              "; rename one of them");
}

// Throws if two parameter names map to the same environment variable.
void check_environment_names(const std::vector<std::string>& names) {
  std::map<std::string, std::string> seen;  // variable -> parameter
  for (const std::string& p : names) {
    const auto [it, inserted] = seen.emplace(environment_name(p), p);
    if (!inserted) environment_collision(it->second, p, it->first);
  }
}

}  // namespace

std::string environment_name(const std::string& parameter) {
  std::string name = "TUNE_PARAM_";
  name.reserve(name.size() + parameter.size());
  for (const char c : parameter) {
    if (c >= 'a' && c <= 'z') {
      name += static_cast<char>(c - 'a' + 'A');
    } else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
      name += c;
    } else {
      name += '_';
    }
  }
  return name;
}

std::string resolution_value_text(double value) {
  if (std::nearbyint(value) == value && std::fabs(value) < 9007199254740992.0) {
    return std::to_string(static_cast<std::int64_t>(value));
  }
  return to_string(Value{value});
}

void check_command_template(const std::vector<std::string>& command, const Space& space,
                            const std::string& resolution_parameter) {
  std::vector<std::string> names;
  names.reserve(space.dim() + 1);
  for (const auto& p : space.parameters()) {
    if (is_builtin(p.name)) {
      throw std::invalid_argument("parameter '" + p.name +
                                  "' has the name of the built-in placeholder {" + p.name +
                                  "}; rename the parameter");
    }
    names.push_back(p.name);
  }
  if (!resolution_parameter.empty()) {
    if (is_builtin(resolution_parameter)) {
      throw std::invalid_argument("the resolution parameter '" + resolution_parameter +
                                  "' has the name of the built-in placeholder {" + resolution_parameter +
                                  "}; rename it");
    }
    for (const auto& p : names) {
      if (p == resolution_parameter) {
        throw std::invalid_argument("'" + p + "' is both a parameter of the space and the resolution parameter; "
                                    "the resolution is chosen by the strategy, not searched: remove it from the space");
      }
    }
    if (resolution_parameter.find_first_of("{}") != std::string::npos) {
      throw std::invalid_argument("the resolution parameter '" + resolution_parameter +
                                  "' contains a brace; it must be usable as a {placeholder}");
    }
    names.push_back(resolution_parameter);
  }
  check_environment_names(names);
  auto known = [&] {
    std::vector<std::string> all = names;
    all.insert(all.end(), builtin_names.begin(), builtin_names.end());
    return all;
  };
  auto resolve = [&](const std::string& name, std::string&) {
    if (is_builtin(name)) return true;
    for (const auto& p : names) {
      if (p == name) return true;
    }
    return false;
  };
  for (std::size_t i = 0; i < command.size(); ++i) {
    expand(command[i], i, resolve, known);
    // The conditional parameters the element names, and its text without placeholders.
    std::vector<std::size_t> conditional;
    const std::string text = expand(
        command[i], i,
        [&](const std::string& name, std::string&) {
          const Parameter* p = space.find(name);
          if (p && p->condition) conditional.push_back(space.index_of(name));
          return true;
        },
        known);
    if (conditional.empty()) continue;
    const std::string& element = command[i];
    const std::string& name = space.parameters()[conditional.front()].name;
    const std::string why = "'" + name + "' " + space.condition_text(conditional.front()) +
                            ", and elsewhere an argument holding {" + name + "} is left out";
    // A value alone would shift the arguments after it, or leave its flag behind; so would a value
    // with text around it after a bare flag (--m x{m}). `key={m}` and `--m={m}` go whole.
    const bool flag_before = i > 0 && command[i - 1].starts_with("-") && command[i - 1].find('{') == std::string::npos;
    const bool value_alone = text.empty() || (flag_before && text.find('=') == std::string::npos && !text.starts_with("-"));
    if (!value_alone) continue;
    throw CommandTemplateError(
        i, element,
        why + "; this one would " +
            (flag_before ? "leave '" + command[i - 1] + "' behind: write '" + command[i - 1] + "=" + element +
                               "' as one argument"
                         : "shift the arguments after it: give it as one argument with its option, e.g. '--" + name +
                               "=" + element + "', or read TUNE_PARAM_ variables"));
  }
}

std::vector<std::string> render_command(const std::vector<std::string>& command, const Config& config,
                                        const TrialContext& trial,
                                        const std::optional<TrialResolution>& resolution,
                                        const std::vector<std::string>& not_applying) {
  auto known = [&] {
    std::vector<std::string> all;
    for (const auto& [name, value] : config) {
      if (!is_builtin(name)) all.push_back(name);
    }
    if (resolution) all.push_back(resolution->parameter);
    all.insert(all.end(), builtin_names.begin(), builtin_names.end());
    return all;
  };
  // The built-in names take precedence (check_command_template rejects parameters named so).
  auto resolve = [&](const std::string& name, std::string& out) {
    if (name == "trial_id") {
      out += trial.trial_id;
    } else if (name == "trial_dir") {
      out += trial.trial_dir;
    } else if (name == "result_file") {
      out += trial.result_file;
    } else if (resolution && name == resolution->parameter) {
      out += resolution_value_text(resolution->value);
    } else {
      const auto it = config.find(name);
      if (it == config.end()) return false;
      out += to_string(it->second);
    }
    return true;
  };
  // A placeholder of a parameter that does not apply marks its argument for leaving out.
  bool leave_out = false;
  auto resolve_or_leave_out = [&](const std::string& name, std::string& out) {
    if (resolve(name, out)) return true;
    if (std::find(not_applying.begin(), not_applying.end(), name) == not_applying.end()) return false;
    leave_out = true;
    return true;
  };
  std::vector<std::string> argv;
  argv.reserve(command.size());
  for (std::size_t i = 0; i < command.size(); ++i) {
    leave_out = false;
    std::string element = expand(command[i], i, resolve_or_leave_out, known);
    if (!leave_out) argv.push_back(std::move(element));
  }
  return argv;
}

std::map<std::string, std::string> trial_environment(const Config& config, const TrialContext& trial,
                                                     const std::optional<TrialResolution>& resolution) {
  std::map<std::string, std::string> env;
  env["TUNE_TRIAL_ID"] = trial.trial_id;
  env["TUNE_TRIAL_DIR"] = trial.trial_dir;
  env["TUNE_RESULT_FILE"] = trial.result_file;
  std::map<std::string, std::string> owner;  // variable -> parameter, to report collisions
  for (const auto& [name, value] : config) {
    std::string var = environment_name(name);
    const auto [it, inserted] = owner.emplace(var, name);
    if (!inserted) environment_collision(it->second, name, var);
    env[std::move(var)] = to_string(value);
  }
  if (resolution) {
    const std::string value = resolution_value_text(resolution->value);
    std::string var = environment_name(resolution->parameter);
    const auto [it, inserted] = owner.emplace(var, resolution->parameter);
    if (!inserted) environment_collision(it->second, resolution->parameter, var);
    env[std::move(var)] = value;
    env["TUNE_RESOLUTION"] = value;
    env["TUNE_RESOLUTION_LEVEL"] = std::to_string(resolution->level);
  }
  return env;
}

}  // namespace tune::adapters
