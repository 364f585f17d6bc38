// SlurmExecutor: one batch job per trial, submitted with sbatch, followed with squeue, stopped with
// scancel (see slurm_executor.hpp). Slurm's client programs are run from argument vectors
// (run_program), never through a shell; the batch script quotes every word it passes on.
#include "tune/adapters/executor/slurm_executor.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "tune/adapters/executor/local_executor.hpp"  // trial_is_supervised
#include "tune/adapters/executor/run_program.hpp"
#include "tune/adapters/executor/supervisor.hpp"
#include "tune/adapters/executor/trial_file_text.hpp"
#include "tune/io/atomic_file.hpp"

namespace tune::adapters {

namespace {


// How far the controller's clock, which stamps a job's submission, may be behind this machine's.
constexpr double kClockSkew = 5.0;

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string trim(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// The time of job `name`'s unanswered submission recorded in `dir` (kUnansweredSubmissionFile), if
// that is the job the record names (a record of another attempt says nothing about this one).
std::optional<double> unanswered_submission(const std::filesystem::path& dir, const std::string& name) {
  std::ifstream in(dir / kUnansweredSubmissionFile);
  std::string recorded;
  double at = 0.0;
  if (in >> recorded >> at && recorded == name) return at;
  return std::nullopt;
}

// Whether this executor, in this session or an earlier one, asked Slurm to cancel `job` of the trial
// in `dir` (kCancelRequestedFile).
bool cancel_requested_earlier(const std::filesystem::path& dir, const std::string& job) {
  std::ifstream in(dir / kCancelRequestedFile);
  std::string recorded;
  return !job.empty() && in >> recorded && recorded == job;
}

bool is_on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((std::filesystem::path(dir) / program).c_str(), X_OK) == 0) return true;
  return false;
}

bool same_path(const std::filesystem::path& a, const std::filesystem::path& b) {
  if (a.lexically_normal() == b.lexically_normal()) return true;
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) && !ec;
}

// Job names are shown by squeue and matched on resume: keep them to safe characters.
std::string safe_name(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out.empty() ? "tune" : out;
}

// The exit record, or an `aborted` record saying why it cannot be read.
std::optional<TrialExit> read_record(const std::filesystem::path& dir) {
  try {
    return read_trial_exit(dir);
  } catch (const std::exception& e) {
    return TrialExit{.kind = ExitKind::aborted, .finished_at = wall_seconds(), .message = e.what()};
  }
}

double started_at_of(const std::filesystem::path& dir) {
  try {
    if (const auto record = read_supervisor_record(dir)) return record->started_at;
  } catch (const std::exception&) {
  }
  return 0.0;
}

TrialExit ended(ExitKind kind, const std::filesystem::path& dir, std::string message) {
  const double now = wall_seconds();
  const double started = started_at_of(dir);
  return {.kind = kind, .started_at = started > 0 ? started : now, .finished_at = now, .message = std::move(message)};
}

// How Slurm ended `job`, from the line its step daemon writes to the job's output when it kills the
// job ("slurmstepd: error: *** JOB 232 ON node CANCELLED AT 2026-11-25T01:05:36 DUE TO TIME LIMIT ***"):
// for a job Slurm no longer knows (it forgets finished jobs after MinJobAge), whose supervisor's
// record says only that it was signalled. nullopt if the output holds no such line.
std::optional<TrialExit> ending_in_job_output(const std::string& job, bool cancelled_by_us,
                                              const std::filesystem::path& trial_dir) {
  const std::string text = read_file(trial_dir / kJobOutputFile, 0, kTailBytes);
  const std::size_t at = text.rfind("*** JOB " + job + " ON ");
  if (at == std::string::npos) return std::nullopt;
  const std::string line = trim(text.substr(at, text.find('\n', at) - at));
  if (line.find(" CANCELLED AT ") == std::string::npos) return std::nullopt;
  const std::string which = "Slurm job " + job;
  if (line.find("DUE TO TIME LIMIT") != std::string::npos)
    return ended(ExitKind::timeout, trial_dir, which + " reached its time limit (" + kJobOutputFile + ": " + line +
                                                   "); raise executor.time");
  if (line.find("DUE TO PREEMPTION") != std::string::npos || line.find("DUE TO NODE FAIL") != std::string::npos)
    return ended(ExitKind::lost, trial_dir, which + " was ended by Slurm (" + kJobOutputFile + ": " + line + ")");
  if (line.find(" DUE TO ") != std::string::npos)
    return ended(ExitKind::aborted, trial_dir, which + " was ended by Slurm (" + kJobOutputFile + ": " + line + ")");
  if (cancelled_by_us) return ended(ExitKind::cancelled, trial_dir, "cancelled by the tuner (scancel " + job + ")");
  return ended(ExitKind::aborted, trial_dir, which + " was cancelled outside the tuner (scancel; " + kJobOutputFile +
                                                 ": " + line + ")");
}

