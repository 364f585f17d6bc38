// Study: ask/tell bookkeeping, distinct pending suggestions, save/load that resumes to the very same
// next suggestion, refusal of damaged files, and minimize().
// GCC 12 warns that std::regex's internal std::function "may be used uninitialized" when this file
// is built at -O1 with the sanitizers (the CI's second build), a false positive inside libstdc++;
// the pragma must precede every include, since the warning is placed in <functional>.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

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
  if (name == "ei-eps") {  // next_informative rejections on one-hot inputs
    o.epsilon = 0.2;
    return tune::make_gp_bandit(tune::AcquisitionType::ei, o);
  }
  if (name == "ei-ordered") {
    o.categorical_encoding = tune::CategoricalEncoding::ordered;
    return tune::make_gp_bandit(tune::AcquisitionType::ei, o);
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
      loaded.tell(pending->id, objective(pending->config));  // before the loaded model is built (GpBandit)
      EXPECT_EQ(loaded.to_yaml_string(), original.to_yaml_string());
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
                         ::testing::Values("random", "sobol", "ucb", "ei", "ei-ordered", "ei-eps", "ucb-eps-literal", "ucb-eps-no-add"),
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

// save() keeps the text of finished trials between calls; a trial saved while pending and then told
// or failed must be written anew, and every file must match a fresh formatting of the same study.
TEST(StudyFile, SavingAfterEveryEventWritesWhatAFreshStudyWould) {
  Study study(mixed_space(), strategy_named("ei"), {.seed = 4});
  const std::filesystem::path path = temp_file("every_event.yaml");
  auto fresh_text = [&] { return Study::from_yaml_string(study.to_yaml_string(), "copy").to_yaml_string(); };
  for (int i = 0; i < 12; ++i) {
    const auto a = study.ask();
    ASSERT_TRUE(a.has_value());
    const auto b = study.ask();
    ASSERT_TRUE(b.has_value());
    study.save(path);
    study.tell(a->id, objective(a->config));
    study.save(path);
    std::ifstream in(path);
    std::stringstream told;
    told << in.rdbuf();
    if (i % 3 == 0) study.fail(b->id, "crashed");
    else study.tell(b->id, objective(b->config));
    const Study loaded = Study::load(path);
    EXPECT_EQ(loaded.trial(a->id).status, tune::TrialStatus::complete);
    EXPECT_EQ(loaded.trial(b->id).status, tune::TrialStatus::pending);
    EXPECT_EQ(told.str(), loaded.to_yaml_string());
    study.save(path);
    const Study after = Study::load(path);
    EXPECT_EQ(after.trial(b->id).status, i % 3 == 0 ? tune::TrialStatus::failed : tune::TrialStatus::complete);
    EXPECT_EQ(study.to_yaml_string(), fresh_text());
  }
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
  // A malformed number (a trial's value) names the field and its line.
  std::string bad_value = text;
  const std::size_t pos = bad_value.find("value: ", bad_value.find("trials:"));
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

// The trials come last, one line each: a file cut at a line boundary parses. For random, which keeps
// no state that names its trials, nothing else would notice the missing ones.
TEST(StudyFile, RefusesAFileCutAtALineBoundaryAmongItsTrials) {
  for (const char* name : {"random", "ei"}) {
    Study study(mixed_space(), strategy_named(name), {tune::Direction::minimize, 4});
    std::vector<std::string> log;
    drive(study, 6, log);
    const std::string text = study.to_yaml_string();
    const std::size_t n = study.trials().size();
    ASSERT_GE(n, 3u) << name;
    const std::string count = std::to_string(n);
    const std::size_t first = text.find("\n  - {id: 0,");
    ASSERT_NE(first, std::string::npos) << name;
    int cuts = 0;
    for (std::size_t end = text.find('\n', first + 1); end != std::string::npos && end + 1 < text.size();
         end = text.find('\n', end + 1)) {
      const std::string cut = text.substr(0, end + 1);
      const std::size_t kept = static_cast<std::size_t>(std::count(cut.begin() + static_cast<long>(first), cut.end(), '\n')) - 1;
      const std::string error = load_error(cut);
      EXPECT_NE(error.find(std::to_string(kept) + (kept == 1 ? " trial " : " trials ") + "where the file says " + count),
                std::string::npos)
          << name << ", cut after " << kept << " trials: " << error;
      EXPECT_NE(error.find("cut short"), std::string::npos) << error;
      ++cuts;
    }
    EXPECT_EQ(cuts, static_cast<int>(n) - 1) << name;
    // A file written before trial_count existed loads as it did (and saves with the count).
    std::string legacy = text;
    legacy.erase(legacy.find("trial_count: " + count + "\n"), 14 + count.size());
    EXPECT_EQ(Study::from_yaml_string(legacy, "old.yaml").to_yaml_string(), text) << name;
    // A trial added by hand (its line repeated with the next id) is refused too.
    const std::string last_id = "{id: " + std::to_string(n - 1) + ",";
    std::string added = text + text.substr(text.rfind("\n  - " + last_id) + 1);
    added.replace(added.rfind(last_id), last_id.size(), "{id: " + count + ",");
    EXPECT_NE(load_error(added).find(std::to_string(n + 1) + " trials where the file says " + count), std::string::npos)
        << load_error(added);
  }
  // Cut before its trials: the message says so rather than only that a field is missing.
  const std::string text = saved_text();
  const std::string header = text.substr(0, text.find("trials:\n"));
  EXPECT_NE(load_error(header).find("cut short"), std::string::npos) << load_error(header);
}

// --- semantic damage: what parses but would be misused -------------------------------------------

// Every kind of parameter, so that the unit point of each can be checked against its config.
tune::Space every_kind_space() {
  return tune::Space(
      {tune::Parameter::floating("x", -5, 10), tune::Parameter::floating("lr", 1e-4, 1, tune::Scale::log),
       tune::Parameter::integer("layers", 1, 8), tune::Parameter::integer("width", 8, 512, tune::Scale::log),
       tune::Parameter::categorical("act", {"relu", "tanh", "gelu"}),
       tune::Parameter::ordinal("batch", {"16", "32", "64"})});
}

double every_kind_objective(const tune::Config& c) {
  const double x = std::get<double>(c.at("x"));
  const double lr = std::log10(std::get<double>(c.at("lr")));
  const double layers = static_cast<double>(std::get<std::int64_t>(c.at("layers")));
  const double width = std::log2(static_cast<double>(std::get<std::int64_t>(c.at("width"))));
  return std::pow(x - 2.0, 2) / 10 + std::pow(lr + 2, 2) + std::pow(layers - 3, 2) / 8 + std::pow(width - 6, 2) / 8 +
         (std::get<std::string>(c.at("act")) == "tanh" ? 0.0 : 0.5) +
         (std::get<std::string>(c.at("batch")) == "32" ? 0.0 : 0.3);
}

// A study of every kind of parameter, with optionally a resolution (measured costs, a cost budget):
// `rounds` of ask two, tell the first, fail every fifth, tell the second, then one ask left pending.
Study driven_study(const std::string& strategy, bool with_resolution, int rounds) {
  tune::StudyOptions options{.direction = tune::Direction::minimize, .seed = 5};
  if (with_resolution) {
    options.resolution = tune::Resolution{"epochs", {1, 3, 9}, {}};
    options.cost_budget = 1e6;
  }
  Study study(every_kind_space(), strategy_named(strategy), options);
  for (int i = 0; i < rounds; ++i) {
    const auto a = study.ask();
    const auto b = study.ask();
    const auto cost = [&](const tune::Suggestion& s) {
      return with_resolution ? std::optional<double>(1.0 + static_cast<double>(*s.level)) : std::nullopt;
    };
    if (a) study.tell(a->id, every_kind_objective(a->config), cost(*a));
    if (b && b->id % 5 == 0) study.fail(b->id, "simulated crash", cost(*b));
    else if (b) study.tell(b->id, every_kind_objective(b->config), cost(*b));
  }
  (void)study.ask();  // pending at save time
  return study;
}

// A saved study's text with one trial's line edited (`pattern` replaced by `replacement` on it), and
// that line's number.
struct EditedStudy {
  std::string text;
  int line = 0;
};

EditedStudy edit_trial(const std::string& text, std::uint64_t id, const std::string& pattern,
                       const std::string& replacement) {
  const std::size_t start = text.find("\n  - {id: " + std::to_string(id) + ",") + 1;
  EXPECT_NE(start, 0u) << "no trial " << id;
  const std::size_t end = text.find('\n', start);
  const std::string line = text.substr(start, end - start);
  const std::string edited =
      std::regex_replace(line, std::regex(pattern), replacement, std::regex_constants::format_first_only);
  EXPECT_NE(edited, line) << "'" << pattern << "' is not on the line of trial " << id << ": " << line;
  return {text.substr(0, start) + edited + text.substr(end),
          static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(start), '\n')) + 1};
}

