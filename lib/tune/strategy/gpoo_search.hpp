#pragma once
// GPOO: Gaussian-process optimistic optimisation with aggregated feedback (Zhang, Tsuchida & Ong,
// AAAI 2022; digest-gpoo-zoghi.md sections 2.1, 3.2, 6). A reusable search object over [0,1]^d,
// independent of Study: next() names the leaf to evaluate, tell() feeds back its aggregated reward
// (to be maximised), recommend() gives the answer. Kernel hyperparameters and the noise variance
// are fixed (no fitting here).
//
// Aggregated feedback. The reward of a node n is a linear functional of f plus noise: the average
// of f over its S representatives (aggregation = representatives, the paper's eq. 1) or the uniform
// average over its whole cell (aggregation = cell, the continuous analogue of App. D). The GP is
// kept here as a small private model over *node* observations with the aggregated kernel
//   kbar(n, m) = Cov(F_n, F_m),
// the mean of k over the S x S representative pairs, or the box-box covariance of observation.hpp
// for cells (digest 3.2; algebraically identical to the paper's A-matrix form 3.1). tune::Query now
// has a WeightedPointsQuery (the representatives with weights 1/S), so this private model can
// become a GaussianProcess when GPOO becomes a strategy. The prior mean is zero and values are not
// standardised: the paper assumes a known GP prior (Assumption 1).
//
// Incremental inference (digest 3.2): L = chol(G + sigma^2 I) over the t observations,
// z = L^{-1} y, and for every leaf n (the nodes scored and observed) v_n = L^{-1} k_n, so
// mean_n = v_n . z and var_n = kbar(n, n) - |v_n|^2. An observation appends one row of L and one
// entry to every leaf's v_n in O(t) each; a new child gets its v by one forward solve. Expanded
// nodes keep no v (it would double the memory and every tell's work): their means for the
// recommendation are k_n . alpha with alpha = L^{-T} z, and posterior() solves for their v when
// asked. Costs O(K N^3) over a run. kbar is memoised only where it costs more than a kernel
// evaluation (S > 1, cells): one dense row per node over the distinct observed nodes (8 bytes per
// pair; a hash map by node pair took ~56, ~1 GB at 3000 rounds).
//
// Rounds. Round t (1-based) is the t-th observation. next() for round t scores leaves with beta_t
// and the posterior given Z_{1:t-1} (eq. 5); tell() of round t adds the observation and then checks
// the expansion rule with beta_t and the *updated* posterior Z_{1:t} (digest 6.3: line 6 comes after
// the update of line 4).
//
// Determinism and persistence. No randomness. The state is the observation sequence (node, value)
// plus the tree's expansion sequence; replay() rebuilds it by redoing the same arithmetic in the
// same order, so a replayed search is bit-identical to the original.
#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tune/gp/kernel.hpp"
#include "tune/tree/partition_tree.hpp"

namespace tune {

enum class GpooAggregation { representatives, cell };
// theory: beta_t = 2 log(M pi^2 t^2 / (6 theta)), M = sum_{h <= h_max} K^h (Lemma 1).
// code:   beta_t = scale * ln(pi^2 t^2 / (6 theta)), the authors' code (scale 0.1, theta 0.1).
enum class GpooBeta { theory, code };
// paper:     delta(h) = c 2^-h (the paper's c = 14, Appendix E).
// geometric: delta(n) = z sigma_f D1(n), D1 the largest lengthscale-scaled L1 distance from a
//            representative of n to a point of its cell (digest 6.2; for d = 1, S = 1, the paper's
//            kernel and z = 4.4 this gives c ~= 14). For aggregation = cell the centre plays the
//            representative, so D1 is half the scaled L1 diameter.
enum class GpooDelta { paper, geometric };
// paper: the tree starts as the root alone.
// code:  warm start of the authors' code: the root is expanded at construction and its K children
//        are each sampled once (in child order) before b-values select (digest 6.4, App. X).
enum class GpooVariant { paper, code };
// deepest: the paper's line 11, the expanded node of the deepest expanded depth with the largest
//          aggregated posterior mean.
// best_expanded: the expanded node (any depth) with the largest aggregated posterior mean. Expanded
//          nodes passed the confidence test, so their means are the precise ones; with a small
//          budget the deepest expanded depth may hold only cells that were expanded while
//          exploring, and `deepest` then returns a poor region beside a better shallower one.
enum class GpooRecommendationRule { deepest, best_expanded };

// Solves L x = b in place for every column pointer in `columns` (each holding b in its first t
// entries), L the lower triangle of the t x t top-left corner of `L`, with the arithmetic of Eigen
// 3.4's L.triangularView<Lower>().solve(b) for one vector (triangular_solve_vector: panels of
// EIGEN_TUNE_TRIANGULAR_PANEL_WIDTH; in a panel each entry is divided by the diagonal and its
// multiples subtracted from the panel's later entries; the entries below then subtract the panel's
// contribution summed in column order, as Eigen's gemv does), so each column is bit-identical to
// that solve, but L is read once for all of them instead of once per column (the solves of a
// node's new children were most of a load's replay, memory-bound).
void gpoo_forward_solve(const Eigen::MatrixXd& L, Eigen::Index t, const std::vector<double*>& columns);
// The same with a length of its own for each column (each bit-identical to Eigen's solve of that
// size: an entry's arithmetic does not depend on the entries after it).
void gpoo_forward_solve(const Eigen::MatrixXd& L, const std::vector<std::pair<double*, Eigen::Index>>& columns);

const char* to_string(GpooAggregation v);
const char* to_string(GpooBeta v);
const char* to_string(GpooDelta v);
const char* to_string(GpooVariant v);
const char* to_string(GpooRecommendationRule v);
GpooRecommendationRule gpoo_recommendation_rule_from_string(const std::string& name);
GpooAggregation gpoo_aggregation_from_string(const std::string& name);  // throws std::invalid_argument
GpooBeta gpoo_beta_from_string(const std::string& name);
GpooDelta gpoo_delta_from_string(const std::string& name);
GpooVariant gpoo_variant_from_string(const std::string& name);

struct GpooSearchOptions {
  GpooAggregation aggregation = GpooAggregation::representatives;
  std::size_t representatives = 1;  // S (also used for the recommended point under `cell`)
  std::size_t branching = 2;        // K, longest-side splits
  std::size_t max_depth = 10;       // h_max: nodes with h <= h_max may expand, leaves reach h_max + 1

