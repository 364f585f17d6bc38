// Study::tell is all or nothing: when the strategy's on_complete throws (it refuses the value, an
// internal error), the trial stays pending with no value and the strategy is as it was before the
// tell, so the study can be told again, failed, saved and loaded as if the refused tell never came.
// The reference is a study driven the same way without the refused tell.
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>

#include "tune/tune.hpp"

namespace {

using tune::Study;

constexpr double kRefused = 13.0;

// A real strategy (`ei`, `cmets`, ...) whose on_complete throws for the value kRefused, after the
// real strategy has taken it in (`after` = true: an internal error half way through) or before
// (false: a value it refuses). It saves as the real strategy, so a saved study loads without it.
class Refusing : public tune::Strategy {
 public:
  Refusing(std::unique_ptr<tune::Strategy> inner, bool after) : inner_(std::move(inner)), after_(after) {}
  std::string name() const override { return inner_->name(); }
  tune::ProposalResult propose(const tune::StrategyContext& c) override { return inner_->propose(c); }
  void check_levels(std::size_t levels) const override { inner_->check_levels(levels); }
  void check_space(const tune::Space& space) const override { inner_->check_space(space); }
  bool accepts_enqueued_trials() const override { return inner_->accepts_enqueued_trials(); }
  bool keeps_to_cost_budget() const override { return inner_->keeps_to_cost_budget(); }
  void on_complete(const tune::StrategyContext& c, const tune::Trial& t) override {
    const bool refuse = t.value && *t.value == kRefused;
    if (refuse && !after_) throw std::invalid_argument("the strategy refuses " + std::to_string(*t.value));
    inner_->on_complete(c, t);
    if (refuse) throw std::runtime_error("internal error after taking in trial " + std::to_string(t.id));
  }
  std::optional<tune::Recommendation> recommend(const tune::StrategyContext& c) const override {
    return inner_->recommend(c);
  }
  YAML::Node save() const override { return inner_->save(); }
  void restore(const YAML::Node& node, const tune::StrategyContext& c) override { inner_->restore(node, c); }

 private:
  std::unique_ptr<tune::Strategy> inner_;
  bool after_;
};

tune::Space space() {
  return tune::Space({tune::Parameter::floating("x", -2, 2), tune::Parameter::floating("y", -1, 3)});
}

double value_of(const tune::Config& c) {
  const double x = std::get<double>(c.at("x")), y = std::get<double>(c.at("y"));
  return (x - 0.5) * (x - 0.5) + (y - 1) * (y - 1);
}

// Asks and tells `n` trials (the value of each configuration).
void drive(Study& s, int n) {
  for (int i = 0; i < n; ++i) {
    const auto sug = s.ask();
    ASSERT_TRUE(sug);
    s.tell(sug->id, value_of(sug->config));
  }
}

struct Case {
  std::string strategy;
  bool after;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.strategy << (c.after ? ", throwing after" : ", throwing before"); }

class StudyTellAtomic : public ::testing::TestWithParam<Case> {};

TEST_P(StudyTellAtomic, ARefusedTellLeavesTheStudyAsIfItNeverCame) {
  const auto [name, after] = GetParam();
  const tune::StudyOptions options{.direction = tune::Direction::minimize, .seed = 11};
  Study study(space(), std::make_unique<Refusing>(tune::make_strategy(name), after), options);
  Study reference(space(), tune::make_strategy(name), options);
  drive(study, 8);  // past the initial design: the model takes the next result in
  drive(reference, 8);
  const auto sug = study.ask();
  const auto ref = reference.ask();
  ASSERT_TRUE(sug && ref);
  ASSERT_EQ(sug->id, ref->id);

  EXPECT_ANY_THROW(study.tell(sug->id, kRefused));
  const tune::Trial& t = study.trial(sug->id);
  EXPECT_EQ(t.status, tune::TrialStatus::pending);
  EXPECT_FALSE(t.value.has_value());
  EXPECT_EQ(study.pending_count(), 1u);
  // The saved study is the reference's, and loads (a strategy left holding the refused trial made
  // ei's model name a trial that is not complete: a file that cannot be loaded).
  EXPECT_EQ(study.to_yaml_string(), reference.to_yaml_string());
  const Study loaded = Study::from_yaml_string(study.to_yaml_string(), "refused.yaml");
  EXPECT_EQ(loaded.trial(sug->id).status, tune::TrialStatus::pending);

  // Told again with an accepted value, it goes on as the reference does.
  study.tell(sug->id, value_of(sug->config));
  reference.tell(ref->id, value_of(ref->config));
  EXPECT_EQ(study.to_yaml_string(), reference.to_yaml_string());
  for (int i = 0; i < 3; ++i) {
    const auto a = study.ask();
    const auto b = reference.ask();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->config, b->config) << "ask " << i << " after the refused tell";
    study.tell(a->id, value_of(a->config));
    reference.tell(b->id, value_of(b->config));
  }
}

// What the tuner does with a tell that throws: it records the trial failed with the reason. The
// trial was left complete, so fail() threw "already complete" and ended the tuner's session.
TEST_P(StudyTellAtomic, ARefusedTrialCanBeFailed) {
  const auto [name, after] = GetParam();
  Study study(space(), std::make_unique<Refusing>(tune::make_strategy(name), after), {.seed = 3});
  drive(study, 6);
  const auto sug = study.ask();
  ASSERT_TRUE(sug);
  std::string reason;
  try {
    study.tell(sug->id, kRefused);
  } catch (const std::exception& e) {
    reason = e.what();
  }
  ASSERT_FALSE(reason.empty()) << "the tell was not refused";
  study.fail(sug->id, reason);
  EXPECT_EQ(study.trial(sug->id).status, tune::TrialStatus::failed);
  EXPECT_EQ(study.trial(sug->id).failure_reason, reason);
  Study loaded = Study::from_yaml_string(study.to_yaml_string(), "failed.yaml");
  EXPECT_EQ(loaded.trial(sug->id).status, tune::TrialStatus::failed);
  EXPECT_TRUE(loaded.ask().has_value());
}

INSTANTIATE_TEST_SUITE_P(Strategies, StudyTellAtomic,
                         ::testing::Values(Case{"ei", true}, Case{"ei", false}, Case{"ucb", true}, Case{"random", true},
                                           Case{"bnb", true}, Case{"gpoo", true}),
                         [](const ::testing::TestParamInfo<Case>& param) {
                           return param.param.strategy + (param.param.after ? "_after" : "_before");
                         });

}  // namespace
