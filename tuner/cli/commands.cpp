#include "tuner/cli/commands.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "tune/adapters/command/command_template.hpp"
#include "tune/adapters/command/inline_space.hpp"
#include "tune/adapters/executor/supervisor.hpp"
#include "tune/gp/level_relation.hpp"
#include "tune/io/atomic_file.hpp"
#include "tune/io/yaml_values.hpp"
#include "tune/space/space_yaml.hpp"
#include "tune/strategy/bnb_strategy.hpp"
#include "tune/strategy/gp_bandit.hpp"
#include "tune/strategy/gpoo_strategy.hpp"
#include "tune/strategy/multi_resolution_search.hpp"
#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/campaign_lock.hpp"
#include "tuner/campaign/campaign_spend.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/duration.hpp"
#include "tuner/campaign/event_log.hpp"
#include "tuner/campaign/progress.hpp"
#include "tuner/campaign/run_settings.hpp"
#include "tuner/cli/running_trial_progress.hpp"

namespace tune::tuner {

namespace {

std::vector<std::string> supervisor_command() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return {ec ? std::string("tune") : self.string(), "__supervise"};
}

// Runs the campaign in this process, or in a detached daemon (setsid, output to DIR/tuner.log).
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

std::string quoted(const std::string& text) { return "'" + text + "'"; }

}  // namespace

const std::vector<InlineOption>& inline_options() {
  static const std::vector<InlineOption> options{
      {"--name", "name", " (--dir chooses the campaign's directory)",
       [](const InlineSettings& s) { return quoted(s.name); }},
      {"--trials", "budget.trials", "", [](const InlineSettings& s) { return std::to_string(s.trials); }},
      {"--cost-budget", "budget.cost", "", [](const InlineSettings& s) { return format_double(s.cost_budget.value_or(0)); }},
      {"--workers", "executor.workers", "", [](const InlineSettings& s) { return std::to_string(s.workers); }},
      {"--objective", "objective.name", "", [](const InlineSettings& s) { return quoted(s.objective); }},
      {"--maximize", "objective.direction: maximize", "", nullptr},
      {"--strategy", "strategy", "", [](const InlineSettings& s) { return quoted(s.strategy); }},
      {"--timeout", "executor.timeout", "", [](const InlineSettings& s) { return quoted(s.timeout.value_or("")); }},
      {"--seed", "seed", "", [](const InlineSettings& s) { return std::to_string(s.seed); }},
  };
  return options;
}

namespace {

// An error in the campaign the inline form built, told as the command-line option that set the
// field: the user never saw the YAML whose line and column the message would cite.
std::string inline_option_error(const CampaignError& error, const InlineSettings& s) {
  const std::string& field = error.field();
  std::string option;
  for (const InlineOption& o : inline_options())
    if (o.value && (field == o.key || (std::string(o.key) == "strategy" && field.rfind("strategy.", 0) == 0)))
      option = std::string(o.option) + " " + o.value(s);
  if (option.empty()) return error.what();  // the command after --: parse_inline_command checked it
  std::string problem = error.problem();
  // "remove executor.timeout for no time limit" reads "remove --timeout ..." here (a dotted key only:
  // "name" or "strategy" are words of the message too).
  const std::string flag = option.substr(0, option.find(' '));
  if (field.find('.') != std::string::npos)
    for (std::size_t at = problem.find(field); at != std::string::npos; at = problem.find(field, at + flag.size()))
      problem.replace(at, field.size(), flag);
  return option + ": " + problem;
}

// The top-level keys of two campaign definitions whose values differ ("command, budget").
std::string differing_keys(const CampaignConfig& a, const CampaignConfig& b) {
  const YAML::Node x = a.to_yaml(), y = b.to_yaml();
  std::string keys;
  for (const char* key : kCampaignKeys)
    if (emit_yaml(x[key]) != emit_yaml(y[key])) keys += (keys.empty() ? "" : ", ") + std::string(key);
  return keys;
}

}  // namespace

// DIR's lock, for a command that changes the campaign: ask, tell, and any command creating one. It
// waits its turn behind other such commands (parallel workers telling results), but not behind a
// tuner, which holds the campaign for its whole session.
std::optional<CampaignLock> lock_campaign(const std::filesystem::path& dir, const char* command) {
  CampaignLock::Refusal refusal;
  auto lock = CampaignLock::acquire(dir, CampaignLock::Role::command, "tune " + std::string(command), &refusal);
  if (lock) return lock;
  std::fprintf(stderr, "tune %s: %s\n", command, refusal.text(dir).c_str());
  return lock;
}