// The value of `name` in trial `id`'s config as written, e.g. "3" or "relu".
std::string config_text(const std::string& text, std::uint64_t id, const std::string& name) {
  const std::size_t config = text.find("config: {", text.find("\n  - {id: " + std::to_string(id) + ","));
  const std::size_t first = text.find("{" + name + ": ", config), later = text.find(" " + name + ": ", config);
  const std::size_t at = std::min(first, later) + name.size() + 3;
  return text.substr(at, text.find_first_of(",}", at) - at);
}

// The `index`-th coordinate of trial `id`'s unit point as written.
double unit_coordinate(const std::string& text, std::uint64_t id, std::size_t index) {
  const std::size_t start = text.find("\n  - {id: " + std::to_string(id) + ",");
  std::size_t at = text.find("unit: [", start) + 7;
  for (std::size_t i = 0; i < index; ++i) at = text.find(", ", at) + 2;
  return std::stod(text.substr(at, text.find_first_of(",]", at) - at));
}

// Replaces the `index`-th coordinate of trial `id`'s unit point.
std::string with_unit_coordinate(const std::string& text, std::uint64_t id, std::size_t index, double value) {
  std::string pattern = R"(unit: \[)";
  for (std::size_t i = 0; i < index; ++i) pattern += R"([^,\]]+, )";
  std::string keep = pattern;
  pattern = "(" + keep + R"()[^,\]]+)";
  return edit_trial(text, id, pattern, "$01" + tune::format_double(value)).text;  // $01: a digit follows
}

