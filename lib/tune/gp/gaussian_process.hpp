#pragma once
// Exact GP regression with an incrementally grown Cholesky factor.
//
// The model keeps L = chol(K + diag(noise)) over its observations and a = L^{-1} y_std, where
// y_std are the observed values after the affine standardisation (y - mean) / scale. Adding an
// observation appends one row of L in O(n^2); truncating drops trailing rows (used for fantasies of
// pending trials). A full rebuild replays the appends in order, so a model rebuilt after a save
// and load is bit-identical to the one that grew step by step.
//
// Public quantities (predictions, noise variances) are in the units of the observed values.
#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "tune/gp/kernel.hpp"
#include "tune/gp/observation.hpp"

namespace tune {

struct GpHyperparameters {
  KernelType kernel = KernelType::matern52;
  Eigen::VectorXd lengthscales;  // unit-cube units, one per dimension
  double outputscale = 1.0;      // prior variance of the standardised f
  std::vector<double> noise_variances{1e-2};  // per noise group, standardised units
  // Prior variance of each offset group's constant (Observation::offset_group), standardised
  // units. Not fitted: the owner sets it (e.g. from the spread of the groups' means).
  double offset_variance = 0.0;
  // Per offset group g: the ratio r_g of a discrepancy process's variance to the outputscale. Two
  // observations of the same group covary by (1 + r_g) k instead of k: the group sees f plus its
  // own smooth deviation, shaped like f (same kernel), independent across groups, so a low level
  // that tracks f only loosely (r_g large) is trusted less. Fitted with the kernel when present;
  // empty = no discrepancy (r = 0 for every group).
  std::vector<double> discrepancy_ratios;
  // Per offset group g: the factor m_g by which the discrepancy process's lengthscales exceed f's
  // (Kennedy and O'Hagan's delta has a kernel of its own). m_g > 1: a level deviates from f
  // smoothly, e.g. by a tilt across the cube (Forrester's 10 (x - 1/2)), which a discrepancy shaped
  // like f could only explain as a large rough deviation, trusting the level less everywhere and
  // misplacing f between the runs. Fitted with the kernel when present; empty = 1 for every group.
  std::vector<double> discrepancy_lengthscale_factors;
  // Per offset group g: the factor rho_g by which the group sees f (the AR(1) scale of Kennedy and
  // O'Hagan): an observation of group g is rho_g L f + b_g + delta_g. A cheap level on a different
  // scale than f (half the amplitude, say) is then a close copy of f rather than f plus a large
  // discrepancy. Fitted with the kernel when present; empty = 1 for every group.
  std::vector<double> group_scales;
  // Per offset group g: the prior variance t_g of a linear trend w_g . (x - 1/2), w_g ~ N(0, t_g I),
  // that the group adds to f (standardised units per unit-cube unit): a cheap level tilted against
  // f (Forrester's 10 (x - 1/2), Park's -2 x_1) keeps its shape information without moving f's
  // minimum. Fitted with the kernel when present; empty = no trend.
  std::vector<double> trend_variances;

  Kernel make_kernel() const { return Kernel(kernel, lengthscales, outputscale); }
  // The discrepancy kernel of each group with a lengthscale factor (f's kernel, lengthscales times
  // m_g); groups beyond discrepancy_lengthscale_factors use f's kernel.
  std::vector<Kernel> make_discrepancy_kernels() const;
};

// y_std = (y - mean) / scale.
struct Standardization {
  double mean = 0.0;
  double scale = 1.0;
};

struct Prediction {
  double mean = 0.0;
  double variance = 0.0;  // of the latent f (no observation noise)
};

// Joint posterior of two observations' noise-free values: means and 2 x 2 covariance.
struct PairPrediction {
  Eigen::Vector2d mean = Eigen::Vector2d::Zero();
  Eigen::Matrix2d covariance = Eigen::Matrix2d::Zero();
};

struct PredictionWithGradient {
  double mean = 0.0;
  double variance = 0.0;
  Eigen::VectorXd mean_gradient;
  Eigen::VectorXd variance_gradient;
};

// observation_covariance(kernel, groups, a, b) and group_scale(a) * covariance(kernel, a.query, x),
// bit for bit: where the queries are points, the same operations in the same order (kernel.cpp's
// scaled_sq_distance and of_r2, observation.cpp's group terms) without the query variant's dispatch
// and the Eigen::Ref temporaries of each call; any other query, or a group with a trend or a
// discrepancy kernel of its own, goes to the general functions. The GP evaluates millions of these
// when a model is built at once (a refit, a loaded study's first use: ~20% of its instructions at
// 2000 trials went to the calls' overhead). tests/unit/point_covariance_test.cpp holds them to the bit.
double fast_observation_covariance(const Kernel& kernel, const GroupCovariance& groups, const Observation& a,
                                   const Observation& b);
double fast_cross_covariance(const Kernel& kernel, const std::vector<double>& group_scales, const Observation& a,
                             const double* x);
// The same with its gradient in x (group_scale(a) * covariance_gradient_x(kernel, a.query, x)) written
// to gradient[0, dim): one exponential for both under the squared exponential.
double fast_cross_covariance_with_gradient(const Kernel& kernel, const std::vector<double>& group_scales,
                                          const Observation& a, const Eigen::Ref<const Eigen::VectorXd>& x,
                                          double* gradient);

class GaussianProcess {
 public:
  GaussianProcess() = default;
  GaussianProcess(std::size_t dim, GpHyperparameters hyperparameters, Standardization standardization = {});

