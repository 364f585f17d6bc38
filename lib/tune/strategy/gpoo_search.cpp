#include "tune/strategy/gpoo_search.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <initializer_list>
#include <utility>

#include "tune/gp/observation.hpp"

namespace tune {

namespace {

template <typename E>
E enum_from_string(const std::string& name, std::initializer_list<std::pair<const char*, E>> all,
                   const char* what) {
  std::string expected;
  for (const auto& [n, e] : all) {
    if (name == n) return e;
    expected += expected.empty() ? std::string("'") + n + "'" : std::string(", '") + n + "'";
  }
  throw std::invalid_argument(std::string("unknown GPOO ") + what + " '" + name + "': expected " +
                              expected);
}

}  // namespace

const char* to_string(GpooAggregation v) {
  return v == GpooAggregation::representatives ? "representatives" : "cell";
}
const char* to_string(GpooBeta v) { return v == GpooBeta::theory ? "theory" : "code"; }
const char* to_string(GpooDelta v) { return v == GpooDelta::paper ? "paper" : "geometric"; }
const char* to_string(GpooVariant v) { return v == GpooVariant::paper ? "paper" : "code"; }
const char* to_string(GpooRecommendationRule v) {
  return v == GpooRecommendationRule::deepest ? "deepest" : "best_expanded";
}
GpooRecommendationRule gpoo_recommendation_rule_from_string(const std::string& name) {
  return enum_from_string<GpooRecommendationRule>(
      name, {{"deepest", GpooRecommendationRule::deepest}, {"best_expanded", GpooRecommendationRule::best_expanded}},
      "recommendation");
}

GpooAggregation gpoo_aggregation_from_string(const std::string& name) {
  return enum_from_string<GpooAggregation>(name, {{"representatives", GpooAggregation::representatives},
                                 {"cell", GpooAggregation::cell}}, "aggregation");
}
GpooBeta gpoo_beta_from_string(const std::string& name) {
  return enum_from_string<GpooBeta>(name, {{"theory", GpooBeta::theory}, {"code", GpooBeta::code}}, "beta");
}
GpooDelta gpoo_delta_from_string(const std::string& name) {
  return enum_from_string<GpooDelta>(name, {{"paper", GpooDelta::paper}, {"geometric", GpooDelta::geometric}},
                          "delta");
}
GpooVariant gpoo_variant_from_string(const std::string& name) {
  return enum_from_string<GpooVariant>(name, {{"paper", GpooVariant::paper}, {"code", GpooVariant::code}},
                          "variant");
}

double gpoo_beta(const GpooSearchOptions& o, std::size_t t) {
  const double tt = static_cast<double>(std::max<std::size_t>(t, 1));
  const double pi_t = std::numbers::pi * std::numbers::pi * tt * tt / 6.0;  // pi^2 t^2 / 6
  if (o.beta == GpooBeta::code) return o.beta_scale * std::log(pi_t / o.beta_theta);
  // M = sum_{h=0}^{h_max} K^h, the number of nodes of the complete tree (a union bound over them).
  double m = 0.0, power = 1.0;
  for (std::size_t h = 0; h <= o.max_depth; ++h, power *= static_cast<double>(o.branching)) m += power;
  return 2.0 * std::log(m * pi_t / o.beta_theta);
}

GpooSearch::GpooSearch(std::size_t dim, GpooSearchOptions options)
    : options_(std::move(options)),
      tree_(dim, PartitionTreeOptions{.split = SplitRule::longest_side,
                                      .branching = options_.branching}) {
  const auto& o = options_;
  if (o.kernel.dim() != dim) throw std::invalid_argument("GPOO: kernel dimension differs from the space's");
  if (o.representatives == 0) throw std::invalid_argument("GPOO: representatives (S) must be >= 1");
  if (!(o.noise_variance > 0.0)) throw std::invalid_argument("GPOO: noise_variance must be > 0");
  if (!(o.beta_theta > 0.0 && o.beta_theta < 1.0)) throw std::invalid_argument("GPOO: beta_theta must be in (0, 1)");
  if (!(o.beta_scale > 0.0) || !(o.delta_c > 0.0) || !(o.delta_z > 0.0))
    throw std::invalid_argument("GPOO: beta_scale, delta_c and delta_z must be > 0");
  init_node(PartitionTree::root);
  // The code's warm start: the root's children exist before any sample (and before any
  // observation, so this expansion is the first entry of the sequence and replays as such).
  if (o.variant == GpooVariant::code) expand(PartitionTree::root);
}

namespace {

// Where tell() expanded the tree, as a replay sees the rounds: a node can no longer be observed
// once expanded, so tell() expanded it (if ever) right after its last observation, when it was the
// next node of the recorded sequence. check_replay() and replay() both walk the rounds by it.
class ExpansionRule {
 public:
  ExpansionRule(const std::vector<GpooObservationRecord>& observations, const std::vector<NodeId>& sequence,
                std::size_t made_before)
      : sequence_(sequence), next_(made_before) {
    for (std::size_t j = 0; j < observations.size(); ++j) last_[observations[j].node] = j;
  }
  // Whether round j (an observation of node) is followed by node's expansion; counts it if so.
  bool expands_after(std::size_t j, NodeId node) {
    if (next_ < sequence_.size() && sequence_[next_] == node && last_[node] == j) {
      ++next_;
      return true;
    }
    return false;
  }
  void check_all_made() const {
    if (next_ != sequence_.size())
      throw std::invalid_argument("GPOO replay: expansion sequence does not match the observations");
  }

