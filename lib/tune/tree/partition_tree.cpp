// Geometry of the shared partition tree: splitting cells, labelling nodes, diameters and GPOO's
// representative points. The header states the conventions.
#include "tune/tree/partition_tree.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "tune/space/sampling.hpp"

namespace tune {

namespace {

// The deepest h at which every label i < K^h fits in 64 bits, i.e. K^h - 1 <= 2^64 - 1.
std::size_t deepest_labelled_depth(std::size_t branching) {
  constexpr std::uint64_t max_label = std::numeric_limits<std::uint64_t>::max();
  const auto k = static_cast<std::uint64_t>(branching);
  std::uint64_t largest = 0;  // K^h - 1, the largest label at depth h
  std::size_t depth = 0;
  while (largest <= (max_label - (k - 1)) / k) {
    largest = k * largest + (k - 1);
    ++depth;
  }
  return depth;
}

// K + 1 boundaries of K equal parts of [low, high]: the first and last are low and high exactly,
// so that neighbouring cells share the same doubles. Empty if two boundaries coincide.
std::vector<double> equal_parts(double low, double high, std::size_t parts) {
  std::vector<double> bounds(parts + 1);
  bounds.front() = low;
  bounds.back() = high;
  const double width = high - low;
  for (std::size_t k = 1; k < parts; ++k) {
    bounds[k] = low + width * static_cast<double>(k) / static_cast<double>(parts);
  }
  for (std::size_t k = 0; k < parts; ++k) {
    if (!(bounds[k] < bounds[k + 1])) return {};
  }
  return bounds;
}

// m with m^dim == count, if there is one.
std::optional<std::size_t> integer_root(std::size_t count, std::size_t dim) {
  const double guess = std::round(std::pow(static_cast<double>(count), 1.0 / static_cast<double>(dim)));
  for (double candidate = std::max(1.0, guess - 1.0); candidate <= guess + 1.0; candidate += 1.0) {
    const auto m = static_cast<std::size_t>(candidate);
    std::size_t power = 1;
    bool exceeded = false;
    for (std::size_t j = 0; j < dim && !exceeded; ++j) {
      if (power > count / m) {
        exceeded = true;
      } else {
        power *= m;
      }
    }
    if (!exceeded && power == count) return m;
  }
  return std::nullopt;
}

void check_dimension(std::size_t dim, const char* who) {
  if (dim == 0) throw std::invalid_argument(std::string(who) + ": the dimension must be at least 1");
}

}  // namespace

const char* to_string(SplitRule rule) {
  switch (rule) {
    case SplitRule::longest_side:
      return "longest_side";
    case SplitRule::all_dimensions:
      return "all_dimensions";
  }
  return "unknown";
}

SplitRule split_rule_from_string(const std::string& name) {
  if (name == "longest_side") return SplitRule::longest_side;
  if (name == "all_dimensions") return SplitRule::all_dimensions;
  throw std::invalid_argument("unknown split rule '" + name +
                              "': expected longest_side or all_dimensions");
}

PartitionTree::PartitionTree(std::size_t dim, PartitionTreeOptions options)
    : dim_(dim), split_(options.split), branching_(options.branching) {
  check_dimension(dim, "PartitionTree");
  if (split_ == SplitRule::all_dimensions) {
    if (dim > max_all_dimensions_dim) {
      throw std::invalid_argument(
          "PartitionTree: split all_dimensions makes 2^d children per expansion and allows d <= " +
          std::to_string(max_all_dimensions_dim) + ", got d = " + std::to_string(dim) +
          "; use split longest_side");
    }
    const std::size_t children = std::size_t{1} << dim;
    if (branching_ != 0 && branching_ != children) {
      throw std::invalid_argument("PartitionTree: split all_dimensions has branching 2^d = " +
                                  std::to_string(children) + " in d = " + std::to_string(dim) +
                                  ", got branching " + std::to_string(branching_) +
                                  "; leave branching at 0");
    }
    branching_ = children;
  } else {
    if (branching_ == 0) branching_ = 2;
    if (branching_ < 2) {
      throw std::invalid_argument("PartitionTree: branching must be at least 2, got " +
                                  std::to_string(branching_));
    }
  }
  labelled_depth_ = deepest_labelled_depth(branching_);
  PartitionNode cube;
  cube.id = root;
  cube.lower = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(dim));
  cube.upper = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(dim));
  nodes_.push_back(std::move(cube));
}

