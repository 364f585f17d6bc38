// Warm start (Study::import_result): how many expensive runs does importing an earlier campaign's
// results save on a widened space, and does it ever hurt?
//
// Protocol. Every function of bench/functions/test_functions (minimised) is searched in its own
// coordinates: the space is one float per dimension, x0 .. x{d-1}, on a box of the function's domain,
// so that a configuration of a narrow box is a configuration of the full domain as it stands.
//   - Campaign A: `ei` (default options) on a NARROW box, --trials-a (20) trials, seed 1000 + s.
//   - Campaign B: `ei` on the FULL domain, --trials-b (30) own trials (max_trials), seed s:
//       cold: a fresh study;
//       warm: a fresh study into which A's completed results are imported first
//             (import_result(config, value, nullopt, "campaign A seed .., trial ..")), then its own
//             trials. Cold and warm B share the seed s, so the comparison is paired.
// Narrow boxes (half of every range, 1/2^d of the domain), built from the function's minimiser x*:
//   contains: in every coordinate the half of the range that holds x*_i (the "refine" case);
//   excludes: the same box, except in the coordinate whose x*_i lies nearest the middle of its
//             range, where it takes the other half, so x* lies just outside the box (the "best at the
//             edge, widen" case). The program checks that every known global minimiser (Branin has
//             three) is inside "contains"-or-not as claimed and outside "excludes".
//   misleading (a control, --misleading functions only, default all three): A runs on the reflected
//             function g(x) = f(lower + upper - x) over the reflection of the "contains" box (so A
//             finds g's optimum as well as the "contains" A finds f's), and B imports A's configurations
//             with g's values: a history from a campaign that no longer matches the objective.
// Regret of B after k own trials (k = 0 .. trials-b), simple regret against the known minimum:
//   all: min(best imported value, best own value) - minimum: imported results are real evaluations
//        of the same function, so counting them is fair (not computed for "misleading", whose
//        imported values are g's, not f's);
//   own: best of B's own trials only - minimum (cold: own = all).
// Target regret: --target (default 1%) of the function's typical gap, median_x f(x) - minimum over
// 4096 Sobol points of the full domain (the convention of multi_fidelity_cost). Own trials to target:
// the first k (0 .. trials-b) with regret <= target; "not reached" counts as trials-b + 1 in medians
// and paired differences (so a saving is then a lower bound) and is shown as ">N".
//
// Prints per function: the boxes; a table scenario | arm | regret | median [q25, q75] at 0, 5, 10,
// 20, 30 own trials | own trials to target (median, seeds reaching it); and the paired comparison
// warm vs cold: seeds where warm is better / worse / equal at each checkpoint, and the median paired
// saving of own trials to target; then how many own trials came from ei's initial design and how
// many sat at a corner of the domain (every coordinate at a bound). Writes one CSV row per function,
// scenario, arm, seed and own-trial count k = 0 .. trials-b (cold rows repeat under each scenario:
// one run, paired with each warm arm),
// with own trial k's value, point (coordinates joined by ';') and source (initial_design, acquisition).
// Progress on stderr. Asserts nothing; an exception from import_result is reported verbatim and the
// seed's warm run is left out (counted in a note), never worked around.
//
// Usage: warm_start [--seeds N] [--trials-a N] [--trials-b N] [--target F] [--functions a,b]
//                   [--misleading a,b] [--csv PATH] [--quick] [--keep-design]
// --keep-design: the ablation of the default, in which imported results stand in for ei's initial
// design: warm B runs its whole design (2d + 1 own points) after the imports (ei's option
// initial_design = 2d + 1 + the imports).
// --import-scale 1000,3000: instead, the cost of a large warm start: ei on Hartmann-6's domain, N
// random results imported in one batch (Study::import_results), then its first ask (which fits the
// GP to them all) and the next one; median of 3 runs each, in ms.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <Eigen/Core>

#include "bench_args.hpp"
#include "bench_stats.hpp"
#include "functions/test_functions.hpp"
#include "tune/space/sampling.hpp"
#include "tune/tune.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using tune::bench::fmt;
using tune::bench::median;
using tune::bench::quantile;

