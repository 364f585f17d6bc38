// Cost to reach a target regret on multi-fidelity functions: `cmets` (configuration and level,
// cost-aware) against single-resolution `ei` and `cmes` at the top level.
//
// Protocol. For each function of bench/functions/multi_fidelity (minimised; the space is one
// [0,1] float per dimension) and each seed s = 0 .. seeds-1 (the study's seed): a Study with a
// resolution whose levels are the function's fidelities with its declared costs (top = 1) and a
// cost budget of `budget` top-level evaluations. After every tell the regret is recorded against the
// cost spent:
//   - cmets, cmes: f_top(recommendation) - minimum, the recommendation being the model's argmax
//     of the posterior mean (Study::recommendation); also, for reference, the regret of the best
//     full-resolution trial observed;
//   - ei: the regret of the best trial observed (every trial is at full resolution).
// The target is a fixed fraction (--target, default 1%) of the function's typical gap
// median_x f_top(x) - minimum over 4096 Sobol points, so it means the same on every function. The
// cost to target is the spent cost at the first step from which the regret stays <= target ("-" if
// it does not by the end of the budget; for ei, whose regret never rises, the first step <= target).
// Observations are noise-free (the functions are deterministic).
//
// Prints per function: method | runs reaching the target | median cost to target | median cost
// at which the regret is first within the target (it may leave it again) | median final regret;
// and the ratio of the medians cmets / ei (the target: <= 0.5). Writes every step
// (function, method, seed, step, level, spent, regret, observed regret, the trial's point and
// value, the recommendation's point) to a CSV.
//
// After each function, the same held cost at the fractions of --sweep (default 0.1%, 0.3%, 1%,
// 3%, 10% of the gap) with its ratio to ei: one target is a choice, and the sweep shows whether
// a ratio holds only there.
//
// --top-only (an ablation): every function with its top level alone (one level, cost 1, named
// NAME_top; --functions takes the plain names), so that cmets and cmes run on full-resolution
// trials only: what the tree and the acquisition give without any cheap run.
//
// --bootstrap N adds, for each cmets method, a percentile interval of the ratio of median held
// costs from N paired resamples of the seeds, and the share of resamples at or below 0.5: whether
// a ratio measured on 10 or 20 seeds could be on the other side of the target.
//
// Usage: multi_fidelity_cost [--seeds N] [--budget B] [--target F] [--sweep F1,F2,..]
//                            [--functions a,b] [--methods a,b] [--csv PATH] [--quick] [--top-only]
//                            [--bootstrap N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "functions/multi_fidelity.hpp"
#include "multi_fidelity_study.hpp"
#include "tune/space/sampling.hpp"
#include "tune/tune.hpp"
#include "bench_stats.hpp"

