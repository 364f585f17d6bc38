// Tests for the shared partition tree of the unit cube (CMETS, GPOO, branch and bound): tiling,
// the paper's quadtree, longest-side cycling, (h, i) labels, diameters, representatives, replay.
#include "tune/tree/partition_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "tune/random/rng.hpp"

namespace tune {
namespace {

// Expands every node above `depth`, so that the tree holds the complete partition at that depth.
void expand_to_depth(PartitionTree& tree, std::size_t depth) {
  for (std::size_t h = 0; h < depth; ++h) {
    for (NodeId id : tree.nodes_at_depth(h)) tree.expand(id);
  }
}

// Expands a pseudo-random leaf `count` times (deterministic for a seed).
void expand_random_leaves(PartitionTree& tree, std::size_t count, std::uint64_t seed) {
  Rng rng = make_rng(seed, RngStream::candidates, 0);
  for (std::size_t t = 0; t < count; ++t) {
    const std::vector<NodeId> leaves = tree.leaves();
    tree.expand(leaves[rng() % leaves.size()]);
  }
}

double overlap_volume(const PartitionNode& a, const PartitionNode& b) {
  double volume = 1.0;
  for (Eigen::Index j = 0; j < a.lower.size(); ++j) {
    volume *= std::max(0.0, std::min(a.upper[j], b.upper[j]) - std::max(a.lower[j], b.lower[j]));
  }
  return volume;
}

bool closed_box_contains(const PartitionNode& n, const Eigen::VectorXd& x) {
  return (n.lower.array() <= x.array()).all() && (x.array() <= n.upper.array()).all();
}

// The children of `parent` tile it: each lies in it, their volumes add up to its volume, their
// interiors are pairwise disjoint, and random points of the parent fall in some child.
::testing::AssertionResult children_tile(const PartitionTree& tree, NodeId parent_id, Rng& rng) {
  const PartitionNode& parent = tree.node(parent_id);
  const auto& children = parent.children;
  if (children.size() != tree.branching()) {
    return ::testing::AssertionFailure() << "node " << parent_id << " has " << children.size()
                                         << " children, K = " << tree.branching();
  }
  double volume = 0.0;
  for (std::size_t a = 0; a < children.size(); ++a) {
    const PartitionNode& child = tree.node(children[a]);
    if (child.parent != parent_id) return ::testing::AssertionFailure() << "wrong parent";
    if (!((child.lower.array() >= parent.lower.array()).all() &&
          (child.upper.array() <= parent.upper.array()).all() &&
          (child.lower.array() < child.upper.array()).all())) {
      return ::testing::AssertionFailure() << "child " << children[a] << " is not a box inside "
                                           << parent_id;
    }
    volume += child.volume();
    for (std::size_t b = a + 1; b < children.size(); ++b) {
      const double overlap = overlap_volume(child, tree.node(children[b]));
      if (overlap != 0.0) {
        return ::testing::AssertionFailure() << "children " << children[a] << " and " << children[b]
                                             << " overlap by volume " << overlap;
      }
    }
  }
  if (std::fabs(volume - parent.volume()) > 1e-12 * parent.volume()) {
    return ::testing::AssertionFailure() << "children volumes sum to " << volume << ", parent "
                                         << parent.volume();
  }
  for (int p = 0; p < 64; ++p) {
    Eigen::VectorXd x(parent.lower.size());
    for (Eigen::Index j = 0; j < x.size(); ++j) {
      x[j] = parent.lower[j] + uniform01(rng) * (parent.upper[j] - parent.lower[j]);
    }
    const bool covered = std::any_of(children.begin(), children.end(), [&](NodeId c) {
      return closed_box_contains(tree.node(c), x);
    });
    if (!covered) return ::testing::AssertionFailure() << "a point of " << parent_id << " is in no child";
  }
  return ::testing::AssertionSuccess();
}

TEST(PartitionTree, ChildrenTileTheirParentForBothRulesAndSeveralKAndD) {
  Rng rng = make_rng(11, RngStream::candidates, 1);
  struct Case {
    std::size_t dim;
    PartitionTreeOptions options;
    std::size_t depth;
  };
  const std::vector<Case> cases = {
      {1, {.split = SplitRule::longest_side, .branching = 2}, 4},
      {1, {.split = SplitRule::longest_side, .branching = 3}, 3},
      {2, {.split = SplitRule::longest_side, .branching = 5}, 3},
      {3, {.split = SplitRule::longest_side, .branching = 3}, 4},
      {5, {.split = SplitRule::longest_side, .branching = 2}, 7},
      {1, {.split = SplitRule::all_dimensions}, 4},
      {2, {.split = SplitRule::all_dimensions}, 3},
      {3, {.split = SplitRule::all_dimensions}, 2},
      {4, {.split = SplitRule::all_dimensions}, 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("d = " + std::to_string(c.dim) + ", rule " + to_string(c.options.split));
    PartitionTree tree(c.dim, c.options);
    expand_to_depth(tree, c.depth);
    for (const PartitionNode& n : tree.nodes()) {
      if (n.expanded()) {
        EXPECT_TRUE(children_tile(tree, n.id, rng));
      }
    }
    // The leaves are the partition at the deepest level: their volumes add up to the cube's.
    double volume = 0.0;
    for (NodeId id : tree.leaves()) volume += tree.node(id).volume();
    EXPECT_NEAR(volume, 1.0, 1e-12);
  }
}

TEST(PartitionTree, AllDimensionsIsThePapersQuadtreeAtDepthsOneAndTwo) {
  PartitionTree tree(2, {.split = SplitRule::all_dimensions});
  EXPECT_EQ(tree.branching(), 4U);
  const std::vector<NodeId> children = tree.expand(PartitionTree::root);
  ASSERT_EQ(children.size(), 4U);
  // Child k takes the upper half of x when bit 0 is set and of y when bit 1 is set.
  const double depth1[4][4] = {// x_low, y_low, x_high, y_high
                               {0.0, 0.0, 0.5, 0.5},
                               {0.5, 0.0, 1.0, 0.5},
                               {0.0, 0.5, 0.5, 1.0},
                               {0.5, 0.5, 1.0, 1.0}};
  for (std::size_t k = 0; k < 4; ++k) {
    const PartitionNode& n = tree.node(children[k]);
    EXPECT_EQ(n.depth, 1U);
    EXPECT_EQ(n.index_in_depth, k);
    EXPECT_EQ(n.lower[0], depth1[k][0]);
    EXPECT_EQ(n.lower[1], depth1[k][1]);
    EXPECT_EQ(n.upper[0], depth1[k][2]);
    EXPECT_EQ(n.upper[1], depth1[k][3]);
    EXPECT_EQ(n.centre()[0], 0.5 * (depth1[k][0] + depth1[k][2]));
    EXPECT_EQ(n.centre()[1], 0.5 * (depth1[k][1] + depth1[k][3]));
  }

  // Depth 2, children of (1, 1) = [.5, 1] x [0, .5], worked out by hand.
  const std::vector<NodeId> grandchildren = tree.expand(children[1]);
  const double depth2[4][4] = {{0.5, 0.0, 0.75, 0.25},
                               {0.75, 0.0, 1.0, 0.25},
                               {0.5, 0.25, 0.75, 0.5},
                               {0.75, 0.25, 1.0, 0.5}};
  for (std::size_t k = 0; k < 4; ++k) {
    const PartitionNode& n = tree.node(grandchildren[k]);
    EXPECT_EQ(n.depth, 2U);
    EXPECT_EQ(n.index_in_depth, 4U + k);
    EXPECT_EQ(n.lower[0], depth2[k][0]);
    EXPECT_EQ(n.lower[1], depth2[k][1]);
    EXPECT_EQ(n.upper[0], depth2[k][2]);
    EXPECT_EQ(n.upper[1], depth2[k][3]);
  }

  // The complete depth-2 grid: 16 squares of side 1/4 (CMETS's level table: side 2^-l, 4^l cells),
  // and label i is the Morton code of the integer coordinates (ix, iy), x in the even bits.
  expand_to_depth(tree, 2);
  const std::vector<NodeId> level2 = tree.nodes_at_depth(2);
  ASSERT_EQ(level2.size(), 16U);
  for (std::size_t position = 0; position < level2.size(); ++position) {
    const PartitionNode& n = tree.node(level2[position]);
    ASSERT_TRUE(n.index_in_depth.has_value());
    EXPECT_EQ(*n.index_in_depth, position);
    const auto ix = static_cast<std::uint64_t>(n.lower[0] * 4.0);
    const auto iy = static_cast<std::uint64_t>(n.lower[1] * 4.0);
    const std::uint64_t morton = (ix & 1U) | ((iy & 1U) << 1) | ((ix & 2U) << 1) | ((iy & 2U) << 2);
    EXPECT_EQ(*n.index_in_depth, morton);
    EXPECT_EQ(n.upper[0] - n.lower[0], 0.25);
    EXPECT_EQ(n.upper[1] - n.lower[1], 0.25);
  }
}

TEST(PartitionTree, LongestSideCyclesThroughTheDimensionsInOrder) {
  // In the cube, the longest side with ties to the lowest index is 0, 1, ..., d-1, 0, 1, ...
  for (std::size_t k : {2U, 3U, 5U}) {
    PartitionTree tree(3, {.split = SplitRule::longest_side, .branching = k});
    Rng rng = make_rng(3, RngStream::candidates, k);
    const std::vector<std::size_t> expected = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2};
    NodeId id = PartitionTree::root;
    for (std::size_t h = 0; h < expected.size(); ++h) {
      SCOPED_TRACE("K = " + std::to_string(k) + ", depth " + std::to_string(h));
      EXPECT_EQ(tree.split_dimension(id), expected[h]);
      const Eigen::VectorXd widths = tree.node(id).widths();
      const std::vector<NodeId> children = tree.expand(id);
      const NodeId next = children[rng() % children.size()];
      const Eigen::VectorXd child_widths = tree.node(next).widths();
      for (Eigen::Index j = 0; j < 3; ++j) {
        if (static_cast<std::size_t>(j) == expected[h]) {
          EXPECT_NEAR(child_widths[j], widths[j] / static_cast<double>(k), 1e-15);
        } else {
          EXPECT_EQ(child_widths[j], widths[j]);
        }
      }
      id = next;
    }
  }
}

TEST(PartitionTree, LongestSideKeepsAspectRatiosWithinK) {
  for (std::size_t dim : {2U, 3U, 5U}) {
    for (std::size_t k : {2U, 3U, 4U, 7U}) {
      PartitionTree tree(dim, {.split = SplitRule::longest_side, .branching = k});
      expand_random_leaves(tree, 6 * dim, 100 * dim + k);
      for (const PartitionNode& n : tree.nodes()) {
        const Eigen::VectorXd w = n.widths();
        EXPECT_LE(w.maxCoeff() / w.minCoeff(), static_cast<double>(k) * (1.0 + 1e-12))
            << "d = " << dim << ", K = " << k << ", node " << n.id << " at depth " << n.depth;
        // The split dimension is a geometric longest side (up to rounding of the stored box).
        const std::size_t j = tree.split_dimension(n.id);
        EXPECT_GE(w[static_cast<Eigen::Index>(j)], w.maxCoeff() * (1.0 - 1e-12));
      }
    }
  }
}

TEST(PartitionTree, DepthAndIndexLabelsFollowTheKaryNumbering) {
  PartitionTree tree(2, {.split = SplitRule::longest_side, .branching = 3});
  expand_to_depth(tree, 3);
  EXPECT_EQ(tree.max_depth(), 3U);
  std::uint64_t width = 1;  // K^h
  for (std::size_t h = 0; h <= 3; ++h) {
    const std::vector<NodeId> level = tree.nodes_at_depth(h);
    ASSERT_EQ(level.size(), width);
    for (std::size_t position = 0; position < level.size(); ++position) {
      const PartitionNode& n = tree.node(level[position]);
      EXPECT_EQ(n.depth, h);
      EXPECT_EQ(n.index_in_depth, position);
      if (h > 0) {
        const PartitionNode& parent = tree.node(n.parent);
        EXPECT_EQ(parent.depth, h - 1);
        EXPECT_EQ(parent.children[n.position_in_parent], n.id);
        EXPECT_EQ(*n.index_in_depth, 3 * *parent.index_in_depth + n.position_in_parent);
      }
    }
    width *= 3;
  }
  EXPECT_TRUE(tree.nodes_at_depth(4).empty());

  // In one dimension, cell (h, i) is [i / K^h, (i + 1) / K^h], as in the GPOO experiments.
  PartitionTree line(1, {.split = SplitRule::longest_side, .branching = 3});
  expand_to_depth(line, 3);
  for (NodeId id : line.nodes_at_depth(3)) {
    const PartitionNode& n = line.node(id);
    EXPECT_NEAR(n.lower[0], static_cast<double>(*n.index_in_depth) / 27.0, 1e-15);
    EXPECT_NEAR(n.upper[0], static_cast<double>(*n.index_in_depth + 1) / 27.0, 1e-15);
  }
}

TEST(PartitionTree, LabelsStopWhereTheyNoLongerFitIn64Bits) {
  // K = 16: labels at depth 16 reach 16^16 - 1 = 2^64 - 1; depth 17 has none.
  PartitionTree tree(1, {.split = SplitRule::longest_side, .branching = 16});
  NodeId first = PartitionTree::root;
  NodeId last = PartitionTree::root;
  for (std::size_t h = 1; h <= 17; ++h) {
    first = tree.expand(first).front();  // near 0, where tiny cells are still representable
    const PartitionNode& n = tree.node(first);
    if (h <= 16) {
      EXPECT_EQ(n.index_in_depth, 0U) << "depth " << h;
    } else {
      EXPECT_FALSE(n.index_in_depth.has_value());
    }
  }
  for (std::size_t h = 1; h <= 4; ++h) last = tree.expand(last).back();
  EXPECT_EQ(tree.node(last).index_in_depth, 16U * 16U * 16U * 16U - 1U);
}

TEST(PartitionTree, ExpandRefusesCellsTooNarrowForDoublesAndLeavesTheTreeUnchanged) {
  PartitionTree tree(1, {.split = SplitRule::longest_side, .branching = 2});
  NodeId id = PartitionTree::root;
  bool refused = false;
  for (int h = 0; h < 80 && !refused; ++h) {
    const std::size_t size = tree.size();
    const std::vector<NodeId> sequence = tree.expand_sequence();
    try {
      id = tree.expand(id).back();  // towards 1, where doubles run out near width 2^-53
    } catch (const std::domain_error&) {
      refused = true;
      EXPECT_EQ(tree.size(), size);
      EXPECT_EQ(tree.expand_sequence(), sequence);
      EXPECT_FALSE(tree.node(id).expanded());
      EXPECT_GE(tree.node(id).depth, 50U);
    }
  }
  EXPECT_TRUE(refused);
}

TEST(PartitionTree, DiametersShrinkByTheExpectedFactorPerLevel) {
  // all_dimensions: every level halves the diameter, sqrt(d) 2^-h.
  PartitionTree quad(3, {.split = SplitRule::all_dimensions});
  expand_to_depth(quad, 3);
  for (const PartitionNode& n : quad.nodes()) {
    EXPECT_NEAR(quad.diameter(n.id), std::sqrt(3.0) * std::ldexp(1.0, -static_cast<int>(n.depth)), 1e-15);
    if (n.parent != no_node) {
      EXPECT_EQ(quad.diameter(n.id), 0.5 * quad.diameter(n.parent));
    }
  }

  // longest_side, d = 2, K = 2, by hand: widths (1,1), (1/2,1), (1/2,1/2), (1/4,1/2), (1/4,1/4).
  PartitionTree halves(2, {.split = SplitRule::longest_side, .branching = 2});
  const double by_hand[] = {std::sqrt(2.0), std::sqrt(1.25), std::sqrt(0.5), std::sqrt(0.3125),
                            std::sqrt(0.125)};
  NodeId id = PartitionTree::root;
  for (std::size_t h = 0; h < 5; ++h) {
    EXPECT_DOUBLE_EQ(halves.diameter(id), by_hand[h]);
    EXPECT_DOUBLE_EQ(halves.diameter_at_depth(h), by_hand[h]);
    id = halves.expand(id)[h % 2];
  }

  // longest_side, K = 3, d = 3: d levels shrink the diameter by K.
  PartitionTree thirds(3, {.split = SplitRule::longest_side, .branching = 3});
  expand_random_leaves(thirds, 30, 5);
  for (const PartitionNode& n : thirds.nodes()) {
    EXPECT_NEAR(thirds.diameter(n.id), thirds.diameter_at_depth(n.depth), 1e-14);
    if (n.depth >= 3) {
      NodeId ancestor = n.id;
      for (int up = 0; up < 3; ++up) ancestor = thirds.node(ancestor).parent;
      EXPECT_NEAR(thirds.diameter(n.id), thirds.diameter(ancestor) / 3.0, 1e-14);
    }
  }
}

TEST(PartitionTree, DiametersUnderArdLengthscalesScaleEachSide) {
  PartitionTree tree(2, {.split = SplitRule::longest_side, .branching = 2});
  const Eigen::Vector2d lengthscales(0.5, 2.0);
  EXPECT_DOUBLE_EQ(tree.diameter(PartitionTree::root, lengthscales), std::sqrt(4.0 + 0.25));
  const NodeId child = tree.expand(PartitionTree::root)[1];  // [.5, 1] x [0, 1]
  EXPECT_DOUBLE_EQ(tree.diameter(child, lengthscales), std::sqrt(1.0 + 0.25));
  EXPECT_DOUBLE_EQ(tree.diameter_at_depth(1, lengthscales), std::sqrt(1.0 + 0.25));
  EXPECT_DOUBLE_EQ(tree.diameter(child, Eigen::Vector2d::Ones()), tree.diameter(child));
  EXPECT_THROW(tree.diameter(child, Eigen::Vector2d(1.0, 0.0)), std::invalid_argument);
  EXPECT_THROW(tree.diameter(child, Eigen::Vector3d::Ones()), std::invalid_argument);
}

TEST(PartitionTree, DepthForDiameterIsTheShallowestDepthWhoseCellsAreSmallEnough) {
  // Quadtree: sqrt(2) 2^-h <= 0.1 first at h = 4; longest side d = 2, K = 2: 0.5 first at h = 4.
  EXPECT_EQ(PartitionTree(2, {.split = SplitRule::all_dimensions}).depth_for_diameter(0.1), 4U);
  EXPECT_EQ(PartitionTree(2, {.split = SplitRule::longest_side}).depth_for_diameter(0.5), 4U);
  EXPECT_EQ(PartitionTree(2).depth_for_diameter(10.0), 0U);
  EXPECT_THROW(PartitionTree(2).depth_for_diameter(0.0), std::invalid_argument);

  // Against the cells themselves, with and without lengthscales.
  PartitionTree tree(3, {.split = SplitRule::longest_side, .branching = 3});
  expand_to_depth(tree, 5);
  const Eigen::Vector3d lengthscales(0.2, 1.0, 3.0);
  for (double target : {1.5, 0.9, 0.6, 0.5, 0.4}) {
    std::size_t brute = 0;
    while (true) {
      const std::vector<NodeId> level = tree.nodes_at_depth(brute);
      ASSERT_FALSE(level.empty()) << "target " << target << " needs a deeper tree";
      const bool small = std::all_of(level.begin(), level.end(),
                                     [&](NodeId id) { return tree.diameter(id) <= target; });
      if (small) break;
      ++brute;
    }
    EXPECT_EQ(tree.depth_for_diameter(target), brute) << "target " << target;
  }
  for (double target : {6.0, 2.0, 1.2}) {
    const std::size_t h = tree.depth_for_diameter(target, lengthscales);
    ASSERT_LE(h, 5U);
    for (NodeId id : tree.nodes_at_depth(h)) EXPECT_LE(tree.diameter(id, lengthscales), target * (1 + 1e-12));
    if (h > 0) {
      for (NodeId id : tree.nodes_at_depth(h - 1)) EXPECT_GT(tree.diameter(id, lengthscales), target);
    }
  }
}

TEST(PartitionTree, OneRepresentativeIsTheCentre) {
  PartitionTree tree(3, {.split = SplitRule::longest_side, .branching = 3});
  expand_random_leaves(tree, 10, 9);
  for (const PartitionNode& n : tree.nodes()) {
    const Eigen::MatrixXd points = tree.representatives(n.id, 1);
    ASSERT_EQ(points.cols(), 1);
    for (Eigen::Index j = 0; j < 3; ++j) {
      EXPECT_EQ(points(j, 0), n.centre()[j]);
      EXPECT_NEAR(points(j, 0), 0.5 * (n.lower[j] + n.upper[j]), 1e-16);
    }
  }
}

TEST(PartitionTree, RepresentativesInOneDimensionAreThePapersSubIntervalCentres) {
  // GPOO, S = 10: x_s = l + (s - 1/2)(u - l)/S.
  PartitionTree tree(1, {.split = SplitRule::longest_side, .branching = 2});
  expand_to_depth(tree, 3);
  for (const PartitionNode& n : tree.nodes()) {
    const Eigen::MatrixXd points = tree.representatives(n.id, 10);
    ASSERT_EQ(points.cols(), 10);
    for (int s = 1; s <= 10; ++s) {
      EXPECT_NEAR(points(0, s - 1), n.lower[0] + (s - 0.5) * (n.upper[0] - n.lower[0]) / 10.0, 1e-15);
    }
  }
}

TEST(PartitionTree, RepresentativesForPerfectPowersFormTheMidpointGrid) {
  const Eigen::MatrixXd points = representative_pattern(2, 4);
  const double expected[4][2] = {{0.25, 0.25}, {0.75, 0.25}, {0.25, 0.75}, {0.75, 0.75}};
  for (int s = 0; s < 4; ++s) {
    EXPECT_EQ(points(0, s), expected[s][0]);
    EXPECT_EQ(points(1, s), expected[s][1]);
  }
  const Eigen::MatrixXd cube = representative_pattern(3, 27);
  for (Eigen::Index s = 0; s < cube.cols(); ++s) {
    for (Eigen::Index j = 0; j < 3; ++j) {
      const double scaled = cube(j, s) * 3.0 - 0.5;  // 0, 1 or 2
      EXPECT_NEAR(scaled, std::round(scaled), 1e-12);
    }
  }
}

TEST(PartitionTree, OtherRepresentativeCountsAreStratifiedInEveryCoordinate) {
  // S = 8 in d = 2 (not a square): each of the 8 strips of either axis holds one point.
  const Eigen::MatrixXd points = representative_pattern(2, 8);
  for (Eigen::Index j = 0; j < 2; ++j) {
    std::vector<int> strips(8, 0);
    for (Eigen::Index s = 0; s < 8; ++s) ++strips[static_cast<std::size_t>(points(j, s) * 8.0)];
    for (int count : strips) EXPECT_EQ(count, 1) << "axis " << j;
  }
}

TEST(PartitionTree, RepresentativesLieInsideTheirCellAndRepeatExactly) {
  for (std::size_t dim : {1U, 2U, 3U}) {
    PartitionTree tree(dim, {.split = SplitRule::longest_side, .branching = 3});
    PartitionTree twin(dim, {.split = SplitRule::longest_side, .branching = 3});
    expand_random_leaves(tree, 8, 17 + dim);
    expand_random_leaves(twin, 8, 17 + dim);
    for (std::size_t count : {1U, 2U, 3U, 4U, 5U, 9U, 10U, 16U, 27U}) {
      for (const PartitionNode& n : tree.nodes()) {
        const Eigen::MatrixXd points = tree.representatives(n.id, count);
        ASSERT_EQ(points.rows(), static_cast<Eigen::Index>(dim));
        ASSERT_EQ(points.cols(), static_cast<Eigen::Index>(count));
        for (Eigen::Index s = 0; s < points.cols(); ++s) {
          EXPECT_TRUE((points.col(s).array() > n.lower.array()).all() &&
                      (points.col(s).array() < n.upper.array()).all())
              << "S = " << count << ", d = " << dim << ", node " << n.id;
          for (Eigen::Index r = 0; r < s; ++r) EXPECT_NE(points.col(s), points.col(r));
        }
        EXPECT_EQ(points, tree.representatives(n.id, count));  // same call, same points
        EXPECT_EQ(points, twin.representatives(n.id, count));  // another tree, same points
        // The same pattern relative to the cell in every cell.
        const Eigen::MatrixXd relative =
            (points.colwise() - n.lower).array().colwise() / n.widths().array();
        EXPECT_TRUE(relative.isApprox(representative_pattern(dim, count), 1e-12));
      }
    }
  }
  EXPECT_THROW(PartitionTree(2).representatives(PartitionTree::root, 0), std::invalid_argument);
}

// Every field of every node, compared exactly.
void expect_identical(const PartitionTree& a, const PartitionTree& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.expand_sequence(), b.expand_sequence());
  EXPECT_EQ(a.max_depth(), b.max_depth());
  for (NodeId id = 0; id < a.size(); ++id) {
    const PartitionNode& x = a.node(id);
    const PartitionNode& y = b.node(id);
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.parent, y.parent);
    EXPECT_EQ(x.depth, y.depth);
    EXPECT_EQ(x.position_in_parent, y.position_in_parent);
    EXPECT_EQ(x.index_in_depth, y.index_in_depth);
    EXPECT_EQ(x.lower, y.lower);
    EXPECT_EQ(x.upper, y.upper);
    EXPECT_EQ(x.children, y.children);
  }
}

