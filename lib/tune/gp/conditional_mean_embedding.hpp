#pragma once
// The GP posterior of f when the link between queries and inputs is learned, not known: the
// conditional mean process of the IQBO paper (Zhang et al., Eq. 12; digest-iqbo-cmets.md 2.3-2.4).
//
// A query a lives in its own space A. Observing a gives z = g(a) + eps with g(a) = E[f(X) | A = a],
// where p(x | a) is unknown and known only through a dataset D1 = {(x_j, a_j)}, j = 1..N, of joint
// draws. The conditional mean embedding estimated from D1 by kernel ridge regression,
//   mu_{X|A=a} = sum_j w_j(a) k(x_j, .),   w(a) = (L_aa + N lambda I)^{-1} l(a_D1, a),
// replaces E[. | A = a], so that (with f ~ GP(0, k))
//   Cov(f(x), g(a))  = k(x, x_D1) w(a),
//   Cov(g(a), g(a')) = w(a)^T K_xx w(a')      (Qhat),
// and the posterior of f and g given z_1..z_t is ordinary Gaussian conditioning on these.
//
// Choices the paper leaves open (digest 7.1):
// - Zero prior mean: callers standardise z (standardisation commutes with the model, because g is
//   linear in f and p(. | a) integrates to 1).
// - regularization = lambda, entering as N lambda on the diagonal of L_aa; default 1e-2, the
//   reference CMP code's lbda. It is a bias-variance knob of the embedding: larger values shrink
//   every Qhat(a, a), which makes actions look less uncertain than they are.
// - jitter, relative, on both factorised matrices: jitter * mean(diag L_aa) is added to
//   L_aa + N lambda I and jitter * mean(diag K_xx) (the prior variance of f) to
//   S = Qhat + diag(noise). Relative to fixed matrices rather than to S itself, so that the factor
//   grown one observation at a time is the factor of the batch matrix, and it permits noise 0.
//
// Costs: construction O(N^3) (one Cholesky of the N x N matrix) and O(N^2) memory; add() O(N^2 + N t
// + t^2); predict_f O(n N t + n t^2); predict_g O(N^2 M + N M t). Kernels are fixed per model: to
// change them (e.g. after comparing log_marginal_likelihood), build a new model and add the
// observations again.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cstddef>

#include "tune/gp/kernel.hpp"

namespace tune {

struct ConditionalMeanEmbeddingOptions {
  double regularization = 1e-2;  // lambda > 0; N lambda on the diagonal
  double jitter = 1e-8;          // >= 0, relative to the mean diagonal (see above)
};

class ConditionalMeanEmbeddingModel {
 public:
  // x_samples: dx x N and a_samples: da x N, column j the pair (x_j, a_j) of D1. kernel_x is k on
  // X (dimension dx), kernel_a is l on A (dimension da). Throws std::invalid_argument on
  // mismatched sizes, non-finite samples or invalid options, std::runtime_error if the embedding's
  // matrix cannot be factorised.
  ConditionalMeanEmbeddingModel(Eigen::MatrixXd x_samples, Eigen::MatrixXd a_samples, Kernel kernel_x,
                                Kernel kernel_a, ConditionalMeanEmbeddingOptions options = {});

  // One more observation z = g(a) + eps, eps ~ N(0, noise_variance), in O(N^2 + N t + t^2). Throws
  // std::invalid_argument (model unchanged) unless a has dimension da and is finite, z is finite and
  // noise_variance is finite and >= 0.
  void add(const Eigen::VectorXd& a, double z, double noise_variance);
  std::size_t size() const { return static_cast<std::size_t>(values_.size()); }
  std::size_t sample_count() const { return static_cast<std::size_t>(x_samples_.cols()); }

  const Kernel& kernel_x() const { return kernel_x_; }
  const Kernel& kernel_a() const { return kernel_a_; }
  const ConditionalMeanEmbeddingOptions& options() const { return options_; }

  // Posterior of f at the columns of X (dx x n): mean and variance (clamped at 0), and the full
  // covariance (symmetric; its diagonal is predict_f's variance).
  void predict_f(const Eigen::MatrixXd& X, Eigen::VectorXd& mean, Eigen::VectorXd& variance) const;
  Eigen::MatrixXd posterior_covariance_f(const Eigen::MatrixXd& X) const;

  // Posterior of g at candidate actions, the columns of A (da x M): nu_t(b) and q_t(b, b) clamped
  // at 0, without observation noise.
  void predict_g(const Eigen::MatrixXd& A, Eigen::VectorXd& mean, Eigen::VectorXd& variance) const;

  // log N(z; 0, Qhat + diag(noise)) over the observations so far (jitter included): the evidence
  // for comparing kernels or lambda. 0 without observations.
  double log_marginal_likelihood() const;

 private:
  // Embedding weights w(a) for the columns of A: (L_aa + (N lambda + jitter) I)^{-1} l(a_D1, A).
  Eigen::MatrixXd embedding_weights(const Eigen::MatrixXd& A) const;
  // L_S^{-1} M for a t x m matrix M.
  Eigen::MatrixXd whiten(Eigen::MatrixXd M) const;

  Eigen::MatrixXd x_samples_, a_samples_;
  Kernel kernel_x_, kernel_a_;
  ConditionalMeanEmbeddingOptions options_;
  Eigen::MatrixXd k_xx_;                            // N x N
  Eigen::LLT<Eigen::MatrixXd> regularized_l_aa_;    // of L_aa + (N lambda + jitter) I
  double s_jitter_ = 0.0;                           // added to each diagonal entry of S
  // Grown by one column (W, KW) or one row (the factor of S) per observation.
  Eigen::MatrixXd weights_;         // W: N x t
  Eigen::MatrixXd k_weights_;       // K_xx W: N x t
  Eigen::MatrixXd s_factor_;        // lower Cholesky factor L_S of S = W^T K_xx W + diag(noise) + s_jitter I
  Eigen::VectorXd values_;          // z
  Eigen::VectorXd whitened_values_; // L_S^{-1} z
  Eigen::VectorXd alpha_;           // S^{-1} z
};

}  // namespace tune