struct Options {
  std::size_t seeds = 20;
  std::size_t trials_a = 20;
  std::size_t trials_b = 30;
  double target = 0.01;
  std::vector<std::string> functions = {"branin", "hartmann3", "hartmann6"};
  std::vector<std::string> misleading = {"branin", "hartmann3", "hartmann6"};
  std::string csv = "warm_start.csv";
  bool keep_design = false;
  std::vector<std::size_t> import_scale;  // --import-scale: time imports of these many results instead
};

const char* const kUsage =
    "usage: warm_start [--seeds N] [--trials-a N] [--trials-b N] [--target F] [--functions a,b] "
    "[--misleading a,b] [--csv PATH] [--quick] [--keep-design] [--import-scale N,N]\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "warm_start: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

std::size_t parse_count(const std::string& flag, const std::string& text) {
  if (const auto v = tune::bench::positive_count(text)) return *v;
  usage_error(flag + " expects a positive integer, got '" + text + "'");
}

Options parse(int argc, char** argv) {
  Options o;
  bool seeds_set = false;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--seeds") {
      o.seeds = parse_count(arg, value());
      seeds_set = true;
    } else if (arg == "--trials-a") {
      o.trials_a = parse_count(arg, value());
    } else if (arg == "--trials-b") {
      o.trials_b = parse_count(arg, value());
    } else if (arg == "--target") {
      o.target = tune::bench::real_value(value(), "warm_start", "--target");
      if (o.target <= 0.0) usage_error("--target must be > 0");
    } else if (arg == "--functions") {
      o.functions = tune::bench::split_commas(value());
    } else if (arg == "--misleading") {
      o.misleading = tune::bench::split_commas(value());
    } else if (arg == "--csv") {
      o.csv = value();
    } else if (arg == "--quick") {
      quick = true;
    } else if (arg == "--keep-design") {
      o.keep_design = true;
    } else if (arg == "--import-scale") {
      for (const std::string& n : tune::bench::split_commas(value())) o.import_scale.push_back(parse_count(arg, n));
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }
  if (quick && !seeds_set) o.seeds = 3;
  if (o.functions.empty()) usage_error("--functions is empty");
  return o;
}

struct Box {
  Eigen::VectorXd lower, upper;
  bool contains(const Eigen::VectorXd& x) const {
    return (x.array() >= lower.array()).all() && (x.array() <= upper.array()).all();
  }
};

std::string describe(const Box& box) {
  std::string s;
  for (Eigen::Index i = 0; i < box.lower.size(); ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s[%.4g, %.4g]", i ? " x " : "", box.lower(i), box.upper(i));
    s += buf;
  }
  return s;
}

// Every known global minimiser: TestFunction keeps one; Branin has three.
std::vector<Eigen::VectorXd> minimisers(const tune::testfn::TestFunction& fn) {
  std::vector<Eigen::VectorXd> xs = {fn.argmin};
  if (fn.name == "branin") {
    constexpr double pi = 3.14159265358979323846;
    xs.push_back((Eigen::VectorXd(2) << -pi, 12.275).finished());
    xs.push_back((Eigen::VectorXd(2) << 3.0 * pi, 2.475).finished());
  }
  return xs;
}

// In every coordinate, the half of the range holding the minimiser's coordinate.
Box containing_box(const tune::testfn::TestFunction& fn) {
  Box box{fn.lower, fn.upper};
  for (Eigen::Index i = 0; i < fn.lower.size(); ++i) {
    const double mid = 0.5 * (fn.lower(i) + fn.upper(i));
    if (fn.argmin(i) <= mid)
      box.upper(i) = mid;
    else
      box.lower(i) = mid;
  }
  return box;
}

// The containing box with the other half in the coordinate whose minimiser lies nearest the middle.
Box excluding_box(const tune::testfn::TestFunction& fn, Eigen::Index& flipped) {
  Box box = containing_box(fn);
  flipped = 0;
  double nearest = std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < fn.lower.size(); ++i) {
    const double range = fn.upper(i) - fn.lower(i);
    const double distance = std::abs(fn.argmin(i) - 0.5 * (fn.lower(i) + fn.upper(i))) / range;
    if (distance < nearest) {
      nearest = distance;
      flipped = i;
    }
  }
  const double mid = 0.5 * (fn.lower(flipped) + fn.upper(flipped));
  if (box.upper(flipped) == mid) {
    box.lower(flipped) = mid;
    box.upper(flipped) = fn.upper(flipped);
  } else {
    box.lower(flipped) = fn.lower(flipped);
    box.upper(flipped) = mid;
  }
  return box;
}