namespace {

// What prepare() found or made in the campaign directory.
struct Prepared {
  std::optional<int> refused;  // the exit code of a refusal (its message printed)
  bool created = false;        // a fresh state was written (else DIR already held this campaign)
  std::optional<CampaignState> existing;  // the state DIR held (not when created)
};

// Creates DIR with a fresh state for `config` (defined by `source`, a file or the command line), or
// checks that DIR already holds this campaign. A fresh state is written under DIR's lock, so that two
// commands creating one campaign at once cannot both write one: `lock` is DIR's lock if the caller
// holds it already (tune ask, which goes on to change the campaign), else prepare takes it to create
// the campaign and lets it go on return (tune run's runner takes it again).
Prepared prepare(const CampaignConfig& config, const std::filesystem::path& dir, const std::string& source,
                 const char* command, const std::optional<CampaignLock>& lock) {
  const bool take_lock = !lock && !has_state(dir);
  if (take_lock) std::filesystem::create_directories(dir / campaign_files::kTrials);  // the lock file lives in DIR
  const std::optional<CampaignLock> own_lock = take_lock ? lock_campaign(dir, command) : std::optional<CampaignLock>();
  if (take_lock && !own_lock) return {.refused = kExitLocked};
  if (!has_state(dir)) {  // (under the lock: no one else can write one now)
    save_state(dir, CampaignState::create(config, now_seconds()));
    return {.created = true};
  }
  CampaignState existing = load_state(dir);
  // How the trials run (workers, time limits, the executor's job options) may change between
  // sessions; what the campaign searches may not.
  if (const std::string keys = differing_keys(with_run_settings(existing.config, config), config); !keys.empty()) {
    std::string again = std::string(command) == "ask" ? "ask it with 'tune ask " + dir.string() + "'"
                                                     : "resume it with 'tune resume " + dir.string() + "'";
    if (keys.find("budget") != std::string::npos)
      again += " (with '--trials N' for a trial budget of N in all, '--cost-budget B' for a cost budget of B)";
    std::fprintf(stderr,
                 "tune %s: %s already holds the campaign '%s', which differs from the campaign '%s' of %s (in: %s); %s, "
                 "or choose another directory with --dir\n",
                 command, dir.c_str(), existing.config.name.c_str(), config.name.c_str(), source.c_str(), keys.c_str(),
                 again.c_str());
    return {.refused = kExitError};
  }
  if (!run_setting_changes(existing.config, config).empty()) {
    const std::optional<CampaignLock> own = lock ? std::optional<CampaignLock>() : lock_campaign(dir, command);
    if (!lock && !own) return {.refused = kExitLocked};
    existing = load_state(dir);  // as it is under the lock
    const std::string changes = describe(run_setting_changes(existing.config, config));
    if (const std::string refusal = apply_run_settings(dir, existing, config); !refusal.empty()) {
      std::fprintf(stderr, "tune %s: %s changes the executor of %s: %s\n", command, source.c_str(), dir.c_str(),
                   refusal.c_str());
      return {.refused = kExitError};
    }
    if (!changes.empty())
      std::fprintf(stderr, "tune %s: %s continues with the run settings of %s: %s\n", command, dir.c_str(),
                   source.c_str(), changes.c_str());
  }
  return {.existing = std::move(existing)};
}

// A resolution level's value as the trial receives it (3, not 3.000000; 100000, not 1e+05).
std::string level_value(const Resolution& resolution, std::size_t level) {
  return adapters::resolution_value_text(resolution.values.at(level));
}

// cmets is there to choose a cheap level per trial; without levels to choose from it runs every trial
// in full, which the user who asked for it (the inline form had no way to declare levels) should hear
// when the campaign is made, before the budget goes. Conversely, a resolution with a strategy that
// does not choose levels runs every trial at the full run: tune init's file names `strategy: ei`, and
// uncommenting its `resolution:` line gave full runs only, without a word (cmes is flat at the full
// run by design, and chosen for it).
void note_strategy_and_resolution(const CampaignConfig& config, const char* command) {
  if (config.strategy == "cmets" && !config.resolution)
    std::fprintf(stderr,
                 "tune %s: note: strategy cmets without a resolution runs every trial in full (a tree search at one "
                 "level); to let it choose cheaper runs, declare the levels: 'resolution: {param: epochs, levels: [1, "
                 "3, 9, 27]}' in a campaign file, or an argument such as --epochs~'levels(1,3,9,27)' in the inline "
                 "form\n",
                 command);
  if (config.resolution && config.strategy != "cmets" && config.strategy != "cmes") {
    const Resolution& res = *config.resolution;
    std::fprintf(stderr,
                 "tune %s: note: strategy %s runs every trial at the full run (%s %s), never at the resolution's "
                 "cheaper levels; 'strategy: cmets' (the default with a resolution) chooses each trial's level\n",
                 command, config.strategy.c_str(), res.parameter.c_str(), level_value(res, res.top()).c_str());
  }
}

// prepare() for tune run, which says when it continues a campaign (not with --quiet, which prints
// nothing but errors); an exit code if it refused.
std::optional<int> prepare_run(const CampaignConfig& config, const std::filesystem::path& dir, const std::string& source,
                               const SessionFlags& flags) {
  const Prepared prepared = prepare(config, dir, source, "run", std::nullopt);
  if (prepared.refused) return prepared.refused;
  if (prepared.created) {
    if (!flags.quiet) note_strategy_and_resolution(config, "run");
    return std::nullopt;
  }
  // Refused before "continuing ...", which would say the opposite of the refusal after it.
  if (driven_by_another_tuner(dir, "tune run")) return kExitLocked;
  if (!flags.quiet) std::fprintf(stderr, "tune: continuing the campaign in %s\n", dir.c_str());
  return std::nullopt;
}

// A campaign without a command has nothing for tune run or tune resume to launch.
bool refuse_without_command(const CampaignConfig& config, const std::string& where, const char* command) {
  if (!config.command.empty()) return false;
  std::fprintf(stderr,
               "tune %s: %s: this campaign has no command: it is driven by tune ask / tune tell; add `command:` to run "
               "trials\n",
               command, where.c_str());
  return true;
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
    if (p.is_relative()) p = (trial_dir / p).lexically_normal();
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) return "'" + p.string() + "' does not exist";
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

// A local campaign whose program cannot start would fail every trial with `could not start` and spend
// the failures budget on a typo; Slurm runs it elsewhere, so only the cluster can tell.
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

// A recommended region (gpoo) for `tune best`: the box per parameter ([low, high], or the choices
// in it) and the estimate of the objective's average over it.
YAML::Node region_yaml(const StudyRegion& r) {
  YAML::Node n;
  YAML::Node box;
  box.SetStyle(YAML::EmitterStyle::Flow);
  for (const ParameterRange& p : r.box) {
    YAML::Node range(YAML::NodeType::Sequence);
    range.SetStyle(YAML::EmitterStyle::Flow);
    if (!p.choices.empty()) {
      for (const std::string& c : p.choices) range.push_back(c);
    } else {
      range.push_back(tune::to_string(p.low));
      range.push_back(tune::to_string(p.high));
    }
    box[p.name] = range;
  }
  n["box"] = box;
  n["mean"] = yaml_double(r.mean);
  n["sd"] = yaml_double(r.sd);
  return n;
}

std::string value_json(const Value& v) {
  if (std::holds_alternative<std::string>(v)) return "\"" + json_escape(std::get<std::string>(v)) + "\"";
  return tune::to_string(v);
}

std::string region_json(const StudyRegion& r) {
  std::string box;
  for (const ParameterRange& p : r.box) {
    std::string range;
    if (!p.choices.empty())
      for (const std::string& c : p.choices) range += (range.empty() ? "" : ", ") + value_json(Value(c));
    else
      range = value_json(p.low) + ", " + value_json(p.high);
    box += (box.empty() ? "" : ", ") + std::string("\"") + json_escape(p.name) + "\": [" + range + "]";
  }
  return "{\"box\": {" + box + "}, \"mean\": " + format_double(r.mean) + ", \"sd\": " + format_double(r.sd) + "}";
}

// `tune best`'s recommendation, in JSON and in YAML, keys in one order: the trial it is (ei, ucb),
// the configuration, the model's mean and sd there, the sd's scale (cmets, cmes, ei, ucb), the region (gpoo).
struct RecommendationFields {
  const StudyRecommendation& rec;
  const Config& config;                  // the recommended trial's, as it ran, or rec.config
  std::optional<std::uint64_t> trial;
  bool sd_scale = true;
};

std::string recommendation_json(const Space& space, const RecommendationFields& f) {
  std::string out = "{";
  if (f.trial) out += "\"trial\": " + std::to_string(*f.trial) + ", ";
  out += "\"config\": " + config_json(space, f.config) + ", \"mean\": " + format_double(f.rec.mean) +
         ", \"sd\": " + format_double(f.rec.sd);
  if (f.sd_scale) out += ", \"sd_scale\": " + format_double(f.rec.sd_scale);
  if (f.rec.region) out += ", \"region\": " + region_json(*f.rec.region);
  return out + "}";
}

YAML::Node recommendation_yaml(const Space& space, const RecommendationFields& f) {
  YAML::Node n;
  if (f.trial) n["trial"] = *f.trial;
  n["config"] = config_to_yaml(space, f.config);
  n["config"].SetStyle(YAML::EmitterStyle::Block);
  n["mean"] = yaml_double(f.rec.mean);
  n["sd"] = yaml_double(f.rec.sd);
  if (f.sd_scale) n["sd_scale"] = yaml_double(f.rec.sd_scale);
  if (f.rec.region) n["region"] = region_yaml(*f.rec.region);
  return n;
}

// The comment line of `tune best` for a recommended region. What the region's estimate is depends
// on the aggregation: with one representative (the default) it is the value at the cell's centre,
// not an average over the box, and "averages" would promise what it is not.
std::string region_summary(const StudyRecommendation& rec, const std::string& objective, const Strategy& strategy) {
  const auto* gpoo = dynamic_cast<const GpooStrategy*>(&strategy);
  const bool centre_only = gpoo && gpoo->options().aggregation == GpooAggregation::representatives &&
                           gpoo->options().representatives == 1;
  return "gpoo recommends the region " + tune::to_string(rec.region->box) + ", where " + objective +
         (centre_only ? " at its centre is " : " averages ") + format_short(rec.region->mean) + " \u00b1 " +
         format_short(rec.region->sd) + "; as a point " +
         tune::to_string(rec.config) + ", " + objective + " " + format_short(rec.mean) + " \u00b1 " +
         format_short(rec.sd);
}

// Why `tune best` has no trial to report (none has completed), and where to look.
std::string why_no_best(const std::filesystem::path& dir, const CampaignState& s) {
  const std::size_t failed = s.count(RunStatus::failed);
  const std::string look = "; 'tune status " + dir.string() + "' shows why each failed, and " +
                           (dir / campaign_files::kTrials / "<id>").string() + "/stdout and stderr what each printed";
  if (s.runs.empty()) return "no trial of " + dir.string() + " has run yet ('tune resume " + dir.string() + "' runs them)";
  if (failed == s.runs.size())
    return (failed == 1 ? "the only trial of " + dir.string() + " failed"
                        : "all " + std::to_string(failed) + " trials of " + dir.string() + " failed") +
           look;
  return "no trial of " + dir.string() + " has completed yet (" + std::to_string(failed) + " failed, " +
         std::to_string(s.count(RunStatus::running)) + " running, " + std::to_string(s.count(RunStatus::queued)) +
         " queued)" + (failed > 0 ? look : "");
}

// ei's and ucb's recommendation is the completed trial whose configuration their model believes best
// (with a resolution, a full-resolution one: a cheaper run's configuration is not what the objective
// is about). A model whose errors at the trials, each left out, are several times its sds fits the
// results poorly (10 libsvm trials from 54% to 99%: a configuration that gave 98.61 "estimated" at
// 99.74 +- 0.008, or +- 4.0 scaled): its choice is no better founded than the best result, and
// there is no recommendation, only the scale (poor_fit_scale).
struct TrialRecommendation {
  std::optional<StudyRecommendation> rec;
  const Trial* trial = nullptr;
  double poor_fit_scale = 0.0;  // > 0: withheld for a poor fit
};

// `rec` is the study's recommendation, which the caller has made (it builds the model and scores the
// leave-one-out errors: not to be made twice); nothing for the other strategies.
TrialRecommendation gp_bandit_recommendation(const CampaignState& s, std::optional<StudyRecommendation> rec) {
  TrialRecommendation out;
  if (dynamic_cast<const GpBandit*>(&s.study.strategy()) == nullptr) return out;
  if (!rec || rec->region) return out;
  const std::optional<std::size_t> top = s.config.resolution ? std::optional(s.config.resolution->top()) : std::nullopt;
  for (const Trial& t : s.study.trials())
    if (t.status == TrialStatus::complete && t.unit == rec->unit && (!top || t.level.value_or(*top) == *top))
      out.trial = &t;
  if (!out.trial) return out;
  constexpr double kPoorFit = 3.0;
  if (rec->sd_scale > kPoorFit) {
    out.poor_fit_scale = rec->sd_scale;
    out.trial = nullptr;
    return out;
  }
  out.rec = std::move(rec);
  return out;
}

// `tune best` of a multi-resolution campaign: the model's recommendation (posterior mean and sd of
// the objective at the full resolution) and the best observed full-resolution trial; a trial of a
// lower level is never reported as the best (its value is not comparable). The top-level keys are
// those of a campaign without a resolution (trial, objective, config: the best full-resolution
// trial, null if none yet), plus `resolution` and `recommendation` (cmets's and cmes's model optimum;
// ei's and ucb's trial, as without a resolution; null for the other strategies).
int best_with_resolution(const std::filesystem::path& dir, const CampaignState& s, bool json) {
  const Resolution& res = *s.config.resolution;
  const Trial* b = s.study.best();
  // ei and ucb (which run every trial at the full resolution) recommend a trial, as without a
  // resolution: it lacked its id, and a poor fit was not withheld.
  const bool point_model = dynamic_cast<const GpBandit*>(&s.study.strategy()) != nullptr;
  std::optional<StudyRecommendation> model_rec = s.study.recommendation();
  const TrialRecommendation trial_rec = gp_bandit_recommendation(s, model_rec);
  const std::optional<StudyRecommendation> rec = point_model ? trial_rec.rec : std::move(model_rec);
  const std::optional<std::uint64_t> rec_trial =
      trial_rec.trial ? std::optional<std::uint64_t>(trial_rec.trial->id) : std::nullopt;
  const std::string& objective = s.config.objective.name;
  if (!b && !rec && s.count(RunStatus::complete) == 0) {
    std::fprintf(stderr, "tune best: no best configuration: %s\n", why_no_best(dir, s).c_str());
    return kExitError;
  }
  if (!b && !rec) {
    std::fprintf(stderr, "tune best: no full-resolution trial (%s = %s) of %s has completed yet, and the model has no "
                         "recommendation yet\n",
                 res.parameter.c_str(), level_value(res, res.top()).c_str(), dir.c_str());
    return kExitError;
  }
  if (json) {
    std::string out = "{\"trial\": " + (b ? std::to_string(b->id) : std::string("null"));
    out += ", \"" + json_escape(objective) + "\": " + (b ? format_double(*b->value) : std::string("null"));
    out += ", \"config\": " + (b ? config_json(s.config.space, b->config) : std::string("null"));
    out += ", \"resolution\": {\"parameter\": \"" + json_escape(res.parameter) + "\", \"value\": " +
           level_value(res, res.top()) + ", \"level\": " + std::to_string(res.top()) + "}";
    out += ", \"recommendation\": ";
    if (rec)
      out += recommendation_json(s.config.space, {*rec, rec->config, rec_trial});
    else
      out += "null";
    std::printf("%s}\n", out.c_str());
    return kExitComplete;
  }
  // A comment line for people, then YAML for programs.
  std::string summary = "# at full resolution (" + res.parameter + " = " + level_value(res, res.top()) + "): ";
  if (rec && rec->region)
    summary += region_summary(*rec, objective, s.study.strategy()) + "; ";
  else if (trial_rec.poor_fit_scale > 0)
    summary += "the model fits these results poorly (its errors at the trials, each left out, are " +
               format_short(trial_rec.poor_fit_scale) + " times its sds): no estimate beyond the best result; ";
  else if (rec)
    summary += "the model recommends " + (rec_trial ? "trial " + std::to_string(*rec_trial) + "'s configuration " : "") +
               tune::to_string(rec->config) + ", " + objective + " " + format_short(rec->mean) +
               " \u00b1 " + format_short(rec->sd) +
               (rec->sd_scale > 1 ? " (its sd times " + format_short(rec->sd_scale) +
                                        ": the model's errors at the full runs, each left out, exceed its sds)"
                                  : std::string()) +
               "; ";
  else
    summary += "no model recommendation (strategies cmets and cmes give one); ";
  if (b)
    summary += "best observed full-resolution trial " + std::to_string(b->id) + ", " + objective + " " +
               format_double(*b->value);
  else
    summary += "no full-resolution trial has completed yet";
  YAML::Node n;
  n["trial"] = b ? YAML::Node(b->id) : YAML::Node(YAML::NodeType::Null);
  n[objective] = b ? yaml_double(*b->value) : YAML::Node(YAML::NodeType::Null);
  if (b) {
    n["config"] = config_to_yaml(s.config.space, b->config);
    n["config"].SetStyle(YAML::EmitterStyle::Block);
  } else {
    n["config"] = YAML::Node(YAML::NodeType::Null);
  }
  YAML::Node r;
  r.SetStyle(YAML::EmitterStyle::Flow);
  r["parameter"] = res.parameter;
  r["value"] = level_value(res, res.top());
  r["level"] = res.top();
  n["resolution"] = r;
  if (rec) {
    n["recommendation"] = recommendation_yaml(s.config.space, {*rec, rec->config, rec_trial});
  } else {
    n["recommendation"] = YAML::Node(YAML::NodeType::Null);
  }
  YAML::Emitter e;
  e << n;
  std::printf("%s\n%s\n", summary.c_str(), e.c_str());
  return kExitComplete;
}

}  // namespace

