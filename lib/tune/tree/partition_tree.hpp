#pragma once
// The hierarchical partition of the unit cube [0,1]^d that the tree strategies share: CMETS
// (digest-iqbo-cmets.md, Alg. 1: a quadtree of cells queried at their centres), GPOO and Zoghi's
// branch and bound (digest-gpoo-zoghi.md, sections 2.1 and 2.3: a K-ary tree of cells with S
// representative points each). A tree only knows geometry; which node to expand, and when, is the
// strategy's business.
//
// Conventions
// - A node is a closed axis-aligned box [lower, upper] in [0,1]^d. The root (id 0) is the cube.
// - Node ids are indices in the node vector. expand(n) appends the K children of n with
//   consecutive ids, in child order, so a tree is rebuilt node for node (ids included) by
//   replaying expand_sequence() on a fresh tree with the same dimension and options. Strategies
//   persist that sequence in their YAML state instead of the boxes.
// - Labels (h, i) as in the GPOO paper: the root is (0, 0), and child k (0 <= k < K) of (h, i) is
//   (h + 1, K i + k) (the paper leaves the child indices open; digest-gpoo-zoghi.md section 2.1
//   proposes this rule). So 0 <= i < K^h, and the i order at a depth is the left-to-right order of
//   the tree.
// - Split rules
//   longest_side    split the longest side into K equal slabs, ties to the lowest dimension; child
//                   k is the k-th slab in increasing coordinate. Starting from the cube every cell
//                   at depth h has the same shape and the split dimension is h mod d, so sides
//                   never differ by more than a factor K.
//   all_dimensions  halve every side, K = 2^d children; the paper's 2-D quadtree (CMETS, "binary
//                   tree in 2D", each node split into 4 equal squares). Child k takes the upper half
//                   of dimension j iff bit j of k is set (dimension 0 is the least significant
//                   bit). The paper does not order the four children; with this order, in 2-D:
//                     k = 0: [0, .5] x [0, .5]    k = 1: [.5, 1] x [0, .5]
//                     k = 2: [0, .5] x [.5, 1]    k = 3: [.5, 1] x [.5, 1]
//                   and the label i at depth h is the Morton (Z-order) code of the cell's integer
//                   coordinates, x bits in the even positions.
// - Adjacent children share their boundary as the very same double, so the children of a cell
//   tile it exactly: the union is the parent and the interiors are disjoint.
#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace tune {

using NodeId = std::size_t;
inline constexpr NodeId no_node = std::numeric_limits<NodeId>::max();

enum class SplitRule { longest_side, all_dimensions };

const char* to_string(SplitRule rule);
SplitRule split_rule_from_string(const std::string& name);  // throws std::invalid_argument

struct PartitionTreeOptions {
  SplitRule split = SplitRule::longest_side;
  // K, the number of children per expansion. 0 means the rule's own: 2 for longest_side, 2^d for
  // all_dimensions (which accepts no other value).
  std::size_t branching = 0;
};

// all_dimensions creates 2^d children per expansion; beyond this dimension use longest_side.
inline constexpr std::size_t max_all_dimensions_dim = 16;

struct PartitionNode {
  NodeId id = 0;
  NodeId parent = no_node;           // no_node for the root
  std::size_t depth = 0;             // h
  std::size_t position_in_parent = 0;  // k, the child's rank among its siblings (0 for the root)
  // The paper's i in (h, i): the base-K number spelled by the positions on the path from the root.
  // Empty where K^h exceeds 2^64 and i no longer fits (e.g. below depth 64 for K = 2).
  std::optional<std::uint64_t> index_in_depth = 0;
  Eigen::VectorXd lower;
  Eigen::VectorXd upper;
  std::vector<NodeId> children;  // in child order; empty until the node is expanded

  bool expanded() const { return !children.empty(); }
  bool is_leaf() const { return children.empty(); }
  Eigen::VectorXd widths() const { return upper - lower; }
  Eigen::VectorXd centre() const { return lower + 0.5 * (upper - lower); }
  double volume() const { return (upper - lower).prod(); }
};

class PartitionTree {
 public:
  static constexpr NodeId root = 0;

  // Throws std::invalid_argument for dim = 0, K < 2, or an all_dimensions tree with another K or
  // with dim > max_all_dimensions_dim.
  explicit PartitionTree(std::size_t dim, PartitionTreeOptions options = {});

