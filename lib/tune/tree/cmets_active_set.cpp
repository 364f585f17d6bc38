// CMETS candidate sets (Alg. 1): the literal and cleaned update rules and the budgeted selection.
// The header states the rules.
#include "tune/tree/cmets_active_set.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

namespace tune {

const char* to_string(CmetsVariant variant) {
  switch (variant) {
    case CmetsVariant::cleaned:
      return "cleaned";
    case CmetsVariant::literal:
      return "literal";
  }
  return "unknown";
}

CmetsVariant cmets_variant_from_string(const std::string& name) {
  if (name == "cleaned") return CmetsVariant::cleaned;
  if (name == "literal") return CmetsVariant::literal;
  throw std::invalid_argument("unknown CMETS variant '" + name + "' (expected cleaned or literal)");
}

PartitionTreeOptions cmets_default_tree_options(std::size_t dim) {
  if (dim <= 2) return PartitionTreeOptions{.split = SplitRule::all_dimensions};
  return PartitionTreeOptions{.split = SplitRule::longest_side, .branching = 2};
}

namespace {

CmetsActiveSetOptions checked(CmetsActiveSetOptions options) {
  if (options.allow_requery && options.variant == CmetsVariant::literal) {
    throw std::invalid_argument(
        "CMETS: allow_requery is an option of the cleaned variant only (the literal rules decide "
        "re-queries themselves)");
  }
  return options;
}

}  // namespace

CmetsActiveSet::CmetsActiveSet(std::size_t dim, CmetsActiveSetOptions options)
    : options_(checked(std::move(options))),
      tree_(dim, options_.tree ? *options_.tree : cmets_default_tree_options(dim)) {
  // T_0 = {root}, L_0 = {root}, L'_0 = children(root), A_0 = L_0 U L'_0.
  leaves_.insert(PartitionTree::root);
  for (NodeId child : children(PartitionTree::root)) lookahead_.insert(child);
}

CmetsActiveSet CmetsActiveSet::replay(std::size_t dim, CmetsActiveSetOptions options,
                                      const std::vector<NodeId>& queries) {
  CmetsActiveSet state(dim, std::move(options));
  for (NodeId node : queries) state.record_query(node);
  return state;
}

std::vector<NodeId> CmetsActiveSet::active() const {
  std::vector<NodeId> result;
  result.reserve(leaves_.size() + lookahead_.size());
  std::set_union(leaves_.begin(), leaves_.end(), lookahead_.begin(), lookahead_.end(),
                 std::back_inserter(result));
  return result;
}

std::vector<NodeId> CmetsActiveSet::leaves() const { return {leaves_.begin(), leaves_.end()}; }

std::vector<NodeId> CmetsActiveSet::lookahead() const {
  return {lookahead_.begin(), lookahead_.end()};
}

bool CmetsActiveSet::is_active(NodeId node) const {
  return leaves_.count(node) != 0 || lookahead_.count(node) != 0;
}

std::size_t CmetsActiveSet::times_queried(NodeId node) const {
  return node < query_counts_.size() ? query_counts_[node] : 0;
}

std::vector<NodeId> CmetsActiveSet::children(NodeId node) {
  if (tree_.node(node).depth >= options_.max_depth) return {};
  return tree_.expand(node);
}

void CmetsActiveSet::record_query(NodeId node) {
  if (!is_active(node)) {
    throw std::invalid_argument("CMETS: node " + std::to_string(node) +
                                " is not in the active set");
  }
  if (query_counts_.size() <= node) query_counts_.resize(tree_.size(), 0);
  ++query_counts_[node];
  queries_.push_back(node);
  if (options_.variant == CmetsVariant::literal) {
    record_literal(node);
  } else {
    record_cleaned(node);
  }
}

void CmetsActiveSet::record_literal(NodeId node) {
  if (lookahead_.count(node) != 0) {
    // L_t = L_{t-1} - {parent(a_t)} + {children(a_t)};  L'_t = L'_{t-1} - {a_t}
    leaves_.erase(tree_.node(node).parent);
    lookahead_.erase(node);
  } else {
    // L_t = L_{t-1} - {a_t} + {children(a_t)};  L'_t = L'_{t-1}
    leaves_.erase(node);
  }
  for (NodeId child : children(node)) leaves_.insert(child);
  // for node i in L_t: L'_t = L'_t U children(i)
  for (NodeId leaf : leaves_) {
    for (NodeId child : children(leaf)) lookahead_.insert(child);
  }
}

void CmetsActiveSet::record_cleaned(NodeId node) {
  const bool requery = options_.allow_requery;
  const auto queried = [&](NodeId id) { return !requery && times_queried(id) != 0; };
  if (!requery) {
    leaves_.erase(node);
    lookahead_.erase(node);
  }
  for (NodeId child : children(node)) {
    if (!queried(child)) leaves_.insert(child);
  }
  // L'_t = (U_{i in L_t} children(i)) - Q_t, recomputed from scratch.
  lookahead_.clear();
  for (NodeId leaf : leaves_) {
    for (NodeId child : children(leaf)) {
      if (!queried(child)) lookahead_.insert(child);
    }
  }
}

std::optional<NodeId> CmetsActiveSet::select(const ScoreFn& score, const CostFn& cost,
                                             double budget) const {
  if (options_.allow_overshoot && !(budget > 0.0)) return std::nullopt;  // while B > 0
  std::optional<NodeId> best;
  double best_ratio = 0.0;
  for (NodeId node : active()) {  // increasing id: a strict > keeps ties at the lowest id
    const std::size_t depth = tree_.node(node).depth;
    const double lambda = cost(depth);
    if (!std::isfinite(lambda) || !(lambda > 0.0)) {
      throw std::invalid_argument("CMETS: the cost at depth " + std::to_string(depth) +
                                  " must be finite and > 0");
    }
    if (!options_.allow_overshoot && lambda > budget) continue;
    const double value = score(node);
    if (std::isnan(value)) {
      throw std::invalid_argument("CMETS: the score of node " + std::to_string(node) + " is NaN");
    }
    const double ratio = value / lambda;
    if (!best || ratio > best_ratio) {
      best = node;
      best_ratio = ratio;
    }
  }
  return best;
}

}  // namespace tune
