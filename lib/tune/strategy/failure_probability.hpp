#pragma once
// How likely a run at a configuration is to fail (crash, diverge, time out, report no number),
// estimated from the trials that have finished: a kernel-weighted Beta-Bernoulli estimate. Each
// finished trial i is one observation, failed or not, with weight w_i(x) = k(x, x_i) / k(x, x), the
// strategy's kernel correlation at its fitted lengthscales; a prior pseudo-observation of weight 1
// sits at the campaign's smoothed failure share p0 = (failed + 1/2) / (finished + 1):
//
//   P_fail(x) = (p0 + sum_i w_i(x) [i failed]) / (1 + sum_i w_i(x)).
//
// At a point where all the trials sit, it is the Beta posterior mean of their failure rate; far
// from every trial, the campaign's share. Without a failed trial it is 0 everywhere, and the
// strategies choose exactly as they would without it.
//
// Why: a failed trial carries no value, so a model of the objective alone sees nothing where runs
// fail, and its uncertainty draws every later suggestion there (a 2-D campaign whose quarter
// x > 0.75 diverged ended after 30 failures and 2 results with cmets, 31 and 9 with ei). The
// strategies weigh each candidate by its success probability 1 - P_fail: a failed run improves
// nothing and informs about nothing, so EI x (1 - P_fail) and CMES x (1 - P_fail) are the expected
// improvement and information of the run (its cost is paid either way).
#include <Eigen/Core>
#include <vector>

#include "tune/gp/kernel.hpp"
#include "tune/study/trial.hpp"

namespace tune {

// The reward a failed run's fantasy is capped at when its neighbourhood fails more often than not
// (FailureProbability::fails_here): the median reward in the model (the (n/2 + 1)-th best; 0
// without one). At its posterior mean, a failed configuration the model expected to beat the
// incumbent kept its expected improvement, and ei proposed it again and again (20 failing trials
// within 1e-9 of one point). Capped at the worst reward instead, the cliff it made next to an
// optimum at the edge of the failing region kept ucb and cmets from it (best 2e-3 against 4e-8).
// Capped whatever the neighbourhood, a run that failed by chance near the optimum made the
// optimum look mediocre: with 20% of runs failing at random, ei's median regret on Hartmann-6
// after 40 results went to 0.86 (0.155 with this rule, 0.092 before failures were handled at all;
// tests/behaviour/failure_region_test.cpp).
double failed_run_ceiling(std::vector<double> rewards);

class FailureProbability {
 public:
  // Trials of any level count; pending ones do not. The kernel gives the correlation (its
  // outputscale is divided out).
  FailureProbability(const std::vector<Trial>& trials, const Kernel& kernel);

  bool any_failure() const { return failed_count_ > 0; }
  double prior() const { return prior_; }
  double failure(const Eigen::Ref<const Eigen::VectorXd>& unit) const;
  double success(const Eigen::Ref<const Eigen::VectorXd>& unit) const { return 1.0 - failure(unit); }
  // Whether runs at `unit` fail more often than not: the failure is the configuration's, not chance.
  bool fails_here(const Eigen::Ref<const Eigen::VectorXd>& unit) const { return failure(unit) > 0.5; }

 private:
  Kernel kernel_;
  Eigen::MatrixXd points_;  // finished trials' points, one per column
  Eigen::VectorXd failed_;  // 1 where the trial failed, 0 where it completed
  std::size_t failed_count_ = 0;
  double prior_ = 0.0;
};

}  // namespace tune
