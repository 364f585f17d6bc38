// The README demo: tune the Branin function (a 2-D stand-in for an expensive training run) with
// compressed GP-EI through the ask/tell API, save the study half-way, load it back and finish.
//
//   tune_demo [--trials N] [--state PATH]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <string>

#include "tune/tune.hpp"

namespace {
double branin(double x1, double x2) {
  const double pi = std::numbers::pi;
  const double b = 5.1 / (4 * pi * pi), c = 5 / pi, t = 1 / (8 * pi);
  const double u = x2 - b * x1 * x1 + c * x1 - 6;
  return u * u + 10 * (1 - t) * std::cos(x1) + 10;
}
constexpr double kBraninMinimum = 0.397887357729738;

void usage() {
  std::puts("usage: tune_demo [--trials N] [--state PATH]\n"
            "Tunes the Branin function with GP-EI (epsilon = 0.01), saving the study to PATH\n"
            "(default tune_demo_study.yaml) after every trial and resuming from it half-way.");
}
}  // namespace

int main(int argc, char** argv) {
  std::size_t trials = 40;
  std::string state = "tune_demo_study.yaml";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--trials") && i + 1 < argc) {
      trials = std::strtoul(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--state") && i + 1 < argc) {
      state = argv[++i];
    } else {
      usage();
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }

  const tune::Space space({tune::Parameter::floating("x1", -5, 10), tune::Parameter::floating("x2", 0, 15)});
  tune::GpBanditOptions options;
  options.epsilon = 0.01;  // compression: keep only observations that carry > 0.01 nats
  tune::Study study(space, tune::make_gp_bandit(tune::AcquisitionType::ei, options),
                    {.direction = tune::Direction::minimize, .seed = 1});

  std::printf("%5s %9s %9s %12s %12s %8s %s\n", "trial", "x1", "x2", "value", "best", "model", "source");
  for (std::size_t n = 0; n < trials; ++n) {
    if (n == trials / 2) {
      // Simulate a restart: everything the study knows is in the file.
      study = tune::Study::load(state);
      std::printf("--- study reloaded from %s (%zu trials) ---\n", state.c_str(), study.trials().size());
    }
    const auto suggestion = study.ask();
    if (!suggestion) {
      std::printf("stopped: %s\n", study.stop_reason().c_str());
      break;
    }
    const double x1 = std::get<double>(suggestion->config.at("x1"));
    const double x2 = std::get<double>(suggestion->config.at("x2"));
    study.tell(suggestion->id, branin(x1, x2));
    study.save(state);
    const tune::Trial& t = study.trial(suggestion->id);
    std::printf("%5llu %9.4f %9.4f %12.6f %12.6f %8zu %s\n", static_cast<unsigned long long>(t.id), x1, x2,
                *t.value, *study.best()->value, t.model_size + (t.in_model ? 1 : 0), t.source.c_str());
  }
  const tune::Trial* best = study.best();
  std::printf("best value %.6f (global minimum %.6f, regret %.2e) at x1 = %.4f, x2 = %.4f\n", *best->value,
              kBraninMinimum, *best->value - kBraninMinimum, std::get<double>(best->config.at("x1")),
              std::get<double>(best->config.at("x2")));
  return 0;
}
