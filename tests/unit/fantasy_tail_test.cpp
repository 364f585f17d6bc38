// GaussianProcess::attach_fantasy_tail (failed trials' fantasies kept between asks) against the
// model that adds each fantasy afresh at its capped posterior mean, and against itself rebuilt the
// way a resumed campaign rebuilds it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/random/rng.hpp"

namespace {

using tune::GaussianProcess;
using tune::GpHyperparameters;
using tune::Observation;
using tune::PointQuery;
using tune::Standardization;

constexpr double kNoCap = std::numeric_limits<double>::infinity();

Eigen::VectorXd random_point(std::mt19937_64& rng) {
  return Eigen::Vector2d(tune::uniform01(rng), tune::uniform01(rng));
}

// Two offset groups with scales and discrepancies, three noise groups, points and a box: the
// structure a cmets model has.
GpHyperparameters level_hyperparameters(double lengthscale = 0.3) {
  GpHyperparameters hp;
  hp.kernel = tune::KernelType::squared_exponential;
  hp.lengthscales = Eigen::Vector2d(lengthscale, 0.4);
  hp.noise_variances = {0.01, 0.05, 0.002};
  hp.offset_variance = 1.1;
  hp.discrepancy_ratios = {0.3, 0.7};
  hp.group_scales = {0.8, 1.3};
  return hp;
}

Observation random_observation(std::mt19937_64& rng, int i) {
  const Eigen::VectorXd x = random_point(rng);
  Observation o{PointQuery{x}, std::sin(6 * x(0)) + x(1) + 0.1 * tune::uniform01(rng), static_cast<std::size_t>(i % 3)};
  if (i % 7 == 6) o.query = tune::BoxQuery{x * 0.5, x * 0.5 + Eigen::Vector2d::Constant(0.2)};
  if (i % 3 > 0) o.offset_group = static_cast<std::size_t>(i % 3 - 1);
  return o;
}

std::vector<Observation> observations(std::mt19937_64& rng, int count, int first_index = 0) {
  std::vector<Observation> out;
  for (int i = 0; i < count; ++i) out.push_back(random_observation(rng, first_index + i));
  return out;
}

Eigen::MatrixXd random_points(std::mt19937_64& rng, int count) {
  Eigen::MatrixXd X(2, count);
  for (int j = 0; j < count; ++j) X.col(j) = random_point(rng);
  return X;
}

// What the strategies did before the tail: each fantasy added in turn at its posterior mean given
// the rows before it, no higher than its cap.
void add_capped_fantasies(GaussianProcess& gp, std::vector<Observation> rows, const std::vector<double>& caps) {
  for (std::size_t j = 0; j < rows.size(); ++j) {
    rows[j].value = std::min(gp.predict(rows[j]).mean, caps[j]);
    gp.add(rows[j]);
  }
}

void expect_same_posterior(const GaussianProcess& actual, const GaussianProcess& expected,
                           const std::vector<std::size_t>& actual_slots, const std::vector<std::size_t>& expected_slots,
                           const Eigen::MatrixXd& probes, double tol) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual.observations()[i].value, expected.observations()[i].value, tol) << "row " << i;
  for (Eigen::Index j = 0; j < probes.cols(); ++j) {
    const tune::Prediction a = actual.predict(Eigen::VectorXd(probes.col(j)));
    const tune::Prediction e = expected.predict(Eigen::VectorXd(probes.col(j)));
    EXPECT_NEAR(a.mean, e.mean, tol) << "probe " << j;
    EXPECT_NEAR(a.variance, e.variance, tol) << "probe " << j;
  }
  Eigen::VectorXd am, av, em, ev;
  actual.tracked_prediction(am, av);
  expected.tracked_prediction(em, ev);
  ASSERT_EQ(am.size(), em.size());
  if (am.size() > 0) {
    EXPECT_LE((am - em).cwiseAbs().maxCoeff(), tol);
    EXPECT_LE((av - ev).cwiseAbs().maxCoeff(), tol);
  }
  for (std::size_t a = 0; a < actual_slots.size(); ++a)
    for (std::size_t b = a; b < actual_slots.size(); ++b) {
      const tune::PairPrediction p = actual.predict_tracked_pair(actual_slots[a], actual_slots[b]);
      const tune::PairPrediction q = expected.predict_tracked_pair(expected_slots[a], expected_slots[b]);
      EXPECT_LE((p.mean - q.mean).cwiseAbs().maxCoeff(), tol) << a << ", " << b;
      EXPECT_LE((p.covariance - q.covariance).cwiseAbs().maxCoeff(), tol) << a << ", " << b;
    }
}

