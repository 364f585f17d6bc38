#include "tune/gp/candidate_posterior.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tune {

CandidatePosterior::CandidatePosterior(Kernel kernel, double noise_variance, Eigen::MatrixXd candidates,
                                       double prior_mean)
    : kernel_(std::move(kernel)),
      noise_(noise_variance),
      prior_mean_(prior_mean),
      candidates_(std::move(candidates)) {
  if (!(noise_ > 0) || !std::isfinite(noise_))
    throw std::invalid_argument("CandidatePosterior: noise variance must be positive and finite");
  if (!std::isfinite(prior_mean_)) throw std::invalid_argument("CandidatePosterior: non-finite prior mean");
  if (static_cast<std::size_t>(candidates_.rows()) != kernel_.dim())
    throw std::invalid_argument("CandidatePosterior: candidates have " + std::to_string(candidates_.rows()) +
                                " rows for a " + std::to_string(kernel_.dim()) + "-dimensional kernel");
  if (candidates_.cols() == 0) throw std::invalid_argument("CandidatePosterior: no candidates");
  const Eigen::Index n = candidates_.cols();
  points_.resize(candidates_.rows(), 0);
  Vt_.resize(n, 0);
  mean_ = Eigen::VectorXd::Constant(n, prior_mean_);
  var_.resize(n);
  for (Eigen::Index j = 0; j < n; ++j) var_(j) = kernel_(candidates_.col(j), candidates_.col(j));
}

void CandidatePosterior::reserve(Eigen::Index m) {
  if (m <= L_.rows()) return;
  // Geometric growth keeps appends amortised O(M N).
  const Eigen::Index capacity = std::max<Eigen::Index>({16, 2 * L_.rows(), m});
  const Eigen::Index used = static_cast<Eigen::Index>(m_);
  const Eigen::Index d = candidates_.rows();
  const Eigen::Index n = candidates_.cols();

  Eigen::MatrixXd L = Eigen::MatrixXd::Zero(capacity, capacity);
  L.topLeftCorner(used, used) = L_.topLeftCorner(used, used);
  L_.swap(L);
  Eigen::VectorXd a = Eigen::VectorXd::Zero(capacity);
  a.head(used) = a_.head(used);
  a_.swap(a);
  Eigen::MatrixXd P(d, capacity);
  P.leftCols(used) = points_.leftCols(used);
  points_.swap(P);
  Eigen::MatrixXd Vt(n, capacity);
  Vt.leftCols(used) = Vt_.leftCols(used);
  Vt_.swap(Vt);
}

void CandidatePosterior::add(std::size_t index, double value) {
  if (index >= candidate_count())
    throw std::out_of_range("CandidatePosterior: candidate " + std::to_string(index) + " of " +
                            std::to_string(candidate_count()));
  if (!std::isfinite(value)) throw std::invalid_argument("CandidatePosterior: non-finite observation");
  const auto i = static_cast<Eigen::Index>(index);
  const auto m = static_cast<Eigen::Index>(m_);
  // Column i of V is already L^{-1} k_D(x_i): the forward solve is free for a candidate.
  const Eigen::VectorXd l = Vt_.row(i).head(m).transpose();
  const Eigen::VectorXd x = candidates_.col(i);
  Eigen::VectorXd kc(candidates_.cols());
  for (Eigen::Index j = 0; j < candidates_.cols(); ++j) kc(j) = kernel_(x, candidates_.col(j));
  append(x, l, kc(i), kc, value);
}

void CandidatePosterior::add(const Eigen::Ref<const Eigen::VectorXd>& point, double value) {
  if (static_cast<std::size_t>(point.size()) != dim())
    throw std::invalid_argument("CandidatePosterior: observation of the wrong dimension");
  if (!std::isfinite(value)) throw std::invalid_argument("CandidatePosterior: non-finite observation");
  const auto m = static_cast<Eigen::Index>(m_);
  Eigen::VectorXd l(m);
  for (Eigen::Index r = 0; r < m; ++r) l(r) = kernel_(points_.col(r), point);
  if (m > 0) L_.topLeftCorner(m, m).triangularView<Eigen::Lower>().solveInPlace(l);
  Eigen::VectorXd kc(candidates_.cols());
  for (Eigen::Index j = 0; j < candidates_.cols(); ++j) kc(j) = kernel_(point, candidates_.col(j));
  append(point, l, kernel_(point, point), kc, value);
}

void CandidatePosterior::append(const Eigen::Ref<const Eigen::VectorXd>& point, const Eigen::VectorXd& l,
                                double kxx, const Eigen::Ref<const Eigen::VectorXd>& k_candidates, double value) {
  const auto m = static_cast<Eigen::Index>(m_);
  reserve(m + 1);
  // The new pivot is the predictive variance of this observation given the others, which is at
  // least the noise variance: clamp round-off below it (as GaussianProcess::append_row).
  const double s2 = kxx + noise_ - l.squaredNorm();
  const double s = std::sqrt(std::max(s2, noise_));
  L_.row(m).head(m) = l.transpose();
  L_(m, m) = s;
  const double a_new = (value - prior_mean_ - l.dot(a_.head(m))) / s;
  a_(m) = a_new;
  points_.col(m) = point;

  // New row of V: w = (k(x_new, X_c) - V^T l) / s, written as column m of V^T.
  auto w = Vt_.col(m);
  w = k_candidates;
  if (m > 0) w.noalias() -= Vt_.leftCols(m) * l;
  w /= s;
  mean_.noalias() += a_new * w;
  var_ = (var_ - w.cwiseAbs2()).cwiseMax(0.0);
  ++m_;
}

Prediction CandidatePosterior::predict(const Eigen::Ref<const Eigen::VectorXd>& point) const {
  if (static_cast<std::size_t>(point.size()) != dim())
    throw std::invalid_argument("CandidatePosterior: query of the wrong dimension");
  const auto m = static_cast<Eigen::Index>(m_);
  Eigen::VectorXd v(m);
  for (Eigen::Index r = 0; r < m; ++r) v(r) = kernel_(points_.col(r), point);
  if (m > 0) L_.topLeftCorner(m, m).triangularView<Eigen::Lower>().solveInPlace(v);
  Prediction p;
  p.mean = prior_mean_ + v.dot(a_.head(m));
  p.variance = std::max(0.0, kernel_(point, point) - v.squaredNorm());
  return p;
}

}  // namespace tune