Box reflected(const Box& box, const tune::testfn::TestFunction& fn) {
  return Box{fn.lower + fn.upper - box.upper, fn.lower + fn.upper - box.lower};
}

tune::Space space_of(const Box& box) {
  std::vector<tune::Parameter> params;
  for (Eigen::Index i = 0; i < box.lower.size(); ++i)
    params.push_back(tune::Parameter::floating("x" + std::to_string(i), box.lower(i), box.upper(i)));
  return tune::Space(params);
}

Eigen::VectorXd point_of(const tune::Config& config, std::size_t dim) {
  Eigen::VectorXd x(static_cast<Eigen::Index>(dim));
  for (std::size_t i = 0; i < dim; ++i) x(static_cast<Eigen::Index>(i)) = std::get<double>(config.at("x" + std::to_string(i)));
  return x;
}

double typical_gap(const tune::testfn::TestFunction& fn) {
  tune::Rng rng(12345);
  const Eigen::MatrixXd X = tune::sobol_points(fn.dim(), 4096, rng);
  std::vector<double> v;
  for (Eigen::Index j = 0; j < X.cols(); ++j) v.push_back(fn.at_unit(X.col(j)) - fn.minimum);
  return median(v);
}

struct Result {
  tune::Config config;
  double value = 0.0;
};

// Campaign A: ei on `box`, objective `f`, its completed results.
std::vector<Result> campaign_a(const std::function<double(const Eigen::VectorXd&)>& f, const Box& box, std::size_t dim,
                               std::uint64_t seed, std::size_t trials, std::string& note) {
  tune::Study study(space_of(box), tune::make_strategy("ei"),
                    {.direction = tune::Direction::minimize, .seed = seed, .max_trials = trials});
  std::vector<Result> results;
  while (auto s = study.ask()) {
    const double value = f(point_of(s->config, dim));
    study.tell(s->id, value);
    results.push_back({s->config, value});
  }
  if (results.size() != trials) note = "A stopped after " + std::to_string(results.size()) + " trials: " + study.stop_reason();
  return results;
}

// One run of campaign B: the best own value after k own trials (k = 0 .. trials), the best imported
// value, and observations on the engine.
struct RunB {
  std::vector<double> best_own;  // [k]: best of the first k own trials (+inf for k = 0)
  std::vector<std::string> point, source, value;  // [k]: own trial k's point (';'-joined), source, value (k >= 1)
  double best_imported = std::numeric_limits<double>::infinity();
  std::size_t own_trials = 0;
  std::size_t initial_design_trials = 0;  // own trials the strategy drew from its initial design
  std::size_t corners_first5 = 0;         // own trials 1-5 at a corner of the domain (every coordinate at a bound)
  std::size_t corners = 0;                // own trials at a corner, all of them
  std::string note;                       // a stop before the budget, an exception
  bool failed = false;                    // import_result threw: the run is left out
};

