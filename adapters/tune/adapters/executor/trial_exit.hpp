#pragma once
// How a trial's process ended, as the supervisor records it in `exit.yaml` in the trial directory
// (atomically, so a reader sees either nothing or the whole record). Times are seconds since the
// Unix epoch.
#include <filesystem>
#include <optional>
#include <string>

namespace tune::adapters {

enum class ExitKind {
  exited,         // the command exited by itself; `code` holds its exit status
  signaled,       // the command was killed by signal `signal` (not by us)
  timeout,        // we terminated it at its time limit
  cancelled,      // we terminated it on request (tune stop, budget exhausted, Ctrl-C)
  launch_failed,  // the command could not be started (message says why: not found, not executable)
  // Only from a cluster executor, which decides from the scheduler's word rather than exit.yaml:
  lost,     // the run was lost to the infrastructure (node failure, preemption): run it again, up to a limit
  aborted,  // the scheduler ended it for a reason of its own (cancelled outside the tuner, out of memory)
};

const char* to_string(ExitKind kind);

struct TrialExit {
  ExitKind kind = ExitKind::exited;
  int code = 0;
  int signal = 0;
  double started_at = 0.0;
  double finished_at = 0.0;
  std::string message;  // for launch_failed, and a human summary otherwise

  bool succeeded() const { return kind == ExitKind::exited && code == 0; }
  double duration() const { return finished_at - started_at; }
};

inline constexpr const char* kExitFile = "exit.yaml";
// How the error of a damaged record (exit.yaml, supervisor.yaml) begins: a trial whose exit record
// is damaged is collected as cancelled, with that error as its message, and runs again.
inline constexpr const char* kDamagedRecord = "damaged record '";
inline constexpr const char* kSupervisorFile = "supervisor.yaml";
inline constexpr const char* kStdoutFile = "stdout";
inline constexpr const char* kStderrFile = "stderr";
inline constexpr const char* kResultFile = "result.yaml";
inline constexpr const char* kSupervisorLockFile = "supervisor.lock";
inline constexpr const char* kSupervisorLog = "supervisor.log";  // the local supervisor's own stderr
inline constexpr const char* kScriptFile = "slurm.sh";           // a Slurm trial's batch script
inline constexpr const char* kJobOutputFile = "slurm.out";       // the batch job's own stdout and stderr
// "JOB_NAME SUBMITTED_AT": an sbatch the controller did not answer, which it may have accepted all
// the same; kept across tuner sessions (see SlurmExecutor::launch).
inline constexpr const char* kUnansweredSubmissionFile = "sbatch-unanswered";
// "JOB_ID": the tuner asked Slurm to cancel this job (tune stop, Ctrl-C, a budget's end). Written
// before scancel, so that a later session that finds the job CANCELLED runs its trial again rather
// than failing it as cancelled by someone else (see SlurmExecutor::attach).
inline constexpr const char* kCancelRequestedFile = "scancel-requested";

void write_trial_exit(const std::filesystem::path& trial_dir, const TrialExit& exit);
// nullopt if the file does not exist; throws std::runtime_error naming the file if it is damaged.
std::optional<TrialExit> read_trial_exit(const std::filesystem::path& trial_dir);

}  // namespace tune::adapters