// Every command but run and init works on an existing campaign. Without DIR/state.yaml there is
// nothing damaged to restore: the directory is simply not a campaign, which is a usage error.
bool holds_campaign(const std::filesystem::path& dir, const char* command) {
  if (has_state(dir)) return true;
  std::error_code ec;
  const char* what = !std::filesystem::exists(dir, ec)       ? "does not exist"
                     : !std::filesystem::is_directory(dir, ec) ? "is not a directory"
                                                               : "holds no campaign (no state.yaml)";
  const bool ask = std::string(command) == "ask";
  std::fprintf(stderr,
               "tune %s: %s %s; give the directory of a campaign (the one 'tune run' created: ./<name>, or its "
               "--dir), or start one with 'tune run CAMPAIGN.yaml'%s ('tune init' writes an example)\n",
               command, dir.c_str(), what,
               ask ? " or, to run its trials yourself, 'tune ask CAMPAIGN.yaml'" : "");
  return false;
}

namespace {

// A cost for display: nullopt is a cost not yet measured (campaign_spend).
std::string cost_text(const std::optional<double>& cost, const char* unit) {
  return cost ? format_short(*cost) + unit : "unknown";
}

// "2 running, 1 queued": the pending trials a committed cost is for.
std::string pending_text(std::size_t running, std::size_t queued) {
  std::string text = running > 0 ? std::to_string(running) + " running" : "";
  if (queued > 0) text += (text.empty() ? "" : ", ") + std::to_string(queued) + " queued";
  return text;
}

// `tune status` of a multi-resolution campaign: what finished trials spent (their recorded costs,
// or their level's declared one), apart from what running and queued trials have committed at their
// level's current cost (the study counts both against the budget, but only the first is spent), and
// per level its value, its cost (declared, or the mean measured so far, an estimate until the level
// has a completed trial), its trials and their costs. Returns the completed trials per level.
std::vector<std::size_t> print_resolution_status(const CampaignState& s) {
  const Resolution& res = *s.config.resolution;
  const std::vector<double> costs = s.study.level_costs();
  const bool calibrated = costs_calibrated(res, s.study.trials());
  const char* unit = res.measured() ? "s" : "";
  const std::size_t n = res.levels();
  std::vector<std::size_t> complete(n), failed(n), running(n), queued(n);
  const CampaignSpend spend_now = campaign_spend(s);
  for (const TrialRun& r : s.runs) {
    const std::size_t level = s.study.trial(r.id).level.value_or(res.top());
    if (level >= n) continue;
    switch (r.status) {
      case RunStatus::complete: ++complete[level]; break;
      case RunStatus::failed: ++failed[level]; break;
      case RunStatus::running: ++running[level]; break;
      case RunStatus::queued: ++queued[level]; break;
    }
  }
  std::string spend = "cost: " + cost_text(spend_now.spent, unit) + " spent";
  if (const std::size_t pending = s.count(RunStatus::running) + s.count(RunStatus::queued); pending > 0)
    spend += " + " + (spend_now.committed ? cost_text(spend_now.committed, unit) : "unknown (not yet measured)") +
             " committed to " + pending_text(s.count(RunStatus::running), s.count(RunStatus::queued));
  if (s.config.budget.cost) spend += " of the budget " + format_short(*s.config.budget.cost) + unit;
  spend += res.measured() ? " (measured: seconds of trial run time)" : " (declared costs)";
  std::printf("%s\n", spend.c_str());
  // Why a tuner with several workers runs one trial (or tune ask exits 6): the study waits for the
  // first measured cost before it commits the budget to guesses.
  if (s.config.budget.cost && !calibrated && s.study.pending_count() > 0)
    std::printf("  the levels' costs are unknown until the first run's time is in: until then one trial runs at a "
                "time\n");
  // Likewise a run at a level no run has completed at, whose cost is a guess.
  if (s.config.budget.cost && calibrated)
    for (const TrialRun& r : s.runs) {
      const std::optional<std::size_t> level = s.study.trial(r.id).level;
      if ((r.status == RunStatus::running || r.status == RunStatus::queued) && level && *level < n &&
          !level_cost_measured(res, s.study.trials(), *level)) {
        std::printf("  trial %llu runs at %s %s, whose cost is still a guess (no run there has completed): until it "
                    "ends no other trial starts\n",
                    static_cast<unsigned long long>(r.id), res.parameter.c_str(), level_value(res, *level).c_str());
        break;
      }
    }
  // As wide as the widest level's value too (a data fraction of 1/3 is 0.3333333333333333), so that
  // the columns after it stay aligned.
  int w = std::max(7, static_cast<int>(res.parameter.size()));
  for (std::size_t l = 0; l < n; ++l) w = std::max(w, static_cast<int>(level_value(res, l).size()));
  std::printf("resolution %s, %zu levels (the last is the full run):\n", res.parameter.c_str(), n);
  std::printf("  %5s  %*s  %14s  %8s  %6s  %7s  %6s  %10s  %10s\n", "level", w, res.parameter.c_str(), "cost", "complete",
              "failed", "running", "queued", "spent", "committed");
  for (std::size_t l = 0; l < n; ++l) {
    std::string cost = cost_text(calibrated ? std::optional(costs[l]) : std::nullopt, unit);
    if (calibrated && res.measured() && complete[l] == 0) cost += " (est.)";
    const std::string pending = running[l] + queued[l] > 0 ? cost_text(spend_now.committed_by_level[l], unit) : "-";
    std::printf("  %5zu  %*s  %14s  %8zu  %6zu  %7zu  %6zu  %10s  %10s\n", l, w, level_value(res, l).c_str(), cost.c_str(),
                complete[l], failed[l], running[l], queued[l], cost_text(spend_now.spent_by_level[l], unit).c_str(),
                pending.c_str());
  }
  return complete;
}

// How the model relates each cheaper level to the full run, from its fitted hyperparameters: the
// user's evidence on whether the cheap runs are worth their cost.
void print_level_relations(const CampaignState& s, const MultiResolutionSearch& strategy, const std::vector<std::size_t>& complete) {
  const Resolution& res = *s.config.resolution;
  if (complete[res.top()] == 0) {
    std::printf("  how the cheaper levels track the full run: not known before a full-resolution trial completes\n");
    return;
  }
  std::printf("  how well a cheaper run predicts the full run (fitted correlation; 1: the same up to scale and "
              "shift, 0: unrelated):\n");
  for (std::size_t l = 0; l < res.top(); ++l) {
    if (complete[l] == 0) {
      std::printf("    level %zu (%s %s): no completed runs\n", l, res.parameter.c_str(), level_value(res, l).c_str());
      continue;
    }
    const LevelRelation r = level_relation(strategy.hyperparameters(), strategy.standardization(), l, s.config.space.dim());
    std::printf("    level %zu (%s %s): correlation %.2f, noise sd %s%s\n", l, res.parameter.c_str(),
                level_value(res, l).c_str(), r.correlation, format_short(r.noise_sd).c_str(),
                r.correlation < 0.5 ? ": its runs say little about full runs" : "");
  }
}

// cmets's sign that more budget buys little: since the first trial of the current stretch of source
// cmes_tree_uninformative, the model has been sure that every configuration left in its tree is
// worse than its best, and full runs refine the optimum instead. New results or a refit can find more
// to learn in the tree and end a stretch: only the last stretch counts, and only while it lasts.
void print_tree_saturation(const CampaignState& s) {
  const auto uninformative = [](const Trial& t) { return t.source == kTreeUninformativeSource; };
  const Trial* stretch_start = nullptr;
  const Trial* last_start = nullptr;  // of the last stretch, ended or not
  std::uint64_t last_end = 0;         // the first trial after it, if it ended
  std::ptrdiff_t runs = 0;
  for (const Trial& t : s.study.trials()) {
    if (uninformative(t)) {
      if (!stretch_start) stretch_start = last_start = &t, runs = 0;
      ++runs;
    } else if (stretch_start) {
      stretch_start = nullptr;
      last_end = t.id;
    }
  }
  if (!last_start) return;
  if (!stretch_start) {
    std::printf("  the tree had nothing left to learn from trial %llu until the model found more to learn in it at trial %llu\n",
                static_cast<unsigned long long>(last_start->id), static_cast<unsigned long long>(last_end));
    return;
  }
  std::printf("  nothing left to learn in the tree since trial %llu: the model is sure every configuration left in it "
              "is worse than its best; the %td full run%s since refine%s the optimum%s\n",
              static_cast<unsigned long long>(stretch_start->id), runs, runs == 1 ? "" : "s", runs == 1 ? "s" : "",
              s.finished ? "" : " (tune stop ends the campaign if that is not worth their cost)");
}

}  // namespace

