// Optimisation quality on MIXED search spaces (floats, integers, categoricals, ordinals): the C++
// half (bench/mixed_space.sh runs it with bench/mixed_space.py, which adds Optuna's TPE and random
// samplers and prints the combined tables). The functions are bench/functions/mixed_space.hpp's:
// branin_cat, hartmann3_cat2, nn_surrogate, whose listed order of categorical choices carries no
// information, so the benchmark measures how well a strategy handles categoricals whatever their
// order: ei's one-hot inputs against its `categorical_encoding: ordered` (one coordinate, the choices
// in the order given; README "Search space"), random search and Optuna.
//
// Every method minimises fn over its own tune::Space, one evaluation at a time, for `evaluations`
// steps and seeds 0 .. seeds-1 (the study seed is the seed):
//   NAME        tune::Study with make_strategy(NAME), default options: `ei`, `random`, or any other
//               strategy name
//   NAME:YAML   make_strategy(NAME, YAML::Load(YAML)): strategy options, e.g. `ei:{epsilon: 0.01}`,
//               so that a new option can be compared with the default in the same run. The method's
//               label (tables, CSV) is the text as given. In --methods, commas inside {} or [] do not
//               split methods: --methods "ei,ei:{kernel: squared_exponential, initial_design: 10}".
//
// Regret = best_so_far - minimum (the closed-form minimum of the header); a regret below -1e-9 is an
// error naming the function, the method, the seed and the point (the minimum would be wrong).
// Target regret = 1% of the function's typical gap, the median of f - minimum over 4096 uniform
// random points of the space (fixed seed; testfn::typical_gap); "evaluations to target" is the first
// evaluation whose best_so_far is within it (the best never rises), and its median over the seeds
// counts a run that never reaches it as infinite (">N" when the median is such a run).
//
// Prints per function: method | median and IQR (Q3 - Q1, R type 7) of the simple regret at
// evaluations 15, 30, 60 (those within the budget, and the budget itself) | runs reaching the target |
// median evaluations to target. Writes one CSV row per (function, method, seed, evaluation):
// best_so_far, regret.
//
// `--eval FUNCTION` is the evaluation service for the Python half. It prints a header:
//   "<parameters> <minimum> <target>" (%.17g), then one line per parameter in the space's order:
//   "float NAME LOW HIGH linear|log", "int NAME LOW HIGH linear|log", "categorical NAME C1 C2 ...",
//   "ordinal NAME C1 C2 ...";
// then reads lines of values, one per parameter in that order separated by spaces (floats as
// decimal text, integers as integers, choices as their names), and prints f at each (%.17g).
// `--check-minima [a,b]` compares each function's closed-form minimum with an exhaustive numerical
// search (testfn::search_minimum) and fails if the search finds anything lower by more than 1e-9.
//
// --orders shuffled (the default): seed s runs the function with every categorical's choices listed
// in an order drawn from s (testfn::with_shuffled_choices; seed 0 as listed), so that a method that
// depends on the order is measured over 50 orders rather than on one; --orders listed: as listed.
//
// Usage: mixed_space [--seeds N] [--evaluations N] [--functions a,b] [--methods a,b] [--orders shuffled|listed]
//                    [--csv PATH]
//        mixed_space --eval FUNCTION
//        mixed_space --check-minima [--functions a,b]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "bench_args.hpp"
#include "bench_stats.hpp"
#include "regret_tables.hpp"
#include "functions/mixed_space.hpp"
#include "tune/tune.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using tune::testfn::MixedFunction;

constexpr double kTargetFraction = 0.01;
constexpr double kRegretTolerance = 1e-9;

struct Options {
  std::size_t seeds = 20;
  std::size_t evaluations = 60;
  std::vector<std::string> functions = tune::testfn::mixed_names();
  std::vector<std::string> methods = {"ei", "random"};
  std::string csv = "mixed_space_cpp.csv";
  bool shuffled = true;  // --orders shuffled: seed s lists the categoricals' choices in its own order
};

struct Method {
  std::string label;  // as given
  std::string name;   // the strategy
  std::string yaml;   // its options, empty for the defaults
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "mixed_space: %s\nusage: mixed_space [--seeds N] [--evaluations N] [--functions a,b] "
               "[--methods a,b] [--orders shuffled|listed] [--csv PATH]\n       mixed_space --eval FUNCTION\n"
               "       mixed_space --check-minima [--functions a,b]\n",
               message.c_str());
  std::exit(2);
}

std::size_t parse_count(const std::string& flag, const std::string& text) {
  if (const auto v = tune::bench::positive_count(text)) return *v;
  usage_error(flag + " expects a positive integer, got '" + text + "'");
}