namespace {

struct Options {
  std::size_t seeds = 10;
  double budget = 50.0;  // in top-level evaluations
  double target = 0.01;
  std::vector<double> sweep = {0.001, 0.003, 0.01, 0.03, 0.1};
  std::vector<std::string> functions;
  std::vector<std::string> methods = {"cmets", "ei", "cmes"};
  std::string csv = "multi_fidelity_cost.csv";
  bool top_only = false;
  std::size_t bootstrap = 0;  // paired resamples of the seeds for the ratio's interval; 0: none
};

// The function's top level as a one-level function (cost 1), named NAME_top.
tune::testfn::MultiFidelityFunction top_level_only(tune::testfn::MultiFidelityFunction fn) {
  const std::size_t top = fn.cost.size() - 1;
  fn.f = [f = fn.f, top](const Eigen::VectorXd& u, std::size_t) { return f(u, top); };
  fn.cost = {1.0};
  fn.name += "_top";
  return fn;
}

struct Step {
  std::size_t level = 0;
  double spent = 0.0;
  double regret = 0.0;           // of the method's recommendation
  double observed_regret = 0.0;  // of the best full-resolution trial so far
  std::string point;             // the trial's unit coordinates, ';'-separated
  double value = 0.0;            // what the trial observed (at its level)
  std::string recommendation;    // the recommendation's unit coordinates (cmets, cmes)
};

std::string joined(const Eigen::VectorXd& u) {
  std::string text;
  char buffer[32];
  for (Eigen::Index i = 0; i < u.size(); ++i) {
    std::snprintf(buffer, sizeof buffer, "%s%.6g", i ? ";" : "", u(i));
    text += buffer;
  }
  return text;
}

std::vector<std::string> split(const std::string& text) { return tune::bench::split_commas(text); }

using tune::bench::median;
using tune::bench::unit_of;

double typical_gap(const tune::testfn::MultiFidelityFunction& fn) {
  tune::Rng rng(12345);
  const Eigen::MatrixXd X = tune::sobol_points(fn.dim(), 4096, rng);
  std::vector<double> v;
  for (Eigen::Index j = 0; j < X.cols(); ++j) v.push_back(fn.value(X.col(j), fn.top()) - fn.minimum);
  return median(v);
}

std::vector<Step> run(const tune::testfn::MultiFidelityFunction& fn, const std::string& method, std::uint64_t seed,
                      double budget) {
  tune::Study study = tune::bench::multi_fidelity_study(fn, method, seed, budget);
  std::vector<Step> steps;
  double best_top = std::numeric_limits<double>::infinity();
  while (auto s = study.ask()) {
    const Eigen::VectorXd u = unit_of(s->config, fn.dim());
    const double y = fn.value(u, *s->level);
    study.tell(s->id, y);
    if (*s->level == fn.top()) best_top = std::min(best_top, y);
    Step st;
    st.level = *s->level;
    st.spent = study.spent_cost();
    st.observed_regret = best_top - fn.minimum;
    st.regret = st.observed_regret;
    st.point = joined(u);
    st.value = y;
    if (tune::bench::strategy_name(method) != "ei") {  // ei, with options or not: its best observed
      if (const auto rec = study.recommendation()) {
        const Eigen::VectorXd at = unit_of(rec->config, fn.dim());
        st.regret = fn.value(at, fn.top()) - fn.minimum;
        st.recommendation = joined(at);
      } else st.regret = std::numeric_limits<double>::infinity();
    }
    steps.push_back(st);
  }
  return steps;
}

// The spent cost from which the regret stays within the target to the end (infinity if it does not
// end within): a recommendation can land on the optimum by chance early (a posterior mean pushed
// to a corner) and leave it.
double held_cost(const std::vector<Step>& steps, double target) {
  double cost = std::numeric_limits<double>::infinity();
  for (const Step& s : steps) {
    if (s.regret > target) cost = std::numeric_limits<double>::infinity();
    else if (!std::isfinite(cost)) cost = s.spent;
  }
  return cost;
}

// Paired bootstrap of median(a) / median(b) over the seeds (a[i] and b[i] come from seed i): the
// 2.5% and 97.5% order statistics of the resampled ratios and the share at or below 0.5. A
// resample where neither method holds the target in its median run counts as an infinite ratio
// (no evidence for cmets), one where only b never does as 0.
std::string ratio_interval(const std::vector<double>& a, const std::vector<double>& b, std::size_t resamples,
                           std::uint64_t seed) {
  const std::size_t n = a.size();
  tune::Rng rng(seed);
  std::vector<double> ratios, ra(n), rb(n);
  std::size_t at_or_below_half = 0;
  for (std::size_t r = 0; r < resamples; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = static_cast<std::size_t>(rng() % n);
      ra[i] = a[j];
      rb[i] = b[j];
    }
    const double ma = median(ra), mb = median(rb);
    const double q = std::isfinite(mb) ? ma / mb : (std::isfinite(ma) ? 0.0 : std::numeric_limits<double>::infinity());
    ratios.push_back(q);
    at_or_below_half += q <= 0.5;
  }
  std::sort(ratios.begin(), ratios.end());
  const auto order = [&](double p) { return ratios[static_cast<std::size_t>(std::floor(p * static_cast<double>(resamples - 1) + 0.5))]; };
  char text[160];
  std::snprintf(text, sizeof text, "95%% interval %.2f-%.2f; %.1f%% of %zu paired resamples of the seeds at or below 0.5",
                order(0.025), order(0.975), 100.0 * static_cast<double>(at_or_below_half) / static_cast<double>(resamples),
                resamples);
  return text;
}