// Results the model holds at its floor (value_floor.hpp: a diverged run told as 1e30), if any: the
// user sees that the model did not take them at their word, and what to do instead.
void print_floored_results(const CampaignState& s) {
  const Strategy& strategy = s.study.strategy();
  std::vector<ValueFloor> floors;  // by level (one for strategies without levels)
  std::set<std::uint64_t> modelled;  // ei/ucb: the dictionary (a compressed model leaves results out)
  const auto* bandit = dynamic_cast<const GpBandit*>(&strategy);
  if (bandit) {
    floors = {bandit->output_transform().floor};
    modelled.insert(bandit->dictionary().begin(), bandit->dictionary().end());
  }
  if (const auto* mr = dynamic_cast<const MultiResolutionSearch*>(&strategy)) floors = mr->level_floors();
  else if (const auto* gpoo = dynamic_cast<const GpooStrategy*>(&strategy)) floors = {gpoo->model().floor};
  else if (const auto* bnb = dynamic_cast<const BnbStrategy*>(&strategy)) floors = {bnb->model().floor};
  const Direction direction = s.config.objective.direction;
  std::size_t count = 0;
  std::string first;
  for (const Trial& t : s.study.trials()) {
    if (t.status != TrialStatus::complete || !t.value || (bandit && !modelled.count(t.id))) continue;
    const std::size_t level = floors.size() > 1 ? std::min(t.level.value_or(floors.size() - 1), floors.size() - 1) : 0;
    if (level >= floors.size() || !floors[level].exists() || !(reward_of(*t.value, direction) < floors[level].fence)) continue;
    if (count++ == 0)
      first = "trial " + std::to_string(t.id) + "'s " + format_short(*t.value) + " is modelled as " +
              format_short(reward_of(floors[level].value, direction));
  }
  if (count == 0) return;
  std::printf("model: %zu result%s out of scale, modelled as the worst ordinary result (%s; a diverged run is "
              "better reported as failed)\n",
              count, count == 1 ? "" : "s", first.c_str());
}

int run_campaign_file(const std::filesystem::path& file, std::optional<std::filesystem::path> dir, const SessionFlags& flags) {
  // `tune run DIR` for `tune resume DIR`, or a mistyped file name: a bad command line, said as such
  // (the YAML reader would call a directory "expected a campaign: a map with name, ...").
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    if (std::filesystem::exists(file / campaign_files::kState, ec))
      std::fprintf(stderr, "tune run: %s is a campaign directory; continue it with 'tune resume %s' (tune run takes a "
                           "campaign file)\n", file.c_str(), file.c_str());
    else
      std::fprintf(stderr, "tune run: %s is a directory; give a campaign file ('tune init' writes an example)\n",
                   file.c_str());
    return kExitUsage;
  }
  if (!std::filesystem::exists(file, ec)) {
    std::fprintf(stderr, "tune run: %s does not exist; give a campaign file ('tune init' writes an example)\n",
                 file.c_str());
    return kExitUsage;
  }
  CampaignConfig config = load_campaign_file(file);
  if (refuse_without_command(config, file.string(), "run")) return kExitUsage;
  anchor_relative_paths(config, file.parent_path());
  const std::filesystem::path d = dir ? *dir : std::filesystem::path(config.name);
  if (refuse_unstartable_command(config, d, file.string(), "run")) return kExitError;
  if (const std::optional<int> refused = prepare_run(config, d, file.string(), flags)) return *refused;
  return drive(d, flags, "run");
}