TEST(PartitionTree, ReplayingTheExpandSequenceRebuildsTheTreeNodeForNode) {
  const std::vector<std::pair<std::size_t, PartitionTreeOptions>> setups = {
      {2, {.split = SplitRule::all_dimensions}},
      {3, {.split = SplitRule::longest_side, .branching = 3}},
      {1, {.split = SplitRule::longest_side, .branching = 5}},
  };
  for (const auto& [dim, options] : setups) {
    PartitionTree tree(dim, options);
    expand_random_leaves(tree, 40, 23 + dim);
    ASSERT_EQ(tree.expand_sequence().size(), 40U);
    const PartitionTree copy = PartitionTree::replay(dim, options, tree.expand_sequence());
    expect_identical(tree, copy);
  }
  // A sequence expanding nodes in another order gives another numbering: ids depend on the order.
  PartitionTree a(1);
  a.expand(0);
  a.expand(1);
  a.expand(2);
  const PartitionTree b = PartitionTree::replay(1, {}, {0, 2, 1});
  EXPECT_NE(a.node(3).lower, b.node(3).lower);
}

TEST(PartitionTree, ReplayRejectsSequencesNotFromExpandSequence) {
  EXPECT_THROW(PartitionTree::replay(2, {}, {0, 5}), std::invalid_argument);
  EXPECT_THROW(PartitionTree::replay(2, {}, {0, 1, 0}), std::invalid_argument);
  EXPECT_NO_THROW(PartitionTree::replay(2, {}, {0, 1, 2, 3}));
}

