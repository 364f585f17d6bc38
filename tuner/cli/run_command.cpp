// `tune run CAMPAIGN.yaml` and the inline form `tune run --name ... -- command`: makes the campaign
// (or finds it in its directory) and runs a tuner session on it.
#include <cstdio>

#include "tune/adapters/command/inline_space.hpp"
#include "tune/io/yaml_values.hpp"
#include "tune/space/space_yaml.hpp"
#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/run_settings.hpp"
#include "tuner/cli/campaign_setup.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/tuner_session.hpp"

namespace tune::tuner {

namespace {

std::string quoted(const std::string& text) { return "'" + text + "'"; }

// An error in the campaign the inline form built, told as the command-line option that set the
// field: the user never saw the YAML whose line and column the message would cite.
std::string inline_option_error(const CampaignError& error, const InlineSettings& s) {
  const std::string& field = error.field();
  std::string option;
  for (const InlineOption& o : inline_options())
    // The option's key or a field inside it (strategy.epsilon, pruning.percentile).
    if (o.value && (field == o.key || field.rfind(std::string(o.key) + ".", 0) == 0))
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
      {"--pruning", "pruning", "", [](const InlineSettings& s) { return quoted(s.pruning.value_or("")); }},
      {"--seed", "seed", "", [](const InlineSettings& s) { return std::to_string(s.seed); }},
      {"--warm-start", "warm_start", "",
       [](const InlineSettings& s) {
         std::string dirs;
         for (const std::string& d : s.warm_start) dirs += (dirs.empty() ? "" : " ") + quoted(d);
         return dirs;
       }},
  };
  return options;
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
  if (refused_as_a_campaigns_state(file, "run", "resume")) return kExitUsage;  // its state.yaml: "unknown key 'kind'"
  CampaignConfig config = load_campaign_file(file);
  if (refuse_without_command(config, file.string(), "run")) return kExitUsage;
  anchor_relative_paths(config, file.parent_path());
  const std::filesystem::path d = dir ? *dir : std::filesystem::path(config.name);
  if (refuse_unstartable_command(config, d, file.string(), "run")) return kExitError;
  if (const std::optional<int> refused = prepare_run(config, d, file.string(), flags)) return *refused;
  return drive(d, flags, "run");
}

namespace {

// The inline form's campaign on a directory that holds it already: the run settings and budgets the
// campaign has, but for the options given on this command line. An option left out is not a change
// back to its default (a re-run without --trials raised the budget to 50 trials, one without
// --workers went back to one worker).
CampaignConfig with_options_given(const CampaignConfig& typed, const CampaignConfig& saved, const InlineSettings& s) {
  CampaignConfig c = with_run_settings(typed, saved);
  c.budget = saved.budget;
  if (s.workers_given) c.executor.workers = typed.executor.workers;
  if (s.timeout) c.executor.timeout_seconds = typed.executor.timeout_seconds;
  if (s.pruning) c.pruning = typed.pruning;
  if (s.trials_given) c.budget.trials = typed.budget.trials;
  if (s.cost_budget) c.budget.cost = typed.budget.cost;
  // A warm start happened when the campaign was made: a re-run that leaves it out keeps it.
  if (s.warm_start.empty()) c.warm_start = saved.warm_start;
  return c;
}

}  // namespace

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
  // `--pruning median`, a number (the percentile rule, whose range the campaign's check refuses), or
  // `none`: no pruning (for a campaign continued with the inline form, which keeps an option left out).
  if (s.pruning) {
    const std::string& p = *s.pruning;
    if (p == "median") {
      n["pruning"] = p;
    } else if (p == "none") {
      // (no key: the campaign prunes nothing)
    } else if (double_from_text(p)) {
      n["pruning"]["rule"] = "percentile";
      n["pruning"]["percentile"] = p;
    } else {
      std::fprintf(stderr, "tune run: --pruning '%s': expected median, a percentile counted from the best (a "
                           "number in (0, 100]: 25 keeps the best quarter), or none\n", p.c_str());
      return kExitUsage;
    }
  }
  n["seed"] = s.seed;
  for (const std::string& from : s.warm_start) n["warm_start"].push_back(from);
  YAML::Emitter e;
  e << n;
  CampaignConfig config;
  try {
    const YAML::Node definition = YAML::Load(e.c_str());
    config = campaign_from_yaml(definition, "command line");
    refuse_a_name_that_is_no_directory(definition, config);
  } catch (const CampaignError& error) {
    std::fprintf(stderr, "tune run: %s\n", inline_option_error(error, s).c_str());
    return kExitUsage;
  }
  anchor_relative_paths(config, std::filesystem::current_path());
  const std::filesystem::path d = dir ? *dir : std::filesystem::path(config.name);
  if (has_state(d)) config = with_options_given(config, load_state(d).config, s);
  if (refuse_unstartable_command(config, d, "the command line", "run")) return kExitError;
  if (const std::optional<int> refused = prepare_run(config, d, "the command line", flags)) return *refused;
  return drive(d, flags, "run");
}

}  // namespace tune::tuner