// Caps of three kinds: none, below the fantasy's mean (it is pulled down) and above it (no effect).
std::vector<double> caps_for(const std::vector<Observation>& rows) {
  std::vector<double> caps;
  for (std::size_t j = 0; j < rows.size(); ++j) caps.push_back(j % 3 == 0 ? kNoCap : j % 3 == 1 ? -1.5 : 50.0);
  return caps;
}

// The tail, attached ask after ask while the model grows, equals adding the fantasies afresh:
// values, predictions anywhere, tracked points and tracked targets, with pending fantasies on top.
TEST(FantasyTail, EqualsAddingEveryFantasyAfreshAtItsCappedMean) {
  std::mt19937_64 rng(7);
  const std::vector<Observation> data = observations(rng, 60);
  const std::vector<Observation> failed = observations(rng, 12, 100);
  const std::vector<Observation> targets = observations(rng, 9, 200);
  const Eigen::MatrixXd points = random_points(rng, 15);
  const Eigen::MatrixXd probes = random_points(rng, 6);

  GaussianProcess kept(2, level_hyperparameters(), Standardization{0.4, 1.3});
  kept.track(points);
  std::vector<std::size_t> slots;
  for (const Observation& t : targets) slots.push_back(kept.track_target(t));
  std::size_t added = 0;
  for (std::size_t failures : {0, 1, 1, 3, 4, 8, 12, 12}) {
    for (std::size_t k = 0; k < 7 && added < data.size(); ++k) kept.add(data[added++]);
    const std::vector<Observation> tail(failed.begin(), failed.begin() + static_cast<long>(failures));
    const std::vector<double> caps = caps_for(tail);

    GaussianProcess fresh(2, level_hyperparameters(), Standardization{0.4, 1.3});
    fresh.track(points);
    std::vector<std::size_t> fresh_slots;
    for (const Observation& t : targets) fresh_slots.push_back(fresh.track_target(t));
    fresh.add(std::vector<Observation>(data.begin(), data.begin() + static_cast<long>(added)));
    add_capped_fantasies(fresh, tail, caps);

    const tune::TruncateOnExit drop(kept);
    kept.attach_fantasy_tail(tail, caps);
    EXPECT_TRUE(kept.fantasy_tail_attached());
    expect_same_posterior(kept, fresh, slots, fresh_slots, probes, 1e-9);
    // A pending trial's fantasy goes on top of the tail, in both.
    Observation pending = random_observation(rng, 1);
    pending.value = kept.predict(pending).mean;
    kept.add(pending);
    fresh.add(pending);
    expect_same_posterior(kept, fresh, slots, fresh_slots, probes, 1e-9);
  }
  EXPECT_FALSE(kept.fantasy_tail_attached());
  EXPECT_EQ(kept.size(), added);
}

// A capped fantasy pulls the mean down to its cap where the model expected better; an uncapped one
// leaves every mean where it was and only narrows the variance.
TEST(FantasyTail, OnlyCappedFantasiesMoveTheMean) {
  std::mt19937_64 rng(11);
  GaussianProcess gp(2, level_hyperparameters(), Standardization{0.0, 1.0});
  gp.add(observations(rng, 30));
  Observation at{PointQuery{Eigen::Vector2d(0.3, 0.6)}, 0.0, 0};
  const tune::Prediction before = gp.predict(at);
  {
    const tune::TruncateOnExit drop(gp);
    gp.attach_fantasy_tail({at}, {kNoCap});
    const tune::Prediction uncapped = gp.predict(at);
    EXPECT_NEAR(uncapped.mean, before.mean, 1e-12);
    EXPECT_LT(uncapped.variance, before.variance);
    EXPECT_NEAR(gp.observations().back().value, before.mean, 1e-12);
  }
  {
    const tune::TruncateOnExit drop(gp);
    const double cap = before.mean - 2.0;
    gp.attach_fantasy_tail({at}, {cap});
    EXPECT_EQ(gp.observations().back().value, cap);
    EXPECT_LT(gp.predict(at).mean, before.mean - 1.0);
  }
  EXPECT_EQ(gp.size(), 30u);
  EXPECT_NEAR(gp.predict(at).mean, before.mean, 1e-12);
}