  std::size_t dim() const { return dim_; }
  std::size_t size() const { return n_; }
  const GpHyperparameters& hyperparameters() const { return hp_; }
  const Standardization& standardization() const { return standardization_; }
  const Kernel& kernel() const { return kernel_; }
  const std::vector<Observation>& observations() const { return observations_; }

  // Observation noise variance of a group, in the units of the observed values.
  double noise_variance(std::size_t group = 0) const;

  // New hyperparameters and standardisation; refactorises by replaying every observation.
  void reset(GpHyperparameters hyperparameters, Standardization standardization);

  // Throws what add() would throw for this observation (wrong dimension, non-finite value, a noise
  // group without a noise variance).
  void check(const Observation& observation) const;
  void add(Observation observation);
  // The same as adding each in turn (bit for bit), with the weights solved once at the end. All
  // observations are validated first: an invalid one leaves the model unchanged.
  void add(std::vector<Observation> observations);
  // Keep only the first n observations.
  void truncate(std::size_t n);

  Prediction predict(const Eigen::Ref<const Eigen::VectorXd>& x) const;
  // Posterior of an observation's noise-free value: the functional of f plus its group's offset
  // (the value is ignored). Units of the observed values; variance without observation noise.
  Prediction predict(const Observation& target) const;
  // predict(target).mean alone, the same bits, without the O(n^2) solve of its variance (a pending
  // trial's fantasy value).
  double predict_mean(const Observation& target) const;
  // Joint posterior of two observations' noise-free values (as predict(Observation)): their means
  // and the 2 x 2 covariance, same units.
  void predict_pair(const Observation& a, const Observation& b, Eigen::Vector2d& mean, Eigen::Matrix2d& covariance) const;
  PredictionWithGradient predict_with_gradient(const Eigen::Ref<const Eigen::VectorXd>& x) const;
  // Predictions at the columns of X; one blocked triangular solve for all of them.
  void predict(const Eigen::MatrixXd& X, Eigen::VectorXd& mean, Eigen::VectorXd& variance) const;
  // predict(X)'s mean alone, O(n) per column (no solve), and its variance alone: a caller that
  // needs the variance at a few of many points (the best means) pays the solve for those only.
  Eigen::VectorXd predict_mean(const Eigen::MatrixXd& X) const;
  Eigen::VectorXd predict_variance(const Eigen::MatrixXd& X) const;
  // Joint posterior covariance of f at the columns of X (units of the observed values, no
  // observation noise): K(X, X) - V^T V with V = L^{-1} K(D, X). Symmetric; its diagonal is
  // predict()'s variance (clamped at 0 the same way).
  Eigen::MatrixXd posterior_covariance(const Eigen::MatrixXd& X) const;

  // Tracks the posterior at a fixed set of points (columns of X): the rows of V = L^{-1} K(D, X)
  // grow by one per added observation in O(|X| n), so the mean and variance at these points stay
  // current without an O(n^2 |X|) solve per query (digest 4.2, finite candidate set). V is built
  // row by row with the same formula as an append, so it is identical whichever order of adds and
  // track() produced it. Truncation drops rows; reset() rebuilds them.
  void track(Eigen::MatrixXd X);
  bool tracking() const { return tracked_points_.cols() > 0; }
  const Eigen::MatrixXd& tracked_points() const { return tracked_points_; }
  // Mean and variance of f at the tracked points (units of the observed values).
  void tracked_prediction(Eigen::VectorXd& mean, Eigen::VectorXd& variance) const;
  // predict() at [tracked points, columns of X], in that order: the tracked points' posterior as
  // tracked_prediction keeps it (O(1) each), a blocked solve for X only.
  void predict_tracked_and(const Eigen::MatrixXd& X, Eigen::VectorXd& mean, Eigen::VectorXd& variance) const;

