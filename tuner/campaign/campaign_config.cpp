#include "tuner/campaign/campaign_config.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "tune/adapters/command/command_template.hpp"
#include "tune/io/yaml_values.hpp"
#include "tune/space/space_yaml.hpp"
#include "tune/strategy/strategy_factory.hpp"
#include "tuner/campaign/duration.hpp"

namespace tune::tuner {

namespace {

std::string where(const YAML::Node& node) { return position_of(node); }

[[noreturn]] void fail(const YAML::Node& node, const std::string& field, const std::string& what) {
  throw CampaignError("field '" + field + "' at " + where(node) + ": " + what);
}

void check_keys(const YAML::Node& node, const std::string& field, const std::set<std::string>& known) {
  if (!node.IsMap()) fail(node, field, "expected a map");
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (known.count(key)) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    fail(kv.first, field.empty() ? key : field + "." + key, "unknown key; expected one of: " + list);
  }
}

std::size_t read_count(const YAML::Node& node, const std::string& field, std::size_t minimum) {
  std::uint64_t v = 0;
  try {
    v = read_uint(node, field);
  } catch (const StateError&) {
    fail(node, field, "expected a whole number >= " + std::to_string(minimum) + ", found '" +
                          (node.IsScalar() ? node.Scalar() : std::string("a list or map")) + "'");
  }
  if (v < minimum) fail(node, field, "expected a whole number >= " + std::to_string(minimum) + ", found " + std::to_string(v));
  return static_cast<std::size_t>(v);
}

double read_duration(const YAML::Node& node, const std::string& field) {
  const std::string text = node.IsScalar() ? node.Scalar() : "";
  const auto seconds = parse_duration(text);
  if (!seconds || *seconds <= 0)
    fail(node, field, "expected a duration such as 90s, 30m, 6h or 1h30m, found '" + text + "'");
  return *seconds;
}

}  // namespace

CampaignConfig campaign_from_yaml(const YAML::Node& root, const std::string& source) {
  try {
    if (!root || !root.IsMap())
      throw CampaignError("expected a campaign: a map with name, command, space, objective, ... "
                          "(run 'tune init' for a commented example)");
    check_keys(root, "", {"name", "command", "space", "objective", "strategy", "budget", "executor", "seed"});
    CampaignConfig c;
    c.name = read_string(require(root, "name"), "name");
    if (c.name.empty() || c.name.find('/') != std::string::npos)
      fail(root["name"], "name", "expected a non-empty name without '/'");

    const YAML::Node command = require(root, "command");
    if (!command.IsSequence() || command.size() == 0)
      fail(command, "command", "expected a list of arguments, e.g. [python3, train.py, --lr, \"{lr}\"] "
                               "(an argument vector, never a shell string)");
    for (std::size_t i = 0; i < command.size(); ++i) c.command.push_back(read_string(command[i], "command"));

    try {
      c.space = space_from_yaml(require(root, "space"));
    } catch (const SpaceError& e) {
      fail(root["space"], "space", e.what());
    }
    try {
      adapters::check_command_template(c.command, c.space);
    } catch (const std::invalid_argument& e) {
      fail(command, "command", e.what());
    }

    if (const YAML::Node o = root["objective"]) {
      if (o.IsScalar()) {
        c.objective.name = o.Scalar();
      } else {
        check_keys(o, "objective", {"name", "direction"});
        if (o["name"]) c.objective.name = read_string(o["name"], "objective.name");
        if (o["direction"]) {
          try {
            c.objective.direction = direction_from_string(read_string(o["direction"], "objective.direction"));
          } catch (const std::invalid_argument& e) {
            fail(o["direction"], "objective.direction", e.what());
          }
        }
      }
    }

    if (const YAML::Node s = root["strategy"]) {
      YAML::Node options(YAML::NodeType::Map);
      if (s.IsScalar()) {
        c.strategy = s.Scalar();
      } else {
        if (!s.IsMap()) fail(s, "strategy", "expected a name (ei, ucb, random, sobol) or a map {name: ei, ...}");
        c.strategy = read_string(require(s, "name"), "strategy.name");
        for (const auto& kv : s)
          if (kv.first.as<std::string>() != "name") options[kv.first.as<std::string>()] = kv.second;
      }
      try {
        make_strategy(c.strategy, options);  // validates the name and every option
      } catch (const std::exception& e) {
        fail(s, "strategy", e.what());
      }
      c.strategy_options = options;
    } else {
      c.strategy_options = YAML::Node(YAML::NodeType::Map);
    }

    if (const YAML::Node b = root["budget"]) {
      check_keys(b, "budget", {"trials", "wall", "failures"});
      if (b["trials"]) c.budget.trials = read_count(b["trials"], "budget.trials", 1);
      if (b["wall"]) c.budget.wall_seconds = read_duration(b["wall"], "budget.wall");
      if (b["failures"]) c.budget.max_failures = read_count(b["failures"], "budget.failures", 1);
    }

    if (const YAML::Node e = root["executor"]) {
      check_keys(e, "executor", {"kind", "workers", "timeout", "grace"});
      if (e["kind"]) c.executor.kind = read_string(e["kind"], "executor.kind");
      if (c.executor.kind != "local")
        fail(e["kind"], "executor.kind", "expected 'local' (the only executor in this version), found '" + c.executor.kind + "'");
      if (e["workers"]) c.executor.workers = read_count(e["workers"], "executor.workers", 1);
      if (e["timeout"]) c.executor.timeout_seconds = read_duration(e["timeout"], "executor.timeout");
      if (e["grace"]) c.executor.grace_seconds = read_duration(e["grace"], "executor.grace");
    }
    if (root["seed"]) c.seed = read_uint(root["seed"], "seed");
    return c;
  } catch (const CampaignError& e) {
    throw CampaignError(source + ": " + e.what());
  } catch (const StateError& e) {
    throw CampaignError(source + ": " + e.what());
  }
}