int run_inline(const InlineSettings& s, const std::vector<std::string>& command, std::optional<std::filesystem::path> dir,
               const SessionFlags& flags) {
  adapters::InlineCampaign inline_campaign;
  try {
    inline_campaign = adapters::parse_inline_command(command);  // its errors cite the argument
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "tune run: %s\n", e.what());
    return kExitUsage;
  }
  // The campaign file's refusal would say "declare a 'resolution' ..., or use budget.trials /
  // budget.wall": keys the inline form has no way to write. Say how this form declares the levels.
  constexpr const char* kDeclareLevels =
      "declare them with an argument NAME~'levels(...)' after -- (e.g. --epochs~'levels(1,3,9,27)': each trial gets "
      "its level's value there, and cmets chooses the level)";
  if (s.cost_budget && !inline_campaign.resolution) {
    std::fprintf(stderr, "tune run: --cost-budget %s: a cost budget counts the costs of resolution levels; %s, or give "
                         "--trials instead\n",
                 format_double(*s.cost_budget).c_str(), kDeclareLevels);
    return kExitUsage;
  }
  // cmets is there to choose each trial's level; asked for by name without levels it ran every trial
  // in full, a tree search at one level, with a note that --quiet kept back and progress lines
  // scrolled away: the user of this form forgot the levels, and a refusal costs a retyped line
  // where the campaign would have spent its whole budget on full runs. (A campaign file may ask for
  // that search on purpose: it is run, with the note.)
  if (s.strategy_given && s.strategy == "cmets" && !inline_campaign.resolution) {
    std::fprintf(stderr, "tune run: --strategy cmets: the campaign has no resolution, and cmets chooses each trial's "
                         "level among the resolution's levels; %s, or give --strategy cmes or ei to run every trial in full\n",
                 kDeclareLevels);
    return kExitUsage;
  }
  // Build the campaign as YAML so that it goes through exactly the checks of a campaign file.
  YAML::Node n;
  n["name"] = s.name;
  for (const std::string& a : inline_campaign.command) n["command"].push_back(a);
  n["space"] = space_to_yaml(inline_campaign.space);
  if (const std::optional<Resolution>& r = inline_campaign.resolution) {
    n["resolution"]["param"] = r->parameter;
    for (double v : r->values) n["resolution"]["levels"].push_back(yaml_double(v));
    n["resolution"]["cost"] = "measured";
  }
  n["objective"]["name"] = s.objective;
  n["objective"]["direction"] = s.maximize ? "maximize" : "minimize";
  n["strategy"]["name"] = !s.strategy_given && inline_campaign.resolution ? kDefaultResolutionStrategy : s.strategy;
  // As in a campaign file, a cost budget is the limit unless a trial budget is given too.
  if (!s.cost_budget || s.trials_given) n["budget"]["trials"] = s.trials;
  if (s.cost_budget) n["budget"]["cost"] = yaml_double(*s.cost_budget);
  n["executor"]["workers"] = s.workers;
  if (s.timeout) n["executor"]["timeout"] = *s.timeout;
  n["seed"] = s.seed;
  YAML::Emitter e;
  e << n;
  CampaignConfig config;
  try {
    config = campaign_from_yaml(YAML::Load(e.c_str()), "command line");
  } catch (const CampaignError& error) {
    std::fprintf(stderr, "tune run: %s\n", inline_option_error(error, s).c_str());
    return kExitUsage;
  }
  anchor_relative_paths(config, std::filesystem::current_path());
  const std::filesystem::path d = dir ? *dir : std::filesystem::path(config.name);
  if (refuse_unstartable_command(config, d, "the command line", "run")) return kExitError;
  if (const std::optional<int> refused = prepare_run(config, d, "the command line", flags)) return *refused;
  return drive(d, flags, "run");
}

namespace {

// --cost-budget B: B cost units in all, above the present budget, for a campaign with one. A refusal is
// an exit code, with nothing changed.
std::optional<int> raise_cost_budget(const std::filesystem::path& dir, CampaignState& s, double budget,
                                     const char* command) {
  if (!s.config.budget.cost) {
    std::fprintf(stderr,
                 "tune %s: --cost-budget: %s has no cost budget to raise (budget.cost is given with a resolution when "
                 "the campaign is made)\n",
                 command, dir.c_str());
    return kExitUsage;
  }
  if (!(std::isfinite(budget) && budget > *s.config.budget.cost)) {
    std::fprintf(stderr, "tune %s: --cost-budget %s: give the new total, more than the present budget of %s (%s spent)\n",
                 command, format_short(budget).c_str(), format_short(*s.config.budget.cost).c_str(),
                 format_short(s.study.spent_cost()).c_str());
    return kExitUsage;
  }
  s.study.raise_cost_budget(budget);
  s.config.budget.cost = budget;
  return std::nullopt;
}

// --trials N: N trials in all, more than the trials so far. A refusal is an exit code, with nothing
// changed.
std::optional<int> raise_trial_budget(const std::filesystem::path& dir, CampaignState& s, std::size_t trials,
                                      const char* command) {
  // A study that stopped (its cost budget spent, its strategy done) hands out nothing more, whatever
  // the trial budget: raising it ended the session at once, and left a campaign that had no trial
  // limit with one.
  if (s.study.finished()) {
    const bool cost = s.study.stopped_for_cost_budget();
    std::fprintf(stderr,
                 "tune %s: --trials %zu: %s is finished (%s), which a larger trial budget does not change%s; nothing was "
                 "written\n",
                 command, trials, dir.c_str(), s.study.stop_reason().c_str(),
                 cost ? " ('--cost-budget B' raises the cost budget to B)" : "");
    return kExitUsage;
  }
  const std::size_t so_far = s.study.trials().size();
  if (trials <= so_far) {
    std::fprintf(stderr, "tune %s: --trials %zu: %s has %zu trials already; give the new total, more than %zu\n",
                 command, trials, dir.c_str(), so_far, so_far);
    return kExitUsage;
  }
  s.config.budget.trials = trials;
  return std::nullopt;
}

// Both raises, or neither: the state is written only when every one given is accepted. The caller
// holds the campaign's lock.
std::optional<int> raise_budgets(const std::filesystem::path& dir, CampaignState& s, const BudgetRaise& raise,
                                 const char* command) {
  if (raise.cost)
    if (const std::optional<int> refused = raise_cost_budget(dir, s, *raise.cost, command)) return refused;
  if (raise.trials)
    if (const std::optional<int> refused = raise_trial_budget(dir, s, *raise.trials, command)) return refused;
  s.finished = false;
  s.stop_reason.clear();
  save_state(dir, s);
  return std::nullopt;
}

}  // namespace

int resume(const std::filesystem::path& dir, const SessionFlags& flags, const BudgetRaise& raise) {
  if (!holds_campaign(dir, "resume")) return kExitUsage;
  {
    // A raise changes the state: under the lock, which a tuner driving the campaign holds (exit 5
    // then), from the one load. The session takes the lock again for itself.
    const std::optional<CampaignLock> lock = raise.any() ? lock_campaign(dir, "resume") : std::nullopt;
    if (raise.any() && !lock) return kExitLocked;
    CampaignState s = load_state(dir);  // refuse a damaged state before detaching
    if (refuse_without_command(s.config, dir.string(), "resume")) return kExitUsage;
    if (refuse_unstartable_command(s.config, dir, state_path(dir).string(), "resume")) return kExitError;
    if (raise.any())
      if (const std::optional<int> refused = raise_budgets(dir, s, raise, "resume")) return *refused;
  }
  return drive(dir, flags, "resume");
}

int init(const std::filesystem::path& file) {
  // A directory "exists" too, but "not overwriting it" told the user of `tune init DIR` nothing.
  if (std::error_code ec; std::filesystem::is_directory(file, ec)) {
    std::fprintf(stderr, "tune init: %s is a directory; give the file to write, e.g. %s\n", file.c_str(),
                 (file / "campaign.yaml").c_str());
    return kExitError;
  }
  if (std::filesystem::exists(file)) {
    std::fprintf(stderr, "tune init: %s exists; not overwriting it\n", file.c_str());
    return kExitError;
  }
  write_file_atomically(file, example_campaign_text(file.string()));
  std::printf("wrote %s; edit it, then run: tune run %s\n", file.c_str(), file.c_str());
  return kExitComplete;
}

namespace {

// When a running trial's cluster job started the trial on its node: its supervisor's record of this
// attempt in the trial directory (an earlier attempt's records are in attempts/<n>/); 0 while there
// is none, the job waiting in the cluster's queue. nullopt for a trial that is not a running job.
// Such a job was shown as running, timed from its submission.
std::optional<double> cluster_job_started_at(const std::filesystem::path& campaign_dir, const TrialRun& r) {
  if (r.status != RunStatus::running || r.job.empty() || r.external) return std::nullopt;
  try {
    const std::optional<adapters::SupervisorRecord> record = adapters::read_supervisor_record(trial_dir(campaign_dir, r.id));
    return record ? record->started_at : 0.0;
  } catch (const std::exception&) {
    return std::nullopt;  // a record being written, or damaged: it started, when is not known
  }
}

}  // namespace

