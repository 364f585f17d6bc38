#pragma once
// The tuner's loop: collect finished trials, tell the study, checkpoint, launch new trials, until
// the budget is spent, the strategy stops, too many trials failed, or a signal asks it to stop.
//
//   campaign.yaml -> CampaignConfig -> Study -> ask() -> Executor::launch (local or Slurm) -> trial runs ->
//   protocol parses its report -> Study::tell() -> state.yaml written atomically -> next ask()
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace tune::tuner {

// Exit codes of `tune` (documented in the README and `tune --help`).
enum ExitCode : int {
  kExitComplete = 0,         // the budget is spent or the strategy converged
  kExitError = 1,            // bad input, damaged state, an I/O error
  kExitUsage = 2,            // bad command line
  kExitInterrupted = 3,      // stopped by a signal or `tune stop`; `tune resume` continues
  kExitTooManyFailures = 4,  // budget.failures trials failed
  kExitLocked = 5,           // another tuner drives this campaign
  kExitWaiting = 6,          // `tune ask`: nothing to hand out until pending trials are told (0: finished)
};

struct RunOptions {
  std::vector<std::string> supervisor_command;  // {"/path/to/tune", "__supervise"}
  bool quiet = false;
  bool wait_on_stop = false;  // on the first SIGINT/SIGTERM: wait for running trials (else terminate them)
  double poll_interval_seconds = 0.01;
  std::string command = "tune run";  // what errors start with: "tune resume: ..."
};

// `tune stop` asks a tuner to stop with SIGTERM, sent by sigqueue with this value: the tuner's
// handler (SA_SIGINFO) tells it from a plain SIGTERM (kill, a scheduler, a shutdown) by si_code
// SI_QUEUE and the value, and says which of the two stopped it. A signal carries it, not a file, so
// there is no request marker to go stale or to race with the signal.
inline constexpr int kStopRequestValue = 0x74756e65;  // "tune"

// Asks the tuner running as process `tuner` to stop, as `tune stop` does. False (errno set) if it
// cannot be signalled.
bool request_stop(pid_t tuner);

// Drives the campaign in `dir` (which must hold a state.yaml) until it ends. Installs handlers for
// SIGINT and SIGTERM for its duration.
int run_campaign(const std::filesystem::path& dir, const RunOptions& options);

// True if another tuner drives the campaign in `dir` now (the refusal run_campaign would print is
// printed), for a caller that must know before it detaches: run_campaign itself checks again.
bool driven_by_another_tuner(const std::filesystem::path& dir, const std::string& command);

}  // namespace tune::tuner
