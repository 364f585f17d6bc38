// Median simple regret of the strategies on standard test functions, driven through the ask/tell
// Study so that the best value can be recorded after every evaluation.
//
// For each function (minimised, inputs in the unit cube mapped to the function's box by
// TestFunction::at_unit; the space is one floating parameter per dimension on [0,1]), each strategy
// (default options) and each seed s = 0 .. seeds-1 (the study's seed is the run index): run
// `evaluations` ask/tell steps, record best_so_far after each and regret = best_so_far - minimum,
// and time every ask() with steady_clock. Everything runs sequentially (no threads).
//
// Prints one table per function: strategy | median regret and IQR at 25 / 50 / 100 evaluations |
// median ask time; writes every (function, strategy, seed, evaluation, best_so_far, regret, ask_ms)
// row to a CSV.
//
// Usage: regret_table [--seeds N] [--evaluations N] [--functions a,b,c] [--strategies a,b]
//                     [--csv PATH] [--quick]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <Eigen/Core>

#include "bench_args.hpp"
#include "bench_stats.hpp"
#include "functions/test_functions.hpp"
#include "tune/tune.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::size_t seeds = 20;
  std::size_t evaluations = 100;
  std::vector<std::string> functions = {"branin", "hartmann3", "hartmann6"};
  std::vector<std::string> strategies = {"random", "sobol", "ucb", "ei"};
  std::string csv = "regret_table.csv";
};

// One run: per evaluation, the best value so far and the ask time.
struct Run {
  std::vector<double> best_so_far;
  std::vector<double> ask_ms;
  std::string stop_reason;  // non-empty if the strategy stopped before the budget
  std::size_t failures = 0;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "regret_table: %s\nusage: regret_table [--seeds N] [--evaluations N] [--functions a,b,c] "
               "[--strategies a,b] [--csv PATH] [--quick]\n",
               message.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string& text) { return tune::bench::split_commas(text); }

std::size_t parse_count(const std::string& flag, const std::string& text) {
  if (const auto v = tune::bench::positive_count(text)) return *v;
  usage_error(flag + " expects a positive integer, got '" + text + "'");
}

Options parse(int argc, char** argv) {
  Options o;
  bool seeds_set = false, evaluations_set = false, quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--seeds") {
      o.seeds = parse_count(arg, value());
      seeds_set = true;
    } else if (arg == "--evaluations") {
      o.evaluations = parse_count(arg, value());
      evaluations_set = true;
    } else if (arg == "--functions") {
      o.functions = split(value());
    } else if (arg == "--strategies") {
      o.strategies = split(value());
    } else if (arg == "--csv") {
      o.csv = value();
    } else if (arg == "--quick") {
      quick = true;
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: regret_table [--seeds N] [--evaluations N] [--functions a,b,c] [--strategies a,b] "
          "[--csv PATH] [--quick]\n");
      std::exit(0);
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }
  if (quick) {  // explicit --seeds / --evaluations still win
    if (!seeds_set) o.seeds = 5;
    if (!evaluations_set) o.evaluations = 50;
  }
  if (o.functions.empty()) usage_error("--functions is empty");
  if (o.strategies.empty()) usage_error("--strategies is empty");
  const std::vector<std::string> known = tune::strategy_names();
  for (const std::string& s : o.strategies)
    if (std::find(known.begin(), known.end(), s) == known.end()) usage_error("unknown strategy '" + s + "'");
  return o;
}

using tune::bench::quantile;

