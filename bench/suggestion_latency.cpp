// Suggestion latency of the GP bandits against the number of observations n, on Hartmann-6.
//
// For each configuration (exact GP with fixed hyperparameters, exact GP with the default refit
// schedule, compressed GP with epsilon 0.01 and 0.05) and each n, it times `window` consecutive
// ask() calls (each followed by its tell) once the study holds n trials, and reports the median, the
// mean (refits amortised) and the maximum, with the model size reached.
//
// The exact GP reaches n by a Sobol initial design of size n (its model holds every point anyway);
// the compressed GPs (policy evaluate_no_add) reach n through n real ask/tell steps, since what
// their model keeps depends on every earlier test. Beyond n = 2000 a third of the window is timed.
//
//   suggestion_latency [--max-n N] [--window K] [--noise SD] [--configs a,b] [--csv PATH]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "functions/test_functions.hpp"
#include "tune/tune.hpp"
#include "bench_stats.hpp"

namespace {

struct Config {
  std::string name;
  tune::GpBanditOptions options;
  bool prefill;  // reach n by an initial design of size n
};

std::vector<Config> configs() {
  std::vector<Config> out;
  tune::GpBanditOptions fixed;
  fixed.fit_hyperparameters = false;
  fixed.hyperparameters = tune::GpHyperparameters{tune::KernelType::matern52, Eigen::VectorXd::Constant(6, 0.5), 1.0, {1e-2}};
  fixed.refit = {0, 0.0};  // standardise once, never refit
  out.push_back({"exact-fixed", fixed, true});
  out.push_back({"exact-refit", tune::GpBanditOptions{}, true});
  // Compression bounds the model only if rejected suggestions stay out of it while the campaign
  // goes on: evaluate_no_add. (next_informative adds every evaluation until the space is
  // eps-covered, so its model grows like the exact one; see the README.)
  for (double eps : {0.01, 0.05}) {
    tune::GpBanditOptions c;
    c.epsilon = eps;
    c.on_reject = tune::RejectPolicy::evaluate_no_add;
    out.push_back({eps == 0.01 ? "eps-0.01" : "eps-0.05", c, false});
  }
  // Diagnostic, not in the default list: eps-0.01 without the output transform.
  tune::GpBanditOptions plain;
  plain.epsilon = 0.01;
  plain.on_reject = tune::RejectPolicy::evaluate_no_add;
  plain.output_transform = tune::OutputTransformKind::none;
  out.push_back({"eps-0.01-plain", plain, false});
  return out;
}

using tune::bench::median;

struct Runner {
  tune::testfn::TestFunction f = tune::testfn::hartmann6();
  double noise_sd;
  tune::Rng noise_rng{12345};
  tune::Space space;

  explicit Runner(double sd) : noise_sd(sd) {
    std::vector<tune::Parameter> ps;
    for (std::size_t i = 0; i < f.dim(); ++i) ps.push_back(tune::Parameter::floating("x" + std::to_string(i), 0, 1));
    space = tune::Space(ps);
  }

  double evaluate(const tune::Config& c) {
    Eigen::VectorXd u(static_cast<Eigen::Index>(f.dim()));
    for (std::size_t i = 0; i < f.dim(); ++i) u(static_cast<Eigen::Index>(i)) = std::get<double>(c.at("x" + std::to_string(i)));
    return f.at_unit(u) + noise_sd * tune::standard_normal(noise_rng);
  }

  // One ask + tell; returns the ask's milliseconds, or a negative value if the study stopped.
  double step(tune::Study& study) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto s = study.ask();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!s) return -1.0;
    study.tell(s->id, evaluate(s->config));
    return ms;
  }
};

const tune::GpBandit& bandit_of(const tune::Study& s) { return dynamic_cast<const tune::GpBandit&>(s.strategy()); }

}  // namespace

