#include "tune/strategy/branch_and_bound.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

#include "tune/gp/observation.hpp"

namespace tune {

namespace {

GpHyperparameters make_hyperparameters(const BranchAndBoundOptions& o) {
  GpHyperparameters hp;
  hp.kernel = o.kernel.type();
  hp.lengthscales = o.kernel.lengthscales();
  hp.outputscale = o.kernel.outputscale();
  hp.noise_variances = {o.jitter * o.kernel.outputscale()};
  return hp;
}

}  // namespace

BranchAndBound::BranchAndBound(BranchAndBoundOptions options) : options_(std::move(options)) {
  const auto& o = options_;
  if (o.dim == 0) throw std::invalid_argument("branch and bound: dim must be positive");
  if (o.kernel.dim() != o.dim)
    throw std::invalid_argument("branch and bound: kernel of dimension " + std::to_string(o.kernel.dim()) +
                                " for a search of dimension " + std::to_string(o.dim));
  if (o.max_level == 0 || o.max_level > 62)
    throw std::invalid_argument("branch and bound: max_level must be in 1..62");
  if (!(o.alpha > 0.0 && o.alpha < 1.0)) throw std::invalid_argument("branch and bound: alpha must be in (0, 1)");
  if (!(o.beta_scale > 0.0) || !std::isfinite(o.beta_scale))
    throw std::invalid_argument("branch and bound: beta_scale must be positive");
  if (!(o.jitter > 0.0) || !std::isfinite(o.jitter))
    throw std::invalid_argument("branch and bound: jitter must be positive");
  // (N + 1)^d must fit in 63 bits.
  const double bits = static_cast<double>(o.dim) * std::log2(std::ldexp(1.0, static_cast<int>(o.max_level)) + 1.0);
  if (bits >= 63.0) throw std::invalid_argument("branch and bound: finest lattice too large to index");
  if (o.dim > kMaxDim)
    throw std::invalid_argument("branch and bound: dim must be at most " + std::to_string(kMaxDim));
  finest_ = std::int64_t{1} << o.max_level;
  cap_ = o.round_cap > 0 ? o.round_cap : default_round_cap(o.dim);
  candidate_cap_ = o.candidate_cap > 0 ? o.candidate_cap : kDefaultCandidateCap;
  gp_ = GaussianProcess(o.dim, make_hyperparameters(o), Standardization{0.0, 1.0});

  std::vector<std::int64_t> lo(o.dim, 0), hi(o.dim, finest_);
  level_ = 1;
  set_relevant(lattice_in_box(lo, hi, 1));
  start_round();
  advance();
}

std::size_t BranchAndBound::default_round_cap(std::size_t dim) {
  return std::min<std::size_t>(std::size_t{4} << std::min<std::size_t>(dim, 16), kMaxDefaultRoundCap);
}

void BranchAndBound::rebase(const Kernel& kernel, const std::vector<double>& values) {
  if (kernel.dim() != options_.dim)
    throw std::invalid_argument("branch and bound: kernel of dimension " + std::to_string(kernel.dim()) +
                                " for a search of dimension " + std::to_string(options_.dim));
  if (values.size() != records_.size())
    throw std::invalid_argument("branch and bound: rebase needs one value per sample");
  for (double v : values)
    if (!std::isfinite(v)) throw std::invalid_argument("branch and bound: non-finite value");
  options_.kernel = kernel;
  gp_ = GaussianProcess(options_.dim, make_hyperparameters(options_), Standardization{0.0, 1.0});
  std::vector<Observation> obs;
  obs.reserve(records_.size());
  for (std::size_t i = 0; i < records_.size(); ++i) {
    records_[i].value = values[i];
    // Built in place: GCC 12 at -O1 (the sanitizer build) flags a moved temporary's variant as
    // maybe-uninitialized.
    Observation& o = obs.emplace_back();
    o.query = PointQuery{records_[i].point};
    o.value = values[i];
  }
  if (!obs.empty()) gp_.add(std::move(obs));
  set_relevant(std::move(relevant_));
  ++rebases_;
}

BranchAndBound BranchAndBound::replay(BranchAndBoundOptions options, const std::vector<BranchAndBoundRecord>& records) {
  BranchAndBound b(std::move(options));
  for (const auto& r : records) b.tell(r.point, r.value);
  return b;
}

double BranchAndBound::lattice_size(std::size_t level) const {
  return std::pow(std::ldexp(1.0, static_cast<int>(level)) + 1.0, static_cast<double>(options_.dim));
}

double BranchAndBound::beta(std::size_t t, std::size_t level) const {
  const double tt = static_cast<double>(std::max<std::size_t>(t, 1));
  const double pi_t = std::numbers::pi * std::numbers::pi * tt * tt / 6.0;
  return options_.beta_scale * 2.0 * std::log(lattice_size(level) * pi_t / options_.alpha);
}

double BranchAndBound::pruned_fraction() const {
  return 1.0 - static_cast<double>(relevant_.size()) / lattice_size(level_);
}

Eigen::VectorXd BranchAndBound::point_of(Key key) const {
  const std::size_t d = options_.dim;
  const auto base = static_cast<Key>(finest_ + 1);
  Eigen::VectorXd x(static_cast<Eigen::Index>(d));
  for (std::size_t k = d; k-- > 0;) {
    x(static_cast<Eigen::Index>(k)) = static_cast<double>(key % base) / static_cast<double>(finest_);
    key /= base;
  }
  return x;
}

BranchAndBound::Key BranchAndBound::key_of(const Eigen::VectorXd& point) const {
  if (static_cast<std::size_t>(point.size()) != options_.dim)
    throw std::invalid_argument("branch and bound: point of the wrong dimension");
  const auto base = static_cast<Key>(finest_ + 1);
  Key key = 0;
  for (Eigen::Index k = 0; k < point.size(); ++k) {
    const double s = point(k) * static_cast<double>(finest_);
    if (!std::isfinite(s)) throw std::invalid_argument("branch and bound: non-finite point");
    const double r = std::round(s);
    if (std::abs(s - r) > 1e-9 * static_cast<double>(finest_) || r < 0.0 || r > static_cast<double>(finest_))
      throw std::invalid_argument("branch and bound: point is not on the finest lattice");
    key = key * base + static_cast<Key>(r);
  }
  return key;
}

std::vector<BranchAndBound::Key> BranchAndBound::lattice_in_box(const std::vector<std::int64_t>& lo,
                                                                const std::vector<std::int64_t>& hi,
                                                                std::size_t level) const {
  const std::size_t d = options_.dim;
  const std::int64_t step = std::int64_t{1} << (options_.max_level - level);
  std::vector<std::int64_t> first(d), last(d);
  for (std::size_t k = 0; k < d; ++k) {
    first[k] = (std::max<std::int64_t>(lo[k], 0) + step - 1) / step * step;
    last[k] = std::min<std::int64_t>(hi[k], finest_) / step * step;
    if (first[k] > last[k]) return {};
  }
  // Odometer with dimension 0 most significant: keys come out in increasing order.
  const auto base = static_cast<Key>(finest_ + 1);
  std::vector<Key> keys;
  std::vector<std::int64_t> idx = first;
  while (true) {
    Key key = 0;
    for (std::size_t k = 0; k < d; ++k) key = key * base + static_cast<Key>(idx[k]);
    keys.push_back(key);
    std::size_t k = d;
    while (k > 0) {
      --k;
      if (idx[k] + step <= last[k]) {
        idx[k] += step;
        break;
      }
      idx[k] = first[k];
      if (k == 0) return keys;
    }
  }
}

void BranchAndBound::set_relevant(std::vector<Key> keys) {
  relevant_ = std::move(keys);
  Eigen::MatrixXd X(static_cast<Eigen::Index>(options_.dim), static_cast<Eigen::Index>(relevant_.size()));
  for (std::size_t j = 0; j < relevant_.size(); ++j) X.col(static_cast<Eigen::Index>(j)) = point_of(relevant_[j]);
  gp_.track(std::move(X));
}

Eigen::MatrixXd BranchAndBound::relevant_set() const { return gp_.tracked_points(); }

void BranchAndBound::start_round() {
  queue_.clear();
  ucb_remaining_ = 0;
  std::vector<Key> unsampled;
  for (Key k : relevant_)
    if (!sampled_.contains(k)) unsampled.push_back(k);
  if (unsampled.size() > cap_) {
    ucb_remaining_ = cap_;
    ++capped_rounds_;
    return;
  }
  // Farthest-first from everything sampled; ties go to the smaller key (unsampled is sorted).
  std::vector<Eigen::VectorXd> pts;
  pts.reserve(unsampled.size());
  for (Key k : unsampled) pts.push_back(point_of(k));
  std::vector<double> dist(unsampled.size(), std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < unsampled.size(); ++i)
    for (const auto& r : records_) dist[i] = std::min(dist[i], (pts[i] - r.point).squaredNorm());
  std::vector<bool> used(unsampled.size(), false);
  for (std::size_t n = 0; n < unsampled.size(); ++n) {
    std::size_t pick = unsampled.size();
    for (std::size_t i = 0; i < unsampled.size(); ++i)
      if (!used[i] && (pick == unsampled.size() || dist[i] > dist[pick])) pick = i;
    used[pick] = true;
    queue_.push_back(unsampled[pick]);
    for (std::size_t i = 0; i < unsampled.size(); ++i)
      if (!used[i]) dist[i] = std::min(dist[i], (pts[i] - pts[pick]).squaredNorm());
  }
}

std::optional<BranchAndBound::Key> BranchAndBound::ucb_argmax() const {
  Eigen::VectorXd mean, variance;
  gp_.tracked_prediction(mean, variance);
  const double b = std::sqrt(beta(records_.size() + 1, level_));
  std::optional<Key> best;
  double best_ucb = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < relevant_.size(); ++j) {
    if (sampled_.contains(relevant_[j])) continue;
    const auto i = static_cast<Eigen::Index>(j);
    const double ucb = mean(i) + b * std::sqrt(variance(i));
    if (!best || ucb > best_ucb) {
      best = relevant_[j];
      best_ucb = ucb;
    }
  }
  return best;
}

