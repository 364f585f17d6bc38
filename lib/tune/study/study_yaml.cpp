// Study <-> YAML. The file is the whole truth of a study: space, strategy options and state, seed,
// counters and every trial, so that load() continues exactly where save() left off.
#include <fstream>
#include <sstream>

#include "tune/io/atomic_file.hpp"
#include "tune/io/yaml_values.hpp"
#include "tune/space/space_yaml.hpp"
#include "tune/strategy/strategy_factory.hpp"
#include "tune/study/study.hpp"

namespace tune {

namespace {
constexpr const char* kKind = "tune.study";
constexpr int kSchema = 1;

YAML::Node trial_to_yaml(const Space& space, const Trial& t) {
  YAML::Node n;
  n["id"] = t.id;
  n["status"] = to_string(t.status);
  n["config"] = config_to_yaml(space, t.config);
  n["unit"] = yaml_vector(t.unit);
  if (t.value) n["value"] = yaml_double(*t.value);
  if (!t.failure_reason.empty()) n["failure_reason"] = t.failure_reason;
  n["source"] = t.source;
  n["in_model"] = t.in_model;
  n["test_statistic"] = yaml_double(t.test_statistic);
  n["model_size"] = t.model_size;
  n["acquisition"] = yaml_double(t.acquisition);
  if (t.level) n["level"] = *t.level;
  if (t.cost) n["cost"] = yaml_double(*t.cost);
  return n;
}

Trial trial_from_yaml(const Space& space, const YAML::Node& n, std::uint64_t expected_id) {
  Trial t;
  t.id = read_uint(require(n, "id"), "id");
  if (t.id != expected_id)
    throw StateError("trial at " + position_of(n) + ": id " + std::to_string(t.id) + " where " +
                     std::to_string(expected_id) + " was expected (trials must be listed in id order)");
  try {
    t.status = trial_status_from_string(read_string(require(n, "status"), "status"));
  } catch (const std::invalid_argument& e) {
    throw StateError("field 'status' at " + position_of(n["status"]) + ": " + e.what());
  }
  t.config = config_from_yaml(space, require(n, "config"));
  t.unit = read_vector(require(n, "unit"), "unit");
  if (static_cast<std::size_t>(t.unit.size()) != space.dim())
    throw StateError("field 'unit' at " + position_of(n["unit"]) + ": " + std::to_string(t.unit.size()) +
                     " coordinates for a " + std::to_string(space.dim()) + "-parameter space");
  if (n["value"]) t.value = read_double(n["value"], "value");
  if (t.status == TrialStatus::complete && !t.value)
    throw StateError("trial " + std::to_string(t.id) + " at " + position_of(n) + " is complete but has no 'value'");
  if (n["failure_reason"]) t.failure_reason = read_string(n["failure_reason"], "failure_reason");
  t.source = read_string(require(n, "source"), "source");
  t.in_model = read_bool(require(n, "in_model"), "in_model");
  t.test_statistic = read_double(require(n, "test_statistic"), "test_statistic");
  t.model_size = read_uint(require(n, "model_size"), "model_size");
  t.acquisition = read_double(require(n, "acquisition"), "acquisition");
  if (n["level"]) t.level = read_uint(n["level"], "level");
  if (n["cost"]) t.cost = read_double(n["cost"], "cost");
  return t;
}
}  // namespace

std::string Study::to_yaml_string() const {
  std::string out;
  StudyYamlCache cache;
  append_yaml(out, 0, cache);
  return out;
}

YAML::Node Study::to_yaml() const {
  YAML::Node root = header_yaml();
  YAML::Node trials(YAML::NodeType::Sequence);
  for (const Trial& t : trials_) trials.push_back(trial_to_yaml(space_, t));
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
      YAML::Node node = trial_to_yaml(space_, t);
      node.SetStyle(YAML::EmitterStyle::Flow);
      fresh = emit_yaml(node);
      if (final) cached = fresh;
    }
    out += pad + "  - ";
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
  root["strategy"] = strategy_->save();
  return root;
}

void Study::save(const std::filesystem::path& path) const { write_file_atomically(path, to_yaml_string()); }

Study Study::from_yaml_string(const std::string& text, const std::string& source) {
  try {
    return from_yaml(parse_yaml(text));
  } catch (const StateError& e) {
    throw StateError(source + ": " + e.what() + "; the file was not changed");
  }
}

Study Study::from_yaml(const YAML::Node& root) {
  try {
    if (!root.IsMap() || !root["kind"] || !root["kind"].IsScalar() || root["kind"].Scalar() != kKind)
      throw StateError("not a tune study file (it has no 'kind: tune.study' at the top)");
    const std::int64_t schema = read_int(require(root, "schema"), "schema");
    if (schema != kSchema)
      throw StateError("schema " + std::to_string(schema) + " is not supported by this version of tune (it reads schema " +
                       std::to_string(kSchema) + "); use the tune version that wrote the file");
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
    if (root["cost_budget"]) study.options_.cost_budget = read_double(root["cost_budget"], "cost_budget");
    if (root["max_trials"]) {
      study.options_.max_trials = read_uint(root["max_trials"], "max_trials");
      if (*study.options_.max_trials == 0)
        throw StateError("field 'max_trials' at " + position_of(root["max_trials"]) + ": must be >= 1 (remove it for no limit)");
    }
    const YAML::Node trials = require(root, "trials");
    if (!trials.IsSequence()) throw StateError("field 'trials' at " + position_of(trials) + ": expected a list");
    for (std::size_t i = 0; i < trials.size(); ++i) study.trials_.push_back(trial_from_yaml(study.space_, trials[i], i));
    const YAML::Node strategy = require(root, "strategy");
    const std::string name = read_string(require(strategy, "name"), "strategy.name");
    try {
      study.strategy_ = make_strategy(name, strategy["options"]);
    } catch (const std::invalid_argument& e) {
      throw StateError("strategy at " + position_of(strategy) + ": " + e.what());
    }
    study.strategy_->restore(strategy, study.context());
    return study;
  } catch (const SpaceError& e) {
    throw StateError(e.what());
  }
}

Study Study::load(const std::filesystem::path& path) {
  try {
    return from_yaml(load_yaml_file(path));
  } catch (const StateError& e) {
    throw StateError(path.string() + ": " + e.what() + "; the file was not changed");
  }
}

}  // namespace tune