 private:
  const std::vector<NodeId>& sequence_;
  std::unordered_map<NodeId, std::size_t> last_;
  std::size_t next_;
};

void check_observed_leaf(const PartitionTree& tree, NodeId node) {
  if (node >= tree.size() || !tree.node(node).is_leaf())
    throw std::invalid_argument("GPOO replay: observation of a node that is not a leaf");
}

void check_variant_expansions(const std::vector<NodeId>& made, const std::vector<NodeId>& sequence) {
  if (made.size() > sequence.size() || !std::equal(made.begin(), made.end(), sequence.begin()))
    throw std::invalid_argument("GPOO replay: expansion sequence does not match the variant");
}

}  // namespace

void GpooSearch::check_replay(std::size_t dim, const GpooSearchOptions& options,
                              const std::vector<GpooObservationRecord>& observations,
                              const std::vector<NodeId>& expand_sequence) {
  PartitionTree tree(dim, PartitionTreeOptions{.split = SplitRule::longest_side, .branching = options.branching});
  if (options.variant == GpooVariant::code) tree.expand(PartitionTree::root);  // as the constructor does
  check_variant_expansions(tree.expand_sequence(), expand_sequence);
  ExpansionRule rule(observations, expand_sequence, tree.expand_sequence().size());
  for (std::size_t j = 0; j < observations.size(); ++j) {
    const NodeId node = observations[j].node;
    check_observed_leaf(tree, node);
    if (rule.expands_after(j, node)) tree.expand(node);
  }
  rule.check_all_made();
}

GpooSearch GpooSearch::replay(std::size_t dim, GpooSearchOptions options,
                              const std::vector<GpooObservationRecord>& observations,
                              const std::vector<NodeId>& expand_sequence) {
  GpooSearch s(dim, std::move(options));
  check_variant_expansions(s.tree_.expand_sequence(), expand_sequence);
  ExpansionRule rule(observations, expand_sequence, s.tree_.expand_sequence().size());
  // Rounds go in blocks. Within a block only the leaves it observes (and the children it creates)
  // are updated round by round; every other leaf stays a leaf throughout and is brought up to date
  // after the block, its entries in the same order with the same arithmetic (the same rows l21,
  // the same dot products), so the result is bit-identical to tell()'s. Each column is then read
  // once per block instead of once per round: a replay streamed every leaf's column per round.
  // The children a block creates and does not observe are deferred too: their forward solves are
  // done together after the block, each of its own size (the round it was created at), in one pass
  // over L instead of one per expansion, and then they get the block's later entries.
  constexpr std::size_t block = 32;
  std::vector<char> deferred, observed;
  std::vector<Eigen::VectorXd> rows;
  Unsolved unsolved{.observed = &observed, .nodes = {}};
  std::vector<std::pair<double*, Eigen::Index>> columns;
  for (std::size_t j0 = 0; j0 < observations.size(); j0 += block) {
    const std::size_t j1 = std::min(observations.size(), j0 + block);
    const std::size_t old_nodes = s.tree_.size();
    deferred.assign(old_nodes, 0);
    for (NodeId n = 0; n < old_nodes; ++n) deferred[n] = s.tree_.nodes()[n].is_leaf() ? 1 : 0;
    observed.assign(old_nodes, 0);
    for (std::size_t j = j0; j < j1; ++j) {
      const NodeId n = observations[j].node;
      if (n >= observed.size()) observed.resize(n + 1, 0);
      observed[n] = 1;
      if (n < deferred.size()) deferred[n] = 0;
    }
    rows.clear();
    unsolved.nodes.clear();
    for (std::size_t j = j0; j < j1; ++j) {
      const auto& rec = observations[j];
      check_observed_leaf(s.tree_, rec.node);
      s.add_observation(rec.node, rec.value, &deferred, &rows);
      if (rule.expands_after(j, rec.node)) {
        s.expand(rec.node, &unsolved);
        deferred.resize(s.tree_.size(), 0);
        for (const auto& u : unsolved.nodes) deferred[u.first] = 1;
      }
    }
    for (NodeId n = 0; n < old_nodes; ++n) {
      if (!deferred[n]) continue;
      for (std::size_t k = 0; k < rows.size(); ++k) s.append_entry(n, j0 + k, rows[k]);
    }
    columns.clear();
    for (const auto& [n, t] : unsolved.nodes) columns.emplace_back(s.nodes_[n].v.data(), static_cast<Eigen::Index>(t));
    gpoo_forward_solve(s.L_, columns);
    for (const auto& [n, t] : unsolved.nodes)
      for (std::size_t k = t - j0; k < rows.size(); ++k) s.append_entry(n, j0 + k, rows[k]);
  }
  rule.check_all_made();
  return s;
}

namespace {

// x_q[row0 + k] += (sum over j in [pi, end), in order, of L(row0 + k, j) x_q[j]) * -1 for k < r and the
// M columns x_q: Eigen's column-major gemv (GeneralMatrixVector.h) for one column at a time, its
// accumulators per row started at 0, with its packet operations, so the bits are its bits; the
// loads of L are shared by the M columns.
template <int M>
void subtract_panel(const double* l, Eigen::Index ld, Eigen::Index pi, Eigen::Index end, Eigen::Index row0,
                    Eigen::Index r, double* const* x) {
  namespace ei = Eigen::internal;
  using Packet = ei::packet_traits<double>::type;
  constexpr Eigen::Index ps = ei::packet_traits<double>::size;
  const Packet minus_one = ei::pset1<Packet>(-1.0);
  Eigen::Index k = 0;
  for (; k + 4 * ps <= r; k += 4 * ps) {
    Packet c[M][4];
    for (int q = 0; q < M; ++q)
      for (int p = 0; p < 4; ++p) c[q][p] = ei::pset1<Packet>(0.0);
    for (Eigen::Index j = pi; j < end; ++j) {
      const double* lj = l + row0 + k + j * ld;
      const Packet l0 = ei::ploadu<Packet>(lj), l1 = ei::ploadu<Packet>(lj + ps), l2 = ei::ploadu<Packet>(lj + 2 * ps),
                   l3 = ei::ploadu<Packet>(lj + 3 * ps);
      for (int q = 0; q < M; ++q) {
        const Packet b = ei::pset1<Packet>(x[q][j]);
        c[q][0] = ei::pmadd(l0, b, c[q][0]);
        c[q][1] = ei::pmadd(l1, b, c[q][1]);
        c[q][2] = ei::pmadd(l2, b, c[q][2]);
        c[q][3] = ei::pmadd(l3, b, c[q][3]);
      }
    }
    for (int q = 0; q < M; ++q)
      for (int p = 0; p < 4; ++p) {
        double* y = x[q] + row0 + k + p * ps;
        ei::pstoreu(y, ei::pmadd(c[q][p], minus_one, ei::ploadu<Packet>(y)));
      }
  }
  for (; k < r; ++k)
    for (int q = 0; q < M; ++q) {
      double c = 0.0;
      for (Eigen::Index j = pi; j < end; ++j) c += l[row0 + k + j * ld] * x[q][j];
      x[q][row0 + k] += -1.0 * c;
    }
}

}  // namespace

void gpoo_forward_solve(const Eigen::MatrixXd& L, Eigen::Index t, const std::vector<double*>& columns) {
  std::vector<std::pair<double*, Eigen::Index>> sized;
  for (double* x : columns) sized.emplace_back(x, t);
  gpoo_forward_solve(L, sized);
}

void gpoo_forward_solve(const Eigen::MatrixXd& L, const std::vector<std::pair<double*, Eigen::Index>>& columns) {
  constexpr Eigen::Index panel = EIGEN_TUNE_TRIANGULAR_PANEL_WIDTH;
  const double* l = L.data();
  const Eigen::Index ld = L.outerStride();
  Eigen::Index longest = 0;
  for (const auto& c : columns) longest = std::max(longest, c.second);
  std::vector<double*> below;  // the columns with entries below the panel
  for (Eigen::Index pi = 0; pi < longest; pi += panel) {
    below.clear();
    Eigen::Index shortest = longest;
    for (const auto& [x, t] : columns) {
      if (t <= pi) continue;
      const Eigen::Index end = std::min(t, pi + panel);
      for (Eigen::Index i = pi; i < end; ++i) {
        if (!(x[i] != 0.0)) continue;  // Eigen skips a zero entry (numext::not_equal_strict)
        x[i] /= l[i + i * ld];
        const double xi = x[i];
        for (Eigen::Index s = i + 1; s < end; ++s) x[s] -= xi * l[s + i * ld];
      }
      if (t > end) {
        below.push_back(x);
        shortest = std::min(shortest, t);
      }
    }
    if (below.empty()) continue;
    // The rows every such column has, two columns at a time (one pass over the panel's rows of L
    // per pair, from cache after the first); then each column's own further rows.
    const Eigen::Index end = pi + panel;
    std::size_t q = 0;
    for (; q + 2 <= below.size(); q += 2) subtract_panel<2>(l, ld, pi, end, end, shortest - end, below.data() + q);
    if (q < below.size()) subtract_panel<1>(l, ld, pi, end, end, shortest - end, below.data() + q);
    for (const auto& [x, t] : columns)
      if (t > shortest && t > end) {
        double* const one[1] = {x};
        subtract_panel<1>(l, ld, pi, end, shortest, t - shortest, one);
      }
  }
}

void GpooSearch::init_node(NodeId id, bool solve) {
  if (nodes_.size() <= id) nodes_.resize(id + 1);
  NodeState& n = nodes_[id];
  n.points = tree_.representatives(id, options_.representatives);
  n.prior = kbar_uncached(id, id);
  n.delta = compute_delta(id);
  const auto t = static_cast<Eigen::Index>(rounds());
  n.v.resize(v_capacity(t));
  if (t == 0) return;
  // v = L^{-1} k_n: one forward solve when the node is created; appends keep it current after.
  n.v.head(t) = observed_kbar(id);
  if (solve) gpoo_forward_solve(L_, t, {n.v.data()});
}

Eigen::VectorXd GpooSearch::observed_kbar(NodeId id) const {
  const auto t = static_cast<Eigen::Index>(rounds());
  Eigen::VectorXd k(t);
  for (Eigen::Index j = 0; j < t; ++j)
    k[j] = aggregated_kernel(id, observations_[static_cast<std::size_t>(j)].node);
  return k;
}

Eigen::Index GpooSearch::v_capacity(Eigen::Index t) {
  // Room for t + 1 entries and about an eighth more, in whole packets: a column grows by a copy once
  // per t/8 observations rather than at every one (a copy of every node's column per tell was as
  // much memory traffic as the update itself, and fragmented the heap).
  const Eigen::Index want = t + 1 + std::max<Eigen::Index>(16, (t + 1) / 8);
  return (want + 15) / 16 * 16;
}

void GpooSearch::expand(NodeId node, Unsolved* unsolved) {
  // The children's columns solved together: one pass over L for all K (each solve read all of it).
  const std::vector<NodeId> children = tree_.expand(node);
  for (NodeId child : children) init_node(child, false);
  std::vector<double*> columns;  // taken once nodes_ holds every child (init_node may grow it)
  for (NodeId child : children) {
    if (unsolved && (child >= unsolved->observed->size() || !(*unsolved->observed)[child]))
      unsolved->nodes.emplace_back(child, rounds());
    else
      columns.push_back(nodes_[child].v.data());
  }
  if (rounds() > 0) gpoo_forward_solve(L_, static_cast<Eigen::Index>(rounds()), columns);
  // Only leaves are scored and observed: an expanded node's column is not kept up to date (half
  // of the columns, and of every tell's work); posterior() solves for it when asked.
  nodes_[node].v = Eigen::VectorXd();
}

double GpooSearch::compute_delta(NodeId id) const {
  const PartitionNode& node = tree_.node(id);
  if (options_.delta == GpooDelta::paper)
    return options_.delta_c * std::pow(2.0, -static_cast<double>(node.depth));
  // Assumption 3 with the Lipschitz constant L ~ z sigma_f / l: the largest scaled L1 distance
  // between a representative (the centre under `cell`) and any point of the cell, a corner.
  const Eigen::VectorXd& l = options_.kernel.lengthscales();
  const Eigen::MatrixXd reps = options_.aggregation == GpooAggregation::cell
                                   ? Eigen::MatrixXd(node.centre())
                                   : nodes_[id].points;
  double d1 = 0.0;
  for (Eigen::Index s = 0; s < reps.cols(); ++s) {
    const Eigen::ArrayXd to_far_face =
        (reps.col(s) - node.lower).array().max((node.upper - reps.col(s)).array());
    d1 = std::max(d1, (to_far_face / l.array()).sum());
  }
  return options_.delta_z * std::sqrt(options_.kernel.outputscale()) * d1;
}

double GpooSearch::kbar_uncached(NodeId a, NodeId b) const {
  if (options_.aggregation == GpooAggregation::cell) {
    const PartitionNode& na = tree_.node(a);
    const PartitionNode& nb = tree_.node(b);
    return covariance(options_.kernel, BoxQuery{na.lower, na.upper}, BoxQuery{nb.lower, nb.upper});
  }
  // Equal weights 1/S: w_a^T K(X_a, X_b) w_b is the mean of the S x S kernel matrix. For S = 1 that
  // mean is the one kernel value, the same bits without the 1 x 1 matrix.
  if (options_.representatives == 1) return options_.kernel(nodes_[a].points.col(0), nodes_[b].points.col(0));
  return options_.kernel.cross(nodes_[a].points, nodes_[b].points).mean();
}

double* GpooSearch::kbar_memo(NodeId n, NodeId m) const {
  if (m >= observed_slot_.size() || observed_slot_[m] == kNoSlot) return nullptr;
  const std::size_t slot = observed_slot_[m];
  if (kbar_rows_.size() <= n) kbar_rows_.resize(n + 1);
  std::vector<double>& row = kbar_rows_[n];
  if (row.size() <= slot) {
    // Grown by an eighth, as the columns: a row gains one slot per newly observed node.
    if (row.capacity() <= slot) row.reserve(slot + 1 + std::max<std::size_t>(16, (slot + 1) / 8));
    row.resize(slot + 1, std::numeric_limits<double>::quiet_NaN());
  }
  return &row[slot];
}

double GpooSearch::aggregated_kernel(NodeId a, NodeId b) const {
  const NodeId lo = std::min(a, b), hi = std::max(a, b);
  // With S = 1 not memoised: single kernel evaluations cost less than a look-up. An S x S mean
  // (S^2 evaluations) or a box-box covariance is kept, computed once per pair (in the order
  // (lo, hi), whichever of the two rows asks first) and held in both rows where both are observed.
  if (options_.aggregation == GpooAggregation::representatives && options_.representatives == 1)
    return kbar_uncached(lo, hi);
  // Both pointers stay valid: growing row b, or the list of rows, moves no row's buffer.
  double* ab = kbar_memo(a, b);
  double* ba = kbar_memo(b, a);
  if (ab && !std::isnan(*ab)) return *ab;
  if (ba && !std::isnan(*ba)) return ab ? (*ab = *ba) : *ba;
  const double value = kbar_uncached(lo, hi);
  if (ab) *ab = value;
  if (ba) *ba = value;
  return value;
}

double GpooSearch::kbar_point(const Eigen::VectorXd& x, NodeId n) const {
  if (options_.aggregation == GpooAggregation::cell) {
    const PartitionNode& node = tree_.node(n);
    return covariance(options_.kernel, BoxQuery{node.lower, node.upper}, x);
  }
  return options_.kernel.cross(x, nodes_[n].points).mean();
}

void GpooSearch::append_entry(NodeId n, std::size_t round, const Eigen::VectorXd& l21) {
  const auto t = static_cast<Eigen::Index>(round);
  NodeState& s = nodes_[n];
  const double entry =
      (aggregated_kernel(n, observations_[round].node) - (t > 0 ? l21.dot(s.v.head(t)) : 0.0)) / L_(t, t);
  if (s.v.size() <= t) s.v.conservativeResize(v_capacity(t));
  s.v[t] = entry;
}

void GpooSearch::add_observation(NodeId node, double value, const std::vector<char>* deferred,
                                 std::vector<Eigen::VectorXd>* rows) {
  const auto t = static_cast<Eigen::Index>(rounds());
  if (L_.rows() <= t) {  // grow the capacity geometrically, by an eighth (L_ is most of the model)
    const Eigen::Index cap = v_capacity(t);
    L_.conservativeResize(cap, cap);
    z_.conservativeResize(cap);
  }
  // Append one row of chol(G + sigma^2 I) (Golub & van Loan 4.2.9): l21 = v_m is already cached.
  const Eigen::VectorXd l21 = nodes_[node].v.head(t);
  const double l22sq = nodes_[node].prior + options_.noise_variance - l21.squaredNorm();
  const double l22 = std::sqrt(std::max(l22sq, options_.noise_variance * 1e-12));
  if (t > 0) L_.row(t).head(t) = l21.transpose();
  L_.row(t).tail(L_.cols() - t).setZero();
  L_(t, t) = l22;
  z_[t] = (value - (t > 0 ? l21.dot(z_.head(t)) : 0.0)) / l22;
  ++nodes_[node].samples;
  observations_.push_back({node, value});
  if (observed_slot_.size() <= node) observed_slot_.resize(node + 1, kNoSlot);
  if (observed_slot_[node] == kNoSlot) observed_slot_[node] = observed_count_++;
  for (NodeId n = 0; n < tree_.size(); ++n) {
    if (!tree_.nodes()[n].is_leaf() || (deferred && n < deferred->size() && (*deferred)[n])) continue;
    append_entry(n, static_cast<std::size_t>(t), l21);
  }
  if (rows) rows->push_back(l21);
}

bool GpooSearch::tell(NodeId node, double value) {
  if (node >= tree_.size() || !tree_.node(node).is_leaf())
    throw std::invalid_argument("GPOO tell: node " + std::to_string(node) + " is not a current leaf");
  if (!std::isfinite(value)) throw std::invalid_argument("GPOO tell: value must be finite");
  add_observation(node, value);
  // Line 6 of Algorithm 1, after the posterior update (digest 6.3): the estimate is now tighter
  // than the variation of f over the cell, so finer cells are worth looking at.
  const std::size_t depth = tree_.node(node).depth;
  const double ci = std::sqrt(beta(rounds())) * std::sqrt(posterior(node).variance);
  if (nodes_[node].delta >= ci && depth <= options_.max_depth) {
    expand(node);
    return true;
  }
  return false;
}

void GpooSearch::revalue(const std::vector<double>& values) {
  if (values.size() != rounds())
    throw std::invalid_argument("GPOO revalue: " + std::to_string(values.size()) + " values for " +
                                std::to_string(rounds()) + " rounds");
  std::size_t first = 0;
  while (first < values.size() && values[first] == observations_[first].value) ++first;
  for (std::size_t j = first; j < values.size(); ++j) {
    if (!std::isfinite(values[j])) throw std::invalid_argument("GPOO revalue: values must be finite");
    observations_[j].value = values[j];
    const auto t = static_cast<Eigen::Index>(j);
    // The same dot product as add_observation's (a contiguous copy of row t: a strided row would be
    // summed in another order and differ in the last bits).
    const Eigen::VectorXd l21 = L_.row(t).head(t).transpose();
    z_[t] = (values[j] - (t > 0 ? l21.dot(z_.head(t)) : 0.0)) / L_(t, t);
  }
}

GpooPosterior GpooSearch::posterior(NodeId node) const {
  tree_.node(node);  // range check
  const NodeState& s = nodes_[node];
  const auto t = static_cast<Eigen::Index>(rounds());
  GpooPosterior p;
  if (t == 0) {
    p.variance = std::max(0.0, s.prior);
    return p;
  }
  // An expanded node has no column kept: one forward solve, the same v up to rounding.
  const Eigen::VectorXd solved = tree_.nodes()[node].is_leaf()
                                     ? Eigen::VectorXd()
                                     : Eigen::VectorXd(L_.topLeftCorner(t, t).triangularView<Eigen::Lower>().solve(
                                           observed_kbar(node)));
  const auto v = tree_.nodes()[node].is_leaf() ? s.v.head(t) : solved.head(t);
  p.mean = v.dot(z_.head(t));
  p.variance = std::max(0.0, s.prior - v.squaredNorm());
  return p;
}

Eigen::VectorXd GpooSearch::weights() const {
  const auto t = static_cast<Eigen::Index>(rounds());
  if (t == 0) return {};
  return L_.topLeftCorner(t, t).triangularView<Eigen::Lower>().transpose().solve(z_.head(t));
}

double GpooSearch::delta(NodeId node) const {
  tree_.node(node);
  return nodes_[node].delta;
}

std::size_t GpooSearch::times_sampled(NodeId node) const {
  tree_.node(node);
  return nodes_[node].samples;
}

double GpooSearch::b_value(NodeId node) const {
  const GpooPosterior p = posterior(node);
  return p.mean + std::sqrt(beta(rounds() + 1)) * std::sqrt(p.variance) + nodes_[node].delta;
}

double GpooSearch::point_mean(const Eigen::VectorXd& x) const {
  const auto t = static_cast<Eigen::Index>(rounds());
  if (t == 0) return 0.0;
  Eigen::VectorXd k(t);
  for (Eigen::Index j = 0; j < t; ++j) k[j] = kbar_point(x, observations_[static_cast<std::size_t>(j)].node);
  const Eigen::VectorXd v = L_.topLeftCorner(t, t).triangularView<Eigen::Lower>().solve(k);
  return v.dot(z_.head(t));
}

GpooPosterior GpooSearch::point_posterior(const Eigen::VectorXd& x, const std::vector<char>& keep) const {
  if (keep.size() != rounds())
    throw std::invalid_argument("GPOO point_posterior: " + std::to_string(keep.size()) + " flags for " +
                                std::to_string(rounds()) + " rounds");
  std::vector<Eigen::Index> kept;
  for (std::size_t j = 0; j < keep.size(); ++j)
    if (keep[j]) kept.push_back(static_cast<Eigen::Index>(j));
  const auto n = static_cast<Eigen::Index>(kept.size());
  const double prior = options_.kernel(x, x);
  GpooPosterior p;
  if (n == 0) {
    p.variance = std::max(0.0, prior);
    return p;
  }
  Eigen::VectorXd k(n), y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const GpooObservationRecord& o = observations_[static_cast<std::size_t>(kept[static_cast<std::size_t>(i)])];
    k[i] = kbar_point(x, o.node);
    y[i] = o.value;
  }
  Eigen::VectorXd v, z;
  if (n == static_cast<Eigen::Index>(rounds())) {
    v = L_.topLeftCorner(n, n).triangularView<Eigen::Lower>().solve(k);
    z = z_.head(n);
  } else {
    const Eigen::MatrixXd L = kept_factor(kept);
    v = L.triangularView<Eigen::Lower>().solve(k);
    z = L.triangularView<Eigen::Lower>().solve(y);
  }
  p.mean = v.dot(z);
  p.variance = std::max(0.0, prior - v.squaredNorm());
  return p;
}