Method parse_method(const std::string& text) {
  Method m{text, text, ""};
  if (const auto colon = text.find(':'); colon != std::string::npos) {
    m.name = text.substr(0, colon);
    m.yaml = text.substr(colon + 1);
  }
  return m;
}

std::unique_ptr<tune::Strategy> strategy_for(const Method& m) {
  if (m.yaml.empty()) return tune::make_strategy(m.name);
  return tune::make_strategy(m.name, YAML::Load(m.yaml));
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char ch : text) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  return quoted + '"';
}

struct Run {
  std::vector<double> best_so_far;
  std::string stop_reason;
};

Run run_study(const MixedFunction& fn, const Method& method, std::uint64_t seed, std::size_t evaluations) {
  tune::Study study(fn.space, strategy_for(method), {.direction = tune::Direction::minimize, .seed = seed});
  Run run;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < evaluations; ++k) {
    std::optional<tune::Suggestion> s = study.ask();
    if (!s) {
      run.stop_reason = study.stop_reason().empty() ? "ask() returned nothing" : study.stop_reason();
      break;
    }
    const double value = fn.f(s->config);
    if (value - fn.minimum < -kRegretTolerance) {
      std::fprintf(stderr,
                   "mixed_space: %s: f = %.17g at %s (method %s, seed %llu) is below the known minimum %.17g: "
                   "the minimum is wrong\n",
                   fn.name.c_str(), value, tune::to_string(s->config).c_str(), method.label.c_str(),
                   static_cast<unsigned long long>(seed), fn.minimum);
      std::exit(1);
    }
    study.tell(s->id, value);
    best = std::min(best, value);
    run.best_so_far.push_back(best);
  }
  return run;
}

void print_table(const MixedFunction& fn, double gap, const std::vector<Method>& methods,
                 const std::vector<std::vector<Run>>& runs, std::size_t seeds, std::size_t budget) {
  const double target = kTargetFraction * gap;
  tune::bench::print_regret_table_head(fn.name, fn.minimum, target, gap, seeds, budget);
  for (std::size_t m = 0; m < methods.size(); ++m) {
    std::printf("| %s |", methods[m].label.c_str());
    std::vector<const std::vector<double>*> best_so_far;
    for (const Run& r : runs[m]) best_so_far.push_back(&r.best_so_far);
    tune::bench::print_regret_cells(best_so_far, fn.minimum, target, budget);
    std::printf("\n");
  }
  std::fflush(stdout);
}

MixedFunction function_or_exit(const std::string& name) {
  try {
    return tune::testfn::mixed_by_name(name);
  } catch (const std::exception& e) {
    usage_error(e.what());
  }
}

int serve(const std::string& name) {
  const MixedFunction fn = function_or_exit(name);
  const std::vector<tune::Parameter>& params = fn.space.parameters();
  std::printf("%zu %.17g %.17g\n", params.size(), fn.minimum, kTargetFraction * tune::testfn::typical_gap(fn));
  for (const tune::Parameter& p : params) {
    switch (p.type) {
      case tune::ParamType::floating:
      case tune::ParamType::integer:
        std::printf("%s %s %.17g %.17g %s\n", p.type == tune::ParamType::floating ? "float" : "int", p.name.c_str(),
                    p.low, p.high, tune::to_string(p.scale));
        break;
      case tune::ParamType::categorical:
      case tune::ParamType::ordinal:
        std::printf("%s %s", tune::to_string(p.type), p.name.c_str());
        for (const std::string& c : p.choices) std::printf(" %s", c.c_str());
        std::printf("\n");
        break;
    }
  }
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    tune::Config config;
    for (const tune::Parameter& p : params) {
      std::string token;
      if (!(in >> token)) {
        std::fprintf(stderr, "mixed_space --eval: expected %zu values, got '%s'\n", params.size(), line.c_str());
        return 1;
      }
      if (p.type == tune::ParamType::floating) {
        config[p.name] = tune::bench::real_value(token, "mixed_space --eval", p.name.c_str());
      } else if (p.type == tune::ParamType::integer) {
        config[p.name] = static_cast<std::int64_t>(std::llround(tune::bench::real_value(token, "mixed_space --eval", p.name.c_str())));
      } else {
        config[p.name] = token;
      }
    }
    try {
      std::printf("%.17g\n", fn.f(config));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mixed_space --eval: %s\n", e.what());
      return 1;
    }
    std::fflush(stdout);
  }
  return 0;
}

