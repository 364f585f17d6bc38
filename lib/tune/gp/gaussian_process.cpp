#include "tune/gp/gaussian_process.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tune {

std::vector<Kernel> GpHyperparameters::make_discrepancy_kernels() const {
  std::vector<Kernel> kernels;
  for (double m : discrepancy_lengthscale_factors) kernels.emplace_back(kernel, lengthscales * m, outputscale);
  return kernels;
}

GaussianProcess::GaussianProcess(std::size_t dim, GpHyperparameters hyperparameters,
                                 Standardization standardization)
    : dim_(dim) {
  reset(std::move(hyperparameters), standardization);
}

double GaussianProcess::noise_variance(std::size_t group) const {
  if (group >= hp_.noise_variances.size())
    throw std::out_of_range("GP: noise group " + std::to_string(group) + " has no noise variance");
  return hp_.noise_variances[group] * standardization_.scale * standardization_.scale;
}

void GaussianProcess::reset(GpHyperparameters hyperparameters, Standardization standardization) {
  if (tail_attached_) throw std::logic_error("GP: reset() with a fantasy tail attached");
  if (static_cast<std::size_t>(hyperparameters.lengthscales.size()) != dim_)
    throw std::invalid_argument("GP: " + std::to_string(hyperparameters.lengthscales.size()) +
                                " lengthscales for a " + std::to_string(dim_) + "-dimensional input");
  if (hyperparameters.noise_variances.empty())
    throw std::invalid_argument("GP: at least one noise variance is needed");
  for (double v : hyperparameters.noise_variances)
    if (!(v > 0) || !std::isfinite(v)) throw std::invalid_argument("GP: noise variances must be positive");
  if (!(hyperparameters.offset_variance >= 0) || !std::isfinite(hyperparameters.offset_variance))
    throw std::invalid_argument("GP: the offset variance must be finite and >= 0");
  for (double r : hyperparameters.discrepancy_ratios)
    if (!(r >= 0) || !std::isfinite(r)) throw std::invalid_argument("GP: discrepancy ratios must be finite and >= 0");
  for (double rho : hyperparameters.group_scales)
    if (!(rho > 0) || !std::isfinite(rho)) throw std::invalid_argument("GP: group scales must be finite and > 0");
  for (double m : hyperparameters.discrepancy_lengthscale_factors)
    if (!(m > 0) || !std::isfinite(m))
      throw std::invalid_argument("GP: discrepancy lengthscale factors must be finite and > 0");
  for (double t : hyperparameters.trend_variances)
    if (!(t >= 0) || !std::isfinite(t)) throw std::invalid_argument("GP: trend variances must be finite and >= 0");
  if (!(standardization.scale > 0) || !std::isfinite(standardization.scale) ||
      !std::isfinite(standardization.mean))
    throw std::invalid_argument("GP: standardisation scale must be positive and finite");
  for (const Observation& o : observations_)
    if (o.noise_group >= hyperparameters.noise_variances.size())
      throw std::out_of_range("GP: the model holds observations in noise group " + std::to_string(o.noise_group) +
                              " but the new hyperparameters have " +
                              std::to_string(hyperparameters.noise_variances.size()) + " noise variance(s)");
  hp_ = std::move(hyperparameters);
  standardization_ = standardization;
  ++tail_epoch_;  // the kept fantasy block was made with the old kernel
  kernel_ = hp_.make_kernel();
  discrepancy_kernels_ = hp_.make_discrepancy_kernels();
  n_ = 0;
  append_rows(observations_.size());
  update_weights();
  if (tracking()) track(std::move(tracked_points_));
  std::vector<std::size_t> live;
  for (std::size_t slot = 0; slot < targets_.size(); ++slot)
    if (targets_[slot].live) live.push_back(slot);
  fill_target_columns(live);
}

void GaussianProcess::check(const Observation& o) const {
  if (static_cast<std::size_t>(location(o.query).size()) != dim_)
    throw std::invalid_argument("GP: observation of the wrong dimension");
  if (!std::isfinite(o.value)) throw std::invalid_argument("GP: non-finite observation");
  if (o.noise_group >= hp_.noise_variances.size())
    throw std::out_of_range("GP: observation in noise group " + std::to_string(o.noise_group) +
                            " which has no noise variance");
}

