// What pruning running trials buys, and what it costs: tune::Study with and without a median
// (percentile) stopping rule (tune::prune_verdict, Optuna's MedianPruner semantics) on synthetic
// learning curves over Branin and Hartmann-3 (bench/functions/learning_curves.hpp: the curve model,
// its constants, and the two curve shapes "independent" and "slow_good").
//
// One trial at a time. A trial at point u reports y(u, t) for t = 1, 2, ... (one step of budget
// each). After every step t < T, a method with a rule asks prune_verdict(rule, minimize, curves of
// the COMPLETED trials so far, this trial's curve); a verdict stops the trial there:
// Study::tell_pruned(id, t, last value) (a failure for the strategy: no result), its cost is the t
// steps it ran. A trial that is not stopped
// runs all T = 50 steps and is told its last value y(u, T) (f(u) plus noise). The run ends when the
// budget of steps is spent (a trial cut off by the budget is neither completed nor told).
//
// Methods: STRATEGY or STRATEGY+RULE, STRATEGY a tune::make_strategy name with default options
// (`ei`, `random`, ...), RULE "p<percentile>[w<warmup_steps>][s<startup_trials>]" with the other
// PruningRule fields at their defaults (startup 5, warmup 0, min_trials 1): `ei+p50` is the median
// rule with Optuna's defaults, `ei+p50w10` waits 10 steps, `ei+p25` keeps only the best quarter.
// The study seed is the seed; the noise of the trial with index i in seed s comes from its own
// generator seeded with (s, i), so a method with a rule and one without see the same noise on the
// same trial index (and `random` and `random+p50` the same points).
//
// Simple regret after a step = f(best completed trial) - minimum, "best" by the TRUE final value f
// (the best a user could have picked among finished runs; pruned trials never count, as in
// Study::best()), infinite before any trial has completed. Targets: 10% and 1% of the function's
// typical gap G; "steps to target" = the first step after which the regret is within it (a run
// that never gets there counts as infinite, ">B" when the median is such a run).
// Hazards, per run at its end: a "false prune" is a pruned trial whose f is below the median of
// the completed trials' f (a run the rule stopped that would have finished in the better half);
// "beat best" counts pruned trials whose f is below the best completed f (it would have been the
// answer).
//
// Prints per (function, shape): method | median [Q1, Q3] of the regret at B/6, B/3, B/2 and B steps |
// steps to 10% G and to 1% G (median [Q1, Q3], runs reaching) | trials (median) | pruned share |
// median step at which trials were pruned | false prunes / pruned | beat best (all seeds).
// Writes one CSV row per (function, shape, method, seed).
//
// `--curve FUNCTION SHAPE` is the curve service for bench/pruning.py (Optuna's side): it prints
// "<dim> <minimum> <gap> <steps> <noise_sd>" (%.17g), then reads lines of dim unit-cube coordinates
// and prints, per line, f(u) and the T noise-free curve values y(u, 1..T) on one line.
//
// Usage: pruning [--seeds N] [--budget-steps N] [--functions a,b] [--shapes a,b] [--methods a,b]
//                [--csv PATH]
//        pruning --curve FUNCTION SHAPE
#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "bench_stats.hpp"
#include "functions/learning_curves.hpp"
#include "tune/study/pruning_rule.hpp"
#include "tune/tune.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using tune::testfn::CurveModel;
using tune::testfn::CurveShape;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::array<double, 2> kTargetFractions{0.10, 0.01};

struct Options {
  std::size_t seeds = 20;
  std::size_t budget_steps = 3000;  // 60 full runs of 50 steps
  std::vector<std::string> functions = {"branin", "hartmann3"};
  std::vector<std::string> shapes = {"independent", "slow_good"};
  std::vector<std::string> methods = {"random", "random+p50", "ei", "ei+p50", "ei+p50w10", "ei+p25w10"};
  std::string csv = "pruning.csv";
};

struct Method {
  std::string label;
  std::string strategy;
  std::optional<tune::PruningRule> rule;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "pruning: %s\nusage: pruning [--seeds N] [--budget-steps N] [--functions a,b] [--shapes a,b] "
               "[--methods a,b] [--csv PATH]\n       pruning --curve FUNCTION SHAPE\n",
               message.c_str());
  std::exit(2);
}

std::size_t parse_count(const std::string& flag, const std::string& text) {
  if (const auto v = tune::bench::positive_count(text)) return *v;
  usage_error(flag + " expects a positive integer, got '" + text + "'");
}

