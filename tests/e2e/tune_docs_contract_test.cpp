// What the README promises a user who types what it says, checked against the `tune` program: each
// test is a documented option or behaviour that once did not hold.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// README, gpoo's options: `variant: code` expands the root first (the authors' warm start). The
// campaign's state was written before the strategy's first round and then refused on load ("the
// rounds do not replay"), so tune ask and tune run ended at once.
TEST(TuneDocsContract, GpooWithTheCodeVariantRunsFromACampaignFile) {
  const fs::path d = fresh_dir("docs-gpoo-code");
  write(d / "c.yaml", "name: g\n"
                      "space:\n  x: {type: float, low: -1, high: 1}\n  y: {type: float, low: -3, high: 1}\n"
                      "strategy: {name: gpoo, variant: code}\n"
                      "budget: {trials: 4}\n");
  const Result first = tune(d, {"ask", "c.yaml"});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(YAML::Load(first.out)["trial"].as<int>(), 0) << first.out;
  const Result told = tune(d, {"tell", "g", "0", "0.5"});
  ASSERT_EQ(told.code, 0) << told.err;
  const Result second = tune(d, {"ask", "g"});
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(YAML::Load(second.out)["trial"].as<int>(), 1) << second.out;
}

// README, Stopping: "`--quiet` prints nothing" (but errors). Running a campaign file again said
// "tune: continuing the campaign in DIR" on stderr, --quiet or not.
TEST(TuneDocsContract, QuietPrintsNothingWhenItContinuesACampaign) {
  const fs::path d = fresh_dir("docs-quiet");
  write(d / "c.yaml", quadratic_campaign_with("q", 2, "{workers: 1}"));
  const Result first = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(first.out + first.err, "");
  const Result again = tune(d, {"run", "c.yaml", "--quiet"});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.out + again.err, "");
  // Without --quiet the notice says what happened.
  const Result loud = tune(d, {"run", "c.yaml"});
  EXPECT_EQ(loud.code, 0) << loud.err;
  EXPECT_NE(loud.err.find("continuing the campaign in q"), std::string::npos) << loud.err;
}

}  // namespace