RunB campaign_b(const tune::testfn::TestFunction& fn, const tune::Space& space, std::uint64_t seed, std::size_t trials,
                const std::vector<Result>* history, std::uint64_t history_seed, bool keep_design) {
  YAML::Node strategy_options;
  if (history && keep_design)
    strategy_options["initial_design"] = std::min<std::size_t>(2 * fn.dim() + 1, 20) + history->size();
  tune::Study study(space, tune::make_strategy("ei", strategy_options),
                    {.direction = tune::Direction::minimize, .seed = seed, .max_trials = trials});
  RunB run;
  if (history) {
    for (std::size_t i = 0; i < history->size(); ++i) {
      const Result& r = (*history)[i];
      try {
        study.import_result(r.config, r.value, std::nullopt,
                            "campaign A seed " + std::to_string(history_seed) + ", trial " + std::to_string(i));
      } catch (const std::exception& e) {
        run.failed = true;
        run.note = "import_result threw on result " + std::to_string(i) + ": " + e.what();
        return run;
      }
      run.best_imported = std::min(run.best_imported, r.value);
    }
    if (study.imported_count() != history->size())
      run.note = "imported_count() = " + std::to_string(study.imported_count()) + " after importing " +
                 std::to_string(history->size());
  }
  double best = std::numeric_limits<double>::infinity();
  run.best_own.push_back(best);
  run.point.emplace_back();
  run.source.emplace_back();
  run.value.emplace_back();
  while (auto s = study.ask()) {
    const Eigen::VectorXd x = point_of(s->config, fn.dim());
    const double value = fn.f(x);
    study.tell(s->id, value);
    if (((x.array() == fn.lower.array()) || (x.array() == fn.upper.array())).all()) {
      ++run.corners;
      if (run.own_trials < 5) ++run.corners_first5;
    }
    best = std::min(best, value);
    run.best_own.push_back(best);
    std::string p;
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.6g", i ? ";" : "", x(i));
      p += buf;
    }
    run.point.push_back(p);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", value);
    run.value.emplace_back(buf);
    run.source.push_back(study.trials().at(static_cast<std::size_t>(s->id)).source);
    ++run.own_trials;
  }
  for (const tune::Trial& t : study.trials())
    if (!t.imported() && t.source == "initial_design") ++run.initial_design_trials;
  if (run.own_trials != trials) {
    if (!run.note.empty()) run.note += "; ";
    run.note += "B ran " + std::to_string(run.own_trials) + " own trials, not " + std::to_string(trials) + ": " +
                study.stop_reason();
  }
  // A run that stopped early keeps its last best up to the budget.
  while (run.best_own.size() < trials + 1) {
    run.best_own.push_back(best);
    run.point.emplace_back();
    run.source.emplace_back();
    run.value.emplace_back();
  }
  return run;
}

// The regret series of one arm of one seed, k = 0 .. trials_b.
struct Series {
  std::vector<double> regret;
  bool present = true;  // false: the run failed and is left out
};

std::size_t trials_to_target(const Series& s, double target) {
  for (std::size_t k = 0; k < s.regret.size(); ++k)
    if (s.regret[k] <= target) return k;
  return s.regret.size();  // not reached: trials_b + 1
}

std::string cell(const std::vector<double>& v) {
  if (v.empty()) return "-";
  return fmt(median(v)) + " [" + fmt(quantile(v, 0.25)) + ", " + fmt(quantile(v, 0.75)) + "]";
}

std::string count_cell(std::vector<double> v, std::size_t not_reached) {
  if (v.empty()) return "-";
  std::size_t reached = 0;
  for (double x : v) reached += x < static_cast<double>(not_reached);
  const double m = median(v);
  char buf[64];
  if (m >= static_cast<double>(not_reached))
    std::snprintf(buf, sizeof buf, ">%zu (%zu/%zu)", not_reached - 1, reached, v.size());
  else
    std::snprintf(buf, sizeof buf, "%g (%zu/%zu)", m, reached, v.size());
  return buf;
}

struct Arm {
  std::string scenario;  // cold, contains, excludes, misleading
  std::string measure;   // all, own
  std::vector<Series> series;  // per seed
};

}  // namespace

