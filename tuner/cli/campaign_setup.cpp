#include "tuner/cli/campaign_setup.hpp"

#include <cstdio>

#include "tune/io/yaml_values.hpp"
#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/campaign_runner.hpp"
#include "tuner/campaign/event_log.hpp"
#include "tuner/campaign/progress.hpp"
#include "tuner/campaign/run_settings.hpp"
#include "tuner/campaign/warm_start.hpp"
#include "tuner/cli/budget_raise.hpp"
#include "tuner/cli/command_support.hpp"
#include "tuner/cli/commands.hpp"

namespace tune::tuner {

namespace {

// The top-level keys of two campaign definitions whose values differ ("command, budget").
std::string differing_keys(const CampaignConfig& a, const CampaignConfig& b) {
  const YAML::Node x = a.to_yaml(), y = b.to_yaml();
  std::string keys;
  for (const char* key : kCampaignKeys)
    if (emit_yaml(x[key]) != emit_yaml(y[key])) keys += (keys.empty() ? "" : ", ") + std::string(key);
  return keys;
}

// A campaign file's budget.trials or budget.cost above the saved campaign's: a raise, as '--trials N'
// and '--cost-budget B' of tune resume and tune ask make (a budget lowered, added or removed is a
// difference, refused).
BudgetRaise file_budget_raise(const CampaignConfig& saved, const CampaignConfig& edited) {
  BudgetRaise raise{.trials_given_as = "budget.trials", .cost_given_as = "budget.cost"};
  if (saved.budget.trials && edited.budget.trials && !edited.budget.trials_defaulted &&
      *edited.budget.trials > *saved.budget.trials)
    raise.trials = edited.budget.trials;
  if (saved.budget.cost && edited.budget.cost && *edited.budget.cost > *saved.budget.cost) raise.cost = edited.budget.cost;
  return raise;
}

// "budget.trials 50 -> 100, budget.cost 600 -> 900"
std::string raise_text(const CampaignConfig& saved, const BudgetRaise& raise) {
  std::string text;
  if (raise.trials) text = "budget.trials " + std::to_string(*saved.budget.trials) + " -> " + std::to_string(*raise.trials);
  if (raise.cost)
    text += (text.empty() ? "" : ", ") + std::string("budget.cost ") + format_short(*saved.budget.cost) + " -> " +
            format_short(*raise.cost);
  return text;
}

// The budgets `config` raises and its run settings, for the campaign in `dir` (whose state is
// `existing`; the caller holds its lock): both, saying so, or neither (an exit code, the refusal said).
std::optional<int> adopt_file_changes(const std::filesystem::path& dir, CampaignState& existing,
                                      const CampaignConfig& config, const std::string& source, const char* command) {
  if (const std::string refusal = run_settings_refusal(dir, existing, config); !refusal.empty()) {
    std::fprintf(stderr, "tune %s: %s changes the executor of %s: %s\n", command, source.c_str(), dir.c_str(),
                 refusal.c_str());
    return kExitError;
  }
  if (const BudgetRaise raise = file_budget_raise(existing.config, config); raise.any()) {
    const std::string raised = raise_text(existing.config, raise);
    if (const std::optional<int> refused = raise_budgets(dir, existing, raise, command)) return refused;
    std::fprintf(stderr, "tune %s: %s continues with the budget of %s: %s\n", command, dir.c_str(), source.c_str(),
                 raised.c_str());
  }
  if (const std::string changes = describe(run_setting_changes(existing.config, config)); !changes.empty()) {
    apply_run_settings(dir, existing, config);  // (refused above if at all)
    std::fprintf(stderr, "tune %s: %s continues with the run settings of %s: %s\n", command, dir.c_str(),
                 source.c_str(), changes.c_str());
  }
  return std::nullopt;
}

}  // namespace

void anchor_relative_paths(CampaignConfig& config, const std::filesystem::path& base) {
  for (WarmStartSource& w : config.warm_start) {
    // Through symbolic links as the system resolves them (`..` of a linked folder is the folder's real
    // parent), so that one directory is always named alike: the saved campaign compares it.
    std::error_code ec;
    const std::filesystem::path from = std::filesystem::weakly_canonical(std::filesystem::absolute(base / w.from, ec), ec);
    if (!ec) w.from = from.string();
    if (w.from.size() > 1 && w.from.back() == '/') w.from.pop_back();  // ../old/ and ../old are one campaign
  }
  for (std::string& arg : config.command) {
    if (arg.empty() || arg.find('{') != std::string::npos || std::filesystem::path(arg).is_absolute()) continue;
    std::error_code ec;
    const std::filesystem::path candidate = std::filesystem::absolute(base / arg, ec);
    if (!ec && std::filesystem::is_regular_file(candidate, ec)) arg = candidate.lexically_normal().string();
  }
}

std::vector<std::filesystem::path> make_campaign_directories(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> made;
  std::error_code ec;
  for (std::filesystem::path p = std::filesystem::absolute(dir / campaign_files::kTrials, ec);
       !ec && !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    made.push_back(p);
    if (p == p.parent_path()) break;
  }
  std::filesystem::create_directories(dir / campaign_files::kTrials);
  return made;
}

void remove_made_directories(const std::filesystem::path& dir, const std::vector<std::filesystem::path>& made) {
  std::error_code ignored;
  // The lock file of a campaign that was never made (DIR holds no state: the caller refused it).
  if (!has_state(dir)) std::filesystem::remove(dir / campaign_files::kLock, ignored);
  for (const std::filesystem::path& p : made) std::filesystem::remove(p, ignored);  // deepest first; only if empty
}

Prepared prepare(const CampaignConfig& config, const std::filesystem::path& dir, const std::string& source,
                 const char* command, const std::optional<CampaignLock>& lock,
                 std::vector<std::filesystem::path> made_directories) {
  const bool take_lock = !lock && !has_state(dir);
  if (take_lock) made_directories = make_campaign_directories(dir);  // the lock file lives in DIR
  const std::optional<CampaignLock> own_lock = take_lock ? lock_campaign(dir, command) : std::optional<CampaignLock>();
  if (take_lock && !own_lock) return {.refused = kExitLocked};
  if (!has_state(dir)) {  // (under the lock: no one else can write one now)
    CampaignState fresh = CampaignState::create(config, now_seconds());
    std::vector<WarmStartOutcome> warm;
    try {
      warm = import_warm_start(fresh);
    } catch (const CampaignError& e) {
      // --warm-start takes a source only: the advice to give `fixed` values needs a campaign file.
      const bool inline_form = source == "the command line" && std::string(e.what()).find("fixed:") != std::string::npos;
      std::fprintf(stderr, "tune %s: %s: %s%s\n", command, source.c_str(), e.what(),
                   inline_form ? " (fixed values are given in a campaign file: warm_start: {from: DIR, fixed: {...}})"
                               : "");
      // What was made for the campaign is not left behind; a directory that was there stays.
      remove_made_directories(dir, made_directories);
      return {.refused = kExitError};
    }
    save_state(dir, fresh);
    EventLog events(dir / campaign_files::kEvents);
    std::size_t imported = 0;
    for (const WarmStartOutcome& w : warm) {
      imported += w.imported;
      std::fprintf(stderr, "tune %s: warm start: %s\n", command, describe(w).c_str());
      events.write("warm_start", {{"from", json_string(w.from)},
                                  {"imported", json_number(static_cast<std::uint64_t>(w.imported))},
                                  {"trials", json_number(static_cast<std::uint64_t>(w.trials))}});
    }
    // Every imported result enters the model, whose fit grows with the cube of its size
    // (bench/results/warm_start_import_scale.txt: ei's first ask 0.17 s after 1000, 1.5 s after 3000,
    // 9.1 s after 6000, and each later ask 0.47 s and 1.6 s at the last two).
    if (imported > 2000 && config.strategy != "random" && config.strategy != "sobol")
      std::fprintf(stderr,
                   "tune %s: note: all %zu imported results enter %s's model, whose fit grows with the cube of its "
                   "size (ei's asks took 0.5 s each after 3000 results and 1.6 s after 6000, the first 1.5 s and "
                   "9 s); if they grow slow, import the results of the region that matters\n",
                   command, imported, config.strategy.c_str());
    return {.created = true};
  }
  CampaignState existing = load_state(dir);
  // How the trials run (workers, time limits, the executor's job options) may change between
  // sessions, and the budgets may be raised; what the campaign searches may not change.
  CampaignConfig expected = with_run_settings(existing.config, config);
  if (const BudgetRaise raise = file_budget_raise(existing.config, config); raise.any()) {
    if (raise.trials) expected.budget.trials = raise.trials;
    if (raise.cost) expected.budget.cost = raise.cost;
  }
  if (const std::string keys = differing_keys(expected, config); !keys.empty()) {
    std::string again = std::string(command) == "ask" ? "ask it with 'tune ask " + dir.string() + "'"
                                                     : "resume it with 'tune resume " + dir.string() + "'";
    if (keys.find("budget") != std::string::npos) {
      // The usual lowering: the file as it was, after '--trials N' raised the campaign's budget.
      bool raised = false;
      try {
        raised = read_text_file(dir / campaign_files::kEvents).find("\"event\": \"budget_raised\"") != std::string::npos;
      } catch (const StateError&) {  // no log to tell: the general advice stands
      }
      again += " (" + describe(budget_changes(existing.config, config)) + ": a campaign file may raise budget.trials "
               "and budget.cost, not lower, add or remove them; '--trials N' sets a trial budget of N in all, "
               "'--cost-budget B' a cost budget of B" +
               (raised ? "; the campaign's budget was raised after it was made: write that budget in the file, or "
                         "give the directory"
                       : "") +
               ")";
    }
    if (keys.find("enqueue") != std::string::npos)
      again += " ('tune enqueue " + dir.string() + " NAME=VALUE ...' adds a configuration to run)";
    std::fprintf(stderr,
                 "tune %s: %s already holds the campaign '%s', which differs from the campaign '%s' of %s (in: %s); %s, "
                 "or choose another directory with --dir\n",
                 command, dir.c_str(), existing.config.name.c_str(), config.name.c_str(), source.c_str(), keys.c_str(),
                 again.c_str());
    return {.refused = kExitError};
  }
  if (file_budget_raise(existing.config, config).any() || !run_setting_changes(existing.config, config).empty()) {
    const std::optional<CampaignLock> own = lock ? std::optional<CampaignLock>() : lock_campaign(dir, command);
    if (!lock && !own) return {.refused = kExitLocked};
    existing = load_state(dir);  // as it is under the lock
    if (const std::optional<int> refused = adopt_file_changes(dir, existing, config, source, command))
      return {.refused = refused};
  }
  return {.existing = std::move(existing)};
}

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

}  // namespace tune::tuner