// What to change for a job pending for a reason that does not pass (without EnforcePartLimits,
// sbatch accepts a job over its partition's limits, and it waits in the queue for ever); "" for a
// reason that passes (Priority, Resources, a group limit).
std::string never_starts_fix(const std::string& full_reason) {
  // squeue may add detail after a comma ("PartitionConfig, ..."): the reason is its first word.
  const std::string reason = full_reason.substr(0, full_reason.find(','));
  if (reason == "PartitionTimeLimit" || reason == "AssocMaxWallDurationPerJobLimit" ||
      reason == "QOSMaxWallDurationPerJobLimit")
    return "its time limit is above what the partition or your association allows: lower executor.time (or the "
           "trial timeout it is derived from), or choose another executor.partition";
  // (Not ReqNodeNotAvail: nodes down, drained or reserved for maintenance usually come back.)
  if (reason == "PartitionConfig" || reason == "PartitionNodeLimit" || reason == "BadConstraints" ||
      reason == "AssocMaxCpuPerJobLimit" || reason == "QOSMaxCpuPerJobLimit" ||
      reason == "AssocMaxNodePerJobLimit" || reason == "QOSMaxNodePerJobLimit" || reason == "QOSMaxMemoryPerJob")
    return "it asks for what the partition cannot give (cpus, memory, gres, nodes or constraints): check "
           "executor.cpus, memory, gres, partition and extra";
  if (reason == "PartitionDown" || reason == "PartitionInactive")
    return "its partition is down or inactive: choose another executor.partition, or wait for the cluster's admins";
  return "";
}

const std::set<std::string>& active_states() {
  static const std::set<std::string> states{
      "PENDING",   "RUNNING",  "SUSPENDED",     "COMPLETING",    "CONFIGURING", "REQUEUED",
      "REQUEUE_FED", "REQUEUE_HOLD", "RESIZING", "SIGNALING", "STAGE_OUT", "STOPPED",
      "RESV_DEL_HOLD", "POWER_UP_NODE", "SPECIAL_EXIT", "UPDATE_DB"};
  return states;
}

// sbatch's and squeue's words for a controller that did not answer (down, restarting, overloaded):
// the job was not refused, so the fix is to wait for the controller, not to change the campaign.
bool controller_unreachable(const std::string& err) {
  for (const char* words : {"Unable to contact slurm controller", "Socket timed out", "temporarily unable",
                            "Zero Bytes were transmitted", "Connection refused", "Connection timed out"})
    if (err.find(words) != std::string::npos) return true;
  return false;
}

// A time as squeue prints it (%V: 2026-11-24T15:49:04, the local time), in seconds since the epoch;
// 0 if it is not one (N/A, Unknown).
double slurm_time_seconds(const std::string& text) {
  std::tm tm{};
  const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || *end != '\0') return 0.0;
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  return t == static_cast<std::time_t>(-1) ? 0.0 : static_cast<double>(t);
}

// Whether `job` was submitted for another directory than `trial_dir`, where its trial is now, and
// has not run there: it waits in the queue, or ended (it found its directory gone). A running job
// started before the move and runs on in the moved directory.
bool moved_before_it_ran(const SlurmJobView& job, const std::filesystem::path& trial_dir) {
  if (job.work_dir.empty() || same_path(job.work_dir, trial_dir)) return false;
  const std::string state = job.state.substr(0, job.state.find(' '));
  return state == "PENDING" || !active_states().contains(state);
}

// An executor.extra entry without its optional "#SBATCH" prefix.
std::string extra_entry(const std::string& entry) {
  std::string d = trim(entry);
  if (d.rfind("#SBATCH", 0) == 0) d = trim(d.substr(7));
  return d;
}

// Where the value of an `--option=value` entry (as extra_entry gives it) begins; npos for any other
// entry (`--exclusive`, `--nodes 2`), which is passed as written.
std::size_t option_value_at(const std::string& d) {
  const std::size_t eq = d.find('=');
  return d.rfind("--", 0) == 0 && eq != std::string::npos ? eq + 1 : std::string::npos;
}

