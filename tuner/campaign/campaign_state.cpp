#include "tuner/campaign/campaign_state.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "tune/io/atomic_file.hpp"
#include "tune/io/flow_yaml.hpp"
#include "tune/io/yaml_values.hpp"
#include "tune/space/space_yaml.hpp"
#include "tune/strategy/strategy_factory.hpp"
#include "tuner/campaign/campaign_files.hpp"

namespace tune::tuner {

namespace {
constexpr const char* kKind = "tune.campaign";
constexpr int kSchema = 1;

template <class Node>
adapters::ExitKind exit_kind_from_string(const std::string& s, const Node& node) {
  for (auto k : {adapters::ExitKind::exited, adapters::ExitKind::signaled, adapters::ExitKind::timeout,
                 adapters::ExitKind::cancelled, adapters::ExitKind::launch_failed, adapters::ExitKind::lost,
                 adapters::ExitKind::aborted})
    if (s == adapters::to_string(k)) return k;
  throw StateError("field 'exit.kind' at " + position_of(node) + ": unknown exit kind '" + s + "'");
}

template <class Node>
RunStatus run_status_from_string(const std::string& s, const Node& node) {
  for (auto k : {RunStatus::queued, RunStatus::running, RunStatus::complete, RunStatus::failed})
    if (s == to_string(k)) return k;
  throw StateError("field 'status' at " + position_of(node) + ": expected queued, running, complete or failed, found '" + s + "'");
}

// A run's record, for either writer of tune/io/flow_yaml.hpp.
template <class Writer>
void write_run(Writer& w, const TrialRun& r) {
  w.begin_map();
  write_entry(w, "id", r.id);
  write_entry(w, "status", to_string(r.status));
  write_entry(w, "attempts", r.attempts);
  write_entry(w, "started_at", r.started_at);
  write_entry(w, "finished_at", r.finished_at);
  if (r.exit) {
    w.key("exit");
    w.begin_map();
    write_entry(w, "kind", adapters::to_string(r.exit->kind));
    write_entry(w, "code", r.exit->code);
    write_entry(w, "signal", r.exit->signal);
    write_entry(w, "duration", r.exit->duration());
    if (!r.exit->message.empty()) write_entry(w, "message", r.exit->message);
    w.end_map();
  }
  if (!r.failure_reason.empty()) write_entry(w, "failure_reason", r.failure_reason);
  if (!r.intermediate.empty()) {
    w.key("intermediate");
    w.begin_seq();
    for (const auto& iv : r.intermediate) {
      w.begin_seq();
      w.integer(iv.step);
      w.number(iv.value);
      w.end_seq();
    }
    w.end_seq();
  }
  if (!r.metrics.empty()) {
    w.key("metrics");
    w.begin_map();
    for (const auto& [name, value] : r.metrics) write_entry(w, name, value);
    w.end_map();
  }
  if (r.external) write_entry(w, "external", true);
  if (!r.job.empty()) write_entry(w, "job", r.job);
  if (r.lost > 0) write_entry(w, "lost", r.lost);
  if (r.pruned) {
    w.key("pruned");
    w.begin_map();
    write_entry(w, "step", r.pruned->step);
    write_entry(w, "value", r.pruned->value);
    write_entry(w, "reason", r.pruned->reason);
    w.end_map();
  }
  w.end_map();
}

// A run record, by one definition for either kind of node: yaml-cpp's, or the FlowNode of a record
// line (tune/io/flow_yaml.hpp), whose refusals name no position and make load_state read the file
// again through yaml-cpp for the message. `duration` gets exit.duration as written (or stays).
template <class Node>
TrialRun run_from_node(const Node& n, std::uint64_t expected, double& duration) {
  TrialRun r;
  r.id = read_uint(require(n, "id"), "id");
  if (r.id != expected)
    throw StateError("run record at " + position_of(n) + ": id " + std::to_string(r.id) + " where " +
                     std::to_string(expected) + " was expected");
  const std::string field = "runs[" + std::to_string(r.id) + "]";
  check_known_keys(n, field, {"id", "status", "attempts", "started_at", "finished_at", "exit", "failure_reason",
                              "intermediate", "metrics", "external", "job", "lost", "pruned"});
  r.status = run_status_from_string(read_string(require(n, "status"), "status"), n["status"]);
  r.attempts = read_uint(require(n, "attempts"), "attempts");
  r.started_at = read_double(require(n, "started_at"), "started_at");
  r.finished_at = read_double(require(n, "finished_at"), "finished_at");
  if (const Node e = n["exit"]) {
    check_known_keys(e, field + ".exit", {"kind", "code", "signal", "duration", "message"});
    adapters::TrialExit x;
    x.kind = exit_kind_from_string(read_string(require(e, "kind"), "exit.kind"), e);
    x.code = static_cast<int>(read_int(require(e, "code"), "exit.code"));
    x.signal = static_cast<int>(read_int(require(e, "signal"), "exit.signal"));
    x.started_at = r.started_at;
    duration = read_double(require(e, "duration"), "exit.duration");
    x.finished_at = r.started_at + duration;
    if (e["message"]) x.message = read_string(e["message"], "exit.message");
    r.exit = x;
  }
  if (n["failure_reason"]) r.failure_reason = read_string(n["failure_reason"], "failure_reason");
  if (const Node iv = n["intermediate"])
    for (std::size_t i = 0; i < iv.size(); ++i)
      r.intermediate.push_back({read_int(iv[i][0], "intermediate.step"), read_double(iv[i][1], "intermediate.value")});
  if (const Node m = n["metrics"])
    for (const auto& kv : entries_of(m)) r.metrics[key_text(kv.first)] = read_double(kv.second, "metrics");
  if (n["external"]) r.external = read_bool(n["external"], "external");
  if (n["job"]) r.job = read_string(n["job"], "job");
  if (n["lost"]) r.lost = read_uint(n["lost"], "lost");
  if (const Node p = n["pruned"]) {
    check_known_keys(p, field + ".pruned", {"step", "value", "reason"});
    PruneRecord pr;
    pr.step = read_int(require(p, "step"), "pruned.step");
    pr.value = read_double(require(p, "value"), "pruned.value");
    pr.reason = read_string(require(p, "reason"), "pruned.reason");
    if (!std::isfinite(pr.value))
      throw StateError("field '" + field + ".pruned.value' at " + position_of(p) +
                       ": a pruned trial's last value is finite: restore it, or remove 'pruned' to run the trial again");
    if (r.status == RunStatus::failed || r.status == RunStatus::queued)
      throw StateError("field '" + field + ".pruned' at " + position_of(p) + ": a " + to_string(r.status) +
                       " trial was not pruned: remove 'pruned'");
    r.pruned = pr;
  }
  return r;
}

// The wall budget adds up these times: a damaged one would end or prolong the campaign at random.
double read_seconds(const YAML::Node& node, const std::string& field) {
  const double v = read_double(node, field);
  if (!(std::isfinite(v) && v >= 0))
    throw StateError("field '" + field + "' at " + position_of(node) + ": expected seconds, finite and >= 0, found " +
                     format_double(v) + ": restore it");
  return v;
}

bool same_resolution(const std::optional<Resolution>& a, const std::optional<Resolution>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->parameter == b->parameter && a->values == b->values && a->costs == b->costs);
}

// Where the campaign and its study disagree: the key of each ("space" and "space", ...), or nothing.
std::optional<std::pair<std::string, std::string>> campaign_study_disagreement(const CampaignConfig& config,
                                                                               const Study& study) {
  if (emit_yaml(space_to_yaml(config.space)) != emit_yaml(space_to_yaml(study.space()))) return {{"space", "space"}};
  if (!same_resolution(config.resolution, study.resolution())) return {{"resolution", "resolution"}};
  if (config.budget.cost != study.cost_budget()) return {{"budget", "cost_budget"}};
  return std::nullopt;
}

// "field 'campaign.space' at line L, column C", or the section's own position when it lacks the key.
std::string field_at(const YAML::Node& section, const std::string& section_name, const std::string& key) {
  const YAML::Node node = section[key];
  return node.IsDefined() ? "field '" + section_name + "." + key + "' at " + position_of(node)
                          : "'" + section_name + "' (without '" + key + "') at " + position_of(section);
}
}  // namespace

