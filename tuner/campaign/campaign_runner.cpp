#include "tuner/campaign/campaign_runner.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <thread>

#include "tune/adapters/command/command_template.hpp"
#include "tune/adapters/executor/local_executor.hpp"  // trial_is_supervised
#include "tune/adapters/executor/trial_file_text.hpp"
#include "tune/adapters/protocol/intermediate_follower.hpp"
#include "tune/adapters/protocol/trial_report.hpp"
#include "tune/io/atomic_file.hpp"
#include "tune/io/yaml_values.hpp"
#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/campaign_lock.hpp"
#include "tuner/campaign/campaign_spend.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/duration.hpp"
#include "tuner/campaign/event_log.hpp"
#include "tuner/campaign/executor_factory.hpp"
#include "tuner/campaign/level_cost_limits.hpp"
#include "tuner/campaign/progress.hpp"

namespace tune::tuner {

namespace {

std::atomic<int> g_stop_signals{0};
// Who sent the first stop signal: 0 before it came, kByTuneStop for `tune stop`, else the signal.
constexpr int kByTuneStop = -1;
std::atomic<int> g_first_stop_origin{0};

// The terminal went away (an ssh connection dropped, the window closed).
std::atomic<bool> g_hung_up{false};

extern "C" void on_hangup(int) { g_hung_up = true; }

extern "C" void on_stop_signal(int sig, siginfo_t* info, void*) {
  // Only request_stop() queues SIGTERM with this value; kill(1), Ctrl-C or a scheduler send plain ones.
  const bool by_tune_stop = info && info->si_code == SI_QUEUE && info->si_value.sival_int == kStopRequestValue;
  int none = 0;
  g_first_stop_origin.compare_exchange_strong(none, by_tune_stop ? kByTuneStop : sig);  // before the count
  g_stop_signals.fetch_add(1);
}

// Installs the handlers for the tuner's session and restores the previous ones.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signals = 0;
    g_first_stop_origin = 0;
    struct sigaction sa {};
    sa.sa_sigaction = on_stop_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    g_hung_up = false;
    struct sigaction hup {};
    hup.sa_handler = on_hangup;
    sigemptyset(&hup.sa_mask);
    sigaction(SIGHUP, &hup, &old_hup_);
    // Output to a reader that is gone (`tune run | tee log`, tee closed with the terminal) fails
    // quietly instead of killing the tuner mid-session.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old_pipe_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGHUP, &old_hup_, nullptr);
    sigaction(SIGPIPE, &old_pipe_, nullptr);
  }
  int count() const { return g_stop_signals.load(); }
  bool hung_up() const { return g_hung_up.load(); }
  // Whether the first stop came from `tune stop`, and otherwise the signal that brought it.
  bool first_by_tune_stop() const { return g_first_stop_origin.load() == kByTuneStop; }
  int first_signal() const { return g_first_stop_origin.load(); }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_hup_ {};
  struct sigaction old_pipe_ {};
};

// How long a launch waits for the supervisor of a trial's collected run to exit (it has written its
// exit record; what remains is reaping the command's leftovers, at most 2 s, and exiting).
constexpr std::chrono::seconds kSupervisorExitPatience{30};

// How long launching pauses after a launch the executor deferred (a cluster controller that did
// not answer; sbatch itself spends some 10 s finding that out).
constexpr std::chrono::seconds kLaunchRetryPause{10};
// How often the running trials' stdout is read for the pruning rule: the loop polls every 10 ms,
// and a trial reports at most every few seconds worth acting on.
constexpr std::chrono::milliseconds kPruneLookInterval{250};

const char* signal_name(int sig) {
  switch (sig) {
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGINT: return "SIGINT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    default: return "a signal";
  }
}

class Runner {
 public:
  Runner(std::filesystem::path dir, CampaignState state, const RunOptions& options)
      : dir_(std::move(dir)), state_(std::move(state)), options_(options), events_(dir_ / campaign_files::kEvents),
        progress_(options.quiet) {
    executor_ = make_executor(state_.config, options.supervisor_command,
                              [this](const std::string& message) { progress_.log("executor: " + message); });
  }

  // `signals` are installed for the whole session (run_campaign).
  int run(const StopSignals& signals) {
    started_ = std::chrono::steady_clock::now();
    base_active_ = state_.active_seconds;
    // The session starts before the running trials are re-attached: an error there (a damaged
    // supervisor record) ends it like any other, recorded in the state and the event log, where it
    // left no session_end and `tune status` told the session before.
    events_.write("session_start", {{"trials", json_number(std::uint64_t{state_.runs.size()})}});
    int code = kExitError;
    try {
      events_.recover_outcomes(state_);
      resume_running_trials();
      set_level_cost_limits();
      checkpoint();
      report_new_warning();  // one found in an earlier session is said again as this one starts
      code = loop(signals);
    } catch (const std::exception& e) {
      // An error ends the session too, and the state and the event log say so like any other end
      // (`tune status`: "last session ended: error: ..."). The caller reports the error itself.
      state_.stop_reason = std::string("error: ") + e.what();
      try {
        end_session();
      } catch (const std::exception&) {
        // The state or the log cannot be written (the error may well be that): the first error is the one to report.
      }
      throw;
    }
    end_session();
    progress_.finish(state_, active_seconds());
    return code;
  }