void GaussianProcess::add(Observation observation) {
  std::vector<Observation> one;
  one.push_back(std::move(observation));
  add(std::move(one));
}

void GaussianProcess::add(std::vector<Observation> observations) {
  // Validate everything first so that a bad element leaves the model unchanged.
  for (const Observation& o : observations) check(o);
  const std::size_t first = n_;
  for (Observation& o : observations) observations_.push_back(std::move(o));
  // A few rows one at a time; many (a model built at once) by panels, to the same bits.
  if (observations.size() < kBlockedRowsFrom) {
    for (std::size_t i = first; i < observations_.size(); ++i) append_row(observations_[i]);
  } else {
    append_rows(observations.size());
  }
  for (std::size_t i = first; i < n_; ++i) {
    if (tracking()) {
      append_tracked_row(i);
      accumulate_tracked_row(i);  // O(|X|): the summaries only gain this row's terms
    }
    append_target_row(i);
  }
  update_weights();
}

void GaussianProcess::truncate(std::size_t n) {
  if (tail_attached_ && n <= tail_begin_) tail_attached_ = false;
  if (n < tail_.covered) ++tail_epoch_;  // observations the kept fantasy block was made from are gone
  if (n >= n_) return;
  observations_.resize(n);
  n_ = n;
  update_weights();
  if (tracking()) refresh_tracked_summaries();
}

void GaussianProcess::track(Eigen::MatrixXd X) {
  if (tail_attached_) throw std::logic_error("GP: track() with a fantasy tail attached");
  tail_.point_rows = 0;  // the kept fantasy block's residuals were for the old points
  tail_.point_covered = 0;
  if (static_cast<std::size_t>(X.rows()) != dim_ && X.cols() > 0)
    throw std::invalid_argument("GP: tracked points of the wrong dimension");
  tracked_points_ = std::move(X);
  tracked_prior_std_.resize(tracked_points_.cols());
  for (Eigen::Index j = 0; j < tracked_points_.cols(); ++j)
    tracked_prior_std_(j) = kernel_(tracked_points_.col(j), tracked_points_.col(j));
  tracked_V_.resize(L_.rows(), tracked_points_.cols());
  for (std::size_t i = 0; i < n_; ++i) append_tracked_row(i);
  refresh_tracked_summaries();
}

void GaussianProcess::append_tracked_row(std::size_t row) {
  // Row i of L^{-1} K(D, X): (k_i(X) - L[i, :i] V[:i, :]) / L[i, i], forward substitution one row
  // at a time, exactly as an append computes it.
  const Eigen::Index i = static_cast<Eigen::Index>(row);
  const Eigen::Index m = tracked_points_.cols();
  if (tracked_V_.rows() < L_.rows()) {
    Eigen::MatrixXd grown(L_.rows(), m);
    grown.topRows(i) = tracked_V_.topRows(i);
    tracked_V_.swap(grown);
  }
  const Query& q = observations_[row].query;
  const double rho = group_scale(hp_.group_scales, observations_[row]);
  Eigen::RowVectorXd k(m);
  for (Eigen::Index j = 0; j < m; ++j) k(j) = rho * covariance(kernel_, q, tracked_points_.col(j));
  if (i > 0) k.noalias() -= L_.row(i).head(i) * tracked_V_.topRows(i);
  tracked_V_.row(i) = k / L_(i, i);
}

void GaussianProcess::refresh_tracked_summaries() {
  // Sums over the rows of V in row order, exactly as accumulate_tracked_row builds them one add at
  // a time, so the summaries have the same bits whichever way the model was built.
  const Eigen::Index m = tracked_points_.cols();
  tracked_mean_std_.setZero(m);
  tracked_sumsq_std_.setZero(m);
  for (std::size_t i = 0; i < n_; ++i) accumulate_tracked_row(i);
}

void GaussianProcess::accumulate_tracked_row(std::size_t row) {
  const Eigen::Index i = static_cast<Eigen::Index>(row);
  tracked_mean_std_ += a_(i) * tracked_V_.row(i).transpose();
  tracked_sumsq_std_ += tracked_V_.row(i).transpose().cwiseAbs2();
}

