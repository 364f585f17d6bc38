// Study <-> YAML. The file is the whole truth of a study: space, strategy options and state, seed,
// counters and every trial, so that load() continues exactly where save() left off. Loading refuses
// what the strategies would trip over later, or silently misuse: a trial whose numbers are not
// finite, whose config misses a parameter or leaves its range, or whose unit point is another
// configuration, and keys the writer never writes.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "tune/io/atomic_file.hpp"
#include "tune/io/flow_yaml.hpp"
#include "tune/io/yaml_values.hpp"
#include "tune/space/space_yaml.hpp"
#include "tune/strategy/strategy_factory.hpp"
#include "tune/study/study.hpp"

namespace tune {

namespace {
constexpr const char* kKind = "tune.study";
constexpr int kSchema = 1;

// A trial's record, for either writer of tune/io/flow_yaml.hpp (the file's text, or the node of
// to_yaml()).
template <class Writer>
void write_trial(Writer& w, const Space& space, const Trial& t) {
  w.begin_map();
  write_entry(w, "id", t.id);
  write_entry(w, "status", to_string(t.status));
  w.key("config");
  write_config(w, space, t.config);
  w.key("unit");
  w.begin_seq();
  for (Eigen::Index i = 0; i < t.unit.size(); ++i) w.number(t.unit(i));
  w.end_seq();
  if (t.value) write_entry(w, "value", *t.value);
  if (!t.failure_reason.empty()) write_entry(w, "failure_reason", t.failure_reason);
  write_entry(w, "source", t.source);
  write_entry(w, "in_model", t.in_model);
  write_entry(w, "test_statistic", t.test_statistic);
  write_entry(w, "model_size", t.model_size);
  write_entry(w, "acquisition", t.acquisition);
  if (t.level) write_entry(w, "level", *t.level);
  if (t.cost) write_entry(w, "cost", *t.cost);
  if (t.interrupted_cost > 0) write_entry(w, "interrupted_cost", t.interrupted_cost);
  if (t.pruned) {
    w.key("pruned");
    w.begin_map();
    write_entry(w, "step", t.pruned->step);
    write_entry(w, "last_value", t.pruned->last_value);
    w.end_map();
  }
  if (t.imported()) write_entry(w, "imported_from", t.imported_from);
  w.end_map();
}

// The keys the writer gives a trial. test_statistic and acquisition are for observability only and
// hold .nan where there was no model (random, sobol, an initial design): they are read as written.
const std::set<std::string> kTrialKeys{"id", "status", "config", "unit", "value", "failure_reason", "source",
                                       "in_model", "test_statistic", "model_size", "acquisition", "level", "cost",
                                       "interrupted_cost", "pruned", "imported_from"};

// A trial record is read by one definition, trial_from_node(), from either kind of node: yaml-cpp's,
// or the FlowNode of a record line (tune/io/flow_yaml.hpp), whose refusals name no position and make
// the loader read the file again through yaml-cpp for the message.
template <class Node>
[[noreturn]] void refuse_trial(std::uint64_t id, const Node& node, const std::string& field,
                               const std::string& what) {
  throw StateError("trial " + std::to_string(id) + ", field '" + field + "' at " + position_of(node) + ": " + what);
}

std::string unit_text(const Eigen::VectorXd& unit) {
  std::string s = "[";
  for (Eigen::Index i = 0; i < unit.size(); ++i) s += (i ? ", " : "") + format_double(unit(i));
  return s + "]";
}

// Whether `config` is the configuration at `unit`, as ask() made it (config = decode(unit)). A file
// written here agrees bit for bit; the tolerances admit one written where exp and log round
// differently, and nothing an edit would make: a float within 1e-9 of its range (linear) or of
// itself (log), plus the round-off of the bounds' magnitude; a discrete value when the unit
// coordinate is within 1e-9 of the value's cell (a coordinate on a cell's edge may decode either
// way). Comparing encode(config) with the unit instead would fail: discrete units need not be cell
// centres.
bool unit_decodes_to(const Space& space, const Eigen::VectorXd& unit, const Config& config) {
  constexpr double tolerance = 1e-9;
  const Config at = space.decode(unit);
  std::optional<Config> below, above;  // decoded only when a discrete value differs from `at`
  for (const Parameter& p : space.parameters()) {
    if (!config.contains(p.name) || !at.contains(p.name)) {
      if (config.contains(p.name) != at.contains(p.name)) return false;  // applies in one, not the other
      continue;
    }
    const Value& value = config.at(p.name);
    if (p.type == ParamType::floating) {
      const double x = std::get<double>(value);
      const double decoded = std::get<double>(at.at(p.name));
      const double width = p.scale == Scale::log ? std::fabs(x) : p.high - p.low;
      const double round_off =
          8 * std::numeric_limits<double>::epsilon() * std::max(std::fabs(p.low), std::fabs(p.high));
      if (!(std::fabs(x - decoded) <= tolerance * width + round_off)) return false;
    } else if (value != at.at(p.name)) {
      if (!below) {
        below = space.decode((unit.array() - tolerance).matrix());
        above = space.decode((unit.array() + tolerance).matrix());
      }
      // Either may leave p out, if a parent's coordinate is on a cell's edge too.
      const auto holds = [&](const Config& c) {
        const auto it = c.find(p.name);
        return it != c.end() && it->second == value;
      };
      if (!holds(*below) && !holds(*above)) return false;
    }
  }
  return true;
}

// The trial's point of the unit cube: as many coordinates as parameters, each in [0, 1].
template <class Node>
Eigen::VectorXd read_unit(const Space& space, std::uint64_t id, const Node& node) {
  const Eigen::VectorXd unit = read_vector(node, "unit");
  const std::string fix = "restore the point of the unit cube the trial was made from";
  if (static_cast<std::size_t>(unit.size()) != space.dim())
    refuse_trial(id, node, "unit", std::to_string(unit.size()) + " coordinates for a " + std::to_string(space.dim()) +
                                       "-parameter space; " + fix);
  for (Eigen::Index i = 0; i < unit.size(); ++i)
    if (!(unit(i) >= 0.0 && unit(i) <= 1.0))
      refuse_trial(id, node, "unit", "coordinate " + std::to_string(i + 1) + " ('" +
                                         space.parameters()[static_cast<std::size_t>(i)].name + "') is " +
                                         format_double(unit(i)) + "; unit coordinates lie in [0, 1]: " + fix);
  // A parameter that does not apply has one coordinate (Space::snap): another would make the same
  // configuration a second point, which could run again.
  if (space.has_conditions()) {
    const std::vector<bool> applying = space.active(unit);
    for (std::size_t i = 0; i < space.dim(); ++i)
      if (!applying[i] && unit(static_cast<Eigen::Index>(i)) != Space::inactive_coordinate)
        refuse_trial(id, node, "unit", "coordinate " + std::to_string(i + 1) + " ('" + space.parameters()[i].name +
                                           "') is " + format_double(unit(static_cast<Eigen::Index>(i))) + ", but it " +
                                           space.condition_text(i) + " and does not apply at this point, where its "
                                           "coordinate is " + format_double(Space::inactive_coordinate) + ": " + fix);
  }
  return unit;
}

// The trial's configuration: a value of every parameter, in its range or among its choices. The
// unit point, read first, says what a damaged config held.
template <class Node>
Config read_config(const Space& space, std::uint64_t id, const Node& node, const Eigen::VectorXd& unit) {
  const Config config = config_from_yaml(space, node);
  // Formatted only for a refusal: most loads refuse nothing.
  const auto hint = [&] {
    return "; its unit point " + unit_text(unit) + " is the configuration " + to_string(space.decode(unit));
  };
  const std::vector<bool> applying = space.active(config);
  for (std::size_t i = 0; i < space.dim(); ++i)
    if (applying[i] && !config.contains(space.parameters()[i].name))
      refuse_trial(id, node, "config",
                   "parameter '" + space.parameters()[i].name +
                       "' is missing; every parameter of the space that applies has a value: restore it" + hint());
  try {
    (void)space.encode(config);
  } catch (const SpaceError& e) {
    refuse_trial(id, node, "config",
                 std::string(e.what()) + ": restore the value the trial ran with (or the space, if it was edited)" + hint());
  }
  return config;
}

template <class Node>
Trial trial_from_node(const Space& space, const std::optional<Resolution>& resolution, const Node& n,
                      std::uint64_t expected_id) {
  Trial t;
  t.id = read_uint(require(n, "id"), "id");
  if (t.id != expected_id)
    throw StateError("trial at " + position_of(n) + ": id " + std::to_string(t.id) + " where " +
                     std::to_string(expected_id) + " was expected (trials must be listed in id order)");
  const std::string trial = "trial " + std::to_string(t.id);
  check_known_keys(n, "trials[" + std::to_string(t.id) + "]", kTrialKeys);
  try {
    t.status = trial_status_from_string(read_string(require(n, "status"), "status"));
  } catch (const std::invalid_argument& e) {
    throw StateError("field 'status' at " + position_of(n["status"]) + ": " + e.what());
  }
  const Node unit = require(n, "unit");
  t.unit = read_unit(space, t.id, unit);
  t.config = read_config(space, t.id, require(n, "config"), t.unit);
  if (!unit_decodes_to(space, t.unit, t.config))
    refuse_trial(t.id, unit, "unit",
                 "the unit point " + unit_text(t.unit) + " is the configuration " + to_string(space.decode(t.unit)) +
                     ", not the trial's config " + to_string(t.config) +
                     "; one of them was edited: restore it (the config's point is " +
                     unit_text(space.encode(t.config)) + ")");

  const std::string value_fix = "restore the value the trial reported, or mark the trial failed (status: failed";
  if (const Node value = n["value"]) {
    t.value = read_double(value, "value");
    if (t.status != TrialStatus::complete)
      refuse_trial(t.id, value, "value",
                   std::string("a ") + to_string(t.status) +
                       " trial has no value: remove 'value', or mark the trial complete");
    if (!std::isfinite(*t.value))
      refuse_trial(t.id, value, "value",
                   "a complete trial's value is finite, not " + format_double(*t.value) + ": " + value_fix +
                       ", without 'value')");
  }
  if (t.status == TrialStatus::complete && !t.value)
    throw StateError(trial + " at " + position_of(n) + " is complete but has no 'value': " + value_fix + ")");
  if (n["failure_reason"]) t.failure_reason = read_string(n["failure_reason"], "failure_reason");
  t.source = read_string(require(n, "source"), "source");
  t.in_model = read_bool(require(n, "in_model"), "in_model");
  t.test_statistic = read_double(require(n, "test_statistic"), "test_statistic");
  t.model_size = read_uint(require(n, "model_size"), "model_size");
  t.acquisition = read_double(require(n, "acquisition"), "acquisition");

  if (const Node level = n["level"]) {
    t.level = read_uint(level, "level");
    if (!resolution)
      refuse_trial(t.id, level, "level", "the study has no resolution, so its trials have no level: remove 'level'");
    if (*t.level > resolution->top())
      refuse_trial(t.id, level, "level",
                   "level " + std::to_string(*t.level) + " of a resolution with " +
                       std::to_string(resolution->levels()) + " levels (0 to " + std::to_string(resolution->top()) +
                       "): restore the level the trial ran at");
  } else if (resolution) {
    throw StateError(trial + " at " + position_of(n) +
                     " has no 'level', but the study has a resolution: restore the level the trial ran at (0 to " +
                     std::to_string(resolution->top()) + ")");
  }
  if (const Node cost = n["cost"]) {
    t.cost = read_double(cost, "cost");
    if (!(std::isfinite(*t.cost) && *t.cost >= 0))
      refuse_trial(t.id, cost, "cost",
                   "a cost is finite and >= 0, not " + format_double(*t.cost) +
                       ": restore what the trial cost (e.g. its run time in seconds), or remove 'cost'");
  }
  if (const Node interrupted = n["interrupted_cost"]) {
    t.interrupted_cost = read_double(interrupted, "interrupted_cost");
    if (!resolution)
      refuse_trial(t.id, interrupted, "interrupted_cost",
                   "the study has no resolution, so its budget counts trials: remove 'interrupted_cost'");
    if (!(std::isfinite(t.interrupted_cost) && t.interrupted_cost >= 0))
      refuse_trial(t.id, interrupted, "interrupted_cost",
                   "a cost is finite and >= 0, not " + format_double(t.interrupted_cost) +
                       ": restore what the trial's interrupted runs spent, or remove 'interrupted_cost'");
  }
  if (const Node pruned = n["pruned"]) {
    check_known_keys(pruned, "trials[" + std::to_string(t.id) + "].pruned", {"step", "last_value"});
    Trial::Pruned p;
    p.step = read_int(require(pruned, "step"), "pruned.step");
    p.last_value = read_double(require(pruned, "last_value"), "pruned.last_value");
    if (t.status != TrialStatus::failed)
      refuse_trial(t.id, pruned, "pruned",
                   std::string("a ") + to_string(t.status) +
                       " trial was not pruned (a pruned trial is failed, its run stopped early): remove 'pruned'");
    if (!std::isfinite(p.last_value))
      refuse_trial(t.id, pruned, "pruned", "a pruned trial's last value is finite, not " + format_double(p.last_value) +
                                                 ": restore it");
    t.pruned = p;
  }
  if (const Node from = n["imported_from"]) {
    t.imported_from = read_string(from, "imported_from");
    if (t.imported_from.empty() || t.status != TrialStatus::complete)
      refuse_trial(t.id, from, "imported_from",
                   "an imported result is a complete trial with a value, imported from a place named here: restore "
                   "the place, or remove the trial's 'imported_from' if it ran in this study");
  }
  return t;
}

// A strategy's state holds only what its save() writes: a key it does not know (a typo, an edit, a
// field of another version) was ignored without a word. Maps are compared key by key, nested ones
// and those in lists too; the restored strategy's own save() is the list of known keys.
void check_state_keys(const YAML::Node& file, const YAML::Node& saved, const std::string& field) {
  if (file.IsSequence() && saved.IsSequence()) {  // a list of records: each against its own
    for (std::size_t i = 0; i < std::min(file.size(), saved.size()); ++i)
      check_state_keys(file[i], saved[i], field + "[" + std::to_string(i) + "]");
    return;
  }
  if (!file.IsMap() || !saved.IsMap()) return;
  std::set<std::string> known;
  for (const auto& kv : saved) known.insert(kv.first.Scalar());
  check_known_keys(file, field, known);
  for (const auto& kv : file) {
    const std::string key = kv.first.Scalar();
    check_state_keys(kv.second, saved[key], field + "." + key);
  }
}
}  // namespace

std::string Study::to_yaml_string() const {
  std::string out;
  append_yaml(out, 0, yaml_cache_);
  return out;
}

YAML::Node Study::to_yaml() const {
  YAML::Node root = header_yaml();
  YAML::Node trials(YAML::NodeType::Sequence);
  for (const Trial& t : trials_) {
    YamlNodeWriter writer;
    write_trial(writer, space_, t);
    trials.push_back(writer.node());
  }
  root["trials"] = trials;
  return root;
}

void Study::append_yaml(std::string& out, int indent, StudyYamlCache& cache) const {
  append_indented(out, emit_yaml(header_yaml()), indent);
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  if (trials_.empty()) {
    out += pad + "trials: []\n";
    return;
  }
  out += pad + "trials:\n";
  if (cache.trials_.size() < trials_.size()) cache.trials_.resize(trials_.size());
  for (const Trial& t : trials_) {
    std::string& cached = cache.trials_[t.id];
    std::string fresh;
    const bool final = t.status != TrialStatus::pending;
    if (!final || cached.empty()) {
      fresh = flow_record_text([&](auto& writer) { write_trial(writer, space_, t); });
      if (final) cached = fresh;
    }
    out += pad;
    out += "  - ";
    out += final ? cached : fresh;
    out += '\n';
  }
}

YAML::Node Study::header_yaml() const {
  YAML::Node root;
  root["kind"] = kKind;
  root["schema"] = kSchema;
  root["direction"] = to_string(options_.direction);
  root["seed"] = options_.seed;
  root["ask_count"] = ask_count_;
  root["finished"] = finished_;
  root["stop_reason"] = stop_reason_;
  root["space"] = space_to_yaml(space_);
  if (options_.resolution) {
    const Resolution& r = *options_.resolution;
    YAML::Node res;
    res["parameter"] = r.parameter;
    for (double v : r.values) res["levels"].push_back(yaml_double(v));
    if (r.measured()) res["cost"] = "measured";
    else
      for (double c : r.costs) res["cost"].push_back(yaml_double(c));
    root["resolution"] = res;
  }
  if (options_.cost_budget) root["cost_budget"] = yaml_double(*options_.cost_budget);
  if (options_.max_trials) root["max_trials"] = *options_.max_trials;
  // Written only when some are waiting, so that a study without them keeps its bytes.
  for (const Enqueued& e : enqueued_) {
    YAML::Node item;
    item.SetStyle(YAML::EmitterStyle::Flow);
    item["config"] = config_to_yaml(space_, e.config);
    if (options_.resolution) item["level"] = e.level;
    root["enqueued"].push_back(item);
  }
  root["strategy"] = strategy_->save();
  // The trials come last, one line each, so a file cut at a line boundary (a copy interrupted, a
  // full disk outside tune's atomic saves) would still parse, short of trials: the count says so.
  root["trial_count"] = trials_.size();
  return root;
}

void Study::save(const std::filesystem::path& path) const { write_file_atomically(path, to_yaml_string()); }

Study Study::from_yaml_string(const std::string& text, const std::string& source) {
  try {
    return load_with_fast_records(text, [](const YAML::Node& root, const RecordLines* lines) {
      return from_yaml(root, record_lines(lines, "trials"));
    });
  } catch (const StateError& e) {
    throw StateError(source + ": " + e.what() + "; the file was not changed");
  }
}

Study Study::from_yaml(const YAML::Node& root) { return from_yaml(root, nullptr); }

Study Study::from_yaml(const YAML::Node& root, const std::vector<std::string_view>* trial_lines) {
  try {
    if (!root.IsMap() || !root["kind"] || !root["kind"].IsScalar() || root["kind"].Scalar() != kKind)
      throw StateError("not a tune study file (it has no 'kind: tune.study' at the top)");
    const std::int64_t schema = read_int(require(root, "schema"), "schema");
    if (schema != kSchema)
      throw StateError("schema " + std::to_string(schema) + " is not supported by this version of tune (it reads schema " +
                       std::to_string(kSchema) + "); use the tune version that wrote the file");
    check_known_keys(root, "", {"kind", "schema", "direction", "seed", "ask_count", "finished", "stop_reason", "space",
                                "resolution", "cost_budget", "max_trials", "enqueued", "strategy", "trial_count", "trials"});
    Study study;
    try {
      study.options_.direction = direction_from_string(read_string(require(root, "direction"), "direction"));
    } catch (const std::invalid_argument& e) {
      throw StateError("field 'direction' at " + position_of(root["direction"]) + ": " + e.what());
    }
    study.options_.seed = read_uint(require(root, "seed"), "seed");
    study.ask_count_ = read_uint(require(root, "ask_count"), "ask_count");
    study.finished_ = read_bool(require(root, "finished"), "finished");
    study.stop_reason_ = root["stop_reason"] && !root["stop_reason"].IsNull() ? read_string(root["stop_reason"], "stop_reason") : "";
    study.space_ = space_from_yaml(require(root, "space"));
    if (const YAML::Node res = root["resolution"]) {
      check_known_keys(res, "resolution", {"parameter", "levels", "cost"});
      Resolution r;
      r.parameter = read_string(require(res, "parameter"), "resolution.parameter");
      const YAML::Node levels = require(res, "levels");
      if (!levels.IsSequence()) throw StateError("field 'resolution.levels' at " + position_of(levels) + ": expected a list");
      for (const YAML::Node& v : levels) r.values.push_back(read_double(v, "resolution.levels"));
      const YAML::Node cost = require(res, "cost");
      if (cost.IsSequence())
        for (const YAML::Node& c : cost) r.costs.push_back(read_double(c, "resolution.cost"));
      else if (!(cost.IsScalar() && cost.Scalar() == "measured"))
        throw StateError("field 'resolution.cost' at " + position_of(cost) + ": expected a list or 'measured'");
      try {
        validate(r);
      } catch (const std::invalid_argument& e) {
        throw StateError(std::string("resolution at ") + position_of(res) + ": " + e.what());
      }
      study.options_.resolution = std::move(r);
    }
    if (const YAML::Node budget = root["cost_budget"]) {
      study.options_.cost_budget = read_double(budget, "cost_budget");
      if (!(std::isfinite(*study.options_.cost_budget) && *study.options_.cost_budget > 0))
        throw StateError("field 'cost_budget' at " + position_of(budget) +
                         ": the cost budget is finite and > 0, not " + format_double(*study.options_.cost_budget) +
                         ": restore it");
    }
    if (root["max_trials"]) {
      study.options_.max_trials = read_uint(root["max_trials"], "max_trials");
      if (*study.options_.max_trials == 0)
        throw StateError("field 'max_trials' at " + position_of(root["max_trials"]) + ": must be >= 1 (remove it for no limit)");
    }
    if (!root["trials"])
      throw StateError("field 'trials' at " + position_of(root) +
                       ": missing; a study ends with its trials, so this file looks cut short (a copy "
                       "interrupted?): restore it from a backup");
    const YAML::Node trials = root["trials"];
    if (!trials.IsSequence()) throw StateError("field 'trials' at " + position_of(trials) + ": expected a list");
    study.trials_.reserve(trial_lines ? trial_lines->size() : trials.size());
    read_records(trials, trial_lines, "trial", [&](const auto& node, std::size_t i) {
      study.trials_.push_back(trial_from_node(study.space_, study.options_.resolution, node, i));
    });
    // Files written before trial_count have none; a file cut short has fewer trials than it says.
    if (const YAML::Node count = root["trial_count"]) {
      const std::uint64_t expected = read_uint(count, "trial_count");
      if (expected != study.trials_.size())
        throw StateError("field 'trials' at " + position_of(trials) + ": " + std::to_string(study.trials_.size()) +
                         (study.trials_.size() == 1 ? " trial" : " trials") + " where the file says " +
                         std::to_string(expected) + " (trial_count at " + position_of(count) + ")" +
                         (study.trials_.size() < expected
                              ? ": the file is cut short (a copy interrupted?); restore it from a backup"
                              : ": trials were added by hand; restore the file from a backup"));
    }
    // Every trial but an imported result was made by an ask, and the strategies draw their random
    // numbers by ask count.
    if (const std::size_t asked = study.trials_.size() - study.imported_count(); study.ask_count_ < asked) {
      const std::string count = std::to_string(asked);
      throw StateError("field 'ask_count' at " + position_of(root["ask_count"]) + ": " +
                       std::to_string(study.ask_count_) + " asks for " + count +
                       " trials; every trial comes from an ask: restore the count (at least " + count + ")");
    }
    const YAML::Node strategy = require(root, "strategy");
    const std::string name = read_string(require(strategy, "name"), "strategy.name");
    try {
      study.strategy_ = make_strategy(name, strategy["options"]);
    } catch (const std::invalid_argument& e) {
      throw StateError("strategy at " + position_of(strategy) + ": " + e.what());
    }
    if (const YAML::Node enqueued = root["enqueued"]) {
      if (!enqueued.IsSequence())
        throw StateError("field 'enqueued' at " + position_of(enqueued) + ": expected a list of {config, level}");
      for (const YAML::Node& item : enqueued) {
        if (!item.IsMap()) throw StateError("field 'enqueued' at " + position_of(item) + ": expected {config: {...}}");
        check_known_keys(item, "enqueued", {"config", "level"});
        const YAML::Node config = require(item, "config");
        std::optional<std::size_t> level;
        if (item["level"]) level = read_uint(item["level"], "enqueued.level");
        try {
          study.enqueue(config_from_yaml(study.space_, config), level);
        } catch (const std::invalid_argument& e) {
          throw StateError("field 'enqueued' at " + position_of(item) + ": " + e.what() +
                           " (restore the configuration, or remove it to not run it)");
        }
      }
    }
    study.strategy_->restore(strategy, study.context());
    check_state_keys(strategy, study.strategy_->save(), "strategy");
    return study;
  } catch (const SpaceError& e) {
    throw StateError(e.what());
  }
}

Study Study::load(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const StateError& e) {
    throw StateError(path.string() + ": " + e.what() + "; the file was not changed");
  }
  return from_yaml_string(text, path.string());
}

}  // namespace tune
