// GaussianProcess::append_rows: many rows of the Cholesky factor at once (a model built from
// scratch, a refit, the first use of a loaded model), bit for bit the rows append_row makes one at a
// time.
//
// append_row solves L[:r, :r] l = c for the new row by Eigen's forward substitution
// (triangular_solve_vector, lower, column-major): columns in panels of 8; inside a panel each entry
// is divided by its pivot (unless it is exactly 0) and subtracted, times the panel's column, from the
// panel's later entries; then the panel's contribution is taken off every later entry by a gemv,
// entry j losing s = ((0 + L[j, k0] l[k0]) + L[j, k1] l[k1]) + ... over the panel's 8 columns in
// order (no fused multiply-add: the library is built for baseline x86-64). Entry j's operations do
// not depend on the row's length, only on the panels before it, so every row can run them in step:
// a panel at a time for all new rows, L's rows read once per panel for all of them instead of the
// whole triangle once per row (O(n^2) memory traffic per row, which bounded the old loop: 1-2 s for
// 2000 observations). The pivot and the whitened target use the same Eigen expressions as
// append_row on the same numbers. tests/unit/gaussian_process_blocked_rows_test.cpp holds the two to
// the bit.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <vector>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/simd_paths.hpp"

// The replay holds where Eigen's forward substitution is the one it replays: panels of 8 and an
// SSE2 gemv without fused multiply-add, on x86-64 (the Debian build, where the test holds it to the
// bit). Built otherwise (-march=native with AVX or FMA, another architecture), append_rows appends
// the rows one at a time, by append_row itself: slower, the same bits as a running model's by
// construction. (It refused to compile there before.)
#if defined(__x86_64__) && defined(__SSE2__) && EIGEN_TUNE_TRIANGULAR_PANEL_WIDTH == 8 && \
    !defined(EIGEN_VECTORIZE_FMA) && !defined(EIGEN_VECTORIZE_AVX)
#define TUNE_REPLAYS_EIGEN_PANELS 1
#else
#define TUNE_REPLAYS_EIGEN_PANELS 0
#endif

