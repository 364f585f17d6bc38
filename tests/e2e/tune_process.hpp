#pragma once
// What the end-to-end tests share: start the real `tune` binary (TUNE_BINARY) as a subprocess with
// its output in files, wait for it, read its state, write campaign files for the toy trainers
// (TUNE_TRAINERS_DIR) in fresh directories under TUNE_TEST_TMPDIR.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace tune_test {

namespace fs = std::filesystem;

inline const fs::path kTune = TUNE_BINARY;
inline const fs::path kTrainers = TUNE_TRAINERS_DIR;

struct Result {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Tuners started and not yet waited for, so that a test's cleanup can kill what a failure left.
inline std::set<pid_t>& live_tuners() {
  static std::set<pid_t> pids;
  return pids;
}

// Starts `tune args...` in `cwd` with extra environment, stdout/stderr to cli.out / cli.err there;
// returns the pid. A `wrapper` (a command line ending where tune's begins: setpriv ...) runs tune.
inline pid_t start(const fs::path& cwd, const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env = {}, const std::vector<std::string>& wrapper = {}) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    const int out = ::open("cli.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open("cli.err", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(err, 2);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& w : wrapper) argv.push_back(const_cast<char*>(w.c_str()));
    argv.push_back(const_cast<char*>(kTune.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  live_tuners().insert(pid);
  return pid;
}

// Waits for a tuner started by start() and returns its exit code (128 + signal) and output.
inline Result finish(const fs::path& cwd, pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  live_tuners().erase(pid);
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(cwd / "cli.out");
  r.err = slurp(cwd / "cli.err");
  return r;
}

inline Result tune(const fs::path& cwd, const std::vector<std::string>& args,
                   const std::map<std::string, std::string>& env = {}) {
  return finish(cwd, start(cwd, args, env));
}

// Whether `pid` names a live process (a zombie counts as gone: it runs nothing).
inline bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// Waits until `ready` holds, polling every 10 ms for at most `limit`; whether it did.
template <class Ready>
bool wait_until(Ready ready, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ready();
}

inline fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(TUNE_TEST_TMPDIR) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

inline void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// Writes the executable script `name` (a trainer) into `dir`; returns its path.
inline fs::path write_script(const fs::path& dir, const std::string& name, const std::string& text) {
  const fs::path path = dir / name;
  write(path, text);
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

inline YAML::Node state_of(const fs::path& dir) { return YAML::LoadFile((dir / "state.yaml").string()); }

// `tune resume` of campaign `campaign` (in `cwd`), whose trial 0's first attempt left `child`
// running when its supervisor was killed while no tuner ran: the resume must kill that leftover and
// run the trial again (its second attempt), never beside it.
inline void expect_resume_kills_the_leftover(const fs::path& cwd, const std::string& campaign, pid_t child,
                                             std::chrono::milliseconds patience) {
  const Result r = tune(cwd, {"resume", campaign, "--quiet"});
  const bool gone = wait_until([&] { return !alive(child); }, patience);
  if (!gone) ::kill(child, SIGKILL);  // not left behind by a failing test
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node run = state_of(cwd / campaign)["runs"][0];
  EXPECT_EQ(run["status"].as<std::string>(), "complete");
  EXPECT_EQ(run["attempts"].as<int>(), 2);
  EXPECT_TRUE(gone) << "the child " << child << " of the first attempt ran on beside the second";
}

// A campaign of the quadratic toy trainer (minimised at x = 0.3, y = -1 region) with the given
// executor block (YAML flow map) and extra top-level lines.
inline std::string quadratic_campaign_with(const std::string& name, int trials, const std::string& executor,
                                           const std::string& extra = "") {
  return "name: " + name + "\ncommand: [" + (kTrainers / "quadratic.sh").string() +
         ", \"{x}\", \"{y}\"]\n"
         "space:\n  x: {type: float, low: -1, high: 1}\n  y: {type: float, low: -3, high: 1}\n"
         "objective: {name: loss, direction: minimize}\n"
         "budget: {trials: " + std::to_string(trials) + "}\nexecutor: " + executor + "\n" + extra;
}

// A campaign that runs `script MODE` once per mode, in the order given (enqueued), as many at a time
// as there are modes; `extra` adds top-level lines (an objective) and executor keys.
inline std::string one_trial_per_mode_campaign(const std::string& name, const fs::path& script,
                                               const std::vector<std::string>& modes,
                                               const std::string& executor_keys = "",
                                               const std::string& extra = "") {
  std::string choices, enqueue;
  for (const std::string& m : modes) {
    choices += (choices.empty() ? "" : ", ") + m;
    enqueue += "  - {mode: " + m + "}\n";
  }
  return "name: " + name + "\ncommand: [" + script.string() + ", \"{mode}\"]\nspace:\n  mode: {type: categorical, choices: [" +
         choices + "]}\nenqueue:\n" + enqueue + "budget: {trials: " + std::to_string(modes.size()) +
         "}\nexecutor: {workers: " + std::to_string(modes.size()) + executor_keys + "}\n" + extra;
}

// Per trial id, how many times the toy trainers' log says `what` ("start" or "end") for it.
inline std::map<std::string, int> starts(const fs::path& log, const std::string& what = "start") {
  std::map<std::string, int> n;
  std::ifstream in(log);
  std::string word, id, rest;
  while (in >> word) {
    if (word == what) {
      in >> id;
      std::getline(in, rest);
      ++n[id];
    } else {
      std::getline(in, rest);
    }
  }
  return n;
}

}  // namespace tune_test
