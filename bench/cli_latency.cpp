// How long `tune ask DIR` and `tune tell DIR ID VALUE` take on a campaign of N trials, and where
// that time goes. Each command loads the whole state.yaml (parse, then the study and its strategy
// rebuilt from it), changes one trial and saves the state again, so its latency grows with N.
//
//   1. Campaigns of N trials (the largest N built once, in-process, through the tuner's own
//      CampaignState, StateWriter and EventLog, with a snapshot of state.yaml and events.jsonl at
//      every N): Hartmann-3 on three float parameters, every trial handed out and told as
//      `tune ask` / `tune tell` would (external runs, an outcome event per trial).
//   2. The real commands, as subprocesses of the built `tune`: from the snapshot, `tune ask DIR`
//      (its suggestion is trial N) then `tune tell DIR N 0`; the snapshot is restored before each
//      repeat, so every repeat measures the same campaign. Median over the repeats.
//   3. The same work in-process, phase by phase (median over the repeats): reading and parsing
//      state.yaml (its record lines by the fast reader, as load_state does), rebuilding the study
//      (the strategy's restore: the GP refactorised), the rest of the load (campaign, run records,
//      checks), ask(), the formatting of the state by a fresh
//      StateWriter (what the save after a load does: every trial and run record formatted), the
//      same writer's second formatting (its cache of finished records), and the atomic write.
//
//   cli_latency [--tune PATH] [--baseline PATH] [--trials 250,500,1000,2000]
//               [--strategies ei-compressed,...] [--noise SD] [--repeats R] [--csv PATH] [--keep]
//
// Strategies: ei-compressed (ei with epsilon 0.01, the default), ei-exact (epsilon 0), cmets (the
// multi-fidelity Hartmann-3's three levels as a resolution with declared costs). --noise adds
// Gaussian noise of that sd to every value (seeded), for a campaign whose values a GP fits with a
// noise term, as a real trainer's (epsilon 0.01 still kept all 2000 trials at sd 0.1; a larger
// epsilon or noise keeps fewer, and the load's GP rebuild shrinks). PATH defaults to the `tune`
// built next to this program. --baseline times a second `tune` (another version) on the
// same snapshots, alternating with the first at every repeat, so that both see the same load of a
// shared machine. The campaigns live in a temporary directory, removed at the end unless --keep.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "bench_machine.hpp"
#include "bench_process.hpp"
#include "bench_stats.hpp"
#include "functions/multi_fidelity.hpp"
#include "functions/test_functions.hpp"
#include "tune/io/atomic_file.hpp"
#include "tune/io/flow_yaml.hpp"
#include "tune/io/yaml_values.hpp"
#include "tuner/campaign/campaign_config.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/event_log.hpp"

namespace {

namespace fs = std::filesystem;
using tune::bench::median;

struct Options {
  fs::path tune;
  std::optional<fs::path> baseline;
  bool keep = false;
  std::vector<std::size_t> trials{250, 500, 1000, 2000};
  std::vector<std::string> strategies{"ei-compressed"};
  double noise = 0.0;
  std::size_t repeats = 5;
  fs::path csv = "cli_latency.csv";
};

// One row of the table: a strategy's campaign at N trials.
struct Row {
  std::string strategy;
  std::size_t trials = 0;
  std::size_t state_bytes = 0;
  double ask_cli_ms = 0, tell_cli_ms = 0;  // the subprocesses, wall clock
  double baseline_ask_cli_ms = std::numeric_limits<double>::quiet_NaN();  // the same, with --baseline's tune
  double baseline_tell_cli_ms = std::numeric_limits<double>::quiet_NaN();
  double read_ms = 0, parse_ms = 0, study_restore_ms = 0, other_load_ms = 0;
  double ask_ms = 0, tell_ms = 0;          // Study::ask() / tell() in-process
  double format_first_ms = 0, format_cached_ms = 0, write_ms = 0;
};

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "cli_latency: %s\n", message.c_str());
  std::exit(1);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) die("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) die("cannot write " + path.string());
}

std::string campaign_text(const std::string& strategy) {
  std::string text =
      "name: cli-latency\n"
      "space:\n"
      "  x1: {type: float, low: 0, high: 1}\n"
      "  x2: {type: float, low: 0, high: 1}\n"
      "  x3: {type: float, low: 0, high: 1}\n"
      "objective: {name: loss, direction: minimize}\n"
      "seed: 1\n";
  if (strategy == "ei-compressed") return text + "strategy: {name: ei, epsilon: 0.01}\n";
  if (strategy == "ei-exact") return text + "strategy: {name: ei}\n";
  if (strategy == "cmets") {
    const auto cost = tune::testfn::hartmann3_mf().cost;
    return text + "resolution: {param: fidelity, levels: [1, 2, 3], cost: [" + tune::format_double(cost[0]) + ", " +
           tune::format_double(cost[1]) + ", " + tune::format_double(cost[2]) +
           "]}\nstrategy: {name: cmets}\nbudget: {cost: 1.0e9}\n";
  }
  die("unknown strategy '" + strategy + "' (ei-compressed, ei-exact, cmets)");
}