 private:
  void end_session() {
    checkpoint();
    events_.write("session_end", {{"reason", json_string(state_.stop_reason)}});
  }

  double active_seconds() const {
    return base_active_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }

  // Writes the state, then the events of the outcomes it is the first to record (an event follows
  // the state that records it: a crash in between leaves the event to recover_outcomes).
  void checkpoint() {
    state_.active_seconds = active_seconds();
    writer_.save(dir_, state_);
    for (const std::uint64_t id : unsaved_outcomes_) events_.write_outcome(state_, id);
    unsaved_outcomes_.clear();
    for (const auto& [event, fields] : unsaved_events_) events_.write(event, fields);
    unsaved_events_.clear();
  }

  // Trials that were running (or launched but not yet recorded as running) when the last tuner
  // stopped: follow the ones whose supervisor is alive or left an exit record, re-queue the others.
  // Their events are written by the checkpoint that records them (also the one of a session that
  // ends in an error here: the trials re-attached or re-queued before it are recorded with their events).
  // Every damaged trial record is named before the session ends for them: named one per resume, a
  // user mending a crash that damaged several ran one resume per record to learn of the next.
  void resume_running_trials() {
    std::vector<std::string> damaged;
    for (TrialRun& r : state_.runs) {
      try {
        resume_running_trial(r);
      } catch (const std::runtime_error& e) {
        if (std::string_view(e.what()).rfind(adapters::kDamagedRecord, 0) != 0) throw;
        damaged.emplace_back(e.what());
      }
    }
    if (damaged.size() == 1) throw std::runtime_error(damaged.front());
    if (!damaged.empty()) {
      std::string message = std::to_string(damaged.size()) + " trial records are damaged:";
      for (const std::string& d : damaged) message += "\n  " + d;
      throw std::runtime_error(message);
    }
  }

  // One trial of resume_running_trials.
  void resume_running_trial(TrialRun& r) {
    if (r.external || r.status == RunStatus::complete || r.status == RunStatus::failed) return;
    if (r.status == RunStatus::queued && r.attempts == 0) return;
    const std::filesystem::path tdir = trial_dir(dir_, r.id);
    // A re-queued trial's last run was collected (or given up for lost), so an exit record in its
    // directory is that run's, to be set aside at the next launch, not collected again; only a
    // supervisor still alive (started just as the previous tuner died) is followed.
    if (r.status == RunStatus::queued && !supervises_new_run(std::filesystem::absolute(tdir))) return;
    const adapters::RunRecord run{.id = std::to_string(r.id), .dir = std::filesystem::absolute(tdir),
                                  .attempt = r.attempts, .job = r.job, .requeued = r.status == RunStatus::queued};
    if (std::filesystem::exists(tdir) && executor_->attach(run)) {
      r.status = RunStatus::running;
      if (const std::string job = executor_->job_of(run.id); !job.empty()) r.job = job;
      unsaved_events_.push_back(
          {"reattach", {{"trial", json_number(r.id)}, {"reason", json_string("the tuner restarted while the trial ran")}}});
      progress_.log("trial " + std::to_string(r.id) + " re-attached");
      // Pruned as the previous tuner died: the decision is recorded, the run not yet stopped.
      if (r.pruned) executor_->cancel(run.id);
    } else if (r.status == RunStatus::running && r.pruned) {
      finish_pruned(r, std::nullopt);
    } else if (r.status == RunStatus::running) {
      r.status = RunStatus::queued;
      unsaved_events_.push_back({"requeue", {{"trial", json_number(r.id)}, {"reason", json_string("its run was lost")}}});
      progress_.log("trial " + std::to_string(r.id) + " re-queued: its run was lost with the previous tuner");
    }
  }

  // The most a run at each level can cost, from this session's time limits: runs at a level whose
  // cost is still a guess then start side by side while their worst case fits the budget (Study::
  // set_level_cost_limits). Set at every session rather than saved with the study: they come from the
  // campaign's configuration, which a resume reads anew (a new timeout applies at once), and
  // state.yaml stays as it was.
  void set_level_cost_limits() { state_.study.set_level_cost_limits(session_level_cost_limits(dir_, state_)); }

