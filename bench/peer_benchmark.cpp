// The C++ half of the peer benchmark (bench/peer_benchmark.sh runs it with bench/peer_benchmark.py,
// which adds Optuna and prints the tables): tune's ei, ucb and compressed ei, tune's Sobol
// sequence, and dlib's global optimiser, on the same test functions, budget and seeds.
//
// Every method minimises fn over the unit cube [0,1]^d (mapped linearly to the function's box by
// TestFunction::at_unit), one evaluation at a time, for `evaluations` steps and seeds 0 .. seeds-1:
//   ei, ucb        tune::Study with make_strategy(name), default options (as bench/regret_table.cpp)
//   ei-compressed  tune's ei with epsilon = 0.01 nats, on_reject = evaluate_no_add (the compressed
//                  setting of README "Suggestion latency"; every step is evaluated)
//   sobol          tune::Study with make_strategy("sobol") (a randomly shifted Sobol sequence)
//   dlib           dlib::global_function_search (the engine of find_min_global, solver epsilon 0 as
//                  find_min_global uses) with set_seed(seed), asked with get_next_x() and told with
//                  set(-f) (it maximises); only when built with dlib (TUNE_HAVE_DLIB)
// Diagnostics, not in the default list: ei-refit1 (ei refitting its hyperparameters at every ask,
// refit = {every 1, growth 0}) and ei-log1p (ei told log1p(f) instead of f; f >= 0, so Rosenbrock
// only; the regret is still that of f); ei-plain and ucb-plain (ei / ucb with output_transform =
// none: the plain GP on the raw values, as before the output transform existed).
// The study seed is the seed. The tuner's overhead per suggestion is the steady_clock time of ask()
// plus tell() (dlib: get_next_x() plus set()), never the function evaluation.
//
// Writes one CSV row per (function, method, seed, evaluation): best_so_far, regret, overhead_ms,
// in_model (1 if the suggestion joined the GP dictionary, ei-compressed only; else empty).
//
// `--eval FUNCTION` is the evaluation service for the Python half: it prints "dim minimum", then
// reads lines of dim unit-cube coordinates and prints f at each (%.17g), so Optuna is scored on
// exactly these functions.
//
// Usage: peer_benchmark [--seeds N] [--evaluations N] [--functions a,b] [--methods a,b] [--csv PATH]
//        peer_benchmark --eval FUNCTION
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

#include <Eigen/Core>

#ifdef TUNE_HAVE_DLIB
#include <dlib/global_optimization.h>
#endif

#include "bench_args.hpp"
#include "functions/test_functions.hpp"
#include "tune/tune.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::size_t seeds = 20;
  std::size_t evaluations = 100;
  std::vector<std::string> functions = {"branin", "hartmann3", "hartmann6", "rosenbrock4"};
  std::vector<std::string> methods = {"ei", "ucb", "ei-compressed", "sobol", "dlib"};
  std::string csv = "peer_benchmark_cpp.csv";
};

struct Run {
  std::vector<double> best_so_far;
  std::vector<double> overhead_ms;
  std::vector<int> in_model;  // -1: not applicable
  std::string stop_reason;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "peer_benchmark: %s\nusage: peer_benchmark [--seeds N] [--evaluations N] [--functions a,b] "
               "[--methods a,b] [--csv PATH]\n       peer_benchmark --eval FUNCTION\n",
               message.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string& text) { return tune::bench::split_commas(text); }