// An --option=value entry whose value holds both kinds of quote: no #SBATCH line can carry it
// (sbatch splits the line at blanks outside quotes and drops the quotes, with no escape), so it goes
// on sbatch's command line, as one argument, exactly as written.
bool needs_command_line(const std::string& entry) {
  const std::string d = extra_entry(entry);
  const std::size_t at = option_value_at(d);
  return at != std::string::npos && d.find('"', at) != std::string::npos && d.find('\'', at) != std::string::npos;
}

// An executor.extra entry as a #SBATCH line's text (not one needs_command_line takes). sbatch splits
// the line at blanks outside quotes (' or ") and drops the quotes, so an --option=value whose value
// holds blanks or a quote is quoted for it (`--comment=lr sweep 3` would be refused, "Invalid
// directive ... sweep"); a value quoted whole already (`--comment="lr sweep 3"`) is the user's
// quoting, kept as written.
std::string sbatch_directive(const std::string& entry) {
  const std::string d = extra_entry(entry);
  const std::size_t at = option_value_at(d);
  if (at == std::string::npos) return d;
  const std::string value = d.substr(at);
  const bool quoted_whole = value.size() >= 2 && (value[0] == '"' || value[0] == '\'') && value.back() == value[0];
  if (quoted_whole || value.find_first_of(" \t'\"") == std::string::npos) return d;
  if (value.find('"') == std::string::npos) return d.substr(0, at) + '"' + value + '"';
  return d.substr(0, at) + '\'' + value + '\'';  // (holds no ': both kinds go on the command line)
}

}  // namespace

std::string shell_quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string slurm_batch_script(const SlurmOptions& options, const TrialLaunch& trial,
                               const std::vector<std::string>& sbatch_argv) {
  const std::filesystem::path dir = std::filesystem::absolute(trial.dir).lexically_normal();
  // bash, as batch scripts are: executor.setup is written for it (`source ~/venv/bin/activate`,
  // `module load`), and under dash, Debian's /bin/sh, `source` was "not found" and the trial ran
  // outside its environment without a word.
  std::string s = "#!/bin/bash\n";
  s += "# Written by tune for trial " + trial.id + " (attempt " + std::to_string(trial.attempt) + "), submitted with:\n#  ";
  for (const std::string& a : sbatch_argv) s += " " + shell_quote(a);
  s += " " + shell_quote((dir / kScriptFile).string()) + "\n";
  for (const std::string& directive : options.extra_directives)
    if (!needs_command_line(directive)) s += "#SBATCH " + sbatch_directive(directive) + "\n";
  s += "# The trial directory must be visible on this node (a file system shared with the login node).\n";
  s += "cd " + shell_quote(dir.string()) + " || { echo \"tune: the trial directory \"" + shell_quote(dir.string()) +
       "\" is not visible on $(hostname): the campaign directory must be on a file system shared with the "
       "compute nodes\" >&2; exit 97; }\n";
  if (!trim(options.setup).empty()) {
    s += "# executor.setup\n" + options.setup;
    if (options.setup.back() != '\n') s += "\n";
  }
  s += "exec";
  std::vector<std::string> words = options.supervisor_command;
  words.push_back(dir.string());
  words.push_back(std::to_string(trial.timeout.count()));
  words.push_back(std::to_string(trial.grace.count()));
  words.emplace_back("--");
  words.insert(words.end(), trial.argv.begin(), trial.argv.end());
  for (const std::string& w : words) s += " " + shell_quote(w);
  return s + "\n";
}

