// Study::import_result: results obtained elsewhere reach the strategy's model exactly as results
// run here would, stand in for the initial design, count against no budget, survive save / load,
// and are refused where enqueue() or tell() would refuse them, leaving the study unchanged.
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
using lr_layers_act::unit_text;

// Configurations of an earlier campaign: a spread of the space, as its own trials would be.
std::vector<tune::Config> history(std::size_t n) {
  Study earlier(space(), tune::make_strategy("sobol"), {tune::Direction::minimize, 99});
  std::vector<tune::Config> configs;
  for (std::size_t i = 0; i < n; ++i) configs.push_back(earlier.ask()->config);
  return configs;
}

class ImportResult : public ::testing::TestWithParam<std::string> {};

// The reference: a study that ran the same trials itself (its initial design, 2 * 3 + 1 = 7 points,
// for ei, ucb and cmes). The model built from the results (its data, its fit, so its recommendation)
// must be the same whichever way they came.
TEST_P(ImportResult, TheModelIsTheOneTheSameResultsRunHereWouldGive) {
  Study ran(space(), tune::make_strategy(GetParam()), options_for(GetParam()));
  for (int i = 0; i < 7; ++i) {
    const auto s = ran.ask();
    ASSERT_TRUE(s);
    ran.tell(s->id, objective(s->config));
  }
  Study imported(space(), tune::make_strategy(GetParam()), options_for(GetParam()));
  for (const tune::Trial& t : ran.trials()) {
    const std::uint64_t id = imported.import_result(t.config, *t.value, t.level, "campaign earlier, trial " + std::to_string(t.id));
    EXPECT_EQ(id, t.id);
  }
  EXPECT_EQ(imported.imported_count(), 7u);
  for (const tune::Trial& t : ran.trials()) {
    const tune::Trial& i = imported.trial(t.id);
    EXPECT_EQ(i.status, tune::TrialStatus::complete);
    EXPECT_EQ(i.source, "imported");
    EXPECT_EQ(i.imported_from, "campaign earlier, trial " + std::to_string(t.id));
    EXPECT_EQ(i.config, t.config);
    // The unit point is the configuration's (decode then encode on a log scale may move it an ulp).
    EXPECT_TRUE(i.unit.isApprox(t.unit, 1e-12)) << i.unit.transpose() << " vs " << t.unit.transpose();
    EXPECT_EQ(i.value, t.value);
    EXPECT_EQ(i.level, t.level);
  }
  ASSERT_EQ(imported.best() == nullptr, ran.best() == nullptr);  // cmets's first runs are cheap ones
  if (ran.best()) {
    EXPECT_EQ(imported.best()->id, ran.best()->id);
  }
  // Both go on from there with their model (the imported results stand in for the design): its own
  // trials follow the imported ones. A pending trial has no result, so it does not enter the
  // recommendation.
  const auto next = imported.ask();
  ASSERT_TRUE(next) << imported.stop_reason();
  EXPECT_EQ(next->id, 7u);
  EXPECT_NE(imported.trial(next->id).source, "imported");
  EXPECT_NE(imported.trial(next->id).source, "initial_design");
  ASSERT_TRUE(ran.ask());
  const auto a = imported.recommendation();
  const auto b = ran.recommendation();
  ASSERT_EQ(a.has_value(), b.has_value());
  if (GetParam() != "random" && GetParam() != "sobol") {
    ASSERT_TRUE(a);
  }
  if (const auto* mr = dynamic_cast<const tune::MultiResolutionSearch*>(&imported.strategy());
      mr && GetParam() == "cmets") {
    // cmets fits its model's hyperparameters as the results arrive (ran's at 1, 2, ... results),
    // and one built from all seven at once fits others: its data are compared, not its fit.
    EXPECT_EQ(mr->model_size(), 7u);
  } else if (a) {
    EXPECT_TRUE(a->unit.isApprox(b->unit, 1e-9)) << a->unit.transpose() << " vs " << b->unit.transpose();
    EXPECT_NEAR(a->mean, b->mean, 1e-9 * std::abs(b->mean));
    EXPECT_NEAR(a->sd, b->sd, 1e-9 * b->sd);
  }
}