Run run_once(const tune::testfn::TestFunction& fn, const tune::Space& space, const std::string& strategy,
             std::uint64_t seed, std::size_t evaluations) {
  tune::Study study(space, tune::make_strategy(strategy),
                    {.direction = tune::Direction::minimize, .seed = seed});
  Run run;
  run.best_so_far.reserve(evaluations);
  run.ask_ms.reserve(evaluations);
  double best = std::numeric_limits<double>::infinity();
  const std::vector<tune::Parameter>& params = space.parameters();
  Eigen::VectorXd u(static_cast<Eigen::Index>(space.dim()));
  for (std::size_t k = 0; k < evaluations; ++k) {
    const auto t0 = Clock::now();
    std::optional<tune::Suggestion> s = study.ask();
    const auto t1 = Clock::now();
    if (!s) {
      run.stop_reason = study.stop_reason().empty() ? "ask() returned nothing" : study.stop_reason();
      break;
    }
    for (std::size_t j = 0; j < params.size(); ++j)
      u(static_cast<Eigen::Index>(j)) = std::get<double>(s->config.at(params[j].name));
    bool ok = false;
    try {
      const double value = fn.at_unit(u);
      if (std::isfinite(value)) {
        study.tell(s->id, value);
        best = std::min(best, value);
        ok = true;
      } else {
        study.fail(s->id, "non-finite value");
      }
    } catch (const std::exception& e) {
      study.fail(s->id, e.what());
    }
    if (!ok) ++run.failures;
    run.best_so_far.push_back(best);
    run.ask_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return run;
}

// Best value after k evaluations (1-based); a run that stopped early keeps its last best.
double best_after(const Run& run, std::size_t k) {
  if (run.best_so_far.empty()) return std::numeric_limits<double>::infinity();
  return run.best_so_far[std::min(k, run.best_so_far.size()) - 1];
}

using tune::bench::fmt;

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);

  std::vector<tune::testfn::TestFunction> functions;
  for (const std::string& name : opt.functions) {
    try {
      functions.push_back(tune::testfn::by_name(name));
    } catch (const std::exception& e) {
      usage_error(e.what());
    }
  }

  std::ofstream csv(opt.csv);
  if (!csv) {
    std::fprintf(stderr, "regret_table: cannot write '%s'\n", opt.csv.c_str());
    return 1;
  }
  csv << "function,strategy,seed,evaluation,best_so_far,regret,ask_ms\n";
  csv.precision(17);

  const std::size_t checkpoints[] = {25, 50, 100};
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  std::printf("# Simple regret (best - minimum), median and IQR over %zu seeds, %zu evaluations\n", opt.seeds,
              opt.evaluations);

  for (const tune::testfn::TestFunction& fn : functions) {
    std::vector<tune::Parameter> params;
    for (std::size_t j = 0; j < fn.dim(); ++j) params.push_back(tune::Parameter::floating("x" + std::to_string(j), 0.0, 1.0));
    const tune::Space space(params);

    std::vector<std::string> table_rows;
    std::vector<std::string> notes;
    for (const std::string& strategy : opt.strategies) {
      const double t_start = elapsed();
      std::vector<Run> runs;
      std::size_t early_stops = 0, failures = 0;
      for (std::size_t seed = 0; seed < opt.seeds; ++seed) {
        Run run = run_once(fn, space, strategy, seed, opt.evaluations);
        if (!run.stop_reason.empty()) {
          ++early_stops;
          notes.push_back(strategy + " seed " + std::to_string(seed) + " stopped after " +
                          std::to_string(run.best_so_far.size()) + " evaluations: " + run.stop_reason);
        }
        failures += run.failures;
        for (std::size_t k = 0; k < run.best_so_far.size(); ++k) {
          csv << fn.name << ',' << strategy << ',' << seed << ',' << (k + 1) << ',' << run.best_so_far[k] << ','
              << (run.best_so_far[k] - fn.minimum) << ',' << run.ask_ms[k] << '\n';
        }
        runs.push_back(std::move(run));
      }

      std::string row = "| " + strategy;
      for (std::size_t k : checkpoints) {
        if (k > opt.evaluations) {
          row += " | - | -";
          continue;
        }
        std::vector<double> regrets;
        for (const Run& r : runs) regrets.push_back(best_after(r, k) - fn.minimum);
        row += " | " + fmt(quantile(regrets, 0.5)) + " | " + fmt(quantile(regrets, 0.75) - quantile(regrets, 0.25));
      }
      std::vector<double> ask_ms;
      for (const Run& r : runs) ask_ms.insert(ask_ms.end(), r.ask_ms.begin(), r.ask_ms.end());
      row += " | " + fmt(quantile(ask_ms, 0.5)) + " |";
      table_rows.push_back(row);
      if (failures > 0) notes.push_back(strategy + ": " + std::to_string(failures) + " failed evaluations");

      const std::string early = early_stops > 0 ? " (" + std::to_string(early_stops) + " stopped early)" : "";
      std::fprintf(stderr, "[%7.1f s] %s / %s: %zu seeds done in %.1f s%s\n", elapsed(), fn.name.c_str(),
                   strategy.c_str(), opt.seeds, elapsed() - t_start, early.c_str());
    }

    std::printf("\n## %s (d = %zu, minimum %.10g)\n\n", fn.name.c_str(), fn.dim(), fn.minimum);
    std::printf("| strategy | median regret @25 | IQR @25 | @50 | IQR | @100 | IQR | median ask ms |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const std::string& row : table_rows) std::printf("%s\n", row.c_str());
    for (const std::string& note : notes) std::printf("\nnote: %s\n", note.c_str());
    std::fflush(stdout);
  }

  std::fprintf(stderr, "total %.1f s; rows written to %s\n", elapsed(), opt.csv.c_str());
  return 0;
}
