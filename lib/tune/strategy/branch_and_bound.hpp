#pragma once
// Zoghi's GP branch and bound for noise-free objectives (UBC MSc thesis 2012, Algorithm 1;
// digest-gpoo-zoghi.md 1.2, 2.3, 3.3, 4.2, 6.9-6.11). A standalone search object over [0,1]^d,
// independent of Study: next() names the lattice point to evaluate, tell() feeds back f there (to
// be maximised). Kernel hyperparameters are fixed and known (no fitting).
//
// Lattice. L_m is the regular grid of spacing 2^-m in [0,1]^d ((2^m + 1)^d points), so
// 2 L_m ∩ conv(L_m) ⊆ L_m holds by construction (thesis 3.4). Points are kept as integer indices on
// the finest lattice L_{m_max}; every L_m is a sub-lattice of it.
//
// Model (thesis eq. 2.3). An exact GP with Standardization{0, 1}, zero prior mean and a single
// noise group holding a jitter variance (options.jitter * outputscale, digest 6.9). A point is
// never sampled twice.
//
// Confidence. beta_t = beta_scale * 2 ln(|L_m| pi^2 t^2 / (6 alpha)) (Lemma 10 with
// pi_t = pi^2 t^2 / 6, so sum 1/pi_t = 1; digest 2.3/6.11), |L_m| the size of the lattice the
// pruned set lives on and t the number of samples (at least 1; t + 1 when choosing the next point).
// UCB = mu + sqrt(beta) sigma, LCB = mu - sqrt(beta) sigma.
//
// The relevant set R is a set of level-m lattice points (start: m = 1, R = L_1). A round:
//  1. Sample the points of R not yet sampled ("sample twice as densely"), in farthest-first order
//     from all sampled points (ties: lexicographically smallest). If there are more than round_cap
//     of them, the round instead spends round_cap samples, each the UCB-argmax over the unsampled
//     points of R under the current posterior (digest 6.11: cap per refinement, UCB fallback).
//     Default round_cap: min(4 * 2^d, 64). For d <= 4 that is 4 * 2^d; above, 64 (it was 4 * 2^d,
//     which in d = 6 spent the first 256 samples on the grid {0, 1/2, 1}^6).
//  2-3. Prune and refine (m < m_max). The candidates are C = L_{m+1} ∩ B, where B is the
//     axis-aligned bounding box of R expanded by one level-m spacing on each side (clipped to the
//     cube); R_{m+1} = {x in C : UCB(x) > max_C LCB} (strict, as the thesis) plus the LCB-argmax
//     itself, which the strict rule would drop when its sigma is 0 (a sampled point).
//     Choices vs the thesis: (a) the box replaces the thesis's ball B(midpoint, diameter); it is
//     tighter than the ball (which has radius = diameter) and still contains the continuous hull of
//     the survivors plus a margin of one coarse spacing. (b) The prune is evaluated by lattice
//     membership (digest 6.11) on the *next finer* lattice rather than on the level-m points
//     themselves: the thesis prunes the continuous set R ⊆ D, whose unsampled points carry the
//     uncertainty; once a round has sampled every level-m point of R, their sigma is ~0 and the
//     strict rule on level-m points alone would keep only the best sample, ignoring beta
//     altogether. The level-(m+1) points in B include the unsampled midpoints and so stand in for
//     the continuous region.
//     (c) Capped refinements: when B holds more than candidate_cap level-(m+1) points (default
//     4096), the prune runs on a capped, deterministic subset of them instead: rings around R on
//     L_{m+1}, ring 0 = R itself (at most half the cap), ring r = the points at Chebyshev distance
//     exactly r level-(m+1) steps from R (r = 1, 2; ring 2 reaches one level-m spacing, B's margin),
//     added ring by ring; the ring that overflows contributes its members of smallest hash
//     (splitmix64 of the key, salted by level and ring). Points of B outside the subset are dropped
//     without a prune test. This deviates from the thesis (whose R is the whole ball) where B is
//     large: with several co-optimal basins (Branin) B spans most of the cube, up to 1e6 points at
//     level 10, and enumerating and predicting at all of them cost 13-194 s and 2.5-4.3 GB. Since
//     the kept candidates are still pruned against the max LCB over the subset (a lower threshold
//     than over all of B), the subset is never pruned harder than the full box would be. So
//     |R| <= max(candidate_cap, 3^d) throughout.
// At m = m_max there is no finer lattice: after the level's round R is pruned in place (same rule
// over R), and the search continues one point at a time with the UCB-argmax over the unsampled
// points of R, pruning after every tell. next() returns nothing once R has no unsampled point
// (the thesis's "R ∩ L = ∅"); callers normally stop on budget first (digest 6.11).
//
// Kernel changes. rebase() swaps in a new kernel and new values for every sample (a refit with
// a new standardisation) without replaying: the GP is rebuilt, the lattice state (level, R, round)
// stays, and the next prune uses the new kernel. The thesis assumes a known kernel; a replay under
// the new kernel (what BnbStrategy did first) redid every refinement and could end at a lower level.
//
// Determinism and persistence. No randomness; the state is the (point, value) sequence plus the
// rebase() calls, and replay() rebuilds a search without rebases by telling the same sequence,
// which redoes the same arithmetic (BnbStrategy replays with its rebases at the same positions).
//
// Cost. Each refinement enumerates the lattice points of the box B (up to (2^(m+1) + 1)^d) only
// when there are at most candidate_cap of them, else at most candidate_cap ring points (from up to
// |R| 5^d generated keys, thinned beyond 8e6), and predicts at them (O(n^2 |C|)); R is tracked by
// the GP (O(|R| n) per tell). rebase() is O(n^3 + |R| n^2). Memory O(n |R|).
#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/kernel.hpp"