void GaussianProcess::tracked_prediction(Eigen::VectorXd& mean, Eigen::VectorXd& variance) const {
  const double s = standardization_.scale;
  mean = (tracked_mean_std_.array() * s + standardization_.mean).matrix();
  variance = ((tracked_prior_std_ - tracked_sumsq_std_).cwiseMax(0.0) * (s * s)).eval();
}

void GaussianProcess::predict_tracked_and(const Eigen::MatrixXd& X, Eigen::VectorXd& mean,
                                          Eigen::VectorXd& variance) const {
  Eigen::VectorXd tracked_mean, tracked_variance, x_mean, x_variance;
  tracked_prediction(tracked_mean, tracked_variance);
  predict(X, x_mean, x_variance);
  mean.resize(tracked_mean.size() + x_mean.size());
  variance.resize(mean.size());
  mean << tracked_mean, x_mean;
  variance << tracked_variance, x_variance;
}

void GaussianProcess::reserve_rows(Eigen::Index rows) {
  // Capacity grows geometrically so that appends stay amortised O(n^2).
  if (rows <= L_.rows()) return;
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  Eigen::Index capacity = std::max<Eigen::Index>(16, 2 * L_.rows());
  while (capacity < rows) capacity *= 2;
  Eigen::MatrixXd grown = Eigen::MatrixXd::Zero(capacity, capacity);
  grown.topLeftCorner(n, n) = L_.topLeftCorner(n, n);
  L_.swap(grown);
  Eigen::VectorXd grown_a = Eigen::VectorXd::Zero(capacity);
  grown_a.head(n) = a_.head(n);
  a_.swap(grown_a);
}

void GaussianProcess::append_row(const Observation& o) {
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  reserve_rows(n + 1);
  Eigen::VectorXd c = covariances_with(o);
  const double noise = hp_.noise_variances[o.noise_group];
  // l = L^{-1} c; the new pivot is the predictive variance of this observation given the others,
  // which is at least the noise variance: clamp round-off below it.
  if (n > 0) L_.topLeftCorner(n, n).triangularView<Eigen::Lower>().solveInPlace(c);
  const double s2 = observation_covariance(kernel_, groups(), o, o) + noise - c.squaredNorm();
  const double s = std::sqrt(std::max(s2, noise));
  L_.row(n).head(n) = c.transpose();
  L_(n, n) = s;
  a_(n) = (standardised(o.value) - c.dot(a_.head(n))) / s;
  ++n_;
}

double GaussianProcess::cross_covariance(std::size_t i, const Eigen::Ref<const Eigen::VectorXd>& x) const {
  return group_scale(hp_.group_scales, observations_[i]) * covariance(kernel_, observations_[i].query, x);
}

void GaussianProcess::update_weights() {
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  weights_ = a_.head(n);
  if (n > 0) L_.topLeftCorner(n, n).triangularView<Eigen::Lower>().transpose().solveInPlace(weights_);
}

Eigen::VectorXd GaussianProcess::leave_one_out_z(const std::vector<std::size_t>& rows) const {
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  Eigen::VectorXd z(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto i = static_cast<Eigen::Index>(rows[k]);
    if (i >= n) throw std::invalid_argument("leave_one_out_z: no observation " + std::to_string(rows[k]));
    // Column i of L^-1 is zero above row i: solve L[i:, i:] w = e_1, and [K^-1]_ii = |w|^2.
    Eigen::VectorXd w = Eigen::VectorXd::Zero(n - i);
    w(0) = 1.0;
    L_.block(i, i, n - i, n - i).triangularView<Eigen::Lower>().solveInPlace(w);
    z(static_cast<Eigen::Index>(k)) = weights_(i) / w.norm();
  }
  return z;
}

double GaussianProcess::leave_one_out_sd_scale(const std::vector<std::size_t>& rows) const {
  if (rows.size() < 3) return 1.0;
  const Eigen::VectorXd z = leave_one_out_z(rows);
  return std::max(1.0, std::sqrt(z.squaredNorm() / static_cast<double>(z.size())));
}

