// Noisy multi-resolution campaigns: how good is the recommendation `tune best` reports, and does its
// posterior mean +- sd promise what the configuration gives? Every run is a Study with a resolution
// and a cost budget; each result is the level's value plus Gaussian noise of sd = noise x the
// problem's median gap (median over 4096 Sobol points of f_top - minimum). At the end of the budget:
//   - rec regret: f_top(recommendation) - minimum, noise-free, in units of the gap;
//   - best regret: the same for the best full-resolution trial observed (what ei-style tuners report);
//   - rec worse: seeds where the recommendation is truly worse than that best observed trial;
//   - z = (f_top(recommendation) - mean) / sd, the model's promise against the truth (minimised, so
//     z > 0 is a promise the configuration does not keep); a calibrated model has |z| < 2 in ~95%.
//
// Problems: "trainer" (the README's shape of a training script: lr log-uniform in [1e-5, 1], layers
// 1..8, act one of three; loss minimised, best 0.05 at lr 10^-2.5, layers 4, tanh; levels use 10%,
// 30% and all of the data at costs 0.1 / 0.3 / 1, a smaller share giving a higher loss with a
// shifted lr optimum), and the noise-free benchmark's multi-fidelity functions with noise added.
//
//   noisy_recommendation [--seeds N] [--budget B] [--noise F1,F2] [--problems a,b] [--methods a,b]
//                        [--csv PATH]
// Methods as multi_fidelity_cost's: "cmets", "cmes", "cmets:key=value+fit.key=value".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "bench_stats.hpp"
#include "functions/multi_fidelity.hpp"
#include "multi_fidelity_study.hpp"
#include "tune/tune.hpp"