  // Tracked targets: observations (a query, maybe an offset group) whose column v = L^{-1} K(D, t)
  // grows by one O(n) row per added observation, so that a strategy that scores the same targets
  // ask after ask (cmets's active nodes at their levels) pays O(n) per target and ask instead of an
  // O(n^2) solve. Each row is the same dot product however the column came about (tracked before or
  // after the observations were added, in any slot), so a model rebuilt on resume predicts them
  // bit for bit as the original did. Slots of untracked targets are reused; reset() rebuilds.
  std::size_t track_target(Observation target);
  // Many at once (the slots in order): the rows of L are read once for all of them, in blocks of
  // targets that stay in cache. Allowed with fantasies on (attach_fantasy_tail, pending rows
  // add()ed after it): every row is the one it would be had the target been tracked before them.
  std::vector<std::size_t> track_targets(std::vector<Observation> targets);
  void untrack_target(std::size_t slot);
  std::size_t tracked_target_count() const { return targets_.size() - free_target_slots_.size(); }
  // predict_pair's joint posterior of two tracked targets (a == b allowed), in O(n).
  PairPrediction predict_tracked_pair(std::size_t a, std::size_t b) const;

  // Fantasies of failed trials kept from ask to ask. Appends `rows` after the observations, each
  // valued at its posterior mean given the rows before it (so it moves no mean) and no higher than
  // caps[k] (units of the observed values; +infinity for no cap). truncate(size() before the call)
  // removes them again, as for any fantasy, but the block they add to the factor is kept: at the
  // next call, when `rows` starts with the same observations and the model has only grown by
  // add() since, only the new observations and new rows are folded into it, O(f n) per observation
  // and O(n^2) per new row for f rows, instead of the O(f n^2 + f n T) of adding f rows afresh at
  // every ask (T tracked targets). Every number of the block is made by one formula whatever the
  // history (each sum runs over the observations in their order), so the result is bit for bit
  // that of a first call on a model rebuilt after a load. Pending trials' fantasies are add()ed
  // after the tail as before. reset() and track() are refused while a tail is on; track_targets()
  // fills a new target's tail rows as this call would have (the same residual, solved against the
  // same factor), so a target tracked with the fantasies on has the column it would have had if
  // tracked before them.
  void attach_fantasy_tail(std::vector<Observation> rows, const std::vector<double>& caps);
  bool fantasy_tail_attached() const { return tail_attached_; }

  // Leave-one-out residuals of the given observations (rows of the model), each divided by its
  // leave-one-out predictive sd (noise included): z_i = [K^-1 y]_i / sqrt([K^-1]_ii) (Rasmussen and
  // Williams 5.12), with the same hyperparameters. For a calibrated model their mean square is
  // about 1. O(sum_i (n - i)^2): one triangular solve per row, from that row on.
  Eigen::VectorXd leave_one_out_z(const std::vector<std::size_t>& rows) const;
  // The factor a recommendation's sd is scaled by so that the model's errors at `rows`, each left
  // out, match its sds: the root mean square of their z when above 1 (the maximum-likelihood scale
  // of the predictive variances given those errors); 1 with fewer than 3 rows.
  double leave_one_out_sd_scale(const std::vector<std::size_t>& rows) const;
  // The Cholesky factor (lower triangle of the top-left size() x size() block) and a = L^{-1} y_std,
  // exposed for tests and diagnostics.
  Eigen::MatrixXd cholesky_factor() const { return L_.topLeftCorner(n_, n_); }
  Eigen::VectorXd whitened_targets() const { return a_.head(n_); }

 private:
  void append_row(const Observation& observation);
  // The rows of the last `count` of observations_ (beyond size()), bit for bit append_row's one
  // after another, a panel of columns at a time for all of them (cholesky_rows.cpp).
  void append_rows(std::size_t count);
  void finish_row(Eigen::Index r);  // append_row's pivot and whitened target of row r
  static constexpr std::size_t kBlockedRowsFrom = 8;  // add() of this many observations uses append_rows
  void reserve_rows(Eigen::Index rows);  // capacity of L and a for this many rows, the valid ones kept
  void append_tracked_row(std::size_t row);
  void check_point(Eigen::Index rows) const;  // std::invalid_argument unless rows == dim()
  void fill_tracked_rows();  // every row [0, size()) of the tracked points', as append_tracked_row's in turn
  void refresh_tracked_summaries();
  void accumulate_tracked_row(std::size_t row);
  void update_weights();
  // Row `row` of every tracked target's column (of `slots` only, when given).
  void append_target_row(std::size_t row, const std::vector<std::size_t>* slots = nullptr);
  struct TrackedTarget;
  // Row i of a target's column, l_row being L's row i left of the diagonal (contiguous).
  void fill_target_row(Eigen::Index i, const Eigen::Map<const Eigen::VectorXd>& l_row, TrackedTarget& t);
  // Rows [from, to) of these targets' columns (rows before `from` already made), in cache-sized
  // blocks (track_targets, reset); to = -1: every row.
  void fill_target_columns(const std::vector<std::size_t>& slots, Eigen::Index from = 0, Eigen::Index to = -1);
  const Eigen::VectorXd& target_column(std::size_t slot) const;
  // Cov(observation i, f(x)): its functional's covariance with x times its group's scale.
  double cross_covariance(std::size_t i, const Eigen::Ref<const Eigen::VectorXd>& x) const;
  Eigen::VectorXd covariances_with(const Observation& target) const;  // K(D, target), its dimension checked
  Eigen::MatrixXd cross_covariances(const Eigen::MatrixXd& X) const;  // K(D, X), n x |X|
  Eigen::VectorXd means_of(const Eigen::MatrixXd& C) const;  // posterior means given C = K(D, X)
  Eigen::VectorXd variances_of(const Eigen::MatrixXd& X, Eigen::MatrixXd C) const;  // and variances
  double standardised(double y) const { return (y - standardization_.mean) / standardization_.scale; }
  GroupCovariance groups() const {
    return {hp_.offset_variance, hp_.discrepancy_ratios, hp_.group_scales, hp_.trend_variances, discrepancy_kernels_};
  }

