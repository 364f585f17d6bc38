// GaussianProcess's fantasy tail (gaussian_process.hpp, attach_fantasy_tail): the rows of the
// failed trials' fantasies, kept from ask to ask and extended as observations are added.
//
// With the model's n observations D first and the f tail rows F after them, the factor is
//   L = [L_D 0; C^T L_F],  C = L_D^{-1} K(D, F),  L_F L_F^T = K(F, F) + noise - C^T C.
// C gains one column per added observation (O(f n)), the Schur complement S = K(F, F) - C^T C one
// rank-one term; L_F is refactorised from S at each attach (O(f^3 / 3)). Tracked points and targets
// keep K(F, t) - C^T v the same way and are solved against L_F at each attach (O(f^2) each).
//
// Bit for bit the same whatever the history: every sum is a kernel value minus the terms of the
// observations 0, 1, 2, ... subtracted one at a time (the loops that fold one observation into all
// rows and those that make one new row over all observations run the same operations per entry),
// and everything solved afresh at each attach is solved by the same code on the same numbers.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "tune/gp/gaussian_process.hpp"

namespace tune {
namespace {

bool same_vector(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return a.size() == b.size() && (a.array() == b.array()).all();
}

bool same_observation(const Observation& a, const Observation& b) {
  if (a.noise_group != b.noise_group || a.offset_group != b.offset_group || a.query.index() != b.query.index())
    return false;
  if (const auto* p = std::get_if<PointQuery>(&a.query)) return same_vector(p->x, std::get<PointQuery>(b.query).x);
  if (const auto* p = std::get_if<BoxQuery>(&a.query)) {
    const auto& q = std::get<BoxQuery>(b.query);
    return same_vector(p->lower, q.lower) && same_vector(p->upper, q.upper);
  }
  if (const auto* p = std::get_if<GaussianWindowQuery>(&a.query)) {
    const auto& q = std::get<GaussianWindowQuery>(b.query);
    return same_vector(p->centre, q.centre) && same_vector(p->sd, q.sd);
  }
  const auto& p = std::get<WeightedPointsQuery>(a.query);
  const auto& q = std::get<WeightedPointsQuery>(b.query);
  return p.points.rows() == q.points.rows() && p.points.cols() == q.points.cols() &&
         (p.points.array() == q.points.array()).all() && same_vector(p.weights, q.weights);
}

}  // namespace

void GaussianProcess::fold_tail_observation(std::size_t i) {
  // Column i of C for every tail row: (K(D_i, F_j) - sum_k C(j, k) L(i, k)) / L(i, i), the sum
  // subtracted term by term in k (the loop over j is the inner one, so each entry sees the same
  // sequence of operations as add_tail_row's); then S loses the rank-one term of column i.
  const Eigen::Index f = static_cast<Eigen::Index>(tail_.rows.size());
  const Eigen::Index col = static_cast<Eigen::Index>(i);
  if (tail_.coefficients.cols() <= col)
    tail_.coefficients.conservativeResize(f, std::max<Eigen::Index>({16, 2 * tail_.coefficients.cols(), col + 1}));
  double* c = tail_.coefficients.data();
  const Eigen::Index stride = tail_.coefficients.rows();
  double* out = c + col * stride;
  for (Eigen::Index j = 0; j < f; ++j)
    out[j] = observation_covariance(kernel_, groups(), observations_[i], tail_.rows[static_cast<std::size_t>(j)]);
  for (Eigen::Index k = 0; k < col; ++k) {
    const double l = L_(col, k);
    const double* ck = c + k * stride;
    for (Eigen::Index j = 0; j < f; ++j) out[j] -= ck[j] * l;
  }
  const double pivot = L_(col, col);
  for (Eigen::Index j = 0; j < f; ++j) out[j] /= pivot;
  for (Eigen::Index b = 0; b < f; ++b) {
    const double cb = out[b];
    for (Eigen::Index a = b; a < f; ++a) tail_.schur(a, b) -= out[a] * cb;
  }
  tail_.covered = i + 1;
}

void GaussianProcess::add_tail_row(const Observation& row) {
  // Row j of C over the observations folded so far and row j of S, by the same per-entry
  // operations as fold_tail_observation's.
  const Eigen::Index j = static_cast<Eigen::Index>(tail_.rows.size());
  const Eigen::Index covered = static_cast<Eigen::Index>(tail_.covered);
  tail_.rows.push_back(row);
  tail_.coefficients.conservativeResize(j + 1, std::max<Eigen::Index>(tail_.coefficients.cols(), covered));
  tail_.schur.conservativeResize(j + 1, j + 1);
  for (Eigen::Index i = 0; i < covered; ++i) {
    double v = observation_covariance(kernel_, groups(), observations_[static_cast<std::size_t>(i)], row);
    for (Eigen::Index k = 0; k < i; ++k) v -= tail_.coefficients(j, k) * L_(i, k);
    tail_.coefficients(j, i) = v / L_(i, i);
  }
  for (Eigen::Index b = 0; b <= j; ++b) {
    double s = observation_covariance(kernel_, groups(), row, tail_.rows[static_cast<std::size_t>(b)]);
    for (Eigen::Index i = 0; i < covered; ++i) s -= tail_.coefficients(j, i) * tail_.coefficients(b, i);
    tail_.schur(j, b) = s;
  }
}

void GaussianProcess::update_tail_point_residuals() {
  // K(F_j, x) - sum_i C(j, i) V(i, x), the observations subtracted in order: the rows already made
  // take the observations folded since, new rows all of them.
  const Eigen::Index f = static_cast<Eigen::Index>(tail_.rows.size());
  const Eigen::Index m = tracked_points_.cols();
  const Eigen::Index covered = static_cast<Eigen::Index>(tail_.covered);
  const Eigen::Index old_rows = static_cast<Eigen::Index>(tail_.point_rows);
  if (tail_.point_residuals.cols() != m) tail_.point_residuals.resize(0, m);
  tail_.point_residuals.conservativeResize(f, m);
  for (Eigen::Index i = static_cast<Eigen::Index>(tail_.point_covered); i < covered; ++i)
    for (Eigen::Index x = 0; x < m; ++x) {
      const double v = tracked_V_(i, x);
      for (Eigen::Index j = 0; j < old_rows; ++j) tail_.point_residuals(j, x) -= tail_.coefficients(j, i) * v;
    }
  for (Eigen::Index j = old_rows; j < f; ++j) {
    const Observation& row = tail_.rows[static_cast<std::size_t>(j)];
    const double rho = group_scale(hp_.group_scales, row);
    for (Eigen::Index x = 0; x < m; ++x) {
      double r = rho * covariance(kernel_, row.query, tracked_points_.col(x));
      for (Eigen::Index i = 0; i < covered; ++i) r -= tail_.coefficients(j, i) * tracked_V_(i, x);
      tail_.point_residuals(j, x) = r;
    }
  }
  tail_.point_rows = tail_.rows.size();
  tail_.point_covered = tail_.covered;
}

void GaussianProcess::update_tail_target_residual(TrackedTarget& t) {
  const Eigen::Index f = static_cast<Eigen::Index>(tail_.rows.size());
  const Eigen::Index covered = static_cast<Eigen::Index>(tail_.covered);
  if (t.tail_epoch != tail_.epoch) {
    t.tail_residual.resize(0);
    t.tail_covered = 0;
    t.tail_epoch = tail_.epoch;
  }
  const Eigen::Index old_rows = t.tail_residual.size();
  for (Eigen::Index i = static_cast<Eigen::Index>(t.tail_covered); i < covered; ++i) {
    const double v = t.v(i);
    for (Eigen::Index j = 0; j < old_rows; ++j) t.tail_residual(j) -= tail_.coefficients(j, i) * v;
  }
  t.tail_residual.conservativeResize(f);
  for (Eigen::Index j = old_rows; j < f; ++j) {
    double r = observation_covariance(kernel_, groups(), tail_.rows[static_cast<std::size_t>(j)], t.target);
    for (Eigen::Index i = 0; i < covered; ++i) r -= tail_.coefficients(j, i) * t.v(i);
    t.tail_residual(j) = r;
  }
  t.tail_covered = tail_.covered;
}

Eigen::MatrixXd GaussianProcess::tail_factor() const {
  // chol(S + noise) row by row, each pivot clamped at its row's noise variance as append_row does.
  const Eigen::Index f = static_cast<Eigen::Index>(tail_.rows.size());
  Eigen::MatrixXd factor = Eigen::MatrixXd::Zero(f, f);
  for (Eigen::Index j = 0; j < f; ++j) {
    for (Eigen::Index k = 0; k < j; ++k) {
      double s = tail_.schur(j, k);
      for (Eigen::Index p = 0; p < k; ++p) s -= factor(j, p) * factor(k, p);
      factor(j, k) = s / factor(k, k);
    }
    const double noise = hp_.noise_variances[tail_.rows[static_cast<std::size_t>(j)].noise_group];
    double d = tail_.schur(j, j) + noise;
    for (Eigen::Index p = 0; p < j; ++p) d -= factor(j, p) * factor(j, p);
    factor(j, j) = std::sqrt(std::max(d, noise));
  }
  return factor;
}

void GaussianProcess::attach_fantasy_tail(std::vector<Observation> rows, const std::vector<double>& caps) {
  if (tail_attached_) throw std::logic_error("GP: a fantasy tail is already attached");
  if (caps.size() != rows.size())
    throw std::invalid_argument("GP: " + std::to_string(caps.size()) + " caps for " + std::to_string(rows.size()) +
                                " fantasy rows");
  for (const Observation& o : rows) {
    if (static_cast<std::size_t>(location(o.query).size()) != dim_)
      throw std::invalid_argument("GP: fantasy row of the wrong dimension");
    if (o.noise_group >= hp_.noise_variances.size())
      throw std::out_of_range("GP: fantasy row in noise group " + std::to_string(o.noise_group) +
                              " which has no noise variance");
  }
  for (double cap : caps)
    if (std::isnan(cap)) throw std::invalid_argument("GP: a fantasy cap is NaN");
  const std::size_t nb = n_;
  // Keep the block when it still applies: the same rows first (failed trials only accumulate) and
  // a model that only grew since.
  bool keep = tail_.epoch == tail_epoch_ && tail_.covered <= nb && tail_.rows.size() <= rows.size();
  for (std::size_t j = 0; keep && j < tail_.rows.size(); ++j) keep = same_observation(tail_.rows[j], rows[j]);
  if (!keep) {
    ++tail_epoch_;  // every target's residual is stale too
    tail_ = FantasyTail{};
    tail_.epoch = tail_epoch_;
  }
  for (std::size_t j = tail_.rows.size(); j < rows.size(); ++j) add_tail_row(rows[j]);
  for (std::size_t i = tail_.covered; i < nb; ++i) fold_tail_observation(i);
  if (tracking()) update_tail_point_residuals();
  for (TrackedTarget& t : targets_)
    if (t.live) update_tail_target_residual(t);

  tail_attached_ = true;
  tail_begin_ = nb;
  const Eigen::Index f = static_cast<Eigen::Index>(rows.size());
  if (f == 0) return;
  const Eigen::Index n = static_cast<Eigen::Index>(nb);
  tail_.factor = tail_factor();
  const Eigen::MatrixXd& factor = tail_.factor;
  reserve_rows(n + f);
  // The rows of L, and each fantasy's value: its mean given the rows before it (whitened value 0),
  // or the cap where the cap is below it.
  for (Eigen::Index j = 0; j < f; ++j) {
    const Eigen::Index r = n + j;
    L_.row(r).head(n) = tail_.coefficients.row(j).head(n);
    L_.row(r).segment(n, j + 1) = factor.row(j).head(j + 1);
    double mean_std = 0.0;
    for (Eigen::Index i = 0; i < r; ++i) mean_std += L_(r, i) * a_(i);
    const double cap = caps[static_cast<std::size_t>(j)];
    const double cap_std = cap == std::numeric_limits<double>::infinity() ? cap : standardised(cap);
    const double value_std = std::min(mean_std, cap_std);
    a_(r) = value_std < mean_std ? (value_std - mean_std) / factor(j, j) : 0.0;
    Observation o = std::move(rows[static_cast<std::size_t>(j)]);
    o.value = standardization_.mean + standardization_.scale * value_std;
    observations_.push_back(std::move(o));
  }
  n_ = nb + rows.size();
  if (tracking()) {
    Eigen::MatrixXd w = tail_.point_residuals;
    factor.triangularView<Eigen::Lower>().solveInPlace(w);
    if (tracked_V_.rows() < L_.rows()) tracked_V_.conservativeResize(L_.rows(), tracked_V_.cols());
    tracked_V_.middleRows(n, f) = w;
    for (Eigen::Index j = 0; j < f; ++j) accumulate_tracked_row(static_cast<std::size_t>(n + j));
  }
  for (TrackedTarget& t : targets_) {
    if (!t.live) continue;
    Eigen::VectorXd w = t.tail_residual;
    factor.triangularView<Eigen::Lower>().solveInPlace(w);
    if (t.v.size() < n + f) t.v.conservativeResize(std::max<Eigen::Index>(2 * t.v.size(), n + f));
    t.v.segment(n, f) = w;
  }
  update_weights();
}

}  // namespace tune
