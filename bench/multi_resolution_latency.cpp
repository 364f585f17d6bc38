// How a multi-resolution strategy's overhead grows with the campaign: the time of every ask(),
// tell() and recommendation() of one long run per function, against the number of trials so far.
//
// A cost-aware campaign makes many cheap trials (cmets on Hartmann-3 runs ~15 cheap trials per
// full-resolution one), so its model holds thousands of observations long before the budget of
// full runs is spent. Each function runs with one seed and a cost budget large enough that the
// trial cap ends the run. Times are wall clock on this machine, one thread.
//
// Prints per function and method, for trial-count windows [n, 2n): asks timed, median and maximum
// ms per ask, median ms per tell and per recommendation, and the share of full-resolution trials.
// Writes every step (function, method, trial, level, ask_ms, tell_ms, recommendation_ms) to a CSV.
//
// --noise SD adds N(0, SD^2) to every observation (seeded by --seed): the functions are
// noise-free, a real campaign's values are not, and with noise the model's learned noise makes
// CMES's Appendix A quadrature matter for every candidate (the gamma cut-off rarely applies).
//
// --failures P makes each trial fail (Study::fail) with probability P, drawn from its own stream
// seeded by --seed + 1 (so --noise's draws do not move): a real campaign has some failed runs, and
// once one exists every candidate's success probability costs O(finished trials) to compute.
//
// After each run, what a user waits for on the finished campaign: Study::save, Study::load (the
// model rebuilt from the saved hyperparameters, as `tune status`, `tune best` and a resumed
// `tune run` do), the recommendation of the loaded study and its first ask.
//
// --keep-studies DIR keeps each finished study's file there (FUNCTION.METHOD.SEED.yaml);
// --reload PATH [--repeats K] only times the load, recommendation and first ask of a saved study,
// K times (median and range), for a profiler or a before/after comparison of those steps.
// --reload PATH --pending P instead asks the loaded study P times without a tell (a `tune ask`
// driver, or many Slurm workers each holding a trial), K times: ms per ask by the number of trials
// pending, median over the K loads and asks.
//
// Usage: multi_resolution_latency [--trials N] [--functions a,b] [--methods a,b] [--seed S]
//                                 [--noise SD] [--failures P] [--csv PATH] [--keep-studies DIR]
//        multi_resolution_latency --reload PATH [--repeats K] [--pending P]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "bench_stats.hpp"
#include "functions/multi_fidelity.hpp"
#include "multi_fidelity_study.hpp"

