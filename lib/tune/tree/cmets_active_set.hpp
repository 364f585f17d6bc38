#pragma once
// The candidate-set bookkeeping of CMETS (digest-iqbo-cmets.md, Alg. 1, sections 4 and 7.3): the
// leaves L_t, the look-ahead set L'_t and the active set A_t = L_t U L'_t over a partition tree of
// the unit cube, updated after each query a_t. The acquisition (CMES) and the costs lambda_l are
// the caller's: select() takes them as callbacks.
//
// Conventions
// - The active set owns its PartitionTree. Children are created (PartitionTree::expand) exactly
//   when the rules need them, in a deterministic order, so replaying queries() on a fresh active set
//   with the same dimension and options rebuilds the sets and the tree, node ids included: a
//   strategy persists only the query sequence (replay()).
// - Depth l(a) is the tree depth (root 0). Nodes at options.max_depth have no children: they are
//   never expanded, and the rules treat children() of them as empty.
// - Initial state (both variants, exactly Alg. 1): T_0 = {root}, L_0 = {root},
//   L'_0 = children(root), A_0 = L_0 U L'_0.
// - record_query(a) for the literal variant (digest 4.1, quirks kept, 4.3):
//     if a in L'_{t-1}:  L_t = L_{t-1} - {parent(a)} + children(a);  L'_t = L'_{t-1} - {a}
//     else:              L_t = L_{t-1} - {a} + children(a);          L'_t = L'_{t-1}
//     for i in L_t:      L'_t = L'_t U children(i)
//   So the parent of a look-ahead node leaves L without being queried, L' is never pruned except
//   for the node just queried, and a node in both L and L' (a child of a queried leaf) stays in L
//   when queried through the first branch: it can be queried again.
// - record_query(a) for the cleaned variant (digest 7.3.3):
//     L_t  = L_{t-1} - {a} + (children(a) - Q_t)
//     L'_t = (U_{i in L_t} children(i)) - Q_t
//   where Q_t is the set of queried nodes (a included). With this rule L and L' are disjoint and
//   no queried node is ever active again. With allow_requery, Q_t is taken empty and a stays in
//   L: a queried node remains a candidate (repeats are legitimate in noisy BO), and A only grows.
//   (A look-ahead node's parent stays in L: the parent was not queried.)
// - select() maximises score(a) / cost(l(a)) over A_t among the nodes that fit the remaining
//   budget (cost <= budget, digest 7.3.4: never overshoot), ties to the lowest id. With
//   allow_overshoot (Alg. 1's literal `while B > 0`) every active node is eligible while the
//   budget is > 0, so the last query may overshoot it.
#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tune/tree/partition_tree.hpp"

namespace tune {

enum class CmetsVariant { cleaned, literal };

const char* to_string(CmetsVariant variant);
CmetsVariant cmets_variant_from_string(const std::string& name);  // throws std::invalid_argument

// The paper's split for dimension d (digest 7.3.1): the 2^d-ary all_dimensions tree (the 2-D
// quadtree) for d <= 2, longest_side with K = 2 beyond (an octree in 3-D adds 64 look-ahead
// nodes per query: measured 1 s per ask after 200 queries on Hartmann-3).
PartitionTreeOptions cmets_default_tree_options(std::size_t dim);

struct CmetsActiveSetOptions {
  CmetsVariant variant = CmetsVariant::cleaned;
  // Nodes at this depth have no children; the paper's experiments use 6.
  std::size_t max_depth = 6;
  // Cleaned variant only (the constructor rejects it for the literal one): queried nodes remain
  // candidates.
  bool allow_requery = false;
  // select() follows the literal `while B > 0`: any active node while budget > 0.
  bool allow_overshoot = false;
  // The tree's split; empty means cmets_default_tree_options(dim).
  std::optional<PartitionTreeOptions> tree;
};

class CmetsActiveSet {
 public:
  using ScoreFn = std::function<double(NodeId)>;          // the acquisition at a node, e.g. CMES
  using CostFn = std::function<double(std::size_t depth)>;  // lambda_l

  // Builds the initial state (expands the root unless max_depth = 0). Throws
  // std::invalid_argument for allow_requery with the literal variant, and whatever PartitionTree's
  // constructor throws for the dimension and split.
  explicit CmetsActiveSet(std::size_t dim, CmetsActiveSetOptions options = {});

  // A fresh active set after record_query() of each node of `queries` in turn; throws
  // std::invalid_argument if one of them is not active at its turn.
  static CmetsActiveSet replay(std::size_t dim, CmetsActiveSetOptions options,
                               const std::vector<NodeId>& queries);

  const CmetsActiveSetOptions& options() const { return options_; }
  const PartitionTree& tree() const { return tree_; }  // expand() invalidates node references

  std::vector<NodeId> active() const;     // A_t = L_t U L'_t, increasing id
  std::vector<NodeId> leaves() const;     // L_t, increasing id
  std::vector<NodeId> lookahead() const;  // L'_t, increasing id
  bool is_active(NodeId node) const;
  bool empty() const { return leaves_.empty() && lookahead_.empty(); }

  // The queried nodes in query order (a_1, a_2, ...): the state to persist.
  const std::vector<NodeId>& queries() const { return queries_; }
  std::size_t times_queried(NodeId node) const;

  // The update after querying `node` (a_t). Throws std::invalid_argument if it is not active.
  // Expands the tree where the rules need children (PartitionTree::expand may throw
  // std::domain_error for cells too narrow to split).
  void record_query(NodeId node);

  // The active node maximising score / cost(depth) among those eligible for `budget` (see the
  // header comment), ties to the lowest id; nothing when no node is eligible. cost is evaluated at
  // every active node, score only at eligible ones. Throws std::invalid_argument if a cost is not
  // finite and > 0 or a score is NaN.
  std::optional<NodeId> select(const ScoreFn& score, const CostFn& cost, double budget) const;

 private:
  // children(i) of the rules: empty at max_depth, otherwise the node's children (expanding it).
  std::vector<NodeId> children(NodeId node);
  void record_literal(NodeId node);
  void record_cleaned(NodeId node);

  CmetsActiveSetOptions options_;
  PartitionTree tree_;
  std::set<NodeId> leaves_;     // L_t
  std::set<NodeId> lookahead_;  // L'_t
  std::vector<NodeId> queries_;
  std::vector<std::size_t> query_counts_;  // by node id; grows with the tree
};

}  // namespace tune
