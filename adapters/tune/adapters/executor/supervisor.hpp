#pragma once
// The supervisor's entry point, called by the `tune` program for
//   tune __supervise TRIAL_DIR TIMEOUT_MS GRACE_MS -- COMMAND [ARGS...]
// Environment additions for the command are read from TRIAL_DIR/command.yaml if present (written by
// LocalExecutor::launch together with the argument vector, for the record). It writes
// TRIAL_DIR/supervisor.yaml (its pid, the command's process group, the start time) once the command
// runs, and TRIAL_DIR/exit.yaml when it ends; it returns 0 once exit.yaml is written, non-zero only
// if it could not write it. SIGTERM or SIGINT to the supervisor terminates the command's group
// (recorded as cancelled).
//
// `argv` is the program's own argument vector; argv[1] may be the `__supervise` word itself (it is
// skipped), so `tune` can pass its argc/argv through unchanged.
//
// The command is started with fork + execvp (not Boost.Process): the child must call setpgid(0, 0),
// chdir, open its own output files and reset the signal mask between fork and exec, and report an
// exec failure through a close-on-exec pipe; the supervisor is single-threaded, so this is simple
// and exact. The supervisor makes itself a child subreaper, so grandchildren the command leaves
// behind are reparented to it, killed with the group and reaped before exit.yaml is written.
#include <sys/types.h>

#include <filesystem>
#include <optional>

namespace tune::adapters {

int supervise_main(int argc, char** argv);

// TRIAL_DIR/command.yaml: argv, environment (additions), timeout_ms, grace_ms.
inline constexpr const char* kCommandFile = "command.yaml";

// TRIAL_DIR/supervisor.yaml, written once the command runs.
struct SupervisorRecord {
  pid_t supervisor_pid = 0;
  pid_t process_group = 0;  // the command's process group (= its pid)
  double started_at = 0.0;  // seconds since the Unix epoch
};

void write_supervisor_record(const std::filesystem::path& trial_dir, const SupervisorRecord& record);
// nullopt if the file does not exist; throws std::runtime_error naming the file if it is damaged.
std::optional<SupervisorRecord> read_supervisor_record(const std::filesystem::path& trial_dir);

}  // namespace tune::adapters
