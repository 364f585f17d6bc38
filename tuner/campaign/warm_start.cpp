#include "tuner/campaign/warm_start.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "tune/io/yaml_values.hpp"
#include "tuner/campaign/csv_table.hpp"

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

std::string trimmed(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// A value of the earlier campaign as this campaign's parameter holds it: a whole number is a
// float's value and an integral float an integer's; a number is a choice's text. Nothing where
// the types do not meet (a word for a number).
std::optional<Value> converted(const Value& v, const Parameter& p) {
  switch (p.type) {
    case ParamType::floating:
      if (const auto* d = std::get_if<double>(&v)) return *d;
      if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
      if (const auto* s = std::get_if<std::string>(&v)) {
        if (const auto d = double_from_text(trimmed(*s))) return *d;
      }
      return std::nullopt;
    case ParamType::integer: {
      if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
      std::optional<double> d;
      if (const auto* x = std::get_if<double>(&v)) d = *x;
      if (const auto* s = std::get_if<std::string>(&v)) {
        if (const auto i = int_from_text(trimmed(*s))) return *i;
        d = double_from_text(trimmed(*s));  // 3.0, as pandas writes an integer column that has gaps
      }
      if (d && std::nearbyint(*d) == *d && std::abs(*d) < 9e15) return static_cast<std::int64_t>(*d);
      return std::nullopt;
    }
    default: {
      // A choice by its text; or, as pandas and Optuna write them, by its number (0.001 for 1e-3,
      // 256.0 for 256) or in other letters (True for true).
      // (A table's unquoted cells come trimmed; a choice may have spaces of its own.)
      const auto* s = std::get_if<std::string>(&v);
      const std::string text = s ? *s : tune::to_string(v);
      if (std::find(p.choices.begin(), p.choices.end(), text) != p.choices.end()) return text;
      const std::optional<double> number = double_from_text(text);
      for (const std::string& choice : p.choices) {
        const std::optional<double> c = double_from_text(choice);
        if ((number && c && *number == *c) || lowercase(choice) == lowercase(text)) return choice;
      }
      return text;  // not a choice: the space's check says so
    }
  }
}

std::optional<double> number_of(const Value& v) {
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return double_from_text(std::get<std::string>(v));
}

// Numbers compare as numbers whatever their form (a table's text "0.10", a campaign's 0.1), words
// as text.
bool same_value(const Value& a, const Value& b) {
  const std::optional<double> x = number_of(a), y = number_of(b);
  if (x && y) return std::abs(*x - *y) <= 1e-12 * std::max(std::abs(*x), std::abs(*y));
  return tune::to_string(a) == tune::to_string(b);
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

// What a source offers: its results, and what it varied (a campaign's space and resolution, or a
// table's parameter columns), for the checks of `fixed`.
struct EarlierResult {
  Config config;                   // as the source holds it (a table's cells as text)
  double value = 0.0;
  std::optional<double> ran_at;    // the value of the source's resolution it ran at
  std::string origin;              // "DIR, trial 12" or "FILE, line 7"
  const TrialRun* run = nullptr;   // a campaign's record of it (its times, metrics, curve)
};

struct Earlier {
  std::string name;                       // the directory or file, as in messages
  const CampaignConfig* campaign = nullptr;  // a campaign's definition (a table has none)
  std::set<std::string> parameters;       // what it varied
  std::optional<std::string> resolution;  // its resolution's parameter
  std::size_t total = 0;                  // trials or rows, finished or not
  std::vector<EarlierResult> results;
  SkipTally skip;                         // what was left out already (unfinished trials, rows without a value)
};

// What the `fixed` entries say, checked against both.
struct FixedValues {
  std::map<std::string, Value> here;   // parameters only this campaign varies: what the other ran with
  std::map<std::string, Value> there;  // parameters only the other varies: the value to import at (text)
  std::optional<double> level_here;    // this campaign's resolution value the other ran at
  std::optional<double> level_there;   // the other's resolution value to import at
};

FixedValues read_fixed(const WarmStartSource& w, const std::string& source_field, const CampaignConfig& here,
                       const Earlier& there) {
  FixedValues f;
  for (const auto& [name, text] : w.fixed) {
    const std::string field = source_field + ".fixed." + name;
    const Parameter* p_here = here.space.find(name);
    const bool p_there = there.parameters.contains(name);
    const bool res_here = here.resolution && here.resolution->parameter == name;
    const bool res_there = there.resolution == name;
    if ((p_here || res_here) && (p_there || res_there))
      throw CampaignError("field '" + field + "': both campaigns vary '" + name +
                          "'; `fixed` names a parameter only one of them varies (the value the other ran with)");
    if (!p_here && !p_there && !res_here && !res_there)
      throw CampaignError("field '" + field + "': neither this campaign nor " + there.name + " has a parameter '" +
                          name + "'; remove it");
    if (p_here) f.here[name] = fixed_value(*p_here, text, field);
    if (p_there) {
      // A value the source never ran at carries nothing over: said here, not as "none carries over".
      const Parameter* choices = there.campaign ? there.campaign->space.find(name) : nullptr;
      if (choices && (choices->type == ParamType::categorical || choices->type == ParamType::ordinal) &&
          std::find(choices->choices.begin(), choices->choices.end(), text) == choices->choices.end())
      {
        std::string listed;
        for (const std::string& c : choices->choices) listed += (listed.empty() ? "" : ", ") + c;
        throw CampaignError("field '" + field + "': '" + text + "' is not one of the choices of '" + name + "' in " +
                            there.name + " [" + listed + "]");
      }
      f.there[name] = text;
    }
    if (res_here) {
      f.level_here = fixed_resolution_value(text, field);
      if (!level_of(*here.resolution, *f.level_here))
        throw CampaignError("field '" + field + "': " + text + " is not one of this campaign's levels " +
                            level_values_text(*here.resolution));
    }
    if (res_there) {
      f.level_there = fixed_resolution_value(text, field);
      if (there.campaign && there.campaign->resolution && !level_of(*there.campaign->resolution, *f.level_there))
        throw CampaignError("field '" + field + "': " + text + " is not one of the levels of " + there.name + " " +
                            level_values_text(*there.campaign->resolution));
    }
  }
  return f;
}

// The level of this campaign the earlier result `r` ran at (nullopt without a resolution here), or
// the reason it ran at none of them (in `skip`).
std::optional<std::size_t> level_here(const EarlierResult& r, const CampaignConfig& here, const Earlier& there,
                                      const FixedValues& f, SkipTally& skip, bool& skipped) {
  skipped = false;
  const std::optional<double>& ran_at = r.ran_at;
  const bool same_parameter = here.resolution && there.resolution == here.resolution->parameter;
  if (ran_at && !same_parameter) {  // the other varied a resolution this campaign does not
    const std::string& name = *there.resolution;
    if (!f.level_there) {
      skip.add("resolution-there " + format_double(*ran_at), "ran at " + name + " = " + format_double(*ran_at) +
                                       ", which this campaign does not vary (fixed: {" + name +
                                       ": V} carries over the runs made at V)");
      skipped = true;
      return std::nullopt;
    }
    if (*f.level_there != *ran_at) {
      skip.add("resolution-there-other " + format_double(*ran_at), "ran at " + name + " = " + format_double(*ran_at) + ", not the fixed " +
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
                                                   ", not one of this campaign's levels " + level_values_text(*here.resolution));
    skipped = true;
  }
  return level;
}

// The earlier result's configuration as one of this campaign's, or nothing (the reason in `skip`).
std::optional<Config> config_here(const EarlierResult& r, const Space& here, const Earlier& there, const FixedValues& f,
                                  SkipTally& skip) {
  Config config;
  for (const Parameter& p : here.parameters()) {
    if (const auto it = r.config.find(p.name); it != r.config.end()) {
      const std::optional<Value> v = converted(it->second, p);
      if (!v) {
        skip.add("type " + p.name, "has '" + p.name + "' = " + tune::to_string(it->second) +
                                       ", not a value of its type here (" + tune::to_string(p.type) + ")");
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
               there.parameters.contains(p.name)
                   ? "has no value for '" + p.name + "' (it did not apply there)"
                   : "has no value for '" + p.name + "', which " + there.name + " does not vary (fixed: {" + p.name +
                         ": V} gives the value it ran with)");
      return std::nullopt;
    }
  }
  for (const auto& [name, value] : r.config) {
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

std::string source_field(const CampaignState& state, std::size_t index) {
  return "warm_start" + (state.config.warm_start.size() > 1 ? "[" + std::to_string(index) + "]" : std::string());
}

constexpr const char* kUnfinished = "failed, were stopped early or did not finish";

// An earlier campaign, read from its directory (never written).
Earlier campaign_source(const CampaignState& state, const CampaignState& there, const std::string& dir) {
  if (there.config.objective.name != state.config.objective.name)
    throw CampaignError("warm_start: " + dir + " measured '" + there.config.objective.name + "', this campaign '" +
                        state.config.objective.name + "': its results are not values of this objective");
  Earlier e;
  e.name = dir;
  e.campaign = &there.config;
  for (const Parameter& p : there.config.space.parameters()) e.parameters.insert(p.name);
  if (there.config.resolution) e.resolution = there.config.resolution->parameter;
  for (const Trial& t : there.study.trials()) {
    ++e.total;
    if (t.status != TrialStatus::complete) {
      e.skip.add("unfinished", kUnfinished);
      continue;
    }
    EarlierResult r;
    r.config = t.config;
    r.value = *t.value;
    if (there.config.resolution && t.level) r.ran_at = there.config.resolution->values.at(*t.level);
    // A result the source imported itself keeps where it was run: a second source that holds the
    // same run is then seen to (import_warm_start), and the record names the run, not a relay.
    r.origin = t.imported() ? t.imported_from : dir + ", trial " + std::to_string(t.id);
    r.run = &there.runs.at(t.id);
    e.results.push_back(std::move(r));
  }
  return e;
}


// A CSV table of earlier results: `tune export`'s (param.NAME, value, status, resolution.NAME),
// Optuna's trials_dataframe (params_NAME, value, state) or Ray Tune's (config/NAME and the metric's
// own column), or one written by hand (a column per parameter and one for the value).
Earlier table_source(const CampaignState& state, const WarmStartSource& w, const CsvTable& table,
                     const std::string& file) {
  const CampaignConfig& c = state.config;
  Earlier e;
  e.name = file;
  // Parameter columns: by prefix (tune export's param.NAME, Optuna's params_NAME, Ray Tune's
  // config/NAME, the last part of a nested one), or in a table without any, named as this campaign's
  // parameters or as those `fixed` names.
  std::vector<std::pair<std::size_t, std::string>> parameter_columns;
  std::optional<std::size_t> resolution_column;
  std::map<std::string, std::string> prefixed;  // parameter -> its column, to refuse two for one
  for (const char* prefix : {"param.", "params_", "config/"})
    for (std::size_t i = 0; i < table.header.size(); ++i)
      if (table.header[i].starts_with(prefix) && table.header[i].size() > std::string_view(prefix).size()) {
        std::string name = table.header[i].substr(std::string_view(prefix).size());
        if (std::string_view(prefix) == "config/" && name.find('/') != std::string::npos && !c.space.find(name))
          name = name.substr(name.rfind('/') + 1);  // Ray Tune's config/train_loop_config/lr
        if (const auto [it, fresh] = prefixed.emplace(name, table.header[i]); !fresh)
          throw CampaignError(file + ", line 1: the columns '" + it->second + "' and '" + table.header[i] +
                              "' both hold the parameter '" + name + "'; keep one");
        parameter_columns.emplace_back(i, name);
      }
  const bool by_prefix = !parameter_columns.empty();
  if (!by_prefix)
    for (std::size_t i = 0; i < table.header.size(); ++i)
      if (c.space.find(table.header[i]) || (c.resolution && table.header[i] == c.resolution->parameter) ||
          w.fixed.contains(table.header[i]))
        parameter_columns.emplace_back(i, table.header[i]);
  const auto is_parameter = [&](std::size_t column) {
    return std::any_of(parameter_columns.begin(), parameter_columns.end(),
                       [&](const auto& pc) { return pc.first == column; });
  };
  // The results' column: `value` in a table of tune's or Optuna's (beside them, a column named as the
  // objective is a metric: `duration`, `cost`), else the one named as the objective.
  std::size_t value_column = by_prefix ? table.column("value") : std::string::npos;
  if (value_column == std::string::npos) value_column = table.column(c.objective.name);
  if (value_column == std::string::npos) value_column = table.column("value");
  if (value_column == std::string::npos || is_parameter(value_column)) {
    std::string why = "no column '" + c.objective.name + "' or 'value' holds the objective; name the results' column so";
    if (table.header.size() == 1 && table.header[0].find_first_of(";\t") != std::string::npos)
      why = "the header is one column ('" + table.header[0] + "'): the file is separated by ';' or tabs, and tune "
            "reads comma-separated files (pandas: to_csv writes commas)";
    else if (table.column("values_0") != std::string::npos)
      why = "the table has the values_0, values_1, ... of a study of several objectives; keep the one to tune as a "
            "column named 'value' (or '" + c.objective.name + "')";
    throw CampaignError(file + ", line 1: " + why);
  }
  const std::size_t origin_column = table.column("imported_from");  // tune export's, of a warm-started campaign
  std::size_t status_column = std::string::npos;
  for (const char* name : {"status", "state"})
    if (const std::size_t i = table.column(name); status_column == std::string::npos && i != std::string::npos && !is_parameter(i))
      status_column = i;
  for (std::size_t i = 0; i < table.header.size(); ++i)
    if (table.header[i].starts_with("resolution.") && table.header[i].size() > 11) {
      resolution_column = i;
      e.resolution = table.header[i].substr(11);
    }
  // A parameter column named as this campaign's resolution is the level it ran at.
  for (auto it = parameter_columns.begin(); it != parameter_columns.end();)
    if (c.resolution && it->second == c.resolution->parameter && !resolution_column) {
      resolution_column = it->first;
      e.resolution = it->second;
      it = parameter_columns.erase(it);
    } else {
      ++it;
    }
  if (parameter_columns.empty())
    throw CampaignError(file + ", line 1: no column holds a parameter; name them param.NAME (tune export), "
                        "params_NAME (Optuna), config/NAME (Ray Tune) or as this campaign's parameters");
  for (const auto& [column, name] : parameter_columns) e.parameters.insert(name);
  for (std::size_t row = 0; row < table.rows.size(); ++row) {
    const std::vector<std::string>& cells = table.rows[row];
    const std::string where = file + ", line " + std::to_string(table.row_lines[row]);
    ++e.total;
    const std::string status = status_column == std::string::npos ? "" : lowercase(trimmed(cells[status_column]));
    const std::optional<double> value = double_from_text(trimmed(cells[value_column]));
    if ((!status.empty() && status != "complete") || trimmed(cells[value_column]).empty()) {
      e.skip.add("unfinished", kUnfinished);
      continue;
    }
    if (!value)
      throw CampaignError(where + ": the value '" + cells[value_column] + "' is not a number; a trial without a "
                          "result has an empty value");
    EarlierResult r;
    for (const auto& [column, name] : parameter_columns)
      if (!trimmed(cells[column]).empty()) r.config[name] = cells[column];  // empty: it did not apply (pandas' NaN)
    if (resolution_column && !cells[*resolution_column].empty()) {
      r.ran_at = double_from_text(trimmed(cells[*resolution_column]));
      if (!r.ran_at)
        throw CampaignError(where + ": the resolution's value '" + cells[*resolution_column] + "' is not a number");
    }
    r.value = *value;
    r.origin = origin_column != std::string::npos && !cells[origin_column].empty() ? cells[origin_column] : where;
    e.results.push_back(std::move(r));
  }
  return e;
}

// A resolution of one that is an ordinary parameter of the other: the epochs a run was trained for
// are the epochs, whether a strategy chose them as a level or as a parameter.
void normalise_resolutions(Earlier& e, const CampaignConfig& here) {
  if (e.resolution && here.space.find(*e.resolution)) {
    for (EarlierResult& r : e.results)
      if (r.ran_at) {
        r.config[*e.resolution] = *r.ran_at;
        r.ran_at.reset();
      }
    e.parameters.insert(*e.resolution);
    e.resolution.reset();
  }
  if (here.resolution && !e.resolution && e.parameters.contains(here.resolution->parameter)) {
    const std::string& name = here.resolution->parameter;
    for (EarlierResult& r : e.results)
      if (const auto it = r.config.find(name); it != r.config.end()) {
        r.ran_at = number_of(it->second);
        r.config.erase(it);
      }
    e.parameters.erase(name);
    e.resolution = name;
  }
}

WarmStartOutcome import_source(CampaignState& state, const WarmStartSource& w, std::size_t index,
                               std::set<std::string>& origins, std::set<std::string>& contents) {
  const std::filesystem::path path = w.from;
  std::error_code ec;
  std::optional<CampaignState> campaign;  // keeps the records the results point into
  std::optional<Earlier> read;
  if (std::filesystem::is_regular_file(path, ec)) {
    read = table_source(state, w, read_csv_file(path), w.from);
  } else if (has_state(path)) {
    campaign = load_state(path);  // refuses a damaged one, naming the file
    read = campaign_source(state, *campaign, w.from);
  } else {
    throw CampaignError("field '" + source_field(state, index) + "': " + w.from + " holds no campaign (no " +
                        state_path(path).filename().string() +
                        ") and is no file; give the directory of an earlier campaign, as 'tune status DIR' takes, "
                        "or a CSV file of results ('tune export', Optuna's trials_dataframe)");
  }
  Earlier& there = *read;
  normalise_resolutions(there, state.config);
  const FixedValues f = read_fixed(w, source_field(state, index), state.config, there);
  WarmStartOutcome out;
  out.from = w.from;
  out.trials = there.total;
  SkipTally& skip = there.skip;
  std::size_t repeated = 0;
  std::vector<Study::ImportedResult> batch;
  std::vector<const EarlierResult*> carried;  // batch[i] is *carried[i]
  for (const EarlierResult& r : there.results) {
    if (origins.contains(r.origin)) {
      skip.add("imported already", "are the same runs as results of an earlier source (" + r.origin + ")");
      ++repeated;
      continue;
    }
    bool skipped = false;
    const std::optional<std::size_t> level = level_here(r, state.config, there, f, skip, skipped);
    if (skipped) continue;
    std::optional<Config> config = config_here(r, state.config.space, there, f, skip);
    if (!config) continue;
    // The same result by another road (a campaign and its own export): its configuration, level and
    // value, which two runs of a noisy objective never share.
    const std::string content = std::to_string(level.value_or(0)) + " " + tune::to_string(*config) + " " + format_double(r.value);
    if (!contents.insert(content).second) {
      skip.add("imported already", "are the same runs as results of an earlier source (" + r.origin + ")");
      ++repeated;
      continue;
    }
    if (!std::isfinite(r.value) || std::abs(r.value) > kMaxObjectiveMagnitude) {
      skip.add("value", "have a value the models cannot take in (not finite, or beyond +-" +
                            format_double(kMaxObjectiveMagnitude) + ")");
      continue;
    }
    batch.push_back({std::move(*config), r.value, level, r.origin});
    carried.push_back(&r);
    origins.insert(r.origin);
  }
  // One import for all (one by one, 2000 results took 10 s).
  try {
    const std::uint64_t first = state.study.import_results(std::move(batch));
    for (std::size_t i = 0; i < carried.size(); ++i) {
      TrialRun run;
      run.id = first + i;
      run.status = RunStatus::complete;
      if (const TrialRun* ran = carried[i]->run) {
        run.started_at = ran->started_at;
        run.finished_at = ran->finished_at;
        run.metrics = ran->metrics;
        run.intermediate = ran->intermediate;
      }
      state.runs.push_back(std::move(run));
    }
  } catch (const std::invalid_argument& e) {
    throw CampaignError("warm_start: " + w.from + ": " + e.what());
  }
  out.imported = carried.size();
  out.skipped = skip.lines();
  // (A source whose results all came through an earlier one adds nothing, and is no mistake.)
  if (out.imported == 0 && repeated == 0)
    throw CampaignError("warm_start: " + std::string(out.trials == 1 ? "the one trial of " : "none of the " + std::to_string(out.trials) + " trials of ") + w.from +
                        (out.trials == 1 ? " does not carry over" : " carries over") + (out.skipped.empty() ? std::string() : " (" + reasons_text(out) + ")") +
                        "; remove it from warm_start, or see README, Warm starts");
  return out;
}

}  // namespace

std::vector<WarmStartOutcome> import_warm_start(CampaignState& state) {
  std::vector<WarmStartOutcome> outcomes;
  std::set<std::filesystem::path> seen;
  std::set<std::string> origins;   // of the results imported so far: where each was run
  std::set<std::string> contents;  // and what each was (level, configuration, value)
  for (std::size_t i = 0; i < state.config.warm_start.size(); ++i) {
    const WarmStartSource& w = state.config.warm_start[i];
    std::error_code ec;
    const std::filesystem::path canonical = std::filesystem::weakly_canonical(w.from, ec);
    if (!seen.insert(ec ? std::filesystem::path(w.from) : canonical).second)
      throw CampaignError("warm_start: " + w.from + " is named twice; its results would count twice");
    outcomes.push_back(import_source(state, w, i, origins, contents));
  }
  return outcomes;
}

std::string describe(const WarmStartOutcome& o) {
  std::string text = std::to_string(o.imported) + " of the " + std::to_string(o.trials) +
                     (o.trials == 1 ? " trial of " : " trials of ") + o.from;
  return o.skipped.empty() ? text : text + " (not carried over: " + reasons_text(o) + ")";
}

}  // namespace tune::tuner
