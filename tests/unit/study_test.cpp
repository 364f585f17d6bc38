// Study: ask/tell bookkeeping, distinct pending suggestions, save/load that resumes to the very same
// next suggestion, refusal of damaged files, and minimize().
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tune/io/yaml_values.hpp"
#include "tune/tune.hpp"

namespace {

using tune::Study;

std::filesystem::path temp_file(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(TUNE_TEST_TMPDIR) / "study";
  std::filesystem::create_directories(dir);
  return dir / name;
}

tune::Space mixed_space() {
  return tune::Space({tune::Parameter::floating("x", -5, 10), tune::Parameter::floating("lr", 1e-4, 1, tune::Scale::log),
                      tune::Parameter::integer("layers", 1, 8), tune::Parameter::categorical("act", {"relu", "tanh", "gelu"})});
}

// A smooth objective of the mixed space, with a categorical effect.
double objective(const tune::Config& c) {
  const double x = std::get<double>(c.at("x"));
  const double lr = std::log10(std::get<double>(c.at("lr")));
  const double layers = static_cast<double>(std::get<std::int64_t>(c.at("layers")));
  const std::string act = std::get<std::string>(c.at("act"));
  return std::pow(x - 2.0, 2) / 10 + std::pow(lr + 2, 2) + std::pow(layers - 3, 2) / 8 + (act == "tanh" ? 0.0 : 0.5);
}

std::unique_ptr<tune::Strategy> strategy_named(const std::string& name) {
  tune::GpBanditOptions o;
  o.optimizer.candidates = 256;
  if (name == "ucb-eps-literal") {
    // UCB keeps moving after a rejection (beta_t grows with the skipped steps); literal EI would
    // repeat its rejected point forever. The objective is noise-free: with the noise at its usual
    // floor only a repeat fails the information test, so the floor is raised to where UCB's points
    // near the data fail it.
    o.epsilon = 0.1;
    o.fit.noise_min = 0.15;
    o.on_reject = tune::RejectPolicy::literal;
    o.max_skipped_steps = 30;
    return tune::make_gp_bandit(tune::AcquisitionType::ucb, o);
  }
  if (name == "ucb-eps-no-add") {
    o.epsilon = 0.2;
    o.on_reject = tune::RejectPolicy::evaluate_no_add;
    return tune::make_gp_bandit(tune::AcquisitionType::ucb, o);
  }
  if (name == "ucb" || name == "ei") return tune::make_gp_bandit(tune::acquisition_type_from_string(name), o);
  return tune::make_strategy(name);
}

// Runs `steps` rounds of: ask two, tell the first, fail every fifth, tell the second. Records each
// suggested point, or the stop reason when the strategy has nothing to propose (the literal policy
// may give up), so that two runs can be compared step by step.
void drive(Study& study, int steps, std::vector<std::string>& log) {
  for (int i = 0; i < steps; ++i) {
    const auto a = study.ask();
    const auto b = study.ask();
    for (const auto& s : {a, b}) {
      if (!s) {
        log.push_back("stop: " + study.stop_reason());
        continue;
      }
      std::ostringstream u;
      u.precision(17);
      u << study.trial(s->id).unit.transpose();
      log.push_back(u.str());
    }
    if (a) study.tell(a->id, objective(a->config));
    if (b && b->id % 5 == 0) study.fail(b->id, "simulated crash");
    else if (b) study.tell(b->id, objective(b->config));
  }
}

std::size_t skipped_steps(const Study& study) {
  const auto* bandit = dynamic_cast<const tune::GpBandit*>(&study.strategy());
  return bandit ? bandit->skipped_steps().size() : 0;
}

class StudyResume : public ::testing::TestWithParam<std::string> {};

TEST_P(StudyResume, LoadedStudyMakesTheSameSuggestionsAsTheUnsavedOne) {
  const tune::Space space = mixed_space();
  std::size_t skipped_at_save = 0;
  for (int split : {2, 9, 16}) {
    Study original(space, strategy_named(GetParam()), {tune::Direction::minimize, 42});
    std::vector<std::string> prefix;
    drive(original, split, prefix);
    const auto pending = original.ask();  // pending at save time
    skipped_at_save += skipped_steps(original);
    const auto path = temp_file(GetParam() + "-" + std::to_string(split) + ".yaml");
    original.save(path);
    Study loaded = Study::load(path);
    ASSERT_EQ(loaded.trials().size(), original.trials().size());
    EXPECT_EQ(loaded.to_yaml_string(), original.to_yaml_string());

    if (pending) {
      original.tell(pending->id, objective(pending->config));
      loaded.tell(pending->id, objective(pending->config));
    }
    std::vector<std::string> a, b;
    drive(original, 6, a);
    drive(loaded, 6, b);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << GetParam() << " split " << split << " step " << i;
    EXPECT_EQ(loaded.to_yaml_string(), original.to_yaml_string());
  }
  if (GetParam() == "ucb-eps-literal") {
    EXPECT_GT(skipped_at_save, 0u) << "the literal policy never skipped a step";
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, StudyResume,
                         ::testing::Values("random", "sobol", "ucb", "ei", "ucb-eps-literal", "ucb-eps-no-add"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string n = param.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(Study, PendingSuggestionsAreDistinct) {
  for (const std::string name : {"ucb", "ei", "random", "sobol"}) {
    Study study(mixed_space(), strategy_named(name), {tune::Direction::minimize, 3});
    for (int i = 0; i < 12; ++i) {  // through the initial design and into the model phase
      const auto s = study.ask();
      ASSERT_TRUE(s);
      if (i % 3 == 0) study.tell(s->id, objective(s->config));
    }
    std::set<std::vector<double>> seen;
    for (const tune::Trial& t : study.trials())
      if (t.status == tune::TrialStatus::pending) {
        EXPECT_TRUE(seen.insert(std::vector<double>(t.unit.data(), t.unit.data() + t.unit.size())).second) << name;
      }
  }
}

TEST(Study, DiscreteSpaceHandsOutEveryPointOnceWhilePending) {
  const tune::Space grid({tune::Parameter::integer("a", 1, 3), tune::Parameter::categorical("b", {"p", "q"})});
  Study study(grid, strategy_named("ei"), {tune::Direction::maximize, 5});
  std::set<std::string> seen;
  for (int i = 0; i < 6; ++i) {
    const auto s = study.ask();
    ASSERT_TRUE(s) << "ask " << i << ": " << study.stop_reason();
    EXPECT_TRUE(seen.insert(tune::to_string(s->config.at("a")) + "/" + std::get<std::string>(s->config.at("b"))).second);
  }
  EXPECT_FALSE(study.ask());  // all six points are pending
  EXPECT_FALSE(study.finished());
  EXPECT_FALSE(study.stop_reason().empty());
}

TEST(Study, WithoutRepeatsEveryConfigurationRunsOnceAndTheStudyEnds) {
  // 5 x 3 x 2 = 30 configurations, a minimum at {3, q, 0.5}; 40 asks of each bandit, the runs at
  // a = 1 fail (a failed configuration is not retried either) and one suggestion is left pending
  // across each ask.
  const tune::Space grid({tune::Parameter::integer("a", 1, 5), tune::Parameter::categorical("b", {"p", "q", "r"}),
                          tune::Parameter::ordinal("c", {"0.5", "2"})});
  const auto value = [](const tune::Config& c) {
    const double a = static_cast<double>(std::get<std::int64_t>(c.at("a")));
    return std::pow(a - 3, 2) + (std::get<std::string>(c.at("b")) == "q" ? 0.0 : 1.0) +
           (std::get<std::string>(c.at("c")) == "0.5" ? 0.0 : 0.5);
  };
  for (const auto type : {tune::AcquisitionType::ei, tune::AcquisitionType::ucb}) {
    const auto strategy = [&](bool repeats) {
      tune::GpBanditOptions o;
      o.optimizer.candidates = 256;
      o.repeat_configurations = repeats;
      return tune::make_gp_bandit(type, o);
    };
    Study study(grid, strategy(false), {tune::Direction::minimize, 7});
    std::set<std::string> seen;
    std::vector<tune::Suggestion> held;  // at most one
    for (int i = 0; i < 40; ++i) {
      const auto s = study.ask();
      if (!s) break;
      EXPECT_TRUE(seen.insert(tune::to_string(s->config)).second) << tune::to_string(s->config) << " ran twice";
      for (const auto& h : held) study.tell(h.id, value(h.config));
      held.clear();
      if (std::get<std::int64_t>(s->config.at("a")) == 1) study.fail(s->id, "simulated crash");
      else held.push_back(*s);
    }
    for (const auto& h : held) study.tell(h.id, value(h.config));
    EXPECT_EQ(seen.size(), 30u) << tune::to_string(type);
    EXPECT_FALSE(study.ask());
    EXPECT_NE(study.stop_reason().find("every configuration of the space has run"), std::string::npos)
        << study.stop_reason();
    ASSERT_TRUE(study.best());
    EXPECT_EQ(study.best()->value, 0.0);

    // The same study with repeats allowed (the default) spends all 40 asks.
    Study repeating(grid, strategy(true), {tune::Direction::minimize, 7});
    std::set<std::string> distinct;
    for (int i = 0; i < 40; ++i) {
      const auto s = repeating.ask();
      ASSERT_TRUE(s) << repeating.stop_reason();
      distinct.insert(tune::to_string(s->config));
      repeating.tell(s->id, value(s->config));
    }
    EXPECT_LT(distinct.size(), 40u);
  }
}

TEST(Study, MaxTrialsEndsTheLoopAndSurvivesASave) {
  // The README's loop, `while (auto s = study.ask())`, ends after max_trials trials, failed ones
  // counted; the study is finished only once none is pending; a saved and loaded study keeps the limit.
  tune::StudyOptions options{.direction = tune::Direction::minimize, .seed = 4};
  options.max_trials = 7;
  Study study(mixed_space(), strategy_named("ei"), options);
  std::vector<tune::Suggestion> held;
  std::size_t asked = 0;
  while (auto s = study.ask()) {
    ++asked;
    if (asked == 3) study.fail(s->id, "diverged");
    else if (asked >= 6) held.push_back(*s);  // the last two stay pending
    else study.tell(s->id, objective(s->config));
  }
  EXPECT_EQ(asked, 7u);
  EXPECT_EQ(study.stop_reason(), "the trial budget of 7 is spent");
  EXPECT_FALSE(study.finished());
  Study loaded = Study::from_yaml_string(study.to_yaml_string(), "test");
  EXPECT_FALSE(loaded.ask());
  for (const auto& h : held) {
    study.tell(h.id, objective(h.config));
    loaded.tell(h.id, objective(h.config));
  }
  EXPECT_FALSE(study.ask());
  EXPECT_TRUE(study.finished());
  EXPECT_FALSE(loaded.ask());
  EXPECT_TRUE(loaded.finished());
  EXPECT_EQ(loaded.trials().size(), 7u);
  options.max_trials = 0;
  EXPECT_THROW(Study(mixed_space(), strategy_named("ei"), options), std::invalid_argument);
}

TEST(Study, TellAndFailBookkeeping) {
  Study study(mixed_space(), strategy_named("random"), {tune::Direction::maximize, 1});
  const auto a = study.ask();
  const auto b = study.ask();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(study.pending_count(), 2u);
  EXPECT_THROW(study.tell(99, 1.0), std::invalid_argument);
  EXPECT_THROW(study.tell(a->id, std::nan("")), std::invalid_argument);
  study.tell(a->id, 1.0);
  EXPECT_THROW(study.tell(a->id, 2.0), std::invalid_argument);
  study.fail(b->id, "out of memory");
  EXPECT_THROW(study.fail(b->id, "again"), std::invalid_argument);
  EXPECT_EQ(study.trial(b->id).failure_reason, "out of memory");
  EXPECT_EQ(study.pending_count(), 0u);
  const auto c = study.ask();
  study.tell(c->id, 3.0);
  ASSERT_NE(study.best(), nullptr);
  EXPECT_EQ(study.best()->id, c->id);  // maximising
}

TEST(Study, ConfigDecodesTheUnitPoint) {
  Study study(mixed_space(), strategy_named("ei"), {tune::Direction::minimize, 8});
  for (int i = 0; i < 15; ++i) {
    const auto s = study.ask();
    ASSERT_TRUE(s);
    const tune::Trial& t = study.trial(s->id);
    EXPECT_EQ(study.space().snap(t.unit), t.unit);
    EXPECT_LT((study.space().encode(s->config) - t.unit).cwiseAbs().maxCoeff(), 1e-12);  // floats round-trip to round-off
    study.tell(s->id, objective(s->config));
  }
}

// --- damaged and foreign files --------------------------------------------------------------

std::string saved_text() {
  Study study(mixed_space(), strategy_named("ei"), {tune::Direction::minimize, 4});
  std::vector<std::string> log;
  drive(study, 6, log);
  return study.to_yaml_string();
}

std::string load_error(const std::string& text) {
  try {
    Study::from_yaml_string(text, "state.yaml");
  } catch (const tune::StateError& e) {
    return e.what();
  }
  return "";
}

TEST(StudyFile, RoundTripIsExact) {
  const std::string text = saved_text();
  EXPECT_EQ(Study::from_yaml_string(text, "x").to_yaml_string(), text);
}

TEST(StudyFile, RefusesDamagedOrForeignFiles) {
  const std::string text = saved_text();
  // Truncation in the middle of the trials.
  const std::string truncated = load_error(text.substr(0, text.size() * 2 / 3));
  EXPECT_NE(truncated.find("state.yaml"), std::string::npos) << truncated;
  // Invalid YAML: the position is named.
  const std::string bad_yaml = load_error("kind: tune.study\nschema: [1\n");
  EXPECT_NE(bad_yaml.find("line"), std::string::npos) << bad_yaml;
  // A foreign file.
  EXPECT_NE(load_error("name: something else\n").find("not a tune study"), std::string::npos);
  EXPECT_NE(load_error("").find("not a tune study"), std::string::npos);
  // A newer schema.
  std::string newer = text;
  newer.replace(newer.find("schema: 1"), 9, "schema: 7");
  EXPECT_NE(load_error(newer).find("schema 7"), std::string::npos);
  // A malformed number names the field and its line.
  std::string bad_value = text;
  const std::size_t pos = bad_value.find("value: ");
  const std::size_t line = static_cast<std::size_t>(std::count(bad_value.begin(), bad_value.begin() + static_cast<long>(pos), '\n')) + 1;
  bad_value.replace(pos, bad_value.find_first_of(",}\n", pos) - pos, "value: twelve");
  const std::string bad = load_error(bad_value);
  EXPECT_NE(bad.find("'value'"), std::string::npos) << bad;
  EXPECT_NE(bad.find("line " + std::to_string(line)), std::string::npos) << bad;
  EXPECT_NE(bad.find("twelve"), std::string::npos) << bad;
  // A trial that the strategy's dictionary refers to but that is not complete.
  std::string inconsistent = text;
  const std::size_t st = inconsistent.find("status: complete");
  inconsistent.replace(st, 16, "status: pending ");
  EXPECT_FALSE(load_error(inconsistent).empty());
}

TEST(StudyFile, SaveIsAtomicAndLoadNeverWrites) {
  const auto path = temp_file("atomic.yaml");
  Study study(mixed_space(), strategy_named("sobol"), {tune::Direction::minimize, 1});
  study.save(path);
  const auto s = study.ask();
  study.tell(s->id, 1.0);
  study.save(path);  // replaces the file
  EXPECT_EQ(Study::load(path).trials().size(), 1u);
  for (const auto& entry : std::filesystem::directory_iterator(path.parent_path()))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  // A damaged file is refused and left as it was.
  const auto damaged = temp_file("damaged.yaml");
  { std::ofstream(damaged) << "kind: tune.study\nschema: 1\ndirection: sideways\n"; }
  const auto before = std::filesystem::last_write_time(damaged);
  EXPECT_THROW(Study::load(damaged), tune::StateError);
  EXPECT_EQ(std::filesystem::last_write_time(damaged), before);
  EXPECT_THROW(Study::load(temp_file("does-not-exist.yaml")), tune::StateError);
}

// --- minimize ---------------------------------------------------------------------------------

TEST(Minimize, ReportsTheBestOfTheHistoryAndRecordsFailures) {
  tune::MinimizeOptions o;
  o.evaluations = 25;
  o.strategy = "ei";
  o.gp.optimizer.candidates = 256;
  int calls = 0;
  const auto result = tune::minimize(
      [&](const tune::Config& c) {
        if (++calls % 7 == 0) throw std::runtime_error("diverged");
        if (calls % 11 == 0) return std::nan("");
        return objective(c);
      },
      mixed_space(), o);
  EXPECT_EQ(result.evaluations, 25u);
  EXPECT_EQ(calls, 25);
  ASSERT_EQ(result.history.size(), 25u);
  double best = INFINITY;
  int failed = 0;
  for (const tune::Trial& t : result.history) {
    if (t.status == tune::TrialStatus::complete) best = std::min(best, *t.value);
    if (t.status == tune::TrialStatus::failed) {
      ++failed;
      EXPECT_FALSE(t.failure_reason.empty());
    }
  }
  EXPECT_EQ(failed, 3 + 2);  // calls 7, 14, 21 threw; 11, 22 returned NaN
  EXPECT_EQ(result.best_value, best);
  EXPECT_EQ(objective(result.best_config), best);
}

}  // namespace

namespace strategy_options_test {

TEST(StrategyOptions, YamlRoundTripAndUnknownKeysAreRefused) {
  tune::GpBanditOptions o;
  o.epsilon = 0.03;
  o.on_reject = tune::RejectPolicy::stop;
  o.refit.every = 9;
  o.fit.max_points = 77;
  o.optimizer.local_starts = 1;
  o.fit.fit_noise = false;
  const tune::GpBanditOptions back = tune::gp_bandit_options_from_yaml(tune::to_yaml(o));
  EXPECT_EQ(back.epsilon, 0.03);
  EXPECT_EQ(back.on_reject, tune::RejectPolicy::stop);
  EXPECT_EQ(back.refit.every, 9u);
  EXPECT_EQ(back.fit.max_points, 77u);
  EXPECT_EQ(back.optimizer.local_starts, 1u);
  EXPECT_FALSE(back.fit.fit_noise);

  const auto error = [](const std::string& text) -> std::string {
    try {
      tune::make_strategy("ei", YAML::Load(text));
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error("{epsilonn: 0.1}").find("epsilonn"), std::string::npos);
  EXPECT_NE(error("{fit: {max_point: 3}}").find("max_point"), std::string::npos);
  EXPECT_NE(error("{on_reject: sometimes}").find("sometimes"), std::string::npos);
  EXPECT_NE(error("{epsilon: lots}").find("lots"), std::string::npos);
  EXPECT_NE(error("{acquisition: ucb}").find("acquisition"), std::string::npos);
  EXPECT_EQ(error("{epsilon: 0.1, refit: {every: 3}}"), "");
  EXPECT_THROW(tune::make_strategy("random", YAML::Load("{epsilon: 0.1}")), std::invalid_argument);
  EXPECT_THROW(tune::make_strategy("bayes"), std::invalid_argument);
}

}  // namespace strategy_options_test