void BranchAndBound::prune_in_place() {
  Eigen::VectorXd mean, variance;
  gp_.tracked_prediction(mean, variance);
  const double b = std::sqrt(beta(records_.size(), level_));
  const auto n = static_cast<Eigen::Index>(relevant_.size());
  if (n == 0) return;
  Eigen::Index arg = 0;
  double max_lcb = -std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < n; ++i) {
    const double lcb = mean(i) - b * std::sqrt(variance(i));
    if (lcb > max_lcb) {
      max_lcb = lcb;
      arg = i;
    }
  }
  std::vector<Key> keep;
  for (Eigen::Index i = 0; i < n; ++i)
    if (i == arg || mean(i) + b * std::sqrt(variance(i)) > max_lcb) keep.push_back(relevant_[static_cast<std::size_t>(i)]);
  if (keep.size() != relevant_.size()) set_relevant(std::move(keep));
}

namespace {

// splitmix64: a fixed mixing of a key, so the capped candidate subsets are deterministic without
// an RNG and uncorrelated with the key order.
std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Keeps the `quota` keys of smallest mix(key ^ salt) (all when there are fewer), sorted.
void keep_hashed(std::vector<std::uint64_t>& keys, std::size_t quota, std::uint64_t salt) {
  if (keys.size() <= quota) return;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> h;
  h.reserve(keys.size());
  for (auto k : keys) h.emplace_back(mix(k ^ salt), k);
  std::nth_element(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(quota), h.end());
  keys.clear();
  for (std::size_t i = 0; i < quota; ++i) keys.push_back(h[i].second);
  std::sort(keys.begin(), keys.end());
}

// Upper bound on the keys a dilation may generate before the source set is thinned (8e6 keys,
// 64 MB).
constexpr double kMaxDilationKeys = 8e6;

}  // namespace

