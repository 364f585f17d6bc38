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
// first `refit.every` trials and then as the data grow by max(every, growth n). The search takes
// the new kernel and the restandardised values in place (BranchAndBound::rebase): its lattice
// level, relevant set and round stay, so between refits the kernel is fixed as the thesis assumes
// and a refit costs one GP rebuild, not a replay. (The first version replayed every tell under the
// new kernel: exact, but each refit redid every refinement, 13-194 s per ask at deep levels, and
// the level went back and forth.) The refits are kept as a history (tells so far,
// hyperparameters, standardisation) in the saved state; loading replays the tells with the
// rebases at the same positions, so a loaded study makes the same suggestions. A state saved
// without the history (before it existed) replays under the current kernel, as it was made.
//
// Is the objective deterministic? bnb cannot see noise in its own model (it interpolates), and told
// noisy values it takes a lucky draw for the optimum, prunes the box on it, and may converge within
// a few dozen trials. So it re-runs its best configuration once, after `repeat_best_after` completed
// trials (or when it would stop, if sooner), and compares the two results (RepeatCheck). The repeat
// is not told to the search. A difference is reported (warning(): the tuner's output, `tune status`,
// `tune best`, Study::warning(); and the stop reason), not acted on: the campaign's budget is the user's. A likelihood-ratio test between the MAP fits
// with and without a noise variance was measured first and not kept (10 seeds, 100 evaluations):
// its gain reached 10.6 nats on noise-free Hartmann-3 at 64 evaluations, and with a floor on the
// fitted relative noise sd to stop that, it flagged 0/10 runs with 1% noise on Hartmann-3.
//
// The study stops with a reason once the relevant set has no unsampled point on the finest
// lattice (the thesis's R ∩ L = ∅). The recommendation is the best sampled point, its value and
// the posterior sd there (~0). Refinements prune at most `candidate_cap` lattice points (the
// bounding box of R when it is that small, else rings around R; BranchAndBound), so an ask or a
// tell stays below ~0.5 s and ~35 MB to 300 trials (bench/results/bnb_regret.md). Far behind ei
// for d >= 4 at campaign budgets (one lattice level per 64 trials); a campaign's deterministic
// default is bnb only up to 3 parameters.
#include <map>
#include <optional>
#include <string>
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
  std::size_t round_cap = 0;      // 0: min(4 * 2^d, 64)
  std::size_t candidate_cap = 0;  // 0: 4096 (BranchAndBound::kDefaultCandidateCap)
  std::size_t repeat_best_after = 10;  // completed trials before the best is re-run once; 0: never
  double jitter = 1e-10;      // relative to the outputscale
  KernelType kernel = KernelType::matern52;
  RefitSchedule refit{};
  HyperparameterFitOptions fit{};

  std::size_t lattice_level(std::size_t dim) const;
};

// bnb's re-run of its best configuration and what it found.
struct RepeatCheck {
  enum class Outcome { pending, same, different, failed };
  std::uint64_t original = 0;  // the trial whose configuration was re-run
  std::uint64_t repeat = 0;    // the re-run
  Outcome outcome = Outcome::pending;
  double first = 0.0, second = 0.0;  // the objective's two values (same or different)
  // "trial 14 re-ran trial 6's configuration and got 0.31 against 0.12" and what that means.
  std::string describe() const;
};

// Whether two results of one configuration differ by more than floating-point summation could make
// them (a multithreaded reduction's last bits): 1e-9 of the larger magnitude or of `spread`.
bool results_differ(double a, double b, double spread);

class BnbStrategy final : public Strategy {
 public:
  // Throws std::invalid_argument naming the option and the fix.
  explicit BnbStrategy(BnbStrategyOptions options);

  std::string name() const override { return "bnb"; }
  bool accepts_enqueued_trials() const override { return false; }
  void check_space(const Space& space) const override;
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
  // The search as the next ask sees it: search() told a fantasy at the point of every trial not
  // complete. A failed point of a round leaves search()'s round open for good (its level stays, and
  // the asks refine on this copy), so what a user is shown of the search's progress comes from
  // here. Nothing before the search is built.
  std::optional<BranchAndBound> search_as_asked(const std::vector<Trial>& trials) const;
  const FixedKernelRefit& model() const { return refit_; }
  // The refits so far: after `at` tells, the search was rebased on these hyperparameters and
  // standardisation.
  struct Refit {
    std::size_t at = 0;
    GpHyperparameters hyperparameters;
    Standardization standardization;
    ValueFloor floor;  // the values told after it were floored by it (FixedKernelRefit::floor)
    double standardise(double reward) const { return standardise_floored(reward, floor, standardization); }
  };
  const std::vector<Refit>& refits() const { return history_; }
  // The re-run of the best configuration (none before it is proposed), with its outcome in `trials`.
  std::optional<RepeatCheck> repeat_check(const std::vector<Trial>& trials) const;
  // The repeat check's description when the two results differ.
  std::optional<std::string> warning(const std::vector<Trial>& trials) const override;

 private:
  BranchAndBoundOptions search_options(std::size_t dim) const;
  void rebuild(const StrategyContext& context);
  void refresh_if_due(const StrategyContext& context);
  double raw_reward(const StrategyContext& context, std::uint64_t id) const;
  double value_of(const StrategyContext& context, std::uint64_t id) const;  // standardised reward
  void rebase(BranchAndBound& search, const StrategyContext& context, const Refit& refit) const;
  std::optional<Proposal> propose_repeat(const StrategyContext& context, bool stopping);

  BnbStrategyOptions options_;
  std::map<std::uint64_t, Eigen::VectorXd> points_;  // trial id -> lattice point
  std::vector<Record> records_;                      // the search's tells, in order
  std::optional<BranchAndBound> search_;
  std::vector<Refit> history_;
  FixedKernelRefit refit_;
  struct Repeat {
    std::uint64_t original = 0, trial = 0;
  };
  std::optional<Repeat> repeat_;
};

YAML::Node to_yaml(const BnbStrategyOptions& options);
BnbStrategyOptions bnb_strategy_options_from_yaml(const YAML::Node& node);

}  // namespace tune
