#include "tune/strategy/failure_probability.hpp"

#include <algorithm>
#include <functional>

namespace tune {

double failed_run_ceiling(std::vector<double> rewards) {
  if (rewards.empty()) return 0.0;
  const auto middle = rewards.begin() + static_cast<std::ptrdiff_t>(rewards.size() / 2);
  std::nth_element(rewards.begin(), middle, rewards.end(), std::greater<>());
  return *middle;
}

FailureProbability::FailureProbability(const std::vector<Trial>& trials, const Kernel& kernel, std::size_t levels,
                                       const ModelInputs* inputs)
    : kernel_(kernel) {
  std::size_t finished = 0;
  std::vector<double> finished_at(std::max<std::size_t>(levels, 1), 0.0), failed_at(finished_at.size(), 0.0);
  const auto level_of = [&](const Trial& t) { return std::min(t.level.value_or(levels), finished_at.size() - 1); };
  for (const Trial& t : trials)
    if (t.status != TrialStatus::pending) {
      ++finished;
      finished_at[level_of(t)] += 1.0;
      if (t.status == TrialStatus::failed) failed_at[level_of(t)] += 1.0;
    }
  points_.resize(static_cast<Eigen::Index>(kernel.dim()), static_cast<Eigen::Index>(finished));
  failed_.resize(static_cast<Eigen::Index>(finished));
  if (levels >= 2) {
    std::vector<double> share(levels, 0.5);
    for (std::size_t l = 0; l < levels; ++l)
      if (finished_at[l] > 0) share[l] = (finished_at[l] - failed_at[l] + 0.5) / (finished_at[l] + 1.0);
    const double best = *std::max_element(share.begin(), share.end());
    level_factors_.resize(levels);
    for (std::size_t l = 0; l < levels; ++l) level_factors_[l] = finished_at[l] > 0 ? share[l] / best : 1.0;
  }
  Eigen::Index j = 0;
  for (const Trial& t : trials) {
    if (t.status == TrialStatus::pending) continue;
    const Eigen::VectorXd x = inputs ? (*inputs)(t.unit) : t.unit;
    if (x.size() != points_.rows())
      throw std::invalid_argument("FailureProbability: trial " + std::to_string(t.id) + " has a point of dimension " +
                                  std::to_string(x.size()) + ", the kernel " + std::to_string(points_.rows()));
    points_.col(j) = x;
    const bool failed = t.status == TrialStatus::failed;
    failed_(j) = failed ? 1.0 : 0.0;
    if (failed) ++failed_count_;
    ++j;
  }
  prior_ = (static_cast<double>(failed_count_) + 0.5) / (static_cast<double>(finished) + 1.0);
}

double FailureProbability::failure(const Eigen::Ref<const Eigen::VectorXd>& unit) const {
  if (failed_count_ == 0) return 0.0;
  const double k0 = kernel_.of_r2(0.0);
  double weight = 1.0, failed = prior_;
  for (Eigen::Index j = 0; j < points_.cols(); ++j) {
    const double w = kernel_(unit, points_.col(j)) / k0;
    weight += w;
    failed += w * failed_(j);
  }
  return failed / weight;
}

}  // namespace tune