  std::size_t failed_count() const { return state_.count(RunStatus::failed); }
  // Failures since the campaign last stopped for them, which is what budget.failures bounds.
  std::size_t counted_failures() const { return failed_count() - state_.failed_at_failures_stop; }
  bool failures_spent() const { return counted_failures() >= state_.config.budget.max_failures; }

  // Why the campaign ended when nothing runs and nothing more can start.
  std::string end_of_proposals() const {
    if (state_.trial_budget_spent()) return state_.trial_budget_spent_reason();
    const std::string& why = state_.study.stop_reason();
    if (state_.config.budget.cost && state_.study.stopped_for_cost_budget()) {
      std::string detail = why.substr(kCostBudgetExhausted.size());
      if (detail.rfind(": ", 0) == 0) detail.erase(0, 2);
      return "the cost budget is spent: " + format_short(state_.study.spent_cost()) + " of " +
             format_short(*state_.config.budget.cost) + (detail.empty() ? "" : "; " + detail) +
             no_full_run_note(state_) + unspent_under_limits_note(state_);
    }
    return "the strategy has nothing more to propose: " + why;
  }

  // Why no new trial may start, or empty if one may.
  std::string budget_exhausted() const {
    const BudgetSpec& b = state_.config.budget;
    if (failures_spent())
      return std::to_string(counted_failures()) + " trials failed" +
             (state_.failed_at_failures_stop > 0 ? " since the campaign last stopped for failures" : "") +
             " (budget.failures = " + std::to_string(b.max_failures) + "); see 'tune status " + dir_.string() +
             "' for the reasons, fix the cause, then 'tune resume " + dir_.string() + "' allows budget.failures more";
    if (b.wall_seconds && active_seconds() >= *b.wall_seconds)
      return "the wall-time budget of " + format_duration(*b.wall_seconds) + " is spent";
    return {};
  }

  // A queued run is never in the executor: launch() marks it running first, and a collected
  // run has left the executor before it is re-queued.
  TrialRun* next_queued() {
    for (TrialRun& r : state_.runs)
      if (!r.external && r.status == RunStatus::queued) return &r;
    return nullptr;
  }

  // Whether a supervisor holds a re-queued trial's directory for a run the state does not know of
  // (started just as the previous tuner died). One that has written its exit record is the run
  // collected already, exiting: re-attached, it was collected a second time, as cancelled, with a
  // "re-attached" and an "interrupted; it will run again" line and a requeue event of its own.
  static bool supervises_new_run(const std::filesystem::path& tdir) {
    return adapters::trial_is_supervised(tdir) && !std::filesystem::exists(tdir / adapters::kExitFile);
  }

