// The argmax of an expensive score when a cheap upper bound of it is at hand.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

namespace tune {

struct BoundedArgmax {
  Eigen::Index index = 0;
  double ratio = 0.0;  // score(index) / divisor(index)
};

// The eligible i in [0, scores.size()) with the largest scores.score(i) / divisor(i), ties to the
// lowest i: exactly what a scan of every score finds, provided scores.upper_bound(i) >=
// scores.score(i) in floating point. Scores are taken in decreasing order of their bound and only
// while a bound can still reach the best so far, so when most candidates are far behind the
// leader (CMES: a quadrature per score, a few calls per bound) most are never scored.
// Scores: size(), score(i), upper_bound(i). Throws if a bound or a computed score is NaN.
template <class Scores, class Divisor, class Eligible>
std::optional<BoundedArgmax> bounded_argmax(const Scores& scores, Divisor divisor, Eligible eligible) {
  const Eigen::Index m = scores.size();
  std::vector<double> bound(static_cast<std::size_t>(m));
  for (Eigen::Index i = 0; i < m; ++i) {
    bound[static_cast<std::size_t>(i)] = scores.upper_bound(i) / divisor(i);
    if (std::isnan(bound[static_cast<std::size_t>(i)])) throw std::runtime_error("bounded_argmax: a bound is NaN");
  }
  std::vector<Eigen::Index> order(static_cast<std::size_t>(m));
  for (Eigen::Index i = 0; i < m; ++i) order[static_cast<std::size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](Eigen::Index a, Eigen::Index b) {
    return bound[static_cast<std::size_t>(a)] > bound[static_cast<std::size_t>(b)];
  });
  std::optional<BoundedArgmax> best;
  for (const Eigen::Index i : order) {
    if (best && bound[static_cast<std::size_t>(i)] < best->ratio) break;
    if (!eligible(i)) continue;
    const double ratio = scores.score(i) / divisor(i);
    if (std::isnan(ratio)) throw std::runtime_error("bounded_argmax: a score is NaN");
    if (!best || ratio > best->ratio || (ratio == best->ratio && i < best->index)) best = BoundedArgmax{i, ratio};
  }
  return best;
}

// bounded_argmax for scores >= 0 that become negligible, then underflow, far from the optimum (CMES:
// max_value_entropy.hpp, cmes_log_tail). When the best eligible ratio is at most `negligible`, so
// is every one, and an argmax among them (of zeros, once they underflow: the first candidate)
// means nothing; this takes the eligible i with the largest key(i) instead (ties to the lowest i),
// with its own ratio.
template <class Scores, class Divisor, class Eligible, class Key>
std::optional<BoundedArgmax> bounded_argmax_or_key(const Scores& scores, Divisor divisor, Eligible eligible, Key key,
                                                   double negligible = 0.0) {
  std::optional<BoundedArgmax> best = bounded_argmax(scores, divisor, eligible);
  if (!best || best->ratio > negligible) return best;
  double best_key = -std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < scores.size(); ++i) {
    if (!eligible(i)) continue;
    const double k = key(i);
    if (std::isnan(k)) throw std::runtime_error("bounded_argmax_or_key: a key is NaN");
    if (k > best_key) {
      best_key = k;
      *best = BoundedArgmax{i, scores.score(i) / divisor(i)};
    }
  }
  return best;
}

}  // namespace tune