  GpooBeta beta = GpooBeta::theory;
  double beta_theta = 0.1;  // theta of both presets
  double beta_scale = 0.1;  // the code preset's factor

  GpooDelta delta = GpooDelta::geometric;
  double delta_c = 14.0;  // paper
  double delta_z = 4.4;   // geometric

  Kernel kernel;                 // fixed; its dimension is the search's
  double noise_variance = 0.01;  // of one aggregated reward; > 0 (nodes are resampled)

  GpooVariant variant = GpooVariant::paper;
  GpooRecommendationRule recommendation = GpooRecommendationRule::deepest;
};

// beta_t of the options' preset for round t >= 1 (t = 0 is treated as 1).
double gpoo_beta(const GpooSearchOptions& options, std::size_t t);

// What next() asks for.
struct GpooQuery {
  NodeId node = 0;
  std::size_t depth = 0;
  Eigen::VectorXd lower, upper;  // the cell
  // The S representatives, one per column, whose average is the reward (aggregation =
  // representatives). Empty for aggregation = cell: the reward is the average over [lower, upper].
  Eigen::MatrixXd points;
};

struct GpooPosterior {
  double mean = 0.0;
  double variance = 0.0;  // of the aggregated F_n (no observation noise), clamped at 0
};

struct GpooRecommendation {
  NodeId node = 0;
  std::size_t depth = 0;
  Eigen::VectorXd lower, upper;
  double mean = 0.0;  // aggregated posterior mean and sd of the node
  double sd = 0.0;
  Eigen::VectorXd point;  // the node's representative with the highest posterior mean of f
};

struct GpooObservationRecord {
  NodeId node = 0;
  double value = 0.0;
};

class GpooSearch {
 public:
  // Throws std::invalid_argument for an inconsistent configuration (kernel dimension, S = 0,
  // K < 2, noise_variance <= 0, theta outside (0, 1), non-positive c, z or scale).
  GpooSearch(std::size_t dim, GpooSearchOptions options);

  // Rebuilds a search from its observations and the tree's expansion sequence (as returned by
  // observations() and expand_sequence()). Expansions are taken from the sequence rather than
  // re-decided, each right after the last observation of its node, which is when tell() made it.
  // Throws std::invalid_argument if the two sequences are inconsistent.
  static GpooSearch replay(std::size_t dim, GpooSearchOptions options,
                           const std::vector<GpooObservationRecord>& observations,
                           const std::vector<NodeId>& expand_sequence);

  // The checks of replay() without the GP (the tree alone, O(rounds + nodes)): throws
  // std::invalid_argument, with replay()'s message, where replay() would.
  static void check_replay(std::size_t dim, const GpooSearchOptions& options,
                           const std::vector<GpooObservationRecord>& observations,
                           const std::vector<NodeId>& expand_sequence);

  std::size_t dim() const { return tree_.dim(); }
  const GpooSearchOptions& options() const { return options_; }
  const PartitionTree& tree() const { return tree_; }
  const std::vector<NodeId>& expand_sequence() const { return tree_.expand_sequence(); }
  const std::vector<GpooObservationRecord>& observations() const { return observations_; }
  std::size_t rounds() const { return observations_.size(); }  // t after the last tell

  // The leaf to evaluate in round rounds() + 1: the largest b-value (ties: lower depth, then lower
  // label i), except during the code variant's warm start. Calling it twice without tell() returns
  // the same query.
  GpooQuery next() const;

  // Adds the aggregated reward of `node` (a current leaf; throws std::invalid_argument otherwise)
  // and expands it if delta(h) >= sqrt(beta_t) sd_t and h <= h_max. Returns whether it expanded.
  bool tell(NodeId node, double value);
  // Gives the rounds told so far these values instead (one per round, e.g. a round told a fantasy
  // whose trial has since completed). Expansions depend on posterior variances only, so only z
  // changes: it is redone from the first changed round on with tell()'s arithmetic, bit-identical to
  // a replay with these values, in O(t (t - first)) instead of the replay's O(K t^3).
  void revalue(const std::vector<double>& values);

