// The GP's inlined covariances (fast_observation_covariance, fast_cross_covariance and
// fast_cross_covariance_with_gradient) against the general functions they stand for
// (observation_covariance; group_scale times covariance and covariance_gradient_x), bit for bit:
// both kernels, points, boxes, offset groups with and without scales, discrepancy ratios, trends
// and discrepancy kernels of their own, duplicated points, exact zeros in the differences.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/random/rng.hpp"

namespace {

using tune::Observation;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

struct Setting {
  tune::KernelType kernel;
  bool trends;
  bool discrepancy_kernels;
};

std::vector<Observation> observations(std::mt19937_64& rng, std::size_t dim) {
  std::vector<Observation> out;
  for (int i = 0; i < 40; ++i) {
    Observation& o = out.emplace_back();
    Eigen::VectorXd x(static_cast<Eigen::Index>(dim));
    for (Eigen::Index k = 0; k < x.size(); ++k) x(k) = tune::uniform01(rng);
    if (i % 7 == 3 && i > 0) x = tune::location(out.front().query);  // a duplicated point
    if (i % 9 == 5) x(0) = 0.5;                                               // exact zeros in a difference
    if (i % 6 == 1) {
      o.query = tune::BoxQuery{x.array() * 0.5, x.array() * 0.5 + 0.3};
    } else {
      o.query = tune::PointQuery{x};
    }
    o.noise_group = static_cast<std::size_t>(i % 3);
    if (i % 3 != 2) o.offset_group = static_cast<std::size_t>(i % 3);  // groups 0 and 1; group 1 has no scale
    o.value = tune::uniform01(rng);
  }
  return out;
}

TEST(PointCovariance, InlinedCovariancesAreTheGeneralOnesToTheBit) {
  std::mt19937_64 rng(7);
  for (const Setting setting : {Setting{tune::KernelType::squared_exponential, false, false},
                                Setting{tune::KernelType::matern52, false, false},
                                Setting{tune::KernelType::squared_exponential, true, true},
                                Setting{tune::KernelType::matern52, true, false}}) {
    for (std::size_t dim : {1u, 3u}) {
      Eigen::VectorXd lengthscales(static_cast<Eigen::Index>(dim));
      for (Eigen::Index k = 0; k < lengthscales.size(); ++k) lengthscales(k) = 0.1 + 0.3 * tune::uniform01(rng);
      const tune::Kernel kernel(setting.kernel, lengthscales, 1.7);
      const std::vector<double> ratios{0.3, 0.0}, scales{0.8};
      const std::vector<double> trends = setting.trends ? std::vector<double>{0.0, 0.4} : std::vector<double>{};
      std::vector<tune::Kernel> discrepancy;
      if (setting.discrepancy_kernels) discrepancy.emplace_back(setting.kernel, lengthscales * 2.0, 1.7);
      const tune::GroupCovariance groups{1.1, ratios, scales, trends, discrepancy};
      const std::vector<Observation> obs = observations(rng, dim);
      for (const Observation& a : obs) {
        for (const Observation& b : obs) {
          const double general = tune::observation_covariance(kernel, groups, a, b);
          const double fast = tune::fast_observation_covariance(kernel, groups, a, b);
          EXPECT_TRUE(same_bits(general, fast)) << general << " vs " << fast;
        }
        for (const Observation& b : obs) {
          const Eigen::VectorXd x = tune::location(b.query);
          const double general = tune::group_scale(scales, a) * tune::covariance(kernel, a.query, x);
          EXPECT_TRUE(same_bits(general, tune::fast_cross_covariance(kernel, scales, a, x.data())));
          Eigen::VectorXd gradient(x.size());
          const double with_gradient = tune::fast_cross_covariance_with_gradient(kernel, scales, a, x, gradient.data());
          EXPECT_TRUE(same_bits(general, with_gradient));
          const Eigen::VectorXd general_gradient =
              tune::group_scale(scales, a) * tune::covariance_gradient_x(kernel, a.query, x);
          for (Eigen::Index k = 0; k < x.size(); ++k) {
            EXPECT_TRUE(same_bits(general_gradient(k), gradient(k))) << general_gradient(k) << " vs " << gradient(k);
          }
        }
      }
    }
  }
}

}  // namespace
