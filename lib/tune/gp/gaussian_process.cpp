#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/simd_paths.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace tune {

std::vector<Kernel> GpHyperparameters::make_discrepancy_kernels() const {
  std::vector<Kernel> kernels;
  for (double m : discrepancy_lengthscale_factors) kernels.emplace_back(kernel, lengthscales * m, outputscale);
  return kernels;
}

namespace {
// Kernel::operator()(a, b) for contiguous points of the kernel's dimension: scaled_sq_distance's
// loop, then of_r2 (the squared exponential's expression written out, Matern's by of_r2 itself).
inline double point_kernel(const Kernel& kernel, const double* a, const double* b) {
  const double* inv = kernel.inverse_squared_lengthscales().data();
  const Eigen::Index d = kernel.inverse_squared_lengthscales().size();
  double r2 = 0.0;
  for (Eigen::Index i = 0; i < d; ++i) {
    const double t = a[i] - b[i];
    r2 += t * t * inv[i];
  }
  if (kernel.type() == KernelType::squared_exponential) return kernel.outputscale() * std::exp(-0.5 * r2);
  return kernel.of_r2(r2);
}
}  // namespace

double fast_observation_covariance(const Kernel& kernel, const GroupCovariance& groups, const Observation& a,
                                   const Observation& b) {
  const auto* pa = std::get_if<PointQuery>(&a.query);
  const auto* pb = std::get_if<PointQuery>(&b.query);
  if (!pa || !pb || pa->x.size() != kernel.inverse_squared_lengthscales().size() || pb->x.size() != pa->x.size())
    return observation_covariance(kernel, groups, a, b);
  const bool shared = a.offset_group && a.offset_group == b.offset_group;
  if (shared) {
    const std::size_t g = *a.offset_group;
    if (group_entry(groups.trend_variances, g, 0.0) != 0.0 ||
        (group_entry(groups.discrepancy_ratios, g, 0.0) != 0.0 && g < groups.discrepancy_kernels.size()))
      return observation_covariance(kernel, groups, a, b);
  }
  const double c = point_kernel(kernel, pa->x.data(), pb->x.data());
  const double scaled = c * group_scale(groups.group_scales, a) * group_scale(groups.group_scales, b);
  if (!shared) return scaled;
  const std::size_t g = *a.offset_group;
  const double r = group_entry(groups.discrepancy_ratios, g, 0.0);
  const double trend = 0.0;
  return scaled + r * c + trend + groups.offset_variance;
}

double fast_cross_covariance(const Kernel& kernel, const std::vector<double>& group_scales, const Observation& a,
                             const double* x) {
  const auto* pa = std::get_if<PointQuery>(&a.query);
  const Eigen::Index d = kernel.inverse_squared_lengthscales().size();
  if (!pa || pa->x.size() != d)
    return group_scale(group_scales, a) * covariance(kernel, a.query, Eigen::Map<const Eigen::VectorXd>(x, d));
  return group_scale(group_scales, a) * point_kernel(kernel, pa->x.data(), x);
}

double fast_cross_covariance_with_gradient(const Kernel& kernel, const std::vector<double>& group_scales,
                                          const Observation& a, const Eigen::Ref<const Eigen::VectorXd>& x,
                                          double* gradient) {
  const double rho = group_scale(group_scales, a);
  const Eigen::VectorXd& inv = kernel.inverse_squared_lengthscales();
  const Eigen::Index d = x.size();
  const auto* p = std::get_if<PointQuery>(&a.query);
  if (kernel.type() == KernelType::squared_exponential && p && p->x.size() == d && inv.size() == d) {
    // rho k(p, x) = rho (s e) and rho (2 dk/dr2) (x - p) / l^2 with dk/dr2 = (-0.5 s) e: Kernel's
    // of_r2, d_dr2 and gradient_x written out with their one exponential, the same operations.
    double r2 = 0.0;
    for (Eigen::Index k = 0; k < d; ++k) {
      const double t = p->x(k) - x(k);
      r2 += t * t * inv(k);
    }
    const double e = std::exp(-0.5 * r2);
    const double g2 = 2.0 * (-0.5 * kernel.outputscale() * e);
    for (Eigen::Index k = 0; k < d; ++k) gradient[k] = rho * (g2 * ((x(k) - p->x(k)) * inv(k)));
    return rho * (kernel.outputscale() * e);
  }
  Eigen::Map<Eigen::VectorXd>(gradient, d) = rho * covariance_gradient_x(kernel, a.query, x);
  return rho * covariance(kernel, a.query, x);
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
  fill_tracked_rows();
  refresh_tracked_summaries();
}

// The replay of Eigen's row-major gemv below holds where append_tracked_row's product runs it with
// packets of two doubles and no fused multiply-add (the Debian build, baseline x86-64; as in
// cholesky_rows.cpp). Elsewhere track() appends the rows one at a time, by append_tracked_row.
#if defined(__x86_64__) && defined(__SSE2__) && !defined(EIGEN_VECTORIZE_FMA) && !defined(EIGEN_VECTORIZE_AVX)
#define TUNE_REPLAYS_EIGEN_GEMV 1
#else
#define TUNE_REPLAYS_EIGEN_GEMV 0
#endif