int status(const std::filesystem::path& dir, std::optional<std::size_t> last) {
  if (!holds_campaign(dir, "status")) return kExitUsage;
  const CampaignState s = load_state(dir);
  // Read-only: status also reads a colleague's campaign or an archive it cannot write to.
  std::string why;
  const LockHolder holder = CampaignLock::probe(dir, &why);
  const std::string pid = holder == LockHolder::tuner ? CampaignLock::tuner_pid(dir) : std::string();
  const std::string state = holder == LockHolder::tuner ? "tuner running" + (pid.empty() ? "" : " (process " + pid + ")")
                            : holder == LockHolder::unknown ? "tuner state unknown (" + why + ")"
                            : s.finished                    ? "finished"
                                                            : "not running";
  std::printf("campaign %s (%s %s, strategy %s): %s\n", s.config.name.c_str(), to_string(s.config.objective.direction),
              s.config.objective.name.c_str(), s.config.strategy.c_str(), state.c_str());
  const std::string trial_budget =
      s.config.budget.trials ? "budget " + std::to_string(*s.config.budget.trials) : std::string("no trial limit");
  // The state holds the active time as of its last write, which a tuner running a long trial makes
  // at the trial's end: while one runs, the time since that write counts too (a session 1.5 s old
  // read "active time 16ms").
  const double active =
      s.active_seconds + (holder == LockHolder::tuner && s.updated_at > 0 ? std::max(0.0, now_seconds() - s.updated_at) : 0.0);
  // Each running cluster job's start on its node, read once (0: still in the queue).
  std::vector<std::optional<double>> job_started;
  for (const TrialRun& r : s.runs) job_started.push_back(cluster_job_started_at(dir, r));
  const auto pending = static_cast<std::size_t>(std::count(job_started.begin(), job_started.end(), 0.0));
  const std::string in_queue = pending == 0 ? ""
                               : " (" + std::string(pending == s.count(RunStatus::running) ? "all" : std::to_string(pending)) +
                                     " of them pending in the " + (s.config.executor.kind == "slurm" ? "Slurm" : "cluster's") +
                                     " queue)";
  std::printf("trials: %zu complete, %zu running%s, %zu queued, %zu failed, %s; active time %s\n",
              s.count(RunStatus::complete), s.count(RunStatus::running), in_queue.c_str(), s.count(RunStatus::queued),
              s.count(RunStatus::failed), trial_budget.c_str(), format_duration(active).c_str());
  if (const std::size_t waiting = s.study.enqueued_count(); waiting > 0)
    std::printf("enqueued: %zu configuration%s to run before the strategy's next suggestion\n", waiting,
                waiting == 1 ? "" : "s");
  std::vector<std::size_t> complete_per_level;
  if (s.config.resolution) complete_per_level = print_resolution_status(s);
  if (const auto* bandit = dynamic_cast<const GpBandit*>(&s.study.strategy()))
    std::printf("model: %zu observations in the GP dictionary, %zu refits, %zu skipped steps\n",
                bandit->dictionary().size(), bandit->refresh_count(), bandit->skipped_steps().size());
  // From the strategy's record of its model, not the model: a loaded one is built at its first use,
  // O(n^3), and status has no use for it.
  if (const auto* mr = dynamic_cast<const MultiResolutionSearch*>(&s.study.strategy()); mr && mr->has_model()) {
    std::printf("model: %zu observations in the GP\n", mr->model_size());
    if (s.config.resolution && s.config.resolution->levels() > 1 && mr->options().tree)
      print_level_relations(s, *mr, complete_per_level);
    print_tree_saturation(s);
  }
  // A round is an observation of its cell once all its trials completed; one with a failed trial
  // never will be (it stays as a fantasy). Every round was counted as "cells observed": 14 where 6
  // were, beside 8 failed trials.
  if (const auto* gpoo = dynamic_cast<const GpooStrategy*>(&s.study.strategy())) {
    std::size_t observed = 0;
    for (const GpooStrategy::Round& r : gpoo->rounds()) observed += gpoo->round_complete(r, s.study.trials()) ? 1 : 0;
    std::printf("model: %zu gpoo rounds, %zu of them observed (every trial complete), %zu kernel refits\n",
                gpoo->rounds().size(), observed, gpoo->model().refresh_count);
  }
  // The level and the pruning as the asks see them (failed points' fantasies included): a failed
  // point of a round left the search itself at "lattice level 1 (0% of it pruned)" for good.
  if (const auto* bnb = dynamic_cast<const BnbStrategy*>(&s.study.strategy()); bnb && bnb->search()) {
    const BranchAndBound asked = *bnb->search_as_asked(s.study.trials());
    std::printf("model: %zu points told to branch and bound, lattice level %zu (%.4g%% of it pruned), %zu kernel refits\n",
                bnb->search()->samples(), asked.level(), 100.0 * asked.pruned_fraction(), bnb->model().refresh_count);
    if (const std::optional<RepeatCheck> check = bnb->repeat_check(s.study.trials());
        check && check->outcome != RepeatCheck::Outcome::different)
      std::printf("noise check: %s\n", check->describe().c_str());
  }
  if (const std::optional<std::string> warning = s.study.warning())
    std::printf("warning: %s\n", warning->c_str());
  print_floored_results(s);
  if (const Trial* b = s.study.best())
    std::printf("best: trial %llu, %s = %s, %s%s\n", static_cast<unsigned long long>(b->id), s.config.objective.name.c_str(),
                format_double(*b->value).c_str(), tune::to_string(b->config).c_str(),
                s.config.resolution ? " (full resolution)" : "");
  else if (s.config.resolution && s.count(RunStatus::complete) > 0)
    std::printf("best: no full-resolution trial has completed yet (lower levels are not comparable)\n");
  if (!s.stop_reason.empty()) std::printf("last session ended: %s\n", s.stop_reason.c_str());
  const std::string level_header = s.config.resolution ? s.config.resolution->parameter : std::string();
  const int level_width = s.config.resolution ? std::max(6, static_cast<int>(level_header.size())) : 0;
  // Runs are in id order; --last keeps the tail. A campaign of thousands of trials lists its most
  // recent ones by default (4000 lines at 4000 trials buried the summary); a small one lists all.
  const bool large = s.runs.size() > kStatusListsAllUpTo;
  const std::size_t listed = last ? *last : large ? kStatusListsByDefault : s.runs.size();
  const std::size_t skipped = listed < s.runs.size() ? s.runs.size() - listed : 0;
  // Values print in full (17 significant digits when they need them): the column is as wide as the
  // widest listed, so that the columns after it stay aligned.
  int value_width = 14;
  for (auto it = s.runs.begin() + static_cast<std::ptrdiff_t>(skipped); it != s.runs.end(); ++it)
    if (const Trial& t = s.study.trial(it->id); t.value)
      value_width = std::max(value_width, static_cast<int>(format_double(*t.value).size()));
  std::printf("\n%5s  %-9s %*s %9s %3s  %*s%s%s\n", "id", "status", value_width, "value", "time", "n", level_width,
              level_header.c_str(), s.config.resolution ? "  " : "", "configuration / failure");
  if (skipped > 0) {
    const auto failed = std::count_if(s.runs.begin(), s.runs.begin() + static_cast<std::ptrdiff_t>(skipped),
                                      [](const TrialRun& r) { return r.status == RunStatus::failed; });
    const std::string how_many = failed == 0 ? std::string(skipped == 1 ? "it did not fail" : "none of them failed")
                                 : skipped == 1 ? std::string("it failed")
                                                : std::to_string(failed) + " of them failed";
    const std::string how_to_list_all =
        large ? "'tune status " + dir.string() + " --all' lists every trial" : "without --last every trial is listed";
    std::printf("%5s  %zu earlier trial%s not shown (%s); %s\n", "...", skipped, skipped == 1 ? "" : "s",
                how_many.c_str(), how_to_list_all.c_str());
  }
  const double now = now_seconds();
  for (auto it = s.runs.begin() + static_cast<std::ptrdiff_t>(skipped); it != s.runs.end(); ++it) {
    const TrialRun& r = *it;
    const Trial& t = s.study.trial(r.id);
    const std::string value = t.value ? format_double(*t.value) : "-";
    // A running trial's time is how long it has run so far: a cluster job's from when it started on
    // its node; one still in the cluster's queue has not run (its time since submission is on its
    // job line).
    const std::optional<double> started = job_started[static_cast<std::size_t>(it - s.runs.begin())];
    const bool pending_job = started == 0.0;
    const double since_launch = std::max(0.0, now - r.started_at);
    const double running_since = started && *started > 0.0 ? *started : r.started_at;
    const std::string time = r.exit ? format_duration(r.exit->duration())
                             : r.status == RunStatus::running && running_since > 0.0 && !pending_job
                                 ? format_duration(std::max(0.0, now - running_since))
                                 : "-";
    const std::string level = s.config.resolution && t.level ? level_value(*s.config.resolution, *t.level) : "";
    std::printf("%5llu  %-9s %*s %9s %3zu  %*s%s%s\n", static_cast<unsigned long long>(r.id),
                pending_job ? "pending" : to_string(r.status),
                value_width, value.c_str(), time.c_str(), r.attempts, level_width, level.c_str(),
                s.config.resolution ? "  " : "", tune::to_string(t.config).c_str());
    const int indent = 32 + value_width + (s.config.resolution ? level_width + 2 : 0);
    if (r.status == RunStatus::failed) std::printf("%*s%s\n", indent, "", r.failure_reason.c_str());
    // Which cluster job a running trial is, to match it with squeue (pending or running there).
    if (r.status == RunStatus::running && !r.job.empty())
      std::printf("%*s%s job %s%s\n", indent, "", s.config.executor.kind == "slurm" ? "Slurm" : "executor", r.job.c_str(),
                  pending_job ? (", pending in the queue since its submission " + format_duration(since_launch) + " ago").c_str()
                              : "");
    // How a long training run is going: the last value its stdout reported (`val_acc=0.87 step=12`).
    if (r.status == RunStatus::running && !r.external)
      if (const std::string progress = running_trial_progress(trial_dir(dir, r.id), s.config.objective.name);
          !progress.empty())
        std::printf("%*s%s\n", indent, "", progress.c_str());
  }
  return kExitComplete;
}

