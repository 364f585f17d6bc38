#pragma once
// Runs a short-lived program (sbatch, squeue, scancel) from an argument vector, never through a
// shell, and returns its exit status and what it printed. The program is found on the PATH; it gets
// /dev/null as stdin and its own process group. Only its own pid is waited for.
#include <string>
#include <vector>

namespace tune::adapters {

struct ProgramOutput {
  int status = 0;  // the exit code, or 128 + the signal that killed it
  std::string out;
  std::string err;
};

// Throws std::runtime_error naming the program if it cannot be started (not found, not executable).
ProgramOutput run_program(const std::vector<std::string>& argv);

}  // namespace tune::adapters