Eigen::MatrixXd GpooSearch::kept_factor(const std::vector<Eigen::Index>& kept) const {
  const auto t = static_cast<Eigen::Index>(rounds());
  const auto n = static_cast<Eigen::Index>(kept.size());
  std::vector<char> alive(static_cast<std::size_t>(t), 0);
  for (Eigen::Index j : kept) alive[static_cast<std::size_t>(j)] = 1;
  // Deleting row and column d of A = L L^T keeps the rows before d and, below them, the columns
  // before d; the trailing block becomes chol(L33 L33^T + l32 l32^T), a rank-one update of L33 by
  // the rest of column d (Givens rotations; Golub & van Loan 6.5.4), about (t - d)^2 multiply-adds.
  // Rows deleted from the last to the first. Where those updates would cost more than factorising
  // the kept rounds' Gram matrix afresh (many rounds left out), that is done instead.
  double update_work = 0.0;
  Eigen::Index after = 0;  // kept rounds after the one looked at
  for (Eigen::Index d = t - 1; d >= 0; --d) {
    if (alive[static_cast<std::size_t>(d)]) ++after;
    else update_work += 2.0 * static_cast<double>(after) * static_cast<double>(after);
  }
  const double nn = static_cast<double>(n);
  if (update_work > nn * nn * nn / 6.0 + 50.0 * nn * nn) {
    Eigen::MatrixXd A(n, n);
    for (Eigen::Index b = 0; b < n; ++b) {
      const NodeId nb = observations_[static_cast<std::size_t>(kept[static_cast<std::size_t>(b)])].node;
      for (Eigen::Index a = b; a < n; ++a)
        A(a, b) = aggregated_kernel(observations_[static_cast<std::size_t>(kept[static_cast<std::size_t>(a)])].node, nb);
      A(b, b) += options_.noise_variance;
    }
    Eigen::LLT<Eigen::MatrixXd> llt(A);
    if (llt.info() == Eigen::Success) return Eigen::MatrixXd(llt.matrixL());
  }
  Eigen::MatrixXd W = L_.topLeftCorner(t, t);
  std::vector<Eigen::Index> rows;
  Eigen::VectorXd x;
  for (Eigen::Index d = t - 1; d >= 0; --d) {
    if (alive[static_cast<std::size_t>(d)]) continue;
    rows.clear();
    for (Eigen::Index i = d + 1; i < t; ++i)
      if (alive[static_cast<std::size_t>(i)]) rows.push_back(i);
    const auto m = static_cast<Eigen::Index>(rows.size());
    x.resize(m);
    for (Eigen::Index q = 0; q < m; ++q) x[q] = W(rows[static_cast<std::size_t>(q)], d);
    for (Eigen::Index p = 0; p < m; ++p) {
      const Eigen::Index c = rows[static_cast<std::size_t>(p)];
      const double r = std::hypot(W(c, c), x[p]);
      const double cs = r / W(c, c), sn = x[p] / W(c, c);
      W(c, c) = r;
      for (Eigen::Index q = p + 1; q < m; ++q) {
        const Eigen::Index i = rows[static_cast<std::size_t>(q)];
        W(i, c) = (W(i, c) + sn * x[q]) / cs;
        x[q] = cs * x[q] - sn * W(i, c);
      }
    }
  }
  Eigen::MatrixXd L = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index b = 0; b < n; ++b)
    for (Eigen::Index a = b; a < n; ++a) L(a, b) = W(kept[static_cast<std::size_t>(a)], kept[static_cast<std::size_t>(b)]);
  return L;
}

