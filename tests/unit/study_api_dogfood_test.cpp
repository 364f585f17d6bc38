// What a program embedding tune::Study ran into: option errors of another exception type than the
// header promised; fixed hyperparameters of the wrong size and inverted fit bounds accepted until
// the model was built; a gpoo study with a cost budget whose recommendation named a trial that did
// not exist; enqueued configurations never handed out, or handed out with the wrong value types;
// minimize() blaming the objective for a value tell() refused. Also the thread use the README
// promises: independent Studies on separate threads.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "tune/tune.hpp"

namespace tune {
namespace {

std::string invalid_argument_of(const std::string& name, const std::string& options) {
  try {
    (void)make_strategy(name, YAML::Load(options));
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not std::invalid_argument: ") + e.what();
  }
  return "no exception";
}

// make_strategy(name, options) throws std::invalid_argument whose message holds `named`.
struct RefusedOption {
  const char* name;
  const char* options;
  const char* named;
};
void expect_refused(const std::vector<RefusedOption>& cases) {
  for (const RefusedOption& c : cases) {
    const std::string what = invalid_argument_of(c.name, c.options);
    EXPECT_NE(what.find(c.named), std::string::npos) << c.name << " " << c.options << ": " << what;
    EXPECT_EQ(what.rfind("not std::invalid_argument", 0), std::string::npos) << c.name << " " << c.options << ": " << what;
  }
}

TEST(StudyApiDogfood, EveryBadStrategyOptionIsAnInvalidArgumentNamingIt) {
  expect_refused({
      {"ei", "{epsilo: 0.1}", "'epsilo'"},                 // misspelt key
      {"ei", "{epsilon: abc}", "'epsilon'"},               // wrong type
      {"ei", "{on_reject: bogus}", "'bogus'"},             // unknown value
      {"ei", "{initial_design: -3}", "'initial_design'"},  // negative count
      {"ucb", "{refit: {evry: 3}}", "'evry'"},             // misspelt nested key
      {"ei", "[1, 2]", "expected a map"},                  // not a map
      {"cmets", "{windw: cell}", "'windw'"},
      {"cmes", "{variant: x}", "'x'"},
      {"gpoo", "{beta: x}", "'x'"},
      {"gpoo", "{max_depth: -1}", "'max_depth'"},
      {"bnb", "{maxlevel: 3}", "'maxlevel'"},
      {"bnb", "{alpha: 2}", "'alpha'"},  // out of range (was already an invalid_argument)
      {"eii", "{}", "'eii'"},            // unknown name (likewise)
  });
}

// The hyperparameter fit's bounds and priors are checked by make_strategy. Before, inverted bounds
// were accepted, the initial design ran, and every later ask threw "fit_hyperparameters: the marginal
// likelihood could not be evaluated at any start"; a negative noise bound threw "kernel:
// lengthscales must be positive and finite", which names neither.
TEST(StudyApiDogfood, BadFitBoundsAndPriorsAreRefusedByMakeStrategy) {
  expect_refused({
      {"ei", "{fit: {lengthscale_min: 5, lengthscale_max: 1}}", "'fit.lengthscale_min' (5) exceeds 'fit.lengthscale_max' (1)"},
      {"ucb", "{fit: {noise_min: -1}}", "'fit.noise_min' must be a finite number > 0 (got -1)"},
      {"cmets", "{fit: {scale_max: .inf}}", "'fit.scale_max' must be a finite number > 0 (got .inf)"},
      {"cmes", "{fit: {trend_prior_log_sd: .nan}}", "'fit.trend_prior_log_sd' must be finite (got .nan)"},
      {"gpoo", "{fit: {outputscale_min: 0}}", "'fit.outputscale_min' must be a finite number > 0 (got 0)"},
      {"bnb", "{fit: {max_evaluations: 0}}", "'fit.max_evaluations' must be >= 1"},
      {"ei", "{refit: {growth: -0.1}}", "'refit.growth' must be a finite number >= 0 (got -0.1)"},
      {"ei", "{fit: {lengthscale_prior_median_1d: 0}}", "'fit.lengthscale_prior_median_1d' must be a finite number > 0"},
  });
  // The defaults, equal bounds (a fixed value) and a prior switched off (log_sd <= 0) are accepted.
  // bnb never fits a noise (it keeps fit.noise_min) and refuses the noise-fitting options.
  for (const std::string name : {"ei", "ucb", "cmets", "cmes", "gpoo", "bnb"}) {
    EXPECT_NO_THROW((void)make_strategy(name)) << name;
    // bnb fits no noise and refuses the noise's bounds and prior: the same for its outputscale.
    const char* fixed = name == "bnb" ? "{fit: {outputscale_min: 2, outputscale_max: 2, outputscale_prior_log_sd: 0}}"
                                      : "{fit: {noise_min: 0.01, noise_max: 0.01, noise_prior_log_sd: 0}}";
    EXPECT_NO_THROW((void)make_strategy(name, YAML::Load(fixed))) << name;
  }
  // minimize() builds its GP bandit from the struct: the same check.
  MinimizeOptions m{.evaluations = 3};
  m.gp.fit.lengthscale_min = 30;
  const Space space({Parameter::floating("x", 0, 1)});
  EXPECT_THROW((void)minimize([](const Config&) { return 0.0; }, space, m), std::invalid_argument);
  // A strategy made directly from its options struct checks them as make_strategy does.
  tune::GpooStrategyOptions gpoo;
  gpoo.fit.noise_min = -1;
  EXPECT_THROW((void)tune::GpooStrategy(gpoo), std::invalid_argument);
  tune::BnbStrategyOptions bnb;
  bnb.fit.max_evaluations = 0;
  EXPECT_THROW((void)tune::BnbStrategy(bnb), std::invalid_argument);
  tune::MultiResolutionOptions cmets;
  cmets.fit.scale_max = std::numeric_limits<double>::infinity();
  EXPECT_THROW((void)tune::MultiResolutionSearch(cmets), std::invalid_argument);
  tune::GpBanditOptions ei;
  ei.refit.growth = -0.1;
  EXPECT_THROW((void)tune::GpBandit(ei), std::invalid_argument);
}

TEST(StudyApiDogfood, BadFixedHyperparametersAreRefusedBeforeAnyTrialRuns) {
  const Space space({Parameter::floating("x", 0, 1)});
  const YAML::Node two = YAML::Load(
      "{fit_hyperparameters: false, hyperparameters: {lengthscales: [0.2, 0.3], outputscale: 1, noise_variance: 0.01}}");
  try {
    Study study(space, make_strategy("ei", two));
    ADD_FAILURE() << "a Study with 2 lengthscales for 1 parameter was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'hyperparameters.lengthscales' has 2 values for 1 parameters (x)"),
              std::string::npos)
        << e.what();
  }
  // Values the kernel cannot take are refused by make_strategy, naming the option (before: the
  // initial design ran, then "kernel: lengthscales must be positive and finite").
  expect_refused({
      {"ei", "{fit_hyperparameters: false, hyperparameters: {lengthscales: [-0.2], outputscale: 1, noise_variance: 0.01}}",
       "'hyperparameters.lengthscales' must hold finite numbers > 0 (got -0.2)"},
      {"ucb", "{fit_hyperparameters: false, hyperparameters: {lengthscales: [0.2], outputscale: .inf, noise_variance: 0.01}}",
       "'hyperparameters.outputscale' must be a finite number > 0 (got .inf)"},
      {"ucb", "{fit_hyperparameters: false, hyperparameters: {lengthscales: [0.2], outputscale: 1, noise_variance: 0}}",
       "'hyperparameters.noise_variance' must be a finite number > 0 (got 0)"},
  });
  // One lengthscale: the model is built after the initial design (3 points) and asks go on.
  const YAML::Node one = YAML::Load(
      "{fit_hyperparameters: false, hyperparameters: {lengthscales: [0.2], outputscale: 1, noise_variance: 0.01}}");
  Study study(space, make_strategy("ei", one), {.max_trials = 6});
  while (auto s = study.ask()) study.tell(s->id, std::sin(6 * std::get<double>(s->config.at("x"))));
  EXPECT_EQ(study.trials().size(), 6u);
}