  GpooRecommendation recommend() const;

  // Introspection (any node of the tree), with the current observations.
  GpooPosterior posterior(NodeId node) const;
  double delta(NodeId node) const;
  double beta(std::size_t t) const { return gpoo_beta(options_, t); }
  // b-value of a node for the coming round t = rounds() + 1: mean + sqrt(beta_t) sd + delta.
  double b_value(NodeId node) const;
  // The aggregated prior covariance kbar(a, b) = Cov(F_a, F_b).
  double aggregated_kernel(NodeId a, NodeId b) const;
  std::size_t times_sampled(NodeId node) const;
  // Posterior mean of f at a point x in [0,1]^d.
  double point_mean(const Eigen::VectorXd& x) const;
  // Posterior of f at x given only the rounds j with keep[j] != 0 (keep.size() == rounds()), e.g. a
  // campaign's completed rounds without the fantasies told for its pending and failed ones: the
  // exact GP over those observations (variance without noise, clamped at 0). With every round kept
  // it is the search's own factor; otherwise that factor with the other rounds' rows and columns
  // deleted (kept_factor), not a new O(t^3) factorisation. Throws std::invalid_argument if
  // keep.size() != rounds().
  GpooPosterior point_posterior(const Eigen::VectorXd& x, const std::vector<char>& keep) const;

 private:
  struct NodeState {
    Eigen::MatrixXd points;  // representatives (columns)
    // L^{-1} k_n in head(rounds()), the rest room to grow (v_capacity); leaves only (empty once
    // the node is expanded).
    Eigen::VectorXd v;
    double prior = 0.0;      // kbar(n, n)
    double delta = 0.0;
    std::size_t samples = 0;
  };

  // Appends round rounds() for `node`. Leaves marked in `deferred` are left for append_entry
  // (replay's blocks); `rows` collects the row l21 of L the round appended.
  void add_observation(NodeId node, double value, const std::vector<char>* deferred = nullptr,
                       std::vector<Eigen::VectorXd>* rows = nullptr);
  // Entry `round` of leaf n's v from row l21 of L (round < rounds(): the observation is recorded).
  void append_entry(NodeId n, std::size_t round, const Eigen::VectorXd& l21);
  // Expands node and solves its children's columns, except (replay) the children that `unsolved`
  // does not exclude: those are left holding k_n in head(rounds()) and listed there with that size.
  struct Unsolved {
    const std::vector<char>* observed = nullptr;  // by node: observed later in the block (solve now)
    std::vector<std::pair<NodeId, std::size_t>> nodes;
  };
  void expand(NodeId node, Unsolved* unsolved = nullptr);
  // Sets up node id; with rounds() > 0 its column's head holds k_n, not yet solved (`solve` false:
  // the caller solves the columns of several new nodes at once, gpoo_forward_solve).
  void init_node(NodeId id, bool solve = true);
  static Eigen::Index v_capacity(Eigen::Index t);
  Eigen::VectorXd observed_kbar(NodeId id) const;  // kbar(id, node of round j), j < rounds()
  Eigen::VectorXd weights() const;                 // (G + sigma^2 I)^{-1} y = L^{-T} z
  double compute_delta(NodeId id) const;
  double kbar_uncached(NodeId a, NodeId b) const;
  // The memo of kbar(n, m) for an observed node m (row n, m's slot), grown to hold it; nullptr if
  // m was never observed.
  double* kbar_memo(NodeId n, NodeId m) const;
  double kbar_point(const Eigen::VectorXd& x, NodeId n) const;
  // chol(G + sigma^2 I) over the rounds `kept` (ascending, a strict subset of the rounds).
  Eigen::MatrixXd kept_factor(const std::vector<Eigen::Index>& kept) const;
  bool label_less(NodeId a, NodeId b) const;

  GpooSearchOptions options_;
  PartitionTree tree_;
  std::vector<NodeState> nodes_;
  std::vector<GpooObservationRecord> observations_;
  Eigen::MatrixXd L_;  // capacity x capacity; top-left rounds() x rounds() is valid
  Eigen::VectorXd z_;  // capacity; head(rounds()) is valid
  // kbar is fixed for a fixed kernel: memoised (digest 3.2, "Caching") where one costs more than a
  // kernel evaluation (S > 1, or cells), see aggregated_kernel(). Every kbar the search needs pairs
  // a node with an *observed* node (a leaf's entry of a round, a new node's column, an expanded
  // node's mean), so node n's row holds kbar(n, m) at m's slot, the rank of m's first observation;
  // NaN where not computed yet.
  static constexpr std::uint32_t kNoSlot = 0xffffffffU;
  std::vector<std::uint32_t> observed_slot_;  // by node; kNoSlot if never observed
  std::uint32_t observed_count_ = 0;           // distinct observed nodes (slots handed out)
  mutable std::vector<std::vector<double>> kbar_rows_;  // by node
};

}  // namespace tune
