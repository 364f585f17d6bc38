#pragma once
// What the tuner asks of an executor, whichever runs the trials: LocalExecutor (subprocesses on this
// machine) or SlurmExecutor (batch jobs). Every trial runs under the same supervisor (supervisor.hpp),
// which records how it ended in the trial directory; an executor starts it, follows it, stops it on
// request, and reports it finished.
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tune/adapters/executor/trial_exit.hpp"

namespace tune::adapters {

struct TrialLaunch {
  std::string id;
  std::filesystem::path dir;  // absolute; created if missing
  std::vector<std::string> argv;
  std::map<std::string, std::string> environment;  // added to the tuner's environment
  std::chrono::milliseconds timeout{0};            // 0: no limit
  std::chrono::milliseconds grace{5000};           // between SIGTERM and SIGKILL
  std::size_t attempt = 1;                         // 1 for the first launch of this trial
};

// A run started by an earlier tuner, as the state recorded it.
struct RunRecord {
  std::string id;
  std::filesystem::path dir;
  std::size_t attempt = 1;
  std::string job;  // the executor's handle (a Slurm job id); empty if none was recorded
  bool requeued = false;  // its last run was collected already; a cluster executor looks up no job for it
};

struct FinishedTrial {
  std::string id;
  TrialExit exit;
};

// Writes TRIAL_DIR/command.yaml (argv, environment additions, timeout_ms, grace_ms), which the
// supervisor reads its environment additions from; `dir` is the trial's absolute directory.
void write_command_record(const std::filesystem::path& dir, const TrialLaunch& trial);

// Moves what the supervisor and the executors wrote in trial directory `dir` for attempt `attempt`
// (stdout, stderr, the exit, supervisor and command records, the result file, supervisor.log,
// slurm.sh, slurm.out) into DIR/attempts/<attempt>/, so that the next attempt finds none of them to
// mistake for its own and the earlier attempt's logs are kept. Everything else in the directory
// (the trial's own files, such as checkpoints) stays where it is. Each file is moved by a rename;
// a file that is not there is skipped, so calling it again after an interruption is harmless. A
// file already set aside for `attempt` is kept, and the one in `dir` removed: it was written by a
// launch that failed before its run started (a refused sbatch), which is not an attempt.
void set_aside_attempt(const std::filesystem::path& dir, std::size_t attempt);

// Thrown by launch() when the trial cannot start now for a reason that passes by itself (a cluster's
// controller that does not answer): nothing of the trial runs, and the same launch may be tried again.
struct LaunchDeferred : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Executor {
 public:
  virtual ~Executor() = default;

  // Starts a trial; returns at once with the executor's handle for the run (a Slurm job id; empty
  // for a local subprocess). Throws std::runtime_error with the reason if it cannot be started, and
  // LaunchDeferred if it cannot be started now but may be later.
  virtual std::string launch(const TrialLaunch& trial) = 0;
  // Follows a run started by an earlier tuner. Returns false if it is gone and left no exit record
  // (the trial must be run again); whatever of that run is still running is stopped first.
  virtual bool attach(const RunRecord& run) = 0;
  // Trials that ended since the last call.
  virtual std::vector<FinishedTrial> poll() = 0;
  // Stops a trial the executor follows (it is reported by poll() with ExitKind::cancelled).
  virtual void cancel(const std::string& id) = 0;
  // Stops the trials that have not started yet (jobs waiting in a queue); a budget is spent.
  virtual void cancel_pending() {}
  virtual std::size_t running() const = 0;
  virtual std::vector<std::string> running_ids() const = 0;
  // The handle of a followed run (attach may have found it); empty if none.
  virtual std::string job_of(const std::string& /*id*/) const { return {}; }
};

}  // namespace tune::adapters