std::optional<TrialExit> slurm_outcome(const SlurmJobView& job, const std::optional<TrialExit>& record,
                                       bool cancelled_by_us, const std::filesystem::path& trial_dir) {
  // "CANCELLED by 0" (sacct) and "CANCELLED" (squeue) are the same state.
  const std::string state = job.state.substr(0, job.state.find(' '));
  if (active_states().contains(state)) return std::nullopt;
  // When Slurm ended the job (scancel, a time limit, preemption), it signalled every process of the
  // job, the command included, so a record of a command killed by a signal or exiting non-zero says
  // nothing of its own: Slurm's state decides. Only a successful command, or a job that ended by
  // itself (COMPLETED, FAILED), is judged by the supervisor's record.
  const bool slurm_ended = state != "COMPLETED" && state != "FAILED";
  if (record && (record->succeeded() || (!slurm_ended && record->kind != ExitKind::cancelled))) return record;
  const std::string which = "Slurm job " + job.job;
  const std::string why = job.reason.empty() || job.reason == "None" ? "" : " (" + job.reason + ")";
  if (cancelled_by_us) return ended(ExitKind::cancelled, trial_dir, "cancelled by the tuner (scancel " + job.job + ")");
  if (state == "COMPLETED" || state == "FAILED") {
    if (record)  // the supervisor received SIGTERM, but not from the tuner nor from Slurm's limits
      return ended(ExitKind::aborted, trial_dir, which + " was terminated outside the tuner: " + record->message);
    // The supervisor started the trial and died before recording its end (kill -9, the OOM killer):
    // the trial's run is lost, not one that never started.
    if (started_at_of(trial_dir) > 0)
      return ended(ExitKind::lost, trial_dir,
                   which + " ended " + state + why + " after the trial started, its supervisor killed before it "
                   "recorded the trial's end (kill -9, the OOM killer; see " + kJobOutputFile + ")");
    const std::filesystem::path out = trial_dir / kJobOutputFile;
    std::error_code ec;
    if (!std::filesystem::exists(out, ec))
      return ended(ExitKind::launch_failed, trial_dir,
                   which + " ended " + state + " without writing to " + trial_dir.string() +
                       " (its output file " + kJobOutputFile + " is missing): the campaign directory must be on a "
                       "file system shared with the compute nodes");
    const std::string last = last_line_of_file(out);
    return ended(ExitKind::launch_failed, trial_dir,
                 which + " ended " + state + why + " before the trial started" +
                     (last.empty() ? std::string("; ") + kJobOutputFile + " is empty"
                                   : "; last line of " + std::string(kJobOutputFile) + ": " + last));
  }
  if (state == "TIMEOUT")
    return ended(ExitKind::timeout, trial_dir,
                 which + " reached its time limit" + (job.time_limit.empty() ? "" : " of " + job.time_limit) +
                     " (TIMEOUT); raise executor.time");
  if (state == "CANCELLED")  // a reason is a pending job's (Priority, Resources), not the cancel's
    return ended(ExitKind::aborted, trial_dir,
                 which + " was cancelled outside the tuner (scancel)" + (why.empty() ? "" : " while pending" + why));
  if (state == "NODE_FAIL" || state == "PREEMPTED" || state == "BOOT_FAIL")
    return ended(ExitKind::lost, trial_dir, which + " ended " + state + why);
  if (state == "OUT_OF_MEMORY")
    return ended(ExitKind::aborted, trial_dir, which + " ran out of memory (OUT_OF_MEMORY); request more with executor.memory");
  return ended(ExitKind::aborted, trial_dir, which + " ended " + state + why);
}

SlurmExecutor::SlurmExecutor(SlurmOptions options) : options_(std::move(options)) {
  if (options_.supervisor_command.empty()) throw std::invalid_argument("SlurmExecutor: empty supervisor command");
  options_.job_name = safe_name(options_.job_name);
  for (const std::string* program : {&options_.sbatch, &options_.squeue, &options_.scancel})
    if (!is_on_path(*program))
      throw std::runtime_error("executor 'slurm': '" + *program +
                               "' is not on the PATH; run the tuner where the Slurm client commands are installed "
                               "(a login node), or load the module that provides them");
}

SlurmExecutor::~SlurmExecutor() = default;

std::string SlurmExecutor::name_of(const std::string& id, std::size_t attempt) const {
  return options_.job_name + "." + id + "." + std::to_string(attempt);
}

std::vector<std::string> SlurmExecutor::sbatch_arguments(const TrialLaunch& trial) const {
  const std::filesystem::path dir = std::filesystem::absolute(trial.dir).lexically_normal();
  std::vector<std::string> a{options_.sbatch, "--parsable", "--job-name=" + name_of(trial.id, trial.attempt),
                             "--chdir=" + dir.string(), "--output=" + (dir / kJobOutputFile).string(), "--no-requeue"};
  if (options_.partition) a.push_back("--partition=" + *options_.partition);
  if (options_.time_limit) a.push_back("--time=" + std::to_string(options_.time_limit->count()));
  if (options_.cpus) a.push_back("--cpus-per-task=" + std::to_string(*options_.cpus));
  if (options_.memory) a.push_back("--mem=" + *options_.memory);
  if (options_.gres) a.push_back("--gres=" + *options_.gres);
  if (options_.account) a.push_back("--account=" + *options_.account);
  if (options_.qos) a.push_back("--qos=" + *options_.qos);
  for (const std::string& entry : options_.extra_directives)
    if (needs_command_line(entry)) a.push_back(extra_entry(entry));
  return a;
}

