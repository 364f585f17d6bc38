// tune: tune the hyperparameters of any command with Gaussian-process bandits.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <vector>

#include "tune/adapters/executor/supervisor.hpp"
#include "tune_build_version.hpp"
#include "tuner/campaign/campaign_config.hpp"
#include "tuner/cli/commands.hpp"

namespace {

constexpr const char* kExitCodes = R"(
Exit codes: 0 the campaign finished (budget spent or strategy converged); 1 error (bad campaign file,
damaged state, I/O; tune stop when no tuner runs); 2 bad command line (also: a DIR that holds no campaign; run of a directory or of a missing
file; run or resume of a campaign without a command; tell of a trial the tuner launched, told already or unknown); 3 stopped
by a signal or 'tune stop' (resume continues); 4 stopped after budget.failures failed trials; 5
another tuner drives the campaign, or an ask/tell waited in vain for another (60 s; the environment
variable TUNE_LOCK_WAIT, a duration such as 5s or 2m, sets how long); 6 (tune ask) nothing to hand out now: results of trials handed out are awaited; tell them,
then ask again (tune ask exits 0 with nothing handed out once the campaign is finished).)";

// CLI11 reads `--trials -1` into a std::size_t as 2^64 - 1 (no limit at all), and clamps a number
// past 2^64 - 1 to it (`tune ask DIR --trials 99999999999999999999999` set budget.trials to
// 18446744073709551615 without a word), so counts are checked as typed: digits only, and a value
// that fits.
// A cost or cost budget as typed: CLI11's own refusal of `--cost-budget 10m` read "Could not convert:
// --cost-budget = 10m". Costs are plain numbers (seconds when measured, else the declared units).
std::string plain_number(const std::string& v) {
  char* end = nullptr;
  (void)std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size())
    return "expected a plain number (seconds of trial run time when costs are measured, else the units of "
           "resolution.cost), not '" + v + "'";
  return {};
}

std::string whole_number(const std::string& v) {
  if (v.empty() || !std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); }))
    return "expected a whole number, not '" + v + "'";
  std::uint64_t n = 0;
  if (std::from_chars(v.data(), v.data() + v.size(), n).ec == std::errc::result_out_of_range)
    return "'" + v + "' is too large (the largest is " + std::to_string(std::numeric_limits<std::uint64_t>::max()) + ")";
  return {};
}