// "p50", "p50w10", "p25s10": percentile, then optional warmup steps and startup trials.
tune::PruningRule parse_rule(const std::string& text) {
  tune::PruningRule rule;
  std::size_t i = 0;
  auto number = [&](char key) {
    const std::size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    if (start == i) usage_error(std::string("rule '") + text + "': '" + key + "' needs a number");
    return std::stod(text.substr(start, i - start));
  };
  if (text.empty() || text[0] != 'p') usage_error("rule '" + text + "' must start with p<percentile>");
  ++i;
  rule.percentile = number('p');
  while (i < text.size()) {
    const char key = text[i++];
    const double v = number(key);
    if (key == 'w') {
      rule.warmup_steps = static_cast<std::int64_t>(v);
    } else if (key == 's') {
      rule.startup_trials = static_cast<std::size_t>(v);
    } else {
      usage_error("rule '" + text + "': unknown setting '" + std::string(1, key) + "' (w, s)");
    }
  }
  try {
    rule.validate();
  } catch (const std::exception& e) {
    usage_error("rule '" + text + "': " + e.what());
  }
  return rule;
}

Method parse_method(const std::string& text) {
  Method m{text, text, std::nullopt};
  std::string body = text;
  m.strategy = body;
  if (const auto plus = body.find('+'); plus != std::string::npos) {
    m.strategy = body.substr(0, plus);
    m.rule = parse_rule(body.substr(plus + 1));
  }
  return m;
}

struct Run {
  std::vector<double> regret;  // after each step 1 .. budget
  std::size_t trials = 0;      // asked and run at least one step
  std::size_t completed = 0;
  std::size_t pruned = 0;
  std::vector<double> prune_steps;
  std::size_t false_prunes = 0;     // pruned with f below the median completed f
  std::size_t pruned_beat_best = 0; // pruned with f below the best completed f
  std::string stop_reason;
};

Run run_study(const CurveModel& model, const tune::Space& space, const Method& method, std::uint64_t seed,
              std::size_t budget) {
  tune::Study study(space, tune::make_strategy(method.strategy),
                    {.direction = tune::Direction::minimize, .seed = seed});
  const std::vector<tune::Parameter>& params = space.parameters();
  Eigen::VectorXd u(static_cast<Eigen::Index>(space.dim()));
  Run run;
  run.regret.reserve(budget);
  std::deque<tune::LearningCurve> completed_curves;  // a deque keeps the pointers below valid
  std::vector<const tune::LearningCurve*> completed;
  std::vector<double> completed_f, pruned_f;
  double best_f = kInf;
  const double sd = model.noise_sd();
  while (run.regret.size() < budget) {
    std::optional<tune::Suggestion> s = study.ask();
    if (!s) {
      run.stop_reason = study.stop_reason().empty() ? "ask() returned nothing" : study.stop_reason();
      break;
    }
    for (std::size_t j = 0; j < params.size(); ++j)
      u(static_cast<Eigen::Index>(j)) = std::get<double>(s->config.at(params[j].name));
    const double f = model.final_value(u);
    std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(run.trials), 0x5eedU};
    std::mt19937_64 rng(seq);
    std::normal_distribution<double> noise(0.0, sd);
    ++run.trials;
    tune::LearningCurve curve;
    bool pruned = false;
    for (int t = 1; t <= model.steps && run.regret.size() < budget; ++t) {
      curve.push_back({t, model.mean_at(u, t) + noise(rng)});
      run.regret.push_back(best_f - model.fn.minimum);
      if (t == model.steps || !method.rule) continue;
      if (const auto verdict = tune::prune_verdict(*method.rule, tune::Direction::minimize, completed, curve)) {
        study.tell_pruned(s->id, t, verdict->last_value);
        pruned = true;
        ++run.pruned;
        run.prune_steps.push_back(static_cast<double>(t));
        pruned_f.push_back(f);
        break;
      }
    }
    if (pruned) continue;
    if (static_cast<int>(curve.size()) < model.steps) break;  // cut off by the budget
    study.tell(s->id, curve.back().value);
    ++run.completed;
    completed_curves.push_back(std::move(curve));
    completed.push_back(&completed_curves.back());
    completed_f.push_back(f);
    best_f = std::min(best_f, f);
    run.regret.back() = best_f - model.fn.minimum;
  }
  const double last = run.regret.empty() ? kInf : run.regret.back();
  run.regret.resize(budget, last);
  if (!completed_f.empty()) {
    const double med = tune::bench::median(completed_f);
    for (const double f : pruned_f) {
      run.false_prunes += f < med ? 1 : 0;
      run.pruned_beat_best += f < best_f ? 1 : 0;
    }
  }
  return run;
}

