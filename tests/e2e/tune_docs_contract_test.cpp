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

}  // namespace
