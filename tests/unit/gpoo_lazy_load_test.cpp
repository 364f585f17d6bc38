// A loaded gpoo study checks its rounds on the tree alone and builds the search (the replay of every
// round, seconds at thousands of trials) at its first use: `tune status` and `tune tell` load and
// save a campaign without using the model, and paid for the replay. The reference is the study
// that was never saved: the loaded one must recommend, tell and ask as it does, bit for bit, and a
// damaged state must still be refused at the load.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>

#include "tune/io/yaml_values.hpp"
#include "tune/strategy/gpoo_strategy.hpp"
#include "tune/tune.hpp"

namespace tune {
namespace {

double f(const Eigen::VectorXd& u) { return std::pow(u[0] - 0.3, 2) + std::pow(u[1] - 0.7, 2) + 0.1 * std::sin(9 * u[0]); }

// 45 rounds told, then one asked and left pending (the round the last proposal made, undecided).
Study campaign(std::uint64_t& pending) {
  Study study(Space({Parameter::floating("x", 0, 1), Parameter::floating("y", 0, 1)}), make_strategy("gpoo", YAML::Node()),
              {.direction = Direction::minimize, .seed = 5});
  for (int i = 0; i < 45; ++i) {
    const auto a = study.ask();
    if (!a) throw std::runtime_error(study.stop_reason());
    study.tell(a->id, f(study.trial(a->id).unit));
  }
  pending = study.ask()->id;
  return study;
}

const GpooStrategy& gpoo(const Study& s) { return dynamic_cast<const GpooStrategy&>(s.strategy()); }

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

TEST(GpooLoad, TheSearchIsBuiltAtItsFirstUseAndAgreesWithTheUninterruptedStudy) {
  std::uint64_t pending = 0;
  Study study = campaign(pending);
  const std::string text = study.to_yaml_string();

  // A load and a tell (what `tune tell` does) build no search, and save what the original saves.
  Study told = Study::from_yaml_string(text, "test");
  EXPECT_FALSE(gpoo(told).has_search());
  const double value = f(study.trial(pending).unit);
  told.tell(pending, value);
  EXPECT_FALSE(gpoo(told).has_search());

  // The recommendation of a loaded study builds it (once) and is the original's, bit for bit.
  Study loaded = Study::from_yaml_string(text, "test");
  const auto want = study.recommendation();
  const auto got = loaded.recommendation();
  ASSERT_TRUE(want && got);
  EXPECT_TRUE(gpoo(loaded).has_search());
  EXPECT_EQ(got->unit, want->unit);
  EXPECT_EQ(bits(got->mean), bits(want->mean));
  EXPECT_EQ(bits(got->sd), bits(want->sd));

  // The next asks, after the pending trial completes, agree bit for bit (point and b-value), with
  // the study told after its load and with the one that had recommended.
  study.tell(pending, value);
  loaded.tell(pending, value);
  EXPECT_EQ(told.to_yaml_string(), study.to_yaml_string());
  for (int i = 0; i < 3; ++i) {
    const auto s = study.ask();
    const auto t = told.ask();
    const auto l = loaded.ask();
    ASSERT_TRUE(s && t && l);
    EXPECT_EQ(told.trial(t->id).unit, study.trial(s->id).unit) << "ask " << i;
    EXPECT_EQ(loaded.trial(l->id).unit, study.trial(s->id).unit) << "ask " << i;
    EXPECT_EQ(bits(told.trial(t->id).acquisition), bits(study.trial(s->id).acquisition)) << "ask " << i;
    const double v = f(study.trial(s->id).unit);
    study.tell(s->id, v);
    told.tell(t->id, v);
    loaded.tell(l->id, v);
  }
}

TEST(GpooLoad, DamagedRoundsAreRefusedAtTheLoadWithoutTheSearch) {
  std::uint64_t pending = 0;
  const Study study = campaign(pending);
  const YAML::Node root = YAML::Load(study.to_yaml_string());
  const auto damaged = [&](const auto& edit) {
    YAML::Node copy = YAML::Clone(root);
    edit(copy["strategy"]["state"]);
    return copy;
  };
  const std::size_t rounds = root["strategy"]["state"]["rounds"].size();
  ASSERT_GT(root["strategy"]["state"]["expand_sequence"].size(), 3u);
  // A decided round observing the root, expanded by then.
  EXPECT_THROW(Study::from_yaml(damaged([](YAML::Node s) { s["rounds"][5]["node"] = 0; })), StateError);
  // The undecided round (the pending trial's) in a cell that is no leaf.
  EXPECT_THROW(Study::from_yaml(damaged([&](YAML::Node s) { s["rounds"][rounds - 1]["node"] = 0; })), StateError);
  // An expansion that no round made, and the root's expansion missing (later rounds observe its
  // children).
  EXPECT_THROW(Study::from_yaml(damaged([](YAML::Node s) { s["expand_sequence"].push_back(1); })), StateError);
  EXPECT_THROW(Study::from_yaml(damaged([](YAML::Node s) {
                 YAML::Node without_root(YAML::NodeType::Sequence);
                 for (std::size_t i = 1; i < s["expand_sequence"].size(); ++i) without_root.push_back(s["expand_sequence"][i]);
                 s["expand_sequence"] = without_root;
               })),
               StateError);
  // A decided round with neither a value nor a fantasy: the pending trial's, marked decided.
  EXPECT_THROW(Study::from_yaml(damaged([&](YAML::Node s) { s["decided"] = rounds; })), StateError);
  // The undamaged state loads.
  EXPECT_NO_THROW(Study::from_yaml(root));
}

}  // namespace
}  // namespace tune
