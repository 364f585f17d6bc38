#pragma once
// A floor under the rewards a GP models, so that a diverged run reported as a huge value does not
// take over the model.
//
// Why: a training script whose loss blows up often prints 1e10 or 1e30 rather than nan, and tune
// records it as a result. One such value sets the standardisation's scale (every other value is
// then ~0 to the GP) and drags the hyperparameter fit: on bench/diverged_runs, with the worst 15%
// of the box reporting 1e30, ei's median regret at 50 evaluations went from 5.9e-7 to 0.17 on
// Hartmann-3 and from 5.2e-5 to 0.033 on Branin (20 seeds).
//
// The rule (rewards are maximised): a reward more than kValueFloorSds robust standard deviations
// below the median (the robust sd: 1.4826 times the median absolute deviation) is out of scale,
// and is modelled as the worst reward that is not (winsorising). So the model's range stays the
// objective's own, and a diverged run reads as "as bad as the worst ordinary run".
// - The median and the MAD ignore up to half the values: a space where many configurations
//   diverge keeps a fence set by the others.
// - 100 sds, far beyond outlier labelling's 3.5: the fence is for values out of scale, and an
//   objective's own tail must not reach it. With 10, ordinary values of Forrester's and Branin's
//   steep edges were floored on the multi-fidelity benchmark, which moved every cmets run.
// - The fence never rises: a search concentrates its samples near the optimum, so the MAD of what
//   it has run shrinks as it converges, and a fence recomputed from it would close in on the
//   objective's own range; held, it stays where the early samples put it (ei, ucb and cmes start
//   with a space-filling design; for cmets see next_level_floors).
// - Fewer than kValueFloorMinCount values, or a MAD of 0 (more than half the values tie) before a
//   fence exists: none.
#include <limits>
#include <vector>

#include "tune/gp/observation.hpp"

namespace tune {

inline constexpr double kValueFloorSds = 100.0;
inline constexpr std::size_t kValueFloorMinCount = 5;

struct ValueFloor {
  // Rewards below `fence` are modelled as `value` (the worst reward at or above the fence when it
  // was set). -inf: no floor.
  double fence = -std::numeric_limits<double>::infinity();
  double value = -std::numeric_limits<double>::infinity();

  bool exists() const { return fence > -std::numeric_limits<double>::infinity(); }
  double operator()(double reward) const { return reward < fence ? value : reward; }
  bool operator==(const ValueFloor&) const = default;
};

// The floor after a refit with these rewards (all of them, as told), given the one before it; and
// the same for observations' values.
ValueFloor next_value_floor(const ValueFloor& previous, std::vector<double> rewards);
ValueFloor next_value_floor(const ValueFloor& previous, const std::vector<Observation>& observations);

// The same for a model of several levels (resolutions) with one scale: each level's fence lies
// kValueFloorSds robust sds below its own median, the sd that of the level whose values spread
// widest. Why: cmets runs its full-resolution trials in the deepest cells only, near the optimum,
// so the top level's own spread is that of a small neighbourhood (on Currin its first five full
// runs read 13.70-13.79, and a fence from them floored ordinary runs of 10), while the cheap
// levels' runs cover the space; pooling the deviations would not do, since the clustered level
// can hold half of them. A level with fewer than kValueFloorMinCount values gets none.
std::vector<ValueFloor> next_level_floors(const std::vector<ValueFloor>& previous,
                                          const std::vector<std::vector<double>>& rewards_by_level);

}  // namespace tune
