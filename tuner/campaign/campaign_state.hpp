#pragma once
// The campaign directory and its state file.
//
//   DIR/state.yaml     the truth: campaign definition, study (strategy state, every trial), and the
//                      run record of every trial (status, attempts, timings, exit, failure reason,
//                      intermediate values). Rewritten atomically after every event.
//   DIR/trials/<id>/   the trial's command.yaml, stdout, stderr, supervisor.yaml, exit.yaml, and the
//                      trainer's own files; kept across attempts, an earlier attempt's records and
//                      logs moved to attempts/<n>/
//   DIR/events.jsonl   one JSON object per event (appended)
//   DIR/tune.lock      flock: one tuner (or ask/tell) drives the campaign at a time
//   DIR/tuner.pid, DIR/tuner.log   for a detached tuner
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tune/adapters/executor/trial_exit.hpp"
#include "tune/adapters/protocol/trial_report.hpp"
#include "tune/io/flow_yaml.hpp"
#include "tune/study/study.hpp"
#include "tuner/campaign/campaign_config.hpp"

namespace tune::tuner {

enum class RunStatus { queued, running, complete, failed };
const char* to_string(RunStatus status);

// Why the tuner stopped a running trial early (`pruning:`): decided, recorded, then the run cancelled,
// so that a tuner killed in between still finishes the trial as pruned on resume.
struct PruneRecord {
  std::int64_t step = 0;   // the trial's latest step then
  double value = 0.0;      // its last reported value: what the strategy is told
  std::string reason;      // PruneVerdict::explain
};

struct TrialRun {
  std::uint64_t id = 0;
  RunStatus status = RunStatus::queued;
  std::size_t attempts = 0;  // launches so far (a trial is re-queued if its run was lost)
  double started_at = 0.0;   // seconds since the epoch, of the last attempt
  double finished_at = 0.0;
  std::optional<adapters::TrialExit> exit;
  std::string failure_reason;
  std::vector<adapters::IntermediateValue> intermediate;
  std::map<std::string, double> metrics;
  bool external = false;  // handed out by `tune ask`, told by `tune tell`
  std::string job;        // the executor's handle of the last attempt (a Slurm job id); empty for local runs
  std::size_t lost = 0;   // runs lost to node failure or preemption (executor.retries bounds them)
  std::optional<PruneRecord> pruned;  // stopped early by the pruning rule (complete once collected)

  // Ended as the pruning rule decided (a run still being stopped has `pruned` too, and is running).
  bool ended_pruned() const { return status == RunStatus::complete && pruned.has_value(); }
};

// What a run reached: the study's value of its trial `t`, or for a pruned run the value at its stop
// (the study has none: the run did not finish); nothing for a run without either.
std::optional<double> reached_value(const TrialRun& r, const Trial& t);

// The run record of a trial handed out by `tune ask` at `started_at`: running, told by `tune tell`.
TrialRun external_run(std::uint64_t id, double started_at);

// The intermediate values a run record keeps: all of them up to kKeptIntermediateValues, else that
// many evenly spaced, the first and the last included. A trainer that logs every batch (50,000
// steps) made state.yaml 48 MB for 30 trials and every command take seconds; the strategies do not
// use them, and the trial's stdout keeps them all.
inline constexpr std::size_t kKeptIntermediateValues = 1000;
std::vector<adapters::IntermediateValue> kept_intermediate(const std::vector<adapters::IntermediateValue>& all);

struct CampaignState {
  CampaignConfig config;
  Study study;
  std::vector<TrialRun> runs;  // runs[i].id == i == study.trials()[i].id
  double created_at = 0.0;
  double active_seconds = 0.0;  // tuner time spent in earlier sessions (for the wall budget)
  std::string stop_reason;      // why the last session ended
  bool finished = false;        // the budget is spent or the strategy has nothing more to propose
  // Failed trials when a session last stopped for budget.failures: the budget counts the failures
  // since, so that resuming after fixing the cause gets a fresh allowance. 0 if it never stopped so.
  std::size_t failed_at_failures_stop = 0;
  double updated_at = 0.0;  // when the state was last written (read back only: a save writes its own time)

  std::size_t count(RunStatus status) const;
  // Whether budget.trials trials exist (launched by a tuner or handed out by tune ask), and the stop
  // reason that says so: both drivers stop on it.
  bool trial_budget_spent() const;
  std::string trial_budget_spent_reason() const;  // "the budget of N trials is spent"

  static CampaignState create(CampaignConfig config, double now);
};

std::filesystem::path state_path(const std::filesystem::path& dir);
std::filesystem::path trial_dir(const std::filesystem::path& dir, std::uint64_t id);

// Writes state.yaml atomically (temporary file, fsync, rename, fsync of the directory). A writer
// that lives as long as the tuner keeps the text of everything that can no longer change (the
// campaign definition, finished trials and their runs), so a checkpoint formats only what changed
// and its cost stays flat as the campaign grows.
class StateWriter {
 public:
  void save(const std::filesystem::path& dir, const CampaignState& state);
  // The text save() writes (timed apart from the write by bench/cli_latency).
  std::string text(const CampaignState& state);

 private:
  void build(const CampaignState& state, std::string& out);

  std::string buffer_;  // the last text save() wrote; its capacity is reused
  bool leftovers_removed_ = false;  // the temporaries of writers killed mid-save, at the first save
  std::string campaign_text_;
  std::vector<std::string> run_text_;
  StudyYamlCache study_cache_;
};

void save_state(const std::filesystem::path& dir, const CampaignState& state);  // with a fresh writer
// Throws CampaignError naming the file, the position and the fix; never writes.
CampaignState load_state(const std::filesystem::path& dir);
// The state of a parsed state file; throws StateError or CampaignError (without the file's name).
CampaignState state_from_yaml(const YAML::Node& root);
// The same, with the run records and the study's trials read from their record lines when `lines`
// holds them (tune/io/flow_yaml.hpp's load_with_fast_records: their nodes are then empty lists).
CampaignState state_from_yaml(const YAML::Node& root, const RecordLines* lines);
bool has_state(const std::filesystem::path& dir);

double now_seconds();

}  // namespace tune::tuner
