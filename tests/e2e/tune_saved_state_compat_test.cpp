// Campaigns saved by an earlier build resume with this one to the suggestion that build made.
// The fixture's state.yaml was written by 922a052's `tune` (before categorical_encoding existed):
// `tune ask` on c.yaml (x float, opt a categorical of 4 choices, act one of 2; seed 3), sixteen
// results told with `tune tell`, then one more `tune ask` (trial 16, pending). 922a052's next
// `tune ask` on that file handed out trial 17 at {x: 0.30266235203741615, opt: adam, act: tanh}.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <yaml-cpp/yaml.h>

#include "tune_process.hpp"

namespace {

using namespace tune_test;

TEST(SavedStateCompat, ACampaignSavedBeforeCategoricalEncodingResumesToTheSuggestionItsBuildMade) {
  const fs::path dir = fresh_dir("compat-categorical");
  fs::create_directories(dir / "cat");
  fs::copy_file(fs::path(TUNE_FIXTURES_DIR) / "campaign_saved_before_categorical_encoding" / "state.yaml",
                dir / "cat" / "state.yaml");
  const Result r = tune(dir, {"ask", "cat", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  // The same configuration; x to 1e-12 rather than to the bit, since the sanitizer build (-O1)
  // may round a sum differently from the Release build that wrote the figure.
  const YAML::Node asked = YAML::Load(r.out);
  EXPECT_EQ(asked["trial"].as<int>(), 17);
  EXPECT_EQ(asked["config"]["opt"].as<std::string>(), "adam");
  EXPECT_EQ(asked["config"]["act"].as<std::string>(), "tanh");
  EXPECT_NEAR(asked["config"]["x"].as<double>(), 0.30266235203741615, 1e-12);
  // The study keeps the encoding it was made with, now written down.
  const YAML::Node options = state_of(dir / "cat")["study"]["strategy"]["options"];
  EXPECT_EQ(options["categorical_encoding"].as<std::string>(), "ordered");
}

TEST(SavedStateCompat, ANewCampaignGivesItsGpOneInputPerChoice) {
  const fs::path dir = fresh_dir("compat-categorical-new");
  write(dir / "c.yaml",
        "name: cat\nspace:\n  x: {type: float, low: 0, high: 1}\n"
        "  opt: {type: categorical, choices: [sgd, adam, rmsprop, adagrad]}\n"
        "objective: {name: loss, direction: minimize}\nbudget: {trials: 5}\n");
  const Result r = tune(dir, {"ask", "c.yaml"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(state_of(dir / "cat")["study"]["strategy"]["options"]["categorical_encoding"].as<std::string>(), "one_hot");
}

}  // namespace
