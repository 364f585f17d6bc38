// `tune ask DIR` and `tune ask CAMPAIGN.yaml`: hands out the campaign's next suggestion, for trials
// run from outside and reported with tune tell.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "tune/space/space_yaml.hpp"
#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/campaign_spend.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/event_log.hpp"
#include "tuner/cli/budget_raise.hpp"
#include "tuner/cli/campaign_setup.hpp"
#include "tuner/cli/command_support.hpp"
#include "tuner/cli/output_yaml.hpp"
#include "tuner/cli/commands.hpp"

namespace tune::tuner {

namespace {

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
           " with 'tune tell " + dir.string() + " " + (told.size() == 1 ? std::to_string(told.front()) : "ID") + " VALUE" +
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
    n["config"] = config_for_readers(s.config.space, suggestion->config);
    if (leveled) {
      n["resolution"]["parameter"] = res->parameter;
      n["resolution"]["value"] = level_value(*res, *suggestion->level);
      n["resolution"]["level"] = *suggestion->level;
      n["resolution"].SetStyle(YAML::EmitterStyle::Flow);
    }
    std::printf("%s\n", emit_for_readers(n).c_str());
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
  if (refused_as_a_campaigns_state(file, "ask", "ask")) return kExitUsage;  // read as a campaign file: "unknown key 'kind'"
  CampaignConfig config = load_campaign_file(file);  // a campaign without a command is fine here
  anchor_relative_paths(config, file.parent_path());
  const std::filesystem::path d = dir ? *dir : std::filesystem::path(config.name);
  // One lock from before the campaign is created (or compared with the file) to the suggestion, so
  // that no other command can slip in between. It lives in DIR, which may not exist yet.
  const std::vector<std::filesystem::path> made = make_campaign_directories(d);
  const std::optional<CampaignLock> lock = lock_campaign(d, "ask");
  if (!lock) return kExitLocked;
  Prepared prepared = prepare(config, d, file.string(), "ask", lock, made);
  if (prepared.refused) return *prepared.refused;
  if (prepared.created) note_strategy_and_resolution(config, "ask");
  return hand_out(d, json, std::move(prepared.existing));
}

}  // namespace tune::tuner