int check_minima(const std::vector<std::string>& names) {
  int status = 0;
  std::printf("| function | closed-form minimum | numerical search | difference | combinations | evaluations | "
              "argmin found |\n|---|---|---|---|---|---|---|\n");
  for (const std::string& name : names) {
    const MixedFunction fn = function_or_exit(name);
    const double at_argmin = fn.f(fn.argmin);
    if (std::abs(at_argmin - fn.minimum) > kRegretTolerance) {
      std::fprintf(stderr, "mixed_space: %s: f at the documented argmin %s is %.17g, not the minimum %.17g\n",
                   name.c_str(), tune::to_string(fn.argmin).c_str(), at_argmin, fn.minimum);
      status = 1;
    }
    const tune::testfn::MinimumSearch s = tune::testfn::search_minimum(fn);
    std::printf("| %s | %.17g | %.17g | %.3g | %zu | %zu | %s |\n", name.c_str(), fn.minimum, s.value,
                s.value - fn.minimum, s.combinations, s.evaluations, tune::to_string(s.argmin).c_str());
    std::fflush(stdout);
    if (s.value - fn.minimum < -kRegretTolerance) {
      std::fprintf(stderr, "mixed_space: %s: the search found %.17g at %s, below the minimum %.17g\n", name.c_str(),
                   s.value, tune::to_string(s.argmin).c_str(), fn.minimum);
      status = 1;
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--eval") return serve(value());
    if (arg == "--check-minima") {
      check = true;
    } else if (arg == "--seeds") {
      o.seeds = parse_count(arg, value());
    } else if (arg == "--evaluations") {
      o.evaluations = parse_count(arg, value());
    } else if (arg == "--functions") {
      o.functions = tune::bench::split_commas(value());
    } else if (arg == "--methods") {
      o.methods = tune::bench::split_methods(value());
    } else if (arg == "--csv") {
      o.csv = value();
    } else if (arg == "--orders") {
      const std::string v = value();
      if (v != "shuffled" && v != "listed") usage_error("--orders takes 'shuffled' or 'listed', not '" + v + "'");
      o.shuffled = v == "shuffled";
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }
  if (o.functions.empty()) usage_error("--functions names none");
  if (o.methods.empty()) usage_error("--methods names none");
  if (check) return check_minima(o.functions);
  std::vector<MixedFunction> functions;
  for (const std::string& name : o.functions) functions.push_back(function_or_exit(name));
  std::vector<Method> methods;
  for (const std::string& text : o.methods) {
    methods.push_back(parse_method(text));
    try {  // refuse an unknown strategy or option before any run
      (void)strategy_for(methods.back());
      (void)tune::Study(functions.front().space, strategy_for(methods.back()), {.seed = 0});
    } catch (const std::exception& e) {
      usage_error("method '" + text + "': " + e.what());
    }
  }
  std::ofstream csv(o.csv);
  if (!csv) {
    std::fprintf(stderr, "mixed_space: cannot write '%s'\n", o.csv.c_str());
    return 1;
  }
  csv << "function,method,seed,evaluation,best_so_far,regret\n";
  csv.precision(17);
  const auto start = Clock::now();
  for (const MixedFunction& fn : functions) {
    std::vector<std::vector<Run>> runs;
    for (const Method& method : methods) {
      const auto t_method = Clock::now();
      runs.emplace_back();
      for (std::size_t seed = 0; seed < o.seeds; ++seed) {
        Run run = run_study(o.shuffled ? tune::testfn::with_shuffled_choices(fn, seed) : fn, method, seed, o.evaluations);
        if (!run.stop_reason.empty())
          std::fprintf(stderr, "note: %s / %s seed %zu stopped after %zu evaluations: %s\n", fn.name.c_str(),
                       method.label.c_str(), seed, run.best_so_far.size(), run.stop_reason.c_str());
        for (std::size_t k = 0; k < run.best_so_far.size(); ++k)
          csv << fn.name << ',' << csv_field(method.label) << ',' << seed << ',' << (k + 1) << ','
              << run.best_so_far[k] << ',' << (run.best_so_far[k] - fn.minimum) << '\n';
        runs.back().push_back(std::move(run));
      }
      std::fprintf(stderr, "[%7.1f s] %s / %s: %zu seeds in %.1f s\n",
                   std::chrono::duration<double>(Clock::now() - start).count(), fn.name.c_str(),
                   method.label.c_str(), o.seeds, std::chrono::duration<double>(Clock::now() - t_method).count());
    }
    print_table(fn, tune::testfn::typical_gap(fn), methods, runs, o.seeds, o.evaluations);
  }
  return 0;
}