PartitionTree PartitionTree::replay(std::size_t dim, PartitionTreeOptions options,
                                    const std::vector<NodeId>& sequence) {
  PartitionTree tree(dim, options);
  for (std::size_t step = 0; step < sequence.size(); ++step) {
    const NodeId id = sequence[step];
    if (id >= tree.size()) {
      throw std::invalid_argument("PartitionTree::replay: step " + std::to_string(step) +
                                  " expands node " + std::to_string(id) + ", but the tree has only " +
                                  std::to_string(tree.size()) +
                                  " nodes at that point; the sequence is not one from expand_sequence()");
    }
    if (tree.nodes_[id].expanded()) {
      throw std::invalid_argument("PartitionTree::replay: step " + std::to_string(step) +
                                  " expands node " + std::to_string(id) +
                                  " a second time; the sequence is not one from expand_sequence()");
    }
    tree.expand(id);
  }
  return tree;
}

void PartitionTree::check_id(NodeId id, const char* what) const {
  if (id >= nodes_.size()) {
    throw std::out_of_range(std::string("PartitionTree::") + what + ": no node " +
                            std::to_string(id) + " in a tree of " + std::to_string(nodes_.size()) +
                            " nodes");
  }
}

const PartitionNode& PartitionTree::node(NodeId id) const {
  check_id(id, "node");
  return nodes_[id];
}

std::vector<NodeId> PartitionTree::expand(NodeId id) {
  check_id(id, "expand");
  if (nodes_[id].expanded()) return nodes_[id].children;

  // Copies: push_back below may move the parent.
  const Eigen::VectorXd lower = nodes_[id].lower;
  const Eigen::VectorXd upper = nodes_[id].upper;
  const std::size_t depth = nodes_[id].depth;
  const std::optional<std::uint64_t> parent_label = nodes_[id].index_in_depth;
  const bool labelled = depth + 1 <= labelled_depth_;

  auto too_narrow = [&](std::size_t j, std::size_t parts) {
    return std::domain_error("PartitionTree::expand: node " + std::to_string(id) + " (depth " +
                             std::to_string(depth) + ") is too narrow to split dimension " +
                             std::to_string(j) + " into " + std::to_string(parts) +
                             " parts in double precision; limit the depth of the tree");
  };

  std::vector<PartitionNode> children(branching_);
  for (std::size_t k = 0; k < branching_; ++k) {
    PartitionNode& child = children[k];
    child.parent = id;
    child.depth = depth + 1;
    child.position_in_parent = k;
    if (labelled && parent_label) {
      child.index_in_depth = static_cast<std::uint64_t>(branching_) * *parent_label + k;
    } else {
      child.index_in_depth.reset();
    }
    child.lower = lower;
    child.upper = upper;
  }

  if (split_ == SplitRule::longest_side) {
    const std::size_t j = split_dimension(id);
    const auto jj = static_cast<Eigen::Index>(j);
    const std::vector<double> bounds = equal_parts(lower[jj], upper[jj], branching_);
    if (bounds.empty()) throw too_narrow(j, branching_);
    for (std::size_t k = 0; k < branching_; ++k) {
      children[k].lower[jj] = bounds[k];
      children[k].upper[jj] = bounds[k + 1];
    }
  } else {
    for (std::size_t j = 0; j < dim_; ++j) {
      const auto jj = static_cast<Eigen::Index>(j);
      const std::vector<double> bounds = equal_parts(lower[jj], upper[jj], 2);
      if (bounds.empty()) throw too_narrow(j, 2);
      for (std::size_t k = 0; k < branching_; ++k) {
        const bool upper_half = ((k >> j) & 1U) != 0;
        children[k].lower[jj] = bounds[upper_half ? 1 : 0];
        children[k].upper[jj] = bounds[upper_half ? 2 : 1];
      }
    }
  }

  std::vector<NodeId> ids;
  ids.reserve(branching_);
  nodes_.reserve(nodes_.size() + branching_);
  for (PartitionNode& child : children) {
    child.id = nodes_.size();
    ids.push_back(child.id);
    nodes_.push_back(std::move(child));
  }
  nodes_[id].children = ids;
  expand_sequence_.push_back(id);
  max_depth_ = std::max(max_depth_, depth + 1);
  return ids;
}

