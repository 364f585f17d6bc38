// What a diverged run reported as a huge value does to the search: a training script whose loss
// blows up prints `loss=1e30` (or 1e10, or 3.4e38) rather than nan, and tune records it as a
// result. One such value dominates a GP's standardisation and its hyperparameter fit.
//
// For each function (minimised on the unit cube, as in regret_table), a "diverging" region: the
// points whose value lies above the function's 85% quantile (over 4096 pseudo-random points), i.e.
// its worst 15%. Each strategy runs `evaluations` ask/tell steps per seed with a trial in that
// region reported three ways:
//   as-told    its true value (the reference: no divergence),
//   huge       the value --huge (1e30 by default), what a diverged trainer prints,
//   failed     Study::fail (what a user who knows the run diverged should report).
// Regret is the best true value observed among the trials that did not diverge, minus the minimum.
// Prints the median regret (over seeds) at 25 and at `evaluations` evaluations per (function,
// strategy, mode), and writes every (function, strategy, mode, seed, evaluation, regret) to a CSV.
//
// Usage: diverged_runs [--seeds N] [--evaluations N] [--functions a,b] [--strategies a,b]
//                      [--huge X] [--csv PATH]
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include <Eigen/Core>

#include "bench_args.hpp"
#include "bench_stats.hpp"
#include "functions/test_functions.hpp"
#include "tune/tune.hpp"

namespace {

struct Options {
  std::size_t seeds = 10;
  std::size_t evaluations = 50;
  std::vector<std::string> functions = {"branin", "hartmann3", "hartmann6"};
  std::vector<std::string> strategies = {"ei", "ucb", "cmes"};
  double huge = 1e30;
  std::string csv = "diverged_runs.csv";
};

constexpr const char* kUsage =
    "usage: diverged_runs [--seeds N] [--evaluations N] [--functions a,b] [--strategies a,b] [--huge X] "
    "[--csv PATH]";

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seeds") o.seeds = tune::bench::count_value(tune::bench::option_value(argc, argv, i, "diverged_runs"), "diverged_runs", "--seeds");
    else if (arg == "--evaluations")
      o.evaluations = tune::bench::count_value(tune::bench::option_value(argc, argv, i, "diverged_runs"), "diverged_runs", "--evaluations");
    else if (arg == "--functions") o.functions = tune::bench::split_commas(tune::bench::option_value(argc, argv, i, "diverged_runs"));
    else if (arg == "--strategies") o.strategies = tune::bench::split_commas(tune::bench::option_value(argc, argv, i, "diverged_runs"));
    else if (arg == "--huge") o.huge = tune::bench::real_value(tune::bench::option_value(argc, argv, i, "diverged_runs"), "diverged_runs", "--huge");
    else if (arg == "--csv") o.csv = tune::bench::option_value(argc, argv, i, "diverged_runs");
    else {
      std::fprintf(stderr, "diverged_runs: unknown argument '%s'\n%s\n", arg.c_str(), kUsage);
      std::exit(2);
    }
  }
  if (o.seeds == 0 || o.evaluations < 25 || o.functions.empty() || o.strategies.empty()) {
    std::fprintf(stderr, "diverged_runs: needs seeds >= 1, evaluations >= 25, a function and a strategy\n%s\n", kUsage);
    std::exit(2);
  }
  return o;
}

// The function's 85% quantile over 4096 points of a fixed linear congruential sequence.
double divergence_threshold(const tune::testfn::TestFunction& fn) {
  std::vector<double> values;
  std::uint64_t state = 42;
  Eigen::VectorXd u(static_cast<Eigen::Index>(fn.dim()));
  for (int i = 0; i < 4096; ++i) {
    for (Eigen::Index j = 0; j < u.size(); ++j) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      u(j) = static_cast<double>(state >> 11) / 9007199254740992.0;
    }
    values.push_back(fn.at_unit(u));
  }
  return tune::bench::quantile(values, 0.85);
}