namespace {

struct Problem {
  std::string name;
  tune::Space space;
  tune::Resolution resolution;
  std::function<double(const tune::Config&, std::size_t)> f;  // noise-free value at a level
  double minimum = 0.0;
  double gap = 1.0;
};

double trainer_accuracy(const tune::Config& c) {
  const double lr = std::log10(std::get<double>(c.at("lr")));
  const double layers = static_cast<double>(std::get<std::int64_t>(c.at("layers")));
  return 0.95 - 0.08 * std::pow(lr + 2.5, 2) - 0.01 * std::pow(layers - 4, 2) -
         (std::get<std::string>(c.at("act")) == "tanh" ? 0.0 : 0.03);
}

double median_gap(const Problem& p) {
  tune::Rng rng(12345);
  const Eigen::MatrixXd X = tune::sobol_points(p.space.dim(), 4096, rng);
  std::vector<double> v;
  for (Eigen::Index j = 0; j < X.cols(); ++j)
    v.push_back(p.f(p.space.decode(p.space.snap(X.col(j))), p.resolution.top()) - p.minimum);
  return tune::bench::median(v);
}

Problem trainer() {
  Problem p{"trainer",
            tune::Space({tune::Parameter::floating("lr", 1e-5, 1, tune::Scale::log), tune::Parameter::integer("layers", 1, 8),
                         tune::Parameter::categorical("act", {"relu", "tanh", "gelu"})}),
            tune::Resolution{"data_fraction", {0.1, 0.3, 1.0}, {0.1, 0.3, 1.0}},
            {},
            0.05};
  const std::vector<double> fractions = p.resolution.values;
  p.f = [fractions](const tune::Config& c, std::size_t level) {
    const double share = fractions[level];
    const double lr = std::log10(std::get<double>(c.at("lr")));
    return 1 - (trainer_accuracy(c) * (1 - 0.3 * (1 - share)) - 0.02 * (1 - share) * (lr + 2.5));
  };
  return p;
}

Problem from_function(const tune::testfn::MultiFidelityFunction& fn) {
  const tune::Study shape = tune::bench::multi_fidelity_study(fn, "random", 0, 1.0);
  Problem p{fn.name, shape.space(), *shape.resolution(), {}, fn.minimum};
  const std::size_t dim = fn.dim();
  p.f = [fn, dim](const tune::Config& c, std::size_t level) { return fn.value(tune::bench::unit_of(c, dim), level); };
  return p;
}

std::vector<Problem> problems_named(const std::vector<std::string>& names) {
  std::vector<Problem> out;
  for (const std::string& name : names) {
    if (name == "trainer") out.push_back(trainer());
    else {
      bool found = false;
      for (const auto& fn : tune::testfn::multi_fidelity_functions())
        if (fn.name == name) {
          out.push_back(from_function(fn));
          found = true;
        }
      if (!found) {
        std::fprintf(stderr, "noisy_recommendation: no problem '%s' (trainer, forrester_mf, branin_mf, hartmann3_mf, park_mf, currin_mf)\n",
                     name.c_str());
        std::exit(2);
      }
    }
    out.back().gap = median_gap(out.back());
  }
  return out;
}

struct Outcome {
  double rec_regret = NAN, best_regret = NAN, mean = NAN, sd = NAN, z = NAN;
  std::size_t trials = 0;
};

Outcome run(const Problem& p, const std::string& method, double noise_sd, std::uint64_t seed, double budget) {
  tune::StudyOptions so;
  so.seed = seed;
  so.resolution = p.resolution;
  so.cost_budget = budget;
  tune::Study study(p.space, tune::bench::make_method(method), so);
  std::mt19937_64 noise_rng(1000003 * (seed + 1));
  std::normal_distribution<double> noise(0.0, noise_sd);
  while (auto s = study.ask()) study.tell(s->id, p.f(s->config, *s->level) + noise(noise_rng));
  Outcome o;
  o.trials = study.trials().size();
  const std::size_t top = p.resolution.top();
  if (const tune::Trial* best = study.best()) o.best_regret = (p.f(best->config, top) - p.minimum) / p.gap;
  if (const auto r = study.recommendation()) {
    const double truth = p.f(r->config, top);
    o.rec_regret = (truth - p.minimum) / p.gap;
    o.mean = r->mean;
    o.sd = r->sd;
    o.z = (truth - r->mean) / r->sd;
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t seeds = 20;
  double budget = 10.0;
  std::vector<double> noises{0.03, 0.1};
  std::vector<std::string> problem_names{"trainer", "forrester_mf", "branin_mf", "hartmann3_mf"};
  std::vector<std::string> methods{"cmets", "cmets:fit.noise_pooling_log_sd=1",
                                   "cmets:fit.noise_pooling_log_sd=1+fit.smooth_start_noise=0.1", "cmes"};
  std::string csv_path = "noisy_recommendation.csv";
  const char* program = "noisy_recommendation";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return tune::bench::option_value(argc, argv, i, program); };
    if (a == "--seeds") seeds = tune::bench::count_value(value(), program, "--seeds");
    else if (a == "--budget") budget = tune::bench::real_value(value(), program, "--budget");
    else if (a == "--noise") {
      noises.clear();
      for (const std::string& f : tune::bench::split_commas(value())) noises.push_back(tune::bench::real_value(f, program, "--noise"));
    } else if (a == "--problems") problem_names = tune::bench::split_commas(value());
    else if (a == "--methods") methods = tune::bench::split_commas(value());
    else if (a == "--csv") csv_path = value();
    else {
      std::fprintf(stderr,
                   "usage: noisy_recommendation [--seeds N] [--budget B] [--noise F1,F2] [--problems a,b] [--methods a,b] "
                   "[--csv PATH]\n");
      return 2;
    }
  }
  const std::vector<Problem> problems = problems_named(problem_names);
  std::ofstream csv(csv_path);
  csv << "problem,noise,method,seed,trials,rec_regret,best_regret,mean,sd,z\n";
  std::printf("budget %g full-resolution runs, %zu seeds; regrets in units of the median gap (medians over the seeds)\n\n",
              budget, seeds);
  for (const Problem& p : problems)
    std::printf("%s: median gap %.4g, minimum %.6g, %zu levels\n", p.name.c_str(), p.gap, p.minimum, p.resolution.levels());
  std::printf("\n%-13s %6s %-58s %10s %11s %9s %8s %7s\n", "problem", "noise", "method", "rec regret", "best regret",
              "rec worse", "median z", "|z|>2");
  for (const Problem& p : problems)
    for (double noise : noises)
      for (const std::string& method : methods) {
        std::vector<double> rec, best, zs;
        std::size_t worse = 0, wild = 0;
        for (std::size_t seed = 0; seed < seeds; ++seed) {
          const Outcome o = run(p, method, noise * p.gap, seed, budget);
          csv << p.name << ',' << noise << ',' << method << ',' << seed << ',' << o.trials << ',' << o.rec_regret << ','
              << o.best_regret << ',' << o.mean << ',' << o.sd << ',' << o.z << '\n';
          rec.push_back(o.rec_regret);
          best.push_back(o.best_regret);
          zs.push_back(o.z);
          worse += o.rec_regret > o.best_regret;
          wild += std::abs(o.z) > 2;
        }
        std::printf("%-13s %6g %-58s %10.4f %11.4f %6zu/%-2zu %8.2f %4zu/%-2zu\n", p.name.c_str(), noise, method.c_str(),
                    tune::bench::median(rec), tune::bench::median(best), worse, seeds, tune::bench::median(zs), wild, seeds);
        std::fflush(stdout);
      }
  return 0;
}