TEST(StudyFile, EveryStrategySavesStudiesItLoadsBack) {
  // Failed and pending trials, every kind of parameter, and levels and costs where the strategy uses
  // a resolution: the checks of a loaded file must accept everything the writer writes.
  const std::vector<std::pair<std::string, bool>> cases{{"random", false}, {"sobol", false}, {"ucb", false},
                                                        {"ei", false},     {"gpoo", false},  {"bnb", false},
                                                        {"ei", true},      {"cmets", true},  {"cmes", true}};
  for (const auto& [strategy, with_resolution] : cases) {
    const Study study = driven_study(strategy, with_resolution, 10);
    ASSERT_GE(study.trials().size(), 15u) << strategy;
    ASSERT_GE(study.pending_count(), 1u) << strategy;
    const std::string text = study.to_yaml_string();
    ASSERT_NE(text.find("status: failed"), std::string::npos) << strategy;
    std::string loaded;
    try {
      loaded = Study::from_yaml_string(text, "saved.yaml").to_yaml_string();
    } catch (const tune::StateError& e) {
      FAIL() << strategy << (with_resolution ? " with a resolution" : "") << ": " << e.what();
    }
    EXPECT_EQ(loaded, text) << strategy;
  }
}

TEST(StudyFile, RefusesNonFiniteOrOutOfRangeNumbersOfATrialNamingItsLineAndTheFix) {
  const std::string text = driven_study("ei", true, 4).to_yaml_string();
  ASSERT_NE(Study::from_yaml_string(text, "x").trial(2).status, tune::TrialStatus::pending);
  struct Case {
    std::uint64_t trial;
    std::string pattern, replacement, field, fix;
  };
  const std::vector<Case> cases{
      {0, "value: [^,}]+", "value: .nan", "'value'", "mark the trial failed"},
      {0, "value: [^,}]+", "value: .inf", "'value'", "mark the trial failed"},
      {2, "value: [^,}]+", "value: -.inf", "'value'", "mark the trial failed"},
      {0, "cost: [^,}]+", "cost: .nan", "'cost'", "remove 'cost'"},
      {0, "cost: [^,}]+", "cost: -1", "'cost'", "remove 'cost'"},
      {0, R"(unit: \[[^,]+)", "unit: [.nan", "'unit'", "restore the point"},
      {0, R"(unit: \[[^,]+)", "unit: [1.5", "'unit'", "restore the point"},
      {0, "level: [0-9]+", "level: 3", "'level'", "restore the level"},
  };
  for (const Case& c : cases) {
    const EditedStudy damaged = edit_trial(text, c.trial, c.pattern, c.replacement);
    const std::string error = load_error(damaged.text);
    EXPECT_NE(error.find("state.yaml"), std::string::npos) << c.replacement << ": " << error;
    EXPECT_NE(error.find("trial " + std::to_string(c.trial) + ", field " + c.field), std::string::npos)
        << c.replacement << ": " << error;
    EXPECT_NE(error.find("at line " + std::to_string(damaged.line) + ","), std::string::npos)
        << c.replacement << ": " << error;
    EXPECT_NE(error.find(c.fix), std::string::npos) << c.replacement << ": " << error;
  }
  // A level without a resolution, and no level with one.
  const std::string plain = driven_study("ei", false, 2).to_yaml_string();
  EXPECT_NE(load_error(edit_trial(plain, 0, "source:", "level: 0, source:").text).find("no resolution"),
            std::string::npos);
  EXPECT_NE(load_error(edit_trial(text, 0, "level: [0-9]+, ", "").text).find("has no 'level'"), std::string::npos);
  // A value on a trial that has none.
  const std::string pending = load_error(edit_trial(plain, 4, "source:", "value: 1, source:").text);
  EXPECT_NE(pending.find("a pending trial has no value"), std::string::npos) << pending;
  // The budget and the ask count, beside the trials.
  std::string budget = text;
  budget = std::regex_replace(budget, std::regex("cost_budget: [^\n]+"), "cost_budget: .nan");
  EXPECT_NE(load_error(budget).find("'cost_budget'"), std::string::npos);
  std::string asks = text;
  asks.replace(asks.find("ask_count: "), 13, "ask_count: 3\n");
  const std::string ask_error = load_error(asks);
  EXPECT_NE(ask_error.find("'ask_count' at line 5"), std::string::npos) << ask_error;
}