std::string SlurmExecutor::launch(const TrialLaunch& trial) {
  if (trial.argv.empty()) throw std::runtime_error("trial " + trial.id + ": the command is empty");
  if (jobs_.contains(trial.id)) throw std::runtime_error("trial " + trial.id + " is already running");
  const std::filesystem::path dir = std::filesystem::absolute(trial.dir).lexically_normal();
  const std::string name = name_of(trial.id, trial.attempt);
  auto unanswered = unanswered_.find(name);
  // One not answered in an earlier session (the tuner died while the controller was down): its
  // record in the trial directory, else the next session submitted a second job if it had been
  // accepted.
  if (unanswered == unanswered_.end())
    if (const std::optional<double> at = unanswered_submission(dir, name)) unanswered = unanswered_.emplace(name, *at).first;
  if (unanswered != unanswered_.end()) {
    // An sbatch the controller did not answer may still have been accepted (a reply lost to a
    // timeout): a job of this name and directory submitted since is that submission, followed rather
    // than doubled (an older one is another campaign's that had this directory). Looked up before
    // the trial directory is touched, since that job may already be writing there.
    const std::optional<std::string> submitted =
        find_job(RunRecord{.id = trial.id, .dir = dir, .attempt = trial.attempt}, unanswered->second - kClockSkew);
    if (!submitted)
      throw LaunchDeferred("trial " + trial.id + ": the Slurm controller still does not answer (squeue failed); "
                           "the trial waits and is submitted when it answers");
    if (!submitted->empty()) {
      unanswered_.erase(name);
      std::filesystem::remove(dir / kUnansweredSubmissionFile);
      jobs_[trial.id] = Job{.dir = dir, .job = *submitted};
      return *submitted;
    }
  }
  if (dir.string().find('%') != std::string::npos)
    throw std::runtime_error("trial " + trial.id + ": the trial directory '" + dir.string() +
                             "' contains '%', which sbatch expands in file names (%j, %u, ...); "
                             "use a campaign directory without '%' in its path");
  std::filesystem::create_directories(dir);
  for (const char* stale : {kExitFile, kSupervisorFile, kJobOutputFile, kUnansweredSubmissionFile, kCancelRequestedFile})
    std::filesystem::remove(dir / stale);
  write_command_record(dir, trial);
  std::vector<std::string> argv = sbatch_arguments(trial);
  remove_leftover_temporaries(dir / kScriptFile);  // as the command record's
  write_file_atomically(dir / kScriptFile, slurm_batch_script(options_, trial, argv));
  argv.push_back((dir / kScriptFile).string());

  ProgramOutput out;
  const double submitted_at = wall_seconds();
  try {
    out = run_program(argv);
  } catch (const std::exception& e) {
    throw std::runtime_error("trial " + trial.id + ": cannot submit the job: " + e.what());
  }
  const std::string err = trim(out.err);
  if (out.status != 0 && controller_unreachable(err)) {
    // The first unanswered submission's time is kept, here and in the trial directory for a later
    // session (to the millisecond: format_double's 6 digits would round an epoch time by minutes).
    const double since = unanswered_.emplace(name, submitted_at).first->second;
    char at[64];
    std::snprintf(at, sizeof at, "%.3f", since);
    write_file_atomically(dir / kUnansweredSubmissionFile, name + " " + at + "\n");
    throw LaunchDeferred("trial " + trial.id + ": the Slurm controller did not answer sbatch (" + err +
                         "); the trial waits and is submitted again when it answers (check the controller with "
                         "'sinfo'; jobs already submitted are followed meanwhile)");
  }
  unanswered_.erase(name);
  // sbatch with no Slurm configuration to read (slurm.conf, SLURM_CONF, a configless setup) refuses
  // every job the same way: the job's options were blamed for it.
  if (out.status != 0 && err.find("Could not establish a configuration source") != std::string::npos)
    throw std::runtime_error("trial " + trial.id + ": sbatch finds no Slurm configuration on this machine (" + err +
                             "): run tune on a node of the cluster (a login node), or set SLURM_CONF to its "
                             "slurm.conf; 'sinfo' tells whether this machine can reach the cluster");
  // A limit on the jobs a user may have queued refuses the job after the first few were accepted:
  // the fix is fewer workers, which the list of options to check below did not name.
  // (Only Slurm's reason names it: "job submit limit" is in its generic policy message, which time
  // and size limits print too.)
  if (out.status != 0 && err.find("MaxSubmitJob") != std::string::npos) {
    // With jobs of the campaign in flight, the trial waits for one to end, as for a controller that
    // does not answer (the session ended, leaving them to a resume that hit the limit again).
    if (!jobs_.empty())
      throw LaunchDeferred("trial " + trial.id + ": the cluster's limit on the jobs you may have queued is reached (" +
                           err + "); the trial is submitted when one of the " + std::to_string(jobs_.size()) +
                           " in flight ends (executor.workers: " + std::to_string(jobs_.size()) + " avoids the wait)");
    throw std::runtime_error("trial " + trial.id + ": the cluster refused the job: " + err +
                             " (a limit on the jobs you may have in the queue at once, reached by jobs of your own "
                             "outside this campaign: wait for them, or set executor.workers below the limit)");
  }
  if (out.status != 0)
    throw std::runtime_error("trial " + trial.id + ": the cluster refused the job: " +
                             (err.empty() ? "sbatch exited with status " + std::to_string(out.status) : err) +
                             " (check executor.partition, time, cpus, memory, gres, account, qos and extra; the "
                             "script is " + (dir / kScriptFile).string() + ")");
  // --parsable prints "JOBID" or "JOBID;CLUSTER".
  std::string job = trim(out.out);
  job = job.substr(0, job.find(';'));
  if (job.empty() || !std::all_of(job.begin(), job.end(), [](unsigned char c) { return std::isdigit(c); }))
    throw std::runtime_error("trial " + trial.id + ": sbatch printed no job id: '" + trim(out.out) + "' " + err);
  jobs_[trial.id] = Job{.dir = dir, .job = job};
  return job;
}

