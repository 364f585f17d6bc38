// `tune tell DIR ID VALUE` (or --failed REASON): the result of a trial handed out by tune ask.
#include <cmath>
#include <cstdio>

#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/event_log.hpp"
#include "tuner/cli/commands.hpp"

namespace tune::tuner {

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

}  // namespace

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
    const TrialRun& r = s.runs[id];
    const std::string recorded =
        t.status == TrialStatus::complete ? "complete, with " + s.config.objective.name + " = " + format_double(*t.value)
        : r.ended_pruned()
            ? "pruned at step " + std::to_string(r.pruned->step) + " with " + s.config.objective.name + " = " +
                  format_double(r.pruned->value)
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

}  // namespace tune::tuner