fs::path snapshot_dir(const fs::path& root, const std::string& strategy, std::size_t n) {
  return root / (strategy + "-" + std::to_string(n));
}

// Builds the campaign up to the largest N, as ask/tell would, with a snapshot at every N.
void build_campaigns(const fs::path& root, const std::string& strategy, const std::vector<std::size_t>& sizes,
                     double noise) {
  using namespace tune::tuner;
  const fs::path file = root / (strategy + ".yaml");
  write_text(file, campaign_text(strategy));
  const fs::path events_path = root / (strategy + "-events.jsonl");
  CampaignState s = CampaignState::create(load_campaign_file(file), now_seconds());
  EventLog events(events_path);
  StateWriter writer;
  const tune::testfn::MultiFidelityFunction hartmann = tune::testfn::hartmann3_mf();
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal(0.0, 1.0);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t n = 1; n <= sizes.back(); ++n) {
    const auto suggestion = s.study.ask();
    if (!suggestion) die(strategy + " stopped after " + std::to_string(n - 1) + " trials: " + s.study.stop_reason());
    TrialRun r = external_run(suggestion->id, now_seconds());
    events.write("ask", {{"trial", json_number(r.id)}});
    Eigen::VectorXd x(3);
    for (int i = 0; i < 3; ++i) x(i) = std::get<double>(suggestion->config.at("x" + std::to_string(i + 1)));
    s.study.tell(r.id, hartmann.value(x, suggestion->level.value_or(hartmann.top())) + noise * normal(rng));
    r.status = RunStatus::complete;
    r.finished_at = now_seconds();
    s.runs.push_back(r);
    events.write_outcome(s, r.id);
    if (std::find(sizes.begin(), sizes.end(), n) == sizes.end()) continue;
    const fs::path dir = snapshot_dir(root, strategy, n);
    fs::create_directories(dir / "trials");
    writer.save(dir, s);
    fs::copy_file(events_path, dir / "events.jsonl");
    std::printf("  %s: %zu trials built (%.1f s)\n", strategy.c_str(), n, ms_since(t0) / 1000.0);
  }
}

// Copies the snapshot's state.yaml and events.jsonl over the work directory's.
void restore(const fs::path& snapshot, const fs::path& work) {
  fs::create_directories(work / "trials");
  for (const char* name : {"state.yaml", "events.jsonl"})
    fs::copy_file(snapshot / name, work / name, fs::copy_options::overwrite_existing);
}

void run_or_die(const std::vector<std::string>& args) {
  const int status = tune::bench::exit_status(tune::bench::run_program(args, /*discard_stdout=*/true));
  if (status != 0) {
    std::string line;
    for (const std::string& a : args) line += " " + a;
    die("exit status " + std::to_string(status) + " from" + line);
  }
}

