#pragma once
// GPOO as a Study strategy (`gpoo`): the tree search of GpooSearch (Zhang, Tsuchida & Ong, AAAI
// 2022; digest-gpoo-zoghi.md) over the unit cube of the study's space, maximising the reward
// (the objective, negated when minimising).
//
// Rounds and trials. A GPOO round selects a leaf cell and observes its aggregated reward:
// - aggregation: representatives (default). The round runs one trial at each of the cell's S
//   representatives (S = 1: the cell's centre, the paper's single-point feedback), handed out by
//   consecutive asks (so S parallel workers run one round), and the round's feedback is the mean of
//   its S values, told to the search once all S have completed. A cell chosen again (a refinement
//   round) runs its representatives again: the objective is noisy, the search resamples cells.
// - aggregation: cell. The round runs one trial at a point drawn uniformly in the cell (seeded by
//   the study seed and the round number), and its value is the feedback of the cell's average (the
//   paper's continuous analogue, App. D): the spread of f inside the cell becomes part of the noise,
//   which is fitted. `representatives` then only sets the candidates for the recommended point.
// Trials run at the snapped points (discrete parameters move to their values' cells); the model
// keeps the cell's own representatives.
//
// Pending rounds. The tree GPOO grows depends only on *which* cells were observed and in which
// order, never on the values (the expansion rule compares delta(h) with sqrt(beta_t) sd_t, and sd
// does not depend on the values). So each round is appended to a sequence when it is asked, and
// an ask replays every round in that order: completed rounds with their value, the others
// (pending, or with a failed trial) with a fantasy, the posterior mean of their cell at the moment
// they are first replayed (stored, so it never changes). The cells this lookahead proposes are the
// cells the real tree will have. Each round's expansion decision is made once, on its first replay,
// and kept (the search's expand sequence is saved), so a later refit of the kernel cannot remove a
// cell a pending trial runs in. A leaf whose trial point coincides with a pending or failed trial
// is passed over for the next largest b-value: parallel workers never get the same point, and a
// configuration that failed is not proposed again (its round stays in the sequence as a fantasy).
//
// Kernel hyperparameters (FixedKernelRefit): restandardised and refitted by MAP on the completed
// rounds (observations: the weighted representatives, or the cell's box average) after each of the
// first `refit.every` rounds and then as the data grow by max(every, growth n); the search is
// rebuilt by replay, so between refits the kernel is fixed as the paper assumes. Squared
// exponential by default (the paper's RBF; cell averages in closed form).
//
// Recommendation: GpooSearch::recommend() under GpooStrategyOptions::recommendation: by default
// (best_expanded) the expanded cell of any depth with the largest aggregated posterior mean; with
// `deepest` (the paper's rule, and GpooSearchOptions' own default) the best expanded cell of the
// deepest expanded depth. Study::recommendation() gives the cell as a region (box per
// parameter) with the estimate of the objective's average over it (mean and sd), and as a point
// the representative with the largest posterior mean of f (with f's posterior there).
#include <optional>
#include <vector>

#include "tune/gp/hyperparameter_fit.hpp"
#include "tune/strategy/fixed_kernel_refit.hpp"
#include "tune/strategy/gp_bandit.hpp"
#include "tune/strategy/gpoo_search.hpp"
#include "tune/strategy/strategy.hpp"

namespace tune {

struct GpooStrategyOptions {
  GpooAggregation aggregation = GpooAggregation::representatives;
  static constexpr std::size_t kMaxRepresentatives = 1024;  // an S x S block per pair of rounds: 8 MB
  std::size_t representatives = 1;  // S, 1 .. kMaxRepresentatives
  std::size_t branching = 2;        // K, longest-side splits
  std::size_t max_depth = 0;        // h_max; 0: min(10 d, 60) (digest 6.7)
  GpooBeta beta = GpooBeta::theory;
  double beta_theta = 0.1;
  double beta_scale = 0.1;  // beta: code
  GpooDelta delta = GpooDelta::geometric;
  double delta_c = 14.0;  // delta: paper, in standardised reward units
  double delta_z = 4.4;   // delta: geometric
  GpooVariant variant = GpooVariant::paper;
  // best_expanded for campaigns: see GpooRecommendationRule.
  GpooRecommendationRule recommendation = GpooRecommendationRule::best_expanded;
  KernelType kernel = KernelType::squared_exponential;
  RefitSchedule refit{};
  HyperparameterFitOptions fit{};