bool GpooSearch::label_less(NodeId a, NodeId b) const {
  const PartitionNode& na = tree_.node(a);
  const PartitionNode& nb = tree_.node(b);
  if (na.depth != nb.depth) return na.depth < nb.depth;
  if (na.index_in_depth && nb.index_in_depth) return *na.index_in_depth < *nb.index_in_depth;
  return a < b;  // beyond 64-bit labels; never reached for sane h_max
}

GpooQuery GpooSearch::next() const {
  NodeId best = no_node;
  if (options_.variant == GpooVariant::code) {
    // Warm start: every child of the root once, in child order, while they are still leaves.
    for (NodeId child : tree_.node(PartitionTree::root).children) {
      if (nodes_[child].samples == 0 && tree_.node(child).is_leaf()) {
        best = child;
        break;
      }
    }
  }
  if (best == no_node) {
    double best_b = -std::numeric_limits<double>::infinity();
    for (NodeId leaf : tree_.leaves()) {
      const double b = b_value(leaf);
      if (best == no_node || b > best_b || (b == best_b && label_less(leaf, best))) {
        best = leaf;
        best_b = b;
      }
    }
  }
  const PartitionNode& node = tree_.node(best);
  GpooQuery q{.node = best, .depth = node.depth, .lower = node.lower, .upper = node.upper};
  if (options_.aggregation == GpooAggregation::representatives) q.points = nodes_[best].points;
  return q;
}