int main(int argc, char** argv) {
  std::size_t max_n = 10000, window = 15;
  double noise = 0.1;
  std::string csv_path = "suggestion_latency.csv", only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return tune::bench::option_value(argc, argv, i, "suggestion_latency"); };
    if (a == "--max-n") max_n = tune::bench::count_value(next(), "suggestion_latency", "--max-n");
    else if (a == "--window") window = tune::bench::count_value(next(), "suggestion_latency", "--window");
    else if (a == "--noise") noise = tune::bench::real_value(next(), "suggestion_latency", "--noise");
    else if (a == "--csv") csv_path = next();
    else if (a == "--configs") only = "," + next() + ",";
    else {
      std::puts("usage: suggestion_latency [--max-n N] [--window K] [--noise SD] [--configs exact-fixed,exact-refit,eps-0.01,eps-0.05; diagnostic eps-0.01-plain] [--csv PATH]");
      return a == "--help" ? 0 : 2;
    }
  }
  const std::vector<std::size_t> checkpoints_all{50, 100, 200, 400, 800, 2000, 5000, 10000};
  std::vector<std::size_t> checkpoints;
  for (std::size_t c : checkpoints_all)
    if (c <= max_n) checkpoints.push_back(c);

  std::ofstream csv(csv_path);
  csv << "config,n,step,ask_ms,model_size,refit\n";
  std::printf("Hartmann-6 with observation noise sd %.3g; %zu asks timed per point\n", noise, window);
  std::printf("%-12s %7s %10s %10s %10s %10s %8s\n", "config", "n", "median ms", "mean ms", "max ms", "first ms", "model");
  for (const Config& config : configs()) {
    const bool diagnostic = config.name.ends_with("-plain");
    if (only.empty() ? diagnostic : only.find("," + config.name + ",") == std::string::npos) continue;
    Runner runner(noise);
    std::optional<tune::Study> grown;
    if (!config.prefill) grown.emplace(runner.space, tune::make_gp_bandit(tune::AcquisitionType::ei, config.options), tune::StudyOptions{tune::Direction::minimize, 1});
    const auto t_config = std::chrono::steady_clock::now();
    for (std::size_t n : checkpoints) {
      std::optional<tune::Study> prefilled;
      if (config.prefill) {
        tune::GpBanditOptions o = config.options;
        o.initial_design = n;
        prefilled.emplace(runner.space, tune::make_gp_bandit(tune::AcquisitionType::ei, o), tune::StudyOptions{tune::Direction::minimize, 1});
      }
      tune::Study& study = config.prefill ? *prefilled : *grown;
      bool stopped = false;
      while (study.trials().size() < n && !stopped) stopped = runner.step(study) < 0;
      if (stopped) {
        std::printf("%-12s %7zu stopped: %s\n", config.name.c_str(), n, study.stop_reason().c_str());
        break;
      }
      std::vector<double> times;
      const std::size_t asks = n > 2000 ? std::max<std::size_t>(3, window / 3) : window;  // exact GP asks take seconds there
      for (std::size_t k = 0; k < asks; ++k) {
        const std::size_t refits = bandit_of(study).refresh_count();
        const double ms = runner.step(study);
        if (ms < 0) break;
        times.push_back(ms);
        csv << config.name << ',' << n << ',' << k << ',' << ms << ',' << bandit_of(study).dictionary().size() << ','
            << (bandit_of(study).refresh_count() != refits) << '\n';
      }
      if (times.empty()) break;
      const double mean = std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(times.size());
      std::printf("%-12s %7zu %10.2f %10.2f %10.2f %10.2f %8zu\n", config.name.c_str(), n, median(times), mean,
                  *std::max_element(times.begin(), times.end()), times.front(), bandit_of(study).dictionary().size());
      std::fflush(stdout);
    }
    std::fprintf(stderr, "%s done in %.0f s\n", config.name.c_str(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t_config).count());
  }
  std::printf("per-ask rows written to %s\n", csv_path.c_str());
  return 0;
}
