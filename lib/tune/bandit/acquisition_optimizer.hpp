#pragma once
// Maximises an acquisition over the unit cube: a candidate set (the GP's tracked points, or else a
// fresh shifted Sobol set) plus fresh perturbations of the best observed points, then L-BFGS (NLopt,
// analytic gradients, box [0,1]^d) from the best few. Every point is passed through `snap` before it is
// scored, so discrete parameters are scored where they will actually be evaluated. Deterministic for
// a given Rng state.
#include <Eigen/Core>
#include <functional>
#include <vector>

#include "tune/bandit/acquisition.hpp"
#include "tune/gp/gaussian_process.hpp"
#include "tune/random/rng.hpp"
#include "tune/space/model_inputs.hpp"

namespace tune {

struct AcquisitionOptimizerOptions {
  std::size_t candidates = 0;          // 0: 100 d, clamped to [256, 1024] (tracked + perturbations)
  std::size_t local_starts = 3;        // L-BFGS refinements from the best candidates
  std::size_t local_max_evaluations = 30;
  double perturbation_fraction = 0.125;  // share of candidates drawn around the best observed points
  double perturbation_sd = 0.05;

  std::size_t candidate_count(std::size_t dim) const;
};

struct ScoredPoint {
  Eigen::VectorXd x;  // snapped
  double score = 0.0;
  double variance = 0.0;  // posterior variance of f at x (units of the observed values)
};

using SnapFunction = std::function<Eigen::VectorXd(const Eigen::VectorXd&)>;

// All scored points, best first (ties keep candidate order). `anchors` are points around which
// perturbation candidates are drawn (e.g. the best observed), may be empty. With `inputs`, the GP's
// inputs are inputs(x) of the unit points x (its tracked points too), and the points are searched and
// returned in the unit cube; without, the GP works on the unit points themselves.
std::vector<ScoredPoint> rank_acquisition(const GaussianProcess& gp, const Acquisition& acquisition,
                                          const SnapFunction& snap, const std::vector<Eigen::VectorXd>& anchors,
                                          const AcquisitionOptimizerOptions& options, Rng& rng,
                                          const ModelInputs* inputs = nullptr);

// L-BFGS on the acquisition from `start` within the box [lower, upper] (a sub-box of the unit cube),
// at most max_evaluations evaluations; the result is snapped and scored at the snapped point. With
// `inputs`, as rank_acquisition's: the GP's inputs are inputs(x) of the unit points searched.
ScoredPoint refine_within(const GaussianProcess& gp, const Acquisition& acquisition, const SnapFunction& snap,
                          const Eigen::VectorXd& start, const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                          std::size_t max_evaluations, const ModelInputs* inputs = nullptr);

}  // namespace tune