double objective(const Suggestion& s) {
  const double x = std::get<double>(s.config.at("x")), y = std::get<double>(s.config.at("y"));
  return (x - 0.3) * (x - 0.3) + (y + 0.2) * (y + 0.2) + 1.0 / *s.resolution_value;
}

// Strategies that propose full runs only, under a cost budget: the study stops before a run that
// does not fit, and the strategy is left as if that ask had not proposed anything. Before, gpoo's
// refused proposal stayed in its state as a round of a trial that was never made:
// recommendation() threw "strategy state refers to trial 11, which the study does not hold" (the
// saved study, which holds only real rounds, loaded and recommended).
TEST(StudyApiDogfood, AStudyStoppedByItsCostBudgetKeepsAConsistentStrategy) {
  const Space space({Parameter::floating("x", -1, 1), Parameter::floating("y", -1, 1)});
  const std::filesystem::path dir = std::filesystem::path(TUNE_TEST_TMPDIR) / "study_api_dogfood";
  std::filesystem::create_directories(dir);
  for (const std::string name : {"gpoo", "bnb", "ei", "random"}) {
    SCOPED_TRACE(name);
    StudyOptions options{.seed = 1};
    options.resolution = Resolution{"epochs", {1, 3, 9}, {1, 3, 9}};
    options.cost_budget = 100;
    Study study(space, make_strategy(name), options);
    while (auto s = study.ask()) study.tell(s->id, objective(*s));
    // 11 full runs of cost 9 fit 100; the 12th does not.
    EXPECT_EQ(study.trials().size(), 11u);
    EXPECT_TRUE(study.finished());
    EXPECT_TRUE(study.stopped_for_cost_budget()) << study.stop_reason();

    // The same eleven trials without a budget: the same recommendation, bit for bit.
    StudyOptions unbudgeted{.seed = 1, .max_trials = 11};
    unbudgeted.resolution = options.resolution;
    Study reference(space, make_strategy(name), unbudgeted);
    while (auto s = reference.ask()) reference.tell(s->id, objective(*s));
    ASSERT_EQ(reference.trials().size(), 11u);
    for (std::size_t i = 0; i < 11; ++i) EXPECT_EQ(reference.trials()[i].config, study.trials()[i].config) << i;
    const std::optional<StudyRecommendation> r = study.recommendation(), ref = reference.recommendation();
    ASSERT_EQ(r.has_value(), ref.has_value());
    if (r) {
      EXPECT_EQ(r->config, ref->config);
      EXPECT_EQ(r->mean, ref->mean);
    }

    // Saved and loaded, raised and continued: the loaded study asks what the one in memory asks.
    const std::filesystem::path file = dir / (name + ".yaml");
    study.save(file);
    Study loaded = Study::load(file);
    study.raise_cost_budget(150);
    loaded.raise_cost_budget(150);
    for (;;) {
      const std::optional<Suggestion> a = study.ask(), b = loaded.ask();
      ASSERT_EQ(a.has_value(), b.has_value());
      if (!a) break;
      EXPECT_EQ(a->config, b->config);
      study.tell(a->id, objective(*a));
      loaded.tell(b->id, objective(*b));
    }
    EXPECT_EQ(study.trials().size(), 16u);  // 5 more runs of 9 fit the 50 added
    EXPECT_NO_THROW((void)study.recommendation());
  }
}

