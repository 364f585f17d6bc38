#pragma once
// Running the built `tune` program from a benchmark: where it is, and one run of it.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace tune::bench {

// The `tune` built beside this benchmark (../tuner/tune from this executable's directory).
inline std::filesystem::path tune_next_to_this_program() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "tune";
  return (self.parent_path() / ".." / "tuner" / "tune").lexically_normal();
}

// fork + execv of the argument vector, its standard output sent to /dev/null if asked (a table on
// the terminal stays readable); returns the wait status. A failed fork or wait ends the benchmark.
inline int run_program(const std::vector<std::string>& args, bool discard_stdout = false) {
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "fork: %s\n", std::strerror(errno));
    std::exit(1);
  }
  if (pid == 0) {
    if (discard_stdout) {
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) ::dup2(null, STDOUT_FILENO);
    }
    ::execv(argv[0], argv.data());
    const char msg[] = "benchmark: cannot execute the program\n";
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      std::fprintf(stderr, "waitpid: %s\n", std::strerror(errno));
      std::exit(1);
    }
  return status;
}

// The exit status of a wait status (128 + the signal for a killed program).
inline int exit_status(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

}  // namespace tune::bench
