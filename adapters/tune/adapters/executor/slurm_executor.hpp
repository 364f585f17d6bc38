#pragma once
// Runs trials as Slurm batch jobs, the tuner staying a single process on the login node.
//
// launch() writes TRIAL_DIR/slurm.sh, a batch script whose last line execs the same supervisor as
// the local executor (`tune __supervise TRIAL_DIR TIMEOUT_MS GRACE_MS -- COMMAND...`, every word
// single-quoted, so no value is ever interpreted by a shell), and submits it with
// `sbatch --parsable`; the job id it returns is the run's handle, stored in the state. The job's own
// output goes to TRIAL_DIR/slurm.out; the command's stdout, stderr and exit.yaml land in the trial
// directory as with the local executor, so the campaign directory must be on a file system shared
// with the compute nodes.
//
// poll() looks at the trial directories (the exit.yaml of a command that succeeded is collected at
// once) and, at most every `poll_interval` (sooner when a record of a failure appears), asks Slurm
// about every followed job in one `squeue` call. A job in a final state is decided by Slurm's word
// where Slurm ended it (it signals every process of the job, so the supervisor's record of a killed
// command says nothing of the command itself):
//   COMPLETED, FAILED           the supervisor's exit.yaml (none: the job failed before the trial
//                               started, or the directory is not shared; the message says which;
//                               ExitKind::lost if the supervisor started the trial and was killed)
//   TIMEOUT                     ExitKind::timeout (the job's Slurm time limit)
//   CANCELLED                   ExitKind::cancelled if this executor cancelled it (re-queued; the
//                               request is recorded in the trial directory before scancel, so a later
//                               session knows it too), ExitKind::aborted if someone else did
//   NODE_FAIL, PREEMPTED, BOOT_FAIL   ExitKind::lost (the tuner runs the trial again, up to a limit)
//   OUT_OF_MEMORY, DEADLINE     ExitKind::aborted, with the reason
// A job Slurm no longer knows (it forgets finished jobs after MinJobAge) is decided from the trial
// directory: the line Slurm wrote to slurm.out where it killed the job (DUE TO TIME LIMIT, a cancel,
// DUE TO PREEMPTION), else its exit.yaml, or lost if there is none and no supervisor holds the trial.
// Jobs are submitted with --no-requeue: the tuner, not Slurm, decides whether a trial runs again.
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tune/adapters/executor/executor.hpp"

namespace tune::adapters {

struct SlurmOptions {
  // The argument vector prefix that starts a supervisor on a compute node (normally the tuner's
  // own {"/path/to/tune", "__supervise"}; the path must exist there too).
  std::vector<std::string> supervisor_command;
  std::string job_name = "tune";  // jobs are named JOB_NAME.<trial>.<attempt>
  std::optional<std::string> partition;
  std::optional<std::chrono::minutes> time_limit;  // --time
  std::optional<std::size_t> cpus;                 // --cpus-per-task
  std::optional<std::string> memory;               // --mem, e.g. 4G
  std::optional<std::string> gres;                 // --gres, e.g. gpu:1
  std::optional<std::string> account;
  std::optional<std::string> qos;
  std::vector<std::string> extra_directives;  // each becomes a line "#SBATCH <directive>"
  std::string setup;                          // shell lines run before the supervisor (modules, venv)
  std::chrono::milliseconds poll_interval{5000};  // between squeue calls
  // The Slurm client programs (found on the PATH).
  std::string sbatch = "sbatch";
  std::string squeue = "squeue";
  std::string scancel = "scancel";
  std::function<void(const std::string&)> warn;  // transient trouble (squeue failed); may be empty
};

// The text of the batch script of `trial` (exposed for tests). `sbatch_argv` is recorded in a comment.
std::string slurm_batch_script(const SlurmOptions& options, const TrialLaunch& trial,
                               const std::vector<std::string>& sbatch_argv);
// `word` quoted for a POSIX shell: one argument, whatever it holds.
std::string shell_quote(const std::string& word);

// How a job in a final Slurm state ended (exposed for tests). `state` is squeue's %T (COMPLETED,
// TIMEOUT, ...); `record` is the supervisor's exit.yaml if there is one; `cancelled_by_us` says
// whether this executor asked for the job to be cancelled. nullopt: the state is not final (PENDING,
// RUNNING, COMPLETING, ...).
struct SlurmJobView {
  std::string job;
  std::string state;
  std::string reason;      // squeue's %r
  std::string time_limit;  // squeue's %l
  std::string work_dir;    // squeue's %Z: the directory the job was submitted to run in
};
std::optional<TrialExit> slurm_outcome(const SlurmJobView& job, const std::optional<TrialExit>& record,
                                       bool cancelled_by_us, const std::filesystem::path& trial_dir);

class SlurmExecutor : public Executor {
 public:
  // Throws std::runtime_error if sbatch cannot be found.
  explicit SlurmExecutor(SlurmOptions options);
  ~SlurmExecutor() override;  // jobs keep running; a resumed tuner re-attaches to them

  std::string launch(const TrialLaunch& trial) override;
  bool attach(const RunRecord& run) override;
  std::vector<FinishedTrial> poll() override;
  void cancel(const std::string& id) override;
  void cancel_pending() override;
  std::size_t running() const override { return jobs_.size(); }
  std::vector<std::string> running_ids() const override;
  std::string job_of(const std::string& id) const override;

  // The sbatch argument vector for `trial` (without the script path).
  std::vector<std::string> sbatch_arguments(const TrialLaunch& trial) const;

 private:
  struct Job {
    std::filesystem::path dir;
    std::string job;  // empty: followed through the trial directory only
    std::string state = "PENDING";
    bool cancel_requested = false;
    std::string reported_reason;  // a pending reason that means "never" already said
  };
  using Clock = std::chrono::steady_clock;

  // One squeue call for the given jobs: job id -> what Slurm says. nullopt if squeue failed.
  std::optional<std::map<std::string, SlurmJobView>> query(const std::vector<std::string>& jobs);
  // By name and directory (and submitted at `submitted_since` or later, in seconds since the epoch),
  // for a job id never recorded: "" if there is none, nullopt if squeue failed.
  std::optional<std::string> find_job(const RunRecord& run, std::optional<double> submitted_since = std::nullopt);
  std::string name_of(const std::string& id, std::size_t attempt) const;
  void scancel(const std::vector<std::string>& jobs);
  void warn(const std::string& message) const;

  SlurmOptions options_;
  std::map<std::string, Job> jobs_;
  // Jobs whose sbatch the controller did not answer: name -> when it was first submitted (epoch s).
  std::map<std::string, double> unanswered_;
  Clock::time_point last_query_{};
  Clock::time_point last_file_check_{};
  bool query_soon_ = true;
};

}  // namespace tune::adapters
