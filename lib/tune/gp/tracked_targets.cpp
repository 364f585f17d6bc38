// GaussianProcess's tracked targets (see gaussian_process.hpp): columns of V = L^{-1} K(D, t) kept
// current one row per added observation.
#include <Eigen/Dense>
#include <algorithm>
#include <stdexcept>
#include <vector>
#include <string>

#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/simd_paths.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && defined(__SSE2__) && !defined(EIGEN_VECTORIZE_AVX) && \
    !defined(EIGEN_VECTORIZE_FMA)
#include <immintrin.h>
#define TUNE_REPLAYS_EIGEN_DOT 1
#else
#define TUNE_REPLAYS_EIGEN_DOT 0
#endif

namespace tune {
namespace {
#if TUNE_REPLAYS_EIGEN_DOT
// Eigen's l.dot(v.head(size)) for four columns v at once, size >= 4: its redux (SSE2, packets of
// two, no fused multiply-add) starts one packet from the products of k = 0, 1 and another from
// k = 2, 3, adds the products of each later four in the same way, adds the second packet to the
// first, then the products of a last pair if any, sums the two lanes, then adds the last product
// when size is odd. Here one AVX register per column holds both packets (its low and high halves),
// and l's four values are loaded once for the four columns: the same operations, lane by lane.
__attribute__((target("avx"))) void dot4_avx(const double* l, const double* const v[4], Eigen::Index size,
                                            double out[4]) {
  const Eigen::Index end2 = (size / 4) * 4;
  const Eigen::Index end = (size / 2) * 2;
  __m256d lp = _mm256_loadu_pd(l);
  __m256d a0 = _mm256_mul_pd(lp, _mm256_loadu_pd(v[0]));
  __m256d a1 = _mm256_mul_pd(lp, _mm256_loadu_pd(v[1]));
  __m256d a2 = _mm256_mul_pd(lp, _mm256_loadu_pd(v[2]));
  __m256d a3 = _mm256_mul_pd(lp, _mm256_loadu_pd(v[3]));
  for (Eigen::Index k = 4; k < end2; k += 4) {
    lp = _mm256_loadu_pd(l + k);
    a0 = _mm256_add_pd(a0, _mm256_mul_pd(lp, _mm256_loadu_pd(v[0] + k)));
    a1 = _mm256_add_pd(a1, _mm256_mul_pd(lp, _mm256_loadu_pd(v[1] + k)));
    a2 = _mm256_add_pd(a2, _mm256_mul_pd(lp, _mm256_loadu_pd(v[2] + k)));
    a3 = _mm256_add_pd(a3, _mm256_mul_pd(lp, _mm256_loadu_pd(v[3] + k)));
  }
  const __m256d acc[4] = {a0, a1, a2, a3};
  for (int t = 0; t < 4; ++t) {
    __m128d p = _mm_add_pd(_mm256_castpd256_pd128(acc[t]), _mm256_extractf128_pd(acc[t], 1));
    if (end > end2) p = _mm_add_pd(p, _mm_mul_pd(_mm_loadu_pd(l + end2), _mm_loadu_pd(v[t] + end2)));
    double res = _mm_cvtsd_f64(_mm_add_sd(p, _mm_unpackhi_pd(p, p)));
    for (Eigen::Index k = end; k < size; ++k) res = res + l[k] * v[t][k];
    out[t] = res;
  }
}
#endif
}  // namespace

std::size_t GaussianProcess::track_target(Observation target) {
  std::vector<Observation> one;
  one.push_back(std::move(target));
  return track_targets(std::move(one)).front();
}

std::vector<std::size_t> GaussianProcess::track_targets(std::vector<Observation> targets) {
  for (const Observation& t : targets)
    if (static_cast<std::size_t>(location(t.query).size()) != dim_)
      throw std::invalid_argument("GP: tracked target of the wrong dimension");
  std::vector<std::size_t> slots;
  for (Observation& target : targets) {
    std::size_t slot = targets_.size();
    if (!free_target_slots_.empty()) {
      slot = free_target_slots_.back();
      free_target_slots_.pop_back();
    } else {
      targets_.emplace_back();
    }
    TrackedTarget& t = targets_[slot];
    t.target = std::move(target);
    t.live = true;
    t.tail_residual.resize(0);  // a reused slot's residual was another target's
    t.tail_epoch = 0;
    t.tail_covered = 0;
    slots.push_back(slot);
  }
  if (!tail_attached_ || tail_.rows.empty()) {
    fill_target_columns(slots);
    return slots;
  }
  // With the failed trials' fantasy rows on: the rows before them, the tail's rows as
  // attach_fantasy_tail makes them (residual against the kept block, solved by its factor), then the
  // rows after (pending fantasies), each by the one formula of an added row.
  const Eigen::Index begin = static_cast<Eigen::Index>(tail_begin_);
  const Eigen::Index f = static_cast<Eigen::Index>(tail_.rows.size());
  fill_target_columns(slots, 0, begin);
  for (std::size_t slot : slots) {
    TrackedTarget& t = targets_[slot];
    update_tail_target_residual(t);
    Eigen::VectorXd w = t.tail_residual;
    tail_.factor.triangularView<Eigen::Lower>().solveInPlace(w);
    if (t.v.size() < begin + f) t.v.conservativeResize(std::max<Eigen::Index>(2 * t.v.size(), begin + f));
    t.v.segment(begin, f) = w;
  }
  fill_target_columns(slots, begin + f);
  return slots;
}

void GaussianProcess::fill_target_columns(const std::vector<std::size_t>& slots, Eigen::Index from, Eigen::Index to) {
  // Row i of every column is fill_target_row's, as for an append: the same dot product of the same
  // numbers, so a column is the same whenever it was filled. Blocks of 32
  // columns keep their prefixes in cache across the rows. L's rows are strided: one block (an ask's
  // new nodes) copies each row once; more (a refit re-tracking every node) transpose L once.
  const Eigen::Index n = to < 0 ? static_cast<Eigen::Index>(n_) : to;
  if (from >= n || slots.empty()) return;
  constexpr std::size_t block = 32;
  Eigen::MatrixXd Lt;
  if (slots.size() > block) Lt = L_.topLeftCorner(n, n).transpose();
  // One block: L's rows copied 16 at a time, column segment by column segment (a row read alone
  // touched one cache line and page per entry, L's columns being a power of two apart: 9% of an
  // ask at 2000 trials).
  constexpr Eigen::Index kTile = 16;
  std::vector<double> tile;
  Eigen::Index tile_begin = -1, tile_stride = 0;
  for (std::size_t first = 0; first < slots.size(); first += block) {
    const std::size_t last = std::min(slots.size(), first + block);
    for (Eigen::Index i = from; i < n; ++i) {
      if (Lt.size() == 0 && (tile_begin < 0 || i >= tile_begin + kTile)) {
        tile_begin = i;
        const Eigen::Index tile_end = std::min(n, i + kTile);
        tile_stride = tile_end;
        tile.resize(static_cast<std::size_t>(kTile * tile_stride));
        for (Eigen::Index k = 0; k + 1 < tile_end; ++k)
          for (Eigen::Index r = std::max(tile_begin, k + 1); r < tile_end; ++r)
            tile[static_cast<std::size_t>((r - tile_begin) * tile_stride + k)] = L_(r, k);
      }
      const double* row_data =
          Lt.size() == 0 ? tile.data() + (i - tile_begin) * tile_stride : Lt.col(i).data();
      const Eigen::Map<const Eigen::VectorXd> row(row_data, i);
      std::size_t j = first;
#if TUNE_REPLAYS_EIGEN_DOT
      // Four columns at a time where the processor has AVX (fill_target_row's numbers, dot4_avx).
      if (i >= 4 && avx_loops_enabled())
        for (; j + 4 <= last; j += 4) {
          const double* v[4];
          double k[4], dot[4];
          for (std::size_t q = 0; q < 4; ++q) {
            TrackedTarget& t = targets_[slots[j + q]];
            if (t.v.size() <= i) t.v.conservativeResize(std::max<Eigen::Index>({2 * t.v.size(), i + 1, 16}));
            k[q] = fast_observation_covariance(kernel_, groups(), observations_[static_cast<std::size_t>(i)], t.target);
            v[q] = t.v.data();
          }
          dot4_avx(row.data(), v, i, dot);
          for (std::size_t q = 0; q < 4; ++q) targets_[slots[j + q]].v(i) = (k[q] - dot[q]) / L_(i, i);
        }
#endif
      for (; j < last; ++j) fill_target_row(i, row, targets_[slots[j]]);
    }
  }
}

void GaussianProcess::untrack_target(std::size_t slot) {
  if (slot >= targets_.size() || !targets_[slot].live) throw std::out_of_range("GP: no tracked target in that slot");
  targets_[slot].live = false;
  free_target_slots_.push_back(slot);
}

const Eigen::VectorXd& GaussianProcess::target_column(std::size_t slot) const {
  if (slot >= targets_.size() || !targets_[slot].live) throw std::out_of_range("GP: no tracked target in that slot");
  return targets_[slot].v;
}

void GaussianProcess::append_target_row(std::size_t row, const std::vector<std::size_t>* slots) {
  if (targets_.empty()) return;
  const Eigen::Index i = static_cast<Eigen::Index>(row);
  if (row_buffer_.size() < L_.rows()) row_buffer_.resize(L_.rows());
  row_buffer_.head(i) = L_.row(i).head(i).transpose();
  const Eigen::Map<const Eigen::VectorXd> l_row(row_buffer_.data(), i);
  if (slots) {
    for (std::size_t s : *slots) fill_target_row(i, l_row, targets_[s]);
  } else {
    for (TrackedTarget& t : targets_)
      if (t.live) fill_target_row(i, l_row, t);
  }
}

void GaussianProcess::fill_target_row(Eigen::Index i, const Eigen::Map<const Eigen::VectorXd>& l_row, TrackedTarget& t) {
  // The one formula of every row, (k_i - L_i,<i . v_<i) / L_ii, l_row being L_i,<i.
  if (t.v.size() <= i) t.v.conservativeResize(std::max<Eigen::Index>({2 * t.v.size(), i + 1, 16}));
  const double k = fast_observation_covariance(kernel_, groups(), observations_[static_cast<std::size_t>(i)], t.target);
  t.v(i) = (k - (i > 0 ? l_row.dot(t.v.head(i)) : 0.0)) / L_(i, i);
}

PairPrediction GaussianProcess::predict_tracked_pair(std::size_t a, std::size_t b) const {
  const Eigen::Index n = static_cast<Eigen::Index>(n_);
  const Eigen::VectorXd& va = target_column(a);
  const Eigen::VectorXd& vb = target_column(b);
  const Observation& x = targets_[a].target;
  const Observation& y = targets_[b].target;
  const double s = standardization_.scale;
  PairPrediction p;
  // a == b (a level that observes f itself, cmets's top level): one column, so two O(n) sums instead
  // of five. v.dot(v) and v.squaredNorm() are the same sums (Eigen's redux of v_k v_k in one order),
  // and so are the three prior covariances (same target twice).
  const bool same = a == b;
  p.mean(0) = standardization_.mean + s * (n > 0 ? va.head(n).dot(a_.head(n)) : 0.0);
  p.mean(1) = same ? p.mean(0) : standardization_.mean + s * (n > 0 ? vb.head(n).dot(a_.head(n)) : 0.0);
  const double aa = n > 0 ? va.head(n).squaredNorm() : 0.0;
  const double bb = same ? aa : n > 0 ? vb.head(n).squaredNorm() : 0.0;
  const double ab = same ? aa : n > 0 ? va.head(n).dot(vb.head(n)) : 0.0;
  const double kxx = fast_observation_covariance(kernel_, groups(), x, x);
  const double kyy = same ? kxx : fast_observation_covariance(kernel_, groups(), y, y);
  const double kxy = same ? kxx : fast_observation_covariance(kernel_, groups(), x, y);
  p.covariance(0, 0) = s * s * std::max(0.0, kxx - aa);
  p.covariance(1, 1) = s * s * std::max(0.0, kyy - bb);
  p.covariance(0, 1) = p.covariance(1, 0) = s * s * (kxy - ab);
  return p;
}

}  // namespace tune