// A study whose strategy has stopped still runs what the user enqueues afterwards. Before, enqueue
// accepted it and ask() returned nothing: the configuration never ran, and nothing said so.
TEST(StudyApiDogfood, AConfigurationEnqueuedAfterTheStrategyStoppedIsHandedOut) {
  const Space space({Parameter::integer("a", 0, 2)});
  Study study(space, make_strategy("ei", YAML::Load("{repeat_configurations: false}")));
  while (auto s = study.ask()) study.tell(s->id, static_cast<double>(std::get<std::int64_t>(s->config.at("a"))));
  ASSERT_EQ(study.trials().size(), 3u);  // every configuration of the space has run
  ASSERT_TRUE(study.finished());
  const std::string reason = study.stop_reason();

  const Config again{{"a", std::int64_t{1}}};
  study.enqueue(again);
  const std::optional<Suggestion> s = study.ask();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->config, again);
  EXPECT_EQ(study.trial(s->id).source, "enqueued");
  EXPECT_FALSE(study.finished());  // a trial is pending
  study.tell(s->id, 1.5);
  EXPECT_FALSE(study.ask().has_value());  // the strategy has still nothing to propose
  EXPECT_TRUE(study.finished());
  EXPECT_EQ(study.stop_reason(), reason);

  // A spent trial budget is not lifted by a queue.
  Study capped(space, make_strategy("random"), {.max_trials = 1});
  const std::optional<Suggestion> first = capped.ask();
  capped.tell(first->id, 0.0);
  EXPECT_FALSE(capped.ask().has_value());
  capped.enqueue(again);
  EXPECT_FALSE(capped.ask().has_value());
  EXPECT_EQ(capped.trials().size(), 1u);
}