Row measure(const Options& opt, const fs::path& root, const std::string& strategy, std::size_t n) {
  using namespace tune::tuner;
  Row row{.strategy = strategy, .trials = n};
  const fs::path snapshot = snapshot_dir(root, strategy, n);
  const fs::path work = root / "work";
  const std::string id = std::to_string(n);  // ids count from 0: the next trial is N
  std::vector<double> ask_cli, tell_cli, baseline_ask_cli, baseline_tell_cli;
  const auto ask_and_tell = [&](const fs::path& tune, std::vector<double>& ask_times, std::vector<double>& tell_times) {
    restore(snapshot, work);
    auto t0 = std::chrono::steady_clock::now();
    run_or_die({tune.string(), "ask", work.string()});
    ask_times.push_back(ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    run_or_die({tune.string(), "tell", work.string(), id, "0"});
    tell_times.push_back(ms_since(t0));
  };
  for (std::size_t i = 0; i < opt.repeats; ++i) {
    const bool baseline_first = opt.baseline && i % 2 == 1;  // neither always runs on the other's warm cache
    if (baseline_first) ask_and_tell(*opt.baseline, baseline_ask_cli, baseline_tell_cli);
    ask_and_tell(opt.tune, ask_cli, tell_cli);
    if (opt.baseline && !baseline_first) ask_and_tell(*opt.baseline, baseline_ask_cli, baseline_tell_cli);
  }
  row.ask_cli_ms = median(ask_cli);
  row.tell_cli_ms = median(tell_cli);
  row.baseline_ask_cli_ms = median(baseline_ask_cli);
  row.baseline_tell_cli_ms = median(baseline_tell_cli);

  // The load's parts, each repeat timed in a row, so that the rest (the campaign, the run records,
  // the checks) is the load's time less the parts of the same repeat.
  std::vector<double> read, parse, study_restore, other_load;
  for (std::size_t i = 0; i < opt.repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    const std::string text = read_text(state_path(snapshot));
    read.push_back(ms_since(t0));
    row.state_bytes = text.size();
    t0 = std::chrono::steady_clock::now();
    // As load_state reads it: the document without its record lists' items, and their lines (which
    // the restores read straight into trials and run records), or all of it through yaml-cpp.
    const std::optional<tune::FastDocument> fast = tune::split_record_lists(text);
    const YAML::Node root_node = fast ? fast->root : tune::parse_yaml(text);
    parse.push_back(ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    (void)tune::Study::from_yaml(root_node["study"], fast ? tune::record_lines(&fast->records, "study.trials") : nullptr);
    study_restore.push_back(ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    (void)load_state(snapshot);
    other_load.push_back(ms_since(t0) - read.back() - parse.back() - study_restore.back());
  }
  row.read_ms = median(read);
  row.parse_ms = median(parse);
  row.study_restore_ms = median(study_restore);
  row.other_load_ms = median(other_load);

  std::vector<double> ask, tell, first, cached, write;
  for (std::size_t i = 0; i < opt.repeats; ++i) {
    CampaignState s = load_state(snapshot);
    auto t0 = std::chrono::steady_clock::now();
    const auto suggestion = s.study.ask();
    ask.push_back(ms_since(t0));
    if (!suggestion) die(strategy + " at " + id + " trials: no suggestion");
    const TrialRun r = external_run(suggestion->id, now_seconds());
    s.runs.push_back(r);
    StateWriter writer;  // a fresh one, as in a command
    t0 = std::chrono::steady_clock::now();
    const std::string state = writer.text(s);
    first.push_back(ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    (void)writer.text(s);
    cached.push_back(ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    tune::write_file_atomically(work / "probe.yaml", state);
    write.push_back(ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    s.study.tell(r.id, 0.0);
    tell.push_back(ms_since(t0));
  }
  row.ask_ms = median(ask);
  row.tell_ms = median(tell);
  row.format_first_ms = median(first);
  row.format_cached_ms = median(cached);
  row.write_ms = median(write);
  return row;
}

void usage() {
  std::fprintf(stderr,
               "usage: cli_latency [--tune PATH] [--baseline PATH] [--trials N,N,...] "
               "[--strategies ei-compressed,ei-exact,cmets] [--noise SD] [--repeats R] [--csv PATH] [--keep]\n");
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  o.tune = tune::bench::tune_next_to_this_program();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tune") o.tune = tune::bench::option_value(argc, argv, i, "cli_latency");
    else if (a == "--baseline") o.baseline = tune::bench::option_value(argc, argv, i, "cli_latency");
    else if (a == "--keep") o.keep = true;
    else if (a == "--noise") {
      o.noise = tune::bench::real_value(tune::bench::option_value(argc, argv, i, "cli_latency"), "cli_latency", "--noise");
      if (o.noise < 0) usage();
    }
    else if (a == "--trials") {
      o.trials.clear();
      for (const std::string& item : tune::bench::split_commas(tune::bench::option_value(argc, argv, i, "cli_latency"))) {
        const auto n = tune::bench::positive_count(item);
        if (!n) usage();
        o.trials.push_back(*n);
      }
      std::sort(o.trials.begin(), o.trials.end());
      o.trials.erase(std::unique(o.trials.begin(), o.trials.end()), o.trials.end());
      if (o.trials.empty()) usage();
    } else if (a == "--strategies") {
      o.strategies = tune::bench::split_commas(tune::bench::option_value(argc, argv, i, "cli_latency"));
      if (o.strategies.empty()) usage();
    } else if (a == "--repeats") {
      const auto r = tune::bench::positive_count(tune::bench::option_value(argc, argv, i, "cli_latency"));
      if (!r) usage();
      o.repeats = *r;
    } else if (a == "--csv") o.csv = tune::bench::option_value(argc, argv, i, "cli_latency");
    else usage();
  }
  for (const std::string& s : o.strategies) (void)campaign_text(s);  // refuses an unknown one now
  if (::access(o.tune.c_str(), X_OK) != 0) die("cannot execute '" + o.tune.string() + "' (build tune_cli, or give --tune PATH)");
  o.tune = fs::absolute(o.tune);
  if (o.baseline) {
    if (::access(o.baseline->c_str(), X_OK) != 0) die("cannot execute the baseline '" + o.baseline->string() + "'");
    o.baseline = fs::absolute(*o.baseline);
  }
  return o;
}

void write_csv(const fs::path& path, const std::vector<Row>& rows) {
  std::ofstream out(path);
  if (!out) die("cannot write " + path.string());
  out << "strategy,trials,state_bytes,tune_ask_ms,tune_tell_ms,baseline_tune_ask_ms,baseline_tune_tell_ms,read_ms,parse_ms,study_restore_ms,other_load_ms,ask_ms,"
         "tell_ms,format_first_ms,format_cached_ms,write_ms\n";
  char buf[512];
  const auto optional_ms = [](double ms) {
    if (std::isnan(ms)) return std::string();
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", ms);
    return std::string(text);
  };
  for (const Row& r : rows) {
    std::snprintf(buf, sizeof buf, "%s,%zu,%zu,%.3f,%.3f,%s,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n",
                  r.strategy.c_str(), r.trials, r.state_bytes, r.ask_cli_ms, r.tell_cli_ms,
                  optional_ms(r.baseline_ask_cli_ms).c_str(), optional_ms(r.baseline_tell_cli_ms).c_str(), r.read_ms, r.parse_ms,
                  r.study_restore_ms, r.other_load_ms, r.ask_ms, r.tell_ms, r.format_first_ms, r.format_cached_ms,
                  r.write_ms);
    out << buf;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  std::string tmpl = (fs::temp_directory_path() / "cli_latency.XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) die("mkdtemp failed");
  const fs::path root = tmpl;
  std::printf("cli_latency: tune = %s, %zu repeats, noise sd %g\n", opt.tune.c_str(), opt.repeats, opt.noise);
  if (opt.baseline) std::printf("baseline: %s (timed alternately with tune)\n", opt.baseline->c_str());
  std::printf("%s\n", tune::bench::machine_line().c_str());
  std::printf("campaigns in %s (%s)\n\n", root.c_str(), tune::bench::filesystem_type(root).c_str());

  std::vector<Row> rows;
  for (const std::string& strategy : opt.strategies) {
    build_campaigns(root, strategy, opt.trials, opt.noise);
    for (std::size_t n : opt.trials) rows.push_back(measure(opt, root, strategy, n));
  }

  // Whole milliseconds from 100 on (bench_stats' fmt would print 1.2e+03).
  const auto fmt = [](double ms) { return ms >= 100 ? std::to_string(std::lround(ms)) : tune::bench::fmt(ms); };
  std::printf("\nMedian ms over %zu repeats; the commands as subprocesses, then their parts in-process\n\n", opt.repeats);
  std::printf("| strategy | trials | state KB | tune ask | tune tell | read | parse | study restore | rest of load | "
              "ask() | tell() | format, first save | format, cached | atomic write |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows)
    std::printf("| %s | %zu | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.strategy.c_str(),
                r.trials, fmt(static_cast<double>(r.state_bytes) / 1024.0).c_str(), fmt(r.ask_cli_ms).c_str(),
                fmt(r.tell_cli_ms).c_str(), fmt(r.read_ms).c_str(), fmt(r.parse_ms).c_str(),
                fmt(r.study_restore_ms).c_str(), fmt(r.other_load_ms).c_str(), fmt(r.ask_ms).c_str(),
                fmt(r.tell_ms).c_str(), fmt(r.format_first_ms).c_str(), fmt(r.format_cached_ms).c_str(),
                fmt(r.write_ms).c_str());
  if (opt.baseline) {
    std::printf("\nThe baseline's commands, timed alternately with tune's on the same snapshots (median ms)\n\n");
    std::printf("| strategy | trials | tune ask, baseline | tune ask | tune tell, baseline | tune tell |\n");
    std::printf("|---|---:|---:|---:|---:|---:|\n");
    for (const Row& r : rows)
      std::printf("| %s | %zu | %s | %s | %s | %s |\n", r.strategy.c_str(), r.trials, fmt(r.baseline_ask_cli_ms).c_str(),
                  fmt(r.ask_cli_ms).c_str(), fmt(r.baseline_tell_cli_ms).c_str(), fmt(r.tell_cli_ms).c_str());
  }
  write_csv(opt.csv, rows);
  std::printf("\nrows: %s\n", fs::absolute(opt.csv).c_str());
  if (opt.keep) {
    std::printf("campaigns kept in %s\n", root.c_str());
    return 0;
  }
  std::error_code ec;
  fs::remove_all(root, ec);
  return 0;
}