Prediction GaussianProcess::predict(const Eigen::Ref<const Eigen::VectorXd>& x) const {
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  Eigen::VectorXd c(n);
  for (Eigen::Index i = 0; i < n; ++i) c(i) = cross_covariance(static_cast<std::size_t>(i), x);
  const double mean_std = c.dot(weights_);
  if (n > 0) L_.topLeftCorner(n, n).triangularView<Eigen::Lower>().solveInPlace(c);
  const double var_std = std::max(0.0, kernel_(x, x) - c.squaredNorm());
  const double s = standardization_.scale;
  return {standardization_.mean + s * mean_std, s * s * var_std};
}

Prediction GaussianProcess::predict(const Observation& target) const {
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  Eigen::VectorXd c = covariances_with(target);
  const double mean_std = c.dot(weights_);
  if (n > 0) L_.topLeftCorner(n, n).triangularView<Eigen::Lower>().solveInPlace(c);
  const double prior = observation_covariance(kernel_, groups(), target, target);
  const double var_std = std::max(0.0, prior - c.squaredNorm());
  const double s = standardization_.scale;
  return {standardization_.mean + s * mean_std, s * s * var_std};
}

Eigen::VectorXd GaussianProcess::covariances_with(const Observation& target) const {
  if (static_cast<std::size_t>(location(target.query).size()) != dim_)
    throw std::invalid_argument("GP: prediction target of the wrong dimension");
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  Eigen::VectorXd c(n);
  for (Eigen::Index i = 0; i < n; ++i)
    c(i) = observation_covariance(kernel_, groups(), observations_[static_cast<std::size_t>(i)], target);
  return c;
}

double GaussianProcess::predict_mean(const Observation& target) const {
  return standardization_.mean + standardization_.scale * covariances_with(target).dot(weights_);
}

void GaussianProcess::predict_pair(const Observation& a, const Observation& b, Eigen::Vector2d& mean,
                                   Eigen::Matrix2d& covariance) const {
  if (static_cast<std::size_t>(location(a.query).size()) != dim_ || static_cast<std::size_t>(location(b.query).size()) != dim_)
    throw std::invalid_argument("GP: prediction target of the wrong dimension");
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  Eigen::MatrixXd c(n, 2);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Observation& o = observations_[static_cast<std::size_t>(i)];
    c(i, 0) = observation_covariance(kernel_, groups(), o, a);
    c(i, 1) = observation_covariance(kernel_, groups(), o, b);
  }
  const double s = standardization_.scale;
  mean = Eigen::Vector2d::Constant(standardization_.mean) + s * (c.transpose() * weights_);
  if (n > 0) L_.topLeftCorner(n, n).triangularView<Eigen::Lower>().solveInPlace(c);
  Eigen::Matrix2d prior;
  prior(0, 0) = observation_covariance(kernel_, groups(), a, a);
  prior(1, 1) = observation_covariance(kernel_, groups(), b, b);
  prior(0, 1) = prior(1, 0) = observation_covariance(kernel_, groups(), a, b);
  covariance = s * s * (prior - c.transpose() * c);
  covariance(0, 0) = std::max(0.0, covariance(0, 0));
  covariance(1, 1) = std::max(0.0, covariance(1, 1));
}

PredictionWithGradient GaussianProcess::predict_with_gradient(const Eigen::Ref<const Eigen::VectorXd>& x) const {
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  const Eigen::Index d = static_cast<Eigen::Index>(dim_);
  Eigen::VectorXd c(n);
  Eigen::MatrixXd dc(d, n);  // column i: d c_i / d x
  for (Eigen::Index i = 0; i < n; ++i) {
    const Query& q = observations_[static_cast<std::size_t>(i)].query;
    const double rho = group_scale(hp_.group_scales, observations_[static_cast<std::size_t>(i)]);
    c(i) = rho * covariance(kernel_, q, x);
    dc.col(i) = rho * covariance_gradient_x(kernel_, q, x);
  }
  PredictionWithGradient out;
  const double s = standardization_.scale;
  out.mean = standardization_.mean + s * c.dot(weights_);
  out.mean_gradient = s * (dc * weights_);
  // var = k(x,x) - v'v with v = L^{-1} c; d var/dx = -2 dc (L^{-T} v). k(x,x) is constant for a
  // stationary kernel.
  Eigen::VectorXd v = c;
  if (n > 0) L_.topLeftCorner(n, n).triangularView<Eigen::Lower>().solveInPlace(v);
  const double var_std = kernel_(x, x) - v.squaredNorm();
  if (n > 0) L_.topLeftCorner(n, n).triangularView<Eigen::Lower>().transpose().solveInPlace(v);
  out.variance = s * s * std::max(0.0, var_std);
  out.variance_gradient = (var_std > 0.0 ? -2.0 * s * s : 0.0) * (dc * v);
  return out;
}

