// Zoghi's branch and bound (`bnb`) against `ei` and `ucb` on noise-free Branin, Hartmann-3 and
// Hartmann-6: simple regret against evaluations, and a test of the exponential decay the thesis
// proves (r_t < A exp(-tau t / (ln t)^(d/4)) w.h.p.; digest-gpoo-zoghi.md 4.2).
//
// Protocol. Each function is minimised over the unit cube (one floating parameter per dimension on
// [0,1], mapped to the function's box by TestFunction::at_unit), through the ask/tell tune::Study
// with the strategies' default options (tune::make_strategy(name)), study seed = run index
// 0..seeds-1. Evaluations are exact (no noise). After every evaluation the run records the value,
// the instantaneous regret (value - minimum; the quantity the thesis bounds), the simple regret
// (best so far - minimum) and the ask() and tell() times; for bnb also the search's lattice level,
// the size of its relevant set R and whether it is in its final (UCB-within-R) phase. bnb has no
// randomness of its own (its kernel refits get the study seed), so its seeds are run too and the
// number of distinct bnb trajectories is reported; ei and ucb differ per seed (shifted Sobol design,
// fit restarts).
//
// Budgets (evaluations T per run): Branin 100, Hartmann-3 200, Hartmann-6 150; --quick halves them
// and runs 3 seeds instead of 10; --evaluations N sets all three. Why: the budgets of the first
// version of this benchmark, kept for the before/after comparison; bnb reaches its lattice floor
// near t = 140 on Branin and t = 260 on Hartmann-3, so the longer horizons are separate runs (see
// bench/results/bnb_regret.md). (Before the candidate cap and the kernel rebase, bnb's refits
// replayed the search at lattice levels 9-10 and asks took 13-194 s.)
// A run that the strategy stops early (bnb: relevant set exhausted on the finest lattice) keeps its
// last best for the later checkpoints, and is reported.
//
// Output. Per function: a table of median simple regret and IQR over the seeds at several t; the
// lattice floor of bnb (the smallest regret any point of its finest lattice can reach); bnb's
// search diagnostics; and least-squares fits over the tail t in [tail_from * T, T] of
//   exp:    ln r(t) = a + b t                     (exponential decay; slope b per evaluation)
//   thesis: ln r(t) = a + b t / (ln t)^(d/4)      (the thesis's rate)
//   power:  ln r(t) = a + b ln t                  (polynomial decay, the alternative)
// to the median simple regret, with R^2 each, for every strategy (bnb first), and the same fits over
// the wide range [0.2 T, end]; for bnb the fits end where its median reaches the lattice floor, if
// it does before T. The CSV has every (function, strategy, seed, evaluation) row.
//
// Usage: bnb_regret [--seeds N] [--evaluations N] [--functions a,b,c] [--strategies a,b]
//                   [--tail-from F] [--csv PATH] [--quick]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <Eigen/Core>

#include "bench_args.hpp"
#include "bench_stats.hpp"
#include "functions/test_functions.hpp"
#include "tune/strategy/bnb_strategy.hpp"
#include "tune/tune.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Options {
  std::size_t seeds = 10;
  std::size_t evaluations = 0;  // 0: per-function default
  std::vector<std::string> functions = {"branin", "hartmann3", "hartmann6"};
  std::vector<std::string> strategies = {"bnb", "ei", "ucb"};
  double tail_from = 0.5;
  std::string csv = "bnb_regret.csv";
  bool quick = false;
};

std::size_t default_budget(const std::string& function, bool quick) {
  const std::size_t t = function == "hartmann3" ? 200 : function == "hartmann6" ? 150 : 100;
  return quick ? t / 2 : t;
}

struct Run {
  std::vector<double> value, best, ask_ms, tell_ms;
  // bnb only (otherwise empty): lattice level, |R| and final phase after each tell.
  std::vector<std::size_t> level, relevant;
  std::vector<int> final_phase;
  std::size_t ucb_proposals = 0, capped_rounds = 0, capped_refinements = 0, rebases = 0, max_relevant = 0;
  std::string stop_reason;
  std::size_t failures = 0;
  double seconds = 0.0;
};