namespace tune {

struct BranchAndBoundOptions {
  std::size_t dim = 1;
  std::size_t max_level = 8;  // m_max: the finest lattice has spacing 2^-m_max
  double alpha = 0.05;        // in (0, 1)
  double beta_scale = 1.0;    // > 0; 1 is the theory value
  std::size_t round_cap = 0;  // samples per round; 0 means min(4 * 2^d, 64)
  // Candidates of a refinement; 0 means kDefaultCandidateCap. When the box B holds more level-(m+1)
  // points, the prune runs on a capped subset (the header's "Capped refinements").
  std::size_t candidate_cap = 0;
  Kernel kernel;              // fixed; its dimension must equal dim
  double jitter = 1e-10;      // noise variance of an observation, relative to the outputscale
};

struct BranchAndBoundRecord {
  Eigen::VectorXd point;
  double value = 0.0;
};

class BranchAndBound {
 public:
  static constexpr std::size_t kDefaultCandidateCap = 4096;
  static constexpr std::size_t kMaxDefaultRoundCap = 64;
  static constexpr std::size_t kMaxDim = 16;
  // min(4 * 2^d, kMaxDefaultRoundCap): 4 * 2^d for d <= 4.
  static std::size_t default_round_cap(std::size_t dim);

  // Throws std::invalid_argument for an inconsistent configuration (dim 0 or above kMaxDim, kernel dimension,
  // max_level 0 or a finest lattice too large to index in 63 bits, alpha outside (0, 1),
  // non-positive beta_scale or jitter).
  explicit BranchAndBound(BranchAndBoundOptions options);

  // Tells every record in order (tell()'s checks apply).
  static BranchAndBound replay(BranchAndBoundOptions options, const std::vector<BranchAndBoundRecord>& records);

  const BranchAndBoundOptions& options() const { return options_; }
  std::size_t dim() const { return options_.dim; }
  std::size_t round_cap() const { return cap_; }
  std::size_t candidate_cap() const { return candidate_cap_; }