// enqueue() accepts 2.0 for an integer parameter and 1 for a float one; the trial must hold them as
// every trial does (std::int64_t, double). Before, it was handed out as given: the program's
// std::get<std::int64_t> threw std::bad_variant_access, and after save() / load() the trial's
// configuration held the other type, so the loaded study's trials differed from the saved ones.
TEST(StudyApiDogfood, AnEnqueuedConfigurationHoldsTheSpacesTypes) {
  const Space space({Parameter::integer("n", 1, 8), Parameter::floating("x", 0.5, 4, Scale::log)});
  Study study(space, make_strategy("ei"), {.seed = 2});
  study.enqueue({{"n", 2.0}, {"x", std::int64_t{3}}});
  const std::optional<Suggestion> s = study.ask();
  ASSERT_TRUE(s.has_value());
  ASSERT_TRUE(std::holds_alternative<std::int64_t>(s->config.at("n")));
  ASSERT_TRUE(std::holds_alternative<double>(s->config.at("x")));
  EXPECT_EQ(std::get<std::int64_t>(s->config.at("n")), 2);
  EXPECT_EQ(std::get<double>(s->config.at("x")), 3.0);
  study.tell(s->id, 1.0);

  const std::filesystem::path file = std::filesystem::path(TUNE_TEST_TMPDIR) / "study_api_dogfood_enqueued.yaml";
  std::filesystem::create_directories(file.parent_path());
  study.save(file);
  const Study loaded = Study::load(file);
  EXPECT_EQ(loaded.trials().at(0).config, study.trials().at(0).config);
}

// minimize() records an objective's out-of-range value as what it is. Before, tell()'s refusal was
// caught as if the objective had thrown: "the objective threw: tell: trial 1 has the value 1e+200".
TEST(StudyApiDogfood, MinimizeSaysTheObjectiveReturnedAValueBeyondTheLimit) {
  const Space space({Parameter::floating("x", -1, 1)});
  const MinimizeResult r = minimize(
      [](const Config& c) {
        const double x = std::get<double>(c.at("x"));
        return x > 0.5 ? 1e200 : x * x;
      },
      space, {.evaluations = 12});
  std::size_t failed = 0;
  for (const Trial& t : r.history) {
    const bool beyond = std::get<double>(t.config.at("x")) > 0.5;
    EXPECT_EQ(t.status == TrialStatus::failed, beyond) << t.id;
    if (t.status != TrialStatus::failed) continue;
    ++failed;
    EXPECT_EQ(t.failure_reason, "the objective returned 1e+200, beyond the +-1e+100 the models can compute with");
  }
  EXPECT_GT(failed, 0u);  // the initial design alone puts points beyond 0.5
}