const char* kUsage =
    "usage: bnb_regret [--seeds N] [--evaluations N] [--functions a,b,c] [--strategies a,b] [--tail-from F] "
    "[--csv PATH] [--quick]\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "bnb_regret: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

std::vector<std::string> split(const std::string& text) { return tune::bench::split_commas(text); }

std::size_t parse_count(const std::string& flag, const std::string& text) {
  if (const auto v = tune::bench::positive_count(text)) return *v;
  usage_error(flag + " expects a positive integer, got '" + text + "'");
}

Options parse(int argc, char** argv) {
  Options o;
  bool seeds_set = false;
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
    } else if (arg == "--functions") {
      o.functions = split(value());
    } else if (arg == "--strategies") {
      o.strategies = split(value());
    } else if (arg == "--tail-from") {
      const std::string text = value();
      char* end = nullptr;
      o.tail_from = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(o.tail_from >= 0.0 && o.tail_from < 1.0))
        usage_error("--tail-from expects a fraction in [0, 1), got '" + text + "'");
    } else if (arg == "--csv") {
      o.csv = value();
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }
  if (o.quick && !seeds_set) o.seeds = 3;  // --quick also halves the default budgets
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
  tune::Study study(space, tune::make_strategy(strategy), {.direction = tune::Direction::minimize, .seed = seed});
  const auto* bnb = dynamic_cast<const tune::BnbStrategy*>(&study.strategy());
  Run run;
  double best = std::numeric_limits<double>::infinity();
  const std::vector<tune::Parameter>& params = space.parameters();
  Eigen::VectorXd u(static_cast<Eigen::Index>(space.dim()));
  const auto start = Clock::now();
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
    double value = kNaN;
    auto t2 = Clock::now(), t3 = t2;
    try {
      value = fn.at_unit(u);
      if (std::isfinite(value)) {
        t2 = Clock::now();
        study.tell(s->id, value);
        t3 = Clock::now();
        best = std::min(best, value);
      } else {
        study.fail(s->id, "non-finite value");
      }
    } catch (const std::exception& e) {
      study.fail(s->id, e.what());
    }
    if (!std::isfinite(value)) ++run.failures;
    run.value.push_back(value);
    run.best.push_back(best);
    run.ask_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    run.tell_ms.push_back(std::chrono::duration<double, std::milli>(t3 - t2).count());
    if (bnb != nullptr) {
      const tune::BranchAndBound* b = bnb->search();
      run.level.push_back(b ? b->level() : 0);
      run.relevant.push_back(b ? b->relevant_size() : 0);
      run.final_phase.push_back(b && b->final_phase() ? 1 : 0);
      run.max_relevant = std::max(run.max_relevant, run.relevant.back());
    }
    if (run.ask_ms.back() + run.tell_ms.back() > 5000.0)  // progress for the slow cases (bnb at deep levels)
      std::fprintf(stderr, "  slow step: %s / %s seed %llu, evaluation %zu: ask %.1f s, tell %.1f s%s\n",
                   fn.name.c_str(), strategy.c_str(), static_cast<unsigned long long>(seed), k + 1,
                   run.ask_ms.back() / 1000.0, run.tell_ms.back() / 1000.0,
                   bnb != nullptr ? (" (bnb level " + std::to_string(run.level.back()) + ", |R| " +
                                     std::to_string(run.relevant.back()) + ")")
                                        .c_str()
                                  : "");
  }
  if (bnb != nullptr && bnb->search() != nullptr) {
    run.ucb_proposals = bnb->search()->ucb_proposals();
    run.capped_rounds = bnb->search()->capped_rounds();
    run.capped_refinements = bnb->search()->capped_refinements();
    run.rebases = bnb->search()->rebases();
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

// Best value after k evaluations (1-based); a run that stopped early keeps its last best.
double best_after(const Run& run, std::size_t k) {
  if (run.best.empty()) return std::numeric_limits<double>::infinity();
  return run.best[std::min(k, run.best.size()) - 1];
}

using tune::bench::fmt;

// The smallest value of f on the lattice of spacing 2^-m of the unit cube. d = 2: every point;
// otherwise the points within `radius` lattice steps of the known minimiser in each coordinate
// (the functions' global minimisers are unique for d = 3 and 6 and the lattice minimum is near it).
double lattice_floor(const tune::testfn::TestFunction& fn, std::size_t m) {
  const std::int64_t n = std::int64_t{1} << m;
  const std::size_t d = fn.dim();
  const Eigen::VectorXd centre_unit =
      ((fn.argmin - fn.lower).array() / (fn.upper - fn.lower).array()).matrix();
  std::vector<std::int64_t> lo(d), hi(d);
  const std::int64_t radius = d <= 3 ? 4 : 2;
  for (std::size_t j = 0; j < d; ++j) {
    if (d == 2) {
      lo[j] = 0;
      hi[j] = n;
    } else {
      const auto c = static_cast<std::int64_t>(std::llround(centre_unit(static_cast<Eigen::Index>(j)) * static_cast<double>(n)));
      lo[j] = std::max<std::int64_t>(0, c - radius);
      hi[j] = std::min<std::int64_t>(n, c + radius);
    }
  }
  std::vector<std::int64_t> idx = lo;
  Eigen::VectorXd u(static_cast<Eigen::Index>(d));
  double best = std::numeric_limits<double>::infinity();
  for (;;) {
    for (std::size_t j = 0; j < d; ++j) u(static_cast<Eigen::Index>(j)) = std::ldexp(static_cast<double>(idx[j]), -static_cast<int>(m));
    best = std::min(best, fn.at_unit(u));
    std::size_t j = 0;
    while (j < d && idx[j] == hi[j]) {
      idx[j] = lo[j];
      ++j;
    }
    if (j == d) break;
    ++idx[j];
  }
  return best;
}

struct Fit {
  double slope = kNaN, intercept = kNaN, r2 = kNaN;
  std::size_t points = 0;
};

Fit least_squares(const std::vector<double>& x, const std::vector<double>& y) {
  Fit f;
  f.points = x.size();
  if (x.size() < 3) return f;
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx <= 0) return f;
  if (syy <= 1e-20 * static_cast<double>(x.size())) {  // flat: no decay at all; R^2 undefined
    f.slope = 0.0;
    f.intercept = my;
    return f;
  }
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.r2 = sxy * sxy / (sxx * syy);
  return f;
}

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
    std::fprintf(stderr, "bnb_regret: cannot write '%s'\n", opt.csv.c_str());
    return 1;
  }
  csv << "function,strategy,seed,evaluation,value,instant_regret,best_so_far,simple_regret,ask_ms,tell_ms,bnb_level,"
         "bnb_relevant,bnb_final_phase\n";
  csv.precision(17);

  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  std::printf("# Simple regret (best so far - minimum) of bnb, ei and ucb on noise-free functions\n");
  std::printf("# median and IQR (Q3 - Q1) over %zu seeds; tail fits over t in [%.2f T, T]\n", opt.seeds, opt.tail_from);

  for (const tune::testfn::TestFunction& fn : functions) {
    const std::size_t budget = opt.evaluations > 0 ? opt.evaluations : default_budget(fn.name, opt.quick);
    std::vector<tune::Parameter> params;
    for (std::size_t j = 0; j < fn.dim(); ++j)
      params.push_back(tune::Parameter::floating("x" + std::to_string(j), 0.0, 1.0));
    const tune::Space space(params);

    const std::size_t m_max = tune::BnbStrategyOptions{}.lattice_level(fn.dim());
    const double floor_regret = lattice_floor(fn, m_max) - fn.minimum;

    std::vector<std::size_t> checkpoints;
    for (std::size_t k : {10, 25, 50, 75, 100, 125, 150, 200, 300})
      if (k <= budget) checkpoints.push_back(k);
    if (checkpoints.empty() || checkpoints.back() != budget) checkpoints.push_back(budget);

    std::vector<std::string> table_rows, reach_rows, fit_rows, bnb_rows, notes;
    const double thresholds[] = {1e-1, 1e-2, 1e-3, 1e-4, 1e-5};
    for (const std::string& strategy : opt.strategies) {
      const double t_start = elapsed();
      std::vector<Run> runs;
      for (std::size_t seed = 0; seed < opt.seeds; ++seed) {
        Run run = run_once(fn, space, strategy, seed, budget);
        if (!run.stop_reason.empty())
          notes.push_back(strategy + " seed " + std::to_string(seed) + " stopped after " +
                          std::to_string(run.best.size()) + " evaluations: " + run.stop_reason);
        if (run.failures > 0)
          notes.push_back(strategy + " seed " + std::to_string(seed) + ": " + std::to_string(run.failures) +
                          " failed evaluations");
        for (std::size_t k = 0; k < run.best.size(); ++k) {
          csv << fn.name << ',' << strategy << ',' << seed << ',' << (k + 1) << ',' << run.value[k] << ','
              << (run.value[k] - fn.minimum) << ',' << run.best[k] << ',' << (run.best[k] - fn.minimum) << ','
              << run.ask_ms[k] << ',' << run.tell_ms[k] << ',';
          if (k < run.level.size())
            csv << run.level[k] << ',' << run.relevant[k] << ',' << run.final_phase[k];
          else
            csv << ",,";
          csv << '\n';
        }
        std::fprintf(stderr, "[%7.1f s] %s / %s seed %zu: %zu evaluations in %.2f s, final regret %.3g\n", elapsed(),
                     fn.name.c_str(), strategy.c_str(), seed, run.best.size(), run.seconds,
                     run.best.empty() ? kNaN : run.best.back() - fn.minimum);
        runs.push_back(std::move(run));
      }

      // Table row: median / IQR simple regret at the checkpoints, seconds per run.
      std::string row = "| " + strategy;
      for (std::size_t k : checkpoints) {
        std::vector<double> regrets;
        for (const Run& r : runs) regrets.push_back(best_after(r, k) - fn.minimum);
        row += " | " + fmt(quantile(regrets, 0.5)) + " (" + fmt(quantile(regrets, 0.75) - quantile(regrets, 0.25)) + ")";
      }
      std::vector<double> seconds, step_ms;
      for (const Run& r : runs) {
        seconds.push_back(r.seconds);
        for (std::size_t k = 0; k < r.ask_ms.size(); ++k) step_ms.push_back(r.ask_ms[k] + r.tell_ms[k]);
      }
      row += " | " + fmt(quantile(seconds, 0.5)) + " | " +
             fmt(step_ms.empty() ? kNaN : *std::max_element(step_ms.begin(), step_ms.end())) + " |";
      table_rows.push_back(row);

      // Evaluations to reach simple regret <= eps: median over seeds, and how many seeds got there.
      std::string reach = "| " + strategy;
      for (double eps : thresholds) {
        std::vector<double> hits;
        for (const Run& r : runs)
          for (std::size_t k = 0; k < r.best.size(); ++k)
            if (r.best[k] - fn.minimum <= eps) {
              hits.push_back(static_cast<double>(k + 1));
              break;
            }
        // The median over all seeds (a seed that never gets there counts as later than any that
        // do), so it is "-" when fewer than half the seeds reach eps.
        std::string cell = "-";
        if (2 * hits.size() >= runs.size() && !hits.empty()) {
          std::vector<double> all = hits;
          all.resize(runs.size(), std::numeric_limits<double>::infinity());
          const double med = quantile(all, 0.5);
          if (std::isfinite(med)) cell = fmt(med);
        }
        reach += " | " + cell + " (" + std::to_string(hits.size()) + "/" + std::to_string(runs.size()) + ")";
      }
      reach_rows.push_back(reach + " |");

      // Fits of ln(median simple regret) over the tail [tail_from T, end] and a wide range
      // [0.2 T, end]; for bnb, end is where the median reaches the lattice floor, if it does (it
      // cannot go lower, so the flat stretch after it says nothing about the rate).
      std::vector<double> median_regret(budget);
      for (std::size_t k = 1; k <= budget; ++k) {
        std::vector<double> regrets;
        for (const Run& r : runs) regrets.push_back(best_after(r, k) - fn.minimum);
        median_regret[k - 1] = quantile(regrets, 0.5);
      }
      std::size_t t_end = budget;
      if (strategy == "bnb")
        for (std::size_t t = 1; t <= budget; ++t)
          if (median_regret[t - 1] <= floor_regret * (1.0 + 1e-9)) {
            t_end = t;
            notes.push_back("bnb: the median reaches the lattice floor at t = " + std::to_string(t) +
                            "; fits end there");
            break;
          }
      const auto ceil_at = [&](double f) {
        return std::max<std::size_t>(2, static_cast<std::size_t>(std::ceil(f * static_cast<double>(budget))));
      };
      for (const auto& [label, t_lo] : {std::pair<const char*, std::size_t>{"tail", ceil_at(opt.tail_from)},
                                        std::pair<const char*, std::size_t>{"wide", ceil_at(0.2)}}) {
        if (t_lo + 2 > t_end) {
          fit_rows.push_back("| " + strategy + " | " + label + " " + std::to_string(t_lo) + "-" + std::to_string(t_end) +
                             " | too few points | | | | | |");
          continue;
        }
        std::vector<double> xs_t, xs_thesis, xs_log, ys;
        std::size_t nonpositive = 0;
        for (std::size_t t = t_lo; t <= t_end; ++t) {
          const double r = median_regret[t - 1];
          if (!(r > 0.0)) {
            ++nonpositive;
            continue;
          }
          const double tt = static_cast<double>(t);
          xs_t.push_back(tt);
          xs_thesis.push_back(tt / std::pow(std::log(tt), static_cast<double>(fn.dim()) / 4.0));
          xs_log.push_back(std::log(tt));
          ys.push_back(std::log(r));
        }
        const Fit fe = least_squares(xs_t, ys), ft = least_squares(xs_thesis, ys), fp = least_squares(xs_log, ys);
        // Evaluations per factor-10 reduction at the fitted exponential rate.
        const double per_decade = fe.slope < 0 ? std::log(10.0) / -fe.slope : kNaN;
        char buf[4096];
        std::snprintf(buf, sizeof buf, "| %s | %s %zu-%zu | %s (%s) | %s | %s | %s (%s) | %s (%s) | %s -> %s |",
                      strategy.c_str(), label, t_lo, t_end, fmt(fe.slope).c_str(), fmt(fe.r2).c_str(),
                      fmt(per_decade).c_str(), fmt(std::exp(fe.slope * static_cast<double>(t_end - t_lo))).c_str(),
                      fmt(ft.slope).c_str(), fmt(ft.r2).c_str(), fmt(fp.slope).c_str(), fmt(fp.r2).c_str(),
                      fmt(median_regret[t_lo - 1]).c_str(), fmt(median_regret[t_end - 1]).c_str());
        fit_rows.push_back(buf);
        if (nonpositive > 0)
          notes.push_back(strategy + ": " + std::to_string(nonpositive) + " points of the " + label +
                          " range with median regret <= 0 left out of the fits");
      }
      char buf[4096];

      // bnb diagnostics.
      if (!runs.empty() && !runs.front().level.empty()) {
        std::set<std::vector<double>> distinct;
        for (const Run& r : runs) distinct.insert(r.value);
        const Run& r0 = runs.front();
        std::string levels;  // first evaluation at which each level is reached
        for (std::size_t k = 0; k < r0.level.size(); ++k)
          if (k == 0 || r0.level[k] != r0.level[k - 1])
            levels += (levels.empty() ? "" : ", ") + std::string("m=") + std::to_string(r0.level[k]) + " @" +
                      std::to_string(k + 1) + " (|R|=" + std::to_string(r0.relevant[k]) + ")";
        std::size_t final_at = 0;
        for (std::size_t k = 0; k < r0.final_phase.size(); ++k)
          if (r0.final_phase[k]) {
            final_at = k + 1;
            break;
          }
        std::snprintf(buf, sizeof buf,
                      "bnb: %zu distinct trajectories over %zu seeds; seed 0: levels %s; final phase %s; end: m=%zu, "
                      "|R|=%zu (max %zu), UCB-fallback proposals %zu, capped rounds %zu, capped refinements %zu, "
                      "kernel rebases %zu",
                      distinct.size(), runs.size(), levels.c_str(),
                      final_at ? ("from evaluation " + std::to_string(final_at)).c_str() : "not reached",
                      r0.level.empty() ? std::size_t{0} : r0.level.back(),
                      r0.relevant.empty() ? std::size_t{0} : r0.relevant.back(), r0.max_relevant, r0.ucb_proposals,
                      r0.capped_rounds, r0.capped_refinements, r0.rebases);
        bnb_rows.push_back(buf);
      }

      std::fprintf(stderr, "[%7.1f s] %s / %s: %zu seeds done in %.1f s\n", elapsed(), fn.name.c_str(),
                   strategy.c_str(), opt.seeds, elapsed() - t_start);
    }

    std::printf("\n## %s (d = %zu, minimum %.10g, T = %zu)\n\n", fn.name.c_str(), fn.dim(), fn.minimum, budget);
    std::printf("bnb finest lattice: spacing 2^-%zu of the unit cube; lattice floor (min regret on it) = %.3g\n\n",
                m_max, floor_regret);
    std::printf("Median simple regret (IQR) after t evaluations:\n\n| strategy");
    for (std::size_t k : checkpoints) std::printf(" | t=%zu", k);
    std::printf(" | s/run | max ask+tell ms |\n|---");
    for (std::size_t i = 0; i < checkpoints.size(); ++i) std::printf("|---");
    std::printf("|---|---|\n");
    for (const std::string& row : table_rows) std::printf("%s\n", row.c_str());
    std::printf("\nEvaluations until simple regret <= eps, median over seeds (seeds that got there):\n\n| strategy");
    for (double eps : thresholds) std::printf(" | eps=%g", eps);
    std::printf(" |\n|---");
    for (std::size_t i = 0; i < std::size(thresholds); ++i) std::printf("|---");
    std::printf("|\n");
    for (const std::string& row : reach_rows) std::printf("%s\n", row.c_str());
    std::printf(
        "\nTail fits to ln(median simple regret): exp = slope per evaluation (R^2); evals/decade = ln 10 / -slope; "
        "factor = fitted change over the range; thesis = slope against t/(ln t)^(d/4); power = exponent of t\n\n");
    std::printf("| strategy | fit range t | exp slope (R^2) | evals/decade | factor | thesis slope (R^2) | power exponent (R^2) | median regret at range ends |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const std::string& row : fit_rows) std::printf("%s\n", row.c_str());
    for (const std::string& row : bnb_rows) std::printf("\n%s\n", row.c_str());
    for (const std::string& note : notes) std::printf("\nnote: %s\n", note.c_str());
    std::fflush(stdout);
  }

  std::fprintf(stderr, "total %.1f s; rows written to %s\n", elapsed(), opt.csv.c_str());
  return 0;
}