// "tune status": who an error line of the command that ran (or was being parsed) comes from; "tune"
// before any is known. A script running several commands could not tell which one a bare "tune: ..."
// came from.
std::string command_name(const CLI::App& app) {
  std::string name = "tune";
  for (const CLI::App* sub : app.get_subcommands()) name += " " + sub->get_name();
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tune::tuner;
  // The supervisor of one trial: an internal mode, parsed by hand so that the trial's own arguments
  // are never interpreted.
  if (argc > 1 && std::strcmp(argv[1], "__supervise") == 0) return tune::adapters::supervise_main(argc - 1, argv + 1);

  CLI::App app{"tune: tune the hyperparameters of any command with Gaussian-process bandits.\n"
               "A trial runs your command with a configuration and reports a value on stdout\n"
               "(`objective=0.93`); tune decides what to run next and checkpoints every event."};
  app.footer(kExitCodes);
  // Which build a bug report is about (it was "A subcommand is required").
  app.set_version_flag("--version", std::string("tune ") + TUNE_VERSION + " (" + TUNE_BUILD + ")");
  app.require_subcommand(1);
  // A bad option of a command is named by the command ("tune run: --trials: expected ..."), as its
  // other errors are.
  app.failure_message(
      [](const CLI::App* a, const CLI::Error& e) { return command_name(*a) + ": " + CLI::FailureMessage::simple(a, e); });

  SessionFlags flags;
  std::optional<std::filesystem::path> dir;
  auto add_session_flags = [&](CLI::App* sub) {
    sub->add_flag("-q,--quiet", flags.quiet, "no progress output");
    sub->add_flag("--wait-on-stop", flags.wait_on_stop,
                  "on Ctrl-C / SIGTERM / 'tune stop', let running trials finish (default: terminate them; they run again on "
                  "resume); Slurm jobs still pending are cancelled");
    sub->add_flag("--detach", flags.detach, "run in the background (log and pid file in the campaign directory)");
  };

  // run
  std::string campaign_file;
  InlineSettings inline_settings;
  std::vector<std::string> inline_command;
  CLI::App* run = app.add_subcommand(
      "run", "run a campaign from a file, or inline: tune run --name N [--trials N --workers N ...] -- "
             "COMMAND --lr~'loguniform(1e-5,1)' --layers~'int(1,8)' --act~'choice(relu,tanh)'. A directory that "
             "holds the campaign already is continued, with the file's (or the options') workers, timeouts, "
             "executor options and raised budgets if they changed (an inline option left out keeps the campaign's "
             "value)");
  run->add_option("campaign", campaign_file, "campaign file (see 'tune init')");
  run->add_option("--dir", dir, "campaign directory (default: ./<name>)");
  run->add_option("--name", inline_settings.name, "inline form: campaign name");
  // Defaults in words, not CLI11's "=50": they are a new campaign's, and a campaign continued keeps
  // its own value for an option left out.
  run->add_option("--trials", inline_settings.trials, "inline form: number of trials (a new campaign's default: 50)")
      ->check(whole_number);
  run->add_option("--cost-budget", inline_settings.cost_budget,
                  "inline form: the budget in seconds of trial run time, with a resolution (NAME~'levels(1,3,9,27)': "
                  "the trial gets each level's value as {NAME}, and cmets chooses the level); then no trial limit "
                  "unless --trials is given")
      ->type_name("SECONDS")
      ->check(plain_number);
  run->add_option("--workers", inline_settings.workers, "inline form: trials at a time (a new campaign's default: 1)")
      ->check(whole_number);
  run->add_option("--objective", inline_settings.objective,
                  "inline form: the key the trial prints (a new campaign's default: objective)");
  run->add_flag("--maximize", inline_settings.maximize, "inline form: maximise the objective (default: minimise)");
  run->add_option("--strategy", inline_settings.strategy,
                  "inline form: ei, ucb, random, sobol, gpoo or bnb; cmets chooses each trial's resolution level, "
                  "which an argument NAME~'levels(1,3,9,27)' declares (without one, cmets is refused; cmes runs every "
                  "trial at the last); "
                  "a new campaign's default: ei, or cmets with such an argument");
  run->add_option("--timeout", inline_settings.timeout, "inline form: per-trial time limit, e.g. 10m");
  run->add_option("--pruning", inline_settings.pruning,
                  "inline form: stop a trial whose values along the way (stdout lines such as 'loss=0.4 step=3') are "
                  "worse than the median of the completed trials' at the same step ('median'), or outside a "
                  "percentile from the best (a number: 25 keeps the best quarter); Optuna's MedianPruner / "
                  "PercentilePruner, after 5 completed trials; 'none' stops pruning in a campaign continued")
      ->type_name("median|PERCENTILE|none");
  run->add_option("--warm-start", inline_settings.warm_start,
                  "inline form: an earlier campaign's directory, whose complete results the new campaign starts from "
                  "(its model takes them in; no budget counts them): after widening the space, say; may be given "
                  "more than once; a campaign file's warm_start: also takes values of parameters only one campaign "
                  "varies")
      ->type_name("DIR")
      ->allow_extra_args(false);
  run->add_option("--seed", inline_settings.seed,
                  "inline form: seed of every random choice (recorded in the campaign; a new campaign's default: 0)")
      ->check(whole_number);

  add_session_flags(run);

  std::filesystem::path campaign_dir;
  CLI::App* resume_cmd = app.add_subcommand("resume", "continue a campaign after a stop or a crash");
  resume_cmd->add_option("dir", campaign_dir, "campaign directory")->required();
  std::optional<std::size_t> resume_trials;
  resume_cmd->add_option("--trials", resume_trials,
                         "raise budget.trials to N trials in all (more than the campaign has), e.g. to continue a "
                         "campaign that spent its trial budget")->type_name("N")->check(whole_number);
  std::optional<double> resume_cost;
  resume_cmd->add_option("--cost-budget", resume_cost,
                         "raise budget.cost to B in all (more than the present budget), e.g. to continue a campaign "
                         "that spent its cost budget")->type_name("B")->check(plain_number);
  add_session_flags(resume_cmd);

  std::filesystem::path init_file = "campaign.yaml";
  CLI::App* init_cmd = app.add_subcommand("init", "write a commented example campaign file");
  init_cmd->add_option("file", init_file, "where to write it")->capture_default_str();

  bool json = false;
  CLI::App* status_cmd = app.add_subcommand(
      "status", "trials, best so far, model, failures; with a resolution, spend per level and how well "
                "cheaper runs predict full ones");
  status_cmd->add_option("dir", campaign_dir, "campaign directory")->required();
  std::optional<std::size_t> status_last;
  bool status_all = false;
  CLI::Option* last_option =
      status_cmd
          ->add_option("--last", status_last,
                       "list only the N most recent trials; the summary still counts them all. Default: every "
                       "trial of a campaign of up to " + std::to_string(tune::tuner::kStatusListsAllUpTo) +
                           ", the " + std::to_string(tune::tuner::kStatusListsByDefault) +
                           " most recent of a larger one, and a line saying how many are not shown")
          ->type_name("N")
          ->check(whole_number);
  status_cmd->add_flag("--all", status_all, "list every trial, however many")->excludes(last_option);
  CLI::App* best_cmd = app.add_subcommand("best", "the best result so far and, where the strategy has a model (ei, ucb, cmets, cmes, gpoo), the configuration it recommends with its estimate (mean and sd): the best of many noisy results is optimistic");
  best_cmd->add_option("dir", campaign_dir, "campaign directory")->required();
  best_cmd->add_flag("--json", json, "JSON instead of YAML");

  CLI::App* ask_cmd = app.add_subcommand(
      "ask", "hand out the next configuration (external orchestration): tune ask DIR, or tune ask campaign.yaml "
             "[--dir DIR], which first creates the campaign as 'tune run' would, without running a trial (a file "
             "meant only for ask/tell may leave out 'command'); 'tune tell DIR ID VALUE' reports the result. "
             "Exits 0 with a trial on stdout; 0 with nothing on stdout when the campaign is finished; 6 with "
             "nothing when it waits for results (of trials handed out and not yet told, or a first measured "
             "cost), with the reason on stderr: tell them, then ask again");
  ask_cmd->add_option("campaign", campaign_dir, "campaign directory, or campaign file")->required();
  ask_cmd->add_option("--dir", dir, "with a campaign file: the campaign directory (default: ./<name>)");
  ask_cmd->add_flag("--json", json, "JSON instead of YAML");
  std::optional<std::size_t> ask_trials;
  ask_cmd->add_option("--trials", ask_trials,
                      "with a campaign directory: raise budget.trials to N trials in all (more than the campaign has) "
                      "first, e.g. to continue a campaign that spent its trial budget")
      ->type_name("N")
      ->check(whole_number);
  std::optional<double> ask_cost;
  ask_cmd->add_option("--cost-budget", ask_cost,
                      "with a campaign directory: raise budget.cost to B in all (more than the present budget) first, "
                      "e.g. to continue a campaign that spent its cost budget")
      ->type_name("B")
      ->check(plain_number);
  std::string tell_id;  // parsed here: CLI11 read -1 as 2^64 - 1 and clamped ids past 2^64
  std::optional<std::string> tell_value, tell_failure;
  CLI::App* tell_cmd = app.add_subcommand(
      "tell", "report the result of a configuration handed out by 'tune ask' (not of a trial 'tune run' launched: "
              "its supervisor records the result, and 'tune resume' collects it)");
  tell_cmd->add_option("dir", campaign_dir, "campaign directory")->required();
  tell_cmd->add_option("id", tell_id, "trial id (as tune ask printed it)")->required();
  tell_cmd->add_option("value", tell_value, "objective value");
  tell_cmd->add_option("--failed", tell_failure, "report the trial as failed, with this reason");
  std::optional<double> tell_cost;
  tell_cmd->add_option("--cost", tell_cost,
                       "what the trial cost in seconds (campaigns with a resolution whose costs are measured)")
      ->check(plain_number);

  CLI::App* stop_cmd = app.add_subcommand("stop", "ask a running tuner to stop gracefully (it checkpoints first)");
  stop_cmd->add_option("dir", campaign_dir, "campaign directory")->required();

  std::vector<std::string> enqueue_assignments;
  CLI::App* enqueue_cmd = app.add_subcommand(
      "enqueue", "run this configuration before the strategy's next suggestion (at the next tune ask, or when tune "
                 "resume continues the campaign): tune enqueue DIR lr=0.001 layers=2 act=relu; with a resolution, "
                 "epochs=3 picks its level (default: the full run). Not while a tuner runs: stop it, enqueue, resume");
  enqueue_cmd->add_option("dir", campaign_dir, "campaign directory")->required();
  enqueue_cmd->add_option("assignments", enqueue_assignments, "NAME=VALUE for every parameter of the space")
      ->required();

  std::string export_format = "csv";
  std::optional<std::filesystem::path> export_output;
  CLI::App* export_cmd = app.add_subcommand(
      "export", "every trial as a table for pandas, R or a spreadsheet: id, status, value, (level, resolution, "
                "cost,) times and duration, attempts, source, external, failure, then param.<name> per parameter "
                "and metric.<name> per extra reported metric; read-only, also while a tuner runs");
  export_cmd->add_option("dir", campaign_dir, "campaign directory")->required();
  export_cmd->add_option("--format", export_format,
                         "csv (RFC 4180, a header row, times in ISO 8601 UTC) or jsonl (one JSON object per trial, "
                         "parameters under config, metrics under metrics, with the intermediate values)")
      ->capture_default_str();
  export_cmd->add_option("-o,--output", export_output, "write to this file (atomically) instead of stdout (- is stdout); not one of the campaign's own files");

  // Each command's own exit codes: every help ended with run's ("0 the campaign finished"), which is
  // not what 0 means for init or export. run, resume and ask keep the whole list.
  const char* kLockCode = "; 5 another tuner drives the campaign, or the lock was waited for in vain (TUNE_LOCK_WAIT)";
  init_cmd->footer("Exit codes: 0 the file was written; 1 it was not (a file or directory is there already, its folder "
                   "is missing, an I/O error); 2 bad command line.");
  status_cmd->footer("Exit codes: 0 shown; 1 a damaged state or an I/O error; 2 bad command line, or DIR holds no "
                     "campaign.");
  best_cmd->footer("Exit codes: 0 shown; 1 no best result yet (the message says why), a damaged state or an I/O error; "
                   "2 bad command line, or DIR holds no campaign.");
  tell_cmd->footer(std::string("Exit codes: 0 recorded; 1 a damaged state or an I/O error; 2 bad command line or value, "
                               "or a trial the tuner launched, told already or unknown") + kLockCode + ".");
  stop_cmd->footer("Exit codes: 0 the tuner was asked to stop; 1 no tuner runs (or it could not be signalled); 2 bad "
                   "command line, or DIR holds no campaign.");
  enqueue_cmd->footer(std::string("Exit codes: 0 enqueued; 1 a damaged state or an I/O error; 2 bad command line or "
                                  "configuration, or a strategy that takes none (gpoo, bnb)") + kLockCode +
                      " (stop it, enqueue, resume).");
  export_cmd->footer("Exit codes: 0 written; 1 a damaged state or an I/O error; 2 bad command line (an unknown --format; "
                     "an -o that is a campaign's file, a directory or a device), or DIR holds no campaign.");

  // Everything after `--` is the inline form's command, taken verbatim (never parsed as options).
  int parsed_argc = argc;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--") == 0) {
      parsed_argc = i;
      inline_command.assign(argv + i + 1, argv + argc);
      break;
    }
  // A mistyped command: CLI11 would say "A subcommand is required", as if none had been given.
  if (parsed_argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "tune: unknown command '%s'; the commands are %s (tune --help explains each)\n", argv[1],
                   names.c_str());
      return kExitUsage;
    }
  }
  // Only tune run takes a command after `--`. For the others `--` just ends the options, as usual
  // (`tune tell DIR 0 -- -.5`): CLI11 parses what follows it as their arguments, and a command with no
  // place for it refuses it. It was kept as an inline command and silently dropped.
  std::vector<char*> parsed_args(argv, argv + parsed_argc);
  if (parsed_argc < argc && !(parsed_argc > 1 && std::strcmp(argv[1], "run") == 0)) {
    parsed_args.assign(argv, argv + argc);
    inline_command.clear();
  }
  try {
    app.parse(static_cast<int>(parsed_args.size()), parsed_args.data());
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    // CLI11 takes -.5 (not -0.5, which it knows for a number) for an option, and refuses it as an
    // argument not expected: say how to give it as a value.
    std::string problem;
    for (std::size_t i = 2; dynamic_cast<const CLI::ExtrasError*>(&e) && i < parsed_args.size(); ++i)
      if (std::strncmp(parsed_args[i], "-.", 2) == 0 && parse_number(parsed_args[i], problem)) {
        std::fprintf(stderr, "tune %s: '%s' was read as an option: write it -0%s, or give the values after '--' (tune %s ... -- %s)\n",
                     argv[1], parsed_args[i], parsed_args[i] + 1, argv[1], parsed_args[i]);
        break;
      }
    return rc == 0 ? 0 : kExitUsage;
  }

  try {
    if (*run) {
      if (!campaign_file.empty() && !inline_command.empty()) {
        std::fprintf(stderr, "tune run: give a campaign file or an inline command after --, not both\n");
        return kExitUsage;
      }
      if (!campaign_file.empty()) {
        bool refused = false;
        for (const InlineOption& o : inline_options())
          if (run->count(o.option) > 0) {
            std::fprintf(stderr, "tune run: %s is an option of the inline form (a command after --); with a campaign "
                                 "file, set '%s' in %s instead%s\n",
                         o.option, o.key, campaign_file.c_str(), o.note);
            refused = true;
          }
        if (refused) return kExitUsage;
        return run_campaign_file(campaign_file, dir, flags);
      }
      if (inline_command.empty()) {
        std::fprintf(stderr, "tune run: give a campaign file (see 'tune init') or an inline command after --\n");
        return kExitUsage;
      }
      if (inline_settings.name.empty()) {
        std::fprintf(stderr, "tune run: the inline form needs --name\n");
        return kExitUsage;
      }
      inline_settings.trials_given = run->count("--trials") > 0;
      inline_settings.workers_given = run->count("--workers") > 0;
      inline_settings.strategy_given = run->count("--strategy") > 0;
      return run_inline(inline_settings, inline_command, dir, flags);
    }
    if (*resume_cmd) return tune::tuner::resume(campaign_dir, flags, {resume_trials, resume_cost});
    if (*init_cmd) return tune::tuner::init(init_file);
    if (*status_cmd)
      return tune::tuner::status(campaign_dir, status_all ? std::optional(std::numeric_limits<std::size_t>::max()) : status_last);
    if (*best_cmd) return tune::tuner::best(campaign_dir, json);
    if (*enqueue_cmd) return tune::tuner::enqueue(campaign_dir, enqueue_assignments);
    if (*export_cmd) return tune::tuner::export_trials(campaign_dir, export_format, export_output);
    if (*ask_cmd) {
      std::error_code ec;
      if (std::filesystem::is_regular_file(campaign_dir, ec)) {
        if (ask_trials || ask_cost) {
          std::fprintf(stderr, "tune ask: --trials and --cost-budget go with a campaign directory (tune ask DIR "
                               "--trials N); with a campaign file, its budget is the budget\n");
          return kExitUsage;
        }
        return ask_campaign_file(campaign_dir, dir, json);
      }
      if (dir) {
        std::fprintf(stderr, "tune ask: --dir goes with a campaign file (tune ask campaign.yaml --dir DIR); %s is not "
                             "a file\n", campaign_dir.c_str());
        return kExitUsage;
      }
      return tune::tuner::ask(campaign_dir, json, {ask_trials, ask_cost});
    }
    if (*tell_cmd) {
      if (!tell_value == !tell_failure) {
        std::fprintf(stderr, "tune tell: give either a value or --failed REASON\n");
        return kExitUsage;
      }
      // `tune status` shows the reason as the trial's failure: an empty one says nothing of it.
      if (tell_failure && tell_failure->find_first_not_of(" \t\r\n") == std::string::npos) {
        std::fprintf(stderr, "tune tell: --failed needs a reason, e.g. --failed 'out of memory'\n");
        return kExitUsage;
      }
      std::uint64_t id = 0;
      const auto [end, ec] = std::from_chars(tell_id.data(), tell_id.data() + tell_id.size(), id);
      if (tell_id.empty() || ec != std::errc() || end != tell_id.data() + tell_id.size()) {
        std::fprintf(stderr, "tune tell: '%s' is not a trial id (a whole number from 0, as tune ask printed it)\n",
                     tell_id.c_str());
        return kExitUsage;
      }
      return tune::tuner::tell(campaign_dir, id, tell_value, tell_failure, tell_cost);
    }
    if (*stop_cmd) return tune::tuner::stop(campaign_dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", command_name(app).c_str(), e.what());
    return kExitError;
  }
  return kExitUsage;
}