  std::size_t dim_ = 0;
  GpHyperparameters hp_;
  Standardization standardization_;
  Kernel kernel_;
  std::vector<Kernel> discrepancy_kernels_;
  std::vector<Observation> observations_;
  std::size_t n_ = 0;
  Eigen::MatrixXd L_;       // capacity x capacity; rows [0, n_) are valid
  Eigen::VectorXd a_;       // capacity; [0, n_) valid
  Eigen::VectorXd weights_; // (K + noise)^{-1} y_std = L^{-T} a, size n_
  Eigen::MatrixXd tracked_points_;    // dim x m
  Eigen::MatrixXd tracked_V_;         // capacity x m; rows [0, n_) valid
  Eigen::VectorXd tracked_prior_std_;  // k(x, x) at each tracked point
  Eigen::VectorXd tracked_mean_std_;   // sum_i a_i V_i, standardised units
  Eigen::VectorXd tracked_sumsq_std_;  // sum_i V_i^2; variance = prior - this
  struct TrackedTarget {
    Observation target;
    Eigen::VectorXd v;  // [0, n_) valid
    bool live = false;
    // K(F, t) - C^T v over the observations [0, tail_covered) for the fantasy tail's first
    // tail_residual.size() rows (attach_fantasy_tail), valid while tail_epoch is the model's.
    Eigen::VectorXd tail_residual;
    std::size_t tail_covered = 0;
    std::uint64_t tail_epoch = 0;
  };
  std::vector<TrackedTarget> targets_;
  std::vector<std::size_t> free_target_slots_;
  Eigen::VectorXd row_buffer_;  // row i of L, made contiguous for the targets' dot products

  // The fantasy tail's block (attach_fantasy_tail), in terms of the observations [0, covered):
  // C = L_base^{-1} K(D, F) (row j of L for tail row j, left of the tail), the Schur complement
  // S = K(F, F) - C^T C without noise, and the tracked points' residual K(F, X) - C^T V. Each entry
  // is its kernel value minus the terms of observations 0, 1, ... subtracted one at a time, so it is
  // the same whether it was folded in one observation per ask or all at once after a load.
  struct FantasyTail {
    std::vector<Observation> rows;
    std::size_t covered = 0;
    Eigen::MatrixXd coefficients;     // rows x capacity (column i: observation i's coefficients)
    Eigen::MatrixXd schur;            // rows x rows, lower triangle
    Eigen::MatrixXd point_residuals;  // rows x tracked points
    std::size_t point_rows = 0;       // rows of point_residuals that are valid
    std::size_t point_covered = 0;    // observations folded into them
    std::uint64_t epoch = 0;
    Eigen::MatrixXd factor;  // chol(S + noise) of the attached tail (tail_factor), for targets tracked while on
  };
  void fold_tail_observation(std::size_t i);
  void add_tail_row(const Observation& row);
  void update_tail_point_residuals();
  void update_tail_target_residual(TrackedTarget& t);
  Eigen::MatrixXd tail_factor() const;
  FantasyTail tail_;
  std::uint64_t tail_epoch_ = 1;  // bumped whenever the block no longer applies (reset, a shrunk model)
  bool tail_attached_ = false;
  std::size_t tail_begin_ = 0;
};

// Truncates the model back to the size it had when the guard was made, however the scope ends: the
// fantasies a strategy adds for pending trials never outlive one proposal.
class TruncateOnExit {
 public:
  explicit TruncateOnExit(GaussianProcess& gp) : gp_(gp), size_(gp.size()) {}
  ~TruncateOnExit() { gp_.truncate(size_); }
  TruncateOnExit(const TruncateOnExit&) = delete;
  TruncateOnExit& operator=(const TruncateOnExit&) = delete;

 private:
  GaussianProcess& gp_;
  std::size_t size_;
};

}  // namespace tune