namespace {

struct Options {
  std::size_t trials = 2000;
  std::vector<std::string> functions = {"hartmann3_mf", "park_mf"};
  std::vector<std::string> methods = {"cmets"};
  std::uint64_t seed = 0;
  double noise = 0.0;
  double failures = 0.0;
  std::string csv = "multi_resolution_latency.csv";
  std::string keep_dir;  // empty: the finished studies' files are removed
  std::string reload;    // a saved study to time the reload of, alone
  std::size_t repeats = 5;
  std::size_t pending = 0;  // with --reload: asks without tells
};

struct Step {
  std::size_t level = 0;
  bool failed = false;
  double ask_ms = 0.0, tell_ms = 0.0, recommendation_ms = 0.0;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Reload {
  std::size_t trials = 0;
  double save_ms = 0.0, load_ms = 0.0, recommendation_ms = 0.0, ask_ms = 0.0;
};

// Load, recommendation and first ask of the study saved at `path`.
void time_load(const std::filesystem::path& path, Reload& r) {
  auto t0 = std::chrono::steady_clock::now();
  tune::Study loaded = tune::Study::load(path);
  r.trials = loaded.trials().size();
  r.load_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  (void)loaded.recommendation();
  r.recommendation_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  (void)loaded.ask();
  r.ask_ms = ms_since(t0);
}

Reload time_reload(const tune::Study& study, const std::string& tag, const std::string& keep_dir) {
  const std::filesystem::path path = (keep_dir.empty() ? std::filesystem::temp_directory_path()
                                                       : std::filesystem::path(keep_dir)) /
                                     (keep_dir.empty() ? "multi_resolution_latency." + tag + ".yaml" : tag + ".yaml");
  Reload r;
  auto t0 = std::chrono::steady_clock::now();
  study.save(path);
  r.save_ms = ms_since(t0);
  time_load(path, r);
  if (keep_dir.empty()) std::filesystem::remove(path);
  return r;
}

// P asks without a tell after each of K loads: ms per ask by the number pending before it.
int time_pending_asks(const Options& o) {
  std::vector<std::vector<double>> ask(o.pending);  // by pending count, over the loads
  std::size_t trials = 0;
  for (std::size_t k = 0; k < o.repeats; ++k) {
    tune::Study loaded = tune::Study::load(o.reload);
    trials = loaded.trials().size();
    for (std::size_t p = 0; p < o.pending; ++p) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto s = loaded.ask();
      ask[p].push_back(ms_since(t0));
      if (!s) break;
    }
  }
  std::printf("%s (%zu trials), %zu asks without a tell after each of %zu loads: ms per ask\n", o.reload.c_str(),
              trials, o.pending, o.repeats);
  std::printf("%12s %10s %10s %10s\n", "pending", "median", "max", "total s");
  for (std::size_t lo = 0, hi = 1; lo < o.pending; lo = hi, hi *= 2) {
    std::vector<double> window;
    double total = 0.0;
    for (std::size_t p = lo; p < std::min(hi, o.pending); ++p) {
      if (ask[p].empty()) continue;
      const double m = tune::bench::median(ask[p]);
      window.push_back(m);
      total += m;
    }
    if (window.empty()) break;
    char range[48];
    std::snprintf(range, sizeof range, "%zu-%zu", lo, std::min(hi, o.pending) - 1);
    std::printf("%12s %10.2f %10.2f %10.3f\n", range, tune::bench::median(window),
                *std::max_element(window.begin(), window.end()), total / 1000.0);
  }
  return 0;
}

int time_saved_study(const Options& o) {
  if (o.pending > 0) return time_pending_asks(o);
  std::vector<double> load, recommendation, ask;
  std::size_t trials = 0;
  for (std::size_t k = 0; k < o.repeats; ++k) {
    Reload r;
    time_load(o.reload, r);
    trials = r.trials;
    load.push_back(r.load_ms);
    recommendation.push_back(r.recommendation_ms);
    ask.push_back(r.ask_ms);
  }
  std::printf("%s (%zu trials), ms over %zu loads: median [min, max]\n", o.reload.c_str(), trials, o.repeats);
  for (auto& [name, v] : {std::pair{"load", &load}, {"recommendation", &recommendation}, {"first ask", &ask}})
    std::printf("  %-15s %9.1f [%.1f, %.1f]\n", name, tune::bench::median(*v),
                *std::min_element(v->begin(), v->end()), *std::max_element(v->begin(), v->end()));
  return 0;
}

std::vector<Step> run(const tune::testfn::MultiFidelityFunction& fn, const std::string& method, const Options& o,
                      Reload& reload) {
  // A budget no run of o.trials trials can spend: the trial cap ends it.
  tune::Study study = tune::bench::multi_fidelity_study(fn, method, o.seed, static_cast<double>(o.trials) + 1.0);
  std::vector<Step> steps;
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> noise(0.0, o.noise > 0.0 ? o.noise : 1.0);  // drawn only with --noise
  std::mt19937_64 failure_rng(o.seed + 1);
  std::bernoulli_distribution fails(o.failures);  // drawn only with --failures
  while (steps.size() < o.trials) {
    Step st;
    auto t0 = std::chrono::steady_clock::now();
    const auto s = study.ask();
    st.ask_ms = ms_since(t0);
    if (!s) break;
    const double y =
        fn.value(tune::bench::unit_of(s->config, fn.dim()), *s->level) + (o.noise > 0.0 ? noise(rng) : 0.0);
    st.failed = o.failures > 0.0 && fails(failure_rng);
    t0 = std::chrono::steady_clock::now();
    if (st.failed)
      study.fail(s->id, "failed by --failures");
    else
      study.tell(s->id, y);
    st.tell_ms = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    (void)study.recommendation();
    st.recommendation_ms = ms_since(t0);
    st.level = *s->level;
    steps.push_back(st);
    if (steps.size() % 250 == 0)
      std::fprintf(stderr, "%s %s: %zu trials, last ask %.1f ms\n", fn.name.c_str(), method.c_str(), steps.size(), st.ask_ms);
  }
  reload = time_reload(study, fn.name + "." + method + "." + std::to_string(o.seed), o.keep_dir);
  return steps;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return tune::bench::option_value(argc, argv, i, "multi_resolution_latency"); };
    if (a == "--trials") {
      const auto n = tune::bench::positive_count(value());
      if (!n) {
        std::fprintf(stderr, "multi_resolution_latency: --trials needs a positive whole number\n");
        return 2;
      }
      o.trials = *n;
    } else if (a == "--functions") o.functions = tune::bench::split_commas(value());
    else if (a == "--methods") o.methods = tune::bench::split_commas(value());
    else if (a == "--seed") o.seed = tune::bench::count_value(value(), "multi_resolution_latency", "--seed");
    else if (a == "--noise") {
      o.noise = tune::bench::real_value(value(), "multi_resolution_latency", "--noise");
      if (!(o.noise >= 0.0)) {
        std::fprintf(stderr, "multi_resolution_latency: --noise needs a standard deviation >= 0\n");
        return 2;
      }
    }
    else if (a == "--failures") {
      o.failures = tune::bench::real_value(value(), "multi_resolution_latency", "--failures");
      if (!(o.failures >= 0.0 && o.failures < 1.0)) {
        std::fprintf(stderr, "multi_resolution_latency: --failures needs a probability in [0, 1)\n");
        return 2;
      }
    }
    else if (a == "--csv") o.csv = value();
    else if (a == "--keep-studies") o.keep_dir = value();
    else if (a == "--reload") o.reload = value();
    else if (a == "--repeats") {
      const auto n = tune::bench::positive_count(value());
      if (!n) {
        std::fprintf(stderr, "multi_resolution_latency: --repeats needs a positive whole number\n");
        return 2;
      }
      o.repeats = *n;
    } else if (a == "--pending") {
      const auto n = tune::bench::positive_count(value());
      if (!n) {
        std::fprintf(stderr, "multi_resolution_latency: --pending needs a positive whole number\n");
        return 2;
      }
      o.pending = *n;
    } else {
      std::fprintf(stderr,
                   "usage: multi_resolution_latency [--trials N] [--functions a,b] [--methods a,b] [--seed S] "
                   "[--noise SD] [--failures P] [--csv PATH] [--keep-studies DIR]\n"
                   "       multi_resolution_latency --reload PATH [--repeats K] [--pending P]\n");
      return 2;
    }
  }
  if (!o.reload.empty()) return time_saved_study(o);
  std::ofstream csv(o.csv);
  csv << "function,method,trial,level,failed,ask_ms,tell_ms,recommendation_ms\n";
  std::printf("ms per call against the number of trials so far (one run per function, seed %llu, up to %zu trials)\n\n",
              static_cast<unsigned long long>(o.seed), o.trials);
  std::printf("%-13s %-8s %11s %6s %10s %10s %10s %10s %12s %9s\n", "function", "method", "trials", "asks", "ask med",
              "ask max", "tell med", "rec med", "top-level %", "failed %");
  std::vector<std::pair<std::string, Reload>> reloads;
  for (const auto& fn : tune::testfn::multi_fidelity_functions()) {
    if (std::find(o.functions.begin(), o.functions.end(), fn.name) == o.functions.end()) continue;
    for (const std::string& method : o.methods) {
      Reload reload;
      const std::vector<Step> steps = run(fn, method, o, reload);
      reloads.emplace_back(fn.name + " " + method, reload);
      for (std::size_t k = 0; k < steps.size(); ++k)
        csv << fn.name << ',' << method << ',' << k << ',' << steps[k].level << ',' << steps[k].failed << ',' << steps[k].ask_ms << ','
            << steps[k].tell_ms << ',' << steps[k].recommendation_ms << '\n';
      for (std::size_t lo = 0, hi = 50; lo < steps.size(); lo = hi, hi *= 2) {
        std::vector<double> ask, tell, rec;
        std::size_t top = 0, failed = 0;
        for (std::size_t k = lo; k < std::min(hi, steps.size()); ++k) {
          ask.push_back(steps[k].ask_ms);
          tell.push_back(steps[k].tell_ms);
          rec.push_back(steps[k].recommendation_ms);
          top += steps[k].level == fn.top();
          failed += steps[k].failed;
        }
        char window[48];
        std::snprintf(window, sizeof window, "%zu-%zu", lo, std::min(hi, steps.size()) - 1);
        std::printf("%-13s %-8s %11s %6zu %10.2f %10.2f %10.2f %10.2f %12.1f %9.1f\n", fn.name.c_str(), method.c_str(), window,
                    ask.size(), tune::bench::median(ask), *std::max_element(ask.begin(), ask.end()),
                    tune::bench::median(tell), tune::bench::median(rec), 100.0 * static_cast<double>(top) / static_cast<double>(ask.size()),
                    100.0 * static_cast<double>(failed) / static_cast<double>(ask.size()));
      }
    }
  }
  std::printf("\nthe finished study saved and loaded again (ms): what `tune status` / `tune best` and a resume pay\n\n");
  std::printf("%-22s %7s %9s %9s %15s %16s\n", "function method", "trials", "save", "load", "recommendation",
              "first ask after");
  for (const auto& [name, r] : reloads)
    std::printf("%-22s %7zu %9.1f %9.1f %15.1f %16.1f\n", name.c_str(), r.trials, r.save_ms, r.load_ms,
                r.recommendation_ms, r.ask_ms);
  return 0;
}
