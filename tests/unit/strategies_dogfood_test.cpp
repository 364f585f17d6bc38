// What a user of ucb / ei with compression, gpoo and bnb ran into through tune::Study and
// make_strategy: options accepted that were ignored or broke the study later (a horizon without
// its schedule_alpha, an acquisition optimiser's perturbation share above 1, an infinite beta
// factor, a gpoo round of 100000 representatives).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tune/tune.hpp"

namespace tune {
namespace {

// The message of the std::invalid_argument make_strategy throws (another exception fails the test).
std::string refusal_of(const std::string& name, const std::string& options) {
  try {
    (void)make_strategy(name, YAML::Load(options));
    return "no exception";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

Space square() { return Space({Parameter::floating("x", 0, 1), Parameter::floating("y", 0, 1)}); }

double bowl(const Config& c) {
  const double x = std::get<double>(c.at("x")), y = std::get<double>(c.at("y"));
  return (x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6);
}

struct Refused {
  const char* name;
  const char* options;
  const char* named;  // the option the message names
  const char* hint;   // and part of the fix it gives
};

// Each was accepted before; the first two were silently ignored, the perturbation share made the
// first ask after the initial design throw std::bad_alloc, an infinite beta made every UCB score
// infinite, and 100000 representatives made gpoo's first ask run out of memory.
TEST(StrategiesDogfood, OptionsThatWereIgnoredOrBrokeTheStudyAreRefusedByName) {
  const std::vector<Refused> cases = {
      {"ei", "{horizon: 1000}", "'horizon'", "schedule_alpha"},
      {"ucb", "{schedule_alpha: 0.5}", "'schedule_alpha'", "horizon"},
      {"ei", "{epsilon: 0.1, horizon: 1000, schedule_alpha: 0.5}", "'epsilon'", "one or the other"},
      {"ei", "{horizon: .inf, schedule_alpha: 1}", "'horizon'", "finite"},
      {"ucb", "{beta_scale: .inf}", "'beta_scale'", "finite"},
      {"ei", "{optimizer: {perturbation_fraction: 2}}", "'optimizer.perturbation_fraction'", "[0, 1)"},
      {"ei", "{optimizer: {perturbation_fraction: 1}}", "'optimizer.perturbation_fraction'", "[0, 1)"},
      {"ucb", "{optimizer: {perturbation_sd: -1}}", "'optimizer.perturbation_sd'", ">= 0"},
      {"ei", "{optimizer: {perturbation_sd: .nan}}", "'optimizer.perturbation_sd'", ">= 0"},
      {"gpoo", "{representatives: 100000}", "'representatives'", "at most 1024"},
      {"gpoo", "{representatives: 1025, aggregation: cell}", "'representatives'", "at most 1024"},
  };
  for (const Refused& c : cases) {
    const std::string what = refusal_of(c.name, c.options);
    EXPECT_NE(what.find(std::string("strategy option ") + c.named), std::string::npos) << c.name << " " << c.options << ": " << what;
    EXPECT_NE(what.find(c.hint), std::string::npos) << c.name << " " << c.options << ": " << what;
  }
  // The limits themselves are accepted.
  for (const auto& [name, options] : std::vector<std::pair<std::string, std::string>>{
           {"ei", "{horizon: 1000, schedule_alpha: 0.5}"},
           {"ucb", "{epsilon: 0.1, beta_scale: 1e6}"},
           {"ei", "{optimizer: {perturbation_fraction: 0, perturbation_sd: 0}}"},
           {"gpoo", "{representatives: 1024}"}})
    EXPECT_EQ(refusal_of(name, options), "no exception") << name << " " << options;
}

// The paper's schedule, accepted, is the threshold the study applies: every trial's test statistic
// (posterior variance / noise) of an in-model GP trial exceeds T^-alpha (the closed form of
// expm1(2 eps) for eps = 1/2 log(1 + T^-alpha)), and the rejected ones do not; on a noisy bowl.
TEST(StrategiesDogfood, TheHorizonScheduleSetsTheThreshold) {
  const double horizon = 4.0, alpha = 1.0;  // threshold 0.25
  Study study(square(),
              make_strategy("ei", YAML::Load("{horizon: 4, schedule_alpha: 1, on_reject: evaluate_no_add}")),
              {.direction = Direction::minimize, .seed = 3, .max_trials = 40});
  Rng rng = make_rng(7, RngStream::candidates, 0);
  std::normal_distribution<double> noise(0.0, 0.05);
  while (auto s = study.ask()) study.tell(s->id, bowl(s->config) + noise(rng));
  std::size_t judged = 0, rejected = 0;
  for (const Trial& t : study.trials()) {
    if (!std::isfinite(t.test_statistic)) continue;  // the initial design
    ++judged;
    if (t.in_model) {
      EXPECT_GT(t.test_statistic, std::pow(horizon, -alpha)) << "trial " << t.id;
    } else {
      ++rejected;
      EXPECT_LE(t.test_statistic, std::pow(horizon, -alpha)) << "trial " << t.id;
    }
  }
  EXPECT_EQ(study.trials().size(), 40u);
  EXPECT_GT(judged, 10u);
  EXPECT_GT(rejected, 0u) << "with a threshold of 0.25 some suggestions fail the test";
}

// perturbation_fraction just below 1 (almost every candidate a perturbation of the best points)
// runs: the bound is the share, not a smaller arbitrary one.
TEST(StrategiesDogfood, APerturbationShareBelowOneRuns) {
  Study study(square(), make_strategy("ucb", YAML::Load("{optimizer: {perturbation_fraction: 0.99}}")),
              {.direction = Direction::minimize, .seed = 1, .max_trials = 12});
  while (auto s = study.ask()) study.tell(s->id, bowl(s->config));
  EXPECT_EQ(study.trials().size(), 12u);
}


// gpoo on a loss that fails beyond x = 0.7: a round with a failed trial stays as a fantasy, which
// the first round took from the prior before any result (a loss of 0, better than every run), so
// the failing cells looked best. The recommendation must lie where runs succeed, with an estimate
// that a loss of (x - 0.65)^2 can have (>= 0, within 4 sd), over several seeds.
TEST(StrategiesDogfood, GpooDoesNotRecommendWhereEveryRunFailed) {
  const auto loss = [](double x) { return (x - 0.65) * (x - 0.65); };
  for (const char* options : {"{}", "{representatives: 3}", "{aggregation: cell}"}) {
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      Study study(Space({Parameter::floating("x", 0, 1)}), make_strategy("gpoo", YAML::Load(options)),
                  {.direction = Direction::minimize, .seed = seed, .max_trials = 30});
      std::size_t failed = 0;
      while (auto s = study.ask()) {
        const double x = std::get<double>(s->config.at("x"));
        if (x > 0.7) {
          study.fail(s->id, "diverged");
          ++failed;
        } else {
          study.tell(s->id, loss(x));
        }
      }
      const std::optional<StudyRecommendation> r = study.recommendation();
      ASSERT_TRUE(r && r->region) << options;
      const double px = std::get<double>(r->config.at("x"));
      EXPECT_LE(px, 0.7) << options << " seed " << seed << ": recommended a point where runs fail";
      EXPECT_LT(r->region->lower[0], 0.7) << options << " seed " << seed << ": a region where every run fails";
      EXPECT_GE(r->region->mean + 4 * r->region->sd, 0.0)
          << options << " seed " << seed << ": estimated a loss of " << r->region->mean << " ± " << r->region->sd;
      EXPECT_LT(failed, 15u) << options << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace tune