int best(const std::filesystem::path& dir, bool json) {
  if (!holds_campaign(dir, "best")) return kExitUsage;
  const CampaignState s = load_state(dir);
  if (s.config.resolution) return best_with_resolution(dir, s, json);
  const Trial* b = s.study.best();
  if (!b) {
    std::fprintf(stderr, "tune best: no best configuration: %s\n", why_no_best(dir, s).c_str());
    return kExitError;
  }
  // gpoo recommends a region: `recommendation` adds it, with the point the model prefers in it. ei
  // and ucb recommend the trial whose configuration their model believes best: on a noisy objective
  // the best single result is an optimistic draw, and the model's mean there is the honest estimate.
  std::optional<StudyRecommendation> rec = s.study.recommendation();
  // bnb takes its best result at face value: say so when its re-run of a configuration disagreed.
  const std::optional<std::string> warning = s.study.warning();
  const TrialRecommendation trial_rec = gp_bandit_recommendation(s, rec);
  if (rec && !rec->region) rec = trial_rec.rec;
  const Trial* recommended = trial_rec.trial;  // the trial a point recommendation is (its config as it ran)
  const bool poor_fit = trial_rec.poor_fit_scale > 0;
  const double poor_fit_scale = trial_rec.poor_fit_scale;
  const std::string& objective = s.config.objective.name;
  // gpoo's region carries no trial and no sd scale; ei's and ucb's point is a trial's, as it ran.
  const auto fields = [&]() -> RecommendationFields {
    if (rec->region) return {*rec, rec->config, std::nullopt, false};
    return {*rec, recommended->config, recommended->id};
  };
  if (json) {
    const std::string recommendation = rec ? ", \"recommendation\": " + recommendation_json(s.config.space, fields()) : "";
    const std::string warning_field = warning ? ", \"warning\": \"" + json_escape(*warning) + "\"" : "";
    std::printf("{\"trial\": %llu, \"%s\": %s, \"config\": %s%s%s}\n", static_cast<unsigned long long>(b->id),
                json_escape(s.config.objective.name).c_str(), format_double(*b->value).c_str(),
                config_json(s.config.space, b->config).c_str(), recommendation.c_str(), warning_field.c_str());
  } else {
    YAML::Node n;
    n["trial"] = b->id;
    n[s.config.objective.name] = yaml_double(*b->value);
    n["config"] = config_to_yaml(s.config.space, b->config);
    n["config"].SetStyle(YAML::EmitterStyle::Block);
    if (rec) n["recommendation"] = recommendation_yaml(s.config.space, fields());
    YAML::Emitter e;
    e << n;
    if (warning) std::printf("# warning: %s\n", warning->c_str());
    if (rec && rec->region) {
      std::printf("# %s\n", region_summary(*rec, objective, s.study.strategy()).c_str());
    } else if (poor_fit) {
      std::printf("# the model fits these results poorly (its errors at the trials, each left out, are %s times its "
                  "sds): no estimate beyond the best result\n",
                  format_short(poor_fit_scale).c_str());
    } else if (rec) {
      const std::string estimate =
          objective + " " + format_short(rec->mean) + " \u00b1 " + format_short(rec->sd) +
          (rec->sd_scale > 1 ? " (its sd times " + format_short(rec->sd_scale) +
                                   ": the model's errors at the trials, each left out, exceed its sds)"
                             : std::string());
      if (recommended == b)
        std::printf("# the model's estimate of trial %llu's configuration: %s (its result: %s)\n",
                    static_cast<unsigned long long>(b->id), estimate.c_str(), format_double(*b->value).c_str());
      else
        std::printf("# the model believes trial %llu's configuration best: %s; trial %llu's %s is the best single "
                    "result, and on a noisy objective the best of many results is optimistic\n",
                    static_cast<unsigned long long>(recommended->id), estimate.c_str(),
                    static_cast<unsigned long long>(b->id), format_double(*b->value).c_str());
    }
    std::printf("%s\n", e.c_str());
  }
  return kExitComplete;
}

namespace {

// Why `tune tell` refuses a trial the tuner proposed (not one handed out by `tune ask`).
std::string tuner_trial_refusal(const std::filesystem::path& dir, const TrialRun& r) {
  const std::string trial = "trial " + std::to_string(r.id);
  const std::string resume = "'tune resume " + dir.string() + "'";
  const std::string what =
      r.status == RunStatus::queued && r.attempts == 0
          ? " was proposed by the tuner ('tune run') and waits to be launched; " + resume + " runs it"
          : " was launched by the tuner ('tune run') and runs, or ran, under its supervisor, which records its exit "
            "and output; " + resume + " collects its result" +
                (r.status == RunStatus::queued ? " (or runs it again: its run was lost)" : "");
  return "tune tell: " + trial + what + ". 'tune tell' reports only trials handed out by 'tune ask'";
}

// Which results `tune ask` waits for, and who delivers them: the caller tells the trials it was
// handed, a tuner's supervisors record the ones it launched ('tune resume' collects them).
std::string awaited_results(const std::filesystem::path& dir, const CampaignState& s) {
  std::vector<std::uint64_t> told, collected;
  for (const TrialRun& r : s.runs)
    if (r.status == RunStatus::running || r.status == RunStatus::queued) (r.external ? told : collected).push_back(r.id);
  const auto list = [](const std::vector<std::uint64_t>& ids) {
    std::string text = ids.size() == 1 ? "trial" : "trials";
    for (std::size_t i = 0; i < ids.size(); ++i) text += (i == 0 ? " " : ", ") + std::to_string(ids[i]);
    return text;
  };
  std::string text;
  if (!told.empty())
    text = (told.size() == 1 ? "the result of " + list(told) + " (handed out by 'tune ask') is awaited: tell it"
                             : "the results of " + list(told) + " (handed out by 'tune ask') are awaited: tell them") +
           " with 'tune tell " + dir.string() + " ID VALUE" +
           // A measured cost is the trial's run time, which only the caller knows (and tell refuses a
           // result without it when a cost budget counts it).
           (s.config.resolution && s.config.resolution->measured() ? " --cost SECONDS'" : "'");
  if (!collected.empty())
    text += (text.empty() ? "" : "; ") + list(collected) + (collected.size() == 1 ? " was" : " were") +
            " launched by the tuner: 'tune resume " + dir.string() + "' collects " +
            (collected.size() == 1 ? "its result" : "their results");
  return text + ", then ask again";
}

// Hands out the next suggestion of the campaign in DIR, whose lock the caller holds (and which it
// has loaded, if it has).
int hand_out(const std::filesystem::path& dir, bool json, std::optional<CampaignState> loaded = std::nullopt) {
  CampaignState s = loaded ? std::move(*loaded) : load_state(dir);
  // budget.trials bounds the trials handed out as it bounds those a tuner launches (the campaign's
  // study has no trial limit of its own): without this check a driver loop never ended.
  if (s.trial_budget_spent()) {
    const std::string why = s.trial_budget_spent_reason();
    const std::size_t pending = s.study.pending_count();
    if (pending == 0 && !s.finished) {  // as a tuner ends a campaign: tune status then says it finished, and why
      s.finished = true;
      s.stop_reason = why;
      save_state(dir, s);
    }
    const std::string awaited = pending == 0 ? std::string()
                                : "; " + std::to_string(pending) + (pending == 1 ? " trial awaits its" : " trials await their") +
                                      " result ('tune status " + dir.string() + "' lists them)";
    // Finished once the last result is in; until then it only has nothing more to hand out.
    std::fprintf(stderr, "tune ask: %s: %s%s\n",
                 pending == 0 ? "the campaign is finished, nothing more to hand out" : "nothing more to hand out",
                 why.c_str(), awaited.c_str());
    return kExitComplete;
  }
  const auto suggestion = s.study.ask();
  if (!suggestion) {
    if (s.study.finished()) {
      // As a tuner ends a campaign: tune status then says it finished, and why.
      s.finished = true;
      s.stop_reason = s.study.stop_reason() + no_full_run_note(s);
    }
    save_state(dir, s);
    if (s.study.finished()) {
      std::fprintf(stderr, "tune ask: the campaign is finished, nothing more to hand out: %s\n", s.stop_reason.c_str());
      return kExitComplete;
    }
    // The study stops short of finishing only while trials are pending: their results (or costs)
    // may let it propose again, so a driver loop must tell them and ask again, not stop.
    std::fprintf(stderr, "tune ask: nothing to hand out now: %s; %s\n", s.study.stop_reason().c_str(),
                 awaited_results(dir, s).c_str());
    return kExitWaiting;
  }
  s.runs.push_back(external_run(suggestion->id, now_seconds()));
  save_state(dir, s);
  ::signal(SIGPIPE, SIG_IGN);  // a reader gone: said below, rather than a silent death by SIGPIPE
  // A multi-resolution campaign also hands out the level to run at.
  const std::optional<Resolution>& res = s.study.resolution();
  const bool leveled = res && suggestion->level;
  EventFields fields{{"trial", json_number(suggestion->id)}};
  if (leveled) fields.emplace_back("level", json_number(std::uint64_t{*suggestion->level}));
  EventLog(dir / campaign_files::kEvents).write("ask", fields);
  if (json) {
    std::string level;
    if (leveled)
      level = ", \"resolution\": {\"parameter\": \"" + json_escape(res->parameter) + "\", \"value\": " +
              level_value(*res, *suggestion->level) + ", \"level\": " + std::to_string(*suggestion->level) + "}";
    std::printf("{\"trial\": %llu, \"config\": %s%s}\n", static_cast<unsigned long long>(suggestion->id),
                config_json(s.config.space, suggestion->config).c_str(), level.c_str());
  } else {
    YAML::Node n;
    n["trial"] = suggestion->id;
    n["config"] = config_to_yaml(s.config.space, suggestion->config);
    n["config"].SetStyle(YAML::EmitterStyle::Block);
    if (leveled) {
      n["resolution"]["parameter"] = res->parameter;
      n["resolution"]["value"] = level_value(*res, *suggestion->level);
      n["resolution"]["level"] = *suggestion->level;
      n["resolution"].SetStyle(YAML::EmitterStyle::Flow);
    }
    YAML::Emitter e;
    e << n;
    std::printf("%s\n", e.c_str());
  }
  // The trial is saved as handed out: a driver that never read it would wait for it forever.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr,
                 "tune ask: trial %llu was handed out, but writing it to stdout failed (%s); report it with 'tune tell "
                 "%s %llu --failed \"lost\"', or find its configuration with 'tune status %s', run it and tell its result\n",
                 static_cast<unsigned long long>(suggestion->id), std::strerror(errno), dir.c_str(),
                 static_cast<unsigned long long>(suggestion->id), dir.c_str());
    return kExitError;
  }
  return kExitComplete;
}

}  // namespace

