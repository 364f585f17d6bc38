#pragma once
// Runs trials as local subprocesses, at most `workers` at a time (the caller decides how many to
// launch; the executor runs what it is given).
//
// Each trial runs under a supervisor: the `tune` program itself in its internal mode
// (`tune __supervise ...`, see supervisor.hpp), started with Boost.Process in its own session. The
// supervisor starts the command in a new process group with the trial directory as working
// directory, its stdout and stderr written by the child straight to files there, enforces the time
// limit (SIGTERM to the whole group, SIGKILL after the grace period), kills what is left of the group
// when the command ends (grandchildren included), and records how it ended in `exit.yaml`. Because
// the record is in the trial directory, a trial that finishes while the tuner is dead is collected
// on resume, and a supervisor that outlives the tuner is re-attached by its pid.
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tune/adapters/executor/executor.hpp"
#include "tune/adapters/executor/trial_exit.hpp"

namespace tune::adapters {

// True while a supervisor holds TRIAL_DIR/supervisor.lock, i.e. from the moment a supervisor
// starts until it has written exit.yaml and exited (or died). A supervisor that finds the lock
// taken exits at once without running anything, so two tuners, or a tuner and its own resume,
// can never run the same trial twice.
bool trial_is_supervised(const std::filesystem::path& dir);

class LocalExecutor : public Executor {
 public:
  // `supervisor_command` is the argument vector prefix that starts a supervisor, normally
  // {"/path/to/tune", "__supervise"}.
  explicit LocalExecutor(std::vector<std::string> supervisor_command);
  ~LocalExecutor() override;  // does not stop running trials (they outlive the tuner by design)
  LocalExecutor(const LocalExecutor&) = delete;
  LocalExecutor& operator=(const LocalExecutor&) = delete;

  // Starts a trial; returns at once. Throws std::runtime_error if the supervisor cannot be started.
  // Returns an empty handle (the supervisor's pid is in TRIAL_DIR/supervisor.yaml).
  std::string launch(const TrialLaunch& trial) override;
  // Follows a trial started by an earlier tuner. Returns false if its supervisor is gone and left no
  // exit record (the trial must be run again).
  bool attach(const std::string& id, const std::filesystem::path& dir);
  bool attach(const RunRecord& run) override { return attach(run.id, run.dir); }
  // Trials that ended since the last call (their supervisors reaped). A supervisor that died
  // without an exit record (killed -9) yields ExitKind::cancelled with a message saying so.
  std::vector<FinishedTrial> poll() override;
  // Asks the supervisor to terminate the trial (SIGTERM to the group, SIGKILL after the grace).
  void cancel(const std::string& id) override;
  std::size_t running() const override;
  std::vector<std::string> running_ids() const override;

 private:
  struct Running;
  std::vector<std::string> supervisor_command_;
  // The supervisor is this very program (the `tune` tuner): its file is not executed again but the
  // running image, so a rebuild or a package upgrade of `tune` during a campaign neither fails a
  // launch (a linker leaves the path missing or half written for a moment) nor pairs this tuner with
  // a supervisor of another version.
  bool exec_running_image_ = false;
  std::map<std::string, std::unique_ptr<Running>> running_;
};

}  // namespace tune::adapters