// --import-scale: the time to import n results and to make the first two asks after them.
int import_scale(const Options& opt) {
  const tune::testfn::TestFunction fn = tune::testfn::by_name("hartmann6");
  const tune::Space space = space_of(Box{fn.lower, fn.upper});
  std::printf("| results imported | import ms | first ask ms | second ask ms |\n|---|---|---|---|\n");
  for (const std::size_t n : opt.import_scale) {
    std::vector<double> import_ms, first_ms, second_ms;
    for (std::uint64_t rep = 0; rep < 3; ++rep) {
      tune::Study source(space, tune::make_strategy("random"), {.seed = rep});
      std::vector<tune::Study::ImportedResult> batch;
      for (std::size_t i = 0; i < n; ++i) {
        const auto s = source.ask();
        batch.push_back({s->config, fn.f(point_of(s->config, fn.dim())), std::nullopt, "random, trial " + std::to_string(i)});
      }
      tune::Study study(space, tune::make_strategy("ei"), {.seed = rep});
      const auto ms = [](Clock::time_point a, Clock::time_point b) {
        return std::chrono::duration<double, std::milli>(b - a).count();
      };
      const auto t0 = Clock::now();
      study.import_results(std::move(batch));
      const auto t1 = Clock::now();
      const auto first = study.ask();
      const auto t2 = Clock::now();
      study.tell(first->id, fn.f(point_of(first->config, fn.dim())));
      const auto t3 = Clock::now();
      (void)study.ask();
      const auto t4 = Clock::now();
      import_ms.push_back(ms(t0, t1));
      first_ms.push_back(ms(t1, t2));
      second_ms.push_back(ms(t3, t4));
      std::fprintf(stderr, "  %zu results, run %llu\n", n, static_cast<unsigned long long>(rep));
    }
    std::printf("| %zu | %s | %s | %s |\n", n, fmt(median(import_ms)).c_str(), fmt(median(first_ms)).c_str(),
                fmt(median(second_ms)).c_str());
  }
  return 0;
}

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  if (!opt.import_scale.empty()) return import_scale(opt);

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
    std::fprintf(stderr, "warm_start: cannot write '%s'\n", opt.csv.c_str());
    return 1;
  }
  csv << "function,scenario,arm,seed,seed_a,own_trials,best_own,best_imported,regret_all,regret_own,target,value,point,source\n";
  csv.precision(17);

  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const std::size_t checkpoints[] = {0, 5, 10, 20, 30};

  std::printf("# Warm start on a widened space: ei, campaign A %zu trials on a narrow box, campaign B %zu own trials "
              "on the full domain, cold or warm (A's results imported), %zu seeds (B seed s, A seed 1000 + s)\n",
              opt.trials_a, opt.trials_b, opt.seeds);
  std::printf("# regret = best value - global minimum; all = imported and own trials, own = B's own trials only; "
              "cells: median [q25, q75] over seeds at k own trials\n");
  std::printf("# target = %g x typical gap (median of f - minimum over 4096 Sobol points); trials to target: first k "
              "with regret <= target, >%zu = not reached (counted as %zu)\n",
              opt.target, opt.trials_b, opt.trials_b + 1);

  for (const tune::testfn::TestFunction& fn : functions) {
    const double t_fn = elapsed();
    const std::size_t dim = fn.dim();
    const double gap = typical_gap(fn);
    const double target = opt.target * gap;
    const Box full{fn.lower, fn.upper};
    const Box contains = containing_box(fn);
    Eigen::Index flipped = 0;
    const Box excludes = excluding_box(fn, flipped);
    const bool with_misleading = std::find(opt.misleading.begin(), opt.misleading.end(), fn.name) != opt.misleading.end();
    const Box mirrored = reflected(contains, fn);

    std::vector<std::string> notes;
    for (const Eigen::VectorXd& x : minimisers(fn))
      if (excludes.contains(x)) notes.push_back("the excluding box contains a global minimiser: the scenario is wrong");
    if (!contains.contains(fn.argmin)) notes.push_back("the containing box misses the minimiser: the scenario is wrong");
    const double outside = std::abs(fn.argmin(flipped) - 0.5 * (fn.lower(flipped) + fn.upper(flipped))) /
                           (fn.upper(flipped) - fn.lower(flipped));

    struct Scenario {
      std::string name;
      Box box;
      bool mirror;
    };
    std::vector<Scenario> scenarios = {{"contains", contains, false}, {"excludes", excludes, false}};
    if (with_misleading) scenarios.push_back({"misleading", mirrored, true});

    const tune::Space full_space = space_of(full);
    Arm cold{"cold", "own", {}};
    std::vector<Arm> warm_all, warm_own;
    std::map<std::string, std::vector<double>> init_design;  // per scenario: own initial-design trials per seed
    for (const Scenario& sc : scenarios) {
      warm_all.push_back({sc.name, "all", {}});
      warm_own.push_back({sc.name, "own", {}});
    }
    std::size_t cold_init_design_total = 0;
    std::map<std::string, std::pair<std::size_t, std::size_t>> corners;  // per arm: first 5, all; summed over seeds

    auto regrets = [&](const RunB& run, bool with_imported) {
      Series s;
      for (double b : run.best_own) s.regret.push_back((with_imported ? std::min(b, run.best_imported) : b) - fn.minimum);
      return s;
    };
    auto write_rows = [&](const std::string& scenario, const std::string& arm, std::size_t seed, const RunB& run,
                          bool all_defined) {
      for (std::size_t k = 0; k < run.best_own.size(); ++k) {
        const double own = run.best_own[k];
        csv << fn.name << ',' << scenario << ',' << arm << ',' << seed << ',' << (1000 + seed) << ',' << k << ','
            << own << ',' << run.best_imported << ',';
        if (all_defined)
          csv << (std::min(own, run.best_imported) - fn.minimum);
        else
          csv << "nan";
        csv << ',' << (own - fn.minimum) << ',' << target << ',' << run.value[k] << ',' << run.point[k] << ','
            << run.source[k] << '\n';
      }
    };

    std::vector<RunB> cold_runs;
    for (std::size_t seed = 0; seed < opt.seeds; ++seed) {
      RunB run = campaign_b(fn, full_space, seed, opt.trials_b, nullptr, 0, false);
      if (!run.note.empty()) notes.push_back("cold seed " + std::to_string(seed) + ": " + run.note);
      cold_init_design_total += run.initial_design_trials;
      corners["cold"].first += run.corners_first5;
      corners["cold"].second += run.corners;
      cold.series.push_back(regrets(run, false));
      cold_runs.push_back(std::move(run));
    }
    std::fprintf(stderr, "[%7.1f s] %s: cold, %zu seeds\n", elapsed(), fn.name.c_str(), opt.seeds);

    for (std::size_t si = 0; si < scenarios.size(); ++si) {
      const Scenario& sc = scenarios[si];
      const std::function<double(const Eigen::VectorXd&)> f_a =
          sc.mirror ? std::function<double(const Eigen::VectorXd&)>(
                          [&fn](const Eigen::VectorXd& x) { return fn.f(fn.lower + fn.upper - x); })
                    : fn.f;
      for (std::size_t seed = 0; seed < opt.seeds; ++seed) {
        const std::uint64_t seed_a = 1000 + seed;
        std::string note_a;
        const std::vector<Result> history = campaign_a(f_a, sc.box, dim, seed_a, opt.trials_a, note_a);
        if (!note_a.empty()) notes.push_back(sc.name + " seed " + std::to_string(seed) + ": " + note_a);
        RunB run = campaign_b(fn, full_space, seed, opt.trials_b, &history, seed_a, opt.keep_design);
        if (!run.note.empty()) notes.push_back(sc.name + " warm seed " + std::to_string(seed) + ": " + run.note);
        if (run.failed) {
          warm_all[si].series.push_back({{}, false});
          warm_own[si].series.push_back({{}, false});
          continue;
        }
        init_design[sc.name].push_back(static_cast<double>(run.initial_design_trials));
        corners[sc.name].first += run.corners_first5;
        corners[sc.name].second += run.corners;
        warm_all[si].series.push_back(regrets(run, !sc.mirror));
        warm_own[si].series.push_back(regrets(run, false));
        write_rows(sc.name, "cold", seed, cold_runs[seed], true);
        write_rows(sc.name, "warm", seed, run, !sc.mirror);
      }
      std::fprintf(stderr, "[%7.1f s] %s: %s, %zu seeds\n", elapsed(), fn.name.c_str(), sc.name.c_str(), opt.seeds);
    }

    // ---- tables ----
    std::printf("\n## %s (d = %zu, minimum %.10g, typical gap %.4g, target regret %.4g)\n\n", fn.name.c_str(), dim,
                fn.minimum, gap, target);
    std::printf("- full domain: %s\n", describe(full).c_str());
    std::printf("- contains: %s\n", describe(contains).c_str());
    std::printf("- excludes: %s (x%ld takes the other half; the minimiser lies %.3g of that range outside)\n",
                describe(excludes).c_str(), static_cast<long>(flipped), outside);
    if (with_misleading)
      std::printf("- misleading: A on g(x) = f(lower + upper - x) over %s (the reflected contains box)\n",
                  describe(mirrored).c_str());
    std::printf("\n| scenario | arm | regret |");
    for (std::size_t k : checkpoints) std::printf(" @%zu |", k);
    std::printf(" own trials to target |\n|---|---|---|");
    for (std::size_t k = 0; k < std::size(checkpoints); ++k) std::printf("---|");
    std::printf("---|\n");

    auto row = [&](const std::string& scenario, const std::string& arm, const std::string& measure, const Arm& a) {
      std::printf("| %s | %s | %s |", scenario.c_str(), arm.c_str(), measure.c_str());
      for (std::size_t k : checkpoints) {
        std::vector<double> v;
        for (const Series& s : a.series)
          if (s.present && k < s.regret.size()) v.push_back(s.regret[k]);
        std::printf(" %s |", k == 0 && measure == "own" ? "-" : cell(v).c_str());
      }
      std::vector<double> tt;
      for (const Series& s : a.series)
        if (s.present) tt.push_back(static_cast<double>(trials_to_target(s, target)));
      std::printf(" %s |\n", count_cell(tt, opt.trials_b + 1).c_str());
    };
    row("-", "cold", "own", cold);
    for (std::size_t si = 0; si < scenarios.size(); ++si) {
      if (!scenarios[si].mirror) row(scenarios[si].name, "warm", "all", warm_all[si]);
      row(scenarios[si].name, "warm", "own", warm_own[si]);
    }

    // Paired: warm vs cold, same seed.
    std::printf("\npaired warm vs cold (same B seed): warm better / worse / equal at k own trials; own trials to "
                "target saved (cold - warm), median [q25, q75]\n\n");
    std::printf("| scenario | regret |");
    for (std::size_t k : checkpoints)
      if (k > 0) std::printf(" @%zu |", k);
    std::printf(" trials saved to target | warm reaches target first / later / same |\n|---|---|");
    for (std::size_t k : checkpoints)
      if (k > 0) std::printf("---|");
    std::printf("---|---|\n");
    auto paired = [&](const std::string& scenario, const std::string& measure, const Arm& warm) {
      std::printf("| %s | %s |", scenario.c_str(), measure.c_str());
      for (std::size_t k : checkpoints) {
        if (k == 0) continue;
        std::size_t better = 0, worse = 0, equal = 0;
        for (std::size_t seed = 0; seed < warm.series.size(); ++seed) {
          if (!warm.series[seed].present || k >= warm.series[seed].regret.size()) continue;
          const double w = warm.series[seed].regret[k], c = cold.series[seed].regret[k];
          if (w < c)
            ++better;
          else if (w > c)
            ++worse;
          else
            ++equal;
        }
        std::printf(" %zu / %zu / %zu |", better, worse, equal);
      }
      std::vector<double> saved;
      std::size_t first = 0, later = 0, same = 0;
      for (std::size_t seed = 0; seed < warm.series.size(); ++seed) {
        if (!warm.series[seed].present) continue;
        const double d = static_cast<double>(trials_to_target(cold.series[seed], target)) -
                         static_cast<double>(trials_to_target(warm.series[seed], target));
        saved.push_back(d);
        if (d > 0)
          ++first;
        else if (d < 0)
          ++later;
        else
          ++same;
      }
      std::printf(" %s | %zu / %zu / %zu |\n", cell(saved).c_str(), first, later, same);
    };
    for (std::size_t si = 0; si < scenarios.size(); ++si) {
      if (!scenarios[si].mirror) paired(scenarios[si].name, "all", warm_all[si]);
      paired(scenarios[si].name, "own", warm_own[si]);
    }

    std::printf("\nown trials drawn from ei's initial design (%zu for d = %zu): cold %.3g per run",
                std::min<std::size_t>(2 * dim + 1, 20), dim,
                static_cast<double>(cold_init_design_total) / static_cast<double>(opt.seeds));
    for (const Scenario& sc : scenarios) std::printf(", %s warm median %g", sc.name.c_str(), median(init_design[sc.name]));
    std::printf("\nown trials at a corner of the domain (every coordinate at a bound), summed over seeds, among "
                "the first 5 / all %zu: cold %zu / %zu",
                opt.trials_b, corners["cold"].first, corners["cold"].second);
    for (const Scenario& sc : scenarios)
      std::printf(", %s warm %zu / %zu", sc.name.c_str(), corners[sc.name].first, corners[sc.name].second);
    std::printf("\n");
    for (const std::string& n : notes) std::printf("\nnote: %s\n", n.c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "[%7.1f s] %s done in %.1f s\n", elapsed(), fn.name.c_str(), elapsed() - t_fn);
  }

  std::fprintf(stderr, "total %.1f s; rows written to %s\n", elapsed(), opt.csv.c_str());
  return 0;
}