TEST_P(ImportResult, SurvivesASaveAndTheLoadedStudyContinuesAsTheOriginal) {
  Study original(space(), tune::make_strategy(GetParam()), options_for(GetParam()));
  for (const tune::Config& c : history(5)) original.import_result(c, objective(c), std::nullopt, "old/state.yaml");
  for (int i = 0; i < 2; ++i) {
    const auto s = original.ask();
    original.tell(s->id, objective(s->config));
  }
  const auto path = std::filesystem::path(TUNE_TEST_TMPDIR) / ("import-result-" + GetParam() + ".yaml");
  std::filesystem::create_directories(path.parent_path());
  original.save(path);
  Study loaded = Study::load(path);
  EXPECT_EQ(loaded.to_yaml_string(), original.to_yaml_string());
  EXPECT_EQ(loaded.imported_count(), 5u);
  EXPECT_EQ(loaded.trial(3).imported_from, "old/state.yaml");
  lr_layers_act::expect_the_same_continuation(original, loaded, 5);
}

INSTANTIATE_TEST_SUITE_P(Strategies, ImportResult, ::testing::Values("random", "sobol", "ei", "ucb", "cmets", "cmes"));

// ei's initial design on 3 parameters is 2 * 3 + 1 = 7 points; imported results take their place.
TEST(ImportResultDesign, ImportedResultsStandInForTheInitialDesign) {
  const auto design_asks = [](std::size_t imports) {
    Study study(space(), tune::make_strategy("ei"), options_for("ei"));
    for (const tune::Config& c : history(imports)) study.import_result(c, objective(c), std::nullopt, "earlier");
    std::size_t design = 0;
    for (int i = 0; i < 10; ++i) {
      const auto s = study.ask();
      design += study.trial(s->id).source == "initial_design";
      study.tell(s->id, objective(s->config));
    }
    return design;
  };
  EXPECT_EQ(design_asks(0), 7u);
  EXPECT_EQ(design_asks(3), 4u);
  EXPECT_EQ(design_asks(7), 0u);
  EXPECT_EQ(design_asks(9), 0u);

  // cmes's design is of full runs: only imported full runs stand in for it.
  const auto cmes_design_asks = [](std::optional<std::size_t> level) {
    Study study(space(), tune::make_strategy("cmes"), options_for("cmes"));
    for (const tune::Config& c : history(7)) study.import_result(c, objective(c), level, "earlier");
    std::size_t design = 0;
    for (int i = 0; i < 8; ++i) {
      const auto s = study.ask();
      design += study.trial(s->id).source == "initial_design";
      study.tell(s->id, objective(s->config));
    }
    return design;
  };
  EXPECT_EQ(cmes_design_asks(std::nullopt), 0u);
  EXPECT_EQ(cmes_design_asks(0), 7u);
}

TEST(ImportResultBudget, NoBudgetCountsImportedResults) {
  tune::StudyOptions o{tune::Direction::minimize, 1};
  o.max_trials = 2;
  Study limited(space(), tune::make_strategy("ei"), o);
  for (const tune::Config& c : history(6)) limited.import_result(c, objective(c), std::nullopt, "earlier");
  EXPECT_EQ(limited.imported_count(), 6u);
  ASSERT_TRUE(limited.ask());
  ASSERT_TRUE(limited.ask());
  EXPECT_FALSE(limited.ask());
  EXPECT_EQ(limited.stop_reason(), "the trial budget of 2 is spent");
  EXPECT_EQ(limited.trials().size(), 8u);

  // Declared costs: 9 per full run, 3 at level 1. Imported results at both spend nothing.
  tune::StudyOptions c = options_for("cmets");
  c.cost_budget = 12;
  Study costly(space(), tune::make_strategy("cmets"), c);
  const std::vector<tune::Config> configs = history(4);
  costly.import_result(configs[0], objective(configs[0]), std::nullopt, "earlier");
  costly.import_result(configs[1], objective(configs[1]), 1, "earlier");
  EXPECT_EQ(costly.spent_cost(), 0.0);
  costly.enqueue(configs[2]);
  costly.enqueue(configs[3], 1);
  const auto a = costly.ask();
  const auto b = costly.ask();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(costly.spent_cost(), 12.0);
  EXPECT_FALSE(costly.ask());
  // A measured cost is learnt from runs made here: an imported result carries none.
  EXPECT_FALSE(costly.trial(0).cost);
}

TEST(ImportResultBudget, BestMayBeAnImportedResultButNotALowResolutionOne) {
  const std::vector<tune::Config> configs = history(3);
  Study study(space(), tune::make_strategy("cmets"), options_for("cmets"));
  study.import_result(configs[0], 5.0, std::nullopt, "earlier");
  study.import_result(configs[1], -100.0, 0, "earlier");  // a cheap run's value is not comparable
  EXPECT_EQ(study.best()->id, 0u);
  study.import_result(configs[2], 1.0, std::nullopt, "earlier");
  EXPECT_EQ(study.best()->id, 2u);
}

