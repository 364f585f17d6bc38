#pragma once
// The subcommands of `tune`. Each returns the process exit code (see campaign_runner.hpp).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tuner/campaign/campaign_config.hpp"
#include "tuner/campaign/campaign_lock.hpp"
#include "tuner/campaign/campaign_runner.hpp"

namespace tune::tuner {

struct SessionFlags {
  bool quiet = false;
  bool wait_on_stop = false;
  bool detach = false;
};

// The inline form's settings (tune run --name ... -- command).
struct InlineSettings {
  std::string name;
  std::size_t trials = 50;
  bool trials_given = false;          // --trials on the command line (with a cost budget: a limit too)
  bool workers_given = false;         // --workers on the command line
  bool strategy_given = false;        // --strategy on the command line (else cmets with a resolution)
  std::optional<double> cost_budget;  // seconds of trial run time (a NAME~levels(...) resolution)
  std::size_t workers = 1;
  std::string objective = "objective";
  bool maximize = false;
  std::string strategy = kDefaultStrategy;
  std::optional<std::string> timeout;
  std::optional<std::string> pruning;  // median, or a percentile (25 keeps the best quarter)
  std::vector<std::string> warm_start;  // earlier campaigns' directories (a new campaign's definition)
  std::uint64_t seed = 0;
};

// The inline form's options and the campaign keys they set, one table for both directions: `tune
// run` refuses them beside a campaign file (the file is the campaign's one definition) naming the
// key, and an error the inline form's campaign has in such a key is told as the option. `value`
// writes the option's setting as typed (null for a flag without one).
struct InlineOption {
  const char* option;
  const char* key;
  const char* note;  // added to the refusal
  std::string (*value)(const InlineSettings&);
};
const std::vector<InlineOption>& inline_options();

int run_campaign_file(const std::filesystem::path& file, std::optional<std::filesystem::path> dir, const SessionFlags& flags);
int run_inline(const InlineSettings& settings, const std::vector<std::string>& command,
               std::optional<std::filesystem::path> dir, const SessionFlags& flags);
// --trials N and --cost-budget B of resume and ask: a campaign that spent its budget continues with
// a larger one (N trials in all, B cost units in all).
struct BudgetRaise {
  std::optional<std::size_t> trials;
  std::optional<double> cost;
  bool any() const { return trials || cost; }
  // How the user gave them, as a refusal names them: the options, or a campaign file's keys.
  const char* trials_given_as = "--trials";
  const char* cost_given_as = "--cost-budget";
};
// With a raise: first raise the budgets to those totals (more than the present ones).
int resume(const std::filesystem::path& dir, const SessionFlags& flags, const BudgetRaise& raise = {});
int init(const std::filesystem::path& file);
// last: list only the most recent trials (by id), the summary above them unchanged (SIZE_MAX: all);
// nullopt: all of a campaign of up to kStatusListsAllUpTo trials, else the kStatusListsByDefault
// most recent, with a line saying how many are left out and how to list them.
inline constexpr std::size_t kStatusListsAllUpTo = 50;
inline constexpr std::size_t kStatusListsByDefault = 20;
int status(const std::filesystem::path& dir, std::optional<std::size_t> last = std::nullopt);
int best(const std::filesystem::path& dir, bool json);
// With a raise: first raise the budgets to those totals (see resume).
int ask(const std::filesystem::path& dir, bool json, const BudgetRaise& raise = {});
// `tune ask campaign.yaml [--dir DIR]`: creates the campaign as `tune run` would (./<name>/ or DIR),
// without launching anything, or finds it there, then hands out its next suggestion. The file may
// leave out `command` (the trials are run from outside).
int ask_campaign_file(const std::filesystem::path& file, std::optional<std::filesystem::path> dir, bool json);
// `cost`: what the trial cost (seconds of run time), for campaigns whose resolution has measured costs.
int tell(const std::filesystem::path& dir, std::uint64_t id, const std::optional<std::string>& value,
         const std::optional<std::string>& failure, std::optional<double> cost = std::nullopt);
int stop(const std::filesystem::path& dir);
// `tune export`: every trial as a table, `format` csv or jsonl, to stdout or atomically to `output`.
int export_trials(const std::filesystem::path& dir, const std::string& format,
                  const std::optional<std::filesystem::path>& output);

// `tune enqueue DIR NAME=VALUE ...`: a configuration to run before the strategy's next suggestion.
int enqueue(const std::filesystem::path& dir, const std::vector<std::string>& assignments);

// Whether DIR holds a campaign; if not, says why on stderr for `tune <command>`.
bool holds_campaign(const std::filesystem::path& dir, const char* command);
// Whether `file` is a file inside a campaign's directory (its state.yaml, a trial's record), given
// where a campaign was expected; if so, names that directory on stderr.
bool refused_as_a_campaigns_file(const std::filesystem::path& file, const char* command);
// Whether `file`, given as a campaign file, is a campaign's state.yaml; if so, names the campaign's
// directory and `suggested` command on stderr. (Only the state: a campaign file may well sit in
// the directory its campaign runs in, `tune run c.yaml --dir .`.)
bool refused_as_a_campaigns_state(const std::filesystem::path& file, const char* command, const char* suggested);

// A number typed on the command line (`tune tell`'s value, `tune enqueue lr=...`): the whole text
// as parse_number_text reads it (tune/io/number_text.hpp, the trial protocol's syntax). Without one,
// `problem` says why: "is not a number", or for 1e400 that it is too large for a double (a value too
// small for one, 1e-400, is the double nearest to it, 0).
std::optional<double> parse_number(const std::string& text, std::string& problem);
// DIR's lock for a command that changes the campaign (waits behind other commands, not a tuner);
// nothing, with the refusal on stderr, when it cannot be had.
std::optional<CampaignLock> lock_campaign(const std::filesystem::path& dir, const char* command);

}  // namespace tune::tuner
