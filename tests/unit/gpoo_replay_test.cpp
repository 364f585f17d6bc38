// GpooSearch at the sizes where its shortcuts matter: replay() goes through rounds in blocks and
// brings the leaves a block does not observe up to date after it, expanded nodes keep no column,
// kbar is recomputed (S = 1) or memoised in one row per node over the observed nodes (S > 1,
// cells), and the recommendation's f at a point comes from the search's own factor with the rounds
// told a fantasy deleted (point_posterior) rather than from a new exact GP. Each is checked against
// an independent path: the search told round by round (bit for bit), and batch formulas built from
// the kernel alone (kbar as the mean of the S x S kernel matrix or the box-box covariance, the Gram
// matrix of the kept rounds factorised by Eigen's LLT).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "tune/gp/observation.hpp"
#include "tune/strategy/gpoo_search.hpp"
#include "tune/strategy/gpoo_strategy.hpp"
#include "tune/tune.hpp"

namespace tune {
namespace {

GpooSearchOptions options_3d(GpooAggregation aggregation, std::size_t S) {
  GpooSearchOptions o;
  o.aggregation = aggregation;
  o.representatives = S;
  o.branching = 2;
  o.max_depth = 30;
  o.kernel = Kernel(KernelType::squared_exponential, Eigen::Vector3d(0.3, 0.2, 0.4), 1.0);
  o.noise_variance = 1e-3;
  o.beta = GpooBeta::code;
  return o;
}

double reward(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper) {  // deterministic, cheap
  const Eigen::VectorXd c = 0.5 * (lower + upper);
  return std::sin(7.0 * c[0]) * std::cos(5.0 * c[1]) + c[2] * c[2];
}

GpooSearch told(const GpooSearchOptions& o, std::size_t rounds) {
  GpooSearch s(3, o);
  for (std::size_t t = 0; t < rounds; ++t) {
    const GpooQuery q = s.next();
    s.tell(q.node, reward(q.lower, q.upper));
  }
  return s;
}

// 150 rounds: four full blocks of replay and a partial one, with leaves created, observed and
// expanded inside blocks and leaves left waiting across them.
TEST(GpooReplay, BlockedReplayIsBitIdenticalToTellingRoundByRound) {
  for (GpooAggregation aggregation : {GpooAggregation::representatives, GpooAggregation::cell})
    for (std::size_t S : {1u, 3u}) {
      if (aggregation == GpooAggregation::cell && S == 3) continue;
      const GpooSearchOptions o = options_3d(aggregation, S);
      const GpooSearch s = told(o, 150);
      ASSERT_GT(s.expand_sequence().size(), 40u);
      const GpooSearch r = GpooSearch::replay(3, o, s.observations(), s.expand_sequence());
      ASSERT_EQ(r.tree().size(), s.tree().size());
      for (NodeId n = 0; n < s.tree().size(); ++n) {
        if (!s.tree().node(n).is_leaf()) continue;
        ASSERT_EQ(r.posterior(n).mean, s.posterior(n).mean) << "leaf " << n << " S " << S;  // bit for bit
        ASSERT_EQ(r.posterior(n).variance, s.posterior(n).variance) << "leaf " << n << " S " << S;
        ASSERT_EQ(r.b_value(n), s.b_value(n));
      }
      EXPECT_EQ(r.next().node, s.next().node);
      EXPECT_EQ(r.recommend().node, s.recommend().node);
      // And the two go on alike.
      GpooSearch a = s, b = r;
      for (int t = 0; t < 20; ++t) {
        const GpooQuery qa = a.next(), qb = b.next();
        ASSERT_EQ(qa.node, qb.node) << "round " << t;
        a.tell(qa.node, reward(qa.lower, qa.upper));
        b.tell(qb.node, reward(qb.lower, qb.upper));
      }
    }
}

// The posterior of every node (leaves from their kept columns, expanded nodes solved on demand)
// and the recommendation's means (k_n . alpha) against the batch formula over the node
// observations: mean = k^T A^{-1} y, var = kbar(n, n) - k^T A^{-1} k, A = Kbar + sigma^2 I.
TEST(GpooReplay, EveryNodesPosteriorMatchesTheBatchFormulaAfterManyRounds) {
  const GpooSearchOptions o = options_3d(GpooAggregation::representatives, 1);
  const GpooSearch s = told(o, 150);
  const auto& obs = s.observations();
  const auto t = static_cast<Eigen::Index>(obs.size());
  const auto centre = [&](NodeId n) { return s.tree().node(n).centre(); };
  Eigen::MatrixXd A(t, t);
  Eigen::VectorXd y(t);
  for (Eigen::Index i = 0; i < t; ++i) {
    y[i] = obs[static_cast<std::size_t>(i)].value;
    for (Eigen::Index j = 0; j < t; ++j)
      A(i, j) = o.kernel(centre(obs[static_cast<std::size_t>(i)].node), centre(obs[static_cast<std::size_t>(j)].node));
    A(i, i) += o.noise_variance;
  }
  const Eigen::LDLT<Eigen::MatrixXd> ldlt(A);
  const Eigen::VectorXd alpha = ldlt.solve(y);
  std::size_t expanded = 0;
  double best_mean = -1e300;
  for (NodeId n = 0; n < s.tree().size(); ++n) {
    Eigen::VectorXd k(t);
    for (Eigen::Index j = 0; j < t; ++j) k[j] = o.kernel(centre(n), centre(obs[static_cast<std::size_t>(j)].node));
    const double mean = k.dot(alpha);
    const double var = o.kernel(centre(n), centre(n)) - k.dot(ldlt.solve(k));
    const GpooPosterior p = s.posterior(n);
    EXPECT_NEAR(p.mean, mean, 1e-7) << "node " << n;
    EXPECT_NEAR(p.variance, std::max(0.0, var), 1e-7) << "node " << n;
    if (s.tree().node(n).expanded()) {
      ++expanded;
      best_mean = std::max(best_mean, mean);
    }
  }
  EXPECT_GT(expanded, 40u);
  // best_expanded is not the default of GpooSearchOptions; the deepest rule's depth is checked in
  // gpoo_search_test. Here: the recommended node's mean is the batch mean of that node.
  const GpooRecommendation r = s.recommend();
  EXPECT_TRUE(s.tree().node(r.node).expanded());
  EXPECT_NEAR(r.mean, s.posterior(r.node).mean, 1e-12);
  EXPECT_LE(r.mean, best_mean + 1e-7);
}

// Cov(F_a, F_b) from the kernel alone.
double batch_kbar(const GpooSearch& s, NodeId a, NodeId b) {
  const GpooSearchOptions& o = s.options();
  const PartitionNode& na = s.tree().node(a);
  const PartitionNode& nb = s.tree().node(b);
  if (o.aggregation == GpooAggregation::cell)
    return covariance(o.kernel, BoxQuery{na.lower, na.upper}, BoxQuery{nb.lower, nb.upper});
  const Eigen::MatrixXd pa = s.tree().representatives(a, o.representatives);
  const Eigen::MatrixXd pb = s.tree().representatives(b, o.representatives);
  double sum = 0.0;
  for (Eigen::Index i = 0; i < pa.cols(); ++i)
    for (Eigen::Index j = 0; j < pb.cols(); ++j) sum += o.kernel(pa.col(i), pb.col(j));
  return sum / static_cast<double>(pa.cols() * pb.cols());
}

// Cov(f(x), F_n).
double batch_point_kbar(const GpooSearch& s, const Eigen::VectorXd& x, NodeId n) {
  const GpooSearchOptions& o = s.options();
  const PartitionNode& node = s.tree().node(n);
  if (o.aggregation == GpooAggregation::cell) return covariance(o.kernel, BoxQuery{node.lower, node.upper}, x);
  const Eigen::MatrixXd p = s.tree().representatives(n, o.representatives);
  double sum = 0.0;
  for (Eigen::Index j = 0; j < p.cols(); ++j) sum += o.kernel(x, p.col(j));
  return sum / static_cast<double>(p.cols());
}

// With S = 3 and with cells every kbar the search uses comes from the memo by observed node: the
// posterior of every node (leaves from their columns, expanded nodes solved on demand) must be the
// batch posterior over the node observations, and kbar must be symmetric and the kernel's.
TEST(GpooKbarMemo, PosteriorsWithRepresentativesAndCellsMatchTheBatchFormula) {
  for (const auto& [aggregation, S] : {std::pair{GpooAggregation::representatives, std::size_t{3}},
                                       std::pair{GpooAggregation::cell, std::size_t{1}}}) {
    GpooSearchOptions o = options_3d(aggregation, S);
    // Noisier rewards and cells at depth 5 that cannot expand: cells are resampled, rounds that
    // find their node's slot in the rows already.
    o.max_depth = 4;
    o.noise_variance = 0.05;
    const GpooSearch s = told(o, 120);
    const auto& obs = s.observations();
    const auto t = static_cast<Eigen::Index>(obs.size());
    Eigen::MatrixXd A(t, t);
    Eigen::VectorXd y(t);
    for (Eigen::Index i = 0; i < t; ++i) {
      y[i] = obs[static_cast<std::size_t>(i)].value;
      for (Eigen::Index j = 0; j < t; ++j)
        A(i, j) = batch_kbar(s, obs[static_cast<std::size_t>(i)].node, obs[static_cast<std::size_t>(j)].node);
      A(i, i) += s.options().noise_variance;
    }
    const Eigen::LLT<Eigen::MatrixXd> llt(A);
    ASSERT_EQ(llt.info(), Eigen::Success);
    const Eigen::VectorXd alpha = llt.solve(y);
    std::size_t expanded = 0, resampled = 0;
    for (NodeId n = 0; n < s.tree().size(); ++n) {
      Eigen::VectorXd k(t);
      for (Eigen::Index j = 0; j < t; ++j) k[j] = batch_kbar(s, n, obs[static_cast<std::size_t>(j)].node);
      const GpooPosterior p = s.posterior(n);
      EXPECT_NEAR(p.mean, k.dot(alpha), 1e-7) << to_string(aggregation) << " node " << n;
      EXPECT_NEAR(p.variance, std::max(0.0, batch_kbar(s, n, n) - k.dot(llt.solve(k))), 1e-7)
          << to_string(aggregation) << " node " << n;
      expanded += s.tree().node(n).expanded() ? 1 : 0;
      resampled += s.times_sampled(n) > 1 ? 1 : 0;
      for (NodeId m : {NodeId{0}, obs.back().node, n / 2}) {
        const double ab = s.aggregated_kernel(n, m);
        EXPECT_EQ(ab, s.aggregated_kernel(m, n)) << n << ' ' << m;
        EXPECT_NEAR(ab, batch_kbar(s, n, m), 1e-13) << n << ' ' << m;
      }
    }
    EXPECT_GT(expanded, 10u);
    EXPECT_GT(resampled, 0u);  // rounds that look up a row's existing slot, not only new ones
  }
}

// The exact GP over the rounds kept, from the kept rounds' Gram matrix alone.
GpooPosterior batch_point_posterior(const GpooSearch& s, const Eigen::VectorXd& x, const std::vector<char>& keep) {
  std::vector<GpooObservationRecord> kept;
  for (std::size_t j = 0; j < keep.size(); ++j)
    if (keep[j]) kept.push_back(s.observations()[j]);
  const auto n = static_cast<Eigen::Index>(kept.size());
  const double prior = s.options().kernel(x, x);
  if (n == 0) return {0.0, prior};
  Eigen::MatrixXd A(n, n);
  Eigen::VectorXd y(n), k(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    y[i] = kept[static_cast<std::size_t>(i)].value;
    k[i] = batch_point_kbar(s, x, kept[static_cast<std::size_t>(i)].node);
    for (Eigen::Index j = 0; j < n; ++j) A(i, j) = batch_kbar(s, kept[static_cast<std::size_t>(i)].node, kept[static_cast<std::size_t>(j)].node);
    A(i, i) += s.options().noise_variance;
  }
  const Eigen::LLT<Eigen::MatrixXd> llt(A);
  return {k.dot(llt.solve(y)), std::max(0.0, prior - k.dot(llt.solve(k)))};
}

void expect_relative(double actual, double expected, double rel, const std::string& what) {
  EXPECT_LE(std::abs(actual - expected), rel * std::abs(expected)) << what << ": " << actual << " vs " << expected;
}

// Every round kept (the search's own factor), a few left out (rank-one updates of the factor, the
// first at round 2 so that nearly all of it is updated), most left out (a new factorisation), none
// kept (the prior): the mean and sd agree with the batch LLT to 1e-9 relative.
TEST(GpooPointPosterior, LeavingRoundsOutMatchesAnLltOverTheKeptRounds) {
  for (const auto& [aggregation, S] : {std::pair{GpooAggregation::representatives, std::size_t{1}},
                                       std::pair{GpooAggregation::representatives, std::size_t{3}},
                                       std::pair{GpooAggregation::cell, std::size_t{1}}}) {
    const GpooSearch s = told(options_3d(aggregation, S), 150);
    const std::size_t t = s.rounds();
    std::vector<std::vector<char>> masks(4, std::vector<char>(t, 1));
    for (std::size_t j : {std::size_t{2}, std::size_t{40}, std::size_t{41}, std::size_t{97}, t - 1}) masks[1][j] = 0;
    for (std::size_t j = 0; j < t; ++j) masks[2][j] = j % 5 == 0 ? 1 : 0;
    masks[3].assign(t, 0);
    const GpooRecommendation r = s.recommend();
    for (const Eigen::VectorXd& x : {r.point, Eigen::VectorXd(Eigen::Vector3d(0.1, 0.8, 0.35)),
                                     Eigen::VectorXd(s.tree().node(s.observations()[7].node).centre())}) {
      for (std::size_t m = 0; m < masks.size(); ++m) {
        const std::string what = std::string(to_string(aggregation)) + " S " + std::to_string(S) + " mask " + std::to_string(m);
        const GpooPosterior p = s.point_posterior(x, masks[m]);
        const GpooPosterior b = batch_point_posterior(s, x, masks[m]);
        expect_relative(p.mean, b.mean, 1e-9, what + " mean");
        expect_relative(std::sqrt(p.variance), std::sqrt(b.variance), 1e-9, what + " sd");
        ASSERT_GT(b.variance, 0.0) << what;
      }
    }
  }
  const GpooSearch s = told(options_3d(GpooAggregation::representatives, 1), 10);
  EXPECT_THROW(s.point_posterior(Eigen::Vector3d::Constant(0.5), std::vector<char>(9, 1)), std::invalid_argument);
}

// Through a Study: sequential rounds, then parallel asks left pending and one trial failed, so the
// search holds rounds told a fantasy in the middle and at the end. The recommendation's point
// estimate is the exact GP over the completed rounds only (standardised rewards, the fitted kernel
// and noise), built here by LLT.
TEST(GpooPointPosterior, StudyRecommendationIsTheExactGpOverTheCompletedRounds) {
  for (const std::size_t S : {std::size_t{1}, std::size_t{2}}) {
    YAML::Node options;
    options["representatives"] = S;
    Study study(Space({Parameter::floating("x", 0, 1), Parameter::floating("y", 0, 1)}), make_strategy("gpoo", options),
                {.direction = Direction::minimize, .seed = 3});
    const auto f = [](const Eigen::VectorXd& u) { return std::pow(u[0] - 0.3, 2) + std::pow(u[1] - 0.7, 2) + 0.1 * std::sin(9 * u[0]); };
    std::vector<std::uint64_t> pending;
    for (int i = 0; i < 80; ++i) {
      const auto a = study.ask();
      ASSERT_TRUE(a);
      if (i == 30 || i == 31) {
        study.fail(a->id, "crashed");
      } else if (i >= 40 && i < 44) {
        pending.push_back(a->id);  // left pending while the campaign goes on
      } else {
        study.tell(a->id, f(study.trial(a->id).unit));
      }
    }
    for (int i = 0; i < 3; ++i) {
      const auto a = study.ask();
      ASSERT_TRUE(a);
      pending.push_back(a->id);
    }
    const auto rec = study.recommendation();
    ASSERT_TRUE(rec);

    const auto& g = dynamic_cast<const GpooStrategy&>(study.strategy());
    const GpHyperparameters& hp = g.model().hyperparameters;
    const Standardization& st = g.model().standardization;
    ASSERT_GT(g.model().refresh_count, 0u);
    const Kernel kernel = hp.make_kernel();
    const PartitionTree tree = PartitionTree::replay(
        2, PartitionTreeOptions{.split = SplitRule::longest_side, .branching = g.options().branching}, g.expand_sequence());
    std::vector<Eigen::MatrixXd> reps;
    std::vector<double> y;
    std::size_t left_out = 0;
    for (const auto& round : g.rounds()) {
      double sum = 0.0;
      bool complete = round.trials.size() == S;
      for (std::uint64_t id : round.trials) {
        const Trial& t = study.trial(id);
        if (t.status != TrialStatus::complete) complete = false;
        else sum -= *t.value;  // reward of a minimised objective
      }
      if (!complete) {
        ++left_out;
        continue;
      }
      reps.push_back(tree.representatives(round.node, S));
      y.push_back((sum / static_cast<double>(S) - st.mean) / st.scale);
    }
    EXPECT_GE(left_out, 5u);
    const auto mean_k = [&](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
      double sum = 0.0;
      for (Eigen::Index i = 0; i < a.cols(); ++i)
        for (Eigen::Index j = 0; j < b.cols(); ++j) sum += kernel(a.col(i), b.col(j));
      return sum / static_cast<double>(a.cols() * b.cols());
    };
    const auto n = static_cast<Eigen::Index>(y.size());
    Eigen::MatrixXd A(n, n);
    Eigen::VectorXd k(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      k[i] = mean_k(rec->unit, reps[static_cast<std::size_t>(i)]);
      for (Eigen::Index j = 0; j < n; ++j) A(i, j) = mean_k(reps[static_cast<std::size_t>(i)], reps[static_cast<std::size_t>(j)]);
      A(i, i) += hp.noise_variances.at(0);
    }
    const Eigen::LLT<Eigen::MatrixXd> llt(A);
    const Eigen::VectorXd yv = Eigen::Map<const Eigen::VectorXd>(y.data(), n);
    const double mean = -(st.mean + st.scale * k.dot(llt.solve(yv)));  // objective units, minimised
    const double prior = st.scale * st.scale * kernel(rec->unit, rec->unit);
    const double variance = st.scale * st.scale * (kernel(rec->unit, rec->unit) - k.dot(llt.solve(k)));
    expect_relative(rec->mean, mean, 1e-9, "mean S " + std::to_string(S));
    // The variance is prior - |v|^2, here 1e-8 of the prior: any formula of that form loses digits
    // to the cancellation, so it is held to 1e-9 of the prior (its relative error is then that
    // divided by variance / prior). The sd is checked to 1e-9 relative where it is not that small.
    EXPECT_NEAR(rec->sd * rec->sd, variance, 1e-9 * prior) << "S " << S;
    EXPECT_GT(variance, 0.0);
  }
}

// The load's structural check (check_replay, on the tree alone) and replay() walk the rounds by
// one expansion rule: on damaged histories (a round moved to another node, an expansion dropped,
// added, moved or swapped) each refuses exactly where the other does, with the same message, and
// both accept the undamaged one.
TEST(GpooReplay, StructuralCheckRefusesExactlyWhatReplayRefuses) {
  for (GpooVariant variant : {GpooVariant::code, GpooVariant::paper}) {
    GpooSearchOptions o = options_3d(GpooAggregation::representatives, 1);
    o.variant = variant;
    const GpooSearch s = told(o, 70);
    const std::vector<GpooObservationRecord> rounds = s.observations();
    const std::vector<NodeId> sequence = s.expand_sequence();
    ASSERT_GT(sequence.size(), 10u);
    const auto outcome = [&](auto&& run) -> std::string {
      try {
        run();
        return "accepted";
      } catch (const std::invalid_argument& e) {
        return e.what();
      }
    };
    const auto compare = [&](const std::vector<GpooObservationRecord>& r, const std::vector<NodeId>& q) {
      const std::string checked = outcome([&] { GpooSearch::check_replay(3, o, r, q); });
      const std::string replayed = outcome([&] { (void)GpooSearch::replay(3, o, r, q); });
      EXPECT_EQ(checked, replayed);
      return checked;
    };
    EXPECT_EQ(compare(rounds, sequence), "accepted");
    std::size_t refused = 0, cases = 0;
    std::uint64_t state = 12345;
    const auto draw = [&](std::size_t n) {  // a small LCG: any fixed sequence of indices will do
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<std::size_t>((state >> 33) % n);
    };
    for (int k = 0; k < 60; ++k) {
      std::vector<GpooObservationRecord> r = rounds;
      std::vector<NodeId> q = sequence;
      switch (k % 5) {
        case 0: r[draw(r.size())].node = static_cast<NodeId>(draw(s.tree().size())); break;
        case 1: q.erase(q.begin() + static_cast<std::ptrdiff_t>(draw(q.size()))); break;
        case 2: q.insert(q.begin() + static_cast<std::ptrdiff_t>(draw(q.size() + 1)), static_cast<NodeId>(draw(s.tree().size()))); break;
        case 3: q[draw(q.size())] = static_cast<NodeId>(draw(s.tree().size())); break;
        case 4: std::swap(q[draw(q.size())], q[draw(q.size())]); break;
      }
      ++cases;
      refused += compare(r, q) != "accepted";
    }
    // The damages are mostly refusals: the comparison is not between two acceptances.
    EXPECT_GT(refused, cases / 2);
  }
}

}  // namespace
}  // namespace tune
