// IntermediateFollower: read a piece at a time while a trial writes, it finds exactly the objective's
// intermediate values that one parse of the complete lines so far finds (parse_trial_output),
// whatever the pieces, lines cut in two and lines too long to read included.
#include "tune/adapters/protocol/intermediate_follower.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using tune::adapters::IntermediateFollower;
using tune::adapters::IntermediateValue;

fs::path scratch(const std::string& name) {
  const fs::path d = fs::path(TUNE_TEST_TMPDIR) / "follower";
  fs::create_directories(d);
  fs::remove(d / name);
  return d / name;
}

void append(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::app);
  out << text;
}

std::vector<IntermediateValue> batch(const std::string& text) {
  return tune::adapters::parse_trial_output(text, "", {.objective_name = "loss"}).stdout_objective_steps;
}

void expect_same(const std::vector<IntermediateValue>& a, const std::vector<IntermediateValue>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].step, b[i].step) << i;
    EXPECT_EQ(a[i].value, b[i].value) << i;
  }
}

TEST(IntermediateFollower, FindsWhatOneParseOfTheWholeFileFindsWhateverThePieces) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 40; ++round) {
    // A trainer's output: reports with and without steps, JSON lines, noise, a very long line.
    std::string text;
    for (int i = 0; i < 60; ++i) {
      switch (rng() % 6) {
        case 0: text += "loss=" + std::to_string(1.0 / (i + 1)) + " step=" + std::to_string(i) + "\n"; break;
        case 1: text += "{\"loss\": " + std::to_string(0.5 + i) + ", \"step\": " + std::to_string(i) + "}\n"; break;
        case 2: text += "epoch " + std::to_string(i) + " done\n"; break;
        case 3: text += "acc=0.5 step=" + std::to_string(i) + "\n"; break;
        case 4: text += std::string(70000 + rng() % 1000, 'x') + " loss=9 step=99\n"; break;
        default: text += "loss=" + std::to_string(i) + "\n"; break;
      }
    }
    if (round % 4 == 0) text = "cost=7 step=0\ncost=5 step=1\n" + text;  // cost before the objective's first line
    text += "loss=0.125 step=1000";  // the line being written: not read until it ends
    const fs::path p = scratch("out" + std::to_string(round));
    IntermediateFollower follower(p, "loss");
    EXPECT_FALSE(follower.read_new());  // no file yet
    EXPECT_TRUE(follower.curve().empty());
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t n = std::min<std::size_t>(text.size() - at, 1 + rng() % 90000);
      append(p, text.substr(at, n));
      at += n;
      follower.read_new();
      // At every point, what one parse of the complete lines so far finds.
      const std::string written = text.substr(0, at);
      expect_same(follower.curve(), batch(written.substr(0, written.rfind('\n') + 1)));
    }
    EXPECT_EQ(follower.offset(), text.size());
    append(p, "\n");  // the last line ends
    EXPECT_TRUE(follower.read_new());
    ASSERT_FALSE(follower.curve().empty());
    EXPECT_EQ(follower.curve().back().step, 1000);
    EXPECT_EQ(follower.curve().back().value, 0.125);
  }
}

TEST(IntermediateFollower, ReadsAFileLargerThanOneReadOverSeveralCalls) {
  const fs::path p = scratch("large");
  std::string text;
  for (int i = 0; text.size() < IntermediateFollower::kMaxReadBytes + 1000; ++i)
    text += "loss=" + std::to_string(i) + " step=" + std::to_string(i) + "\n";
  append(p, text);
  IntermediateFollower follower(p, "loss");
  EXPECT_TRUE(follower.read_new());
  EXPECT_EQ(follower.offset(), IntermediateFollower::kMaxReadBytes);
  EXPECT_LT(follower.curve().size(), batch(text).size());
  EXPECT_TRUE(follower.read_new());
  expect_same(follower.curve(), batch(text));
}

// A trainer that logs SMAC's cost (a metric here) every batch and the objective every epoch: read
// piece by piece, the curve was cost's until the objective's first line, and good trials were
// stopped on it (review of the pruning change). The follower never takes cost's values.
TEST(IntermediateFollower, NeverTakesCostsValuesForTheObjectives) {
  const fs::path p = scratch("cost");
  IntermediateFollower follower(p, "loss");
  append(p, "cost=3 step=0\n");
  EXPECT_FALSE(follower.read_new());
  EXPECT_TRUE(follower.curve().empty());
  // (One parse of the whole file reads cost as the objective while nothing names it.)
  EXPECT_EQ(tune::adapters::parse_trial_output("cost=3 step=0\n", "", {.objective_name = "loss"}).intermediate.size(), 1u);
  append(p, "loss=0.5 step=0\ncost=6 step=1\n");
  EXPECT_TRUE(follower.read_new());
  append(p, "cost=9 step=2\n");
  EXPECT_FALSE(follower.read_new());
  append(p, "loss=0.25 step=1\n");
  EXPECT_TRUE(follower.read_new());
  ASSERT_EQ(follower.curve().size(), 2u);
  EXPECT_EQ(follower.curve()[0].value, 0.5);
  EXPECT_EQ(follower.curve()[1].value, 0.25);
}

}  // namespace