Eigen::MatrixXd GaussianProcess::cross_covariances(const Eigen::MatrixXd& X) const {
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  Eigen::MatrixXd C(n, X.cols());
  for (Eigen::Index j = 0; j < X.cols(); ++j)
    for (Eigen::Index i = 0; i < n; ++i) C(i, j) = cross_covariance(static_cast<std::size_t>(i), X.col(j));
  return C;
}

Eigen::VectorXd GaussianProcess::means_of(const Eigen::MatrixXd& C) const {
  return ((C.transpose() * weights_).array() * standardization_.scale + standardization_.mean).matrix();
}

Eigen::VectorXd GaussianProcess::variances_of(const Eigen::MatrixXd& X, Eigen::MatrixXd C) const {
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  if (n > 0) L_.topLeftCorner(n, n).triangularView<Eigen::Lower>().solveInPlace(C);
  const double s2 = standardization_.scale * standardization_.scale;
  Eigen::VectorXd variance(X.cols());
  for (Eigen::Index j = 0; j < X.cols(); ++j)
    variance(j) = s2 * std::max(0.0, kernel_(X.col(j), X.col(j)) - C.col(j).squaredNorm());
  return variance;
}

Eigen::VectorXd GaussianProcess::predict_mean(const Eigen::MatrixXd& X) const { return means_of(cross_covariances(X)); }

Eigen::VectorXd GaussianProcess::predict_variance(const Eigen::MatrixXd& X) const {
  return variances_of(X, cross_covariances(X));
}

void GaussianProcess::predict(const Eigen::MatrixXd& X, Eigen::VectorXd& mean, Eigen::VectorXd& variance) const {
  Eigen::MatrixXd C = cross_covariances(X);
  mean = means_of(C);
  variance = variances_of(X, std::move(C));
}

}  // namespace tune

namespace tune {

Eigen::MatrixXd GaussianProcess::posterior_covariance(const Eigen::MatrixXd& X) const {
  if (static_cast<std::size_t>(X.rows()) != dim_ && X.cols() > 0)
    throw std::invalid_argument("GP: posterior_covariance at points of the wrong dimension");
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  const Eigen::Index m = X.cols();
  Eigen::MatrixXd V(n, m);
  for (Eigen::Index j = 0; j < m; ++j)
    for (Eigen::Index i = 0; i < n; ++i)
      V(i, j) = cross_covariance(static_cast<std::size_t>(i), X.col(j));
  if (n > 0) L_.topLeftCorner(n, n).triangularView<Eigen::Lower>().solveInPlace(V);
  const double s2 = standardization_.scale * standardization_.scale;
  Eigen::MatrixXd cov(m, m);
  for (Eigen::Index j = 0; j < m; ++j) {
    // Diagonal exactly as predict() forms it (k(x, x) - |v|^2, clamped at 0); the off-diagonal
    // entries are computed once and mirrored so that the result is exactly symmetric.
    cov(j, j) = s2 * std::max(0.0, kernel_(X.col(j), X.col(j)) - V.col(j).squaredNorm());
    for (Eigen::Index i = 0; i < j; ++i) {
      cov(i, j) = s2 * (kernel_(X.col(i), X.col(j)) - V.col(i).dot(V.col(j)));
      cov(j, i) = cov(i, j);
    }
  }
  return cov;
}

}  // namespace tune
