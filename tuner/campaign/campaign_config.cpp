#include "tuner/campaign/campaign_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "tune/adapters/command/command_template.hpp"
#include "tune/io/yaml_values.hpp"
#include "tune/space/space_yaml.hpp"
#include "tune/strategy/gpoo_strategy.hpp"
#include "tune/strategy/option_fields.hpp"
#include "tune/strategy/strategy_factory.hpp"
#include "tuner/campaign/duration.hpp"

namespace tune::tuner {

namespace {

std::string where(const YAML::Node& node) { return position_of(node); }

[[noreturn]] void fail(const YAML::Node& node, const std::string& field, const std::string& what) {
  throw CampaignError("field '" + field + "' at " + where(node) + ": " + what, field, what);
}

// check_known_keys, with the key a typo meant: `budgt:` was refused with the list of ten keys to
// compare by eye; now "unknown key (did you mean 'budget'?); expected one of: ...".
void refuse_unknown_keys(const YAML::Node& node, const std::string& field, const std::set<std::string>& known) {
  if (node.IsMap())
    for (const auto& kv : node) {
      const std::string key = kv.first.Scalar();
      if (known.contains(key)) continue;
      const std::string nearest = option_fields::nearest_name(key, known);
      if (nearest.empty()) break;  // the first unknown key, refused below as before
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      fail(kv.first, field.empty() ? key : field + "." + key,
           "unknown key (did you mean '" + nearest + "'?); expected one of: " + list);
    }
  tune::check_known_keys(node, field, known);
}

// YAML 1.1's merge key (`y: {<<: *x, high: 2}`) is not YAML 1.2, and yaml-cpp reads `<<` as a key
// like any other: the parameter would then miss the fields it meant to take from the anchor, and be
// refused for that. Refuse the `<<` itself, at its line. (A quoted '<<' is a plain key, judged as any.)
// Nodes reached again through an alias are walked once, by their position in the text.
void refuse_merge_keys(const YAML::Node& node, const std::string& path, std::set<std::size_t>& visited) {
  if (!(node.IsMap() || node.IsSequence())) return;
  if (!visited.insert(2 * node.Mark().pos + (node.IsMap() ? 1 : 0)).second) return;
  std::size_t i = 0;
  for (const auto& item : node) {
    if (node.IsSequence()) {
      refuse_merge_keys(item, path + "[" + std::to_string(i++) + "]", visited);
      continue;
    }
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : "?";
    const std::string field = path.empty() ? key : path + "." + key;
    if (key == "<<" && item.first.Tag() != "!")
      fail(item.first, field, "merge keys ('<<') are not supported; repeat the fields");
    refuse_merge_keys(item.second, field, visited);
  }
}

std::size_t read_count(const YAML::Node& node, const std::string& field, std::size_t minimum) {
  std::uint64_t v = 0;
  try {
    v = read_uint(node, field);
  } catch (const StateError&) {
    const std::string text = node.IsScalar() ? node.Scalar() : std::string();
    // 99999999999999999999999 is a whole number: "expected a whole number" sent the user looking for a typo.
    if (!text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
      fail(node, field, "'" + text + "' is too large (the largest is " +
                            std::to_string(std::numeric_limits<std::uint64_t>::max()) + ")");
    fail(node, field, "expected a whole number >= " + std::to_string(minimum) + ", found '" +
                          (node.IsScalar() ? node.Scalar() : std::string("a list or map")) + "'");
  }
  if (v < minimum) fail(node, field, "expected a whole number >= " + std::to_string(minimum) + ", found " + std::to_string(v));
  return static_cast<std::size_t>(v);
}

// `if_zero`: the message for a zero, saying what it would do and what to write instead (a zero is a
// duration, so "expected a duration" would not tell the user what is wrong).
double read_duration(const YAML::Node& node, const std::string& field, const std::string& if_zero) {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  const auto seconds = parse_duration(text);
  if (!seconds) fail(node, field, "expected a duration such as 90s, 30m, 6h or 1h30m, found '" + text + "'");
  if (*seconds <= 0) fail(node, field, if_zero);
  return *seconds;
}

std::string without_prefix(std::string message, const std::string& prefix) {
  if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
  return message;
}

constexpr const char* kResolutionExample = "{param: epochs, levels: [1, 3, 9, 27], cost: measured}";

// `resolution: {param: epochs, levels: [1, 3, 9, 27], cost: measured | [1, 3, 9, 27]}`; cost
// defaults to measured (the trials' run times in seconds).
Resolution read_resolution(const YAML::Node& node, const Space& space) {
  if (!node.IsMap()) fail(node, "resolution", std::string("expected a map such as ") + kResolutionExample);
  refuse_unknown_keys(node, "resolution", {"param", "levels", "cost", "timeout"});
  Resolution r;
  const YAML::Node param = node["param"];
  if (!param)
    fail(node, "resolution.param", std::string("missing: the name the trial receives the level's value as (the "
                                               "{placeholder} and TUNE_RESOLUTION), e.g. ") + kResolutionExample);
  if (!param.IsScalar() || param.Scalar().empty())
    fail(param, "resolution.param", "expected a name such as epochs (used as the {epochs} placeholder)");
  r.parameter = param.Scalar();
  if (r.parameter.find_first_of("{}") != std::string::npos)
    fail(param, "resolution.param", "expected a name without braces (write epochs, not {epochs})");
  for (const char* builtin : {"trial_id", "trial_dir", "result_file"})
    if (r.parameter == builtin)
      fail(param, "resolution.param", "'" + r.parameter + "' is a built-in placeholder; choose another name");
  bool in_space = false;
  for (const Parameter& p : space.parameters()) in_space = in_space || p.name == r.parameter;
  if (in_space)
    fail(param, "resolution.param", "'" + r.parameter + "' is also a parameter of 'space'; the resolution is chosen "
                                    "by the strategy, not searched: remove '" + r.parameter + "' from 'space'");
  // The level's value also reaches the trial as TUNE_PARAM_<NAME>: a space parameter whose name
  // differs only in punctuation or case would share the variable.
  const std::string variable = adapters::environment_name(r.parameter);
  for (const Parameter& p : space.parameters())
    if (adapters::environment_name(p.name) == variable)
      fail(param, "resolution.param", "'" + r.parameter + "' and the parameter '" + p.name +
                                          "' of 'space' both map to the environment variable " + variable +
                                          "; rename one of them");

  const YAML::Node levels = node["levels"];
  const std::string levels_expected =
      "expected a list of numbers, cheapest first, the last being the full run, e.g. [1, 3, 9, 27]";
  if (!levels) fail(node, "resolution.levels", "missing; " + levels_expected);
  if (!levels.IsSequence() || levels.size() == 0) fail(levels, "resolution.levels", levels_expected);
  for (std::size_t i = 0; i < levels.size(); ++i) {
    try {
      r.values.push_back(read_double(levels[i], "resolution.levels"));
    } catch (const StateError&) {
      fail(levels[i], "resolution.levels", levels_expected + ", found '" +
                                               (levels[i].IsScalar() ? levels[i].Scalar() : std::string("a list or map")) + "'");
    }
  }
  for (std::size_t i = 0; i < levels.size(); ++i)
    if (!std::isfinite(r.values[i]) || r.values[i] <= 0)
      fail(levels[i], "resolution.levels", "level " + std::to_string(i) + " is " + levels[i].Scalar() +
                                               "; every level must be a finite number > 0 (e.g. epochs, a fraction of the data)");
  try {
    validate(r);  // the levels alone
  } catch (const std::invalid_argument& e) {
    fail(levels, "resolution.levels", without_prefix(e.what(), "resolution: "));
  }

  if (const YAML::Node cost = node["cost"]) {
    const std::string cost_expected = "expected 'measured' (each trial's run time in seconds) or one declared cost per "
                                      "level, non-decreasing, e.g. [1, 3, 9, 27]";
    if (cost.IsScalar() && cost.Scalar() == "measured") {
      // measured: no declared costs
    } else if (cost.IsSequence()) {
      for (std::size_t i = 0; i < cost.size(); ++i) {
        try {
          r.costs.push_back(read_double(cost[i], "resolution.cost"));
        } catch (const StateError&) {
          fail(cost[i], "resolution.cost", cost_expected + ", found '" +
                                               (cost[i].IsScalar() ? cost[i].Scalar() : std::string("a list or map")) + "'");
        }
      }
      if (r.costs.empty()) fail(cost, "resolution.cost", cost_expected);
      try {
        validate(r);
      } catch (const std::invalid_argument& e) {
        fail(cost, "resolution.cost", without_prefix(e.what(), "resolution: "));
      }
    } else {
      fail(cost, "resolution.cost", cost_expected + ", found '" + (cost.IsScalar() ? cost.Scalar() : std::string("a map")) + "'");
    }
  }
  return r;
}

double read_positive(const YAML::Node& node, const std::string& field, const std::string& expected) {
  double v = 0.0;
  try {
    v = read_double(node, field);
  } catch (const StateError&) {
    fail(node, field, expected + ", found '" + (node.IsScalar() ? node.Scalar() : std::string("a list or map")) + "'");
  }
  if (!std::isfinite(v) || v <= 0) fail(node, field, expected + ", found '" + node.Scalar() + "'");
  return v;
}

// A string option of the Slurm executor: one word (no spaces or newlines), as sbatch takes it.
std::string read_word(const YAML::Node& node, const std::string& field, const std::string& example) {
  const std::string v = node.IsScalar() ? node.Scalar() : std::string();
  if (v.empty() || v.find_first_of(" \t\r\n") != std::string::npos)
    fail(node, field, "expected one word without spaces, e.g. " + example + ", found '" +
                          (node.IsScalar() ? v : std::string("a list or map")) + "'");
  return v;
}

// `resolution.timeout`: one positive duration per level.
std::vector<double> read_level_timeouts(const YAML::Node& node, const Resolution& r) {
  const std::string expected = "expected one time limit per level (" + std::to_string(r.levels()) +
                               "), such as [1m, 3m, 9m, 30m] for levels " + level_values_text(r);
  if (!node.IsSequence() || node.size() != r.levels()) fail(node, "resolution.timeout", expected);
  std::vector<double> limits;
  for (const YAML::Node& t : node)
    limits.push_back(read_duration(t, "resolution.timeout",
                                   "a timeout of zero would stop every trial of its level as it starts; give a "
                                   "positive duration such as 30m"));
  return limits;
}

constexpr const char* kSlurmExample = "{kind: slurm, workers: 8, partition: gpu, time: 2h, cpus: 4, memory: 16G, gres: gpu:1}";

// `executor: {kind: local | slurm, workers, timeout, grace, ...}`; the Slurm options only with kind slurm.
ExecutorSpec read_executor(const YAML::Node& e) {
  ExecutorSpec x;
  if (e.IsScalar() && (e.Scalar() == "local" || e.Scalar() == "slurm")) {  // `executor: slurm`
    x.kind = e.Scalar();
    return x;
  }
  if (!e.IsMap()) fail(e, "executor", std::string("expected a map such as {kind: local, workers: 2} or ") + kSlurmExample);
  if (e["kind"]) x.kind = read_string(e["kind"], "executor.kind");
  const std::set<std::string> common{"kind", "workers", "timeout", "grace"};
  const std::set<std::string> slurm{"partition", "time", "cpus", "memory", "gres", "account", "qos",
                                    "extra", "setup", "poll", "retries"};
  if (x.kind == "local") {
    for (const auto& kv : e)
      if (slurm.contains(kv.first.as<std::string>()))
        fail(kv.first, "executor." + kv.first.as<std::string>(), "an option of the Slurm executor; add 'kind: slurm' (or remove it)");
    refuse_unknown_keys(e, "executor", common);
  } else if (x.kind == "slurm") {
    std::set<std::string> all = common;
    all.insert(slurm.begin(), slurm.end());
    refuse_unknown_keys(e, "executor", all);
  } else {
    fail(e["kind"], "executor.kind", "expected 'local' (subprocesses on this machine) or 'slurm' (batch jobs), found '" + x.kind + "'");
  }
  if (e["workers"]) x.workers = read_count(e["workers"], "executor.workers", 1);
  if (e["timeout"])
    x.timeout_seconds = read_duration(e["timeout"], "executor.timeout",
                                      "a timeout of zero would stop every trial as it starts; remove executor.timeout "
                                      "for no time limit, or give a positive duration such as 30m");
  if (e["grace"])
    x.grace_seconds = read_duration(e["grace"], "executor.grace",
                                    "a grace of zero leaves a trial no time between SIGTERM and SIGKILL to clean up; "
                                    "give a positive duration such as 10s (the default)");
  if (x.kind != "slurm") return x;

  SlurmSpec& s = x.slurm;
  if (e["partition"]) s.partition = read_word(e["partition"], "executor.partition", "gpu");
  if (const YAML::Node t = e["time"]) {
    s.time_seconds = read_duration(t, "executor.time",
                                   "a Slurm time limit of zero would end every job as it starts; remove "
                                   "executor.time for the default (timeout + grace + 1 minute), or give a positive "
                                   "duration such as 2h");
    if (*s.time_seconds > 365.0 * 86400) fail(t, "executor.time", "expected at most a year, found '" + t.Scalar() + "'");
  }
  if (e["cpus"]) s.cpus = read_count(e["cpus"], "executor.cpus", 1);
  if (const YAML::Node m = e["memory"]) {
    const std::string v = m.IsScalar() ? m.Scalar() : std::string();
    const std::size_t digits = v.find_first_not_of("0123456789");
    const bool ok = digits != 0 && !v.empty() &&
                    (digits == std::string::npos || (digits + 1 == v.size() && std::string("KMGTkmgt").find(v[digits]) != std::string::npos));
    if (!ok) fail(m, "executor.memory", "expected a size as sbatch --mem takes it: a whole number of megabytes or a number "
                                        "with K, M, G or T, e.g. 16G, found '" + (m.IsScalar() ? v : std::string("a list or map")) + "'");
    s.memory = v;
  }
  if (e["gres"]) s.gres = read_word(e["gres"], "executor.gres", "gpu:1 or gpu:a100:2");
  if (e["account"]) s.account = read_word(e["account"], "executor.account", "my_project");
  if (e["qos"]) s.qos = read_word(e["qos"], "executor.qos", "normal");
  if (const YAML::Node extra = e["extra"]) {
    const std::string expected = "expected a list of sbatch options, one per #SBATCH line, e.g. [--constraint=a100, --exclusive]";
    if (!extra.IsSequence()) fail(extra, "executor.extra", expected);
    for (std::size_t i = 0; i < extra.size(); ++i) {
      const std::string line = extra[i].IsScalar() ? extra[i].Scalar() : std::string();
      if (line.empty() || line.find_first_of("\r\n") != std::string::npos)
        fail(extra[i], "executor.extra", expected + "; each a single line");
      s.extra.push_back(line);
    }
  }
  if (const YAML::Node setup = e["setup"]) {
    if (setup.IsScalar()) {
      s.setup = setup.Scalar();
    } else if (setup.IsSequence()) {
      for (std::size_t i = 0; i < setup.size(); ++i) {
        if (!setup[i].IsScalar()) fail(setup[i], "executor.setup", "expected shell lines (strings)");
        s.setup += setup[i].Scalar() + "\n";
      }
    } else {
      fail(setup, "executor.setup", "expected shell lines run in the job before the trial: a string or a list, e.g. "
                                    "[module load cuda, source ~/venv/bin/activate]");
    }
  }
  if (e["poll"])
    s.poll_seconds = read_duration(e["poll"], "executor.poll",
                                   "a poll interval of zero would call squeue without a pause; give a positive "
                                   "duration such as 5s (the default)");
  if (e["retries"]) s.retries = read_count(e["retries"], "executor.retries", 0);
  return x;
}

// `enqueue:`, a list of configurations to run first: every parameter of the space, and with a
// resolution optionally its parameter with one of the levels' values.
// `pruning: median`, or a map: {rule: median | percentile, percentile (with rule percentile),
// startup_trials, warmup_steps, min_trials}.
PruningRule read_pruning(const YAML::Node& node) {
  const std::string example = "pruning: median, or {rule: percentile, percentile: 25, startup_trials: 5, warmup_steps: 0}";
  PruningRule rule;
  if (node.IsScalar()) {
    if (node.Scalar() != "median")
      fail(node, "pruning", "expected 'median' or a map (" + example + "), found '" + node.Scalar() + "'");
    return rule;
  }
  if (!node.IsMap()) fail(node, "pruning", "expected " + example);
  refuse_unknown_keys(node, "pruning", {"rule", "percentile", "startup_trials", "warmup_steps", "min_trials"});
  const std::string name = node["rule"] ? read_string(node["rule"], "pruning.rule") : "median";
  if (name != "median" && name != "percentile")
    fail(node["rule"], "pruning.rule",
         "expected 'median' (stop a trial worse than half the completed ones at its step) or 'percentile', found '" +
             name + "'");
  if (name == "median" && node["percentile"])
    fail(node["percentile"], "pruning.percentile", "the median rule's percentile is 50; write 'rule: percentile' to choose another");
  if (name == "percentile") {
    if (!node["percentile"])
      fail(node, "pruning.percentile", "rule percentile needs 'percentile' (25 keeps the best quarter; 50 is the median rule)");
    rule.percentile = read_double(node["percentile"], "pruning.percentile");
  }
  if (node["startup_trials"]) rule.startup_trials = read_count(node["startup_trials"], "pruning.startup_trials", 0);
  if (node["warmup_steps"]) {
    rule.warmup_steps = read_int(node["warmup_steps"], "pruning.warmup_steps");
    if (rule.warmup_steps < 0)
      fail(node["warmup_steps"], "pruning.warmup_steps", "expected a step >= 0 before which no trial is stopped");
  }
  if (node["min_trials"]) rule.min_trials = read_count(node["min_trials"], "pruning.min_trials", 1);
  try {
    rule.validate();
  } catch (const std::invalid_argument& e) {
    fail(node["percentile"] ? node["percentile"] : node, "pruning.percentile", without_prefix(e.what(), "pruning 'percentile' "));
  }
  return rule;
}

std::vector<EnqueuedConfig> read_enqueue(const YAML::Node& list, const CampaignConfig& c) {
  const std::string example = "e.g. enqueue: [{" + c.space.parameters().front().name + ": ...}]";
  if (!list.IsSequence() || list.size() == 0)
    fail(list, "enqueue", "expected a list of configurations to run first, " + example);
  if (!make_strategy(c.strategy, c.strategy_options, UnusedOptions::accept)->accepts_enqueued_trials())
    fail(list, "enqueue", "strategy " + c.strategy + " runs only configurations it chose itself (gpoo evaluates cells "
                          "of its partition, bnb the points of its lattice); remove 'enqueue' or use ei, ucb, cmets, "
                          "cmes, random or sobol");
  std::vector<EnqueuedConfig> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string field = "enqueue[" + std::to_string(i) + "]";
    if (!item.IsMap()) fail(item, field, "expected a map of parameter values, " + example);
    EnqueuedConfig e;
    for (const auto& kv : item) {
      const std::string name = kv.first.as<std::string>();
      const std::string at = field + "." + name;
      if (c.resolution && name == c.resolution->parameter) {
        const double v = read_double(kv.second, at);
        e.level = level_of(*c.resolution, v);
        if (!e.level)
          fail(kv.second, at, "expected one of the resolution's levels " + level_values_text(*c.resolution) +
                                  ", found " + format_double(v));
        continue;
      }
      const Parameter* p = c.space.find(name);
      if (!p) fail(kv.first, field, "unknown parameter '" + name + "'; the space has " + parameter_names(c.space));
      e.config[name] = value_from_yaml(*p, kv.second, at);
    }
    const std::vector<bool> applying = c.space.active(e.config);
    for (std::size_t k = 0; k < c.space.dim(); ++k)
      if (applying[k] && !e.config.contains(c.space.parameters()[k].name))
        fail(item, field, "parameter '" + c.space.parameters()[k].name +
                              "' has no value; an enqueued configuration gives every parameter of the space" +
                              (c.space.has_conditions() ? " that applies to it" : ""));
    try {
      (void)c.space.encode(e.config);
    } catch (const SpaceError& err) {
      // At the line of the parameter's value, saying what to do: a value that does not apply is removed.
      const YAML::Node at = err.parameter().empty() ? YAML::Node() : item[err.parameter()];
      const bool applies = err.parameter().empty() || c.space.active(e.config)[c.space.index_of(err.parameter())];
      fail(at ? at : item, at ? field + "." + err.parameter() : field,
           std::string(err.what()) + (applies ? "; give a value the space allows" : ""));
    }
    out.push_back(std::move(e));
  }
  return out;
}

// `warm_start: DIR`, a list of such, or of {from: DIR, fixed: {PARAM: VALUE}}.
std::vector<WarmStartSource> read_warm_start(const YAML::Node& node, const CampaignConfig& c) {
  const std::string example =
      "e.g. warm_start: ../earlier-campaign, or [{from: ../earlier-campaign, fixed: {dropout: 0.1}}]";
  if (!make_strategy(c.strategy, c.strategy_options, UnusedOptions::accept)->accepts_enqueued_trials())
    fail(node, "warm_start", "strategy " + c.strategy + " models only results of its own choosing (gpoo's cells, bnb's "
                             "lattice); remove 'warm_start' or use ei, ucb, cmets, cmes, random or sobol");
  const auto read_one = [&](const YAML::Node& item, const std::string& field) {
    WarmStartSource w;
    if (item.IsScalar()) {
      w.from = item.Scalar();
    } else if (item.IsMap()) {
      refuse_unknown_keys(item, field, {"from", "fixed"});
      w.from = read_string(require(item, "from"), field + ".from");
      if (const YAML::Node fixed = item["fixed"]) {
        if (!fixed.IsMap() || fixed.size() == 0)
          fail(fixed, field + ".fixed", "expected a map of parameter values, e.g. {dropout: 0.1}");
        for (const auto& kv : fixed) {
          const std::string name = kv.first.Scalar();
          if (!kv.second.IsScalar() || kv.second.Scalar().empty())
            fail(kv.second, field + ".fixed." + name, "expected the one value the parameter had, e.g. 0.1 or relu");
          w.fixed[name] = kv.second.Scalar();
        }
      }
    } else {
      fail(item, field, "expected a campaign directory, " + example);
    }
    if (w.from.empty()) fail(item, field, "expected a campaign directory, " + example);
    return w;
  };
  std::vector<WarmStartSource> out;
  if (node.IsSequence()) {
    if (node.size() == 0) fail(node, "warm_start", "expected a campaign directory or a list of them, " + example);
    for (std::size_t i = 0; i < node.size(); ++i) out.push_back(read_one(node[i], "warm_start[" + std::to_string(i) + "]"));
  } else {
    out.push_back(read_one(node, "warm_start"));
  }
  return out;
}

}  // namespace

CampaignConfig campaign_from_yaml(const YAML::Node& root, const std::string& source, UnusedOptions unused) {
  try {
    if (!root || !root.IsMap())
      throw CampaignError("expected a campaign: a map with name, command, space, objective, ... "
                          "(run 'tune init' for a commented example)");
    std::set<std::size_t> visited;
    refuse_merge_keys(root, "", visited);
    refuse_unknown_keys(root, "", {std::begin(kCampaignKeys), std::end(kCampaignKeys)});
    CampaignConfig c;
    c.name = read_string(require(root, "name"), "name");
    if (c.name.empty() || c.name.find('/') != std::string::npos)
      fail(root["name"], "name", "expected a non-empty name without '/'");

    // Without `command` the campaign is driven from outside by tune ask / tune tell; tune run and
    // tune resume refuse it (they have nothing to launch).
    const YAML::Node command = root["command"];
    if (command && (!command.IsSequence() || command.size() == 0))
      fail(command, "command", "expected a list of arguments, e.g. [python3, train.py, --lr, \"{lr}\"] "
                               "(an argument vector, never a shell string); leave it out for a campaign driven by "
                               "tune ask / tune tell");
    for (std::size_t i = 0; command && i < command.size(); ++i) c.command.push_back(read_string(command[i], "command"));

    try {
      c.space = space_from_yaml(require(root, "space"));
    } catch (const SpaceError& e) {
      // A parameter's error already says its line (space_yaml.hpp).
      if (!e.parameter().empty()) throw CampaignError(e.what(), "space." + e.parameter(), e.what());
      fail(root["space"], "space", e.what());
    }
    if (const YAML::Node r = root["resolution"]) {
      c.resolution = read_resolution(r, c.space);
      if (const YAML::Node t = r["timeout"]) c.level_timeouts = read_level_timeouts(t, *c.resolution);
    }
    try {
      adapters::check_command_template(c.command, c.space, c.resolution ? c.resolution->parameter : std::string());
    } catch (const std::invalid_argument& e) {
      fail(command, "command", e.what());
    }

    if (const YAML::Node o = root["objective"]) {
      if (o.IsScalar()) {
        c.objective.name = o.Scalar();
        if (c.objective.name.empty())
          fail(o, "objective", "expected the name the trial reports its value as, e.g. val_acc (printed as "
                               "val_acc=0.93), or a map {name: val_acc, direction: maximize}");
      } else {
        refuse_unknown_keys(o, "objective", {"name", "direction", "deterministic"});
        if (o["name"]) c.objective.name = read_string(o["name"], "objective.name");
        // No trial can print an empty key: every trial would fail with "no value reported".
        if (c.objective.name.empty())
          fail(o["name"], "objective.name", "expected the name the trial reports its value as, e.g. val_acc (printed as "
                                            "val_acc=0.93); without it the name is 'objective'");
        if (o["direction"]) {
          try {
            c.objective.direction = direction_from_string(read_string(o["direction"], "objective.direction"));
          } catch (const std::invalid_argument& e) {
            // `maximise`, the British spelling, was refused without a word of the one meant.
            const std::string meant = option_fields::nearest_name(o["direction"].Scalar(), {"minimize", "maximize"});
            fail(o["direction"], "objective.direction",
                 e.what() + (meant.empty() ? std::string() : " (did you mean '" + meant + "'?)"));
          }
        }
        if (const YAML::Node det = o["deterministic"]) {
          try {
            c.objective.deterministic = read_bool(det, "objective.deterministic");
          } catch (const StateError&) {
            fail(det, "objective.deterministic",
                 "expected true (the same configuration always gives the same value, so none runs twice) or "
                 "false, found '" + (det.IsScalar() ? det.Scalar() : std::string("a list or map")) + "'");
          }
        }
      }
    }

    if (const YAML::Node s = root["strategy"]) {
      YAML::Node options(YAML::NodeType::Map);
      if (s.IsScalar()) {
        c.strategy = s.Scalar();
      } else {
        if (!s.IsMap())
          fail(s, "strategy", "expected a name (ei, ucb, random, sobol, cmets, cmes, gpoo, bnb) or a map {name: ei, ...}");
        c.strategy = read_string(require(s, "name"), "strategy.name");
        // Copies, not the document's nodes: assigning one of those made `options` share the
        // document's node pool, so a campaign read from state.yaml merged every node of the file
        // (all trial and run records) into it and kept them alive as long as the config (a tuner's
        // whole session), and every command paid for the merge and its teardown.
        for (const auto& kv : s)
          if (kv.first.as<std::string>() != "name") options[kv.first.as<std::string>()] = YAML::Clone(kv.second);
      }
      try {
        // The name and every option, and the options that depend on the number of levels.
        make_strategy(c.strategy, options, unused)->check_levels(c.resolution ? c.resolution->levels() : 1);
      } catch (const std::exception& e) {
        std::string what = e.what();
        // `options` holds copies, which carry no position: a reader's "field 'epsilon' at line 1,
        // column 1: expected a number" pointed nowhere (under "field 'strategy' at line 4"). Read
        // again from the document's own nodes (shared only here, on the way to the error) for the
        // error with the option's true line.
        if (s.IsMap()) {
          YAML::Node located(YAML::NodeType::Map);
          for (const auto& kv : s)
            if (kv.first.as<std::string>() != "name") located[kv.first.as<std::string>()] = kv.second;
          try {
            make_strategy(c.strategy, located, unused)->check_levels(c.resolution ? c.resolution->levels() : 1);
          } catch (const std::exception& again) {
            what = again.what();
          }
        }
        // The option a message names ("fit.noise_min": the map's path), if the file has it.
        const auto option_node = [&s](const std::string& key) { return option_fields::node_at(s, key); };
        // "strategy option 'beta_theta' must ...": name the option's own line and field.
        const std::string prefix = "strategy option '";
        if (what.rfind(prefix, 0) == 0 && s.IsMap()) {
          const std::string key = what.substr(prefix.size(), what.find('\'', prefix.size()) - prefix.size());
          if (const YAML::Node option = option_node(key)) fail(option, "strategy." + key, what);
        }
        // "unknown key 'alhpa' in strategy options ..." (or "in fit", a group of options): the key's
        // own line.
        const std::string unknown = "unknown key '";
        if (const std::size_t at = what.find(unknown); at != std::string::npos && s.IsMap()) {
          const std::size_t from = at + unknown.size();
          const std::string key = what.substr(from, what.find('\'', from) - from);
          const std::size_t in = what.find("' in ", from) + 5, in_end = what.find(" at ", in);
          const std::string group = in_end == std::string::npos ? std::string() : what.substr(in, in_end - in);
          YAML::Node map;
          map.reset(s);
          std::string path = "strategy.";
          if (group != "strategy options")
            if (const YAML::Node g = option_node(group); g && g.IsMap()) {
              map.reset(g);
              path += group + ".";
            }
          // Other tools nest a strategy's settings under `options:`; here they sit beside `name`.
          const std::string nested =
              key == "options" ? "; write them in the strategy map itself, beside its name: strategy: {name: " +
                                     c.strategy + ", OPTION: VALUE}"
                               : "";
          for (const auto& kv : map)
            if (kv.first.Scalar() == key)
              fail(kv.first, path + key,
                   "unknown option of strategy '" + c.strategy + "'" + nested +
                       what.substr(what.find(';') == std::string::npos ? what.size() : what.find(';')));
        }
        // "field 'epsilon' at line 1, column 1: expected a number" from the options' reader (a group's
        // field by its own name: 'noise_min' of fit): the option's line, and its path in the file.
        const std::string field_prefix = "field '";
        if (what.rfind(field_prefix, 0) == 0 && s.IsMap()) {
          const std::string key = what.substr(field_prefix.size(), what.find('\'', field_prefix.size()) - field_prefix.size());
          const std::size_t colon = what.find(": ", field_prefix.size());
          const std::string problem = colon == std::string::npos ? what : what.substr(colon + 2);
          if (const YAML::Node option = option_node(key)) fail(option, "strategy." + key, problem);
          for (const auto& group : s)
            if (group.second.IsMap())
              for (const auto& kv : group.second)
                if (kv.first.Scalar() == key)
                  fail(kv.second, "strategy." + group.first.Scalar() + "." + key, problem);
        }
        fail(s, "strategy", what);
      }
      c.strategy_options = options;
    } else {
      if (c.resolution) c.strategy = kDefaultResolutionStrategy;
      c.strategy_options = YAML::Node(YAML::NodeType::Map);
    }
    // A deterministic objective gains nothing from running a configuration twice; `ei` and `ucb`
    // would (the snapped acquisition optimum of a discrete space is often the incumbent's). An
    // explicit `repeat_configurations` wins.
    if (c.objective.deterministic && (c.strategy == "ei" || c.strategy == "ucb") &&
        !c.strategy_options["repeat_configurations"])
      c.strategy_options["repeat_configurations"] = false;

    if (const YAML::Node b = root["budget"]) {
      refuse_unknown_keys(b, "budget", {"trials", "cost", "wall", "failures"});
      c.budget.trials_defaulted = !b["trials"] && !b["cost"];
      if (b["trials"]) c.budget.trials = read_count(b["trials"], "budget.trials", 1);
      if (const YAML::Node cost = b["cost"]) {
        if (!c.resolution)
          fail(cost, "budget.cost", std::string("a cost budget counts the costs of resolution levels; declare a "
                                                "'resolution' such as ") + kResolutionExample +
                                        ", or use budget.trials / budget.wall");
        c.budget.cost = read_positive(cost, "budget.cost",
                                      std::string("expected a positive number of cost units (") +
                                          (c.resolution->measured() ? "seconds of trial run time, as costs are measured"
                                                                    : "the units of resolution.cost") + ")");
        // The objective is the full run's: a budget that cannot pay for one never observes it.
        if (!c.resolution->measured() && *c.budget.cost < c.resolution->costs.back())
          fail(cost, "budget.cost", "the budget " + format_double(*c.budget.cost) + " is below the cost " +
                                        format_double(c.resolution->costs.back()) +
                                        " of one full-resolution run (the last level): no run of the level the "
                                        "objective is about could be made; raise it");
        if (!b["trials"]) c.budget.trials.reset();  // the cost budget is the limit
      }
      if (b["wall"])
        c.budget.wall_seconds =
            read_duration(b["wall"], "budget.wall",
                          "a wall-time budget of zero would end the campaign before its first trial; remove "
                          "budget.wall for no time limit, or give a positive duration such as 6h");
      if (b["failures"]) c.budget.max_failures = read_count(b["failures"], "budget.failures", 1);
    }

    // A gpoo round is S trials whose mean is one feedback. With S above the trial budget no round
    // completed: a 20-trial campaign with {representatives: 60} ran 20 points of one cell's grid,
    // made no decision and recommended nothing, and `tune status` counted "1 gpoo rounds (cells
    // observed)".
    if (c.strategy == "gpoo" && c.budget.trials) {
      const std::size_t per_round = gpoo_strategy_options_from_yaml(c.strategy_options).trials_per_round();
      if (per_round > *c.budget.trials) {
        const YAML::Node strategy = root["strategy"];
        const YAML::Node budget = root["budget"];
        const YAML::Node at = strategy.IsMap() && strategy["representatives"] ? strategy["representatives"] : strategy;
        fail(at, "strategy.representatives",
             "a gpoo round runs its " + std::to_string(per_round) + " representatives and tells their mean as one "
             "feedback, but budget.trials (" + std::to_string(*c.budget.trials) +
             (budget && budget["trials"] ? "" : ", the default") +
             ") is smaller, so no round would complete and gpoo would learn nothing; lower representatives "
             "or raise budget.trials to a multiple of it");
      }
    }
    if (const YAML::Node e = root["executor"]) c.executor = read_executor(e);
    if (const YAML::Node p = root["pruning"]) c.pruning = read_pruning(p);
    if (root["seed"]) c.seed = read_uint(root["seed"], "seed");
    if (const YAML::Node e = root["enqueue"]) c.enqueue = read_enqueue(e, c);
    if (const YAML::Node w = root["warm_start"]) c.warm_start = read_warm_start(w, c);
    return c;
  } catch (const CampaignError& e) {
    throw CampaignError(source + ": " + e.what(), e.field(), e.problem());
  } catch (const StateError& e) {
    throw CampaignError(source + ": " + e.what());
  }
}

std::string level_values_text(const Resolution& resolution) {
  std::string text = "[";
  for (std::size_t i = 0; i < resolution.values.size(); ++i) text += (i ? ", " : "") + adapters::resolution_value_text(resolution.values[i]);
  return text + "]";
}

CampaignConfig load_campaign_file(const std::filesystem::path& path) {
  // A binary file (a program, an archive) given by mistake was refused as "not valid YAML (unknown
  // escape character: " and then the raw byte, a NUL that cut the message short.
  {
    std::ifstream in(path, std::ios::binary);
    std::string head(64 * 1024, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    if (const std::size_t nul = head.find('\0'); nul != std::string::npos)
      throw CampaignError(path.string() + ": not a text file (byte " + std::to_string(nul) +
                          " is NUL); give a campaign file in YAML ('tune init' writes an example)");
  }
  YAML::Node root;
  try {
    root = load_yaml_file(path);
  } catch (const StateError& e) {
    throw CampaignError(path.string() + ": " + e.what());
  }
  CampaignConfig config = campaign_from_yaml(root, path.string());
  refuse_a_name_that_is_no_directory(root, config);
  return config;
}

void refuse_a_name_that_is_no_directory(const YAML::Node& root, const CampaignConfig& config) {
  // The campaign's directory is ./<name>/: '.' and '..' wrote its files into the current directory
  // or its parent. Only a new definition is refused: a state of an older version holding such a
  // name (with --dir, harmless) still loads.
  if (config.name == "." || config.name == "..")
    fail(root["name"], "name", "'" + config.name + "' names a directory that is not the campaign's own; give the "
                               "campaign a name (its directory is ./<name>/, or --dir chooses one)");
}

YAML::Node CampaignConfig::to_yaml() const {
  YAML::Node n;
  n["name"] = name;
  if (!command.empty()) {  // none: driven by tune ask / tune tell
    YAML::Node cmd(YAML::NodeType::Sequence);
    cmd.SetStyle(YAML::EmitterStyle::Flow);
    for (const std::string& a : command) cmd.push_back(a);
    n["command"] = cmd;
  }
  n["space"] = space_to_yaml(space);
  if (resolution) {
    YAML::Node r;
    r.SetStyle(YAML::EmitterStyle::Flow);
    r["param"] = resolution->parameter;
    YAML::Node levels(YAML::NodeType::Sequence);
    levels.SetStyle(YAML::EmitterStyle::Flow);
    for (double v : resolution->values) levels.push_back(yaml_double(v));
    r["levels"] = levels;
    if (resolution->measured()) {
      r["cost"] = "measured";
    } else {
      YAML::Node costs(YAML::NodeType::Sequence);
      costs.SetStyle(YAML::EmitterStyle::Flow);
      for (double v : resolution->costs) costs.push_back(yaml_double(v));
      r["cost"] = costs;
    }
    if (!level_timeouts.empty()) {
      YAML::Node limits(YAML::NodeType::Sequence);
      limits.SetStyle(YAML::EmitterStyle::Flow);
      for (double t : level_timeouts) limits.push_back(format_double(t) + "s");
      r["timeout"] = limits;
    }
    n["resolution"] = r;
  }
  n["objective"]["name"] = objective.name;
  n["objective"]["direction"] = to_string(objective.direction);
  if (objective.deterministic) n["objective"]["deterministic"] = true;
  YAML::Node s = YAML::Clone(strategy_options);
  if (!s.IsMap()) s = YAML::Node(YAML::NodeType::Map);
  YAML::Node strat;
  strat["name"] = strategy;
  for (const auto& kv : s) strat[kv.first.as<std::string>()] = kv.second;
  n["strategy"] = strat;
  if (pruning) {
    YAML::Node p;
    p.SetStyle(YAML::EmitterStyle::Flow);
    p["rule"] = pruning->percentile == 50.0 ? "median" : "percentile";
    if (pruning->percentile != 50.0) p["percentile"] = yaml_double(pruning->percentile);
    p["startup_trials"] = pruning->startup_trials;
    p["warmup_steps"] = pruning->warmup_steps;
    p["min_trials"] = pruning->min_trials;
    n["pruning"] = p;
  }
  if (budget.trials) n["budget"]["trials"] = *budget.trials;
  if (budget.cost) n["budget"]["cost"] = yaml_double(*budget.cost);
  if (budget.wall_seconds) n["budget"]["wall"] = format_double(*budget.wall_seconds) + "s";
  n["budget"]["failures"] = budget.max_failures;
  n["executor"]["kind"] = executor.kind;
  n["executor"]["workers"] = executor.workers;
  if (executor.timeout_seconds) n["executor"]["timeout"] = format_double(*executor.timeout_seconds) + "s";
  n["executor"]["grace"] = format_double(executor.grace_seconds) + "s";
  if (executor.kind == "slurm") {
    const SlurmSpec& sl = executor.slurm;
    YAML::Node x = n["executor"];
    if (sl.partition) x["partition"] = *sl.partition;
    if (sl.time_seconds) x["time"] = format_double(*sl.time_seconds) + "s";
    if (sl.cpus) x["cpus"] = *sl.cpus;
    if (sl.memory) x["memory"] = *sl.memory;
    if (sl.gres) x["gres"] = *sl.gres;
    if (sl.account) x["account"] = *sl.account;
    if (sl.qos) x["qos"] = *sl.qos;
    if (!sl.extra.empty()) {
      YAML::Node extra(YAML::NodeType::Sequence);
      for (const std::string& line : sl.extra) extra.push_back(line);
      x["extra"] = extra;
    }
    if (!sl.setup.empty()) x["setup"] = sl.setup;
    x["poll"] = format_double(sl.poll_seconds) + "s";
    x["retries"] = sl.retries;
  }
  n["seed"] = seed;
  for (const EnqueuedConfig& e : enqueue) {
    YAML::Node item = config_to_yaml(space, e.config);
    if (e.level) item[resolution->parameter] = yaml_double(resolution->values.at(*e.level));
    n["enqueue"].push_back(item);
  }
  for (const WarmStartSource& w : warm_start) {
    YAML::Node item;
    item["from"] = w.from;
    for (const auto& [parameter, value] : w.fixed) item["fixed"][parameter] = value;
    n["warm_start"].push_back(item);
  }
  return n;
}

std::string example_campaign_text(const std::string& file) {
  return "# A tune campaign. Run it with:  tune run " + file +
         "\n# (Without `command`, your own scheduler runs the trials: tune ask " + file +
         ", tune tell DIR ID VALUE.)\n"
         "# Run it again after raising the budget or changing the executor (workers, timeout) or the\n"
         "# resolution's timeout: the campaign continues with them.\n" +
         R"(# Every trial runs `command` with the {placeholders} replaced by a configuration. The trial reports
# its result on stdout as a line `objective=0.93` (or `<objective name>=<value>`, a JSON object line,
# SMAC's `cost=...; status=...`), or in the YAML/JSON file named by $TUNE_RESULT_FILE.
name: example
command: [python3, train.py, --lr, "{lr}", --layers, "{layers}", --act, "{act}"]
space:
  lr:     {type: float, low: 1.0e-5, high: 1.0, log: true}
  layers: {type: int, low: 1, high: 8}
  act:    {type: categorical, choices: [relu, tanh]}
  # also: {type: ordinal, choices: [16, 32, 64]}, {type: int, low: 1, high: 1024, log: true}
  # conditional: only for some values of an earlier parameter, and then passed as one argument
  # ("--gain={gain}" in command), left out elsewhere:
  # gain: {type: float, low: 0.5, high: 2, when: {act: [tanh]}}
# Cheap low-fidelity runs: the trial gets the level's value as {epochs} and $TUNE_RESOLUTION; with
# strategy cmets the tuner chooses the level too. cost: measured (run time, seconds) or [1, 3, 9, 27].
# resolution: {param: epochs, levels: [1, 3, 9, 27], cost: measured}
#   add timeout: [1m, 3m, 9m, 30m] for a time limit per level (then, with a cost budget, runs at
#   levels not yet priced need not run alone, and a run starts only if it fits the budget at its
#   limit + grace + 5 s: keep limits near the runs' length, and grace short for short runs; limits
#   above the whole budget only stop hung runs)
objective: {name: val_acc, direction: maximize}   # the key the trial prints; minimize or maximize
# objective: {name: loss, deterministic: true}    # no noise: no configuration runs twice
strategy:
  name: ei          # ei (default), ucb, random, sobol; with a resolution: cmets (its default) or cmes;
                    # gpoo (a robust region, noisy objectives), bnb (deterministic objectives)
  # epsilon: 0.01   # compression: keep only observations carrying > epsilon nats (0 = exact GP)
  # stop_when_nothing_to_learn: true  # cmets, cmes: end once the model is sure nothing left beats the best
# Stop a trial early when its values along the way (stdout lines such as `val_acc=0.81 step=3`) are
# worse than the median of the completed trials' at the same step (Optuna's MedianPruner):
# pruning: {rule: median, startup_trials: 5, warmup_steps: 0}   # or {rule: percentile, percentile: 25}
budget:
  trials: 50        # trials to run
  # cost: 2000      # with a resolution: total cost (seconds when costs are measured)
  # wall: 6h        # stop launching trials once the tuner has run this long (over all its sessions)
  failures: 10      # stop after this many failed trials
executor:
  kind: local       # or slurm: every trial a batch job (README: Slurm clusters)
  workers: 2        # trials at a time (slurm: jobs in flight)
  # timeout: 30m    # per trial: SIGTERM to its process group, SIGKILL after `grace`
  grace: 10s
  # with kind: slurm, also: partition: gpu, time: 2h, cpus: 4, memory: 16G, gres: gpu:1, account, qos,
  #   extra: [--constraint=a100], setup: "module load cuda", poll: 5s, retries: 3
seed: 0             # the same seed and results give the same suggestions
# enqueue:          # configurations to run first, as written (your defaults, a known good one)
#   - {lr: 0.001, layers: 2, act: relu}
# warm_start: ../earlier-campaign   # start from an earlier campaign's results (e.g. before widening
#                                   # the space); {from: DIR, fixed: {dropout: 0.1}} for a parameter
#                                   # only one of the two searches: the value the other ran with
)";
}

std::optional<double> CampaignConfig::trial_timeout(std::optional<std::size_t> level) const {
  if (!level_timeouts.empty() && level && *level < level_timeouts.size()) return level_timeouts[*level];
  return executor.timeout_seconds;
}

double run_cost_limit(double timeout_seconds, double grace_seconds) {
  return timeout_seconds + grace_seconds + kRunCostMarginSeconds;
}

namespace {
// run_cost_limit of every level's time limit; empty unless costs are measured against a cost budget
// and every level has a limit.
std::vector<double> time_limit_costs(const CampaignConfig& c) {
  if (!c.resolution || !c.resolution->measured() || !c.budget.cost) return {};
  std::vector<double> limits;
  for (std::size_t l = 0; l < c.resolution->levels(); ++l) {
    const std::optional<double> timeout = c.trial_timeout(l);
    if (!timeout) return {};
    limits.push_back(run_cost_limit(*timeout, c.executor.grace_seconds));
  }
  return limits;
}

// Whether the longest of `limits` (time_limit_costs) is above the whole budget.
bool above_budget(const std::vector<double>& limits, const CampaignConfig& c) {
  return !limits.empty() && *std::max_element(limits.begin(), limits.end()) > *c.budget.cost;
}
}  // namespace

std::vector<double> CampaignConfig::level_cost_limits() const {
  std::vector<double> limits = time_limit_costs(*this);
  return above_budget(limits, *this) ? std::vector<double>{} : limits;
}

bool CampaignConfig::hang_guard_limits() const { return above_budget(time_limit_costs(*this), *this); }

std::optional<double> CampaignConfig::longest_trial_timeout() const {
  if (level_timeouts.empty()) return executor.timeout_seconds;
  return *std::max_element(level_timeouts.begin(), level_timeouts.end());
}

}  // namespace tune::tuner