  // The tree obtained by expanding a fresh tree at each id of `sequence` in turn. Throws
  // std::invalid_argument if an id does not exist yet or was already expanded (a sequence from
  // expand_sequence() never does either).
  static PartitionTree replay(std::size_t dim, PartitionTreeOptions options,
                              const std::vector<NodeId>& sequence);

  std::size_t dim() const { return dim_; }
  SplitRule split_rule() const { return split_; }
  std::size_t branching() const { return branching_; }  // K
  std::size_t size() const { return nodes_.size(); }    // number of nodes

  // References into the node vector are invalidated by expand(); hold ids, not references.
  const PartitionNode& node(NodeId id) const;  // throws std::out_of_range
  const std::vector<PartitionNode>& nodes() const { return nodes_; }

  // Creates the K children of `id` and returns their ids in child order. Idempotent: on an
  // already expanded node it returns the existing children and changes nothing. Throws
  // std::domain_error if the cell is too narrow for K distinct doubles along a split side.
  std::vector<NodeId> expand(NodeId id);

  // The ids passed to expand() that created children, in order (repeated calls are not recorded).
  const std::vector<NodeId>& expand_sequence() const { return expand_sequence_; }

  std::vector<NodeId> leaves() const;                          // increasing id
  std::vector<NodeId> nodes_at_depth(std::size_t depth) const;  // increasing label i
  std::size_t max_depth() const { return max_depth_; }          // deepest existing node

  // The leaf whose cell holds x. Within a parent, a point on a shared boundary belongs to the
  // child above it (cells are half-open [lower, upper) except at the cube's upper face).
  // Throws std::invalid_argument if x is not in [0,1]^d.
  NodeId leaf_containing(const Eigen::VectorXd& x) const;

  // The dimension a longest_side split of `id` cuts (h mod d); for all_dimensions every dimension
  // is halved and this returns dim().
  std::size_t split_dimension(NodeId id) const;

  // Largest distance between two points of the cell: the Euclidean norm of its widths, or with ARD
  // lengthscales l the norm of widths_j / l_j (the distance a stationary ARD kernel sees).
  double diameter(NodeId id) const;
  double diameter(NodeId id, const Eigen::VectorXd& lengthscales) const;

  // The diameter every cell at `depth` has (all cells at one depth share one shape), computed from
  // the split counts rather than from stored boxes.
  double diameter_at_depth(std::size_t depth) const;
  double diameter_at_depth(std::size_t depth, const Eigen::VectorXd& lengthscales) const;

  // The smallest depth whose cells have diameter <= max_diameter (throws std::invalid_argument
  // unless max_diameter > 0).
  std::size_t depth_for_diameter(double max_diameter) const;
  std::size_t depth_for_diameter(double max_diameter, const Eigen::VectorXd& lengthscales) const;

  // GPOO's S representative points of the cell, one per column: representative_pattern(d, S)
  // mapped affinely onto the cell. Same cell and S, same points, bit for bit.
  Eigen::MatrixXd representatives(NodeId id, std::size_t count) const;

 private:
  void check_id(NodeId id, const char* what) const;
  void check_lengthscales(const Eigen::VectorXd& lengthscales) const;
  Eigen::VectorXd widths_at_depth(std::size_t depth) const;

  std::size_t dim_;
  SplitRule split_;
  std::size_t branching_;
  std::vector<PartitionNode> nodes_;
  std::vector<NodeId> expand_sequence_;
  std::size_t max_depth_ = 0;
  std::size_t labelled_depth_ = 0;  // deepest h with K^h <= 2^64: labels (h, i) exist down to it
};

// Representative points of the unit cube, one per column, all strictly inside it; a cell's
// representatives are lower + widths .* these. The GPOO paper (d = 1, digest-gpoo-zoghi.md
// section 2.1) uses the cell centre for S = 1 and the centres of S equal sub-intervals for S > 1;
// generalised (digest section 6.6) as:
// - S = m^d (always in d = 1, and S = 1 in any d): the centres of the m^d cells of the regular
//   m-per-side grid, dimension 0 varying fastest. S = 1 gives the centre.
// - any other S: the first S points of the unshifted Sobol sequence, origin included, moved by
//   half a grid step 2^-(k+1), k = ceil(log2 S), so that no point lies on the boundary; for
//   S = 2^k they are the stratum centres of a (t, k, d)-net. (The digest's alternative, S slabs
//   along the longest side, puts every point on one line through the centre in d >= 2.)
// Throws std::invalid_argument for S = 0 or d = 0.
Eigen::MatrixXd representative_pattern(std::size_t dim, std::size_t count);

}  // namespace tune