// The original grows one observation per ask, sees failures arrive, targets tracked early and late in
// reused slots, a refit and pending fantasies; the resumed model adds everything at once and
// attaches the whole tail in its first ask. Every number is the same, to the bit.
TEST(FantasyTail, SameBitsWhateverTheHistory) {
  std::mt19937_64 rng(13);
  const std::vector<Observation> data = observations(rng, 45);
  const std::vector<Observation> failed = observations(rng, 9, 300);
  const std::vector<Observation> targets = observations(rng, 10, 400);
  const Eigen::MatrixXd points = random_points(rng, 12);
  const Eigen::MatrixXd probes = random_points(rng, 5);
  GpHyperparameters refitted = level_hyperparameters(0.22);
  refitted.group_scales = {0.6, 1.5};

  GaussianProcess original(2, level_hyperparameters(), Standardization{0.1, 1.2});
  original.track(points);
  std::vector<std::size_t> at_original(targets.size());
  const std::size_t scratch = original.track_target(targets[9]);
  for (std::size_t j = 0; j < 4; ++j) at_original[j] = original.track_target(targets[j]);
  std::size_t failures = 0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    original.add(data[i]);
    if (i == 20) original.reset(refitted, Standardization{-0.2, 0.9});
    if (i == 25) original.untrack_target(scratch);
    if (i == 30)
      for (std::size_t j = 4; j < targets.size(); ++j) at_original[j] = original.track_target(targets[j]);
    if (i % 4 == 3 && failures < failed.size()) ++failures;
    const std::vector<Observation> tail(failed.begin(), failed.begin() + static_cast<long>(failures));
    const tune::TruncateOnExit drop(original);
    original.attach_fantasy_tail(tail, caps_for(tail));
    original.add(random_observation(rng, 1));  // a pending trial
  }
  ASSERT_EQ(failures, failed.size());

  GaussianProcess resumed(2, refitted, Standardization{-0.2, 0.9});
  resumed.add(data);
  resumed.track(points);
  std::vector<std::size_t> at_resumed(targets.size());
  const std::vector<std::size_t> batch = resumed.track_targets(std::vector<Observation>(targets.rbegin(), targets.rend()));
  for (std::size_t j = 0; j < targets.size(); ++j) at_resumed[j] = batch[targets.size() - 1 - j];

  const tune::TruncateOnExit drop_original(original);
  const tune::TruncateOnExit drop_resumed(resumed);
  original.attach_fantasy_tail(failed, caps_for(failed));
  resumed.attach_fantasy_tail(failed, caps_for(failed));
  const Observation pending = random_observation(rng, 2);
  original.add(pending);
  resumed.add(pending);
  EXPECT_TRUE(original.cholesky_factor() == resumed.cholesky_factor());
  EXPECT_TRUE(original.whitened_targets() == resumed.whitened_targets());
  expect_same_posterior(original, resumed, at_original, at_resumed, probes, 0.0);
}

// Attaches `rows` to gp and checks it against a model of `data` with the fantasies added afresh.
void expect_as_added_afresh(GaussianProcess& gp, const std::vector<Observation>& data,
                            const std::vector<Observation>& rows, const Eigen::MatrixXd& probes) {
  GaussianProcess fresh(2, level_hyperparameters(), Standardization{});
  fresh.add(data);
  add_capped_fantasies(fresh, rows, caps_for(rows));
  const tune::TruncateOnExit drop(gp);
  gp.attach_fantasy_tail(rows, caps_for(rows));
  expect_same_posterior(gp, fresh, {}, {}, probes, 1e-9);
}

// A model truncated below the observations the kept block was made from, then grown with other
// observations, does not reuse it.
TEST(FantasyTail, AModelThatShrankDoesNotReuseTheBlock) {
  std::mt19937_64 rng(17);
  const std::vector<Observation> data = observations(rng, 30);
  const std::vector<Observation> failed = observations(rng, 4, 500);
  const Eigen::MatrixXd probes = random_points(rng, 5);
  GaussianProcess gp(2, level_hyperparameters(), Standardization{});
  gp.add(std::vector<Observation>(data.begin(), data.begin() + 20));
  {
    const tune::TruncateOnExit drop(gp);
    gp.attach_fantasy_tail(failed, caps_for(failed));
  }
  gp.truncate(15);
  gp.add(std::vector<Observation>(data.begin() + 20, data.end()));
  std::vector<Observation> now(data.begin(), data.begin() + 15);
  now.insert(now.end(), data.begin() + 20, data.end());
  expect_as_added_afresh(gp, now, failed, probes);
}