const char* to_string(RunStatus status) {
  switch (status) {
    case RunStatus::queued: return "queued";
    case RunStatus::running: return "running";
    case RunStatus::complete: return "complete";
    case RunStatus::failed: return "failed";
  }
  return "?";
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::optional<double> reached_value(const TrialRun& r, const Trial& t) {
  if (t.value) return t.value;
  if (r.ended_pruned()) return r.pruned->value;
  return std::nullopt;
}

TrialRun external_run(std::uint64_t id, double started_at) {
  TrialRun r;
  r.id = id;
  r.status = RunStatus::running;
  r.attempts = 1;
  r.started_at = started_at;
  r.external = true;
  return r;
}

std::size_t CampaignState::count(RunStatus status) const {
  std::size_t n = 0;
  for (const TrialRun& r : runs) n += r.status == status;
  return n;
}

bool CampaignState::trial_budget_spent() const {
  return config.budget.trials && study.trials().size() - study.imported_count() >= *config.budget.trials;
}

std::string CampaignState::trial_budget_spent_reason() const {
  const std::size_t n = config.budget.trials.value_or(0);
  return "the budget of " + std::to_string(n) + (n == 1 ? " trial is spent" : " trials is spent");
}

CampaignState CampaignState::create(CampaignConfig config, double now) {
  Study study(config.space, make_strategy(config.strategy, config.strategy_options),
              StudyOptions{.direction = config.objective.direction,
                           .seed = config.seed,
                           .resolution = config.resolution,
                           .cost_budget = config.budget.cost});
  for (const EnqueuedConfig& e : config.enqueue) study.enqueue(e.config, e.level);
  CampaignState s{std::move(config), std::move(study), {}, now, 0.0, {}, false};
  return s;
}

std::vector<adapters::IntermediateValue> kept_intermediate(const std::vector<adapters::IntermediateValue>& all) {
  const std::size_t n = all.size();
  if (n <= kKeptIntermediateValues) return all;
  // Entry k of the kept ones is all[round(k (n - 1) / (K - 1))]: evenly spaced, ends included.
  std::vector<adapters::IntermediateValue> kept;
  kept.reserve(kKeptIntermediateValues);
  for (std::size_t k = 0; k < kKeptIntermediateValues; ++k)
    kept.push_back(all[(k * (n - 1) + (kKeptIntermediateValues - 1) / 2) / (kKeptIntermediateValues - 1)]);
  return kept;
}

std::filesystem::path state_path(const std::filesystem::path& dir) { return dir / campaign_files::kState; }
std::filesystem::path trial_dir(const std::filesystem::path& dir, std::uint64_t id) {
  return dir / campaign_files::kTrials / std::to_string(id);
}
bool has_state(const std::filesystem::path& dir) { return std::filesystem::exists(state_path(dir)); }

void StateWriter::save(const std::filesystem::path& dir, const CampaignState& s) {
  // Every writer of state.yaml holds the campaign's lock, as this one does.
  if (!leftovers_removed_) remove_leftover_temporaries(state_path(dir));
  leftovers_removed_ = true;
  // Into the same buffer every time: a fresh string of the whole file (2.5 MB at 5000 trials) was
  // grown by doubling and its new pages faulted in at each of the two checkpoints per trial.
  build(s, buffer_);
  write_file_atomically(state_path(dir), buffer_);
}

std::string StateWriter::text(const CampaignState& s) {
  std::string out;
  out.reserve(buffer_.capacity());
  build(s, out);
  return out;
}

void StateWriter::build(const CampaignState& s, std::string& out) {
  out.clear();
  YAML::Node head;
  head["kind"] = kKind;
  head["schema"] = kSchema;
  head["created_at"] = yaml_double(s.created_at);
  head["updated_at"] = yaml_double(now_seconds());
  head["active_seconds"] = yaml_double(s.active_seconds);
  head["finished"] = s.finished;
  head["stop_reason"] = s.stop_reason;
  if (s.failed_at_failures_stop > 0) head["failed_at_failures_stop"] = s.failed_at_failures_stop;
  out += emit_yaml(head);
  out += '\n';
  if (campaign_text_.empty()) campaign_text_ = emit_yaml(s.config.to_yaml());
  out += "campaign:\n";
  append_indented(out, campaign_text_, 2);
  if (s.runs.empty()) {
    out += "runs: []\n";
  } else {
    out += "runs:\n";
    if (run_text_.size() < s.runs.size()) run_text_.resize(s.runs.size());
    for (const TrialRun& r : s.runs) {
      const bool final = r.status == RunStatus::complete || r.status == RunStatus::failed;
      std::string& cached = run_text_[r.id];
      if (!final || cached.empty()) cached = flow_record_text([&](auto& writer) { write_run(writer, r); });
      out += "  - ";
      out += cached;
      out += '\n';
      if (!final) cached.clear();
    }
  }
  out += "study:\n";
  s.study.append_yaml(out, 2, study_cache_);
}

void save_state(const std::filesystem::path& dir, const CampaignState& s) {
  StateWriter writer;
  writer.save(dir, s);
}

namespace {

// A trial's cost is what the tuner records: none when the levels' costs are declared (tune tell
// refuses --cost there), and a supervised run's duration when they are measured. Any other value
// would move the spend and the levels' measured costs.
// `durations` holds each run's exit.duration as written (NaN where it has no exit).
void check_trial_costs(const CampaignState& s, const YAML::Node& root, const std::vector<double>& durations) {
  if (!s.config.resolution) return;
  const YAML::Node trials = root["study"]["trials"];
  const bool measured = s.config.resolution->measured();
  for (const TrialRun& r : s.runs) {
    const std::optional<double>& cost = s.study.trials()[r.id].cost;
    if (!cost) continue;
    // (Positions only where the trials are nodes; a load from record lines is read again if it refuses.)
    const std::string at = "study trial " + std::to_string(r.id) + ", field 'cost' at " +
                           (r.id < trials.size() ? position_of(trials[r.id]["cost"]) : std::string("unknown position"));
    if (!measured)
      throw StateError(at + ": the campaign declares its levels' costs (resolution.cost), and the tuner records no "
                            "cost per trial; remove it");
    if (r.external || !r.exit || !(r.started_at > 0)) continue;  // told with --cost, or no duration to compare
    const double duration = durations[r.id];
    if (std::fabs(*cost - duration) > 1e-6 * std::max(1.0, duration))
      throw StateError(at + ": " + format_double(*cost) + " seconds, but its run record says the run took " +
                       format_double(duration) + " (exit.duration); restore the cost to the run's duration");
  }
}

}  // namespace

CampaignState state_from_yaml(const YAML::Node& root) { return state_from_yaml(root, nullptr); }

CampaignState state_from_yaml(const YAML::Node& root, const RecordLines* lines) {
  const std::vector<std::string_view>* run_lines = record_lines(lines, "runs");
  const std::vector<std::string_view>* trial_lines = record_lines(lines, "study.trials");
  if (!root.IsMap() || !root["kind"] || !root["kind"].IsScalar() || root["kind"].Scalar() != kKind)
    throw StateError("not a tune campaign state (no 'kind: tune.campaign' at the top)");
  const std::int64_t schema = read_int(require(root, "schema"), "schema");
  if (schema != kSchema)
    throw StateError("schema " + std::to_string(schema) + " is not supported by this version (it reads schema " +
                     std::to_string(kSchema) + ")");
  check_known_keys(root, "", {"kind", "schema", "created_at", "updated_at", "active_seconds", "finished", "stop_reason",
                              "failed_at_failures_stop", "campaign", "runs", "study"});
  CampaignConfig config = campaign_from_yaml(require(root, "campaign"), "campaign", UnusedOptions::accept);
  // A file cut short at a line's end (a crash on a filesystem that does not keep rename atomic) ends
  // inside the study's trial list, its last section, and the study would only say that its strategy
  // names a trial it does not hold. The run records, written before it, say how many there were.
  // (IsDefined first: yaml-cpp throws from the other tests of a key that is absent.)
  if (const YAML::Node runs = root["runs"], study = root["study"];
      runs.IsDefined() && runs.IsSequence() && study.IsDefined() && study.IsMap())
    if (const YAML::Node trials = study["trials"]; trials.IsDefined() && trials.IsSequence()) {
      const std::size_t n_trials = trial_lines ? trial_lines->size() : trials.size();
      const std::size_t n_runs = run_lines ? run_lines->size() : runs.size();
      if (n_trials < n_runs)
        throw StateError("field 'study.trials' at " + position_of(trials) + ": " + std::to_string(n_trials) +
                         (n_trials == 1 ? " trial" : " trials") + " for " + std::to_string(n_runs) +
                         " run records (field 'runs' at " + position_of(runs) +
                         "): the file is cut short, as a save interrupted by a crash leaves it");
    }
  Study study = Study::from_yaml(require(root, "study"), trial_lines);
  // The campaign names the trials' parameters and the study makes them: one edited without the
  // other would run configurations the command cannot take.
  if (const auto keys = campaign_study_disagreement(config, study))
    throw StateError(field_at(root["campaign"], "campaign", keys->first) + " disagrees with " +
                     field_at(root["study"], "study", keys->second) + "; one of them was edited: restore it");
  CampaignState s{std::move(config), std::move(study), {}, 0.0, 0.0, {}, false};
  s.created_at = read_seconds(require(root, "created_at"), "created_at");
  s.active_seconds = read_seconds(require(root, "active_seconds"), "active_seconds");
  if (const YAML::Node updated = root["updated_at"]; updated.IsDefined()) s.updated_at = read_double(updated, "updated_at");
  s.finished = read_bool(require(root, "finished"), "finished");
  if (root["stop_reason"] && !root["stop_reason"].IsNull()) s.stop_reason = read_string(root["stop_reason"], "stop_reason");
  if (root["failed_at_failures_stop"])  // absent from state files written before it existed
    s.failed_at_failures_stop = read_uint(root["failed_at_failures_stop"], "failed_at_failures_stop");
  const YAML::Node runs = require(root, "runs");
  if (!runs.IsSequence()) throw StateError("field 'runs' at " + position_of(runs) + ": expected a list");
  std::vector<double> durations;
  const auto add_run = [&](const auto& node, std::size_t i) {
    double duration = std::numeric_limits<double>::quiet_NaN();
    s.runs.push_back(run_from_node(node, i, duration));
    durations.push_back(duration);
  };
  const std::size_t records = run_lines ? run_lines->size() : runs.size();
  s.runs.reserve(records);
  durations.reserve(records);
  read_records(runs, run_lines, "run", add_run);
  if (s.runs.size() != s.study.trials().size())
    throw StateError("field 'runs' at " + position_of(runs) + ": " + std::to_string(s.runs.size()) +
                     " run records for " + std::to_string(s.study.trials().size()) + " trials");
  for (const TrialRun& r : s.runs) {
    const Trial& trial = s.study.trials()[r.id];
    const TrialStatus t = trial.status;
    // A pruned run is complete for the campaign (it ended as the rule decided) and failed for the
    // study (it has no result), where it is pruned too; no other run is.
    const bool consistent = r.ended_pruned() ? t == TrialStatus::failed && trial.pruned
                                       : (r.status == RunStatus::complete) == (t == TrialStatus::complete) &&
                                             (r.status == RunStatus::failed) == (t == TrialStatus::failed) && !trial.pruned;
    if (!consistent)
      throw StateError("trial " + std::to_string(r.id) + " is '" + to_string(r.status) + (r.pruned ? " (pruned)" : "") +
                       "' in 'runs' but '" + tune::to_string(t) + (trial.pruned ? " (pruned)" : "") + "' in 'study'");
  }
  if (s.failed_at_failures_stop > s.count(RunStatus::failed))
    throw StateError("field 'failed_at_failures_stop' at " + position_of(root["failed_at_failures_stop"]) + ": " +
                     std::to_string(s.failed_at_failures_stop) + " is more than the " +
                     std::to_string(s.count(RunStatus::failed)) + " failed trials; restore it");
  check_trial_costs(s, root, durations);
  return s;
}

CampaignState load_state(const std::filesystem::path& dir) {
  const std::filesystem::path path = state_path(dir);
  const std::string fix = "; the file was left as it is (restore it from a backup, or start a new campaign directory)";
  try {
    return load_with_fast_records(read_text_file(path), [](const YAML::Node& root, const RecordLines* lines) {
      return state_from_yaml(root, lines);
    });
  } catch (const StateError& e) {
    throw CampaignError(path.string() + ": " + e.what() + fix);
  } catch (const CampaignError& e) {
    throw CampaignError(path.string() + ": " + e.what() + fix);
  }
}

}  // namespace tune::tuner