std::vector<NodeId> PartitionTree::leaves() const {
  std::vector<NodeId> result;
  for (const PartitionNode& n : nodes_) {
    if (n.is_leaf()) result.push_back(n.id);
  }
  return result;
}

std::vector<NodeId> PartitionTree::nodes_at_depth(std::size_t depth) const {
  // Level by level, children in child order: that is increasing label i.
  std::vector<NodeId> level{root};
  for (std::size_t h = 0; h < depth && !level.empty(); ++h) {
    std::vector<NodeId> next;
    for (NodeId id : level) {
      const auto& children = nodes_[id].children;
      next.insert(next.end(), children.begin(), children.end());
    }
    level = std::move(next);
  }
  return level;
}

NodeId PartitionTree::leaf_containing(const Eigen::VectorXd& x) const {
  if (static_cast<std::size_t>(x.size()) != dim_) {
    throw std::invalid_argument("PartitionTree::leaf_containing: the point has " +
                                std::to_string(x.size()) + " coordinates, the tree " +
                                std::to_string(dim_));
  }
  if (!((x.array() >= 0.0).all() && (x.array() <= 1.0).all())) {
    throw std::invalid_argument("PartitionTree::leaf_containing: the point is not in [0,1]^d");
  }
  NodeId current = root;
  while (nodes_[current].expanded()) {
    const PartitionNode& parent = nodes_[current];
    NodeId next = no_node;
    for (NodeId c : parent.children) {
      const PartitionNode& child = nodes_[c];
      bool inside = true;
      for (Eigen::Index j = 0; j < x.size() && inside; ++j) {
        const bool closed_above = child.upper[j] == parent.upper[j];
        inside = child.lower[j] <= x[j] && (x[j] < child.upper[j] || (closed_above && x[j] <= child.upper[j]));
      }
      if (inside) {
        next = c;
        break;
      }
    }
    if (next == no_node) throw std::logic_error("PartitionTree::leaf_containing: children do not tile their parent");
    current = next;
  }
  return current;
}

std::size_t PartitionTree::split_dimension(NodeId id) const {
  check_id(id, "split_dimension");
  if (split_ == SplitRule::all_dimensions) return dim_;
  // Every cell at depth h has side K^-(number of earlier splits of that dimension); the longest
  // side with the lowest index is the least split dimension, h mod d. Counting splits instead of
  // comparing stored widths keeps rounding (K = 3: 1/3 vs 1 - 2/3) from reordering dimensions.
  return nodes_[id].depth % dim_;
}

Eigen::VectorXd PartitionTree::widths_at_depth(std::size_t depth) const {
  Eigen::VectorXd widths(static_cast<Eigen::Index>(dim_));
  for (std::size_t j = 0; j < dim_; ++j) {
    if (split_ == SplitRule::all_dimensions) {
      widths[static_cast<Eigen::Index>(j)] = std::ldexp(1.0, -static_cast<int>(std::min<std::size_t>(depth, 2000)));
    } else {
      const std::size_t splits = depth / dim_ + (j < depth % dim_ ? 1 : 0);
      widths[static_cast<Eigen::Index>(j)] =
          std::pow(static_cast<double>(branching_), -static_cast<double>(splits));
    }
  }
  return widths;
}