CampaignConfig load_campaign_file(const std::filesystem::path& path) {
  YAML::Node root;
  try {
    root = load_yaml_file(path);
  } catch (const StateError& e) {
    throw CampaignError(path.string() + ": " + e.what());
  }
  return campaign_from_yaml(root, path.string());
}

YAML::Node CampaignConfig::to_yaml() const {
  YAML::Node n;
  n["name"] = name;
  YAML::Node cmd(YAML::NodeType::Sequence);
  cmd.SetStyle(YAML::EmitterStyle::Flow);
  for (const std::string& a : command) cmd.push_back(a);
  n["command"] = cmd;
  n["space"] = space_to_yaml(space);
  n["objective"]["name"] = objective.name;
  n["objective"]["direction"] = to_string(objective.direction);
  YAML::Node s = YAML::Clone(strategy_options);
  if (!s.IsMap()) s = YAML::Node(YAML::NodeType::Map);
  YAML::Node strat;
  strat["name"] = strategy;
  for (const auto& kv : s) strat[kv.first.as<std::string>()] = kv.second;
  n["strategy"] = strat;
  n["budget"]["trials"] = budget.trials;
  if (budget.wall_seconds) n["budget"]["wall"] = format_double(*budget.wall_seconds) + "s";
  n["budget"]["failures"] = budget.max_failures;
  n["executor"]["kind"] = executor.kind;
  n["executor"]["workers"] = executor.workers;
  if (executor.timeout_seconds) n["executor"]["timeout"] = format_double(*executor.timeout_seconds) + "s";
  n["executor"]["grace"] = format_double(executor.grace_seconds) + "s";
  n["seed"] = seed;
  return n;
}

std::string example_campaign_text() {
  return R"(# A tune campaign. Run it with:  tune run campaign.yaml
# Every trial runs `command` with the {placeholders} replaced by a configuration. The trial reports
# its result on stdout as a line `objective=0.93` (or `<objective name>=<value>`, a JSON object line,
# SMAC's `cost=...; status=...`), or in the YAML/JSON file named by $TUNE_RESULT_FILE.
name: example
command: [python3, train.py, --lr, "{lr}", --layers, "{layers}", --act, "{act}"]
space:
  lr:     {type: float, low: 1.0e-5, high: 1.0, log: true}
  layers: {type: int, low: 1, high: 8}
  act:    {type: categorical, choices: [relu, tanh]}
  # also: {type: ordinal, choices: [16, 32, 64]}, {type: int, low: 1, high: 1024, log: true}
objective: {name: val_acc, direction: maximize}   # the key the trial prints; minimize or maximize
strategy:
  name: ei          # ei (default), ucb, random, sobol
  # epsilon: 0.01   # compression: keep only observations carrying > epsilon nats (0 = exact GP)
budget:
  trials: 50        # trials to run
  # wall: 6h        # stop launching new trials after this long
  failures: 10      # stop after this many failed trials
executor:
  kind: local
  workers: 2        # trials at a time
  # timeout: 30m    # per trial: SIGTERM to its process group, SIGKILL after `grace`
  grace: 10s
seed: 0             # the same seed and results give the same suggestions
)";
}

}  // namespace tune::tuner