TEST(StudyFile, RefusesAResultTheModelNeverTookIn) {
  // A pending or failed trial marked complete by hand loaded, and its value never reached the model
  // (the check went from the model's list to the trials only). ei keeps its results in `dictionary`,
  // cmets in `in_model`.
  for (const auto& [strategy, with_resolution, field] :
       std::vector<std::tuple<std::string, bool, std::string>>{{"ei", false, "dictionary"}, {"cmets", true, "in_model"}}) {
    const Study study = driven_study(strategy, with_resolution, 10);
    const std::string text = study.to_yaml_string();
    ASSERT_NO_THROW((void)Study::from_yaml_string(text, "x")) << strategy;
    const auto failed_trial = std::find_if(study.trials().begin(), study.trials().end(),
                                           [](const tune::Trial& t) { return t.status == tune::TrialStatus::failed; });
    ASSERT_NE(failed_trial, study.trials().end()) << strategy;
    const std::uint64_t pending = study.trials().back().id, failed = failed_trial->id;
    ASSERT_EQ(study.trial(pending).status, tune::TrialStatus::pending) << strategy;
    const std::string completed_pending =
        edit_trial(edit_trial(text, pending, "status: pending", "status: complete").text, pending, "source:",
                   "value: 0.25, source:")
            .text;
    const std::string completed_failed =
        edit_trial(edit_trial(text, failed, "status: failed", "status: complete").text, failed,
                   "failure_reason: [^,]+,", "value: 0.25,")
            .text;
    for (const auto& [edited, id] : {std::pair{completed_pending, pending}, std::pair{completed_failed, failed}}) {
      const std::string error = load_error(edited);
      EXPECT_NE(error.find("trial " + std::to_string(id) + " is complete, and its value is not in the model (field '" +
                           field + "' at line "),
                std::string::npos)
          << strategy << ": " << error;
      EXPECT_NE(error.find("put the trial's status back as it was"), std::string::npos) << error;
    }
    // The same result listed twice.
    const std::size_t list = text.find(field + ": [");
    ASSERT_NE(list, std::string::npos) << strategy;
    std::string twice = text;
    twice.replace(list + field.size() + 3, 1, "1");  // "[0, 1, ..." becomes "[1, 1, ..."
    const std::string error = load_error(twice);
    EXPECT_NE(error.find("trial 1 is listed twice"), std::string::npos) << strategy << ": " << error;
  }
}