// Different rows than last time (not the same first rows) are a new block, not a stale one.
TEST(FantasyTail, OtherRowsThanLastTimeAreMadeAfresh) {
  std::mt19937_64 rng(19);
  const std::vector<Observation> data = observations(rng, 25);
  const std::vector<Observation> failed = observations(rng, 5, 600);
  const Eigen::MatrixXd probes = random_points(rng, 5);
  GaussianProcess gp(2, level_hyperparameters(), Standardization{});
  gp.add(data);
  {
    const tune::TruncateOnExit drop(gp);
    gp.attach_fantasy_tail(failed, caps_for(failed));
  }
  expect_as_added_afresh(gp, data, std::vector<Observation>(failed.rbegin(), failed.rend()), probes);
}

TEST(FantasyTail, RefusesWhatWouldLeaveItStale) {
  std::mt19937_64 rng(23);
  GaussianProcess gp(2, level_hyperparameters(), Standardization{});
  gp.add(observations(rng, 10));
  const std::vector<Observation> failed = observations(rng, 2, 700);
  EXPECT_THROW(gp.attach_fantasy_tail(failed, {kNoCap}), std::invalid_argument);
  EXPECT_THROW(gp.attach_fantasy_tail(failed, {kNoCap, std::nan("")}), std::invalid_argument);
  EXPECT_THROW(gp.attach_fantasy_tail({Observation{PointQuery{Eigen::Vector3d::Zero()}, 0.0, 0}}, {kNoCap}),
               std::invalid_argument);
  EXPECT_FALSE(gp.fantasy_tail_attached());
  const tune::TruncateOnExit drop(gp);
  gp.attach_fantasy_tail(failed, {kNoCap, kNoCap});
  EXPECT_THROW(gp.attach_fantasy_tail(failed, {kNoCap, kNoCap}), std::logic_error);
  EXPECT_THROW(gp.track(random_points(rng, 3)), std::logic_error);
  EXPECT_THROW(gp.reset(level_hyperparameters(), Standardization{}), std::logic_error);
}

// A target tracked while the failed trials' tail and pending fantasies are on (cmets keeps an ask's
// fantasies for the next ask, whose new tree nodes are tracked then) has, to the bit, the column
// it would have had if tracked before them, and stays so through the next attach.
TEST(FantasyTail, ATargetTrackedWithTheFantasiesOnHasTheColumnItWouldHaveHad) {
  std::mt19937_64 rng(29);
  const std::vector<Observation> data = observations(rng, 40);
  const std::vector<Observation> failed = observations(rng, 3, 500);
  const std::vector<Observation> pending = observations(rng, 4, 600);
  const std::vector<Observation> targets = observations(rng, 40, 800);  // > 32: the transposed fill too
  const std::vector<Observation> later = observations(rng, 5, 900);
  for (bool with_tail : {true, false}) {
    GaussianProcess before(2, level_hyperparameters(), Standardization{0.1, 1.3});
    GaussianProcess during(2, level_hyperparameters(), Standardization{0.1, 1.3});
    for (GaussianProcess* gp : {&before, &during}) gp->add(data);
    const std::vector<std::size_t> early = before.track_targets(targets);
    const std::vector<Observation> tail = with_tail ? failed : std::vector<Observation>{};
    for (GaussianProcess* gp : {&before, &during}) {
      gp->attach_fantasy_tail(tail, std::vector<double>(tail.size(), kNoCap));
      add_capped_fantasies(*gp, pending, std::vector<double>(pending.size(), kNoCap));
    }
    const std::vector<std::size_t> late = during.track_targets(targets);
    const auto expect_same_columns = [&] {
      for (std::size_t k = 0; k < targets.size(); ++k) {
        const tune::PairPrediction a = before.predict_tracked_pair(early[k], early[(k + 1) % early.size()]);
        const tune::PairPrediction b = during.predict_tracked_pair(late[k], late[(k + 1) % late.size()]);
        EXPECT_TRUE((a.mean.array() == b.mean.array()).all()) << "target " << k << (with_tail ? " with" : " without") << " tail";
        EXPECT_TRUE((a.covariance.array() == b.covariance.array()).all()) << "target " << k;
      }
    };
    expect_same_columns();
    // The next ask: the model grew by results, the tail is attached again with the same rows.
    for (GaussianProcess* gp : {&before, &during}) {
      gp->truncate(data.size());
      gp->add(later);
      gp->attach_fantasy_tail(tail, std::vector<double>(tail.size(), kNoCap));
      add_capped_fantasies(*gp, pending, std::vector<double>(pending.size(), kNoCap));
    }
    expect_same_columns();
  }
}

}  // namespace