std::optional<std::string> SlurmExecutor::find_job(const RunRecord& run, std::optional<double> submitted_since) {
  const ProgramOutput out = [&] {
    try {
      return run_program({options_.squeue, "--noheader", "--states=all", "--name=" + name_of(run.id, run.attempt),
                          "--format=%i|%V|%Z"});
    } catch (const std::exception& e) {
      return ProgramOutput{.status = 127, .err = e.what()};
    }
  }();
  if (out.status != 0) {
    warn("cannot look up the Slurm job of trial " + run.id + ": " + trim(out.err));
    return std::nullopt;
  }
  std::string best;
  std::istringstream lines(out.out);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t bar = line.find('|');
    const std::size_t second = bar == std::string::npos ? bar : line.find('|', bar + 1);
    if (second == std::string::npos) continue;
    const std::string job = trim(line.substr(0, bar));
    if (!same_path(trim(line.substr(second + 1)), run.dir)) continue;
    if (submitted_since && slurm_time_seconds(trim(line.substr(bar + 1, second - bar - 1))) < *submitted_since) continue;
    if (best.empty() || job.size() > best.size() || (job.size() == best.size() && job > best)) best = job;
  }
  return best;
}

bool SlurmExecutor::attach(const RunRecord& run) {
  const std::filesystem::path dir = std::filesystem::absolute(run.dir).lexically_normal();
  if (const auto it = jobs_.find(run.id); it != jobs_.end()) return it->second.dir == dir;
  // A job id never recorded (the tuner died between sbatch and its checkpoint) is looked up by the
  // job's name and directory; a run already collected has nothing to look up, unless a supervisor
  // still holds its directory (Slurm declared the node failed, and the node runs it on): that run is
  // followed through the directory, rather than a second job submitted whose supervisor backs off.
  if (run.requeued && run.job.empty()) {
    std::error_code ec;
    if (!trial_is_supervised(dir) || std::filesystem::exists(dir / kExitFile, ec)) return false;
    jobs_[run.id] = Job{.dir = dir, .state = "UNKNOWN"};
    return true;
  }
  std::string job = run.job;
  if (job.empty()) job = find_job(RunRecord{.id = run.id, .dir = dir, .attempt = run.attempt}).value_or("");
  std::error_code ec;
  if (job.empty() && !std::filesystem::exists(dir / kExitFile, ec) && !trial_is_supervised(dir)) return false;
  jobs_[run.id] = Job{.dir = dir, .job = job, .state = "UNKNOWN", .cancel_requested = cancel_requested_earlier(dir, job)};
  query_soon_ = true;
  return true;
}