namespace tune {
namespace {
constexpr Eigen::Index kPanel = 8;  // Eigen's EIGEN_TUNE_TRIANGULAR_PANEL_WIDTH
constexpr Eigen::Index kGroup = 4;  // entries j per pass over a row's panel

// Eigen's gemv sum for one entry: ((0 + l[0] x[0]) + l[1] x[1]) + ..., x being row r's panel at lo.
inline double panel_sum(const double* l, const double* data, Eigen::Index stride, Eigen::Index r, Eigen::Index lo) {
  double s = 0.0;
  for (Eigen::Index k = 0; k < kPanel; ++k) s += l[k] * data[(lo + k) * stride + r];
  return s;
}
#if defined(__x86_64__) && defined(__GNUC__)
// The SSE2 loop of append_rows four rows at a time: 256-bit multiplies and adds, no FMA. Returns the
// first row it did not do.
// The panel's columns are read from `panel` (column k at panel + k * panel_stride, row r at r - r0):
// a contiguous copy, because L's own columns are 2^k doubles apart and eight of them share a cache set.
__attribute__((target("avx"))) Eigen::Index panel_group_avx(double* data, Eigen::Index stride, const double (*l)[kPanel],
                                                             const double* panel, Eigen::Index panel_stride,
                                                             Eigen::Index r0, Eigen::Index j, Eigen::Index r,
                                                             Eigen::Index r1) {
  for (; r + 3 < r1; r += 4) {
    __m256d x[kPanel];
    for (Eigen::Index k = 0; k < kPanel; ++k) x[k] = _mm256_loadu_pd(panel + k * panel_stride + (r - r0));
    for (Eigen::Index g = 0; g < kGroup; ++g) {
      __m256d s = _mm256_setzero_pd();
      for (Eigen::Index k = 0; k < kPanel; ++k) s = _mm256_add_pd(s, _mm256_mul_pd(_mm256_set1_pd(l[g][k]), x[k]));
      double* out = data + (j + g) * stride + r;
      _mm256_storeu_pd(out, _mm256_sub_pd(_mm256_loadu_pd(out), s));
    }
  }
  return r;
}
#endif
}  // namespace

void GaussianProcess::finish_row(Eigen::Index r) {
  // append_row's pivot and whitened target, from row r's solved entries.
  const Observation& o = observations_[static_cast<std::size_t>(r)];
  const Eigen::VectorXd c = L_.row(r).head(r).transpose();
  const double noise = hp_.noise_variances[o.noise_group];
  const double s2 = observation_covariance(kernel_, groups(), o, o) + noise - c.squaredNorm();
  const double s = std::sqrt(std::max(s2, noise));
  L_(r, r) = s;
  a_(r) = (standardised(o.value) - c.dot(a_.head(r))) / s;
}

void GaussianProcess::append_rows(std::size_t count) {
  if (!TUNE_REPLAYS_EIGEN_PANELS) {
    for (const std::size_t end = n_ + count; n_ < end;) append_row(observations_[n_]);
    return;
  }
  const Eigen::Index r0 = static_cast<Eigen::Index>(n_);
  const Eigen::Index r1 = r0 + static_cast<Eigen::Index>(count);
  if (count == 0) return;
  reserve_rows(r1);
  // Right-hand sides: row r's entries j < r are K(D_j, D_r), as append_row makes them.
  for (Eigen::Index j = 0; j + 1 < r1; ++j) {
    const Observation& oj = observations_[static_cast<std::size_t>(j)];
    for (Eigen::Index r = std::max(r0, j + 1); r < r1; ++r)
      L_(r, j) = fast_observation_covariance(kernel_, groups(), oj, observations_[static_cast<std::size_t>(r)]);
  }
  Eigen::Index finished = r0;  // rows [r0, finished) have their pivot
  const auto finish_through = [&](Eigen::Index last) {
    for (; finished <= last; ++finished) finish_row(finished);
  };
  double* data = L_.data();
  const Eigen::Index stride = L_.outerStride();
  const Eigen::Index panel_stride = r1 - r0 + 4;  // not a power of two
  std::vector<double> panel(static_cast<std::size_t>(kPanel * panel_stride));
  for (Eigen::Index lo = 0; lo + 1 < r1; lo += kPanel) {
    const Eigen::Index hi = lo + kPanel;
    // Inside the panel: column k of every row longer than k, once row k (if new) has its pivot.
    for (Eigen::Index k = lo; k < std::min(hi, r1 - 1); ++k) {
      finish_through(k);
      const double pivot = L_(k, k);
      for (Eigen::Index r = std::max(r0, k + 1); r < r1; ++r) {
        double& x = L_(r, k);
        if (x == 0.0) continue;  // as Eigen: neither divided nor subtracted
        x /= pivot;
        const Eigen::Index end = std::min(hi, r);
        for (Eigen::Index s = k + 1; s < end; ++s) L_(r, s) -= x * L_(s, k);
      }
    }
    // The gemv: entries j >= hi of rows longer than hi lose the panel's sum (full panels only),
    // four entries j at a time so that each row's panel is loaded once for them. The new rows'
    // panel entries (final now) are copied contiguous for the vector loops.
    if (hi + 1 < r1)
      for (Eigen::Index k = 0; k < kPanel; ++k)
        for (Eigen::Index r = r0; r < r1; ++r)
          panel[static_cast<std::size_t>(k * panel_stride + (r - r0))] = data[(lo + k) * stride + r];
    for (Eigen::Index j = hi; j + 1 < r1; j += kGroup) {
      const Eigen::Index group = std::min<Eigen::Index>(kGroup, r1 - 1 - j);
      double l[kGroup][kPanel];
      for (Eigen::Index g = 0; g < group; ++g)
        for (Eigen::Index k = 0; k < kPanel; ++k) l[g][k] = L_(j + g, lo + k);
      // Rows inside the group (r <= j + group - 1) take only the entries j + g < r.
      for (Eigen::Index r = std::max(r0, j + 1); r < std::min(r1, j + group); ++r)
        for (Eigen::Index g = 0; j + g < r; ++g) L_(r, j + g) -= panel_sum(l[g], data, stride, r, lo);
      const Eigen::Index first = std::max(r0, j + group);
      if (group == kGroup) {
        Eigen::Index r = first;
#if defined(__x86_64__) && defined(__GNUC__)
        // Four rows per step where the processor has AVX (each row a lane: the same operations).
        if (avx_loops_enabled()) r = panel_group_avx(data, stride, l, panel.data(), panel_stride, r0, j, r, r1);
#endif
#ifdef __SSE2__
        // Two rows per step in SSE2 registers: separate multiplies and adds, lane by lane the
        // scalar loop's operations.
        for (; r + 1 < r1; r += 2) {
          __m128d x[kPanel];
          for (Eigen::Index k = 0; k < kPanel; ++k) x[k] = _mm_loadu_pd(panel.data() + k * panel_stride + (r - r0));
          for (Eigen::Index g = 0; g < kGroup; ++g) {
            __m128d s = _mm_setzero_pd();
            for (Eigen::Index k = 0; k < kPanel; ++k) s = _mm_add_pd(s, _mm_mul_pd(_mm_set1_pd(l[g][k]), x[k]));
            double* out = data + (j + g) * stride + r;
            _mm_storeu_pd(out, _mm_sub_pd(_mm_loadu_pd(out), s));
          }
        }
#endif
        for (; r < r1; ++r) {
          double s[kGroup] = {0.0, 0.0, 0.0, 0.0};
          for (Eigen::Index k = 0; k < kPanel; ++k) {
            const double x = data[(lo + k) * stride + r];
            for (Eigen::Index g = 0; g < kGroup; ++g) s[g] += l[g][k] * x;
          }
          for (Eigen::Index g = 0; g < kGroup; ++g) data[(j + g) * stride + r] -= s[g];
        }
      } else {
        for (Eigen::Index r = first; r < r1; ++r)
          for (Eigen::Index g = 0; g < group; ++g) L_(r, j + g) -= panel_sum(l[g], data, stride, r, lo);
      }
    }
  }
  finish_through(r1 - 1);
  n_ = static_cast<std::size_t>(r1);
}

}  // namespace tune
