#include "tune/gp/conditional_mean_embedding.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

namespace tune {

namespace {

void check_rows(const Eigen::MatrixXd& M, std::size_t expected, const char* what) {
  if (static_cast<std::size_t>(M.rows()) != expected)
    throw std::invalid_argument(std::string("conditional mean embedding: ") + what + " of dimension " +
                                std::to_string(M.rows()) + " for a " + std::to_string(expected) +
                                "-dimensional kernel");
}

// k(X, X), each pair evaluated once and mirrored: the N x N Gram matrices dominate construction
// along with their Cholesky factor.
Eigen::MatrixXd gram(const Kernel& k, const Eigen::MatrixXd& X) {
  const Eigen::Index n = X.cols();
  Eigen::MatrixXd G(n, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    G(j, j) = k(X.col(j), X.col(j));
    for (Eigen::Index i = j + 1; i < n; ++i) G(j, i) = G(i, j) = k(X.col(i), X.col(j));
  }
  return G;
}

}  // namespace

ConditionalMeanEmbeddingModel::ConditionalMeanEmbeddingModel(Eigen::MatrixXd x_samples, Eigen::MatrixXd a_samples,
                                                             Kernel kernel_x, Kernel kernel_a,
                                                             ConditionalMeanEmbeddingOptions options)
    : x_samples_(std::move(x_samples)),
      a_samples_(std::move(a_samples)),
      kernel_x_(std::move(kernel_x)),
      kernel_a_(std::move(kernel_a)),
      options_(options) {
  if (x_samples_.cols() != a_samples_.cols())
    throw std::invalid_argument("conditional mean embedding: " + std::to_string(x_samples_.cols()) + " x samples but " +
                                std::to_string(a_samples_.cols()) + " a samples");
  if (x_samples_.cols() == 0) throw std::invalid_argument("conditional mean embedding: no (x, a) samples");
  check_rows(x_samples_, kernel_x_.dim(), "x samples");
  check_rows(a_samples_, kernel_a_.dim(), "a samples");
  if (!x_samples_.allFinite() || !a_samples_.allFinite())
    throw std::invalid_argument("conditional mean embedding: non-finite (x, a) sample");
  if (!(options_.regularization > 0.0) || !std::isfinite(options_.regularization))
    throw std::invalid_argument("conditional mean embedding: the regularization must be positive and finite");
  if (!(options_.jitter >= 0.0) || !std::isfinite(options_.jitter))
    throw std::invalid_argument("conditional mean embedding: the jitter must be finite and >= 0");

  const Eigen::Index n = x_samples_.cols();
  k_xx_ = gram(kernel_x_, x_samples_);
  Eigen::MatrixXd regularized = gram(kernel_a_, a_samples_);
  const double r_jitter = options_.jitter * regularized.diagonal().mean();
  regularized.diagonal().array() += static_cast<double>(n) * options_.regularization + r_jitter;
  regularized_l_aa_.compute(regularized);
  if (regularized_l_aa_.info() != Eigen::Success)
    throw std::runtime_error("conditional mean embedding: L_aa + N lambda I is not numerically positive definite; "
                             "increase the regularization or the jitter");
  s_jitter_ = options_.jitter * k_xx_.diagonal().mean();

  weights_.resize(n, 0);
  k_weights_.resize(n, 0);
  s_factor_.resize(0, 0);
  values_.resize(0);
  whitened_values_.resize(0);
  alpha_.resize(0);
}

Eigen::MatrixXd ConditionalMeanEmbeddingModel::embedding_weights(const Eigen::MatrixXd& A) const {
  check_rows(A, kernel_a_.dim(), "actions");
  return regularized_l_aa_.solve(kernel_a_.cross(a_samples_, A));
}

Eigen::MatrixXd ConditionalMeanEmbeddingModel::whiten(Eigen::MatrixXd M) const {
  if (M.rows() > 0) s_factor_.triangularView<Eigen::Lower>().solveInPlace(M);
  return M;
}

void ConditionalMeanEmbeddingModel::add(const Eigen::VectorXd& a, double z, double noise_variance) {
  if (static_cast<std::size_t>(a.size()) != kernel_a_.dim())
    throw std::invalid_argument("conditional mean embedding: action of dimension " + std::to_string(a.size()) +
                                " for a " + std::to_string(kernel_a_.dim()) + "-dimensional kernel");
  if (!a.allFinite()) throw std::invalid_argument("conditional mean embedding: non-finite action");
  if (!std::isfinite(z)) throw std::invalid_argument("conditional mean embedding: non-finite observation");
  if (!(noise_variance >= 0.0) || !std::isfinite(noise_variance))
    throw std::invalid_argument("conditional mean embedding: the noise variance must be finite and >= 0");

  const Eigen::Index t = static_cast<Eigen::Index>(size());
  const Eigen::VectorXd w = embedding_weights(a);
  const Eigen::VectorXd kw = k_xx_ * w;
  // The new column of S above the diagonal, whitened by the current factor: one row of the
  // Cholesky factor of the grown S.
  const Eigen::VectorXd row = whiten(weights_.transpose() * kw);
  // The pivot is the Schur complement of S, at least noise + jitter because W^T K_xx W is positive
  // semidefinite: clamp round-off below that.
  const double floor = noise_variance + s_jitter_;
  const double pivot = std::sqrt(std::max(w.dot(kw) + floor - row.squaredNorm(), floor));
  if (!(pivot > 0.0))
    throw std::invalid_argument("conditional mean embedding: a noise-free observation with zero jitter makes "
                                "the observations' covariance singular");

  weights_.conservativeResize(Eigen::NoChange, t + 1);
  weights_.col(t) = w;
  k_weights_.conservativeResize(Eigen::NoChange, t + 1);
  k_weights_.col(t) = kw;
  s_factor_.conservativeResize(t + 1, t + 1);
  s_factor_.row(t).head(t) = row.transpose();
  s_factor_.col(t).head(t).setZero();
  s_factor_(t, t) = pivot;
  values_.conservativeResize(t + 1);
  values_(t) = z;
  whitened_values_.conservativeResize(t + 1);
  whitened_values_(t) = (z - row.dot(whitened_values_.head(t))) / pivot;
  alpha_ = s_factor_.triangularView<Eigen::Lower>().transpose().solve(whitened_values_);
}

void ConditionalMeanEmbeddingModel::predict_f(const Eigen::MatrixXd& X, Eigen::VectorXd& mean,
                                              Eigen::VectorXd& variance) const {
  check_rows(X, kernel_x_.dim(), "test points");
  // Cov(z, f(X)) = W^T k(x_D1, X).
  const Eigen::MatrixXd cross_t = weights_.transpose() * kernel_x_.cross(x_samples_, X);
  mean = cross_t.transpose() * alpha_;
  const Eigen::MatrixXd V = whiten(cross_t);
  variance.resize(X.cols());
  for (Eigen::Index j = 0; j < X.cols(); ++j)
    variance(j) = std::max(0.0, kernel_x_(X.col(j), X.col(j)) - V.col(j).squaredNorm());
}

Eigen::MatrixXd ConditionalMeanEmbeddingModel::posterior_covariance_f(const Eigen::MatrixXd& X) const {
  check_rows(X, kernel_x_.dim(), "test points");
  const Eigen::MatrixXd V = whiten(weights_.transpose() * kernel_x_.cross(x_samples_, X));
  const Eigen::Index n = X.cols();
  Eigen::MatrixXd cov(n, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    // The diagonal exactly as predict_f forms it; off-diagonal entries computed once and mirrored
    // so that the result is exactly symmetric.
    cov(j, j) = std::max(0.0, kernel_x_(X.col(j), X.col(j)) - V.col(j).squaredNorm());
    for (Eigen::Index i = 0; i < j; ++i) {
      cov(i, j) = kernel_x_(X.col(i), X.col(j)) - V.col(i).dot(V.col(j));
      cov(j, i) = cov(i, j);
    }
  }
  return cov;
}

void ConditionalMeanEmbeddingModel::predict_g(const Eigen::MatrixXd& A, Eigen::VectorXd& mean,
                                              Eigen::VectorXd& variance) const {
  const Eigen::MatrixXd wb = embedding_weights(A);
  // Cov(z, g(B)) = W^T K_xx W_B.
  const Eigen::MatrixXd cross_t = k_weights_.transpose() * wb;
  mean = cross_t.transpose() * alpha_;
  const Eigen::MatrixXd V = whiten(cross_t);
  const Eigen::MatrixXd kwb = k_xx_ * wb;
  variance.resize(A.cols());
  for (Eigen::Index j = 0; j < A.cols(); ++j)
    variance(j) = std::max(0.0, wb.col(j).dot(kwb.col(j)) - V.col(j).squaredNorm());
}

double ConditionalMeanEmbeddingModel::log_marginal_likelihood() const {
  const double t = static_cast<double>(size());
  return -0.5 * whitened_values_.squaredNorm() - s_factor_.diagonal().array().log().sum() -
         0.5 * t * std::log(2.0 * std::numbers::pi);
}

}  // namespace tune