std::size_t parse_count(const std::string& flag, const std::string& text) {
  if (const auto v = tune::bench::positive_count(text)) return *v;
  usage_error(flag + " expects a positive integer, got '" + text + "'");
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::unique_ptr<tune::Strategy> strategy_for(const std::string& method) {
  if (method == "ei-compressed") {
    tune::GpBanditOptions o;
    o.acquisition = tune::AcquisitionType::ei;
    o.epsilon = 0.01;
    o.on_reject = tune::RejectPolicy::evaluate_no_add;
    return tune::make_gp_bandit(tune::AcquisitionType::ei, o);
  }
  if (method == "ei-refit1") {  // diagnostic: refit the hyperparameters at every ask (as Limbo's figures)
    tune::GpBanditOptions o;
    o.refit = {.every = 1, .growth = 0.0};
    return tune::make_gp_bandit(tune::AcquisitionType::ei, o);
  }
  if (method == "ei-log1p") return tune::make_strategy("ei");  // told log1p(f), see run_tune
  if (method == "ei-plain" || method == "ucb-plain") {  // diagnostic: no output transform
    tune::GpBanditOptions o;
    o.output_transform = tune::OutputTransformKind::none;
    const auto a = method == "ei-plain" ? tune::AcquisitionType::ei : tune::AcquisitionType::ucb;
    o.acquisition = a;
    return tune::make_gp_bandit(a, o);
  }
  return tune::make_strategy(method);
}

Run run_tune(const tune::testfn::TestFunction& fn, const tune::Space& space, const std::string& method,
             std::uint64_t seed, std::size_t evaluations) {
  tune::Study study(space, strategy_for(method), {.direction = tune::Direction::minimize, .seed = seed});
  Run run;
  double best = std::numeric_limits<double>::infinity();
  const std::vector<tune::Parameter>& params = space.parameters();
  Eigen::VectorXd u(static_cast<Eigen::Index>(space.dim()));
  for (std::size_t k = 0; k < evaluations; ++k) {
    const auto t0 = Clock::now();
    std::optional<tune::Suggestion> s = study.ask();
    double overhead = ms_since(t0);
    if (!s) {
      run.stop_reason = study.stop_reason().empty() ? "ask() returned nothing" : study.stop_reason();
      break;
    }
    for (std::size_t j = 0; j < params.size(); ++j)
      u(static_cast<Eigen::Index>(j)) = std::get<double>(s->config.at(params[j].name));
    const double value = fn.at_unit(u);
    const auto t1 = Clock::now();
    study.tell(s->id, method == "ei-log1p" ? std::log1p(value) : value);
    overhead += ms_since(t1);
    best = std::min(best, value);
    run.best_so_far.push_back(best);
    run.overhead_ms.push_back(overhead);
    run.in_model.push_back(method == "ei-compressed" ? (study.trials().back().in_model ? 1 : 0) : -1);
  }
  return run;
}

#ifdef TUNE_HAVE_DLIB
Run run_dlib(const tune::testfn::TestFunction& fn, std::uint64_t seed, std::size_t evaluations) {
  const long d = static_cast<long>(fn.dim());
  dlib::matrix<double, 0, 1> lower = dlib::zeros_matrix<double>(d, 1), upper = dlib::ones_matrix<double>(d, 1);
  dlib::global_function_search opt(dlib::function_spec(lower, upper));
  opt.set_seed(static_cast<time_t>(seed));
  opt.set_solver_epsilon(0);  // find_min_global's default
  Run run;
  double best = std::numeric_limits<double>::infinity();
  Eigen::VectorXd u(d);
  for (std::size_t k = 0; k < evaluations; ++k) {
    const auto t0 = Clock::now();
    dlib::function_evaluation_request next = opt.get_next_x();
    double overhead = ms_since(t0);
    for (long j = 0; j < d; ++j) u(j) = next.x()(j);
    const double value = fn.at_unit(u);
    const auto t1 = Clock::now();
    next.set(-value);
    overhead += ms_since(t1);
    best = std::min(best, value);
    run.best_so_far.push_back(best);
    run.overhead_ms.push_back(overhead);
    run.in_model.push_back(-1);
  }
  return run;
}
#endif

int serve(const std::string& name) {
  tune::testfn::TestFunction fn;
  try {
    fn = tune::testfn::by_name(name);
  } catch (const std::exception& e) {
    usage_error(e.what());
  }
  std::printf("%zu %.17g\n", fn.dim(), fn.minimum);
  std::fflush(stdout);
  std::string line;
  Eigen::VectorXd u(static_cast<Eigen::Index>(fn.dim()));
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    for (Eigen::Index j = 0; j < u.size(); ++j)
      if (!(in >> u(j))) {
        std::fprintf(stderr, "peer_benchmark --eval: expected %zu numbers, got '%s'\n", fn.dim(), line.c_str());
        return 1;
      }
    std::printf("%.17g\n", fn.at_unit(u));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  [[maybe_unused]] bool methods_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--eval") return serve(value());
    if (arg == "--seeds") {
      o.seeds = parse_count(arg, value());
    } else if (arg == "--evaluations") {
      o.evaluations = parse_count(arg, value());
    } else if (arg == "--functions") {
      o.functions = split(value());
    } else if (arg == "--methods") {
      o.methods = split(value());
      methods_set = true;
    } else if (arg == "--csv") {
      o.csv = value();
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }
#ifndef TUNE_HAVE_DLIB
  if (!methods_set) {  // the default list without dlib rather than an error
    std::erase(o.methods, std::string("dlib"));
    std::fprintf(stderr, "note: this build has no dlib (install libdlib-dev and reconfigure): no dlib rows\n");
  }
#endif
  for (const std::string& m : o.methods) {
    if (m == "dlib") {
#ifndef TUNE_HAVE_DLIB
      usage_error("method 'dlib': this build has no dlib (install libdlib-dev and reconfigure)");
#endif
    } else if (m == "ei-log1p") {
      for (const std::string& f : o.functions)
        if (f.rfind("rosenbrock", 0) != 0) usage_error("ei-log1p needs f >= 0: Rosenbrock only");
    } else if (m != "ei" && m != "ucb" && m != "ei-compressed" && m != "sobol" && m != "ei-refit1" &&
               m != "ei-plain" && m != "ucb-plain") {
      usage_error("unknown method '" + m +
                  "' (ei, ucb, ei-compressed, sobol, dlib; diagnostics ei-refit1, ei-log1p, ei-plain, ucb-plain)");
    }
  }
  std::vector<tune::testfn::TestFunction> functions;
  for (const std::string& name : o.functions) {
    try {
      functions.push_back(tune::testfn::by_name(name));
    } catch (const std::exception& e) {
      usage_error(e.what());
    }
  }
  std::ofstream csv(o.csv);
  if (!csv) {
    std::fprintf(stderr, "peer_benchmark: cannot write '%s'\n", o.csv.c_str());
    return 1;
  }
  csv << "function,method,seed,evaluation,best_so_far,regret,overhead_ms,in_model\n";
  csv.precision(17);
  const auto start = Clock::now();
  for (const tune::testfn::TestFunction& fn : functions) {
    std::vector<tune::Parameter> params;
    for (std::size_t j = 0; j < fn.dim(); ++j)
      params.push_back(tune::Parameter::floating("x" + std::to_string(j), 0.0, 1.0));
    const tune::Space space(params);
    for (const std::string& method : o.methods) {
      const auto t_method = Clock::now();
      for (std::size_t seed = 0; seed < o.seeds; ++seed) {
        Run run;
#ifdef TUNE_HAVE_DLIB
        if (method == "dlib") run = run_dlib(fn, seed, o.evaluations);
        else
#endif
          run = run_tune(fn, space, method, seed, o.evaluations);
        if (!run.stop_reason.empty())
          std::fprintf(stderr, "note: %s / %s seed %zu stopped after %zu evaluations: %s\n", fn.name.c_str(),
                       method.c_str(), seed, run.best_so_far.size(), run.stop_reason.c_str());
        for (std::size_t k = 0; k < run.best_so_far.size(); ++k) {
          csv << fn.name << ',' << method << ',' << seed << ',' << (k + 1) << ',' << run.best_so_far[k] << ','
              << (run.best_so_far[k] - fn.minimum) << ',' << run.overhead_ms[k] << ',';
          if (run.in_model[k] >= 0) csv << run.in_model[k];
          csv << '\n';
        }
      }
      std::fprintf(stderr, "[%7.1f s] %s / %s: %zu seeds in %.1f s\n",
                   std::chrono::duration<double>(Clock::now() - start).count(), fn.name.c_str(), method.c_str(),
                   o.seeds, std::chrono::duration<double>(Clock::now() - t_method).count());
    }
  }
  return 0;
}