// The README: one Study per thread is safe (the engine has no shared mutable state but its own
// locked caches); each gives what it gives alone.
TEST(StudyApiDogfood, StudiesOnSeparateThreadsGiveWhatTheyGiveAlone) {
  const auto run = [](const std::string& name) {
    const Space space({Parameter::floating("x", -2, 2), Parameter::floating("y", -2, 2)});
    StudyOptions options{.seed = 4, .max_trials = 14};
    if (name == "cmets") options.resolution = Resolution{"epochs", {1, 3}, {1, 3}};
    Study study(space, make_strategy(name), options);
    std::vector<Config> configs;
    while (auto s = study.ask()) {
      configs.push_back(s->config);
      const double x = std::get<double>(s->config.at("x")), y = std::get<double>(s->config.at("y"));
      study.tell(s->id, std::sin(3 * x) * std::cos(2 * y) + (s->level ? 0.1 * double(1 - *s->level) : 0.0));
    }
    return configs;
  };
  const std::vector<std::string> names = {"ei", "cmets", "gpoo", "bnb"};
  std::vector<std::vector<Config>> alone, together(names.size());
  for (const std::string& name : names) alone.push_back(run(name));
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < names.size(); ++i) threads.emplace_back([&, i] { together[i] = run(names[i]); });
  for (std::thread& t : threads) t.join();
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(alone[i], together[i]) << names[i];
}

}  // namespace
}  // namespace tune

// A tell or fail of a trial that does not exist (or is no longer pending) names the trial, whatever
// the value or cost: before, tell(99, NaN) said "trial 99 has a non-finite value".
TEST(StudyApiDogfood, AWrongTrialIdIsReportedBeforeAWrongValue) {
  tune::Study study(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy("random"));
  const std::uint64_t id = study.ask()->id;
  study.tell(id, 0.5);
  const auto message = [](const auto& call) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(message([&] { study.tell(99, nan); }), "tell: no trial with id 99");
  EXPECT_EQ(message([&] { study.tell(id, nan); }), "tell: trial 0 is already complete");
  EXPECT_EQ(message([&] { study.fail(99, "oom", -1.0); }), "fail: no trial with id 99");
  // A pending trial's bad value is still the value's fault, and leaves the trial pending.
  const std::uint64_t next = study.ask()->id;
  EXPECT_NE(message([&] { study.tell(next, nan); }).find("non-finite value"), std::string::npos);
  EXPECT_EQ(study.trial(next).status, tune::TrialStatus::pending);
}

// minimize() with nothing to evaluate is refused; with every evaluation failed, best_value is NaN
// (it was 0, a plausible objective value).
TEST(StudyApiDogfood, MinimizeRefusesZeroEvaluationsAndHasNoBestValueWithoutASuccess) {
  const tune::Space space({tune::Parameter::floating("x", 0, 1)});
  EXPECT_THROW(tune::minimize([](const tune::Config&) { return 1.0; }, space, {.evaluations = 0}),
               std::invalid_argument);
  const tune::MinimizeResult r = tune::minimize(
      [](const tune::Config&) -> double { throw std::runtime_error("diverged"); }, space,
      {.evaluations = 3, .strategy = "random"});
  EXPECT_EQ(r.evaluations, 3u);
  EXPECT_TRUE(std::isnan(r.best_value));
  EXPECT_EQ(r.stop_reason, "no evaluation succeeded");
}
