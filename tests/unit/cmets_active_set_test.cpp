// Tests for CMETS's candidate sets (digest-iqbo-cmets.md, Alg. 1, sections 4.3 and 7.3): the
// literal rules' t = 1 traces and re-query quirk, the cleaned rules, A = L U L', the budgeted
// selection, max_depth, replay of the query sequence and the size of A with a binary split in 6-D.
#include "tune/tree/cmets_active_set.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <vector>

#include "tune/random/rng.hpp"

namespace tune {
namespace {

CmetsActiveSetOptions quadtree(CmetsVariant variant, std::size_t max_depth = 6) {
  return CmetsActiveSetOptions{
      .variant = variant,
      .max_depth = max_depth,
      .tree = PartitionTreeOptions{.split = SplitRule::all_dimensions}};
}

std::vector<NodeId> sorted(std::vector<NodeId> ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<NodeId> children_of(const CmetsActiveSet& set, NodeId id) {
  return set.tree().node(id).children;
}

// The paper's cost schedule of setting 2: lambda_l = 0.5 (l + 1).
double paper_cost(std::size_t depth) { return 0.5 * static_cast<double>(depth + 1); }

// Selects with pseudo-random scores and unit costs (a uniformly random active node), records the
// query and returns it; nothing when the active set is empty.
std::optional<NodeId> random_step(CmetsActiveSet& set, Rng& rng) {
  const auto node = set.select([&](NodeId) { return uniform01(rng); },
                               [](std::size_t) { return 1.0; }, 1.0);
  if (node) set.record_query(*node);
  return node;
}

const char* name(CmetsVariant variant) { return to_string(variant); }

TEST(CmetsActiveSet, InitialStateIsRootPlusItsChildren) {
  for (CmetsVariant variant : {CmetsVariant::literal, CmetsVariant::cleaned}) {
    const CmetsActiveSet set(2, quadtree(variant));
    const std::vector<NodeId> children = children_of(set, PartitionTree::root);
    ASSERT_EQ(children.size(), 4u);
    EXPECT_EQ(set.leaves(), std::vector<NodeId>{PartitionTree::root});
    EXPECT_EQ(set.lookahead(), children);
    std::vector<NodeId> expected{PartitionTree::root};
    expected.insert(expected.end(), children.begin(), children.end());
    EXPECT_EQ(set.active(), expected);
    EXPECT_EQ(set.tree().size(), 5u);  // only the root was expanded
    EXPECT_TRUE(set.queries().empty());
  }
  // max_depth 0: the root has no children.
  const CmetsActiveSet flat(2, quadtree(CmetsVariant::cleaned, 0));
  EXPECT_EQ(flat.active(), std::vector<NodeId>{PartitionTree::root});
  EXPECT_EQ(flat.tree().size(), 1u);
}

TEST(CmetsActiveSet, OptionsDefaultsAndValidation) {
  EXPECT_EQ(CmetsActiveSet(2).tree().split_rule(), SplitRule::all_dimensions);
  EXPECT_EQ(CmetsActiveSet(2).tree().branching(), 4u);
  EXPECT_EQ(CmetsActiveSet(3).tree().branching(), 2u);  // longest-side from d = 3 on
  EXPECT_EQ(CmetsActiveSet(6).tree().split_rule(), SplitRule::longest_side);
  EXPECT_EQ(CmetsActiveSet(6).tree().branching(), 2u);
  EXPECT_EQ(CmetsActiveSetOptions{}.variant, CmetsVariant::cleaned);
  EXPECT_EQ(CmetsActiveSetOptions{}.max_depth, 6u);
  EXPECT_THROW(CmetsActiveSet(2, CmetsActiveSetOptions{.variant = CmetsVariant::literal,
                                                      .allow_requery = true}),
               std::invalid_argument);
  for (CmetsVariant variant : {CmetsVariant::literal, CmetsVariant::cleaned}) {
    EXPECT_EQ(cmets_variant_from_string(to_string(variant)), variant);
  }
  EXPECT_THROW(cmets_variant_from_string("fancy"), std::invalid_argument);
  CmetsActiveSet set(2);
  EXPECT_THROW(set.record_query(5), std::invalid_argument);  // not active (does not exist yet)
  EXPECT_TRUE(set.queries().empty());
}

// Digest 4.3, t = 1, root chosen: L_1 = the 4 children, L'_1 = the 4 children + 16 grandchildren.
TEST(CmetsActiveSet, LiteralTraceRootChosen) {
  CmetsActiveSet set(2, quadtree(CmetsVariant::literal));
  set.record_query(PartitionTree::root);
  const std::vector<NodeId> children = children_of(set, PartitionTree::root);
  EXPECT_EQ(set.leaves(), children);
  std::vector<NodeId> expected = children;
  for (NodeId c : children) {
    const std::vector<NodeId> grandchildren = children_of(set, c);
    ASSERT_EQ(grandchildren.size(), 4u);
    expected.insert(expected.end(), grandchildren.begin(), grandchildren.end());
  }
  EXPECT_EQ(set.lookahead(), sorted(expected));
  EXPECT_EQ(set.lookahead().size(), 20u);
  EXPECT_FALSE(set.is_active(PartitionTree::root));
  EXPECT_EQ(set.active(), set.lookahead());  // L_1 is inside L'_1
}

// Digest 4.3, t = 1, child c chosen: L_1 = children(c), L'_1 = the 3 siblings of c plus the 16
// children of children(c); the root leaves L without being queried.
TEST(CmetsActiveSet, LiteralTraceChildChosen) {
  for (std::size_t k = 0; k < 4; ++k) {
    CmetsActiveSet set(2, quadtree(CmetsVariant::literal));
    const std::vector<NodeId> children = children_of(set, PartitionTree::root);
    const NodeId c = children[k];
    set.record_query(c);
    const std::vector<NodeId> level2 = children_of(set, c);
    ASSERT_EQ(level2.size(), 4u);
    EXPECT_EQ(set.leaves(), level2);
    std::vector<NodeId> expected;
    for (NodeId sibling : children) {
      if (sibling != c) expected.push_back(sibling);
    }
    for (NodeId g : level2) {
      const std::vector<NodeId> level3 = children_of(set, g);
      ASSERT_EQ(level3.size(), 4u);
      for (NodeId n : level3) EXPECT_EQ(set.tree().node(n).depth, 3u);
      expected.insert(expected.end(), level3.begin(), level3.end());
    }
    EXPECT_EQ(set.lookahead(), sorted(expected));
    EXPECT_EQ(set.lookahead().size(), 19u);
    EXPECT_FALSE(set.is_active(PartitionTree::root));
    EXPECT_EQ(set.times_queried(PartitionTree::root), 0u);
    EXPECT_FALSE(set.is_active(c));
  }
}

// Digest 4.3: after the root is queried, a child c is both a leaf and in L'; querying it takes the
// `a_t in L'` branch, which removes only its parent from L, so c stays active and can be queried
// again. The cleaned variant refuses the second query.
TEST(CmetsActiveSet, LiteralCanRequeryCleanedCannot) {
  CmetsActiveSet literal(2, quadtree(CmetsVariant::literal));
  literal.record_query(PartitionTree::root);
  const NodeId c = children_of(literal, PartitionTree::root)[1];
  const std::vector<NodeId> leaves = literal.leaves();
  const std::vector<NodeId> lookahead = literal.lookahead();
  ASSERT_TRUE(std::binary_search(leaves.begin(), leaves.end(), c));
  ASSERT_TRUE(std::binary_search(lookahead.begin(), lookahead.end(), c));
  literal.record_query(c);
  EXPECT_TRUE(literal.is_active(c));
  const std::vector<NodeId> after = literal.leaves();
  EXPECT_TRUE(std::binary_search(after.begin(), after.end(), c));
  const std::vector<NodeId> after_lookahead = literal.lookahead();
  EXPECT_FALSE(std::binary_search(after_lookahead.begin(), after_lookahead.end(), c));
  literal.record_query(c);  // the re-query
  EXPECT_EQ(literal.times_queried(c), 2u);
  EXPECT_FALSE(literal.is_active(c));  // second time through the else branch: gone
  EXPECT_EQ(literal.queries(), (std::vector<NodeId>{PartitionTree::root, c, c}));

  CmetsActiveSet cleaned(2, quadtree(CmetsVariant::cleaned));
  cleaned.record_query(PartitionTree::root);
  cleaned.record_query(c);
  EXPECT_FALSE(cleaned.is_active(c));
  EXPECT_THROW(cleaned.record_query(c), std::invalid_argument);
  EXPECT_EQ(cleaned.times_queried(c), 1u);

  // With allow_requery the cleaned variant keeps a queried node as a candidate.
  CmetsActiveSetOptions options = quadtree(CmetsVariant::cleaned);
  options.allow_requery = true;
  CmetsActiveSet repeat(2, options);
  repeat.record_query(PartitionTree::root);
  repeat.record_query(c);
  repeat.record_query(c);
  EXPECT_EQ(repeat.times_queried(c), 2u);
  EXPECT_TRUE(repeat.is_active(c));
}

TEST(CmetsActiveSet, CleanedNeverQueriesTwiceOverRandomSelections) {
  CmetsActiveSet set(2, quadtree(CmetsVariant::cleaned));
  Rng rng = make_rng(11, RngStream::candidates, 0);
  std::set<NodeId> seen;
  for (int t = 0; t < 500; ++t) {
    const auto node = random_step(set, rng);
    ASSERT_TRUE(node.has_value()) << "active set empty at t = " << t;
    EXPECT_TRUE(seen.insert(*node).second) << "node " << *node << " queried twice";
    for (NodeId a : set.active()) ASSERT_EQ(set.times_queried(a), 0u) << "queried node active";
  }
  EXPECT_EQ(set.queries().size(), 500u);

  // The literal rules do re-query under the same random selection (digest 4.3: 9 in 200).
  CmetsActiveSet literal(2, quadtree(CmetsVariant::literal));
  Rng literal_rng = make_rng(11, RngStream::candidates, 0);
  std::size_t requeries = 0;
  for (int t = 0; t < 500; ++t) {
    const auto node = random_step(literal, literal_rng);
    ASSERT_TRUE(node.has_value());
    if (literal.times_queried(*node) > 1) ++requeries;
  }
  std::cout << "[ literal ] re-queries in 500 random steps: " << requeries << "\n";
  EXPECT_GT(requeries, 0u);
}

// A = L U L' at every step, plus each variant's own invariants:
// literal: children(i) is inside L' for every leaf i below max_depth;
// cleaned: L' = U children(L) minus queried nodes exactly, L and L' disjoint.
TEST(CmetsActiveSet, ActiveIsLeavesUnionLookaheadAtEveryStep) {
  for (CmetsVariant variant : {CmetsVariant::literal, CmetsVariant::cleaned}) {
    SCOPED_TRACE(name(variant));
    CmetsActiveSet set(2, quadtree(variant, 5));
    Rng rng = make_rng(5, RngStream::candidates, 1);
    for (int t = 0; t < 200; ++t) {
      const std::vector<NodeId> leaves = set.leaves();
      const std::vector<NodeId> lookahead = set.lookahead();
      std::set<NodeId> both(leaves.begin(), leaves.end());
      both.insert(lookahead.begin(), lookahead.end());
      ASSERT_EQ(set.active(), std::vector<NodeId>(both.begin(), both.end())) << "t = " << t;
      for (NodeId a : both) ASSERT_TRUE(set.is_active(a));
      std::set<NodeId> grandchildren;
      for (NodeId leaf : leaves) {
        const std::vector<NodeId> kids = children_of(set, leaf);
        if (set.tree().node(leaf).depth < 5) {
          ASSERT_EQ(kids.size(), 4u);
        }
        grandchildren.insert(kids.begin(), kids.end());
      }
      if (variant == CmetsVariant::literal) {
        for (NodeId g : grandchildren) ASSERT_EQ(std::count(lookahead.begin(), lookahead.end(), g), 1);
      } else {
        std::vector<NodeId> expected;
        for (NodeId g : grandchildren) {
          if (set.times_queried(g) == 0) expected.push_back(g);
        }
        ASSERT_EQ(lookahead, expected) << "t = " << t;
        std::vector<NodeId> overlap;
        std::set_intersection(leaves.begin(), leaves.end(), lookahead.begin(), lookahead.end(),
                              std::back_inserter(overlap));
        ASSERT_TRUE(overlap.empty());
      }
      if (!random_step(set, rng)) break;
    }
  }
}

// Setting 2's costs 0.5 (l + 1): the budget is never exceeded and the loop stops when no active
// node fits what remains.
TEST(CmetsActiveSet, BudgetNeverExceededAndLoopStopsWhenNothingFits) {
  for (CmetsVariant variant : {CmetsVariant::literal, CmetsVariant::cleaned}) {
    SCOPED_TRACE(name(variant));
    for (std::uint64_t run = 0; run < 40; ++run) {
      Rng rng = make_rng(run, RngStream::candidates, 2);
      const double budget = 3.0 + 40.0 * uniform01(rng);
      CmetsActiveSet set(2, quadtree(variant));
      double remaining = budget;
      double spent = 0.0;
      std::size_t steps = 0;
      while (const auto node =
                 set.select([&](NodeId) { return uniform01(rng); }, paper_cost, remaining)) {
        const double lambda = paper_cost(set.tree().node(*node).depth);
        ASSERT_LE(lambda, remaining);
        set.record_query(*node);
        remaining -= lambda;
        spent += lambda;
        ++steps;
        ASSERT_LE(spent, budget);
        ASSERT_LT(steps, 1000u);
      }
      EXPECT_GT(steps, 0u);
      for (NodeId a : set.active()) {
        EXPECT_GT(paper_cost(set.tree().node(a).depth), remaining) << "node " << a << " fits";
      }
    }
  }
}

// The literal `while B > 0` behind allow_overshoot: the last query may overshoot, then it stops.
TEST(CmetsActiveSet, OvershootFlagReproducesWhileBudgetPositive) {
  CmetsActiveSetOptions options = quadtree(CmetsVariant::literal);
  options.allow_overshoot = true;
  CmetsActiveSet set(2, options);
  Rng rng = make_rng(3, RngStream::candidates, 3);
  const double budget = 10.25;  // costs are multiples of 0.5: stopping at B <= 0 overshoots
  double remaining = budget;
  while (const auto node =
             set.select([&](NodeId) { return uniform01(rng); }, paper_cost, remaining)) {
    ASSERT_GT(remaining, 0.0);
    remaining -= paper_cost(set.tree().node(*node).depth);
    set.record_query(*node);
  }
  EXPECT_LT(remaining, 0.0);
  EXPECT_FALSE(set.select([](NodeId) { return 1.0; }, paper_cost, 0.0).has_value());
}

TEST(CmetsActiveSet, SelectMaximisesScorePerCostTiesToLowestId) {
  CmetsActiveSet set(2, quadtree(CmetsVariant::cleaned));  // A_0 = {0, 1, 2, 3, 4}
  std::vector<NodeId> scored;
  const auto flat = [&](NodeId id) {
    scored.push_back(id);
    return 1.0;
  };
  // Equal scores: the root (cost 0.5) beats the children (cost 1).
  EXPECT_EQ(set.select(flat, paper_cost, 10.0), std::optional<NodeId>(0));
  // The root does not fit 0.4 or anything else: nothing.
  scored.clear();
  EXPECT_FALSE(set.select(flat, paper_cost, 0.4).has_value());
  EXPECT_TRUE(scored.empty());  // score only at eligible nodes
  // Equal ratios among children: lowest id.
  const auto children_only = [](NodeId id) { return id == 0 ? 0.0 : 1.0; };
  EXPECT_EQ(set.select(children_only, paper_cost, 10.0), std::optional<NodeId>(1));
  // Score over cost: child 3 with score 2.1 (ratio 2.1) beats the root with 1 (ratio 2).
  const auto three = [](NodeId id) { return id == 3 ? 2.1 : (id == 0 ? 1.0 : 0.5); };
  EXPECT_EQ(set.select(three, paper_cost, 10.0), std::optional<NodeId>(3));
  // ... unless only the root fits.
  EXPECT_EQ(set.select(three, paper_cost, 0.75), std::optional<NodeId>(0));
  EXPECT_THROW(set.select(flat, [](std::size_t) { return 0.0; }, 10.0), std::invalid_argument);
  EXPECT_THROW(set.select([](NodeId) { return std::nan(""); }, paper_cost, 10.0),
               std::invalid_argument);
}

// No node deeper than max_depth is ever active or created; the cleaned variant, run until nothing
// is left, queries every node of the depth-3 quadtree (1 + 4 + 16 + 64 = 85) exactly once.
TEST(CmetsActiveSet, MaxDepthRespected) {
  for (CmetsVariant variant : {CmetsVariant::literal, CmetsVariant::cleaned}) {
    SCOPED_TRACE(name(variant));
    for (std::size_t max_depth : {std::size_t{1}, std::size_t{3}}) {
      CmetsActiveSet set(2, quadtree(variant, max_depth));
      Rng rng = make_rng(max_depth, RngStream::candidates, 4);
      bool reached = false;
      for (int t = 0; t < 300; ++t) {
        for (NodeId a : set.active()) {
          ASSERT_LE(set.tree().node(a).depth, max_depth);
          reached = reached || set.tree().node(a).depth == max_depth;
        }
        ASSERT_LE(set.tree().max_depth(), max_depth);
        if (!random_step(set, rng)) break;
      }
      EXPECT_TRUE(reached);
      if (variant == CmetsVariant::cleaned && max_depth == 3) {
        EXPECT_TRUE(set.empty());
        EXPECT_EQ(set.queries().size(), 85u);
        EXPECT_EQ(std::set<NodeId>(set.queries().begin(), set.queries().end()).size(), 85u);
      }
    }
  }
}

// Replaying queries() on a fresh set rebuilds the sets, the counts and the tree (node ids
// included); a sequence with a node that is not active at its turn is rejected.
TEST(CmetsActiveSet, ReplayReproducesTheState) {
  std::vector<CmetsActiveSetOptions> configs = {quadtree(CmetsVariant::literal),
                                                quadtree(CmetsVariant::cleaned)};
  configs.push_back(quadtree(CmetsVariant::cleaned));
  configs.back().allow_requery = true;
  configs.push_back(CmetsActiveSetOptions{.max_depth = 10});  // 6-D longest_side by default
  for (std::size_t k = 0; k < configs.size(); ++k) {
    SCOPED_TRACE(k);
    const std::size_t dim = k == 3 ? 6 : 2;
    CmetsActiveSet set(dim, configs[k]);
    Rng rng = make_rng(k, RngStream::candidates, 5);
    for (int t = 0; t < 150; ++t) {
      if (t == 75) {
        const CmetsActiveSet prefix = CmetsActiveSet::replay(dim, configs[k], set.queries());
        EXPECT_EQ(prefix.leaves(), set.leaves());
        EXPECT_EQ(prefix.lookahead(), set.lookahead());
      }
      if (!random_step(set, rng)) break;
    }
    const CmetsActiveSet copy = CmetsActiveSet::replay(dim, configs[k], set.queries());
    EXPECT_EQ(copy.queries(), set.queries());
    EXPECT_EQ(copy.leaves(), set.leaves());
    EXPECT_EQ(copy.lookahead(), set.lookahead());
    EXPECT_EQ(copy.active(), set.active());
    EXPECT_EQ(copy.tree().size(), set.tree().size());
    EXPECT_EQ(copy.tree().expand_sequence(), set.tree().expand_sequence());
    for (NodeId id = 0; id < set.tree().size(); ++id) {
      ASSERT_EQ(copy.times_queried(id), set.times_queried(id));
      ASSERT_EQ(copy.tree().node(id).lower, set.tree().node(id).lower);
    }
  }
  // Node 7 is a grandchild, not active before the root or a child is queried.
  EXPECT_THROW(CmetsActiveSet::replay(2, quadtree(CmetsVariant::cleaned), {7}),
               std::invalid_argument);
  // The second query of a child is a literal-only move.
  EXPECT_NO_THROW(CmetsActiveSet::replay(2, quadtree(CmetsVariant::literal), {0, 1, 1}));
  EXPECT_THROW(CmetsActiveSet::replay(2, quadtree(CmetsVariant::cleaned), {0, 1, 1}),
               std::invalid_argument);
}

// With longest_side K = 2 in 6-D, A stays small. Bound: each query adds at most K = 2 nodes to L
// (its children), so at most 1 + 2t nodes have ever been leaves after t queries; every node of L'
// is a child of one of them (L'_0 = children(root), root in L_0), so |L'_t| <= 2 (1 + 2t) and
// |A_t| <= 3 (1 + 2t), in both variants. Compare the 2^6 = 64-ary all_dimensions split, where the
// first query of the root alone makes |A| = 64 + 4096.
TEST(CmetsActiveSet, BinarySplitIn6DKeepsActiveSetSmall) {
  for (CmetsVariant variant : {CmetsVariant::literal, CmetsVariant::cleaned}) {
    SCOPED_TRACE(name(variant));
    CmetsActiveSet set(6, CmetsActiveSetOptions{.variant = variant, .max_depth = 12});
    ASSERT_EQ(set.tree().branching(), 2u);
    Rng rng = make_rng(6, RngStream::candidates, 6);
    std::size_t largest = set.active().size();
    std::size_t steps = 0;
    for (std::size_t t = 1; t <= 300; ++t) {
      if (!random_step(set, rng)) break;
      ++steps;
      const std::size_t size = set.active().size();
      largest = std::max(largest, size);
      ASSERT_LE(set.leaves().size(), 1 + 2 * t);
      ASSERT_LE(size, 3 * (1 + 2 * t)) << "t = " << t;
    }
    EXPECT_EQ(steps, 300u);
    std::cout << "[ " << name(variant) << " ] 6-D longest_side K=2, max_depth 12: max |A| over "
              << steps << " random steps = " << largest << " (final " << set.active().size()
              << ", tree " << set.tree().size() << " nodes)\n";
    EXPECT_LE(largest, 3u * (1u + 2u * 300u));
  }
}

}  // namespace
}  // namespace tune