// Quantile (R type 7) of values that may be infinite: infinite where it would interpolate with one.
double quantile_inf(std::vector<double> v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  if (std::isinf(v[lo]) || (frac > 0.0 && std::isinf(v[hi]))) return kInf;
  return v[lo] + frac * (v[hi] - v[lo]);
}

std::vector<std::size_t> checkpoints(std::size_t budget) {
  std::vector<std::size_t> ks;
  for (const std::size_t div : {6, 3, 2})
    if (budget / div > 0 && (ks.empty() || ks.back() != budget / div)) ks.push_back(budget / div);
  if (ks.empty() || ks.back() != budget) ks.push_back(budget);
  return ks;
}

double steps_to(const Run& r, double target) {
  for (std::size_t k = 0; k < r.regret.size(); ++k)
    if (r.regret[k] <= target) return static_cast<double>(k + 1);
  return kInf;
}

std::string cell(double x, std::size_t budget) {
  if (std::isinf(x)) return ">" + std::to_string(budget);
  return tune::bench::fmt(x);
}

std::string median_quartiles(const std::vector<double>& v, std::size_t budget) {
  return cell(quantile_inf(v, 0.5), budget) + " [" + cell(quantile_inf(v, 0.25), budget) + ", " +
         cell(quantile_inf(v, 0.75), budget) + "]";
}

void print_table(const CurveModel& model, const std::vector<Method>& methods, const std::vector<std::vector<Run>>& runs,
                 std::size_t seeds, std::size_t budget) {
  const std::vector<std::size_t> ks = checkpoints(budget);
  std::printf("\n## %s, %s curves (minimum %.6g, G = %.4g, T = %d steps, noise sd %.3g; budget %zu steps = %.3g full "
              "runs; %zu seeds; median [Q1, Q3])\n\n| method |",
              model.fn.name.c_str(), tune::testfn::to_string(model.shape), model.fn.minimum, model.gap, model.steps,
              model.noise_sd(), budget, static_cast<double>(budget) / model.steps, seeds);
  for (const std::size_t k : ks) std::printf(" regret @%zu |", k);
  for (const double frac : kTargetFractions) std::printf(" steps to %g%% G | reached |", 100.0 * frac);
  std::printf(" trials | pruned | prune step | false prunes | beat best |\n|---|");
  for (std::size_t i = 0; i < ks.size() + 2 * kTargetFractions.size() + 5; ++i) std::printf("---|");
  std::printf("\n");
  for (std::size_t m = 0; m < methods.size(); ++m) {
    std::printf("| %s |", methods[m].label.c_str());
    for (const std::size_t k : ks) {
      std::vector<double> v;
      for (const Run& r : runs[m]) v.push_back(r.regret[k - 1]);
      std::printf(" %s |", median_quartiles(v, budget).c_str());
    }
    for (const double frac : kTargetFractions) {
      std::vector<double> v;
      std::size_t reached = 0;
      for (const Run& r : runs[m]) {
        v.push_back(steps_to(r, frac * model.gap));
        reached += std::isinf(v.back()) ? 0 : 1;
      }
      std::printf(" %s | %zu/%zu |", median_quartiles(v, budget).c_str(), reached, runs[m].size());
    }
    std::vector<double> trials, steps;
    std::size_t all = 0, pruned = 0, false_prunes = 0, beat = 0;
    for (const Run& r : runs[m]) {
      trials.push_back(static_cast<double>(r.trials));
      steps.insert(steps.end(), r.prune_steps.begin(), r.prune_steps.end());
      all += r.trials;
      pruned += r.pruned;
      false_prunes += r.false_prunes;
      beat += r.pruned_beat_best;
    }
    const double share = all ? 100.0 * static_cast<double>(pruned) / static_cast<double>(all) : 0.0;
    std::printf(" %s | %.0f%% | %s | %zu/%zu | %zu |\n", tune::bench::fmt(tune::bench::median(trials)).c_str(), share,
                tune::bench::fmt(tune::bench::median(steps)).c_str(), false_prunes, pruned, beat);
  }
  std::fflush(stdout);
}

CurveModel model_or_exit(const std::string& function, const std::string& shape) {
  try {
    return tune::testfn::curve_model(function, tune::testfn::curve_shape_by_name(shape));
  } catch (const std::exception& e) {
    usage_error(e.what());
  }
}

tune::Space unit_space(std::size_t dim) {
  std::vector<tune::Parameter> params;
  for (std::size_t j = 0; j < dim; ++j) params.push_back(tune::Parameter::floating("x" + std::to_string(j), 0.0, 1.0));
  return tune::Space(params);
}

