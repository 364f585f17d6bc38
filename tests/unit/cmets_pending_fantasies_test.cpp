// cmets and cmes keep an ask's fantasies (failed trials' tail, pending trials' rows) on the model for
// the next ask, which adds only the new pending trial's. A burst of asks without tells must suggest
// exactly what the same study saved and loaded just before each ask suggests (its strategy makes
// every fantasy afresh): bit for bit, with failed trials, and with a tell, a failure and a
// recommendation between the asks, each of which must drop the kept fantasies.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/random/rng.hpp"
#include "tune/strategy/multi_resolution_search.hpp"
#include "tune/tune.hpp"

namespace {

tune::Space square() {
  return tune::Space({tune::Parameter::floating("x", 0, 1), tune::Parameter::floating("y", 0, 1)});
}

double objective(const Eigen::VectorXd& u, std::size_t level) {
  const double f = -4.0 * ((u(0) - 0.3) * (u(0) - 0.3) + (u(1) - 0.7) * (u(1) - 0.7)) + 0.3 * std::sin(5 * u(0));
  return f - 0.4 * static_cast<double>(2 - level) + 0.01 * std::cos(40 * u(1));
}

tune::Study make_study(bool tree) {
  tune::StudyOptions o;
  o.direction = tune::Direction::maximize;
  o.seed = 5;
  o.resolution = tune::Resolution{"epochs", {1, 3, 9}, {1, 3, 9}};
  o.cost_budget = 5000;
  tune::MultiResolutionOptions m;
  m.tree = tree;
  m.candidates = 256;
  return tune::Study(square(), std::make_unique<tune::MultiResolutionSearch>(m), o);
}

void run_burst(bool tree) {
  tune::Study study = make_study(tree);
  // A history with failures (every fifth trial), one trial at a time.
  for (int i = 0; i < 24; ++i) {
    const auto s = study.ask();
    ASSERT_TRUE(s);
    const tune::Trial& t = study.trial(s->id);
    if (i % 5 == 4) study.fail(s->id, "test failure");
    else study.tell(s->id, objective(t.unit, *t.level));
  }
  std::vector<std::uint64_t> pending;
  for (int k = 0; k < 36; ++k) {
    if (k == 12) {  // a result for a trial in the middle of the pending ones
      const tune::Trial& t = study.trial(pending[pending.size() / 2]);
      study.tell(t.id, objective(t.unit, *t.level));
    }
    if (k == 20) study.fail(pending[3], "test failure");
    tune::Study fresh = tune::Study::from_yaml_string(study.to_yaml_string(), "test");
    if (k == 28) {  // the recommendation comes from the model without the fantasies
      const auto ra = study.recommendation();
      const auto rb = fresh.recommendation();
      ASSERT_TRUE(ra && rb);
      EXPECT_TRUE((ra->unit.array() == rb->unit.array()).all());
      EXPECT_EQ(ra->mean, rb->mean);
      EXPECT_EQ(ra->sd, rb->sd);
    }
    const auto a = study.ask();
    const auto b = fresh.ask();
    ASSERT_EQ(a.has_value(), b.has_value()) << "ask " << k;
    if (!a) break;
    const tune::Trial& ta = study.trial(a->id);
    const tune::Trial& tb = fresh.trial(b->id);
    EXPECT_TRUE((ta.unit.array() == tb.unit.array()).all()) << "ask " << k << (tree ? " (cmets)" : " (cmes)");
    EXPECT_EQ(ta.level, tb.level) << "ask " << k;
    EXPECT_EQ(ta.acquisition, tb.acquisition) << "ask " << k;
    EXPECT_EQ(ta.model_size, tb.model_size) << "ask " << k;
    pending.push_back(a->id);
  }
  // The model a caller sees holds no fantasy.
  const auto& strategy = dynamic_cast<const tune::MultiResolutionSearch&>(study.strategy());
  std::size_t complete = 0;
  for (const tune::Trial& t : study.trials()) complete += t.status == tune::TrialStatus::complete;
  EXPECT_EQ(strategy.model_size(), complete);
  ASSERT_NE(strategy.model(), nullptr);
  EXPECT_EQ(strategy.model()->size(), complete);
}

TEST(CmetsPendingFantasies, AskBurstSuggestsWhatAFreshLoadSuggests) { run_burst(true); }
TEST(CmetsPendingFantasies, CmesAskBurstSuggestsWhatAFreshLoadSuggests) { run_burst(false); }

// A fantasy's value is predict_mean, which skips the variance's solve: the same bits as predict's mean.
TEST(CmetsPendingFantasies, PredictMeanIsPredictsMeanToTheBit) {
  tune::GpHyperparameters hp;
  hp.kernel = tune::KernelType::squared_exponential;
  hp.lengthscales = Eigen::Vector2d(0.2, 0.3);
  hp.noise_variances = {1e-4, 1e-2};
  hp.offset_variance = 2.0;
  hp.group_scales = {0.7};
  tune::GaussianProcess gp(2, hp, {0.3, 1.9});
  EXPECT_EQ(gp.predict_mean(tune::Observation{tune::PointQuery{Eigen::Vector2d(0.5, 0.5)}, 0.0, 0}), 0.3);
  tune::Rng rng(3);
  for (int i = 0; i < 60; ++i) {
    Eigen::VectorXd x(2);
    x << tune::uniform01(rng), tune::uniform01(rng);
    tune::Observation o{tune::PointQuery{x}, std::sin(7 * x(0)) * x(1), static_cast<std::size_t>(i % 2)};
    if (i % 2) o.offset_group = 0;
    const tune::Prediction p = gp.predict(o);
    EXPECT_EQ(gp.predict_mean(o), p.mean) << i;
    gp.add(o);
  }
}

}  // namespace
