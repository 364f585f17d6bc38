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
#include "tune/space/model_inputs.hpp"
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

// With resolution levels (levels >= 2), a run can also fail because of its level (one epoch is too
// few for the scheduler, a 1% subset has a class missing), whatever the configuration: when every
// cheap run failed, the estimate above was high everywhere and for every level alike, so cmets,
// dividing by cost, kept choosing the cheap level (37 failed cheap runs in a 6 s campaign whose
// crashes took 3 ms). So each level gets a factor T(l) = s_l / max_k s_k, s_l = (completed_l + 1/2)
// / (finished_l + 1) its smoothed success share (1/2 for a level without a finished run, whose T
// is 1), and P_success(x, l) = (1 - P_fail(x)) T(l). A level that failed 16 times of 16 has
// T = 1/34 against an untried level's 1, so a cheap run is chosen only while CMES per expected
// successful run's cost still favours it. P_fail(x) stays the estimate above, from every level:
// discounting a failure by its level's T as well (it says less about where it ran) was measured
// and dropped, because a cheap level also fails more where it explores the failing region: on a
// square whose quarter x > 0.75 fails, cmets then reached its failure budget in 5 of 10 seeds.
class FailureProbability {
 public:
  // Trials of any level count; pending ones do not. The kernel gives the correlation (its
  // outputscale is divided out). `levels`: the number of resolution levels (0 or 1: none). With
  // `inputs`, the kernel's inputs are inputs(unit), and so are the points the members below take.
  FailureProbability(const std::vector<Trial>& trials, const Kernel& kernel, std::size_t levels = 0,
                     const ModelInputs* inputs = nullptr);

  bool any_failure() const { return failed_count_ > 0; }
  double prior() const { return prior_; }
  // The configuration's part: how likely a run at `unit` fails whatever its level.
  double failure(const Eigen::Ref<const Eigen::VectorXd>& unit) const;
  double success(const Eigen::Ref<const Eigen::VectorXd>& unit) const { return 1.0 - failure(unit); }
  // A run at `unit` and `level` (levels above the last count as the last).
  double success(const Eigen::Ref<const Eigen::VectorXd>& unit, std::size_t level) const {
    return success(unit) * level_factor(level);
  }
  double level_factor(std::size_t level) const {
    return level_factors_.empty() ? 1.0 : level_factors_[std::min(level, level_factors_.size() - 1)];
  }
  // Whether runs at `unit` fail more often than not: the failure is the configuration's, not chance.
  bool fails_here(const Eigen::Ref<const Eigen::VectorXd>& unit) const { return failure(unit) > 0.5; }

 private:
  Kernel kernel_;
  Eigen::MatrixXd points_;  // finished trials' points, one per column
  Eigen::VectorXd failed_;  // 1 where the trial failed, 0 where it completed
  std::vector<double> level_factors_;  // T(l); empty without levels
  std::size_t failed_count_ = 0;
  double prior_ = 0.0;
};

}  // namespace tune