TEST(PartitionTree, ExpandIsIdempotent) {
  PartitionTree tree(2, {.split = SplitRule::all_dimensions});
  const std::vector<NodeId> first = tree.expand(PartitionTree::root);
  const std::vector<NodeId> grandchildren = tree.expand(first[2]);
  const std::size_t size = tree.size();
  const std::vector<NodeId> sequence = tree.expand_sequence();
  const std::vector<NodeId> leaves = tree.leaves();
  EXPECT_EQ(tree.expand(PartitionTree::root), first);
  EXPECT_EQ(tree.expand(first[2]), grandchildren);
  EXPECT_EQ(tree.size(), size);
  EXPECT_EQ(tree.expand_sequence(), sequence);
  EXPECT_EQ(tree.leaves(), leaves);
  EXPECT_EQ(sequence, (std::vector<NodeId>{0, first[2]}));
}

TEST(PartitionTree, LeavesAndLeafContaining) {
  PartitionTree tree(2, {.split = SplitRule::longest_side, .branching = 3});
  expand_random_leaves(tree, 12, 31);
  const std::vector<NodeId> leaves = tree.leaves();
  EXPECT_EQ(leaves.size(), 1U + 2U * 12U);  // each expansion turns one leaf into K
  EXPECT_TRUE(std::is_sorted(leaves.begin(), leaves.end()));
  for (NodeId id : leaves) EXPECT_FALSE(tree.node(id).expanded());

  Rng rng = make_rng(2, RngStream::candidates, 2);
  for (int p = 0; p < 200; ++p) {
    const Eigen::Vector2d x(uniform01(rng), uniform01(rng));
    const NodeId leaf = tree.leaf_containing(x);
    EXPECT_TRUE(tree.node(leaf).is_leaf());
    EXPECT_TRUE(closed_box_contains(tree.node(leaf), x));
  }
  // Shared boundaries go to the upper cell; the cube's upper face is inside.
  PartitionTree halves(1);
  halves.expand(0);
  EXPECT_EQ(halves.leaf_containing(Eigen::VectorXd::Constant(1, 0.5)), 2U);
  EXPECT_EQ(halves.leaf_containing(Eigen::VectorXd::Constant(1, 1.0)), 2U);
  EXPECT_EQ(halves.leaf_containing(Eigen::VectorXd::Constant(1, 0.0)), 1U);
  EXPECT_THROW(halves.leaf_containing(Eigen::VectorXd::Constant(1, 1.5)), std::invalid_argument);
}

TEST(PartitionTree, OptionsAreValidated) {
  EXPECT_THROW(PartitionTree(0), std::invalid_argument);
  EXPECT_THROW(PartitionTree(2, {.split = SplitRule::longest_side, .branching = 1}), std::invalid_argument);
  EXPECT_THROW(PartitionTree(2, {.split = SplitRule::all_dimensions, .branching = 2}), std::invalid_argument);
  EXPECT_EQ(PartitionTree(2, {.split = SplitRule::all_dimensions, .branching = 4}).branching(), 4U);
  EXPECT_THROW(PartitionTree(max_all_dimensions_dim + 1, {.split = SplitRule::all_dimensions}),
               std::invalid_argument);
  EXPECT_EQ(PartitionTree(4).branching(), 2U);
  EXPECT_EQ(split_rule_from_string(to_string(SplitRule::longest_side)), SplitRule::longest_side);
  EXPECT_EQ(split_rule_from_string(to_string(SplitRule::all_dimensions)), SplitRule::all_dimensions);
  EXPECT_THROW(split_rule_from_string("quadtree"), std::invalid_argument);
}

}  // namespace
}  // namespace tune
