// The tree searches as Study strategies: `gpoo` (GpooStrategy) and `bnb` (BnbStrategy). Suggestions
// lie in the space and in their cells, parallel suggestions differ, failed configurations are not
// proposed again, saved studies resume to the same suggestions, bnb finds the optimum of a noise-free
// function, gpoo's recommended region holds the optimum of a bumpy noisy function, and options are
// validated.
#include <gtest/gtest.h>

#include <bit>

#include <cmath>
#include <filesystem>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include "tune/io/yaml_values.hpp"
#include "tune/tune.hpp"

namespace {

using tune::Study;

std::filesystem::path temp_file(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(TUNE_TEST_TMPDIR) / "tree-strategies";
  std::filesystem::create_directories(dir);
  return dir / name;
}

tune::StrategyContext context_of(const Study& s) {
  return tune::StrategyContext{s.space(), s.direction(), s.seed(), s.ask_count(), s.trials()};
}

std::unique_ptr<tune::Strategy> strategy(const std::string& name, const std::string& options = "{}") {
  return tune::make_strategy(name, YAML::Load(options));
}

std::vector<double> as_vector(const Eigen::VectorXd& v) { return {v.data(), v.data() + v.size()}; }

// x in [-1, 1], y in [-3, 1]: the toy trainer's bowl, minimum 0 at (0.3, -1).
tune::Space bowl_space() {
  return tune::Space({tune::Parameter::floating("x", -1, 1), tune::Parameter::floating("y", -3, 1)});
}
double bowl(const tune::Config& c) {
  const double x = std::get<double>(c.at("x")), y = std::get<double>(c.at("y"));
  return (x - 0.3) * (x - 0.3) + (y + 1) * (y + 1) / 4;
}

// A float and an integer parameter, for the resume tests.
tune::Space mixed_space() {
  return tune::Space({tune::Parameter::floating("x", -5, 10), tune::Parameter::integer("layers", 1, 8)});
}
double mixed(const tune::Config& c) {
  const double x = std::get<double>(c.at("x"));
  const double layers = static_cast<double>(std::get<std::int64_t>(c.at("layers")));
  return std::pow(x - 2.0, 2) / 10 + std::pow(layers - 3, 2) / 8 + 0.3 * std::sin(3 * x);
}

// ---- suggestions ------------------------------------------------------------------------------

TEST(GpooStrategy, TrialsRunAtTheirCellsRepresentativesInsideTheSpace) {
  for (const std::string options : {"{}", "{representatives: 4}", "{aggregation: cell}"}) {
    Study study(bowl_space(), strategy("gpoo", options), {tune::Direction::minimize, 3});
    for (int i = 0; i < 40; ++i) {
      const auto s = study.ask();
      ASSERT_TRUE(s) << options << ": " << study.stop_reason();
      const double x = std::get<double>(s->config.at("x")), y = std::get<double>(s->config.at("y"));
      EXPECT_GE(x, -1.0);
      EXPECT_LE(x, 1.0);
      EXPECT_GE(y, -3.0);
      EXPECT_LE(y, 1.0);
      EXPECT_TRUE(study.space().encode(s->config).isApprox(study.trial(s->id).unit, 1e-12));
      study.tell(s->id, bowl(s->config));
    }
    // Every trial belongs to a round, in order, and runs at its cell's representative (or, under
    // `cell`, at a point of its cell).
    const auto& gpoo = dynamic_cast<const tune::GpooStrategy&>(study.strategy());
    const tune::GpooSearch search = gpoo.search(context_of(study));
    const std::size_t per_round = gpoo.options().trials_per_round();
    std::uint64_t next_id = 0;
    for (const auto& round : gpoo.rounds()) {
      ASSERT_EQ(round.trials.size(), per_round) << options;
      const tune::PartitionNode& cell = search.tree().node(round.node);
      const Eigen::MatrixXd reps = search.tree().representatives(round.node, gpoo.options().representatives);
      for (std::size_t k = 0; k < round.trials.size(); ++k) {
        EXPECT_EQ(round.trials[k], next_id++);
        const Eigen::VectorXd& u = study.trial(round.trials[k]).unit;
        EXPECT_TRUE((u.array() >= cell.lower.array()).all() && (u.array() <= cell.upper.array()).all()) << options;
        if (gpoo.options().aggregation == tune::GpooAggregation::representatives) {
          EXPECT_TRUE(u.isApprox(reps.col(static_cast<Eigen::Index>(k)), 1e-12)) << options;
        }
      }
    }
    EXPECT_EQ(next_id, 40u);
    // The tree grew: with S = 1 the root is one round, then cells of ever smaller size.
    EXPECT_GT(search.tree().max_depth(), 2u) << options;
    // The rounds' values are the means of their trials (the search saw the same numbers).
    ASSERT_EQ(search.observations().size(), gpoo.rounds().size());
    const auto& std = gpoo.model();
    for (std::size_t r = 0; r < gpoo.rounds().size(); ++r) {
      double sum = 0.0;
      for (std::uint64_t id : gpoo.rounds()[r].trials) sum += -*study.trial(id).value;  // minimise: reward = -value
      EXPECT_NEAR(std.unstandardise(search.observations()[r].value), sum / static_cast<double>(per_round), 1e-9);
    }
  }
}

TEST(TreeStrategies, PendingSuggestionsAreDistinct) {
  for (const auto& [name, options] : std::vector<std::pair<std::string, std::string>>{
           {"gpoo", "{}"}, {"gpoo", "{representatives: 3}"}, {"gpoo", "{aggregation: cell}"}, {"bnb", "{}"}}) {
    Study study(mixed_space(), strategy(name, options), {tune::Direction::minimize, 5});
    std::set<std::vector<double>> pending;
    for (int i = 0; i < 30; ++i) {
      const auto s = study.ask();
      ASSERT_TRUE(s) << name << options << " ask " << i << ": " << study.stop_reason();
      EXPECT_TRUE(pending.insert(as_vector(study.trial(s->id).unit)).second) << name << options << " ask " << i;
      if (i % 4 == 3) {  // tell the oldest pending one now and then
        for (const tune::Trial& t : study.trials())
          if (t.status == tune::TrialStatus::pending) {
            pending.erase(as_vector(t.unit));
            study.tell(t.id, mixed(t.config));
            break;
          }
      }
    }
    EXPECT_GE(study.pending_count(), 20u);
  }
}

TEST(TreeStrategies, FailedConfigurationsAreNotProposedAgain) {
  for (const std::string name : {"gpoo", "bnb"}) {
    Study study(bowl_space(), strategy(name), {tune::Direction::minimize, 2});
    std::set<std::vector<double>> failed;
    int failures = 0;
    for (int i = 0; i < 60; ++i) {
      const auto s = study.ask();
      ASSERT_TRUE(s) << name << ": " << study.stop_reason();
      const Eigen::VectorXd& u = study.trial(s->id).unit;
      EXPECT_FALSE(failed.count(as_vector(u))) << name << " proposed a failed configuration again at ask " << i;
      // The trainer crashes around the optimum (0.3, -1), which keeps attracting the search.
      const double x = std::get<double>(s->config.at("x")), y = std::get<double>(s->config.at("y"));
      if (std::abs(x - 0.3) < 0.3 && std::abs(y + 1) < 0.6) {
        ++failures;
        failed.insert(as_vector(u));
        study.fail(s->id, "simulated crash");
      } else {
        study.tell(s->id, bowl(s->config));
      }
    }
    EXPECT_GE(failures, 5) << name;
  }
}

// ---- save / load ------------------------------------------------------------------------------

// Rounds of: ask two, tell the first, fail every fifth trial, tell the second; the suggested points
// (or stop reasons) in order.
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
    if (a) study.tell(a->id, mixed(a->config));
    if (b && b->id % 5 == 0) study.fail(b->id, "simulated crash");
    else if (b) study.tell(b->id, mixed(b->config));
  }
}