namespace {
constexpr Eigen::Index kTrackedRows = 8;  // rows of V per block (even)

// For the 8 rows at l (L's rows r0.., column stride ls) and one tracked point's column v: a[r] +=
// L(r0 + r, k) v_k over even k in [k0, k1) and a[8 + r] the same over odd k, in increasing k, each
// row a lane of its own (the same operations as a scalar loop per row).
#if TUNE_REPLAYS_EIGEN_GEMV
#if defined(__GNUC__)
__attribute__((target("avx"))) void accumulate_tracked_pairs_avx(const double* l, Eigen::Index ls, const double* v,
                                                                  Eigen::Index k0, Eigen::Index k1, double* a) {
  __m256d e0 = _mm256_loadu_pd(a), e1 = _mm256_loadu_pd(a + 4);
  __m256d o0 = _mm256_loadu_pd(a + 8), o1 = _mm256_loadu_pd(a + 12);
  for (Eigen::Index k = k0; k < k1; k += 2) {
    const double* p0 = l + k * ls;
    const double* p1 = p0 + ls;
    const __m256d b0 = _mm256_set1_pd(v[k]), b1 = _mm256_set1_pd(v[k + 1]);
    e0 = _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(p0), b0), e0);
    e1 = _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(p0 + 4), b0), e1);
    o0 = _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(p1), b1), o0);
    o1 = _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(p1 + 4), b1), o1);
  }
  _mm256_storeu_pd(a, e0);
  _mm256_storeu_pd(a + 4, e1);
  _mm256_storeu_pd(a + 8, o0);
  _mm256_storeu_pd(a + 12, o1);
}
#endif
void accumulate_tracked_pairs(const double* l, Eigen::Index ls, const double* v, Eigen::Index k0, Eigen::Index k1,
                              double* a) {
#if defined(__GNUC__)
  if (avx_loops_enabled()) {
    accumulate_tracked_pairs_avx(l, ls, v, k0, k1, a);
    return;
  }
#endif
  __m128d e[4], o[4];
  for (int q = 0; q < 4; ++q) {
    e[q] = _mm_loadu_pd(a + 2 * q);
    o[q] = _mm_loadu_pd(a + 8 + 2 * q);
  }
  for (Eigen::Index k = k0; k < k1; k += 2) {
    const double* p0 = l + k * ls;
    const double* p1 = p0 + ls;
    const __m128d b0 = _mm_set1_pd(v[k]), b1 = _mm_set1_pd(v[k + 1]);
    for (int q = 0; q < 4; ++q) {
      e[q] = _mm_add_pd(_mm_mul_pd(_mm_loadu_pd(p0 + 2 * q), b0), e[q]);
      o[q] = _mm_add_pd(_mm_mul_pd(_mm_loadu_pd(p1 + 2 * q), b1), o[q]);
    }
  }
  for (int q = 0; q < 4; ++q) {
    _mm_storeu_pd(a + 2 * q, e[q]);
    _mm_storeu_pd(a + 8 + 2 * q, o[q]);
  }
}
#else
void accumulate_tracked_pairs(const double*, Eigen::Index, const double*, Eigen::Index, Eigen::Index, double*) {}
#endif
}  // namespace