int ask(const std::filesystem::path& dir, bool json, const BudgetRaise& raise) {
  if (!holds_campaign(dir, "ask")) return kExitUsage;  // before the lock, which would create tune.lock
  const auto lock = lock_campaign(dir, "ask");
  if (!lock) return kExitLocked;
  if (!raise.any()) return hand_out(dir, json);
  CampaignState s = load_state(dir);
  if (const std::optional<int> refused = raise_budgets(dir, s, raise, "ask")) return *refused;
  return hand_out(dir, json, std::move(s));
}

int ask_campaign_file(const std::filesystem::path& file, std::optional<std::filesystem::path> dir, bool json) {
  CampaignConfig config = load_campaign_file(file);  // a campaign without a command is fine here
  anchor_relative_paths(config, file.parent_path());
  const std::filesystem::path d = dir ? *dir : std::filesystem::path(config.name);
  // One lock from before the campaign is created (or compared with the file) to the suggestion, so
  // that no other command can slip in between. It lives in DIR, which may not exist yet.
  std::filesystem::create_directories(d / campaign_files::kTrials);
  const std::optional<CampaignLock> lock = lock_campaign(d, "ask");
  if (!lock) return kExitLocked;
  Prepared prepared = prepare(config, d, file.string(), "ask", lock);
  if (prepared.refused) return *prepared.refused;
  if (prepared.created) note_strategy_and_resolution(config, "ask");
  return hand_out(d, json, std::move(prepared.existing));
}

std::optional<double> parse_number(const std::string& text, std::string& problem) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    problem = "is not a number";
    return std::nullopt;
  }
  if (errno == ERANGE && std::isinf(v)) {
    problem = "is too large for a double (the largest is about 1.8e308)";
    return std::nullopt;
  }
  return v;
}

int tell(const std::filesystem::path& dir, std::uint64_t id, const std::optional<std::string>& value,
         const std::optional<std::string>& failure, std::optional<double> cost) {
  if (!holds_campaign(dir, "tell")) return kExitUsage;
  const auto lock = lock_campaign(dir, "tell");
  if (!lock) return kExitLocked;
  CampaignState s = load_state(dir);
  if (id >= s.runs.size()) {
    std::fprintf(stderr, "tune tell: the campaign has no trial %llu (it has %zu)\n", static_cast<unsigned long long>(id),
                 s.runs.size());
    return kExitUsage;
  }
  if (s.runs[id].status == RunStatus::complete || s.runs[id].status == RunStatus::failed) {
    // Say what was recorded: a driver that retries a tell it is unsure of learns that the first one counted.
    const Trial& t = s.study.trial(id);
    const std::string recorded = t.status == TrialStatus::complete
                                     ? "complete, with " + s.config.objective.name + " = " + format_double(*t.value)
                                     : "failed: " + t.failure_reason;
    std::fprintf(stderr, "tune tell: trial %llu already has its result (%s); a trial is told once\n",
                 static_cast<unsigned long long>(id), recorded.c_str());
    return kExitUsage;
  }
  if (!s.runs[id].external) {
    // Its supervisor records the real exit and output, which resume collects: a value told here
    // would be replaced by nothing and the run record would lose its exit.
    std::fprintf(stderr, "%s\n", tuner_trial_refusal(dir, s.runs[id]).c_str());
    return kExitUsage;
  }
  if (cost) {
    // Only measured costs are told: with declared costs the level's cost counts, in the declared units.
    if (!s.config.resolution || !s.config.resolution->measured()) {
      std::fprintf(stderr, "tune tell: --cost is for campaigns whose resolution has 'cost: measured'; %s\n",
                   s.config.resolution ? "this one declares its costs per level" : "this one has no resolution");
      return kExitUsage;
    }
    if (!std::isfinite(*cost) || *cost < 0) {
      std::fprintf(stderr, "tune tell: --cost must be a finite number of seconds >= 0\n");
      return kExitUsage;
    }
  } else if (s.config.resolution && s.config.resolution->measured() && s.config.budget.cost && !failure) {
    // Without it the trial would be charged a guess, and the levels' costs would never be learnt. A
    // failure may leave it out, as Study::fail may: a lost run's time is unknown (tune ask's own
    // advice for a trial it could not hand out is --failed "lost"), and it is charged its level's
    // mean measured cost.
    std::fprintf(stderr,
                 "tune tell: this campaign measures its costs (resolution.cost: measured) against budget.cost: give the "
                 "trial's run time in seconds with --cost SECONDS (a --failed report may leave it out if unknown)\n");
    return kExitUsage;
  }
  TrialRun& r = s.runs[id];
  r.finished_at = now_seconds();
  if (failure) {
    s.study.fail(id, *failure, cost);
    r.status = RunStatus::failed;
    r.failure_reason = *failure;
  } else {
    std::string problem;
    const std::optional<double> number = parse_number(*value, problem);
    if (!number) {
      std::fprintf(stderr, "tune tell: '%s' %s\n", value->c_str(), problem.c_str());
      return kExitUsage;
    }
    const double v = *number;
    if (!std::isfinite(v)) {
      std::fprintf(stderr, "tune tell: the value must be finite; report a failure with --failed REASON\n");
      return kExitUsage;
    }
    if (std::abs(v) > kMaxObjectiveMagnitude) {
      std::fprintf(stderr,
                   "tune tell: the value %s is beyond +-%s, which the models cannot compute with; report a diverged run "
                   "with --failed REASON, or rescale the objective (e.g. tell its logarithm)\n",
                   format_double(v).c_str(), format_double(kMaxObjectiveMagnitude).c_str());
      return kExitUsage;
    }
    s.study.tell(id, v, cost);
    r.status = RunStatus::complete;
  }
  save_state(dir, s);
  // After the state, as a tuner writes its events; one lost to a crash in between is recovered by
  // the next session or tell.
  EventLog events(dir / campaign_files::kEvents);
  events.write_outcome(s, id);
  events.recover_outcomes(s);
  return kExitComplete;
}

int stop(const std::filesystem::path& dir) {
  if (!holds_campaign(dir, "stop")) return kExitUsage;
  // The holder of tuner.lock where /proc/locks says, not only tuner.pid, which names a dead tuner for
  // a moment after a kill -9 while a new one starts.
  std::istringstream in(CampaignLock::tuner_pid(dir));
  long pid = 0;
  if (!(in >> pid) || pid <= 0) {
    std::fprintf(stderr, "tune stop: no tuner is running for %s (no tuner.pid)\n", dir.c_str());
    return kExitError;
  }
  if (const LockHolder h = CampaignLock::probe(dir); h == LockHolder::none || h == LockHolder::command) {
    std::fprintf(stderr, "tune stop: no tuner is running for %s (stale tuner.pid)\n", dir.c_str());
    return kExitError;
  }
  if (!request_stop(static_cast<pid_t>(pid))) {
    std::perror("tune stop: sigqueue");
    return kExitError;
  }
  std::printf("asked the tuner (pid %ld) to stop; it checkpoints and exits\n", pid);
  return kExitComplete;
}

}  // namespace tune::tuner
