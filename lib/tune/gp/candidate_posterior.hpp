#pragma once
// Exact GP posterior over a FIXED finite candidate set X_c (N points), kept up to date as
// observations are added one at a time.
//
// Why it exists: the compressed GP-bandit paper (Bedi et al.; digest sections 1.9 and 4.2) works
// on a finite action set and needs mean and variance at every candidate after every step. Asking a
// GaussianProcess for them costs O(M^2 N) per step (a triangular solve per candidate). Here the
// solves are cached: with L = chol(K_DD + noise I), a = L^{-1} (y - prior_mean) and
// V = L^{-1} K_{D,X_c} (M x N), one observation appends one row to each of them, and
//     w(x)    = (k(x_new, x) - l^T V[:, x]) / s,   l = L^{-1} k_D(x_new),  s^2 = k(x_new,x_new) + noise - |l|^2
//     mean(x) += w(x) * a_new,    var(x) -= w(x)^2  (clamped at 0)
// costs O(M N) (plus O(M^2) for l when x_new is not a candidate; for a candidate l = V[:, i]).
// The Cholesky row is appended exactly as GaussianProcess::append_row does, so the results equal
// a GaussianProcess with the same kernel, noise and Standardization{prior_mean, 1} to round-off.
//
// The kernel and noise are fixed (the paper's setting: zero prior mean, no refits); no output
// standardisation is applied.
#include <Eigen/Core>
#include <cstddef>

#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/kernel.hpp"

namespace tune {

class CandidatePosterior {
 public:
  // candidates: dim x N, one candidate per column, in the kernel's input units.
  CandidatePosterior(Kernel kernel, double noise_variance, Eigen::MatrixXd candidates, double prior_mean = 0.0);

  std::size_t dim() const { return static_cast<std::size_t>(candidates_.rows()); }
  std::size_t candidate_count() const { return static_cast<std::size_t>(candidates_.cols()); }
  std::size_t size() const { return m_; }  // number of observations M
  const Kernel& kernel() const { return kernel_; }
  double noise_variance() const { return noise_; }
  double prior_mean() const { return prior_mean_; }
  const Eigen::MatrixXd& candidates() const { return candidates_; }

  // Observe candidate `index` (O(M N)) or an arbitrary point (O(M^2 + M N)).
  void add(std::size_t index, double value);
  void add(const Eigen::Ref<const Eigen::VectorXd>& point, double value);

  // Posterior mean and latent variance (no observation noise) at every candidate.
  const Eigen::VectorXd& mean() const { return mean_; }
  const Eigen::VectorXd& variance() const { return var_; }

  // Posterior at an arbitrary point: O(M^2).
  Prediction predict(const Eigen::Ref<const Eigen::VectorXd>& point) const;
  double posterior_variance_at(const Eigen::Ref<const Eigen::VectorXd>& point) const {
    return predict(point).variance;
  }

  // The observed points (dim x M), the Cholesky factor and the whitened targets, for tests.
  Eigen::MatrixXd observed_points() const { return points_.leftCols(static_cast<Eigen::Index>(m_)); }
  Eigen::MatrixXd cholesky_factor() const {
    const auto m = static_cast<Eigen::Index>(m_);
    return L_.topLeftCorner(m, m);
  }
  Eigen::VectorXd whitened_targets() const { return a_.head(static_cast<Eigen::Index>(m_)); }

 private:
  void reserve(Eigen::Index m);
  // Appends the observation given l = L^{-1} k_D(x), k(x, x) and k(x, X_c).
  void append(const Eigen::Ref<const Eigen::VectorXd>& point, const Eigen::VectorXd& l, double kxx,
              const Eigen::Ref<const Eigen::VectorXd>& k_candidates, double value);

  Kernel kernel_;
  double noise_ = 0.0;
  double prior_mean_ = 0.0;
  Eigen::MatrixXd candidates_;  // dim x N
  std::size_t m_ = 0;
  Eigen::MatrixXd points_;  // dim x capacity; columns [0, m_) valid
  Eigen::MatrixXd L_;       // capacity x capacity; lower triangle of the top-left m_ x m_ valid
  Eigen::VectorXd a_;       // capacity; [0, m_) valid
  Eigen::MatrixXd Vt_;      // N x capacity: V transposed, so that appending a row of V writes one
                            // contiguous column; columns [0, m_) valid
  Eigen::VectorXd mean_;    // N
  Eigen::VectorXd var_;     // N
};

}  // namespace tune