GpooRecommendation GpooSearch::recommend() const {
  // Deepest expanded depth, then the largest aggregated posterior mean among the expanded nodes
  // there (digest 6.5: expanded nodes passed the CI test, so their estimates are the precise ones);
  // or (best_expanded) the largest mean among all expanded nodes. Before any expansion the root is
  // the only candidate.
  // Means as k_n . alpha, alpha = (G + sigma^2 I)^{-1} y: one solve for all the expanded nodes,
  // whose columns are not kept (a solve each would be O(t^2) per node).
  const Eigen::VectorXd alpha = weights();
  const auto mean_of = [&](NodeId id) { return rounds() == 0 ? 0.0 : observed_kbar(id).dot(alpha); };
  NodeId best = PartitionTree::root;
  double best_mean = mean_of(best);
  for (NodeId id = 0; id < tree_.size(); ++id) {
    const PartitionNode& n = tree_.node(id);
    if (!n.expanded()) continue;
    const double m = mean_of(id);
    const std::size_t best_depth = tree_.node(best).depth;
    const bool by_mean = m > best_mean || (m == best_mean && label_less(id, best));
    if (options_.recommendation == GpooRecommendationRule::best_expanded ? by_mean
        : n.depth > best_depth || (n.depth == best_depth && by_mean)) {
      best = id;
      best_mean = m;
    }
  }
  const PartitionNode& node = tree_.node(best);
  const GpooPosterior p = posterior(best);
  GpooRecommendation r{.node = best, .depth = node.depth, .lower = node.lower, .upper = node.upper,
                       .mean = p.mean, .sd = std::sqrt(p.variance)};
  double best_point = -std::numeric_limits<double>::infinity();
  const Eigen::MatrixXd& pts = nodes_[best].points;
  for (Eigen::Index s = 0; s < pts.cols(); ++s) {
    const double m = point_mean(pts.col(s));
    if (s == 0 || m > best_point) {
      best_point = m;
      r.point = pts.col(s);
    }
  }
  return r;
}

}  // namespace tune
