// `tune enqueue DIR NAME=VALUE ...`: a configuration the campaign runs before the strategy's next
// suggestion (at the next `tune ask`, or when `tune resume` continues it). Like ask and tell it
// changes the campaign, so it takes the campaign's lock and refuses while a tuner drives it.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "tune/adapters/command/command_template.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/progress.hpp"
#include "tuner/cli/commands.hpp"

namespace tune::tuner {

namespace {

// "lr=0.001" as the parameter's type reads it; an empty optional, with the message printed, if not.
std::optional<Value> parse_value(const Parameter& p, const std::string& text, const std::string& assignment) {
  std::string problem = p.type == ParamType::integer ? "is not a whole number" : "is not a number";
  if (p.type == ParamType::floating) {
    // nan passed as a number and was refused as "value .nan is outside the range", in YAML's spelling.
    if (const std::optional<double> v = parse_number(text, problem)) {
      if (std::isfinite(*v)) return Value(*v);
      problem = "is not a finite number";
    }
  } else if (p.type == ParamType::integer) {
    try {  // stoll skips leading blanks, which a number of the trial protocol does not have
      if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) throw std::invalid_argument("blank");
      std::size_t used = 0;
      const long long v = std::stoll(text, &used);
      if (used == text.size()) return Value(static_cast<std::int64_t>(v));
    } catch (const std::exception&) {
    }
  } else {
    return Value(text);
  }
  // "'abc' is not a number, as parameter 'lr' needs"; "'1e400' is too large for a double (...)".
  const std::string needs = problem.rfind("is not", 0) == 0 ? ", as parameter '" + p.name + "' needs" : "";
  std::fprintf(stderr, "tune enqueue: '%s': '%s' %s%s\n", assignment.c_str(), text.c_str(), problem.c_str(),
               needs.c_str());
  return std::nullopt;
}

}  // namespace

int enqueue(const std::filesystem::path& dir, const std::vector<std::string>& assignments) {
  if (!holds_campaign(dir, "enqueue")) return kExitUsage;
  const auto lock = lock_campaign(dir, "enqueue");
  if (!lock) return kExitLocked;
  CampaignState s = load_state(dir);
  Config config;
  std::optional<std::size_t> level;
  std::map<std::string, std::string> given;  // name -> its assignment as typed
  for (const std::string& a : assignments) {
    const std::size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "tune enqueue: '%s' is not NAME=VALUE (e.g. lr=0.001)\n", a.c_str());
      return kExitUsage;
    }
    const std::string name = a.substr(0, eq), text = a.substr(eq + 1);
    // `lr=0.1 ... lr=0.01` is a slip, not a choice: neither is silently dropped.
    if (const auto [before, added] = given.emplace(name, a); !added) {
      std::fprintf(stderr, "tune enqueue: '%s': %s is given twice (also '%s'); give each once\n", a.c_str(),
                   name.c_str(), before->second.c_str());
      return kExitUsage;
    }
    if (const Resolution* r = s.config.resolution ? &*s.config.resolution : nullptr; r && name == r->parameter) {
      std::string problem;
      const std::optional<double> v = parse_number(text, problem);
      level = v ? level_of(*r, *v) : std::nullopt;
      if (!level) {
        std::fprintf(stderr, "tune enqueue: '%s': expected one of the levels of %s, %s\n", a.c_str(), name.c_str(),
                     level_values_text(*r).c_str());
        return kExitUsage;
      }
      continue;
    }
    const Parameter* p = s.config.space.find(name);
    if (!p) {
      std::fprintf(stderr, "tune enqueue: '%s': the campaign has no parameter '%s' (it has %s)\n", a.c_str(),
                   name.c_str(), parameter_names(s.config.space).c_str());
      return kExitUsage;
    }
    const std::optional<Value> v = parse_value(*p, text, a);
    if (!v) return kExitUsage;
    config[name] = *v;
  }
  try {
    s.study.enqueue(config, level);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "tune %s\n", e.what());  // "enqueue: parameter 'act' has no value; ..."
    return kExitUsage;
  }
  save_state(dir, s);
  // With a resolution, at which level: the full run unless one was named.
  std::string at;
  if (const Resolution* r = s.config.resolution ? &*s.config.resolution : nullptr) {
    const std::string value = r->parameter + " " + adapters::resolution_value_text(r->values.at(level.value_or(r->top())));
    at = level && *level != r->top() ? " at " + value : " at the full run (" + value + ")";
  }
  // What runs it: a tuner resumed, or for a campaign without a command (driven by ask and tell) the
  // next ask, which also raises the budgets (tune resume refuses such a campaign).
  const bool asked = s.config.command.empty();
  const auto continue_with = [&](const std::string& options) {
    return "'tune " + std::string(asked ? "ask " : "resume ") + dir.string() + options + "'";
  };
  const char* runs_it = asked ? "hands it out" : "runs it";
  const std::string enqueued = "enqueued " + tune::to_string(config) + at + " (" +
                               std::to_string(s.study.enqueued_count()) + " waiting)";
  if (s.trial_budget_spent())
    std::printf("%s; %s: %s raises it to N trials in all and %s\n", enqueued.c_str(),
                s.trial_budget_spent_reason().c_str(), continue_with(" --trials N").c_str(), runs_it);
  else if (s.finished && s.config.budget.cost)
    std::printf("%s; the campaign has finished (%s): %s %s if it fits the %s left of the cost budget; %s raises "
                "the budget to B\n",
                enqueued.c_str(), s.stop_reason.c_str(), continue_with("").c_str(), runs_it,
                format_short(std::max(0.0, *s.config.budget.cost - s.study.spent_cost())).c_str(),
                continue_with(" --cost-budget B").c_str());
  else if (s.finished)
    std::printf("%s; the campaign has finished (%s): %s %s\n", enqueued.c_str(), s.stop_reason.c_str(),
                continue_with("").c_str(), runs_it);
  else if (asked)
    std::printf("%s; the next %s hands it out\n", enqueued.c_str(), continue_with("").c_str());
  else
    std::printf("%s; it runs at the next 'tune ask %s' or when 'tune resume %s' continues\n", enqueued.c_str(),
                dir.c_str(), dir.c_str());
  return kExitComplete;
}

}  // namespace tune::tuner
