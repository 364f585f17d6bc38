#pragma once
// A monotone warping of the rewards before a GP models them, chosen by the GP's own marginal
// likelihood (the Jacobian included, so warpings are compared as densities of the same raw data).
//
// Why: a GP on the raw values of an objective whose range spans decades (Rosenbrock on [-5,10]^4:
// 0 .. 2.7e6) spends its variance on the few huge values; the region that matters, near the best,
// is a flat plateau to it, and EI there is driven by noise. Modelling the log of the gap to the best
// value resolves that region. The same happens, milder, with an accuracy whose failing
// configurations score 10% while the good ones differ in the third digit. A fixed log would hurt
// smooth, unskewed objectives (and needs a known lower bound), so the warping is a family that
// contains the identity, and the data pick the member. (ei, Rosenbrock-4, median regret at 50
// evaluations over 20 seeds: 319 on the raw values, 6.0 with the fitted warping.)
//
// The family (rewards y are maximised; gap-based Box-Cox):
//   d(y) = (reference - y) / scale + shift        reference = best reward at the fit, scale > 0
//   z(y) = -((d^lambda - 1) / lambda)              (-log d at lambda = 0)
// z increases with y. lambda = 1 is an affine map, i.e. the plain GP after standardisation; lambda
// -> 0 with a small shift is the log of the gap to the best, which stretches the values near the
// best and squeezes the bad tail. The shift (in units of scale) sets how far the stretching goes:
// the best point sits at d = shift. A reward above the reference (a new best between refits) lies
// below d = shift, where z continues linearly with the slope it has at d = shift, so every finite
// reward has a finite, monotone image.
//
// Maximisation and minimisation, and negative values: the transform acts on rewards (the objective
// negated for minimisation) and only through differences reference - y, so the sign and offset of
// the objective do not matter, and it is invariant to rescaling the objective (scale is the median
// gap to the best).
#include <limits>
#include <string>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/observation.hpp"
#include "tune/gp/value_floor.hpp"

namespace tune {

enum class OutputTransformKind {
  none,       // the GP sees the rewards (after the affine standardisation only)
  automatic,  // "auto": lambda in {0, 1/4, 1/2, 3/4} and shift chosen by marginal likelihood, or the identity
  log,        // lambda = 0, shift chosen by marginal likelihood
};

const char* to_string(OutputTransformKind kind);
OutputTransformKind output_transform_kind_from_string(const std::string& name);  // throws std::invalid_argument

struct OutputTransform {
  bool active = false;  // false: no warping (the floor still applies)
  double reference = 0.0;
  double scale = 1.0;
  double shift = 1.0;
  double lambda = 1.0;
  // Applied before any warping (value_floor.hpp: a diverged run told as 1e30).
  ValueFloor floor;

  // Whether the transform changes any reward (a warping or a floor).
  bool changes_values() const { return active || floor.exists(); }
  double operator()(double reward) const;
  // The reward whose transform is z (for reporting a model value in the objective's units).
  double inverse(double z) const;
  // log dz/dy at a reward (the warping's log-Jacobian, at the floor for a reward below it; 0 without
  // a warping). The floor is not a density transform: a floored reward is data, not a choice.
  double log_derivative(double reward) const;
};

// Log density of the raw values under "standardise(T(y)) ~ GP(hp)": the GP log marginal likelihood
// of the standardised transformed values plus the log-Jacobian of y -> standardised z (including
// the division by z's sample standard deviation). Comparable across transforms of the same data.
double transformed_log_likelihood(const std::vector<Observation>& observations, const OutputTransform& transform,
                                  const GpHyperparameters& hyperparameters);

// The member of the family with the highest transformed_log_likelihood under hyperparameters, on a
// grid of lambda and shift (the identity among the candidates for `automatic`), of the rewards with
// next_value_floor's floor under them (which the result carries; previous_floor: the floor of the
// transform this one replaces). `none`: the identity, and no floor (the GP sees the rewards as
// told). Fewer than 3 values: no warping.
OutputTransform fit_output_transform(const std::vector<Observation>& observations, OutputTransformKind kind,
                                     const GpHyperparameters& hyperparameters, const ValueFloor& previous_floor = {});

// The observations with their values replaced by transform(value).
std::vector<Observation> transformed(std::vector<Observation> observations, const OutputTransform& transform);

}  // namespace tune
