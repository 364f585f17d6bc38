#include "tuner/cli/tuner_session.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/campaign_runner.hpp"

namespace tune::tuner {

namespace {

std::vector<std::string> supervisor_command() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return {ec ? std::string("tune") : self.string(), "__supervise"};
}

// Why the local executor could not start `program` (the first element of a campaign's command),
// or empty if it can. Trials run in DIR/trials/<id>/, so a relative path with a '/', and a relative
// entry of PATH (an empty one is the current directory), are resolved from there, as the
// supervisor's execvp resolves them; a bare name is looked up on PATH. The trial's PATH is the
// tuner's: its environment only adds TUNE_* variables.
std::string unstartable_program(const std::string& program, const std::filesystem::path& dir) {
  const auto runnable = [](const std::filesystem::path& p) {
    std::error_code ec;
    return !std::filesystem::is_directory(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  const std::filesystem::path trial_dir = std::filesystem::absolute(dir) / campaign_files::kTrials / "0";
  if (program.find('/') != std::string::npos) {
    std::filesystem::path p(program);
    const bool relative = p.is_relative();
    if (relative) p = (trial_dir / p).lexically_normal();
    std::error_code ec;
    // A relative path that named a file where the campaign was defined was made absolute
    // (anchor_relative_paths): this one is neither there nor in the trial's directory.
    if (!std::filesystem::exists(p, ec))
      return relative ? "'" + program + "' does not exist, neither beside the campaign's definition (the campaign "
                                        "file's folder, or the current directory for the command line) nor in the "
                                        "trial's directory ('" + p.string() + "')"
                      : "'" + p.string() + "' does not exist";
    if (!runnable(p))
      return "'" + p.string() + "' is not executable (chmod +x it, or name its interpreter first, e.g. [python3, " +
             program + ", ...])";
    return {};
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  bool relative_entries = false;
  for (std::size_t begin = 0; begin <= dirs.size();) {
    std::size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    const std::filesystem::path entry = dirs.substr(begin, end - begin);
    relative_entries = relative_entries || entry.is_relative();
    // Lexically: trials/<id>/ may not exist yet, and the kernel resolves `..` only through directories that do.
    if (runnable(((entry.is_absolute() ? entry : trial_dir / entry) / program).lexically_normal())) return {};
    begin = end + 1;
  }
  return "'" + program + "' is not found on PATH (" + dirs + ")" +
         (relative_entries ? "; its relative entries are searched from " + trial_dir.string() + ", where trials run"
                           : "");
}

}  // namespace

int drive(const std::filesystem::path& dir, const SessionFlags& flags, const char* command) {
  RunOptions options;
  options.supervisor_command = supervisor_command();
  options.quiet = flags.quiet;
  options.wait_on_stop = flags.wait_on_stop;
  options.command = "tune " + std::string(command);
  if (!flags.detach) return run_campaign(dir, options);
  // Refused here, with its exit code, rather than by the background process into its log.
  if (driven_by_another_tuner(dir, options.command)) return kExitLocked;

  const std::filesystem::path log = std::filesystem::absolute(dir / campaign_files::kTunerLog);
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror(("tune " + std::string(command) + ": fork").c_str());
    return kExitError;
  }
  if (pid > 0) {
    std::printf("tune: running in the background (pid %d); log %s; 'tune stop %s' stops it\n", pid, log.c_str(),
                dir.c_str());
    return kExitComplete;
  }
  ::setsid();
  const int in = ::open("/dev/null", O_RDONLY);
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (in >= 0) ::dup2(in, STDIN_FILENO);
  if (out >= 0) {
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
  }
  std::_Exit(run_campaign(dir, options));
}

bool refuse_without_command(const CampaignConfig& config, const std::string& where, const char* command) {
  if (!config.command.empty()) return false;
  std::fprintf(stderr,
               "tune %s: %s: this campaign has no command: it is driven by tune ask / tune tell; add `command:` to run "
               "trials\n",
               command, where.c_str());
  return true;
}

bool refuse_unstartable_command(const CampaignConfig& config, const std::filesystem::path& dir,
                                const std::string& where, const char* command) {
  if (config.executor.kind != "local" || config.command.empty()) return false;
  const std::string& program = config.command.front();
  if (program.find('{') != std::string::npos) return false;  // a placeholder: known per trial only
  const std::string why = unstartable_program(program, dir);
  if (why.empty()) return false;
  std::fprintf(stderr, "tune %s: %s: field 'command': the program %s; fix the first element of `command`\n", command,
               where.c_str(), why.c_str());
  return true;
}

}  // namespace tune::tuner
