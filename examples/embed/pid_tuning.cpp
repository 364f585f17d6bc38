// Embedding tune in a C++ program: tune the gains of a PID controller on a simulated plant, in
// process, with the ask/tell API; the study is saved after every evaluation and resumed from its
// file when the program starts again, so an interrupted run loses nothing.
//
//   pid_tuning [--state FILE] [--evaluations N] [--stop-after K] [--seed S]
//
// --stop-after K stops after K evaluations in all (as if the program were interrupted); run it again
// with the same --state to continue. The study is deterministic: an interrupted and resumed run
// ends with the same trials, bit for bit, as one run straight through.
#include <tune/tune.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace {

struct Gains {
  double kp = 0.0, ki = 0.0, kd = 0.0;
};

// The plant: a mass on a spring with light damping, m x'' + c x' + k x = u, and an actuator limited
// to |u| <= 20, asked to follow a unit step from rest. The score (to minimise) is the integral of
// time-weighted absolute error (ITAE) over 10 s, plus a penalty on overshoot and one on the total
// variation of the actuator command (so that huge gains, which chatter, do not win): small when the
// mass settles fast at 1 without ringing; a controller that goes unstable scores very badly.
double step_response_cost(const Gains& g) {
  constexpr double m = 1.0, c = 0.4, k = 2.0, u_max = 20.0, dt = 1e-3, horizon = 10.0;
  double u_previous = 0.0, variation = 0.0, x = 0.0, v = 0.0, integral = 0.0, previous_error = 1.0, itae = 0.0, peak = 0.0;
  const auto steps = static_cast<int>(horizon / dt);
  for (int i = 0; i < steps; ++i) {
    const double t = i * dt;
    const double error = 1.0 - x;
    const double derivative = (error - previous_error) / dt;
    const double u_raw = g.kp * error + g.ki * integral + g.kd * derivative;
    const double u = std::clamp(u_raw, -u_max, u_max);
    if (u == u_raw) integral += error * dt;  // anti-windup: no integration while saturated
    previous_error = error;
    variation += std::abs(u - u_previous);
    u_previous = u;
    const double a = (u - c * v - k * x) / m;  // semi-implicit Euler
    v += a * dt;
    x += v * dt;
    itae += t * std::abs(error) * dt;
    peak = std::max(peak, x);
    if (!std::isfinite(x) || std::abs(x) > 1e6) return 1e3;  // diverged
  }
  return itae + 10.0 * std::max(0.0, peak - 1.0) + 0.01 * variation;
}

Gains gains_of(const tune::Config& config) {
  return {.kp = std::get<double>(config.at("kp")),
          .ki = std::get<double>(config.at("ki")),
          .kd = std::get<double>(config.at("kd"))};
}

int usage(int code) {
  std::fputs("usage: pid_tuning [--state FILE] [--evaluations N] [--stop-after K] [--seed S]\n"
             "Tunes the gains kp, ki, kd of a PID controller on a simulated mass-spring system with\n"
             "GP expected improvement. The study is saved to FILE (default pid_study.yaml) after every\n"
             "evaluation; if FILE exists the study is resumed from it. --stop-after K stops after K\n"
             "evaluations in all, as if interrupted.\n",
             code == 0 ? stdout : stderr);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::string state = "pid_study.yaml";
  std::size_t evaluations = 30;
  std::size_t stop_after = 0;
  std::uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--state") && has_value) {
      state = argv[++i];
    } else if (!std::strcmp(argv[i], "--evaluations") && has_value) {
      evaluations = std::strtoul(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--stop-after") && has_value) {
      stop_after = std::strtoul(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--seed") && has_value) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      return usage(std::strcmp(argv[i], "--help") == 0 ? 0 : 2);
    }
  }

  try {
    // A new study, or the one saved by an earlier (interrupted) run: its file holds the space, the
    // strategy with its model state, the seed and every trial.
    tune::Study study = [&] {
      if (std::filesystem::exists(state)) {
        tune::Study loaded = tune::Study::load(state);
        std::printf("resumed %s: %zu trials\n", state.c_str(), loaded.trials().size());
        return loaded;
      }
      const tune::Space space({tune::Parameter::floating("kp", 0.1, 1000, tune::Scale::log),
                               tune::Parameter::floating("ki", 0.01, 100, tune::Scale::log),
                               tune::Parameter::floating("kd", 0.01, 100, tune::Scale::log)});
      tune::StudyOptions options;
      options.direction = tune::Direction::minimize;
      options.seed = seed;
      std::printf("new study %s\n", state.c_str());
      return tune::Study(space, tune::make_strategy("ei"), options);
    }();

    while (study.trials().size() < evaluations) {
      if (stop_after > 0 && study.trials().size() >= stop_after) {
        std::printf("stopped after %zu evaluations; run again to resume\n", study.trials().size());
        return 0;
      }
      const auto suggestion = study.ask();
      if (!suggestion) {
        std::printf("the strategy stopped: %s\n", study.stop_reason().c_str());
        break;
      }
      const Gains g = gains_of(suggestion->config);
      const double cost = step_response_cost(g);
      study.tell(suggestion->id, cost);
      study.save(state);  // atomic: a crash leaves the previous or the new file, never a torn one
      std::printf("trial %2llu  kp %9.4f  ki %9.4f  kd %9.5f  cost %10.6f  best %10.6f\n",
                  static_cast<unsigned long long>(suggestion->id), g.kp, g.ki, g.kd, cost,
                  *study.best()->value);
    }

    const tune::Trial* best = study.best();
    if (best == nullptr) {
      std::puts("no completed trial");
      return 1;
    }
    const Gains g = gains_of(best->config);
    // %.17g: the exact doubles, so two runs can be compared as text.
    std::printf("best trial %llu of %zu: cost %.17g at kp %.17g, ki %.17g, kd %.17g\n",
                static_cast<unsigned long long>(best->id), study.trials().size(), *best->value, g.kp, g.ki,
                g.kd);
    std::printf("untuned reference kp 1, ki 0, kd 0: cost %.6g\n", step_response_cost({.kp = 1.0, .ki = 0.0, .kd = 0.0}));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pid_tuning: %s\n", e.what());
    return 1;
  }
}