TEST(StudyFile, RefusesATrialWhoseConfigIsNotAPointOfTheSpace) {
  const std::string text = driven_study("ei", false, 3).to_yaml_string();
  struct Case {
    std::string pattern, replacement, fragment;
  };
  const std::vector<Case> cases{
      {"layers: [0-9]+, ", "", "parameter 'layers' is missing"},
      {"x: [^,}]+", "x: 99", "parameter 'x': value 99 is outside the range [-5, 10]"},
      {"lr: [^,}]+", "lr: 0", "parameter 'lr': value 0 is outside the range"},
      {"width: [0-9]+", "width: 7", "parameter 'width': value 7 is outside the range [8, 512]"},
      {"act: [a-z]+", "act: sigmoid", "parameter 'act': value 'sigmoid' is not one of the choices"},
      {"batch: [0-9]+", "batch: 48", "parameter 'batch': value '48' is not one of the choices"},
  };
  for (const Case& c : cases) {
    const EditedStudy damaged = edit_trial(text, 1, c.pattern, c.replacement);
    const std::string error = load_error(damaged.text);
    EXPECT_NE(error.find("trial 1, field 'config' at line " + std::to_string(damaged.line) + ","), std::string::npos)
        << error;
    EXPECT_NE(error.find(c.fragment), std::string::npos) << error;
    // The fix: the unit point, intact, says what the config held.
    EXPECT_NE(error.find("is the configuration {act: " + config_text(text, 1, "act")), std::string::npos) << error;
  }
}

TEST(StudyFile, RefusesAUnitPointThatIsAnotherConfiguration) {
  const std::string text = driven_study("ei", false, 3).to_yaml_string();
  const Study study = Study::from_yaml_string(text, "x");
  // Trial 1's unit point on trial 0's line.
  std::string swapped = text;
  const std::size_t line0 = swapped.find("\n  - {id: 0,");
  const std::size_t from = swapped.find("unit: [", line0), to = swapped.find(']', from) + 1;
  const std::size_t line1 = text.find("\n  - {id: 1,");
  const std::size_t from1 = text.find("unit: [", line1), to1 = text.find(']', from1) + 1;
  swapped.replace(from, to - from, text.substr(from1, to1 - from1));
  const std::string error = load_error(swapped);
  EXPECT_NE(error.find("trial 0, field 'unit' at line"), std::string::npos) << error;
  EXPECT_NE(error.find("is the configuration " + tune::to_string(study.trial(1).config)), std::string::npos) << error;
  EXPECT_NE(error.find("not the trial's config " + tune::to_string(study.trial(0).config)), std::string::npos) << error;
  // Too few coordinates.
  EXPECT_NE(load_error(edit_trial(text, 0, R"(unit: \[[^,]+, )", "unit: [").text)
                .find("5 coordinates for a 6-parameter space"),
            std::string::npos);
}

