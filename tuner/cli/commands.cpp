#include "tuner/cli/commands.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "tune/adapters/command/inline_space.hpp"
#include "tune/io/atomic_file.hpp"
#include "tune/io/yaml_values.hpp"
#include "tune/space/space_yaml.hpp"
#include "tune/strategy/gp_bandit.hpp"
#include "tuner/campaign/campaign_lock.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/duration.hpp"
#include "tuner/campaign/event_log.hpp"

namespace tune::tuner {

namespace {

std::vector<std::string> supervisor_command() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return {ec ? std::string("tune") : self.string(), "__supervise"};
}

// Runs the campaign in this process, or in a detached daemon (setsid, output to DIR/tuner.log).
int drive(const std::filesystem::path& dir, const SessionFlags& flags) {
  RunOptions options;
  options.supervisor_command = supervisor_command();
  options.quiet = flags.quiet;
  options.wait_on_stop = flags.wait_on_stop;
  if (!flags.detach) return run_campaign(dir, options);

  const std::filesystem::path log = std::filesystem::absolute(dir / "tuner.log");
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("tune: fork");
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

// Trials run in their own directory, so a command element that names an existing file relative to
// where the campaign was defined (the campaign file's folder, or the current directory for the
// inline form) is made absolute: `python3 train.py` keeps working from trials/<id>/.
void anchor_relative_paths(CampaignConfig& config, const std::filesystem::path& base) {
  for (std::string& arg : config.command) {
    if (arg.empty() || arg.find('{') != std::string::npos || std::filesystem::path(arg).is_absolute()) continue;
    std::error_code ec;
    const std::filesystem::path candidate = std::filesystem::absolute(base / arg, ec);
    if (!ec && std::filesystem::is_regular_file(candidate, ec)) arg = candidate.lexically_normal().string();
  }
}

// Creates DIR with a fresh state for `config`, or checks that DIR already holds this campaign.
int prepare(const CampaignConfig& config, const std::filesystem::path& dir) {
  if (has_state(dir)) {
    const CampaignState existing = load_state(dir);
    YAML::Emitter a, b;
    a << existing.config.to_yaml();
    b << config.to_yaml();
    if (std::string(a.c_str()) != std::string(b.c_str())) {
      std::fprintf(stderr,
                   "tune: %s already holds a different campaign '%s'; resume it with 'tune resume %s', or choose "
                   "another directory with --dir\n",
                   dir.c_str(), existing.config.name.c_str(), dir.c_str());
      return kExitError;
    }
    std::fprintf(stderr, "tune: continuing the campaign in %s\n", dir.c_str());
    return -1;
  }
  std::filesystem::create_directories(dir / "trials");
  save_state(dir, CampaignState::create(config, now_seconds()));
  return -1;
}

std::string config_json(const Space& space, const Config& c) {
  std::string s;
  for (const Parameter& p : space.parameters()) {
    const auto it = c.find(p.name);
    if (it == c.end()) continue;
    s += (s.empty() ? "" : ", ") + std::string("\"") + json_escape(p.name) + "\": ";
    if (std::holds_alternative<std::string>(it->second)) s += "\"" + json_escape(std::get<std::string>(it->second)) + "\"";
    else s += tune::to_string(it->second);
  }
  return "{" + s + "}";
}

// `tune ask` and `tune tell` change the campaign, so they need it to themselves.
std::optional<CampaignLock> lock_for_ask_tell(const std::filesystem::path& dir) {
  std::string holder;
  auto lock = CampaignLock::try_acquire(dir, &holder);
  if (!lock)
    std::fprintf(stderr, "tune: %s is driven by %s; ask and tell need the campaign to themselves\n", dir.c_str(),
                 holder.c_str());
  return lock;
}

}  // namespace

int run_campaign_file(const std::filesystem::path& file, std::optional<std::filesystem::path> dir, const SessionFlags& flags) {
  CampaignConfig config = load_campaign_file(file);
  anchor_relative_paths(config, file.parent_path());
  const std::filesystem::path d = dir ? *dir : std::filesystem::path(config.name);
  if (const int rc = prepare(config, d); rc >= 0) return rc;
  return drive(d, flags);
}

int run_inline(const InlineSettings& s, const std::vector<std::string>& command, std::optional<std::filesystem::path> dir,
               const SessionFlags& flags) {
  const adapters::InlineCampaign inline_campaign = adapters::parse_inline_command(command);
  // Build the campaign as YAML so that it goes through exactly the checks of a campaign file.
  YAML::Node n;
  n["name"] = s.name;
  for (const std::string& a : inline_campaign.command) n["command"].push_back(a);
  n["space"] = space_to_yaml(inline_campaign.space);
  n["objective"]["name"] = s.objective;
  n["objective"]["direction"] = s.maximize ? "maximize" : "minimize";
  n["strategy"]["name"] = s.strategy;
  n["budget"]["trials"] = s.trials;
  n["executor"]["workers"] = s.workers;
  if (s.timeout) n["executor"]["timeout"] = *s.timeout;
  n["seed"] = s.seed;
  YAML::Emitter e;
  e << n;
  CampaignConfig config = campaign_from_yaml(YAML::Load(e.c_str()), "command line");
  anchor_relative_paths(config, std::filesystem::current_path());
  const std::filesystem::path d = dir ? *dir : std::filesystem::path(config.name);
  if (const int rc = prepare(config, d); rc >= 0) return rc;
  return drive(d, flags);
}

int resume(const std::filesystem::path& dir, const SessionFlags& flags) {
  if (!has_state(dir)) {
    std::fprintf(stderr, "tune: %s holds no campaign (no state.yaml); start one with 'tune run CAMPAIGN.yaml'\n", dir.c_str());
    return kExitError;
  }
  load_state(dir);  // refuse a damaged state before detaching
  return drive(dir, flags);
}

int init(const std::filesystem::path& file) {
  if (std::filesystem::exists(file)) {
    std::fprintf(stderr, "tune: %s exists; not overwriting it\n", file.c_str());
    return kExitError;
  }
  write_file_atomically(file, example_campaign_text());
  std::printf("wrote %s; edit it, then run: tune run %s\n", file.c_str(), file.c_str());
  return kExitComplete;
}

int status(const std::filesystem::path& dir) {
  const CampaignState s = load_state(dir);
  std::string holder;
  const bool running = !CampaignLock::try_acquire(dir, &holder).has_value();
  std::printf("campaign %s (%s %s, strategy %s): %s\n", s.config.name.c_str(), to_string(s.config.objective.direction),
              s.config.objective.name.c_str(), s.config.strategy.c_str(),
              running ? ("tuner running (" + holder + ")").c_str() : s.finished ? "finished" : "not running");
  std::printf("trials: %zu complete, %zu running, %zu queued, %zu failed, budget %zu; active time %s\n",
              s.count(RunStatus::complete), s.count(RunStatus::running), s.count(RunStatus::queued),
              s.count(RunStatus::failed), s.config.budget.trials, format_duration(s.active_seconds).c_str());
  if (const auto* bandit = dynamic_cast<const GpBandit*>(&s.study.strategy()))
    std::printf("model: %zu observations in the GP dictionary, %zu refits, %zu skipped steps\n",
                bandit->dictionary().size(), bandit->refresh_count(), bandit->skipped_steps().size());
  if (const Trial* b = s.study.best())
    std::printf("best: trial %llu, %s = %s, %s\n", static_cast<unsigned long long>(b->id), s.config.objective.name.c_str(),
                format_double(*b->value).c_str(), tune::to_string(b->config).c_str());
  if (!s.stop_reason.empty()) std::printf("last session ended: %s\n", s.stop_reason.c_str());
  std::printf("\n%5s  %-9s %14s %9s %3s  %s\n", "id", "status", "value", "time", "n", "configuration / failure");
  for (const TrialRun& r : s.runs) {
    const Trial& t = s.study.trial(r.id);
    const std::string value = t.value ? format_double(*t.value) : "-";
    const std::string time = r.exit ? format_duration(r.exit->duration()) : "-";
    std::printf("%5llu  %-9s %14s %9s %3zu  %s\n", static_cast<unsigned long long>(r.id), to_string(r.status),
                value.c_str(), time.c_str(), r.attempts, tune::to_string(t.config).c_str());
    if (r.status == RunStatus::failed) std::printf("%46s%s\n", "", r.failure_reason.c_str());
  }
  return kExitComplete;
}

int best(const std::filesystem::path& dir, bool json) {
  const CampaignState s = load_state(dir);
  const Trial* b = s.study.best();
  if (!b) {
    std::fprintf(stderr, "tune: no trial of %s has completed yet\n", dir.c_str());
    return kExitError;
  }
  if (json) {
    std::printf("{\"trial\": %llu, \"%s\": %s, \"config\": %s}\n", static_cast<unsigned long long>(b->id),
                json_escape(s.config.objective.name).c_str(), format_double(*b->value).c_str(),
                config_json(s.config.space, b->config).c_str());
  } else {
    YAML::Node n;
    n["trial"] = b->id;
    n[s.config.objective.name] = yaml_double(*b->value);
    n["config"] = config_to_yaml(s.config.space, b->config);
    n["config"].SetStyle(YAML::EmitterStyle::Block);
    YAML::Emitter e;
    e << n;
    std::printf("%s\n", e.c_str());
  }
  return kExitComplete;
}

int ask(const std::filesystem::path& dir, bool json) {
  const auto lock = lock_for_ask_tell(dir);
  if (!lock) return kExitLocked;
  CampaignState s = load_state(dir);
  const auto suggestion = s.study.ask();
  if (!suggestion) {
    save_state(dir, s);
    std::fprintf(stderr, "tune: no suggestion: %s\n", s.study.stop_reason().c_str());
    return kExitComplete;
  }
  TrialRun r;
  r.id = suggestion->id;
  r.status = RunStatus::running;
  r.attempts = 1;
  r.started_at = now_seconds();
  r.external = true;
  s.runs.push_back(r);
  save_state(dir, s);
  if (json) {
    std::printf("{\"trial\": %llu, \"config\": %s}\n", static_cast<unsigned long long>(suggestion->id),
                config_json(s.config.space, suggestion->config).c_str());
  } else {
    YAML::Node n;
    n["trial"] = suggestion->id;
    n["config"] = config_to_yaml(s.config.space, suggestion->config);
    n["config"].SetStyle(YAML::EmitterStyle::Block);
    YAML::Emitter e;
    e << n;
    std::printf("%s\n", e.c_str());
  }
  return kExitComplete;
}

int tell(const std::filesystem::path& dir, std::uint64_t id, const std::optional<std::string>& value,
         const std::optional<std::string>& failure) {
  const auto lock = lock_for_ask_tell(dir);
  if (!lock) return kExitLocked;
  CampaignState s = load_state(dir);
  if (id >= s.runs.size() || s.runs[id].status == RunStatus::complete || s.runs[id].status == RunStatus::failed) {
    std::fprintf(stderr, "tune: trial %llu is not waiting for a result\n", static_cast<unsigned long long>(id));
    return kExitError;
  }
  TrialRun& r = s.runs[id];
  r.finished_at = now_seconds();
  if (failure) {
    s.study.fail(id, *failure);
    r.status = RunStatus::failed;
    r.failure_reason = *failure;
  } else {
    double v = 0.0;
    try {
      std::size_t used = 0;
      v = std::stod(*value, &used);
      if (used != value->size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      std::fprintf(stderr, "tune: '%s' is not a number\n", value->c_str());
      return kExitUsage;
    }
    if (!std::isfinite(v)) {
      std::fprintf(stderr, "tune: the value must be finite; report a failure with --failed REASON\n");
      return kExitUsage;
    }
    s.study.tell(id, v);
    r.status = RunStatus::complete;
  }
  save_state(dir, s);
  return kExitComplete;
}

int stop(const std::filesystem::path& dir) {
  std::ifstream in(dir / "tuner.pid");
  long pid = 0;
  if (!(in >> pid) || pid <= 0) {
    std::fprintf(stderr, "tune: no tuner is running for %s (no tuner.pid)\n", dir.c_str());
    return kExitError;
  }
  std::string holder;
  if (CampaignLock::try_acquire(dir, &holder)) {
    std::fprintf(stderr, "tune: no tuner is running for %s (stale tuner.pid)\n", dir.c_str());
    return kExitError;
  }
  if (::kill(static_cast<pid_t>(pid), SIGTERM) != 0) {
    std::perror("tune: kill");
    return kExitError;
  }
  std::printf("asked the tuner (pid %ld) to stop; it checkpoints and exits\n", pid);
  return kExitComplete;
}

}  // namespace tune::tuner
