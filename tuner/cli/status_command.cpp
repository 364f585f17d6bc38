// `tune status DIR`: where a campaign stands: its trials, budgets, model and, per trial, its result
// or how far it has got. Read-only.
#include <algorithm>
#include <cstdio>
#include <set>

#include "tune/adapters/executor/supervisor.hpp"
#include "tune/gp/level_relation.hpp"
#include "tune/strategy/bnb_strategy.hpp"
#include "tune/strategy/gp_bandit.hpp"
#include "tune/strategy/gpoo_strategy.hpp"
#include "tune/strategy/multi_resolution_search.hpp"
#include "tune/io/yaml_values.hpp"
#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/campaign_spend.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/duration.hpp"
#include "tuner/campaign/level_cost_limits.hpp"
#include "tuner/campaign/progress.hpp"
#include "tuner/cli/command_support.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/running_trial_progress.hpp"

namespace tune::tuner {

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
  // `complete` counts the runs made here that gave a result: a pruned run (stopped early, no result)
  // and a warm start's imported result are counted apart, under the table.
  std::vector<std::size_t> complete(n), failed(n), running(n), queued(n), pruned(n), imported(n);
  const CampaignSpend spend_now = campaign_spend(s);
  for (const TrialRun& r : s.runs) {
    const Trial& t = s.study.trial(r.id);
    const std::size_t level = t.level.value_or(res.top());
    if (level >= n) continue;
    switch (r.status) {
      case RunStatus::complete: ++(r.ended_pruned() ? pruned : t.imported() ? imported : complete)[level]; break;
      case RunStatus::failed: ++failed[level]; break;
      case RunStatus::running: ++running[level]; break;
      case RunStatus::queued: ++queued[level]; break;
    }
  }
  std::string spend = "cost: " + cost_text(spend_now.spent, unit) + " spent";
  if (spend_now.interrupted > 0) spend += " (" + cost_text(spend_now.interrupted, unit) + " of it by interrupted runs)";
  if (const std::size_t pending = s.count(RunStatus::running) + s.count(RunStatus::queued); pending > 0)
    spend += " + " + (spend_now.committed ? cost_text(spend_now.committed, unit) : "unknown (not yet measured)") +
             " committed to " + pending_text(s.count(RunStatus::running), s.count(RunStatus::queued));
  if (s.config.budget.cost) spend += " of the budget " + format_short(*s.config.budget.cost) + unit;
  spend += res.measured() ? " (measured: seconds of trial run time)" : " (declared costs)";
  std::printf("%s\n", spend.c_str());
  // With time limits every run's cost is bounded, and one rule says when trials start beside others.
  const std::vector<double>& limits = s.study.level_cost_limits();
  if (s.config.budget.cost && !limits.empty() && s.study.pending_count() > 0)
    std::printf("  with time limits a trial starts beside the running ones while the budget left, with each of them "
                "at its time limit (+ grace + 5 s), covers one more at the longest (%s%s)\n",
                format_short(s.study.longest_cost_limit()).c_str(), unit);
  if (s.config.budget.cost && s.config.hang_guard_limits())
    std::printf("  the time limits (with grace and 5 s) are above the whole cost budget: they stop hung runs but do not "
                "bound what a run costs, so running trials count at their level's cost and the last run may overshoot "
                "the budget\n");
  // Without them: why a tuner with several workers runs one trial (or tune ask exits 6): the study
  // waits for the first measured cost before it commits the budget to guesses.
  if (s.config.budget.cost && limits.empty() && !calibrated && s.study.pending_count() > 0)
    std::printf("  the levels' costs are unknown until the first run's time is in: until then one trial runs at a time\n");
  // Likewise a run at a level no run has completed at, whose cost is a guess.
  if (s.config.budget.cost && limits.empty() && calibrated)
    for (const TrialRun& r : s.runs) {
      const std::optional<std::size_t> level = s.study.trial(r.id).level;
      if ((r.status == RunStatus::running || r.status == RunStatus::queued) && level && *level < n &&
          !level_cost_measured(res, s.study.trials(), *level)) {
        std::printf("  trial %llu %s at %s %s, whose cost is still a guess (no run there has completed): until it ends "
                    "no other trial starts\n",
                    static_cast<unsigned long long>(r.id), r.status == RunStatus::running ? "runs" : "is to run",
                    res.parameter.c_str(), level_value(res, *level).c_str());
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
  const auto per_level = [](const std::vector<std::size_t>& counts) {
    std::string text;
    for (const std::size_t c : counts) text += (text.empty() ? "" : ", ") + std::to_string(c);
    return text;
  };
  if (std::any_of(pruned.begin(), pruned.end(), [](std::size_t c) { return c > 0; }))
    std::printf("  and pruned (stopped early, no result), by level: %s\n", per_level(pruned).c_str());
  if (std::any_of(imported.begin(), imported.end(), [](std::size_t c) { return c > 0; }))
    std::printf("  and imported by the warm start (results run elsewhere, no cost here), by level: %s\n",
                per_level(imported).c_str());
  // What the model holds at each level: the results, wherever they were run.
  for (std::size_t l = 0; l < n; ++l) complete[l] += imported[l];
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
    const ModelInputs* inputs = strategy.model_inputs();
    const double trend_mean_square =
        inputs ? inputs->trend_feature_mean_square() : static_cast<double>(s.config.space.dim()) / 12.0;
    const LevelRelation r =
        level_relation_over_inputs(strategy.hyperparameters(), strategy.standardization(), l, trend_mean_square);
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

// When a running trial's cluster job started the trial on its node: its supervisor's record of this
// attempt in the trial directory (an earlier attempt's records are in attempts/<n>/); 0 while there
// is none, the job waiting in the cluster's queue, or not yet submitted (no job id: sbatch under way,
// or a controller that does not answer). nullopt for a trial that is not a running job. Such a job
// was shown as running, timed from its submission.
std::optional<double> cluster_job_started_at(const std::filesystem::path& campaign_dir, const TrialRun& r, bool cluster) {
  if (r.status != RunStatus::running || r.external || !cluster) return std::nullopt;
  try {
    const std::optional<adapters::SupervisorRecord> record = adapters::read_supervisor_record(trial_dir(campaign_dir, r.id));
    return record ? record->started_at : 0.0;
  } catch (const std::exception&) {
    return std::nullopt;  // a record being written, or damaged: it started, when is not known
  }
}

// How the trials run, as the campaign's run settings say (which an edited campaign file may change
// between sessions): "runs: 3 at a time on this machine, time limit 1m00s at epochs 1, 3m00s at 3
// (grace 10.0s)".
std::string run_settings_line(const CampaignConfig& c) {
  if (c.command.empty()) return "runs: handed out by tune ask, told by tune tell";
  const ExecutorSpec& x = c.executor;
  // A setting, not a count of jobs now: "4 Slurm jobs in flight" read the same of a finished campaign.
  const bool slurm = x.kind == "slurm";
  std::string line = slurm ? "runs: up to " + std::to_string(x.workers) + " Slurm job" + (x.workers == 1 ? "" : "s") +
                                 " at a time" + (x.slurm.partition ? " (partition " + *x.slurm.partition + ")" : "")
                           : "runs: " + std::to_string(x.workers) + " at a time on this machine";
  // The job's own limit, which Slurm enforces beside the trial's ("no time limit" was said of jobs
  // killed at their executor.time).
  if (slurm && x.slurm.time_seconds) line += ", Slurm time limit " + format_duration(*x.slurm.time_seconds) + " per job";
  if (slurm && x.slurm.time_seconds && c.level_timeouts.empty() && !x.timeout_seconds) {
    line += ", no trial time limit";
  } else if (!c.level_timeouts.empty()) {
    line += ", time limit";
    for (std::size_t l = 0; l < c.level_timeouts.size(); ++l)
      line += std::string(l ? ", " : " ") + format_duration(c.level_timeouts[l]) + " at " +
              (l ? "" : c.resolution->parameter + " ") + level_value(*c.resolution, l);
  } else if (x.timeout_seconds) {
    line += ", time limit " + format_duration(*x.timeout_seconds);
  } else {
    line += ", no time limit";
  }
  if (c.level_timeouts.size() || x.timeout_seconds) line += " (grace " + format_duration(x.grace_seconds) + ")";
  if (c.pruning) {
    const PruningRule& p = *c.pruning;
    line += "; pruning: a trial worse than " + percentile_name(p.percentile) + " of the completed ones at its step stops (after " + std::to_string(p.startup_trials) + " completed" +
            (p.warmup_steps > 0 ? ", from step " + std::to_string(p.warmup_steps) : std::string()) + ")";
  }
  return line;
}

// ", stopping: ..." when the running tuner's session has been asked to stop (its stop_requested
// event), else nothing. A tuner that waits for its trials (--wait-on-stop) read only "tuner running".
std::string stopping_text(const std::filesystem::path& dir) {
  std::string events;
  try {
    events = read_text_file(dir / campaign_files::kEvents);
  } catch (const StateError&) {
    return {};
  }
  const std::size_t session = events.rfind("\"event\": \"session_start\"");
  const std::size_t stop = events.find("\"event\": \"stop_requested\"", session == std::string::npos ? 0 : session);
  if (stop == std::string::npos) return {};
  const std::string line = events.substr(stop, events.find('\n', stop) - stop);
  const std::string by = line.find("\"by\": \"tune stop\"") != std::string::npos ? "'tune stop'" : "a signal";
  if (line.find("\"wait_on_stop\": true") != std::string::npos)
    return ", stopping (asked by " + by + "): no trial starts, and it waits for the running ones to end (--wait-on-stop); "
           "'tune stop' again terminates them";
  return ", stopping (asked by " + by + "): terminating its running trials, which run again on resume";
}

}  // namespace

int status(const std::filesystem::path& dir, std::optional<std::size_t> last) {
  if (!holds_campaign(dir, "status")) return kExitUsage;
  CampaignState s = load_state(dir);
  s.study.set_level_cost_limits(session_level_cost_limits(dir, s));  // as a tuner would (the costs and waits shown)
  // Read-only: status also reads a colleague's campaign or an archive it cannot write to.
  std::string why;
  const LockHolder holder = CampaignLock::probe(dir, &why);
  const std::string pid = holder == LockHolder::tuner ? CampaignLock::tuner_pid(dir) : std::string();
  const std::string state = holder == LockHolder::tuner ? "tuner running" + (pid.empty() ? "" : " (process " + pid + ")") +
                                                              stopping_text(dir)
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
  for (const TrialRun& r : s.runs) job_started.push_back(cluster_job_started_at(dir, r, s.config.executor.kind == "slurm"));
  std::size_t pending = 0;  // in the queue: submitted (a job id) and not started
  for (std::size_t i = 0; i < s.runs.size(); ++i) pending += job_started[i] == 0.0 && !s.runs[i].job.empty();
  const std::string in_queue = pending == 0 ? ""
                               : " (" + std::string(pending == s.count(RunStatus::running) ? "all" : std::to_string(pending)) +
                                     " of them pending in the " + (s.config.executor.kind == "slurm" ? "Slurm" : "cluster's") +
                                     " queue)";
  std::size_t pruned = 0;
  for (const TrialRun& r : s.runs) pruned += r.ended_pruned();
  const std::string pruned_text = pruned > 0 ? " (" + std::to_string(pruned) + " of them pruned)" : "";
  // A warm start's results are complete runs of the record, made elsewhere: counted apart.
  const std::size_t imported = s.study.imported_count();
  const std::string imported_text =
      imported > 0 ? " (and " + std::to_string(imported) + " results imported by the warm start)" : "";
  std::printf("trials: %zu complete%s%s, %zu running%s, %zu queued, %zu failed, %s; active time %s\n",
              s.count(RunStatus::complete) - imported, pruned_text.c_str(), imported_text.c_str(), s.count(RunStatus::running), in_queue.c_str(),
              s.count(RunStatus::queued), s.count(RunStatus::failed), trial_budget.c_str(), format_duration(active).c_str());
  std::printf("%s\n", run_settings_line(s.config).c_str());
  // With no tuner, a trial recorded as running may have ended since (its supervisor left its exit
  // record): shown as running with a clock still going, after a kill -9 of the tuner, with no word of
  // what would collect it.
  std::vector<std::optional<adapters::TrialExit>> ended(s.runs.size());
  std::size_t unfollowed = 0, ended_count = 0;
  if (holder == LockHolder::none || holder == LockHolder::command)
    for (std::size_t i = 0; i < s.runs.size(); ++i) {
      const TrialRun& r = s.runs[i];
      if (r.status != RunStatus::running || r.external) continue;
      ++unfollowed;
      try {
        ended[i] = adapters::read_trial_exit(trial_dir(dir, r.id));
      } catch (const std::exception&) {
        // A record being written or damaged: the resume says which.
      }
      ended_count += ended[i] ? 1 : 0;
    }
  if (unfollowed > 0)
    std::printf("no tuner follows the %zu trial%s recorded as running (%zu of them ended since); 'tune resume %s' "
                "re-attaches those still running and collects the others\n",
                unfollowed, unfollowed == 1 ? "" : "s", ended_count, dir.c_str());
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
    std::printf("best: trial %llu, %s = %s, %s%s%s\n", static_cast<unsigned long long>(b->id), s.config.objective.name.c_str(),
                format_double(*b->value).c_str(), tune::to_string(b->config).c_str(),
                s.config.resolution ? " (full resolution)" : "",
                b->imported() ? (" (imported from " + b->imported_from + ")").c_str() : "");
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
    if (const std::optional<double> value = reached_value(*it, s.study.trial(it->id)))
      value_width = std::max(value_width, static_cast<int>(format_double(*value).size()));
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
    const std::optional<double> reached = reached_value(r, t);
    const std::string value = reached ? format_double(*reached) : "-";
    // A running trial's time is how long it has run so far: a cluster job's from when it started on
    // its node; one still in the cluster's queue has not run (its time since submission is on its
    // job line).
    const std::optional<double> started = job_started[static_cast<std::size_t>(it - s.runs.begin())];
    const bool pending_job = started == 0.0;
    const double since_launch = std::max(0.0, now - r.started_at);
    const double running_since = started && *started > 0.0 ? *started : r.started_at;
    const std::optional<adapters::TrialExit>& ended_unseen = ended[static_cast<std::size_t>(it - s.runs.begin())];
    const std::string time = r.exit ? format_duration(r.exit->duration())
                             : ended_unseen ? format_duration(ended_unseen->duration())
                             : r.status == RunStatus::running && running_since > 0.0 && !pending_job
                                 ? format_duration(std::max(0.0, now - running_since))
                                 : "-";
    const std::string level = s.config.resolution && t.level ? level_value(*s.config.resolution, *t.level) : "";
    std::printf("%5llu  %-9s %*s %9s %3zu  %*s%s%s\n", static_cast<unsigned long long>(r.id),
                pending_job                                  ? (r.job.empty() ? "waiting" : "pending")
                : ended_unseen                               ? "ended"
                : r.ended_pruned()                           ? "pruned"
                : r.pruned                                   ? "pruning"
                                                             : to_string(r.status),
                value_width, value.c_str(), time.c_str(), r.attempts, level_width, level.c_str(),
                s.config.resolution ? "  " : "", tune::to_string(t.config).c_str());
    const int indent = 32 + value_width + (s.config.resolution ? level_width + 2 : 0);
    if (r.pruned) std::printf("%*s%s\n", indent, "", r.pruned->reason.c_str());
    if (r.status == RunStatus::failed) {
      // Every line of a reason under the configuration: a second line at the margin broke the table.
      std::string reason = r.failure_reason;
      for (std::size_t at = reason.find('\n'); at != std::string::npos; at = reason.find('\n', at + 1 + indent))
        reason.insert(at + 1, static_cast<std::size_t>(indent), ' ');
      std::printf("%*s%s\n", indent, "", reason.c_str());
    }
    // Which cluster job a running trial is, to match it with squeue (pending or running there).
    if (r.status == RunStatus::running && !r.job.empty())
      std::printf("%*s%s job %s%s\n", indent, "", s.config.executor.kind == "slurm" ? "Slurm" : "executor", r.job.c_str(),
                  pending_job ? (", pending in the queue since its submission " + format_duration(since_launch) + " ago").c_str()
                              : "");
    // No job id yet: while the controller does not answer, such a trial read "running" with a
    // growing run time.
    else if (pending_job)
      std::printf("%*snot submitted yet (sbatch under way, or the Slurm controller does not answer; the tuner "
                  "submits it when it does)\n", indent, "");
    // How a long training run is going: the last value its stdout reported (`val_acc=0.87 step=12`).
    if (r.status == RunStatus::running && !r.external)
      if (const std::string progress = running_trial_progress(trial_dir(dir, r.id), s.config.objective.name);
          !progress.empty())
        std::printf("%*s%s\n", indent, "", progress.c_str());
  }
  return kExitComplete;
}

}  // namespace tune::tuner