void PartitionTree::check_lengthscales(const Eigen::VectorXd& lengthscales) const {
  if (static_cast<std::size_t>(lengthscales.size()) != dim_) {
    throw std::invalid_argument("PartitionTree: " + std::to_string(lengthscales.size()) +
                                " lengthscales for a tree in dimension " + std::to_string(dim_));
  }
  if (!(lengthscales.array() > 0.0).all() || !lengthscales.allFinite()) {
    throw std::invalid_argument("PartitionTree: lengthscales must be positive and finite");
  }
}

double PartitionTree::diameter(NodeId id) const {
  check_id(id, "diameter");
  return nodes_[id].widths().norm();
}

double PartitionTree::diameter(NodeId id, const Eigen::VectorXd& lengthscales) const {
  check_id(id, "diameter");
  check_lengthscales(lengthscales);
  return (nodes_[id].widths().array() / lengthscales.array()).matrix().norm();
}

double PartitionTree::diameter_at_depth(std::size_t depth) const { return widths_at_depth(depth).norm(); }

double PartitionTree::diameter_at_depth(std::size_t depth, const Eigen::VectorXd& lengthscales) const {
  check_lengthscales(lengthscales);
  return (widths_at_depth(depth).array() / lengthscales.array()).matrix().norm();
}

std::size_t PartitionTree::depth_for_diameter(double max_diameter) const {
  return depth_for_diameter(max_diameter, Eigen::VectorXd::Ones(static_cast<Eigen::Index>(dim_)));
}

std::size_t PartitionTree::depth_for_diameter(double max_diameter,
                                              const Eigen::VectorXd& lengthscales) const {
  if (!(max_diameter > 0.0) || !std::isfinite(max_diameter)) {
    throw std::invalid_argument("PartitionTree::depth_for_diameter: the diameter must be positive and finite");
  }
  check_lengthscales(lengthscales);
  // Diameters shrink by at least a factor K every d levels and reach 0 by underflow, so this ends.
  std::size_t depth = 0;
  while (diameter_at_depth(depth, lengthscales) > max_diameter) ++depth;
  return depth;
}

Eigen::MatrixXd PartitionTree::representatives(NodeId id, std::size_t count) const {
  check_id(id, "representatives");
  const PartitionNode& n = nodes_[id];
  Eigen::MatrixXd points = representative_pattern(dim_, count);
  const Eigen::VectorXd widths = n.upper - n.lower;
  for (Eigen::Index s = 0; s < points.cols(); ++s) {
    points.col(s) = n.lower + widths.cwiseProduct(points.col(s));
  }
  return points;
}

Eigen::MatrixXd representative_pattern(std::size_t dim, std::size_t count) {
  check_dimension(dim, "representative_pattern");
  if (count == 0) throw std::invalid_argument("representative_pattern: the number of points must be at least 1");
  const auto rows = static_cast<Eigen::Index>(dim);
  Eigen::MatrixXd points(rows, static_cast<Eigen::Index>(count));

  if (const auto per_side = integer_root(count, dim)) {
    const std::size_t m = *per_side;
    for (std::size_t s = 0; s < count; ++s) {
      std::size_t digits = s;
      for (Eigen::Index j = 0; j < rows; ++j) {
        points(j, static_cast<Eigen::Index>(s)) =
            (static_cast<double>(digits % m) + 0.5) / static_cast<double>(m);
        digits /= m;
      }
    }
    return points;
  }

  // The first 2^k Sobol points have coordinates in 2^-k Z, so half a step keeps them off the faces.
  int k = 0;
  while ((std::size_t{1} << k) < count) ++k;
  const double half_step = std::ldexp(1.0, -(k + 1));
  points.col(0).setConstant(half_step);  // the origin, which SobolSequence skips
  SobolSequence sobol(dim);
  for (Eigen::Index s = 1; s < points.cols(); ++s) {
    points.col(s) = sobol.next().array() + half_step;
  }
  return points;
}

}  // namespace tune