TEST(StudyFile, AUnitPointAgreesWithItsConfigWithinItsCellOrToRoundOff) {
  // A float agrees to 1e-9 of its range (linear) or of itself (log); a discrete value wherever its
  // unit coordinate lies in the value's cell, or within 1e-9 of it. Cells are computed here from
  // their definition: k equal cells of [0, 1] for a linear integer of k values.
  const std::string text = driven_study("random", false, 2).to_yaml_string();
  const auto loads = [](const std::string& t) { return load_error(t).empty(); };
  ASSERT_TRUE(loads(text));
  const double x = std::stod(config_text(text, 0, "x"));
  const auto with_x = [&](double v) { return edit_trial(text, 0, "x: [^,}]+", "x: " + tune::format_double(v)).text; };
  EXPECT_TRUE(loads(with_x(x + 15 * 1e-12)));  // round-off
  EXPECT_FALSE(loads(with_x(x + 15 * 1e-6)));  // an edit
  const double lr = std::stod(config_text(text, 0, "lr"));
  const auto with_lr = [&](double v) {
    return edit_trial(text, 0, "lr: [^,}]+", "lr: " + tune::format_double(v)).text;
  };
  EXPECT_TRUE(loads(with_lr(lr * (1 + 1e-12))));
  EXPECT_FALSE(loads(with_lr(lr * (1 + 1e-6))));

  // layers (coordinate 2): value v in 1..8 has the cell [(v - 1) / 8, v / 8).
  const double layers = std::stod(config_text(text, 0, "layers"));
  const double lower = (layers - 1) / 8, upper = layers / 8;
  ASSERT_GE(unit_coordinate(text, 0, 2), lower);
  ASSERT_LT(unit_coordinate(text, 0, 2), upper);
  EXPECT_TRUE(loads(with_unit_coordinate(text, 0, 2, lower + 0.01)));  // anywhere in the cell, not only its centre
  EXPECT_TRUE(loads(with_unit_coordinate(text, 0, 2, upper - 0.01)));
  const double outside = layers > 1 ? lower - 1e-6 : upper + 1e-6;  // just outside, toward a neighbour that exists
  const double edge = layers > 1 ? lower - 1e-10 : upper + 1e-10;   // on the edge, to round-off
  EXPECT_FALSE(loads(with_unit_coordinate(text, 0, 2, outside)));
  EXPECT_TRUE(loads(with_unit_coordinate(text, 0, 2, edge)));
}

TEST(StudyFile, RefusesUnknownKeysAndDuplicateKeysNamingTheirLines) {
  const std::string text = driven_study("ei", false, 2).to_yaml_string();
  const std::string top = load_error("colour: red\n" + text);
  EXPECT_NE(top.find("field 'colour' at line 1, column 1: unknown key"), std::string::npos) << top;
  const EditedStudy trial_key = edit_trial(text, 1, "source:", "vaule: 3, source:");
  const std::string in_trial = load_error(trial_key.text);
  EXPECT_NE(in_trial.find("field 'trials[1].vaule' at line " + std::to_string(trial_key.line)), std::string::npos)
      << in_trial;
  // The second seed would be ignored: both lines are named.
  std::string seeds = text;
  seeds.insert(seeds.find("ask_count:"), "seed: 99\n");
  const std::string duplicate = load_error(seeds);
  EXPECT_NE(duplicate.find("field 'seed' at line 5, column 1: duplicate key (also at line 4, column 1)"),
            std::string::npos)
      << duplicate;
  const EditedStudy twice = edit_trial(text, 0, "source:", "value: 0, source:");
  EXPECT_NE(load_error(twice.text).find("field 'trials[0].value' at line " + std::to_string(twice.line)),
            std::string::npos);
  // A strategy's state (and its nested maps) holds only what the strategy writes: every strategy's
  // saved study with a key added to its state, or to the state's first nested map, is refused.
  for (const std::string name : {"ei", "cmets", "gpoo", "bnb", "sobol"}) {
    const std::string saved = driven_study(name, false, 6).to_yaml_string();
    const YAML::Node strategy = YAML::Load(saved)["strategy"];
    const YAML::Node state = strategy["state"] ? strategy["state"] : strategy;
    std::string nested;  // the first key of the state whose value is a map, if any
    for (const auto& kv : state)
      if (kv.second.IsMap() && nested.empty()) nested = kv.first.Scalar();
    for (const std::string& where : {std::string("state"), nested}) {
      if (where.empty() || (where == "state" && !strategy["state"])) continue;
      std::string edited = saved;
      const std::size_t at = edited.find("\n", edited.find(where + ":", edited.find("strategy:")));
      // The next line's indentation is the map's own.
      const std::size_t indent = edited.find_first_not_of(' ', at + 1) - (at + 1);
      edited.insert(at + 1, std::string(indent, ' ') + "refresh_cuont: 3\n");
      const std::string error = load_error(edited);
      EXPECT_NE(error.find(".refresh_cuont' at line "), std::string::npos) << name << " " << where << ": " << error;
      EXPECT_NE(error.find("unknown key"), std::string::npos) << name << ": " << error;
    }
  }
}