std::string cost_text(double cost) {
  char text[32];
  if (std::isfinite(cost)) std::snprintf(text, sizeof text, "%.2f", cost);
  else std::snprintf(text, sizeof text, "-");
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return tune::bench::option_value(argc, argv, i, "multi_fidelity_cost"); };
    const auto count = [&] { return tune::bench::count_value(value(), "multi_fidelity_cost", a.c_str()); };
    const auto real = [&] { return tune::bench::real_value(value(), "multi_fidelity_cost", a.c_str()); };
    if (a == "--seeds") o.seeds = count();
    else if (a == "--budget") o.budget = real();
    else if (a == "--target") o.target = real();
    else if (a == "--sweep") {
      o.sweep.clear();
      for (const std::string& f : split(value())) o.sweep.push_back(tune::bench::real_value(f, "multi_fidelity_cost", "--sweep"));
    }
    else if (a == "--functions") o.functions = split(value());
    else if (a == "--methods") o.methods = split(value());
    else if (a == "--csv") o.csv = value();
    else if (a == "--top-only") o.top_only = true;
    else if (a == "--bootstrap") o.bootstrap = count();
    else if (a == "--quick") {
      o.seeds = 2;
      o.budget = 15;
    } else {
      std::fprintf(stderr,
                   "usage: multi_fidelity_cost [--seeds N] [--budget B] [--target F] [--sweep F1,F2,..] [--functions a,b] "
                   "[--methods a,b] [--csv PATH] [--quick] [--top-only] [--bootstrap N]\n");
      return 2;
    }
  }
  std::ofstream csv(o.csv);
  csv << "function,method,seed,step,level,spent,regret,observed_regret,point,value,recommendation\n";
  std::printf("cost to reach regret <= %.3g x (median gap) within a budget of %.0f full-resolution runs, %zu seeds\n\n",
              o.target, o.budget, o.seeds);
  std::printf("%-13s %-6s %8s %12s %12s %12s %14s %10s\n", "function", "method", "reached", "median cost", "first within",
              "final regret", "observed final", "s/ask");
  for (auto fn : tune::testfn::multi_fidelity_functions()) {
    if (!o.functions.empty() && std::find(o.functions.begin(), o.functions.end(), fn.name) == o.functions.end()) continue;
    if (o.top_only) fn = top_level_only(std::move(fn));
    const double gap = typical_gap(fn);
    const double target = o.target * gap;
    std::vector<double> medians;
    std::vector<std::vector<std::vector<Step>>> runs;  // per method, per seed
    for (const std::string& method : o.methods) {
      runs.emplace_back();
      std::vector<double> costs, first_costs, finals, observed;
      std::size_t reached = 0;
      double seconds = 0.0;
      std::size_t asks = 0;
      for (std::size_t seed = 0; seed < o.seeds; ++seed) {
        const auto t0 = std::chrono::steady_clock::now();
        const std::vector<Step> steps = run(fn, method, seed, o.budget);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        asks += steps.size();
        double first = std::numeric_limits<double>::infinity();
        for (std::size_t k = 0; k < steps.size(); ++k) {
          const Step& s = steps[k];
          csv << fn.name << ',' << method << ',' << seed << ',' << k << ',' << s.level << ',' << s.spent << ','
              << s.regret << ',' << s.observed_regret << ',' << s.point << ',' << s.value << ','
              << s.recommendation << '\n';
          if (s.regret <= target && !std::isfinite(first)) first = s.spent;
        }
        const double cost = held_cost(steps, target);
        reached += std::isfinite(cost);
        first_costs.push_back(first);
        costs.push_back(cost);  // infinity if never: counts as the worst in the median
        finals.push_back(steps.empty() ? std::numeric_limits<double>::infinity() : steps.back().regret);
        observed.push_back(steps.empty() ? std::numeric_limits<double>::infinity() : steps.back().observed_regret);
        std::fprintf(stderr, "%s %s seed %zu: %zu steps, cost to target %g\n", fn.name.c_str(), method.c_str(), seed,
                     steps.size(), cost);
        runs.back().push_back(steps);
      }
      const double m = median(costs);
      medians.push_back(m);
      std::printf("%-13s %-6s %5zu/%-2zu %12s %12s %12.3g %14.3g %10.4f\n", fn.name.c_str(), method.c_str(), reached, o.seeds,
                  cost_text(m).c_str(), cost_text(median(first_costs)).c_str(), median(finals), median(observed), seconds / static_cast<double>(std::max<std::size_t>(asks, 1)));
    }
    const auto ei = std::find(o.methods.begin(), o.methods.end(), "ei");
    std::printf("%-13s target %.3g", fn.name.c_str(), target);
    if (ei != o.methods.end())
      for (std::size_t k = 0; k < o.methods.size(); ++k)
        if (tune::bench::strategy_name(o.methods[k]) == "cmets") {
          const double ei_cost = medians[static_cast<std::size_t>(ei - o.methods.begin())];
          std::string ratio = "n/a (neither reaches the target)";
          if (std::isfinite(medians[k]) && !std::isfinite(ei_cost)) ratio = "< " + std::to_string(medians[k] / o.budget).substr(0, 4) + " (ei's median run never reaches it)";
          else if (std::isfinite(ei_cost)) ratio = std::to_string(medians[k] / ei_cost).substr(0, 4);
          std::printf("; median cost %s / ei = %s", o.methods[k].c_str(), ratio.c_str());
        }
    std::printf("\n");
    // Method k's held cost at this target, per seed.
    const auto held_costs = [&](std::size_t k, double at) {
      std::vector<double> costs;
      for (const auto& steps : runs[k]) costs.push_back(held_cost(steps, at));
      return costs;
    };
    if (ei != o.methods.end() && o.bootstrap > 0 && o.seeds > 0) {
      const std::vector<double> ei_costs = held_costs(static_cast<std::size_t>(ei - o.methods.begin()), target);
      for (std::size_t k = 0; k < o.methods.size(); ++k)
        if (tune::bench::strategy_name(o.methods[k]) == "cmets")
          std::printf("%-13s %s / ei: %s\n", "", o.methods[k].c_str(),
                      ratio_interval(held_costs(k, target), ei_costs, o.bootstrap, 20261123 + k).c_str());
    }
    if (ei != o.methods.end() && !o.sweep.empty()) {
      const std::size_t e = static_cast<std::size_t>(ei - o.methods.begin());
      std::printf("%-13s held cost at other targets (fraction of the gap: method median / ei median = ratio):\n", "");
      const auto median_held = [&](std::size_t k, double fraction) { return median(held_costs(k, fraction * gap)); };
      std::vector<double> ei_held;
      for (double fraction : o.sweep) ei_held.push_back(median_held(e, fraction));
      for (std::size_t k = 0; k < o.methods.size(); ++k) {
        if (k == e) continue;
        std::printf("%-13s %-6s", "", o.methods[k].c_str());
        for (std::size_t f = 0; f < o.sweep.size(); ++f) {
          const double a = median_held(k, o.sweep[f]), b = ei_held[f];
          std::printf(" | %g: %s / %s = %s", o.sweep[f], cost_text(a).c_str(), cost_text(b).c_str(),
                      std::isfinite(a) && std::isfinite(b) ? std::to_string(a / b).substr(0, 4).c_str() : "-");
        }
        std::printf("\n");
      }
    }
    std::printf("\n");
  }
  return 0;
}
