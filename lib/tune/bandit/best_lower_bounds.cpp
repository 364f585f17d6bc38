#include "tune/bandit/best_lower_bounds.hpp"

#include <algorithm>
#include <stdexcept>

namespace tune {

std::vector<std::pair<double, Eigen::Index>> best_lower_bounds(const GaussianProcess& gp, const Eigen::MatrixXd& X,
                                                               const Acquisition& lower_bound, std::size_t count) {
  if (lower_bound.type != AcquisitionType::ucb || !(lower_bound.sqrt_beta <= 0.0))
    throw std::invalid_argument("best_lower_bounds: the score must be mean - kappa sd with kappa >= 0");
  // A block of 32 points per solve: L is read once per block, and few blocks are needed.
  constexpr std::size_t kBlock = 32;
  const Eigen::VectorXd mean = gp.predict_mean(X);
  std::vector<Eigen::Index> by_mean(static_cast<std::size_t>(X.cols()));
  for (Eigen::Index j = 0; j < X.cols(); ++j) by_mean[static_cast<std::size_t>(j)] = j;
  std::stable_sort(by_mean.begin(), by_mean.end(), [&](Eigen::Index a, Eigen::Index b) { return mean(a) > mean(b); });
  const auto better = [](const std::pair<double, Eigen::Index>& a, const std::pair<double, Eigen::Index>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::vector<std::pair<double, Eigen::Index>> best;
  for (std::size_t begin = 0; begin < by_mean.size(); begin += kBlock) {
    if (count == 0 || (best.size() == count && mean(by_mean[begin]) < best.back().first)) break;
    const std::size_t end = std::min(by_mean.size(), begin + kBlock);
    Eigen::MatrixXd block(X.rows(), static_cast<Eigen::Index>(end - begin));
    for (std::size_t k = begin; k < end; ++k) block.col(static_cast<Eigen::Index>(k - begin)) = X.col(by_mean[k]);
    const Eigen::VectorXd variance = gp.predict_variance(block);
    for (std::size_t k = begin; k < end; ++k)
      best.emplace_back(lower_bound.score(mean(by_mean[k]), variance(static_cast<Eigen::Index>(k - begin))), by_mean[k]);
    std::sort(best.begin(), best.end(), better);
    if (best.size() > count) best.resize(count);
  }
  return best;
}

}  // namespace tune
