#pragma once
// The few points of many with the highest lower confidence bound, mean - kappa sd: where a
// recommendation starts its local search.
#include <Eigen/Core>
#include <utility>
#include <vector>

#include "tune/bandit/acquisition.hpp"
#include "tune/gp/gaussian_process.hpp"

namespace tune {

// The `count` columns of X with the highest lower_bound.score(mean, variance) (a UCB with
// sqrt_beta = -kappa <= 0), as (score, column), best first, ties to the lower column: what a score
// of every column finds. The mean bounds the score from above, so the variance, an O(n^2) solve per
// point, is computed in decreasing order of the mean, a block of points at a time, and only while a
// point can still enter the best `count`: with a solve at every full run, cmets's recommendation
// took 0.7 s at 2000 trials. Throws if sqrt_beta > 0 (the mean would not bound the score).
std::vector<std::pair<double, Eigen::Index>> best_lower_bounds(const GaussianProcess& gp, const Eigen::MatrixXd& X,
                                                               const Acquisition& lower_bound, std::size_t count);

}  // namespace tune