TEST(ImportResultRefusal, RefusedAsEnqueueAndTellRefuseLeavingTheStudyUnchanged) {
  Study study(space(), tune::make_strategy("ei"), {});
  const tune::Config good = history(1)[0];
  const auto refusal = [&](const tune::Config& c, double value, std::optional<std::size_t> level = std::nullopt,
                           std::string origin = "earlier") {
    try {
      study.import_result(c, value, level, std::move(origin));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  tune::Config missing = good;
  missing.erase("act");
  EXPECT_EQ(refusal(missing, 1.0), "import_result: parameter 'act' has no value; give every parameter of the space");
  tune::Config out_of_range = good;
  out_of_range["layers"] = std::int64_t{9};
  EXPECT_NE(refusal(out_of_range, 1.0).find("'layers'"), std::string::npos) << refusal(out_of_range, 1.0);
  EXPECT_EQ(refusal(good, std::nan("")), "import_result: the value .nan is not a result the models can take in "
                                          "(finite, within +-1e+100); a run without a result is not imported");
  EXPECT_NE(refusal(good, 1e200).find("the value 1e+200 is not a result"), std::string::npos) << refusal(good, 1e200);
  EXPECT_EQ(refusal(good, 1.0, 0), "import_result: a level needs a study with a resolution");
  EXPECT_EQ(refusal(good, 1.0, std::nullopt, ""), "import_result: say where the result comes from (origin is empty)");
  EXPECT_TRUE(study.trials().empty());
  const std::string unchanged = study.to_yaml_string();
  EXPECT_EQ(refusal(good, 1.0), "accepted");
  EXPECT_NE(study.to_yaml_string(), unchanged);

  for (const std::string name : {"gpoo", "bnb"}) {
    Study own(space(), tune::make_strategy(name), {});
    try {
      own.import_result(good, 1.0, std::nullopt, "earlier");
      ADD_FAILURE() << name << " accepted an imported result";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("strategy " + name + " runs only configurations it chose itself"),
                std::string::npos) << e.what();
    }
    EXPECT_TRUE(own.trials().empty());
  }
}

TEST(ImportResultLoad, AnEditedFileThatMarksAFailedTrialImportedIsRefusedNamingTheField) {
  Study study(space(), tune::make_strategy("random"), {});
  const auto s = study.ask();
  study.fail(s->id, "crashed");
  std::string text = study.to_yaml_string();
  const std::string marker = "failure_reason: crashed";
  const std::size_t at = text.find(marker);
  ASSERT_NE(at, std::string::npos) << text;
  text.insert(at, "imported_from: elsewhere, ");
  try {
    (void)Study::from_yaml_string(text, "edited.yaml");
    ADD_FAILURE() << "loaded a failed trial marked imported";
  } catch (const tune::StateError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("edited.yaml"), std::string::npos) << message;
    EXPECT_NE(message.find("imported_from"), std::string::npos) << message;
  }
}

}  // namespace

namespace {

// A batch is the same as its results imported one by one, and all or nothing.
TEST(ImportResults, ABatchIsItsResultsOneByOneAndAllOrNothing) {
  const std::vector<tune::Config> configs = history(6);
  Study one_by_one(space(), tune::make_strategy("ei"), options_for("ei"));
  Study batched(space(), tune::make_strategy("ei"), options_for("ei"));
  std::vector<Study::ImportedResult> batch;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    one_by_one.import_result(configs[i], objective(configs[i]), std::nullopt, "earlier, trial " + std::to_string(i));
    batch.push_back({configs[i], objective(configs[i]), std::nullopt, "earlier, trial " + std::to_string(i)});
  }
  std::vector<Study::ImportedResult> bad = batch;
  bad[4].value = std::nan("");
  Study refused(space(), tune::make_strategy("ei"), options_for("ei"));
  try {
    refused.import_results(bad);
    ADD_FAILURE() << "a batch with a NaN was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("import_results: result 4: the value .nan", 0), 0u) << e.what();
  }
  EXPECT_TRUE(refused.trials().empty());
  EXPECT_EQ(batched.import_results(batch), 0u);
  EXPECT_EQ(batched.to_yaml_string(), one_by_one.to_yaml_string());
  const auto a = batched.ask();
  const auto b = one_by_one.ask();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(unit_text(batched, a->id), unit_text(one_by_one, b->id));
}

}  // namespace