  // Waits (up to kSupervisorExitPatience) for the supervisor of a re-queued trial's collected run,
  // which has written its exit record, to exit and let go of the trial directory: a supervisor
  // started meanwhile would find the directory taken and back off without running the trial.
  static void wait_for_collected_supervisor(const std::filesystem::path& tdir) {
    const auto deadline = std::chrono::steady_clock::now() + kSupervisorExitPatience;
    while (adapters::trial_is_supervised(tdir) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  // Says the strategy's warning about the results (Strategy::warning) when it first appears, so the
  // user can stop a campaign whose premise failed (bnb on a noisy objective) before its budget goes.
  void report_new_warning() {
    std::optional<std::string> warning = state_.study.warning();
    if (warning && warning != warned_) progress_.log("warning: " + *warning);
    warned_ = std::move(warning);
  }

  // Returns false if the executor could not start the trial now (a cluster controller that does not
  // answer): the trial stays queued, as it was, and launching pauses for kLaunchRetryPause.
  bool launch(TrialRun& r) {
    const Trial& t = state_.study.trial(r.id);
    const std::filesystem::path tdir = std::filesystem::absolute(trial_dir(dir_, r.id));
    if (r.attempts > 0 && !supervises_new_run(tdir)) wait_for_collected_supervisor(tdir);
    if (supervises_new_run(tdir) &&
        executor_->attach(
            {.id = std::to_string(r.id), .dir = tdir, .attempt = r.attempts, .job = r.job, .requeued = true})) {
      // An earlier attempt is still alive after all (its supervisor started just as the previous
      // tuner died): follow it rather than run the trial twice.
      r.status = RunStatus::running;
      checkpoint();
      events_.write("reattach", {{"trial", json_number(r.id)},
                                 {"reason", json_string("an earlier attempt was still running when the trial was to start again")}});
      progress_.log("trial " + std::to_string(r.id) + " re-attached: an earlier attempt was still running");
      return true;
    }
    // A re-queued trial keeps its directory (the trainer's checkpoints); the previous attempt's records
    // and logs move to attempts/<n>/. Done before the checkpoint that counts the new attempt, so a
    // resumed tuner never finds the old attempt's exit record under the new attempt's number.
    if (r.attempts > 0) adapters::set_aside_attempt(tdir, r.attempts);
    watched_.erase(r.id);  // the new attempt's stdout starts afresh
    std::filesystem::create_directories(tdir);
    adapters::TrialContext ctx{std::to_string(r.id), tdir.string(), (tdir / adapters::kResultFile).string()};
    const std::optional<adapters::TrialResolution> resolution = resolution_of(t);
    adapters::TrialLaunch launch;
    launch.id = std::to_string(r.id);
    launch.dir = tdir;
    std::vector<std::string> not_applying;  // conditional parameters the configuration leaves out
    for (const Parameter& p : state_.config.space.parameters())
      if (!t.config.contains(p.name)) not_applying.push_back(p.name);
    launch.argv = adapters::render_command(state_.config.command, t.config, ctx, resolution, not_applying);
    launch.environment = adapters::trial_environment(t.config, ctx, resolution);
    if (const std::optional<double> limit = state_.config.trial_timeout(t.level))
      launch.timeout = std::chrono::milliseconds(static_cast<long long>(*limit * 1000));
    launch.grace = std::chrono::milliseconds(static_cast<long long>(state_.config.executor.grace_seconds * 1000));
    launch.attempt = r.attempts + 1;
    // Recorded as running before the supervisor starts: a crash in between leaves a record that
    // resume checks against the trial directory, never a process the state does not know about.
    const TrialRun before = r;
    r.status = RunStatus::running;
    ++r.attempts;
    r.started_at = now_seconds();
    r.exit.reset();
    r.failure_reason.clear();
    r.job.clear();
    checkpoint();
    try {
      r.job = executor_->launch(launch);
    } catch (const std::exception& e) {
      // It never started (the cluster refused it, the supervisor is missing): not an attempt, so the
      // number is handed out again and attempt numbers (events, attempts/<n>/) count runs that started,
      // and the run record is as it was (the last real attempt's start and exit, not the failed
      // launch's start time on a trial that never ran).
      r = before;
      checkpoint();
      // A controller that does not answer (restarting, overloaded), or a limit on queued jobs the
      // campaign's own jobs reached, ends no session: the jobs in flight are followed meanwhile, and
      // the trial is submitted when the cluster takes it.
      if (!dynamic_cast<const adapters::LaunchDeferred*>(&e)) throw;
      if (!launch_deferred_) progress_.log("executor: " + std::string(e.what()));
      launch_deferred_ = true;
      launch_paused_until_ = std::chrono::steady_clock::now() + kLaunchRetryPause;
      return false;
    }
    if (launch_deferred_) progress_.log("executor: trial " + std::to_string(r.id) + " submitted: the cluster takes jobs again");
    launch_deferred_ = false;
    if (!r.job.empty()) checkpoint();  // the job id, so that a resumed tuner follows this job
    EventFields fields{{"trial", json_number(r.id)}, {"attempt", json_number(std::uint64_t{r.attempts})}};
    if (!r.job.empty()) fields.emplace_back("job", json_string(r.job));
    if (resolution) fields.emplace_back("level", json_number(std::uint64_t{resolution->level}));
    events_.write("launch", fields);
    progress_.log("trial " + std::to_string(r.id) + (r.job.empty() ? " started: " : " submitted as job " + r.job + ": ") +
                  tune::to_string(t.config) +
                  (resolution ? " " + resolution->parameter + "=" + launch.environment.at("TUNE_RESOLUTION") : ""));
    return true;
  }

  // The level a trial of a multi-resolution campaign runs at (every trial of one has a level).
  std::optional<adapters::TrialResolution> resolution_of(const Trial& t) const {
    const std::optional<Resolution>& res = state_.study.resolution();
    if (!res || !t.level) return std::nullopt;
    return adapters::TrialResolution{res->parameter, res->values.at(*t.level), *t.level};
  }

  // What a finished run cost, for the study: with measured costs its run time in seconds, as the
  // supervisor recorded it (start to exit of the command); with declared costs nothing, so that the
  // study counts the level's declared cost and the spend stays in the declared units (a measured
  // cost takes precedence over the level's in Study::spent_cost).
  std::optional<double> measured_cost(const adapters::TrialExit& e) const {
    const std::optional<Resolution>& res = state_.study.resolution();
    if (!res || !res->measured()) return std::nullopt;
    if (e.started_at <= 0 || !(e.finished_at >= e.started_at)) return 0.0;
    return e.finished_at - e.started_at;
  }

  // What an exited trial reported (its stdout, and `result_text`, its result file's), with the run
  // record's intermediate values and metrics taken from it.
  adapters::TrialReport record_report(TrialRun& r, const std::filesystem::path& tdir, const std::string& result_text) const {
    std::string out = adapters::read_file(tdir / adapters::kStdoutFile, 1);
    out += '\n';  // the trial has exited: its last line is complete (in the room read_file left)
    adapters::TrialReport report = adapters::parse_trial_output(out, result_text, {state_.config.objective.name});
    r.intermediate = kept_intermediate(report.intermediate);
    r.metrics = report.metrics;
    return report;
  }

  void collect(const adapters::FinishedTrial& f) {
    const std::uint64_t id = std::stoull(f.id);
    TrialRun& r = state_.runs.at(id);
    const adapters::TrialExit& e = f.exit;
    r.exit = e;
    r.finished_at = e.finished_at > 0 ? e.finished_at : now_seconds();
    watched_.erase(id);
    // Stopped by the pruning rule (or ended on its own just before the stop reached it: the
    // decision stands, so a trial that catches SIGTERM and prints a value is not told a full run's).
    if (r.pruned) {
      finish_pruned(r, measured_cost(e));
      return;
    }
    const std::size_t retries = state_.config.executor.slurm.retries;
    if (e.kind == adapters::ExitKind::cancelled || (e.kind == adapters::ExitKind::lost && r.lost < retries)) {
      // Stopped by us (stop, Ctrl-C), its supervisor was lost, or its node failed or it was preempted
      // (a limited number of times): not the configuration's fault.
      if (e.kind == adapters::ExitKind::lost) ++r.lost;
      r.status = RunStatus::queued;
      r.job.clear();
      // The run time is spent all the same: uncharged, every stop and resume (or preemption) spent
      // run time the cost budget never counted. A run that never started (a job cancelled in a
      // cluster's queue) or whose times were not recorded is charged nothing.
      const double interrupted_cost = measured_cost(e).value_or(0.0);
      if (interrupted_cost > 0) state_.study.add_interrupted_cost(id, interrupted_cost);
      // A damaged exit record is said (it was only in the log's requeue event, and the finished
      // trial ran again without a word of why).
      const bool damaged = e.message.rfind(adapters::kDamagedRecord, 0) == 0;
      progress_.log("trial " + f.id +
                    (e.kind == adapters::ExitKind::lost ? " lost (" + e.message + ")"
                     : damaged                          ? " interrupted (" + e.message + ")"
                                                        : " interrupted") +
                    "; it will run again" +
                    (interrupted_cost > 0 && state_.config.budget.cost
                         ? " (the " + format_short(interrupted_cost) + "s it ran is charged to the cost budget)"
                         : ""));
      checkpoint();
      EventFields fields{{"trial", json_number(id)}, {"reason", json_string(e.message)}};
      if (interrupted_cost > 0) fields.emplace_back("interrupted_cost", json_number(interrupted_cost));
      events_.write("requeue", fields);
      return;
    }
    const std::filesystem::path tdir = trial_dir(dir_, id);
    std::string reason;
    switch (e.kind) {
      case adapters::ExitKind::launch_failed: reason = "could not start: " + e.message; break;
      case adapters::ExitKind::timeout:
        // The supervisor's own limit, or (message from the executor) the cluster's time limit.
        if (const std::optional<double> limit = state_.config.trial_timeout(state_.study.trial(id).level);
            limit && e.message.rfind("timed out after", 0) == 0)
          reason = "timed out after " + format_duration(*limit);
        else
          reason = e.message;
        break;
      case adapters::ExitKind::aborted: reason = e.message; break;
      case adapters::ExitKind::lost:
        ++r.lost;
        // Failed for good here (a run lost within the retries is re-queued before this): the count is
        // what failed it.
        reason = e.message + "; lost " + std::to_string(r.lost) + (r.lost == 1 ? " time" : " times") +
                 ", more than executor.retries = " + std::to_string(retries) + " allows";
        break;
      case adapters::ExitKind::signaled:
        reason = "killed by signal " + std::to_string(e.signal) + " (" + signal_name(e.signal) + ")";
        break;
      case adapters::ExitKind::exited:
        if (e.code != 0) {
          reason = "exited with status " + std::to_string(e.code);
          const std::string err = adapters::last_line_of_file(tdir / adapters::kStderrFile);
          if (!err.empty()) reason += "; last stderr line: " + err;
        }
        break;
      case adapters::ExitKind::cancelled: break;
    }
    const std::optional<double> cost = measured_cost(e);
    if (reason.empty()) {
      try {
        const adapters::TrialReport report = record_report(r, tdir, adapters::read_file(tdir / adapters::kResultFile));
        if (report.failure) reason = *report.failure;
        else if (!report.objective && report.unreadable_objective)
          reason = *report.unreadable_objective;
        else if (!report.objective && report.unread_line)
          reason = "no value reported: " + *report.unread_line + "; no other stdout line or result file reported a "
                   "value for " + state_.config.objective.name;
        else if (!report.objective)
          reason = "no value reported: expected a line '" + state_.config.objective.name +
                   "=<value>' on stdout, a JSON object line, or a result file at $TUNE_RESULT_FILE";
        else {
          state_.study.tell(id, *report.objective, cost);
          r.status = RunStatus::complete;
          progress_.log("trial " + f.id + " " + state_.config.objective.name + "=" + format_double(*report.objective));
          report_new_warning();
        }
      } catch (const std::exception& ex) {
        reason = ex.what();
      }
    }
    if (!reason.empty()) {
      state_.study.fail(id, reason, cost);
      r.status = RunStatus::failed;
      r.failure_reason = reason;
      progress_.log("trial " + f.id + " failed: " + reason);
    }
    ask_blocked_ = false;  // a told trial may let the strategy propose again (or free cost budget)
    // Saved by the next checkpoint, which comes in this turn of the loop: the launch of the trial
    // that takes its slot, else the loop's own. The state was written twice per trial, and the whole
    // file each time (2 MB at 4000 trials), the one cost of a trial that grew with the campaign. A
    // crash before that checkpoint loses nothing: the run is still recorded as running, and its exit
    // record is collected again on resume.
    unsaved_outcomes_.push_back(id);
  }

  // Records a trial the pruning rule stopped: complete, told its last reported value (with what its
  // stdout holds kept, as for any finished trial). `cost`: the run's measured cost, if any.
  void finish_pruned(TrialRun& r, std::optional<double> cost) {
    const std::filesystem::path tdir = trial_dir(dir_, r.id);
    try {
      record_report(r, tdir, "");
    } catch (const std::exception&) {
      // The decision's step and value are recorded already; the curve is for the record only.
    }
    r.job.clear();
    if (r.finished_at <= 0) r.finished_at = now_seconds();
    // A run lost with the tuner: its time is unknown, and charged as nothing (as measured_cost does
    // for a run whose times were not recorded), not as its level's full price.
    const std::optional<Resolution>& res = state_.study.resolution();
    if (!cost && res && res->measured()) cost = 0.0;
    try {
      state_.study.tell_pruned(r.id, r.pruned->step, r.pruned->value, cost);
      r.status = RunStatus::complete;
      progress_.log("trial " + std::to_string(r.id) + " pruned at step " + std::to_string(r.pruned->step) + ": " +
                    state_.config.objective.name + "=" + format_double(r.pruned->value));
    } catch (const std::exception& e) {
      // Refused by the study (a state edited by hand): failed with the reason, never a campaign that
      // stops at the same refusal on every resume.
      r.failure_reason = "stopped by pruning at step " + std::to_string(r.pruned->step) + ", but " + e.what();
      r.pruned.reset();
      state_.study.fail(r.id, r.failure_reason, cost);
      r.status = RunStatus::failed;
      progress_.log("trial " + std::to_string(r.id) + " failed: " + r.failure_reason);
    }
    ask_blocked_ = false;
    unsaved_outcomes_.push_back(r.id);
  }

  // The completed, unpruned trials' curves at `level`, the pruning rule's reference: their run
  // records' own (valid until the next trial is added to the state).
  std::vector<const LearningCurve*> reference_curves(std::optional<std::size_t> level) const {
    std::vector<const LearningCurve*> out;
    for (const TrialRun& r : state_.runs)
      if (r.status == RunStatus::complete && !r.pruned && state_.study.trial(r.id).level == level)
        out.push_back(&r.intermediate);
    return out;
  }

  // The pruning rule's look at the running trials: what each reported since the last look, and the
  // verdict. A trial to stop is recorded as pruned first, then cancelled (its exit is collected as
  // any other): killed in between, the tuner finds the decision on resume and carries it out.
  void prune_running() {
    // Not while a stop terminates the running trials: a second cancel of a trial is a SIGKILL, which
    // would cut short the grace its first cancel gave it (they run again on resume anyway).
    if (!state_.config.pruning || cancelling_all_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_prune_look_) return;
    next_prune_look_ = now + kPruneLookInterval;
    for (const std::string& sid : executor_->running_ids()) {
      const std::uint64_t id = std::stoull(sid);
      TrialRun& r = state_.runs.at(id);
      if (r.pruned) continue;
      auto it = watched_.find(id);
      if (it == watched_.end())
        it = watched_
                 .emplace(id, adapters::IntermediateFollower(trial_dir(dir_, id) / adapters::kStdoutFile,
                                                             state_.config.objective.name))
                 .first;
      if (!it->second.read_new()) continue;
      const std::optional<PruneVerdict> verdict =
          prune_verdict(*state_.config.pruning, state_.config.objective.direction,
                        reference_curves(state_.study.trial(id).level), it->second.curve());
      if (!verdict) continue;
      r.pruned = PruneRecord{verdict->step, verdict->last_value,
                             verdict->explain(state_.config.objective.name, state_.config.pruning->percentile)};
      checkpoint();
      events_.write("prune", {{"trial", json_number(id)},
                              {"step", json_number(verdict->step)},
                              {"reason", json_string(r.pruned->reason)}});
      progress_.log("trial " + sid + " stopped by pruning: " + r.pruned->reason);
      executor_->cancel(sid);
    }
  }

  // `all`: also the trials the pruning rule is stopping already. The first stop request leaves them
  // to the cancel they have (a second one is a SIGKILL, which would cut their grace short); the
  // second request is meant to kill everything.
  void cancel_running(bool all) {
    cancelling_all_ = true;
    for (const std::string& id : executor_->running_ids())
      if (all || !state_.runs.at(std::stoull(id)).pruned) executor_->cancel(id);
  }

  int loop(const StopSignals& signals) {
    bool stopping = false;
    int handled_signals = 0;
    std::string end_reason;
    int code = kExitComplete;
    for (;;) {
      for (const adapters::FinishedTrial& f : executor_->poll()) collect(f);

      // Signals: the first stops launching and (unless --wait-on-stop) terminates the running
      // trials; the second terminates them at once (for the default mode it is a second cancel
      // request, which the supervisors answer with SIGKILL instead of waiting for the grace);
      // a third leaves without waiting.
      bool leave = false;
      // A hang-up ends the session at once and leaves the running trials running (they are in
      // sessions of their own, so the hang-up did not reach them): `tune resume`, from another
      // terminal, re-attaches them, and no work in progress is lost to a dropped connection.
      if (signals.hung_up()) {
        code = kExitInterrupted;
        end_reason = "the terminal hung up (SIGHUP); running trials go on, and 'tune resume' re-attaches them";
        events_.write("stop_requested", {{"by", json_string("SIGHUP")}});
        break;
      }
      while (handled_signals < signals.count()) {
        ++handled_signals;
        if (handled_signals == 1) {
          stopping = true;
          code = kExitInterrupted;
          const std::string by = signals.first_by_tune_stop() ? "'tune stop'" : signal_name(signals.first_signal());
          end_reason = (signals.first_by_tune_stop() ? "stopped by 'tune stop'" : "stopped by a signal (" + by + ")") +
                       "; 'tune resume' continues";
          events_.write("stop_requested", {{"by", json_string(signals.first_by_tune_stop() ? "tune stop" : by)},
                                           {"wait_on_stop", json_bool(options_.wait_on_stop)}});
          progress_.log("stopping (" + by + "): " +
                        (options_.wait_on_stop ? "waiting for running trials (signal again to terminate them)"
                                               : "terminating running trials (they will run again on resume)"));
          // --wait-on-stop lets running trials finish but starts nothing more: jobs still waiting in
          // a cluster's queue are cancelled (they run again on resume), as when a budget is spent.
          if (!options_.wait_on_stop) cancel_running(false);
          else executor_->cancel_pending();
        } else if (handled_signals == 2) {
          progress_.log("terminating running trials now");
          cancel_running(true);
        } else {
          leave = true;
        }
      }
      if (leave) break;

      // Also while the session ends (a spent budget, --wait-on-stop): the trials it waits for are
      // still judged, and a hopeless one need not run to its end.
      prune_running();
      if (!stopping) {
        // Also while every worker is busy: jobs still waiting in a cluster's queue are cancelled at
        // once rather than started when a slot frees.
        if (const std::string exhausted = budget_exhausted(); !exhausted.empty() && executor_->running() > 0) {
          stopping = true;
          end_reason = exhausted;
          code = failures_spent() ? kExitTooManyFailures : kExitComplete;
          executor_->cancel_pending();
        }
      }
      if (!stopping) {
        while (executor_->running() < state_.config.executor.workers &&
               std::chrono::steady_clock::now() >= launch_paused_until_) {
          const std::string exhausted = budget_exhausted();
          if (!exhausted.empty()) {
            stopping = true;
            end_reason = exhausted;
            executor_->cancel_pending();  // jobs still waiting in a cluster's queue will not be needed
            code = failures_spent() ? kExitTooManyFailures : kExitComplete;
            break;
          }
          TrialRun* r = next_queued();
          // Asked even when the study has stopped: it still hands out what the user enqueued since,
          // budgets permitting (Study::ask), and nothing else.
          if (!r && !state_.trial_budget_spent() && !ask_blocked_) {
            const auto s = state_.study.ask();
            if (s) {
              state_.runs.push_back(TrialRun{.id = s->id});
              r = &state_.runs.back();
            } else {
              // Nothing to propose while trials are pending (or the cost budget is spent): ask again
              // once one of them has been told, not at every poll.
              ask_blocked_ = true;
            }
          }
          if (!r || !launch(*r)) break;
        }
        if (!stopping && executor_->running() == 0 && !next_queued()) {
          // Nothing runs and nothing more can start: the budget is spent or the strategy stopped.
          // Trials handed out by `tune ask` and not told yet (nothing else is pending now) keep the
          // campaign unfinished: their results may let the strategy go on, and tune status said
          // "finished" while they were awaited.
          stopping = true;
          const std::size_t awaited = state_.study.pending_count();
          state_.finished = awaited == 0;
          end_reason = end_of_proposals();
          if (awaited > 0)
            end_reason += "; " + std::to_string(awaited) +
                          (awaited == 1 ? " trial handed out by 'tune ask' awaits its result"
                                        : " trials handed out by 'tune ask' await their results") +
                          " ('tune tell " + dir_.string() + " ID VALUE' reports it)";
        }
      }
      if (!unsaved_outcomes_.empty()) checkpoint();  // no launch saved them
      if (stopping && executor_->running() == 0) break;
      progress_.update(state_, executor_->running(), active_seconds());
      std::this_thread::sleep_for(std::chrono::duration<double>(options_.poll_interval_seconds));
    }
    state_.stop_reason = end_reason;
    // The next session's allowance of failures starts afresh (the caller checkpoints the state).
    if (code == kExitTooManyFailures) state_.failed_at_failures_stop = failed_count();
    return code;
  }

  std::filesystem::path dir_;
  CampaignState state_;
  RunOptions options_;
  std::unique_ptr<adapters::Executor> executor_;
  EventLog events_;
  Progress progress_;
  StateWriter writer_;
  std::chrono::steady_clock::time_point started_;
  double base_active_ = 0.0;
  bool ask_blocked_ = false;  // the last ask() proposed nothing; no trial has been told since
  std::optional<std::string> warned_;  // the strategy's warning last shown (Strategy::warning)
  bool launch_deferred_ = false;  // the last launch could not start now (LaunchDeferred), said once
  std::chrono::steady_clock::time_point launch_paused_until_{};
  std::vector<std::uint64_t> unsaved_outcomes_;  // told, not yet in state.yaml (see collect)
  std::vector<std::pair<std::string, EventFields>> unsaved_events_;  // of re-attached or re-queued trials (see resume_running_trials)
  // The pruning rule's view of the running trials: each one's stdout, followed.
  std::map<std::uint64_t, adapters::IntermediateFollower> watched_;
  std::chrono::steady_clock::time_point next_prune_look_{};
  bool cancelling_all_ = false;  // cancel_running() has asked every running trial to stop
};

}  // namespace

bool request_stop(pid_t tuner) {
  union sigval value {};
  value.sival_int = kStopRequestValue;
  return ::sigqueue(tuner, SIGTERM, value) == 0;
}

bool driven_by_another_tuner(const std::filesystem::path& dir, const std::string& command) {
  // A read-only probe, no waiting: a short command's hold is the background's to wait for.
  if (CampaignLock::probe(dir) != LockHolder::tuner) return false;
  const CampaignLock::Refusal tuner{LockHolder::tuner, CampaignLock::describe_holder(dir, LockHolder::tuner)};
  std::fprintf(stderr, "%s: %s\n", command.c_str(), tuner.text(dir).c_str());
  return true;
}

int run_campaign(const std::filesystem::path& dir, const RunOptions& options) {
  CampaignLock::Refusal refusal;
  auto lock = CampaignLock::acquire(dir, CampaignLock::Role::tuner, options.command, &refusal);
  if (!lock) {
    std::fprintf(stderr, "%s: %s\n", options.command.c_str(), refusal.text(dir).c_str());
    return kExitLocked;
  }
  // Installed before tuner.pid names this process to `tune stop`, and kept until it is removed: a stop
  // that comes while the session starts (the state loads, running trials are re-attached) is
  // honoured as the loop begins, and one that comes as it ends finds it checkpointing anyway. With
  // the default action there, `tune stop` killed the tuner (exit 143, no session_end) while it said
  // "it checkpoints and exits".
  const StopSignals signals;
  remove_leftover_temporaries(dir / campaign_files::kTunerPid);  // (the lock keeps every other writer of it out)
  write_file_atomically(dir / campaign_files::kTunerPid, std::to_string(::getpid()) + "\n");
  try {
    CampaignState state = load_state(dir);
    // The load parsed state.yaml into a node tree some 50 times the file's size (139 MB at 5000
    // trials), freed by now but kept by the allocator: a resumed tuner sat at that size for its
    // whole session, five times a tuner that grew the same campaign itself.
    ::malloc_trim(0);
    Runner runner(dir, std::move(state), options);
    const int code = runner.run(signals);
    std::filesystem::remove(dir / campaign_files::kTunerPid);
    return code;
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(dir / campaign_files::kTunerPid, ec);
    throw;
  }
}

}  // namespace tune::tuner