enum class Mode { as_told, huge, failed };
const char* name_of(Mode m) { return m == Mode::as_told ? "as-told" : m == Mode::huge ? "huge" : "failed"; }

// Regret after each evaluation.
std::vector<double> run_once(const tune::testfn::TestFunction& fn, double threshold, const std::string& strategy,
                             Mode mode, double huge, std::uint64_t seed, std::size_t evaluations) {
  std::vector<tune::Parameter> parameters;
  for (std::size_t j = 0; j < fn.dim(); ++j) parameters.push_back(tune::Parameter::floating("x" + std::to_string(j), 0.0, 1.0));
  const tune::Space space(parameters);
  tune::Study study(space, tune::make_strategy(strategy), {.direction = tune::Direction::minimize, .seed = seed});
  std::vector<double> regret;
  double best = std::numeric_limits<double>::infinity();
  Eigen::VectorXd u(static_cast<Eigen::Index>(fn.dim()));
  for (std::size_t k = 0; k < evaluations; ++k) {
    const std::optional<tune::Suggestion> s = study.ask();
    if (!s) break;
    for (std::size_t j = 0; j < fn.dim(); ++j) u(static_cast<Eigen::Index>(j)) = std::get<double>(s->config.at(parameters[j].name));
    const double value = fn.at_unit(u);
    if (mode != Mode::as_told && value > threshold) {
      if (mode == Mode::huge) study.tell(s->id, huge);
      else study.fail(s->id, "diverged");
    } else {
      study.tell(s->id, value);
      best = std::min(best, value);
    }
    regret.push_back(best - fn.minimum);
  }
  while (regret.size() < evaluations) regret.push_back(regret.empty() ? std::numeric_limits<double>::infinity() : regret.back());
  return regret;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::ofstream csv(o.csv);
  csv << "function,strategy,mode,seed,evaluation,regret\n";
  csv.precision(17);
  std::printf("median regret of the best value observed (trials that did not diverge), %zu seeds; a diverged "
              "trial reported as its true value (as-told), as %g (huge), or as failed\n\n",
              o.seeds, o.huge);
  std::printf("| function | strategy | as-told @25 | huge @25 | failed @25 | as-told @%zu | huge @%zu | failed @%zu |\n",
              o.evaluations, o.evaluations, o.evaluations);
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const std::string& f : o.functions) {
    const tune::testfn::TestFunction fn = tune::testfn::by_name(f);
    const double threshold = divergence_threshold(fn);
    for (const std::string& strategy : o.strategies) {
      std::vector<double> at25[3], at_end[3];
      for (Mode mode : {Mode::as_told, Mode::huge, Mode::failed}) {
        const auto m = static_cast<std::size_t>(mode);
        for (std::uint64_t seed = 0; seed < o.seeds; ++seed) {
          const std::vector<double> r = run_once(fn, threshold, strategy, mode, o.huge, seed, o.evaluations);
          for (std::size_t k = 0; k < r.size(); ++k)
            csv << f << ',' << strategy << ',' << name_of(mode) << ',' << seed << ',' << (k + 1) << ',' << r[k] << '\n';
          at25[m].push_back(r[24]);
          at_end[m].push_back(r.back());
        }
      }
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", f.c_str(), strategy.c_str(),
                  tune::bench::fmt(tune::bench::median(at25[0])).c_str(), tune::bench::fmt(tune::bench::median(at25[1])).c_str(),
                  tune::bench::fmt(tune::bench::median(at25[2])).c_str(), tune::bench::fmt(tune::bench::median(at_end[0])).c_str(),
                  tune::bench::fmt(tune::bench::median(at_end[1])).c_str(), tune::bench::fmt(tune::bench::median(at_end[2])).c_str());
      std::fflush(stdout);
    }
  }
  std::printf("\nwrote %s\n", o.csv.c_str());
}
