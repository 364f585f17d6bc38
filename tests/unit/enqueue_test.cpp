// Study::enqueue: configurations the user chose run first, exactly as given, reach the strategy's
// model like any result, survive save / load, and are refused where they cannot run.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "lr_layers_act_study.hpp"
#include "tune/tune.hpp"

namespace {

using tune::Study;

using lr_layers_act::objective;
using lr_layers_act::options_for;
using lr_layers_act::space;

// 0.001 is not what decode(encode(0.001)) gives on a log scale: the trial must run the value given.
const tune::Config kDefault{{"lr", 0.001}, {"layers", std::int64_t{2}}, {"act", std::string("relu")}};
const tune::Config kKnownGood{{"lr", 0.0031}, {"layers", std::int64_t{4}}, {"act", std::string("tanh")}};

class Enqueue : public ::testing::TestWithParam<std::string> {};

TEST_P(Enqueue, EnqueuedConfigurationsRunFirstAsGivenAndReachTheModel) {
  Study study(space(), tune::make_strategy(GetParam()), options_for(GetParam()));
  study.enqueue(kDefault);
  study.enqueue(kKnownGood);
  EXPECT_EQ(study.enqueued_count(), 2u);
  const auto a = study.ask();
  const auto b = study.ask();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->config, kDefault);
  EXPECT_EQ(b->config, kKnownGood);
  EXPECT_EQ(study.trial(a->id).source, "enqueued");
  EXPECT_EQ(study.trial(a->id).unit, study.space().snap(study.space().encode(kDefault)));
  if (study.resolution()) {
    EXPECT_EQ(a->level, study.resolution()->top());
    EXPECT_EQ(a->resolution_value, 9.0);
  }
  EXPECT_EQ(study.enqueued_count(), 0u);
  study.tell(a->id, objective(a->config));
  study.tell(b->id, objective(b->config));
  // Then the strategy's own suggestions, with the enqueued results in its model.
  for (int i = 0; i < 12; ++i) {
    const auto s = study.ask();
    ASSERT_TRUE(s) << study.stop_reason();
    EXPECT_NE(study.trial(s->id).source, "enqueued");
    study.tell(s->id, objective(s->config));
  }
  if (const auto* bandit = dynamic_cast<const tune::GpBandit*>(&study.strategy())) {
    const auto& d = bandit->dictionary();
    EXPECT_NE(std::find(d.begin(), d.end(), a->id), d.end());
    EXPECT_NE(std::find(d.begin(), d.end(), b->id), d.end());
  }
  if (const auto* mr = dynamic_cast<const tune::MultiResolutionSearch*>(&study.strategy())) {
    EXPECT_EQ(mr->model_size(), study.trials().size());
  }
}

TEST_P(Enqueue, QueueSurvivesASaveAndTheLoadedStudyContinuesAsTheOriginal) {
  Study original(space(), tune::make_strategy(GetParam()), options_for(GetParam()));
  for (int i = 0; i < 3; ++i) {
    const auto s = original.ask();
    original.tell(s->id, objective(s->config));
  }
  original.enqueue(kDefault);
  original.enqueue(kKnownGood);
  const auto first = original.ask();
  ASSERT_EQ(first->config, kDefault);
  const auto path = std::filesystem::path(TUNE_TEST_TMPDIR) / ("enqueue-" + GetParam() + ".yaml");
  std::filesystem::create_directories(path.parent_path());
  original.save(path);
  Study loaded = Study::load(path);
  EXPECT_EQ(loaded.enqueued_count(), 1u);
  EXPECT_EQ(loaded.to_yaml_string(), original.to_yaml_string());
  for (Study* s : {&original, &loaded}) s->tell(first->id, objective(first->config));
  const auto second = loaded.ask();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->config, kKnownGood);
  EXPECT_EQ(original.ask()->config, kKnownGood);
  for (Study* s : {&original, &loaded}) s->tell(second->id, objective(second->config));
  lr_layers_act::expect_the_same_continuation(original, loaded, 6);
  // Nothing waiting: the saved text has no `enqueued` key (older files stay as they were).
  EXPECT_EQ(loaded.to_yaml_string().find("enqueued:"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Strategies, Enqueue, ::testing::Values("random", "sobol", "ei", "ucb", "cmets", "cmes"));

TEST(EnqueueRefusal, ConfigurationsOutsideTheSpaceAndStrategiesThatChooseTheirOwnPoints) {
  Study study(space(), tune::make_strategy("ei"), {});
  const auto refusal = [&](const tune::Config& c, std::optional<std::size_t> level = std::nullopt) {
    try {
      study.enqueue(c, level);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  tune::Config missing = kDefault;
  missing.erase("act");
  EXPECT_EQ(refusal(missing), "enqueue: parameter 'act' has no value; give every parameter of the space");
  tune::Config out_of_range = kDefault;
  out_of_range["lr"] = 2.0;
  EXPECT_NE(refusal(out_of_range).find("'lr'"), std::string::npos) << refusal(out_of_range);
  tune::Config unknown_choice = kDefault;
  unknown_choice["act"] = std::string("gelu");
  EXPECT_NE(refusal(unknown_choice).find("gelu"), std::string::npos) << refusal(unknown_choice);
  tune::Config extra = kDefault;
  extra["momentum"] = 0.9;
  EXPECT_NE(refusal(extra).find("momentum"), std::string::npos) << refusal(extra);
  EXPECT_EQ(refusal(kDefault, 0), "enqueue: a level needs a study with a resolution");
  EXPECT_EQ(study.enqueued_count(), 0u);

  Study multi(space(), tune::make_strategy("cmets"), options_for("cmets"));
  EXPECT_THROW(multi.enqueue(kDefault, 3), std::invalid_argument);
  multi.enqueue(kDefault, 0);
  EXPECT_EQ(multi.ask()->level, 0u);

  for (const std::string name : {"gpoo", "bnb"}) {
    Study own(space(), tune::make_strategy(name), {});
    try {
      own.enqueue(kDefault);
      ADD_FAILURE() << name << " accepted an enqueued configuration";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("strategy " + name + " runs only configurations it chose itself"),
                std::string::npos) << e.what();
    }
  }
}

TEST(EnqueueBudget, BudgetsCountEnqueuedTrialsAsAnyOther) {
  tune::StudyOptions o{tune::Direction::minimize, 1};
  o.max_trials = 1;
  Study limited(space(), tune::make_strategy("ei"), o);
  limited.enqueue(kDefault);
  limited.enqueue(kKnownGood);
  ASSERT_TRUE(limited.ask());
  EXPECT_FALSE(limited.ask());
  EXPECT_EQ(limited.stop_reason(), "the trial budget of 1 is spent");

  tune::StudyOptions c = options_for("cmets");
  c.cost_budget = 12;  // one full run (9) and one at level 1 (3)
  Study costly(space(), tune::make_strategy("cmets"), c);
  costly.enqueue(kDefault);
  costly.enqueue(kKnownGood, 1);
  costly.enqueue(kKnownGood);
  const auto a = costly.ask();
  const auto b = costly.ask();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->level, 1u);
  EXPECT_FALSE(costly.ask());
  EXPECT_EQ(costly.stop_reason(), "cost budget exhausted: the next run (enqueued) does not fit the remaining budget");
  EXPECT_EQ(costly.enqueued_count(), 1u);
}

}  // namespace