  // A new kernel and new values for every sample so far (values[i] for observations()[i], e.g.
  // restandardised): the GP is rebuilt on them and R re-tracked; the lattice state (level, R, the
  // round's queue or UCB budget, final phase) is kept as it is. The next prune (end of the round,
  // or every tell in the final phase) uses the new kernel. Throws std::invalid_argument for a kernel
  // of the wrong dimension, a wrong number of values or a non-finite one.
  void rebase(const Kernel& kernel, const std::vector<double>& values);

  // The next point to evaluate, or nothing once R has no unsampled point at m_max. Calling it
  // again without tell() returns the same point.
  std::optional<Eigen::VectorXd> next() const;

  // Adds f(point). The point must be a point of the finest lattice (coordinates multiples of
  // 2^-m_max, to 1e-9) not yet sampled, and the value finite; throws std::invalid_argument
  // otherwise. Any such point is accepted (it informs the model); it counts towards the round when
  // it was pending there.
  void tell(const Eigen::VectorXd& point, double value);

  // Current level m (1..m_max) and relevant set (level-m points, one per column, lexicographic).
  std::size_t level() const { return level_; }
  Eigen::MatrixXd relevant_set() const;
  std::size_t relevant_size() const { return relevant_.size(); }
  // 1 - |R| / |L_m|.
  double pruned_fraction() const;
  // Whether the search has reached m_max and finished its round there (UCB mode).
  bool final_phase() const { return final_; }

  // Best sampled point and value (ties: the earlier sample); nothing before the first tell.
  std::optional<BranchAndBoundRecord> best() const;
  const std::vector<BranchAndBoundRecord>& observations() const { return records_; }
  std::size_t samples() const { return records_.size(); }
  bool sampled(const Eigen::VectorXd& point) const;

  // Diagnostics: proposals made by the UCB fallback (capped rounds and the final phase), and
  // rounds that hit the cap.
  std::size_t ucb_proposals() const { return ucb_proposals_; }
  std::size_t capped_rounds() const { return capped_rounds_; }
  // Refinements whose box exceeded candidate_cap (pruned on the capped rings), and rebase() calls.
  std::size_t capped_refinements() const { return capped_refinements_; }
  std::size_t rebases() const { return rebases_; }

  // beta for t samples on lattice level m.
  double beta(std::size_t t, std::size_t level) const;
  // Size of L_m.
  double lattice_size(std::size_t level) const;
  const GaussianProcess& model() const { return gp_; }

 private:
  using Key = std::uint64_t;

  Eigen::VectorXd point_of(Key key) const;
  Key key_of(const Eigen::VectorXd& point) const;  // throws unless on the finest lattice
  std::vector<Key> lattice_in_box(const std::vector<std::int64_t>& lo, const std::vector<std::int64_t>& hi,
                                  std::size_t level) const;
  void set_relevant(std::vector<Key> keys);  // sorted; re-tracks the GP
  std::vector<Key> dilate(const std::vector<Key>& source, std::size_t level) const;
  std::vector<Key> capped_candidates(std::size_t level) const;
  void start_round();
  void end_round();
  void advance();
  void prune_in_place();
  std::optional<Key> ucb_argmax() const;

  BranchAndBoundOptions options_;
  std::size_t cap_ = 0;
  std::size_t candidate_cap_ = 0;
  std::int64_t finest_ = 0;  // N = 2^m_max; indices run over 0..N
  GaussianProcess gp_;
  std::vector<BranchAndBoundRecord> records_;
  std::unordered_map<Key, std::size_t> sampled_;  // key -> record index

  std::size_t level_ = 1;
  std::vector<Key> relevant_;  // sorted, tracked by gp_ in this order
  bool final_ = false;
  // The current round (before the final phase): pending farthest-first queue, or UCB fallback
  // budget.
  std::vector<Key> queue_;
  std::size_t ucb_remaining_ = 0;

  std::size_t ucb_proposals_ = 0;
  std::size_t capped_rounds_ = 0;
  std::size_t capped_refinements_ = 0;
  std::size_t rebases_ = 0;
};

}  // namespace tune
