#include "tuner/campaign/warm_start.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "tune/io/yaml_values.hpp"

namespace tune::tuner {

namespace {

// Why results did not carry over: one line per kind of reason, in the order first met, each with its
// first example's wording and a count.
class SkipTally {
 public:
  void add(const std::string& kind, const std::string& text) {
    const auto [it, fresh] = index_.try_emplace(kind, lines_.size());
    if (fresh) lines_.emplace_back(text, 0);
    ++lines_[it->second].second;
  }
  std::vector<std::pair<std::string, std::size_t>> lines() const { return lines_; }

 private:
  std::map<std::string, std::size_t> index_;
  std::vector<std::pair<std::string, std::size_t>> lines_;
};

// A value of the earlier campaign as this campaign's parameter holds it: a whole number is a
// float's value and an integral float an integer's; a number is a choice's text. Nothing where
// the types do not meet (a word for a number).
std::optional<Value> converted(const Value& v, const Parameter& p) {
  switch (p.type) {
    case ParamType::floating:
      if (const auto* d = std::get_if<double>(&v)) return *d;
      if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
      return std::nullopt;
    case ParamType::integer:
      if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
      if (const auto* d = std::get_if<double>(&v); d && std::nearbyint(*d) == *d && std::abs(*d) < 9e15)
        return static_cast<std::int64_t>(*d);
      return std::nullopt;
    default:
      if (const auto* s = std::get_if<std::string>(&v)) return *s;
      return tune::to_string(v);
  }
}

bool same_value(const Value& a, const Value& b) {
  const auto* x = std::get_if<double>(&a);
  const auto* y = std::get_if<double>(&b);
  if (x && y) return std::abs(*x - *y) <= 1e-12 * std::max(std::abs(*x), std::abs(*y));
  return a == b;
}

// A `fixed` value as `p` reads it (a number for a float or an integer, else its text).
Value fixed_value(const Parameter& p, const std::string& text, const std::string& field) {
  if (p.type == ParamType::floating) {
    if (const auto d = double_from_text(text)) return *d;
    throw CampaignError("field '" + field + "': expected a number for the float parameter '" + p.name + "', found '" +
                        text + "'");
  }
  if (p.type == ParamType::integer) {
    if (const auto i = int_from_text(text)) return *i;
    throw CampaignError("field '" + field + "': expected a whole number for the integer parameter '" + p.name +
                        "', found '" + text + "'");
  }
  return text;
}

double fixed_resolution_value(const std::string& text, const std::string& field) {
  if (const auto d = double_from_text(text)) return *d;
  throw CampaignError("field '" + field + "': expected a number (a value of the resolution), found '" + text + "'");
}

std::string levels_text(const Resolution& r) {
  std::string text;
  for (const double v : r.values) text += (text.empty() ? "[" : ", ") + format_double(v);
  return text + "]";
}

// What the earlier campaign's `fixed` entries say, checked against both campaigns.
struct FixedValues {
  std::map<std::string, Value> here;   // parameters only this campaign searches: what the other ran with
  std::map<std::string, Value> there;  // parameters only the other searches: the value to import at
  std::optional<double> level_here;    // this campaign's resolution value the other ran at
  std::optional<double> level_there;   // the other's resolution value to import at
};

FixedValues read_fixed(const WarmStartSource& w, std::size_t index, const CampaignConfig& here,
                       const CampaignConfig& there) {
  FixedValues f;
  for (const auto& [name, text] : w.fixed) {
    const std::string field = "warm_start[" + std::to_string(index) + "].fixed." + name;
    const Parameter* p_here = here.space.find(name);
    const Parameter* p_there = there.space.find(name);
    const bool res_here = here.resolution && here.resolution->parameter == name;
    const bool res_there = there.resolution && there.resolution->parameter == name;
    if ((p_here || res_here) && (p_there || res_there))
      throw CampaignError("field '" + field + "': both campaigns vary '" + name +
                          "'; `fixed` names a parameter only one of them varies (the value the other ran with)");
    if (!p_here && !p_there && !res_here && !res_there)
      throw CampaignError("field '" + field + "': neither this campaign nor " + w.from + " has a parameter '" + name +
                          "'; remove it");
    if (p_here) f.here[name] = fixed_value(*p_here, text, field);
    if (p_there) f.there[name] = fixed_value(*p_there, text, field);
    if (res_here) {
      f.level_here = fixed_resolution_value(text, field);
      if (!level_of(*here.resolution, *f.level_here))
        throw CampaignError("field '" + field + "': " + text + " is not one of this campaign's levels " +
                            levels_text(*here.resolution));
    }
    if (res_there) f.level_there = fixed_resolution_value(text, field);
  }
  return f;
}

// The level of this campaign the earlier trial `t` ran at (nullopt without a resolution here), or
// the reason it ran at none of them (in `skip`).
std::optional<std::size_t> level_here(const Trial& t, const CampaignConfig& here, const CampaignConfig& there,
                                      const FixedValues& f, SkipTally& skip, bool& skipped) {
  skipped = false;
  const std::optional<double> ran_at =
      there.resolution && t.level ? std::optional<double>(there.resolution->values.at(*t.level)) : std::nullopt;
  const bool same_parameter = here.resolution && there.resolution && here.resolution->parameter == there.resolution->parameter;
  if (ran_at && !same_parameter) {  // the other varied a resolution this campaign does not
    const std::string& name = there.resolution->parameter;
    if (!f.level_there) {
      skip.add("resolution-there", "ran at " + name + " = " + format_double(*ran_at) +
                                       ", which this campaign does not vary (fixed: {" + name +
                                       ": V} carries over the runs made at V)");
      skipped = true;
      return std::nullopt;
    }
    if (*f.level_there != *ran_at) {
      skip.add("resolution-there-other", "ran at " + name + " = " + format_double(*ran_at) + ", not the fixed " +
                                             format_double(*f.level_there));
      skipped = true;
      return std::nullopt;
    }
  }
  if (!here.resolution) return std::nullopt;
  const std::string& name = here.resolution->parameter;
  const std::optional<double> value = same_parameter ? ran_at : f.level_here;
  if (!value) {
    skip.add("resolution-here", "ran without a level of this campaign's " + name + " (fixed: {" + name +
                                    ": V} says which it ran at)");
    skipped = true;
    return std::nullopt;
  }
  const std::optional<std::size_t> level = level_of(*here.resolution, *value);
  if (!level) {
    skip.add("level " + format_double(*value), "ran at " + name + " = " + format_double(*value) +
                                                   ", not one of this campaign's levels " + levels_text(*here.resolution));
    skipped = true;
  }
  return level;
}

// The earlier trial's configuration as one of this campaign's, or nothing (the reason in `skip`).
std::optional<Config> config_here(const Trial& t, const Space& here, const Space& there, const FixedValues& f,
                                  SkipTally& skip) {
  Config config;
  for (const Parameter& p : here.parameters()) {
    if (const auto it = t.config.find(p.name); it != t.config.end()) {
      const std::optional<Value> v = converted(it->second, p);
      if (!v) {
        skip.add("type " + p.name, "has '" + p.name + "' = " + tune::to_string(it->second) + ", not a value of its type here (" +
                                       tune::to_string(p.type) + ")");
        return std::nullopt;
      }
      config[p.name] = *v;
    } else if (const auto fixed = f.here.find(p.name); fixed != f.here.end()) {
      config[p.name] = fixed->second;
    }
  }
  const std::vector<bool> applying = here.active(config);
  for (std::size_t i = 0; i < here.dim(); ++i) {
    const Parameter& p = here.parameters()[i];
    if (!applying[i]) {
      config.erase(p.name);  // the other campaign varied it where this one says it does not matter
    } else if (!config.contains(p.name)) {
      skip.add("missing " + p.name,
               there.find(p.name)
                   ? "has no value for '" + p.name + "' (it did not apply there)"
                   : "has no value for '" + p.name + "', which the earlier campaign does not vary (fixed: {" + p.name +
                         ": V} gives the value it ran with)");
      return std::nullopt;
    }
  }
  for (const auto& [name, value] : t.config) {
    if (here.find(name)) continue;
    const auto fixed = f.there.find(name);
    if (fixed == f.there.end()) {
      skip.add("extra " + name, "sets '" + name + "', which this campaign does not vary (fixed: {" + name +
                                    ": V} carries over the trials that ran with V)");
      return std::nullopt;
    }
    if (!same_value(value, fixed->second)) {
      skip.add("other " + name, "sets '" + name + "' to another value than the fixed " + tune::to_string(fixed->second) +
                                    " (e.g. " + tune::to_string(value) + ")");
      return std::nullopt;
    }
  }
  try {
    (void)here.encode(config);
  } catch (const SpaceError& e) {
    skip.add("space " + e.parameter(), "lies outside this campaign's space (" + std::string(e.what()) + ")");
    return std::nullopt;
  }
  return config;
}

// "3: failed, were stopped early or did not finish; 1: sets 'dropout', ..."
std::string reasons_text(const WarmStartOutcome& o) {
  std::string text;
  for (std::size_t i = 0; i < o.skipped.size(); ++i)
    text += (i ? "; " : "") + std::to_string(o.skipped[i].second) + ": " + o.skipped[i].first;
  return text;
}

WarmStartOutcome import_source(CampaignState& state, const WarmStartSource& w, std::size_t index) {
  const std::filesystem::path dir = w.from;
  if (!has_state(dir))
    throw CampaignError("field 'warm_start" + (state.config.warm_start.size() > 1 ? "[" + std::to_string(index) + "]" : std::string()) +
                        "': " + w.from + " holds no campaign (no " + state_path(dir).filename().string() +
                        "); give the directory of an earlier campaign, as 'tune status DIR' takes");
  const CampaignState there = load_state(dir);  // refuses a damaged one, naming the file
  if (there.config.objective.name != state.config.objective.name)
    throw CampaignError("warm_start: " + w.from + " measured '" + there.config.objective.name + "', this campaign '" +
                        state.config.objective.name + "': its results are not values of this objective");
  const FixedValues f = read_fixed(w, index, state.config, there.config);
  WarmStartOutcome out;
  out.from = w.from;
  SkipTally skip;
  for (const Trial& t : there.study.trials()) {
    ++out.trials;
    if (t.status != TrialStatus::complete) {
      skip.add("unfinished", "failed, were stopped early or did not finish");
      continue;
    }
    bool skipped = false;
    const std::optional<std::size_t> level = level_here(t, state.config, there.config, f, skip, skipped);
    if (skipped) continue;
    const std::optional<Config> config = config_here(t, state.config.space, there.config.space, f, skip);
    if (!config) continue;
    try {
      const std::uint64_t id = state.study.import_result(*config, *t.value, level, w.from + ", trial " + std::to_string(t.id));
      const TrialRun& ran = there.runs.at(t.id);
      TrialRun r;
      r.id = id;
      r.status = RunStatus::complete;
      r.started_at = ran.started_at;
      r.finished_at = ran.finished_at;
      r.metrics = ran.metrics;
      r.intermediate = ran.intermediate;
      state.runs.push_back(std::move(r));
      ++out.imported;
    } catch (const std::invalid_argument& e) {
      skip.add(std::string("refused ") + e.what(), std::string("refused: ") + e.what());
    }
  }
  out.skipped = skip.lines();
  if (out.imported == 0)
    throw CampaignError("warm_start: none of the " + std::to_string(out.trials) + " trials of " + w.from +
                        " carries over" + (out.skipped.empty() ? std::string() : " (" + reasons_text(out) + ")") +
                        "; remove it from warm_start, or see README, Warm starts");
  return out;
}

}  // namespace

std::vector<WarmStartOutcome> import_warm_start(CampaignState& state) {
  std::vector<WarmStartOutcome> outcomes;
  std::set<std::filesystem::path> seen;
  for (std::size_t i = 0; i < state.config.warm_start.size(); ++i) {
    const WarmStartSource& w = state.config.warm_start[i];
    std::error_code ec;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(w.from, ec);
    if (!seen.insert(ec ? std::filesystem::path(w.from) : canonical).second)
      throw CampaignError("warm_start: " + w.from + " is named twice; its results would count twice");
    outcomes.push_back(import_source(state, w, i));
  }
  return outcomes;
}

std::string describe(const WarmStartOutcome& o) {
  std::string text = std::to_string(o.imported) + " of the " + std::to_string(o.trials) +
                     (o.trials == 1 ? " trial of " : " trials of ") + o.from;
  return o.skipped.empty() ? text : text + " (not carried over: " + reasons_text(o) + ")";
}

}  // namespace tune::tuner
