#include "tune/adapters/command/inline_space.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>

#include "tune/adapters/command/command_template.hpp"
#include "tune/io/number_text.hpp"

namespace tune::adapters {

namespace {

constexpr std::string_view known_priors =
    "uniform, loguniform, int, logint, choice (or choices), ordinal, and levels for a resolution";
constexpr std::string_view general_example = "--lr~'loguniform(1e-5, 1)'";

enum class PriorKind { uniform, loguniform, integer, log_integer, choice, ordinal, levels };

struct PriorInfo {
  std::string_view name;
  PriorKind kind;
  std::string_view example;
};

constexpr PriorInfo priors[] = {
    {"uniform", PriorKind::uniform, "uniform(0, 1)"},
    {"loguniform", PriorKind::loguniform, "loguniform(1e-5, 1)"},
    {"int", PriorKind::integer, "int(1, 8)"},
    {"logint", PriorKind::log_integer, "logint(1, 1024)"},
    {"choice", PriorKind::choice, "choice(relu, tanh)"},
    {"choices", PriorKind::choice, "choices(relu, tanh)"},
    {"ordinal", PriorKind::ordinal, "ordinal(small, medium, large)"},
    {"levels", PriorKind::levels, "levels(1, 3, 9, 27)"},
};

const PriorInfo* find_prior(std::string_view name) {
  for (const auto& p : priors) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_quote(char c) { return c == '\'' || c == '"'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Removes one pair of matching quotes around the whole text, if present.
std::string_view unquote(std::string_view s) {
  if (s.size() >= 2 && is_quote(s.front()) && s.back() == s.front()) {
    return trim(s.substr(1, s.size() - 2));
  }
  return s;
}

// Where an argument declares a parameter, if it does: its first `~` that is not half of a `~~`
// (a literal `~`, as `{{` is a literal `{` in a command template); npos if there is none.
std::size_t declaring_tilde(std::string_view argument) {
  for (std::size_t i = 0; i < argument.size(); ++i) {
    if (argument[i] != '~') continue;
    if (i + 1 < argument.size() && argument[i + 1] == '~') {
      ++i;
      continue;
    }
    return i;
  }
  return std::string_view::npos;
}

// An argument that declares nothing, as the trial receives it: each `~~` is one `~`.
std::string with_literal_tildes(std::string_view argument) {
  std::string out;
  out.reserve(argument.size());
  for (std::size_t i = 0; i < argument.size(); ++i) {
    out += argument[i];
    if (argument[i] == '~' && i + 1 < argument.size() && argument[i + 1] == '~') ++i;
  }
  return out;
}

// The text after the `~` declares a prior if it starts (after blanks and an opening quote) with a
// letter. Anything else (`~/data`, `HEAD~1`, `numpy~=1.2`) is an ordinary argument.
bool declares_prior(std::string_view after_tilde) {
  std::string_view s = trim(after_tilde);
  if (!s.empty() && is_quote(s.front())) s = trim(s.substr(1));
  return !s.empty() && is_letter(s.front());
}

class ArgumentError {
 public:
  explicit ArgumentError(const std::string& argument) : argument_(argument) {}
  [[noreturn]] void operator()(const std::string& what) const {
    throw std::invalid_argument("argument '" + argument_ + "': " + what);
  }

 private:
  const std::string& argument_;
};

// Splits the text between the parentheses into items: commas separate, blanks around items are
// ignored, an item may be quoted ('a,b' or "a,b") to keep commas, parentheses or blanks.
std::vector<std::string> split_items(std::string_view inner, const PriorInfo& prior,
                                     const ArgumentError& fail) {
  std::vector<std::string> items;
  if (trim(inner).empty()) return items;
  const std::string example(prior.example);
  std::size_t pos = 0;
  const std::size_t n = inner.size();
  while (true) {
    while (pos < n && is_space(inner[pos])) ++pos;
    std::string item;
    if (pos < n && is_quote(inner[pos])) {
      const char quote = inner[pos];
      const std::size_t close = inner.find(quote, pos + 1);
      if (close == std::string_view::npos) {
        fail("unterminated quote " + std::string(1, quote) + " in " + std::string(prior.name) +
             "(...); close it, as in " + std::string(prior.name) + "('a b', c)");
      }
      item = std::string(inner.substr(pos + 1, close - pos - 1));
      pos = close + 1;
      while (pos < n && is_space(inner[pos])) ++pos;
      if (pos < n && inner[pos] != ',') {
        fail("unexpected text after the quoted item '" + item + "'; separate items with commas, as in " +
             example);
      }
    } else {
      const std::size_t start = pos;
      while (pos < n && inner[pos] != ',') {
        if (inner[pos] == '(' || inner[pos] == ')') {
          fail("unbalanced parentheses: unexpected '" + std::string(1, inner[pos]) +
               "' inside " + std::string(prior.name) + "(...); write it as in " + example);
        }
        ++pos;
      }
      item = std::string(trim(inner.substr(start, pos - start)));
      if (item.empty()) {
        fail("empty item in " + std::string(prior.name) + "(...); write it as in " + example);
      }
    }
    items.push_back(std::move(item));
    if (pos >= n) break;
    ++pos;  // the comma
  }
  return items;
}

// Strict number: the whole text must be a finite number, in the trial protocol's syntax.
std::optional<double> parse_number(std::string_view text) {
  const std::optional<double> value = parse_number_text(text);
  if (!value || !std::isfinite(*value)) return std::nullopt;
  return value;
}

Parameter make_parameter(const std::string& name, const PriorInfo& prior,
                         const std::vector<std::string>& items, const ArgumentError& fail) {
  const std::string prior_name(prior.name);
  const std::string example(prior.example);
  switch (prior.kind) {
    case PriorKind::uniform:
    case PriorKind::loguniform:
    case PriorKind::integer:
    case PriorKind::log_integer: {
      if (items.size() != 2) {
        fail(prior_name + " needs two bounds, as in " + example + " (got " +
             std::to_string(items.size()) + ")");
      }
      double bounds[2] = {0.0, 0.0};
      for (std::size_t i = 0; i < 2; ++i) {
        const auto value = parse_number(unquote(items[i]));
        if (!value) {
          fail("bound '" + items[i] + "' of " + prior_name + " is not a finite number; write " +
               "the bounds as numbers, as in " + example);
        }
        bounds[i] = *value;
      }
      const Scale scale = (prior.kind == PriorKind::loguniform || prior.kind == PriorKind::log_integer)
                              ? Scale::log
                              : Scale::linear;
      if (prior.kind == PriorKind::uniform || prior.kind == PriorKind::loguniform) {
        return Parameter::floating(name, bounds[0], bounds[1], scale);
      }
      std::int64_t whole[2] = {0, 0};
      for (std::size_t i = 0; i < 2; ++i) {
        // 2^63 as a double: the int64 range is [-2^63, 2^63).
        constexpr double limit = 9223372036854775808.0;
        if (std::floor(bounds[i]) != bounds[i] || !(bounds[i] >= -limit && bounds[i] < limit)) {
          fail(prior_name + " bounds must be whole numbers (got '" + items[i] + "'), as in " +
               example + "; use uniform or loguniform for a continuous parameter");
        }
        whole[i] = static_cast<std::int64_t>(bounds[i]);
      }
      return Parameter::integer(name, whole[0], whole[1], scale);
    }
    case PriorKind::levels:
      break;  // not a parameter: parse_levels
    case PriorKind::choice:
    case PriorKind::ordinal: {
      if (items.size() < 2) {
        fail(prior_name + " needs at least two items, as in " + example + " (got " +
             std::to_string(items.size()) + ")");
      }
      return prior.kind == PriorKind::choice ? Parameter::categorical(name, items)
                                             : Parameter::ordinal(name, items);
    }
  }
  fail("unknown prior kind");
}

// The PRIOR of NAME~PRIOR: which prior, and the items between its parentheses.
struct PriorText {
  const PriorInfo* prior;
  std::vector<std::string> items;
};

PriorText read_prior(std::string_view text, const ArgumentError& fail) {
  text = unquote(trim(text));
  std::size_t pos = 0;
  while (pos < text.size() && (is_letter(text[pos]) || is_digit(text[pos]) || text[pos] == '_')) {
    ++pos;
  }
  const std::string prior_name(text.substr(0, pos));
  const PriorInfo* prior = find_prior(prior_name);
  if (prior == nullptr) {
    fail("unknown prior '" + prior_name + "'; the priors are " + std::string(known_priors) +
         ", as in " + std::string(general_example) + " (for a literal '~' in an argument, write '~~')");
  }
  const std::string example(prior->example);
  std::string_view rest = trim(text.substr(pos));
  if (rest.empty() || rest.front() != '(') {
    fail(prior_name + " needs its arguments in parentheses, as in " + example);
  }
  if (rest.back() != ')') {
    fail("unbalanced parentheses: " + prior_name + "(...) is not closed by ')' at the end; " +
         "write it as in " + example);
  }
  return {prior, split_items(rest.substr(1, rest.size() - 2), *prior, fail)};
}

// A parameter of the space from its prior.
Parameter parse_prior(const std::string& name, const PriorText& prior, const ArgumentError& fail) {
  Parameter parameter = make_parameter(name, *prior.prior, prior.items, fail);
  try {
    Space({parameter});  // its checks (bounds, log scale, duplicate choices), citing this argument
  } catch (const SpaceError& e) {
    fail(e.what());
  }
  return parameter;
}

// NAME~levels(1, 3, 9, 27): the resolution, whose level the strategy chooses (cmets), with costs
// measured (a campaign file can declare them instead).
Resolution parse_levels(const std::string& name, const PriorText& prior, const ArgumentError& fail) {
  Resolution resolution{name, {}, {}};
  for (const std::string& item : prior.items) {
    const auto value = parse_number(unquote(item));
    if (!value) fail("level '" + item + "' of levels(...) is not a finite number; write them as in " +
                     std::string(prior.prior->example));
    resolution.values.push_back(*value);
  }
  if (resolution.values.empty()) fail("levels needs at least one level, as in " + std::string(prior.prior->example));
  try {
    validate(resolution);
  } catch (const std::invalid_argument& e) {
    fail(e.what());  // "resolution: 'levels' must be strictly increasing ..."
  }
  return resolution;
}

// 1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st.
std::string ordinal(std::size_t n) {
  const std::size_t tens = n % 100;
  const char* suffix = "th";
  if (tens < 11 || tens > 13) {
    if (n % 10 == 1) suffix = "st";
    else if (n % 10 == 2) suffix = "nd";
    else if (n % 10 == 3) suffix = "rd";
  }
  return std::to_string(n) + suffix;
}

}  // namespace

InlineCampaign parse_inline_command(const std::vector<std::string>& arguments) {
  InlineCampaign campaign;
  std::vector<Parameter> parameters;
  std::map<std::string, const std::string*> declared_by;  // parameter name -> argument
  campaign.command.reserve(arguments.size() + 4);
  // For each element of campaign.command, the index of the argument it came from: a NAME~PRIOR
  // argument becomes two elements, so the indices of the two lists differ after the first one.
  std::vector<std::size_t> argument_of;
  argument_of.reserve(arguments.size() + 4);
  for (std::size_t index = 0; index < arguments.size(); ++index) {
    const std::string& argument = arguments[index];
    const std::size_t tilde = declaring_tilde(argument);
    if (tilde == std::string::npos ||
        !declares_prior(std::string_view(argument).substr(tilde + 1))) {
      campaign.command.push_back(with_literal_tildes(argument));
      argument_of.push_back(index);
      continue;
    }
    const ArgumentError fail(argument);
    std::string_view flag = trim(std::string_view(argument).substr(0, tilde));
    bool joined = false;  // one element NAME={param} instead of two elements NAME, {param}
    if (!flag.empty() && flag.back() == '=') {
      joined = true;
      flag = trim(flag.substr(0, flag.size() - 1));
    } else if (flag.empty() || flag.front() != '-') {
      joined = true;
    }
    std::string name(flag.substr(std::min(flag.find_first_not_of('-'), flag.size())));
    for (char& c : name) {
      if (c == '-') c = '_';
    }
    if (name.empty()) {
      fail("no parameter name before '~'; write NAME~PRIOR, as in " + std::string(general_example));
    }
    for (const char c : name) {
      if (c == '{' || c == '}' || c == '=' || c == '~' || is_quote(c) || is_space(c)) {
        fail("the parameter name '" + name + "' may not contain '" + std::string(1, c) +
             "'; write NAME~PRIOR, as in " + std::string(general_example));
      }
    }
    if (name == "trial_id" || name == "trial_dir" || name == "result_file") {
      fail("the parameter name '" + name + "' is reserved for the built-in placeholder {" + name +
           "}; choose another name");
    }
    const auto [it, inserted] = declared_by.emplace(name, &argument);
    if (!inserted) {
      fail("parameter '" + name + "' is already declared by argument '" + *it->second +
           "'; declare each parameter once");
    }
    const PriorText prior = read_prior(std::string_view(argument).substr(tilde + 1), fail);
    if (prior.prior->kind == PriorKind::levels) {
      if (campaign.resolution)
        fail("the resolution is already declared by argument '" + *declared_by.at(campaign.resolution->parameter) +
             "'; a campaign has one resolution");
      campaign.resolution = parse_levels(name, prior, fail);
    } else {
      parameters.push_back(parse_prior(name, prior, fail));
    }
    const std::string placeholder = "{" + name + "}";
    if (joined) {
      campaign.command.push_back(std::string(flag) + "=" + placeholder);
    } else {
      campaign.command.emplace_back(flag);
      campaign.command.push_back(placeholder);
    }
    argument_of.resize(campaign.command.size(), index);
  }
  if (parameters.empty()) {
    throw std::invalid_argument(
        "no parameter to tune: mark one with NAME~PRIOR, e.g. --lr~'loguniform(1e-5,1)'");
  }
  campaign.space = Space(std::move(parameters));  // SpaceError names the parameter
  // Other arguments may use placeholders too ({trial_dir}, {lr}); their braces must balance, and
  // the parameter names must make distinct environment variables.
  try {
    check_command_template(campaign.command, campaign.space,
                           campaign.resolution ? campaign.resolution->parameter : std::string());
  } catch (const CommandTemplateError& e) {
    // Cite the argument as the user typed it, and its place after `--`, not command[i] of the
    // rewritten command they never saw.
    const std::size_t index = argument_of.at(e.index());
    throw std::invalid_argument("argument '" + arguments[index] + "' (the " + ordinal(index + 1) +
                                " after --): " + e.problem());
  }
  return campaign;
}

}  // namespace tune::adapters
