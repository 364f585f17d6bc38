#pragma once
// How a resolution level below the top relates to the full-resolution objective f under a GP's
// fitted hyperparameters: what a user needs to judge whether cheap runs are worth making.

#include <cstddef>

#include "tune/gp/gaussian_process.hpp"

namespace tune {

struct LevelRelation {
  double scale = 1.0;              // rho: the level sees rho f (Kennedy and O'Hagan's AR(1) scale)
  double discrepancy_ratio = 0.0;  // variance of the level's own smooth deviation / f's variance
  double trend_sd = 0.0;           // sd of the level's linear tilt over the cube / f's sd
  double noise_sd = 0.0;           // sd of one run's noise, in the objective's units
  // Correlation of one run at this level with f at the same configuration, the configuration
  // uniform over the unit cube: rho / sqrt(rho^2 + r + t m / s + noise / s), m = E|x - 1/2|^2 (d / 12
// for d unit inputs), s = f's prior
  // variance (the outputscale); the level's constant offset does not enter.
  double correlation = 1.0;
};

// The relation of offset group (= noise group) `level` to f, for inputs of dimension `dim`.
// Groups the hyperparameters do not cover have scale 1 and no discrepancy, tilt or noise.
LevelRelation level_relation(const GpHyperparameters& hp, const Standardization& st, std::size_t level, std::size_t dim);
// The same for inputs whose trend feature x - 1/2 has mean square `trend_feature_mean_square` over
// the cube (dim / 12 for unit inputs; ModelInputs::trend_feature_mean_square with one-hot ones).
LevelRelation level_relation_over_inputs(const GpHyperparameters& hp, const Standardization& st, std::size_t level,
                                         double trend_feature_mean_square);

}  // namespace tune