std::optional<std::map<std::string, SlurmJobView>> SlurmExecutor::query(const std::vector<std::string>& jobs) {
  std::string list;
  for (const std::string& j : jobs) list += (list.empty() ? "" : ",") + j;
  ProgramOutput out;
  try {
    out = run_program({options_.squeue, "--noheader", "--states=all", "--jobs=" + list, "--format=%i|%T|%r|%l|%Z"});
  } catch (const std::exception& e) {
    warn(std::string("squeue failed: ") + e.what());
    return std::nullopt;
  }
  std::map<std::string, SlurmJobView> views;
  if (out.status != 0) {
    // squeue refuses a single job id it does not know ("Invalid job id specified").
    if (out.err.find("Invalid job id") != std::string::npos) return views;
    warn("squeue failed (status " + std::to_string(out.status) + "): " + trim(out.err) + "; trying again later");
    return std::nullopt;
  }
  std::istringstream lines(out.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    std::string field;
    while (f.size() < 4 && std::getline(fields, field, '|')) f.push_back(trim(field));
    if (f.size() < 4) continue;
    std::string work_dir;  // the rest of the line: a directory may hold a '|'
    std::getline(fields, work_dir);
    views[f[0]] = SlurmJobView{.job = f[0], .state = f[1], .reason = f[2], .time_limit = f[3], .work_dir = trim(work_dir)};
  }
  return views;
}

std::vector<FinishedTrial> SlurmExecutor::poll() {
  std::vector<FinishedTrial> finished;
  const auto now = Clock::now();
  auto finish = [&](std::map<std::string, Job>::iterator it, TrialExit exit) {
    finished.push_back({.id = it->first, .exit = std::move(exit)});
    return jobs_.erase(it);
  };
  std::error_code ec;

  // The trial directories, a few times a second: a command that ended by itself is collected without
  // waiting for Slurm.
  if (now - last_file_check_ >= std::chrono::milliseconds(250)) {
    last_file_check_ = now;
    for (auto it = jobs_.begin(); it != jobs_.end();) {
      Job& j = it->second;
      if (std::filesystem::exists(j.dir / kExitFile, ec)) {
        std::optional<TrialExit> record = read_record(j.dir);
        if (record && (record->succeeded() || j.job.empty())) {
          it = finish(it, *record);
          continue;
        }
        query_soon_ = true;  // failed or terminated: Slurm says whether it ended the job (and why)
      } else if (j.job.empty() && !trial_is_supervised(j.dir)) {
        it = finish(it, ended(j.cancel_requested ? ExitKind::cancelled : ExitKind::lost, j.dir,
                              "the trial's supervisor is gone and left no exit record (and no Slurm job id was recorded)"));
        continue;
      }
      ++it;
    }
  }

  std::vector<std::string> ids;
  for (const auto& [id, j] : jobs_)
    if (!j.job.empty()) ids.push_back(j.job);
  const auto since = now - last_query_;
  if (ids.empty() || !(since >= options_.poll_interval || (query_soon_ && since >= std::chrono::milliseconds(500))))
    return finished;
  last_query_ = now;
  query_soon_ = false;
  const auto views = query(ids);
  if (!views) return finished;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& j = it->second;
    if (j.job.empty()) {
      ++it;
      continue;
    }
    const std::optional<TrialExit> record =
        std::filesystem::exists(j.dir / kExitFile, ec) ? read_record(j.dir) : std::nullopt;
    const auto v = views->find(j.job);
    if (v != views->end() && !record && moved_before_it_ran(v->second, j.dir)) {
      // The campaign directory moved (the tuner stopped or killed) while this job waited in the
      // queue: it starts, or started, in a directory that is gone, and never ran the trial. Cancelled
      // if it still waits, and the trial submitted again from where its directory is now.
      if (v->second.state == "PENDING") scancel({j.job});
      it = finish(it, ended(ExitKind::cancelled, j.dir,
                            "Slurm job " + j.job + " was submitted for " + v->second.work_dir +
                                ", which has moved to " + j.dir.string() + "; the trial is submitted again from there"));
      continue;
    }
    if (v != views->end()) {
      j.state = v->second.state;
      // Said once per reason: the tuner waits on such a job with no other word of why.
      if (j.state == "PENDING" && v->second.reason != j.reported_reason) {
        if (const std::string fix = never_starts_fix(v->second.reason); !fix.empty()) {
          warn("trial " + it->first + ": Slurm job " + j.job + " is pending (" + v->second.reason +
               ") and will not start as it is: " + fix + "; 'tune stop', then resume once the file is fixed");
          j.reported_reason = v->second.reason;
        }
      }
      if (std::optional<TrialExit> exit = slurm_outcome(v->second, record, j.cancel_requested, j.dir)) {
        it = finish(it, std::move(*exit));
        continue;
      }
      ++it;
      continue;
    }
    // Slurm no longer knows the job (it forgets finished jobs after MinJobAge): the trial directory
    // decides, Slurm's own line in the job's output first where it killed the job (a record then
    // says only "signalled": a time limit was run again, or failed as "killed by signal 15").
    if (record && !record->succeeded())
      if (std::optional<TrialExit> exit = ending_in_job_output(j.job, j.cancel_requested, j.dir)) {
        it = finish(it, std::move(*exit));
        continue;
      }
    if (record && (record->kind != ExitKind::cancelled || j.cancel_requested)) {
      it = finish(it, *record);
    } else if (record) {
      it = finish(it, ended(ExitKind::lost, j.dir,
                            "Slurm job " + j.job + " was terminated and Slurm no longer knows why (" + record->message +
                                "); the trial runs again"));
    } else if (trial_is_supervised(j.dir)) {
      ++it;  // its supervisor still holds the trial: it runs on
    } else {
      it = finish(it, ended(j.cancel_requested ? ExitKind::cancelled : ExitKind::lost, j.dir,
                            "Slurm job " + j.job + " is unknown to Slurm and left no exit record in " + j.dir.string()));
    }
  }
  return finished;
}