class TreeStrategyResume : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(TreeStrategyResume, LoadedStudyMakesTheSameSuggestionsAsTheUnsavedOne) {
  const auto& [name, options] = GetParam();
  for (int split : {1, 4, 11}) {  // before the first refit, between refits, after several
    Study original(mixed_space(), strategy(name, options), {tune::Direction::minimize, 42});
    std::vector<std::string> prefix;
    drive(original, split, prefix);
    const auto pending = original.ask();  // pending at save time
    // One file per parameter set: ctest runs the instances in parallel processes.
    const auto path = temp_file(name + "-" + std::to_string(std::hash<std::string>{}(options)) + "-" +
                                std::to_string(split) + ".yaml");
    original.save(path);
    Study loaded = Study::load(path);
    ASSERT_EQ(loaded.trials().size(), original.trials().size());
    EXPECT_EQ(loaded.to_yaml_string(), original.to_yaml_string());
    if (pending) {
      original.tell(pending->id, mixed(pending->config));
      loaded.tell(pending->id, mixed(pending->config));
    }
    std::vector<std::string> a, b;
    drive(original, 8, a);
    drive(loaded, 8, b);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << name << options << " split " << split << " step " << i;
    EXPECT_EQ(loaded.to_yaml_string(), original.to_yaml_string());
    // The strategy refitted its kernel along the way (the replay must survive that).
    const YAML::Node state = YAML::Load(original.to_yaml_string())["strategy"]["state"];
    EXPECT_GE(state["refresh_count"].as<int>(), 2) << name << options;
  }
}

