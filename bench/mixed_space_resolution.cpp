// The mixed-space functions (bench/functions/mixed_space.hpp) with a resolution: how well a
// multi-resolution strategy's recommendation does when the space has categoricals, e.g. cmets with
// one-hot inputs against its `categorical_encoding: ordered`, and ei at the full resolution.
//
// Every study has the resolution epochs {1, 3, 9} with declared costs {1/9, 1/3, 1} (a full run
// costs 1) and a cost budget of `budget` full runs. A run at e epochs of configuration c reads
//   f(c) + (1 - e / 9) (0.4 + 0.1 (log10 lr + 3))
// (lr only where the function has one; 0.4 otherwise): fewer epochs read higher everywhere and
// favour a larger learning rate, a cheap run's usual bias. The full run reads f(c). No noise.
// Seed s lists every categorical's choices in its own order (testfn::with_shuffled_choices; seed 0
// as listed): cmets's tree splits the coordinate at its midpoints, so one listed order favours or
// hinders it by where its best choices sit (on branin_cat as listed, the tree's first centres land
// on the best and second-best choices).
//
// Reported per function and method, over seeds 0 .. seeds-1 (the study seed): the final
// recommendation's regret f(recommendation) - minimum (Study::recommendation: cmets's and cmes's
// model optimum, ei's best trial by its model), its median and quartiles, the runs within the
// target (1% of the typical gap, as bench/mixed_space.cpp), and the median regret of the best
// full-resolution run. One CSV row per (function, method, seed): recommendation_regret,
// best_full_regret, spent, trials.
//
// Usage: mixed_space_resolution [--seeds N] [--budget B] [--functions a,b] [--methods "a;b"] [--csv PATH]
//   methods are separated by ';' (options hold commas): NAME or NAME:YAML, e.g.
//   "cmets;cmets:{categorical_encoding: ordered};ei"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "bench_args.hpp"
#include "functions/mixed_space.hpp"
#include "tune/tune.hpp"

namespace {

struct Options {
  std::size_t seeds = 50;
  double budget = 30.0;
  std::vector<std::string> functions = tune::testfn::mixed_names();
  std::vector<std::string> methods = {"cmets", "cmets:{categorical_encoding: ordered}", "ei"};
  std::string csv = "mixed_space_resolution.csv";
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "mixed_space_resolution: %s\nusage: mixed_space_resolution [--seeds N] [--budget B] "
               "[--functions a,b] [--methods \"a;b\"] [--csv PATH]\n",
               message.c_str());
  std::exit(2);
}

std::vector<std::string> split_on(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find(separator, start);
    const std::string part = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!part.empty()) parts.push_back(part);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

std::unique_ptr<tune::Strategy> make_method(const std::string& method) {
  const std::size_t colon = method.find(':');
  if (colon == std::string::npos) return tune::make_strategy(method);
  return tune::make_strategy(method.substr(0, colon), YAML::Load(method.substr(colon + 1)));
}

double cheap_bias(const tune::Config& c, double epochs) {
  double lr_term = 0.0;
  if (const auto it = c.find("lr"); it != c.end()) lr_term = 0.1 * (std::log10(std::get<double>(it->second)) + 3.0);
  return (1.0 - epochs / 9.0) * (0.4 + lr_term);
}

struct Run {
  double recommendation_regret = 0.0;
  double best_full_regret = 0.0;
  double spent = 0.0;
  std::size_t trials = 0;
};

Run run_once(const tune::testfn::MixedFunction& fn, const std::string& method, std::uint64_t seed, double budget) {
  tune::StudyOptions so;
  so.direction = tune::Direction::minimize;
  so.seed = seed;
  so.resolution = tune::Resolution{"epochs", {1, 3, 9}, {1.0 / 9.0, 1.0 / 3.0, 1.0}};
  so.cost_budget = budget;
  tune::Study study(fn.space, make_method(method), so);
  double best_full = 1e300;
  while (const auto s = study.ask()) {
    const double epochs = s->resolution_value.value_or(9.0);
    const double f = fn.f(s->config);
    if (epochs >= 9.0) best_full = std::min(best_full, f);
    study.tell(s->id, f + cheap_bias(s->config, epochs));
  }
  Run r;
  const auto rec = study.recommendation();
  r.recommendation_regret = rec ? fn.f(fn.space.decode(rec->unit)) - fn.minimum : 1e300;
  r.best_full_regret = best_full - fn.minimum;
  r.spent = study.spent_cost();
  r.trials = study.trials().size();
  return r;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--seeds") o.seeds = tune::bench::count_value(value(), "mixed_space_resolution", "--seeds");
    else if (arg == "--budget") o.budget = tune::bench::real_value(value(), "mixed_space_resolution", "--budget");
    else if (arg == "--functions") o.functions = split_on(value(), ',');
    else if (arg == "--methods") o.methods = split_on(value(), ';');
    else if (arg == "--csv") o.csv = value();
    else usage_error("unknown argument '" + arg + "'");
  }
  if (o.seeds == 0) usage_error("--seeds must be at least 1");
  if (!(o.budget > 0)) usage_error("--budget must be > 0 (full runs)");
  std::ofstream csv(o.csv);
  csv << "function,method,seed,recommendation_regret,best_full_regret,spent,trials\n";
  csv.precision(17);
  std::printf("mixed_space_resolution: %zu seeds, budget %g full runs, epochs {1, 3, 9} at costs {1/9, 1/3, 1}\n",
              o.seeds, o.budget);
  for (const std::string& name : o.functions) {
    const tune::testfn::MixedFunction fn = tune::testfn::mixed_by_name(name);
    const double target = 0.01 * tune::testfn::typical_gap(fn);
    std::printf("\n## %s (target regret %.3g)\n\n", name.c_str(), target);
    std::printf("| method | recommendation regret: median (Q1-Q3) | within target | best full run regret: median | trials per run: median |\n|---|---|---|---|---|\n");
    for (const std::string& method : o.methods) {
      std::vector<double> rec, full, trials;
      std::size_t within = 0;
      for (std::size_t seed = 0; seed < o.seeds; ++seed) {
        const Run r = run_once(tune::testfn::with_shuffled_choices(fn, seed), method, seed, o.budget);
        rec.push_back(r.recommendation_regret);
        full.push_back(r.best_full_regret);
        trials.push_back(static_cast<double>(r.trials));
        within += r.recommendation_regret <= target;
        csv << name << ",\"" << method << "\"," << seed << ',' << r.recommendation_regret << ',' << r.best_full_regret
            << ',' << r.spent << ',' << r.trials << '\n';
      }
      std::printf("| %s | %.3g (%.3g-%.3g) | %zu/%zu | %.3g | %.0f |\n", method.c_str(), quantile(rec, 0.5),
                  quantile(rec, 0.25), quantile(rec, 0.75), within, o.seeds, quantile(full, 0.5), quantile(trials, 0.5));
      std::fflush(stdout);
    }
  }
  return 0;
}