void SlurmExecutor::scancel(const std::vector<std::string>& jobs) {
  if (jobs.empty()) return;
  // Recorded first: a tuner that exits before it collects the cancelled job (a third Ctrl-C, kill -9
  // after tune stop) left a CANCELLED job that the next session failed as cancelled by someone else.
  for (const auto& [id, j] : jobs_)
    if (std::find(jobs.begin(), jobs.end(), j.job) != jobs.end()) {
      try {
        write_file_atomically(j.dir / kCancelRequestedFile, j.job + "\n");
      } catch (const std::exception& e) {
        warn("trial " + id + ": cannot record that its job is cancelled by the tuner: " + e.what());
      }
    }
  std::vector<std::string> argv{options_.scancel};
  argv.insert(argv.end(), jobs.begin(), jobs.end());
  try {
    const ProgramOutput out = run_program(argv);
    // A job that ended meanwhile is not an error worth reporting.
    if (out.status != 0 && out.err.find("already completing or completed") == std::string::npos)
      warn("scancel failed (status " + std::to_string(out.status) + "): " + trim(out.err));
  } catch (const std::exception& e) {
    warn(std::string("scancel failed: ") + e.what());
  }
  query_soon_ = true;
}

void SlurmExecutor::cancel(const std::string& id) {
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  it->second.cancel_requested = true;
  if (it->second.job.empty()) {
    warn("trial " + id + " has no Slurm job id on record: it cannot be cancelled, only followed");
    return;
  }
  scancel({it->second.job});
}

void SlurmExecutor::cancel_pending() {
  std::vector<std::string> ids;
  for (const auto& [id, j] : jobs_)
    if (!j.job.empty() && !j.cancel_requested) ids.push_back(j.job);
  if (ids.empty()) return;
  const auto views = query(ids);
  if (!views) return;
  std::vector<std::string> pending;
  for (auto& [id, j] : jobs_) {
    const auto v = views->find(j.job);
    if (j.job.empty() || j.cancel_requested || v == views->end() || v->second.state != "PENDING") continue;
    j.cancel_requested = true;
    pending.push_back(j.job);
  }
  scancel(pending);
}

std::vector<std::string> SlurmExecutor::running_ids() const {
  std::vector<std::string> ids;
  for (const auto& [id, j] : jobs_) ids.push_back(id);
  return ids;
}

std::string SlurmExecutor::job_of(const std::string& id) const {
  const auto it = jobs_.find(id);
  return it == jobs_.end() ? std::string() : it->second.job;
}

void SlurmExecutor::warn(const std::string& message) const {
  if (options_.warn) options_.warn(message);
}

}  // namespace tune::adapters