// gpoo keeps the search between asks and tells it only the rounds decided since (a cache); a study
// loaded from the file has no cache and replays every round. At every one of 70 asks, mostly serial
// and now and then with a trial left pending across an ask (a fantasy, which the cache must not
// keep once the trial completes), a study loaded just before the ask suggests the same point.
// The kept search, told only what changed since (new rounds, and the values of rounds that were
// fantasies when it was kept and have completed since), is bit for bit a replay: every ask's point
// and b-value (the trial's acquisition, which holds the posterior mean) agree with those of a study
// loaded just before. One worker holding a trial now and then, and four workers.
TEST(GpooCache, EveryAskAgreesWithAFullReplay) {
  for (const std::size_t workers : {1u, 4u})
    for (const std::string options : {"{}", "{representatives: 3}"}) {
      Study study(mixed_space(), strategy("gpoo", options), {tune::Direction::minimize, 9});
      std::vector<tune::Suggestion> held;
      for (int i = 0; i < 70; ++i) {
        Study replayed = Study::from_yaml_string(study.to_yaml_string(), "test");
        const auto s = study.ask();
        const auto r = replayed.ask();
        ASSERT_TRUE(s && r) << study.stop_reason();
        ASSERT_EQ(study.trial(s->id).unit, replayed.trial(r->id).unit) << options << " ask " << i;
        // (the later representatives of a round have no b-value: NaN in both)
        ASSERT_EQ(std::bit_cast<std::uint64_t>(study.trial(s->id).acquisition),
                  std::bit_cast<std::uint64_t>(replayed.trial(r->id).acquisition))
            << options << " ask " << i << ": " << study.trial(s->id).acquisition;
        if (workers == 1) {
          for (const auto& h : held) study.tell(h.id, mixed(h.config));
          held.clear();
          if (i % 9 == 4) held.push_back(*s);
          else study.tell(s->id, mixed(s->config));
        } else {  // the oldest of four running trials ends as the next starts
          held.push_back(*s);
          if (held.size() == workers) {
            study.tell(held.front().id, mixed(held.front().config));
            held.erase(held.begin());
          }
        }
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Strategies, TreeStrategyResume,
                         ::testing::Values(std::pair<std::string, std::string>{"gpoo", "{}"},
                                           std::pair<std::string, std::string>{"gpoo", "{representatives: 3, beta: code}"},
                                           std::pair<std::string, std::string>{"gpoo", "{aggregation: cell}"},
                                           std::pair<std::string, std::string>{"bnb", "{}"}),
                         [](const ::testing::TestParamInfo<std::pair<std::string, std::string>>& p) {
                           return p.param.first + std::to_string(p.index);
                         });

TEST(TreeStrategies, DamagedStateIsRefused) {
  for (const std::string name : {"gpoo", "bnb"}) {
    Study study(bowl_space(), strategy(name), {tune::Direction::minimize, 1});
    for (int i = 0; i < 6; ++i) {
      const auto s = study.ask();
      ASSERT_TRUE(s);
      study.tell(s->id, bowl(s->config));
    }
    YAML::Node root = YAML::Load(study.to_yaml_string());
    if (name == "gpoo") root["strategy"]["state"]["rounds"][1]["node"] = 999;
    else root["strategy"]["state"]["records"][0]["trial"] = 77;
    EXPECT_THROW(Study::from_yaml(root), tune::StateError) << name;
  }
}

// ---- finding optima ---------------------------------------------------------------------------

TEST(BnbStrategy, FindsTheMinimumOfANoiseFreeBowlToHighAccuracy) {
  // The optimum (0.3, -1) is not a lattice point of any level (0.65 and 0.5 in the unit cube: the
  // latter is, the former is not), so accuracy comes from refining around it.
  Study study(bowl_space(), strategy("bnb"), {tune::Direction::minimize, 0});
  double best_at_30 = 0.0;
  for (int i = 0; i < 90; ++i) {
    const auto s = study.ask();
    ASSERT_TRUE(s) << study.stop_reason();
    study.tell(s->id, bowl(s->config));
    if (i == 29) best_at_30 = *study.best()->value;
  }
  const double best = *study.best()->value;
  EXPECT_LT(best, 1e-5);
  EXPECT_LT(best, 0.01 * best_at_30);  // still improving fast
  const auto rec = study.recommendation();
  ASSERT_TRUE(rec);
  EXPECT_NEAR(rec->mean, best, 1e-12);
  EXPECT_NEAR(std::get<double>(rec->config.at("x")), 0.3, 0.01);
  EXPECT_NEAR(std::get<double>(rec->config.at("y")), -1.0, 0.02);
  const auto& bnb = dynamic_cast<const tune::BnbStrategy&>(study.strategy());
  ASSERT_NE(bnb.search(), nullptr);
  EXPECT_GT(bnb.search()->level(), 3u);  // it refined
  EXPECT_GT(bnb.search()->pruned_fraction(), 0.5);
}

TEST(BnbStrategy, RefitsRebaseTheSearchWithoutReplayingIt) {
  // Each refit gives the search the new kernel in place: one rebase per refit, the lattice level
  // never goes back (a replay under the new kernel could end at another level), and a loaded study
  // rebuilds the same search from the saved refit history.
  Study study(bowl_space(), strategy("bnb"), {tune::Direction::minimize, 3});
  const auto& bnb = dynamic_cast<const tune::BnbStrategy&>(study.strategy());
  std::size_t level = 0;
  for (int i = 0; i < 80; ++i) {
    const auto s = study.ask();
    ASSERT_TRUE(s) << study.stop_reason();
    study.tell(s->id, bowl(s->config));
    ASSERT_NE(bnb.search(), nullptr);
    EXPECT_GE(bnb.search()->level(), level) << "trial " << i;
    level = bnb.search()->level();
  }
  ASSERT_GE(bnb.refits().size(), 10u);
  EXPECT_EQ(bnb.search()->rebases(), bnb.refits().size());
  EXPECT_EQ(bnb.model().refresh_count, bnb.refits().size());
  for (std::size_t i = 1; i < bnb.refits().size(); ++i) EXPECT_LE(bnb.refits()[i - 1].at, bnb.refits()[i].at);
  const Study loaded = Study::from_yaml(YAML::Load(study.to_yaml_string()));
  const auto& again = dynamic_cast<const tune::BnbStrategy&>(loaded.strategy());
  ASSERT_NE(again.search(), nullptr);
  EXPECT_EQ(again.search()->level(), bnb.search()->level());
  EXPECT_TRUE(again.search()->relevant_set() == bnb.search()->relevant_set());
  EXPECT_EQ(again.search()->rebases(), bnb.refits().size());
  // A state saved before the refit history existed (no 'refits') still loads: it replays under the
  // current kernel, as it was made.
  YAML::Node legacy = YAML::Load(study.to_yaml_string());
  legacy["strategy"]["state"].remove("refits");
  const Study old = Study::from_yaml(legacy);
  const auto& o = dynamic_cast<const tune::BnbStrategy&>(old.strategy());
  ASSERT_NE(o.search(), nullptr);
  EXPECT_EQ(o.search()->rebases(), 0u);
  EXPECT_EQ(o.search()->samples(), bnb.search()->samples());
  // A refit history out of order is refused.
  YAML::Node bad = YAML::Load(study.to_yaml_string());
  bad["strategy"]["state"]["refits"][1]["at"] = 1000;
  EXPECT_THROW(Study::from_yaml(bad), tune::StateError);
}

TEST(BnbStrategy, DiscreteSpaceIsExhaustedWithoutRepeatingAConfiguration) {
  // Ten configurations; many lattice points share one. A deterministic objective is evaluated once
  // per configuration and the study stops once the relevant set is exhausted. (The re-run of the best
  // that checks the objective is deterministic is off here: bnb_repeat_check_test.cpp.)
  const tune::Space grid({tune::Parameter::integer("a", 1, 5), tune::Parameter::categorical("b", {"p", "q"})});
  const auto f = [](const tune::Config& c) {
    return std::pow(static_cast<double>(std::get<std::int64_t>(c.at("a"))) - 4.0, 2) +
           (std::get<std::string>(c.at("b")) == "q" ? 0.0 : 1.5);
  };
  Study study(grid, strategy("bnb", "{max_level: 4, repeat_best_after: 0}"), {tune::Direction::minimize, 0});
  std::set<std::string> seen;
  int asks = 0;
  while (auto s = study.ask()) {
    ASSERT_LT(++asks, 11) << "more trials than configurations";
    EXPECT_TRUE(seen.insert(tune::to_string(s->config)).second) << tune::to_string(s->config);
    study.tell(s->id, f(s->config));
  }
  EXPECT_TRUE(study.finished());
  EXPECT_NE(study.stop_reason().find("converged"), std::string::npos) << study.stop_reason();
  ASSERT_NE(study.best(), nullptr);
  EXPECT_EQ(*study.best()->value, 0.0);  // a = 4, b = q
}

// Bumps on [0, 1]: the broad high one at 0.72, a narrow decoy almost as high at 0.2, ripples.
double bumpy(double u) {
  return 1.0 * std::exp(-std::pow(u - 0.72, 2) / (2 * 0.06 * 0.06)) +
         0.9 * std::exp(-std::pow(u - 0.2, 2) / (2 * 0.015 * 0.015)) + 0.05 * std::sin(60 * u);
}

TEST(GpooStrategy, RecommendedRegionHoldsTheOptimumOfABumpyNoisyFunction) {
  // x in [0, 10] (the user's units; the cube coordinate is x / 10); maximise bumpy + N(0, 0.05^2).
  const tune::Space space({tune::Parameter::floating("x", 0, 10)});
  double x_star = 0.0, f_star = -1e9;
  for (int i = 0; i <= 100000; ++i) {
    const double u = i / 100000.0;
    if (bumpy(u) > f_star) f_star = bumpy(u), x_star = 10 * u;
  }
  int hits = 0;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    Study study(space, strategy("gpoo"), {tune::Direction::maximize, seed});
    std::mt19937_64 noise(seed);
    std::normal_distribution<double> eps(0.0, 0.05);
    for (int i = 0; i < 60; ++i) {
      const auto s = study.ask();
      ASSERT_TRUE(s) << study.stop_reason();
      study.tell(s->id, bumpy(std::get<double>(s->config.at("x")) / 10) + eps(noise));
    }
    const auto rec = study.recommendation();
    ASSERT_TRUE(rec);
    ASSERT_TRUE(rec->region);
    const tune::StudyRegion& region = *rec->region;
    ASSERT_EQ(region.box.size(), 1u);
    const double lo = std::get<double>(region.box[0].low), hi = std::get<double>(region.box[0].high);
    EXPECT_NEAR(lo, 10 * region.lower(0), 1e-9);  // the box in the user's units
    EXPECT_NEAR(hi, 10 * region.upper(0), 1e-9);
    const double x = std::get<double>(rec->config.at("x"));
    EXPECT_GE(x, lo);
    EXPECT_LE(x, hi);
    // The estimate of the region's average (S = 1: f at its centre) against the truth.
    const double truth = bumpy((lo + hi) / 20);
    EXPECT_LT(std::abs(region.mean - truth), 3 * region.sd + 0.05) << "seed " << seed;
    if (lo <= x_star && x_star <= hi && hi - lo <= 1.25) ++hits;
  }
  EXPECT_GE(hits, 4) << "the recommended region missed x* = " << x_star << " too often";
}

TEST(GpooStrategy, MinimisingReportsTheObjectivesSign) {
  Study study(bowl_space(), strategy("gpoo"), {tune::Direction::minimize, 4});
  for (int i = 0; i < 30; ++i) {
    const auto s = study.ask();
    ASSERT_TRUE(s);
    study.tell(s->id, 5.0 + bowl(s->config));
  }
  const auto rec = study.recommendation();
  ASSERT_TRUE(rec && rec->region);
  EXPECT_GT(rec->region->mean, 4.0);  // the loss is >= 5 everywhere: a positive estimate
  EXPECT_GT(rec->mean, 4.0);
  EXPECT_LT(rec->region->mean, 5.0 + bowl(rec->config) + 1.0);
}

// ---- options ----------------------------------------------------------------------------------

TEST(TreeStrategies, OptionsRoundTripAndBadOnesAreRefusedByName) {
  tune::GpooStrategyOptions g;
  g.representatives = 5;
  g.aggregation = tune::GpooAggregation::cell;
  g.beta = tune::GpooBeta::code;
  g.refit.every = 3;
  const tune::GpooStrategyOptions g2 = tune::gpoo_strategy_options_from_yaml(tune::to_yaml(g));
  EXPECT_EQ(g2.representatives, 5u);
  EXPECT_EQ(g2.aggregation, tune::GpooAggregation::cell);
  EXPECT_EQ(g2.beta, tune::GpooBeta::code);
  EXPECT_EQ(g2.refit.every, 3u);
  tune::BnbStrategyOptions b;
  b.alpha = 0.2;
  b.max_level = 6;
  const tune::BnbStrategyOptions b2 = tune::bnb_strategy_options_from_yaml(tune::to_yaml(b));
  EXPECT_EQ(b2.alpha, 0.2);
  EXPECT_EQ(b2.max_level, 6u);

  const auto error = [](const std::string& name, const std::string& text) -> std::string {
    try {
      tune::make_strategy(name, YAML::Load(text));
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error("gpoo", "{representative: 3}").find("representative'"), std::string::npos);
  EXPECT_NE(error("gpoo", "{representatives: 0}").find("'representatives' must be >= 1"), std::string::npos);
  EXPECT_NE(error("gpoo", "{aggregation: sometimes}").find("sometimes"), std::string::npos);
  EXPECT_NE(error("gpoo", "{beta_theta: 1.5}").find("'beta_theta' must lie in (0, 1)"), std::string::npos);
  EXPECT_NE(error("gpoo", "{branching: 1}").find("'branching'"), std::string::npos);
  EXPECT_NE(error("gpoo", "{fit: {max_point: 3}}").find("max_point"), std::string::npos);
  EXPECT_NE(error("bnb", "{alpha: 2}").find("'alpha' must lie in (0, 1)"), std::string::npos);
  EXPECT_NE(error("bnb", "{epsilon: 0.1}").find("epsilon"), std::string::npos);
  EXPECT_NE(error("bnb", "{jitter: -1}").find("'jitter'"), std::string::npos);
  EXPECT_EQ(error("gpoo", "{representatives: 2, beta: code, refit: {every: 3}}"), "");
  EXPECT_EQ(error("bnb", "{max_level: 6, kernel: squared_exponential}"), "");
  const auto names = tune::strategy_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "gpoo"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "bnb"), names.end());
}

}  // namespace
