#pragma once
// Zoghi's GP branch and bound as a Study strategy (`bnb`): BranchAndBound (UBC MSc thesis 2012;
// digest-gpoo-zoghi.md 2.3, 6.9-6.11) over the unit cube of the study's space, for deterministic
// (noise-free) objectives, maximising the reward (the objective, negated when minimising).
//
// Trials. Every trial runs at a point of the search's lattice (spacing 2^-max_level), snapped to
// the space (discrete parameters move to their values' cells). The search is told the lattice
// point it proposed with the trial's value, in the order the trials complete.
//
// Deterministic objectives make repeats pointless: a lattice point whose configuration was already
// evaluated (possible with discrete parameters, where many lattice points share a configuration)
// is told that value at once, without a new trial, and the search moves on.
//
// Pending and failed trials: an ask works on a copy of the search that is also told a fantasy
// (the posterior mean) at the lattice point of every pending and failed trial, so parallel
// workers get distinct points and a failed configuration is not proposed again. A lattice point
// whose configuration is pending is told a fantasy on the copy the same way.
//
// Kernel hyperparameters (FixedKernelRefit): restandardised and refitted by MAP on the completed
// trials with the noise fixed at the fit's lower bound (noise-free objective), after each of the
// first `refit.every` trials and then as the data grow by max(every, growth n); the search is
// rebuilt by replaying its tells under the new kernel (BranchAndBound accepts any lattice point),
// so between refits the kernel is fixed as the thesis assumes. Matern-5/2 by default.
//
// The study stops with a reason once the relevant set has no unsampled point on the finest
// lattice (the thesis's R ∩ L = ∅). The recommendation is the best sampled point, its value and
// the posterior sd there (~0). The lattice refinement enumerates the bounding box of the relevant
// set: meant for small dimensions (d <= 4 or so).
#include <map>
#include <optional>
#include <vector>

#include "tune/gp/hyperparameter_fit.hpp"
#include "tune/strategy/branch_and_bound.hpp"
#include "tune/strategy/fixed_kernel_refit.hpp"
#include "tune/strategy/gp_bandit.hpp"
#include "tune/strategy/strategy.hpp"

namespace tune {

struct BnbStrategyOptions {
  std::size_t max_level = 0;  // m_max; 0: the largest m <= 10 whose lattice can be indexed
  double alpha = 0.05;
  double beta_scale = 1.0;
  std::size_t round_cap = 0;  // 0: 4 * 2^d
  double jitter = 1e-10;      // relative to the outputscale
  KernelType kernel = KernelType::matern52;
  RefitSchedule refit;
  HyperparameterFitOptions fit;

  std::size_t lattice_level(std::size_t dim) const;
};

class BnbStrategy final : public Strategy {
 public:
  // Throws std::invalid_argument naming the option and the fix.
  explicit BnbStrategy(BnbStrategyOptions options);

  std::string name() const override { return "bnb"; }
  const BnbStrategyOptions& options() const { return options_; }

  ProposalResult propose(const StrategyContext& context) override;
  void on_complete(const StrategyContext& context, const Trial& trial) override;
  std::optional<Recommendation> recommend(const StrategyContext& context) const override;
  YAML::Node save() const override;
  void restore(const YAML::Node& node, const StrategyContext& context) override;

  // One tell of the search: a lattice point and the trial whose value it carries.
  struct Record {
    Eigen::VectorXd point;
    std::uint64_t trial = 0;
  };
  // Observability and tests.
  const std::vector<Record>& records() const { return records_; }
  const BranchAndBound* search() const { return search_ ? &*search_ : nullptr; }
  const FixedKernelRefit& model() const { return refit_; }

 private:
  BranchAndBoundOptions search_options(std::size_t dim) const;
  void rebuild(const StrategyContext& context);
  void refresh_if_due(const StrategyContext& context);
  double value_of(const StrategyContext& context, std::uint64_t id) const;  // standardised reward

  BnbStrategyOptions options_;
  std::map<std::uint64_t, Eigen::VectorXd> points_;  // trial id -> lattice point
  std::vector<Record> records_;                      // the search's tells, in order
  std::optional<BranchAndBound> search_;
  FixedKernelRefit refit_;
};

YAML::Node to_yaml(const BnbStrategyOptions& options);
BnbStrategyOptions bnb_strategy_options_from_yaml(const YAML::Node& node);

}  // namespace tune