TEST(StudyFile, ARefusedFileIsLeftAsItWas) {
  const auto path = temp_file("nan-value.yaml");
  const std::string damaged =
      edit_trial(driven_study("random", false, 2).to_yaml_string(), 0, "value: [^,}]+", "value: .nan").text;
  { std::ofstream(path, std::ios::binary) << damaged; }
  try {
    Study::load(path);
    ADD_FAILURE() << "a non-finite value was accepted";
  } catch (const tune::StateError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ": trial 0, field 'value' at line"), std::string::npos)
        << e.what();
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream after;
  after << in.rdbuf();
  EXPECT_EQ(after.str(), damaged);
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

namespace {

// Without a resolution every trial counts 1 against the budgets: a cost told with a trial was
// recorded and counted in its place (two trials, one told a cost of 14.5, spent 15.5).
TEST(StudyCosts, ACostWithoutAResolutionIsRefusedAndTheTrialStaysPending) {
  tune::Study study(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy("random"),
                    tune::StudyOptions{});
  const auto a = study.ask(), b = study.ask();
  ASSERT_TRUE(a && b);
  EXPECT_THROW(study.tell(a->id, 0.5, 14.5), std::invalid_argument);
  EXPECT_THROW(study.fail(b->id, "crashed", 3.0), std::invalid_argument);
  EXPECT_EQ(study.pending_count(), 2u);
  study.tell(a->id, 0.5);
  study.fail(b->id, "crashed");
  EXPECT_EQ(study.spent_cost(), 2.0);
}

// Three costs of 1e308 summed to inf, and the spend read "infs".
TEST(StudyCosts, ACostBeyondWhatABudgetCanSumIsRefused) {
  tune::StudyOptions options;
  options.resolution = tune::Resolution{"epochs", {1, 3}, {}};
  options.cost_budget = 1e6;
  tune::Study study(tune::Space({tune::Parameter::floating("x", 0, 1)}), tune::make_strategy("random"), options);
  const auto a = study.ask();
  ASSERT_TRUE(a);
  try {
    study.tell(a->id, 0.5, 1e308);
    ADD_FAILURE() << "a cost of 1e308 was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the cost 1e+308 is beyond the 1e+100 a budget can sum"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(study.fail(a->id, "crashed", 2e100), std::invalid_argument);
  EXPECT_EQ(study.pending_count(), 1u);
  study.tell(a->id, 0.5, 1e100);  // the bound itself is a cost
  EXPECT_EQ(study.spent_cost(), 1e100);
}

}  // namespace

namespace {

// minimize records every evaluation whatever the objective throws: `throw 42` escaped it, and the
// history of every evaluation before was lost.
TEST(StudyMinimize, AnObjectiveThrowingSomethingElseThanAStdExceptionFailsThatEvaluation) {
  const tune::Space space({tune::Parameter::floating("x", -1, 1)});
  tune::MinimizeOptions options;
  options.evaluations = 8;
  options.strategy = "random";
  int calls = 0;
  const tune::MinimizeResult r = tune::minimize(
      [&](const tune::Config& c) {
        if (++calls % 2 == 0) throw 42;
        return std::get<double>(c.at("x")) * std::get<double>(c.at("x"));
      },
      space, options);
  EXPECT_EQ(r.evaluations, 8u);
  ASSERT_EQ(r.history.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(r.history[i].status, i % 2 == 1 ? tune::TrialStatus::failed : tune::TrialStatus::complete) << i;
    if (i % 2 == 1) {
      EXPECT_EQ(r.history[i].failure_reason, "the objective threw something that is not a std::exception");
    }
  }
}

// A gpoo round of more trials than the trial budget never completes: refused, as in a campaign file.
TEST(StudyGpoo, ARoundLargerThanTheTrialBudgetIsRefused) {
  const tune::Space space({tune::Parameter::floating("x", 0, 1)});
  tune::StudyOptions o;
  o.max_trials = 2;
  try {
    tune::Study study(space, tune::make_strategy("gpoo", YAML::Load("{representatives: 4}")), o);
    ADD_FAILURE() << "a study whose gpoo round never completes was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no round would complete"), std::string::npos) << e.what();
  }
  o.max_trials = 4;
  EXPECT_NO_THROW(tune::Study(space, tune::make_strategy("gpoo", YAML::Load("{representatives: 4}")), o));
}

}  // namespace