int serve(const std::string& function, const std::string& shape) {
  const CurveModel model = model_or_exit(function, shape);
  std::printf("%zu %.17g %.17g %d %.17g\n", model.fn.dim(), model.fn.minimum, model.gap, model.steps,
              model.noise_sd());
  std::fflush(stdout);
  std::string line;
  Eigen::VectorXd u(static_cast<Eigen::Index>(model.fn.dim()));
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    for (Eigen::Index j = 0; j < u.size(); ++j) {
      std::string token;
      if (!(in >> token)) {
        std::fprintf(stderr, "pruning --curve: expected %zu coordinates, got '%s'\n", model.fn.dim(), line.c_str());
        return 1;
      }
      u(j) = tune::bench::real_value(token, "pruning --curve", "a coordinate");
    }
    std::printf("%.17g", model.final_value(u));
    for (int t = 1; t <= model.steps; ++t) std::printf(" %.17g", model.mean_at(u, t));
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--curve") {
      const std::string function = value();
      return serve(function, value());
    }
    if (arg == "--seeds") {
      o.seeds = parse_count(arg, value());
    } else if (arg == "--budget-steps") {
      o.budget_steps = parse_count(arg, value());
    } else if (arg == "--functions") {
      o.functions = tune::bench::split_commas(value());
    } else if (arg == "--shapes") {
      o.shapes = tune::bench::split_commas(value());
    } else if (arg == "--methods") {
      o.methods = tune::bench::split_commas(value());
    } else if (arg == "--csv") {
      o.csv = value();
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }
  if (o.functions.empty() || o.shapes.empty() || o.methods.empty()) usage_error("an empty list");
  std::vector<Method> methods;
  for (const std::string& text : o.methods) {
    methods.push_back(parse_method(text));
    try {
      (void)tune::make_strategy(methods.back().strategy);
    } catch (const std::exception& e) {
      usage_error("method '" + text + "': " + e.what());
    }
  }
  std::vector<CurveModel> models;
  for (const std::string& fn : o.functions)
    for (const std::string& shape : o.shapes) models.push_back(model_or_exit(fn, shape));
  std::ofstream csv(o.csv);
  if (!csv) {
    std::fprintf(stderr, "pruning: cannot write '%s'\n", o.csv.c_str());
    return 1;
  }
  const std::vector<std::size_t> ks = checkpoints(o.budget_steps);
  csv << "function,shape,method,seed,budget_steps,trials,completed,pruned,false_prunes,pruned_beat_best";
  for (const double frac : kTargetFractions) csv << ",steps_to_" << 100.0 * frac << "pct_gap";
  for (const std::size_t k : ks) csv << ",regret_at_" << k;
  csv << '\n';
  csv.precision(17);
  const auto start = Clock::now();
  for (const CurveModel& model : models) {
    const tune::Space space = unit_space(model.fn.dim());
    std::vector<std::vector<Run>> runs;
    for (const Method& method : methods) {
      const auto t_method = Clock::now();
      runs.emplace_back();
      for (std::size_t seed = 0; seed < o.seeds; ++seed) {
        Run run = run_study(model, space, method, seed, o.budget_steps);
        if (!run.stop_reason.empty())
          std::fprintf(stderr, "note: %s / %s seed %zu stopped after %zu trials: %s\n", model.fn.name.c_str(),
                       method.label.c_str(), seed, run.trials, run.stop_reason.c_str());
        csv << model.fn.name << ',' << tune::testfn::to_string(model.shape) << ',' << method.label << ',' << seed
            << ',' << o.budget_steps << ',' << run.trials << ',' << run.completed << ',' << run.pruned << ','
            << run.false_prunes << ',' << run.pruned_beat_best;
        for (const double frac : kTargetFractions) {
          const double s = steps_to(run, frac * model.gap);
          csv << ',';
          if (!std::isinf(s)) csv << s;
        }
        for (const std::size_t k : ks) csv << ',' << run.regret[k - 1];
        csv << '\n';
        runs.back().push_back(std::move(run));
      }
      std::fprintf(stderr, "[%7.1f s] %s / %s / %s: %zu seeds in %.1f s\n",
                   std::chrono::duration<double>(Clock::now() - start).count(), model.fn.name.c_str(),
                   tune::testfn::to_string(model.shape), method.label.c_str(), o.seeds,
                   std::chrono::duration<double>(Clock::now() - t_method).count());
    }
    print_table(model, methods, runs, o.seeds, o.budget_steps);
  }
  return 0;
}
