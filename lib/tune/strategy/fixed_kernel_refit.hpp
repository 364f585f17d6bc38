#pragma once
// Kernel hyperparameters for the strategies whose search objects take the kernel fixed (`gpoo`
// wraps GpooSearch, `bnb` wraps BranchAndBound; both assume a known GP prior).
//
// The scheme: the strategy keeps one set of hyperparameters and one output standardisation, and
// *refreshes* them on a schedule: restandardise the rewards observed so far (their mean and sample
// standard deviation), refit the kernel by MAP (tune::fit_hyperparameters, the same priors and
// bounds as the GP bandit) once there are at least kMinFitPoints observations (before that: the
// default hyperparameters), then rebuild the search object by *replaying* its history under the new
// kernel (the search objects' replay() is exact, so a replay is what a saved study does on load).
// Between refreshes the kernel is fixed, as the papers assume.
//
// Schedule (RefitSchedule {every, growth}, defaults 5 and 0.1): a refresh after each of the first
// `every` observations, then whenever the observations have grown by max(every, growth * n) since
// the last one. {every = 0, growth = 0}: one refresh, at the first observation. Every random draw
// of a fit comes from (study seed, hyperparameter_fit stream, refresh number), so the scheme is
// deterministic and a saved study resumes to the same suggestions.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/hyperparameter_fit.hpp"
#include "tune/gp/value_floor.hpp"
#include "tune/strategy/gp_bandit.hpp"

namespace tune {

// (floor(reward) - mean) / scale: how FixedKernelRefit and bnb's refit history standardise a reward.
inline double standardise_floored(double reward, const ValueFloor& floor, const Standardization& standardization) {
  return (floor(reward) - standardization.mean) / standardization.scale;
}

struct FixedKernelRefit {
  static constexpr std::size_t kMinFitPoints = 3;

  GpHyperparameters hyperparameters;
  Standardization standardization;
  // Set at each refresh from the rewards (value_floor.hpp): a diverged run told as 1e30 is
  // standardised as the worst ordinary reward.
  ValueFloor floor;
  std::size_t refresh_count = 0;
  std::size_t size_at_refresh = 0;

  // Whether a refresh is due with n observations.
  bool due(const RefitSchedule& schedule, std::size_t n) const;

  // Sets the floor from `observations` (raw rewards), restandardises on them floored, and refits.
  // fit_noise = false keeps the noise variance at `fixed_noise` (standardised units; bnb's
  // noise-free objectives).
  void refresh(const std::vector<Observation>& observations, KernelType kernel, std::size_t dim,
               const HyperparameterFitOptions& fit, bool fit_noise, double fixed_noise, std::uint64_t seed);

  // (floor(reward) - mean) / scale and back.
  double standardise(double reward) const { return standardise_floored(reward, floor, standardization); }
  double unstandardise(double value) const { return value * standardization.scale + standardization.mean; }

  Kernel kernel() const { return hyperparameters.make_kernel(); }

  // Written into / read from a strategy's state node (the counters, and the model when refreshed).
  void write(YAML::Node& state) const;
  void read(const YAML::Node& state);
};

}  // namespace tune