void GaussianProcess::fill_tracked_rows() {
  // Every row of V = L^{-1} K(D, X) at once, bit for bit append_tracked_row's one after another.
  // There, entry (i, j) is (k_ij - s) / L_ii with s from Eigen's row-major gemv (the row vector
  // L_i,<i times V_<i): one packet of two accumulators over the pairs of columns k < 2 floor(i / 2),
  // lane 0 summing L_ik V_kj for even k and lane 1 for odd k, each from 0 in increasing k; then
  // s = lane 0 + lane 1, plus L_i,i-1 V_i-1,j when i is odd; then k_ij + (-1) s. Each entry's sums
  // run in that order whatever order the entries are made in, so here a block of 8 rows runs for
  // every point at once, its rows of L copied contiguous (L's columns are a power of two apart) and
  // its 16 lanes per point in registers, each row a lane (AVX where the processor has it, SSE2
  // otherwise: separate multiplies and adds, as the gemv's): V's rows are read once per block of 8
  // instead of once per row. The row at a time read all of V for each of the n rows and was
  // memory-bound (24% of the instructions of a loaded 2000-trial Park study's first use).
  // tests/unit/tracked_rows_test.cpp holds the two to the bit.
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  const Eigen::Index m = tracked_points_.cols();
  if (!TUNE_REPLAYS_EIGEN_GEMV || m < 2) {  // one point: Eigen's product is a dot product
    for (std::size_t i = 0; i < n_; ++i) append_tracked_row(i);
    return;
  }
  // K(D, X), then the rows solved in place.
  for (Eigen::Index j = 0; j < m; ++j)
    for (Eigen::Index i = 0; i < n; ++i)
      tracked_V_(i, j) = fast_cross_covariance(kernel_, hp_.group_scales, observations_[static_cast<std::size_t>(i)],
                                               tracked_points_.col(j).data());
  constexpr Eigen::Index kDepth = 256;  // columns k of L per pass: the block's 8 x 256 stay in L1
  const double* l = L_.data();
  const Eigen::Index ls = L_.outerStride();
  double* v = tracked_V_.data();
  const Eigen::Index vs = tracked_V_.outerStride();
  std::vector<double> acc(static_cast<std::size_t>(2 * kTrackedRows * m));  // per point: the block's even, odd lanes
  std::vector<double> block(static_cast<std::size_t>(kTrackedRows * n));
  for (Eigen::Index r0 = 0; r0 < n; r0 += kTrackedRows) {
    const Eigen::Index r1 = std::min(n, r0 + kTrackedRows);
    const Eigen::Index rows = r1 - r0;
    std::fill(acc.begin(), acc.end(), 0.0);
    // The block's rows of L left of it, contiguous: L's columns are a power of two apart, and read
    // in place every k hit the same cache set.
    if (rows == kTrackedRows)
      for (Eigen::Index k = 0; k < r0; ++k)
        for (Eigen::Index r = 0; r < kTrackedRows; ++r) block[static_cast<std::size_t>(k * kTrackedRows + r)] = l[k * ls + r0 + r];
    // The columns k < r0 (inside every row's packet range, r0 being even), in increasing k.
    for (Eigen::Index k0 = 0; k0 < r0; k0 += kDepth) {
      const Eigen::Index k1 = std::min(r0, k0 + kDepth);
      for (Eigen::Index j = 0; j < m; ++j) {
        double* a = acc.data() + 2 * kTrackedRows * j;
        if (rows == kTrackedRows) {
          accumulate_tracked_pairs(block.data(), kTrackedRows, v + j * vs, k0, k1, a);
          continue;
        }
        for (Eigen::Index k = k0; k < k1; k += 2)
          for (Eigen::Index r = 0; r < rows; ++r) {
            a[r] = l[k * ls + r0 + r] * v[j * vs + k] + a[r];
            a[kTrackedRows + r] = l[(k + 1) * ls + r0 + r] * v[j * vs + k + 1] + a[kTrackedRows + r];
          }
      }
    }
    // The block's own rows in order: row i's columns k in [r0, i) are rows made just before.
    for (Eigen::Index j = 0; j < m; ++j) {
      double* col = v + j * vs;
      const double* a = acc.data() + 2 * kTrackedRows * j;
      for (Eigen::Index i = r0; i < r1; ++i) {
        if (i == 0) {
          col[0] = col[0] / L_(0, 0);
          continue;
        }
        const Eigen::Index paired = 2 * (i / 2);
        double e = a[i - r0], o = a[kTrackedRows + i - r0];
        for (Eigen::Index k = r0; k < paired; k += 2) {
          e = l[k * ls + i] * col[k] + e;
          o = l[(k + 1) * ls + i] * col[k + 1] + o;
        }
        double sum = e + o;
        if (paired < i) sum += l[paired * ls + i] * col[paired];
        col[i] = (col[i] + -1.0 * sum) / L_(i, i);
      }
    }
  }
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
  Eigen::RowVectorXd k(m);
  const Observation& o = observations_[row];
  for (Eigen::Index j = 0; j < m; ++j) k(j) = fast_cross_covariance(kernel_, hp_.group_scales, o, tracked_points_.col(j).data());
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
  return fast_cross_covariance(kernel_, hp_.group_scales, observations_[i], x.data());
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

void GaussianProcess::check_point(Eigen::Index rows) const {
  // A point of another space (a unit point where the inputs are one-hot, model_inputs.hpp) read
  // past its end and gave a plausible, wrong prediction.
  if (static_cast<std::size_t>(rows) != dim_)
    throw std::invalid_argument("GP: a point of dimension " + std::to_string(rows) + " for a " + std::to_string(dim_) +
                                "-dimensional input");
}

Prediction GaussianProcess::predict(const Eigen::Ref<const Eigen::VectorXd>& x) const {
  check_point(x.size());
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
    c(i) = fast_observation_covariance(kernel_, groups(), observations_[static_cast<std::size_t>(i)], target);
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
  check_point(x.size());
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  const Eigen::Index d = static_cast<Eigen::Index>(dim_);
  Eigen::VectorXd c(n);
  Eigen::MatrixXd dc(d, n);  // column i: d c_i / d x
  for (Eigen::Index i = 0; i < n; ++i)
    c(i) = fast_cross_covariance_with_gradient(kernel_, hp_.group_scales, observations_[static_cast<std::size_t>(i)], x,
                                               dc.col(i).data());
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
  if (X.cols() > 0) check_point(X.rows());
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