std::vector<BranchAndBound::Key> BranchAndBound::dilate(const std::vector<Key>& source, std::size_t level) const {
  // The level-`level` points within one level-`level` step (Chebyshev) of a point of `source`,
  // clipped to the cube, sorted and unique. Sources are thinned (hash order) so that at most
  // kMaxDilationKeys keys are generated (only reachable for d >= 7 with large sets).
  const std::size_t d = options_.dim;
  const std::int64_t step = std::int64_t{1} << (options_.max_level - level);
  const double per = std::pow(3.0, static_cast<double>(d));
  std::vector<Key> from = source;
  if (static_cast<double>(from.size()) * per > kMaxDilationKeys)
    keep_hashed(from, static_cast<std::size_t>(std::max(1.0, kMaxDilationKeys / per)), 0x5eedULL + level);
  const auto base = static_cast<Key>(finest_ + 1);
  std::vector<Key> out;
  out.reserve(static_cast<std::size_t>(static_cast<double>(from.size()) * per));
  std::vector<std::int64_t> c(d), off(d);
  for (Key key : from) {
    Key rest = key;
    for (std::size_t k = d; k-- > 0;) {
      c[k] = static_cast<std::int64_t>(rest % base);
      rest /= base;
    }
    std::fill(off.begin(), off.end(), -1);
    while (true) {
      Key nk = 0;
      bool inside = true;
      for (std::size_t k = 0; k < d && inside; ++k) {
        const std::int64_t v = c[k] + off[k] * step;
        if (v < 0 || v > finest_) inside = false;
        nk = nk * base + static_cast<Key>(v);
      }
      if (inside) out.push_back(nk);
      std::size_t k = d;
      while (k > 0 && off[k - 1] == 1) off[--k] = -1;
      if (k == 0) break;
      ++off[k - 1];
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<BranchAndBound::Key> BranchAndBound::capped_candidates(std::size_t level) const {
  // Rings around R on L_level (level = m + 1): ring 0 is R itself (level-m points are level-(m+1)
  // points), ring r the points at Chebyshev distance exactly r level-(m+1) steps from R (r = 1, 2;
  // ring 2 reaches one level-m spacing, the box's margin). Filled ring by ring up to the cap; the
  // ring that overflows contributes the members of smallest hash. Ring 0 takes at most half the cap
  // so that every refinement adds finer points.
  const std::size_t cap = candidate_cap_;
  const auto salt = static_cast<std::uint64_t>(level) * 0x100000001b3ULL;
  std::vector<Key> ring0 = relevant_;
  keep_hashed(ring0, std::max<std::size_t>(cap / 2, 1), salt);
  std::vector<Key> out = ring0;
  const auto minus = [](const std::vector<Key>& a, const std::vector<Key>& b) {
    std::vector<Key> r;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(r));
    return r;
  };
  std::vector<Key> inner = relevant_;  // the points already at distance < r
  for (int r = 1; r <= 2 && out.size() < cap; ++r) {
    std::vector<Key> dil = dilate(inner, level);
    std::vector<Key> ring = minus(dil, inner);
    keep_hashed(ring, cap - out.size(), salt + static_cast<std::uint64_t>(r));
    std::vector<Key> merged;
    std::merge(out.begin(), out.end(), ring.begin(), ring.end(), std::back_inserter(merged));
    out = std::move(merged);
    inner = std::move(dil);
  }
  return out;
}

void BranchAndBound::end_round() {
  if (level_ == options_.max_level) {
    final_ = true;
    queue_.clear();
    ucb_remaining_ = 0;
    prune_in_place();
    return;
  }
  // Candidates: level m+1 points in the bounding box of R expanded by one level-m spacing; when the
  // box holds more than candidate_cap of them, the capped rings around R instead.
  const std::size_t d = options_.dim;
  const std::int64_t coarse = std::int64_t{1} << (options_.max_level - level_);
  std::vector<std::int64_t> lo(d, finest_), hi(d, 0);
  const auto base = static_cast<Key>(finest_ + 1);
  for (Key key : relevant_) {
    Key rest = key;
    for (std::size_t k = d; k-- > 0;) {
      const auto v = static_cast<std::int64_t>(rest % base);
      rest /= base;
      lo[k] = std::min(lo[k], v);
      hi[k] = std::max(hi[k], v);
    }
  }
  const std::int64_t fine = coarse / 2;
  double box_size = 1.0;
  for (std::size_t k = 0; k < d; ++k) {
    lo[k] = std::max<std::int64_t>(lo[k] - coarse, 0);
    hi[k] = std::min<std::int64_t>(hi[k] + coarse, finest_);
    box_size *= static_cast<double>((hi[k] / fine) - ((lo[k] + fine - 1) / fine) + 1);
  }
  ++level_;
  std::vector<Key> candidates;
  if (box_size <= static_cast<double>(candidate_cap_)) {
    candidates = lattice_in_box(lo, hi, level_);
  } else {
    candidates = capped_candidates(level_);
    ++capped_refinements_;
  }
  Eigen::MatrixXd X(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(candidates.size()));
  for (std::size_t j = 0; j < candidates.size(); ++j) X.col(static_cast<Eigen::Index>(j)) = point_of(candidates[j]);
  // Prune the candidates: the tracked set becomes them, then the strict rule applies.
  relevant_ = std::move(candidates);
  gp_.track(std::move(X));
  prune_in_place();
  start_round();
}

void BranchAndBound::advance() {
  while (!final_) {
    bool pending = !queue_.empty();
    if (!pending && ucb_remaining_ > 0) pending = ucb_argmax().has_value();
    if (pending) return;
    end_round();
  }
}

std::optional<Eigen::VectorXd> BranchAndBound::next() const {
  if (!final_ && !queue_.empty()) return point_of(queue_.front());
  const auto key = ucb_argmax();
  if (!key) return std::nullopt;
  return point_of(*key);
}

void BranchAndBound::tell(const Eigen::VectorXd& point, double value) {
  const Key key = key_of(point);
  if (!std::isfinite(value)) throw std::invalid_argument("branch and bound: non-finite value");
  if (sampled_.contains(key)) throw std::invalid_argument("branch and bound: point already sampled");
  const bool in_relevant = std::binary_search(relevant_.begin(), relevant_.end(), key);
  if (in_relevant && (final_ || (queue_.empty() && ucb_remaining_ > 0))) ++ucb_proposals_;
  if (!final_) {
    const auto it = std::find(queue_.begin(), queue_.end(), key);
    if (it != queue_.end()) queue_.erase(it);
    else if (in_relevant && ucb_remaining_ > 0) --ucb_remaining_;
  }
  Eigen::VectorXd x = point_of(key);
  sampled_.emplace(key, records_.size());
  records_.push_back({x, value});
  gp_.add(Observation{PointQuery{std::move(x)}, value, 0});
  if (final_) prune_in_place();
  advance();
}

std::optional<BranchAndBoundRecord> BranchAndBound::best() const {
  std::optional<BranchAndBoundRecord> out;
  for (const auto& r : records_)
    if (!out || r.value > out->value) out = r;
  return out;
}

bool BranchAndBound::sampled(const Eigen::VectorXd& point) const { return sampled_.contains(key_of(point)); }

}  // namespace tune