  std::size_t tree_depth(std::size_t dim) const;
  // Trials per round: S under representatives, 1 under cell.
  std::size_t trials_per_round() const;
};

class GpooStrategy final : public Strategy {
 public:
  bool updates_on_complete() const override { return false; }  // on_complete is the base's no-op
  // Throws std::invalid_argument naming the option and the fix.
  explicit GpooStrategy(GpooStrategyOptions options);

  std::string name() const override { return "gpoo"; }
  bool accepts_enqueued_trials() const override { return false; }
  const GpooStrategyOptions& options() const { return options_; }
  void check_trial_budget(std::size_t max_trials) const override;

  ProposalResult propose(const StrategyContext& context) override;
  std::optional<Recommendation> recommend(const StrategyContext& context) const override;
  YAML::Node save() const override;
  void restore(const YAML::Node& node, const StrategyContext& context) override;

  struct Round {
    NodeId node = 0;
    std::vector<std::uint64_t> trials;  // in representative order
    std::optional<double> fantasy;      // reward units; set when first replayed before completion
  };
  // Whether all the round's trials have completed with a value: it is then an observation of its
  // cell (a round with a failed trial never will be; it stays as a fantasy).
  bool round_complete(const Round& round, const std::vector<Trial>& trials) const;
  // Observability and tests.
  const std::vector<Round>& rounds() const { return rounds_; }
  const FixedKernelRefit& model() const { return refit_; }
  const std::vector<NodeId>& expand_sequence() const { return expand_sequence_; }  // of the decided rounds
  // Whether the search is built. A load checks the rounds without it and leaves it to the first
  // use (an ask, a recommendation): `tune status` and `tune tell` need none.
  bool has_search() const { return cache_.has_value(); }
  // The search as the next ask would see it (every round replayed, fantasies for the unfinished).
  GpooSearch search(const StrategyContext& context) const;

 private:
  struct Built {
    GpooSearch search;
    std::vector<std::optional<double>> new_fantasies;  // reward units, for rounds [decided_, size)
    std::vector<double> values;  // standardised, as told, for every round
  };
  struct CachedSearch;
  // `take_cache`: move the cached search out instead of copying it (a copy of every node's column
  // is most of an ask otherwise); the proposal that does so stores the new search back.
  Built build(const StrategyContext& context, bool take_cache = false) const;
  // The decided rounds as the search's observations (standardised; a fantasy where not completed).
  std::vector<GpooObservationRecord> decided_observations(const StrategyContext& context) const;
  // The search of the decided rounds [0, decided_) (the cache, or a replay, then kept as the cache),
  // and the rest told to it.
  CachedSearch decided_search(const StrategyContext& context, bool take_cache) const;
  void tell_undecided(Built& b, const StrategyContext& context) const;
  GpooSearchOptions search_options(std::size_t dim) const;
  GpHyperparameters hyperparameters(std::size_t dim) const;
  std::optional<double> completed_reward(const Round& round, const StrategyContext& context) const;
  // The value a round with a failed trial stands for (reward units): its fantasy, capped at the
  // median of the completed rounds' rewards when there are any (failed_round_cap).
  double failed_value(const Round& round, double fantasy, const StrategyContext& context,
                      const std::optional<double>& cap) const;
  std::optional<double> failed_round_cap(const StrategyContext& context) const;
  Observation observation_of(const PartitionTree& tree, NodeId node, double reward) const;
  void refresh_if_due(const StrategyContext& context);
  void drop_phantom_trials(std::size_t trial_count);
  Eigen::VectorXd trial_point(const PartitionTree& tree, NodeId node, std::size_t rep, std::size_t round,
                              std::uint64_t seed) const;

  GpooStrategyOptions options_;
  std::vector<Round> rounds_;
  std::vector<NodeId> expand_sequence_;  // of the rounds [0, decided_)
  std::size_t decided_ = 0;
  FixedKernelRefit refit_;
  // The search as the last proposal left it: rounds [0, decided_) told with these standardised
  // values under refresh `refresh_count`. While the refresh is the same, a build starts from it,
  // gives a round told as a fantasy and since completed its value (GpooSearch::revalue), and tells
  // only the rounds decided since: a replay of every round at every ask is O(N^3) (0.5 s per ask at
  // 750 trials). A refit replays; a loaded study replays once, at its first use, which keeps the
  // result.
  struct CachedSearch {
    GpooSearch search;
    std::vector<double> values;
    std::size_t refresh_count = 0;
  };
  mutable std::optional<CachedSearch> cache_;
};

YAML::Node to_yaml(const GpooStrategyOptions& options);
GpooStrategyOptions gpoo_strategy_options_from_yaml(const YAML::Node& node);

}  // namespace tune
