// level_relation against a Monte Carlo sample of the latent model it summarises:
// y = rho f(x) + delta(x) + w . (x - 1/2) + b + e, x uniform on the cube.
#include <gtest/gtest.h>

#include <cmath>

#include "tune/gp/level_relation.hpp"
#include "tune/random/rng.hpp"

namespace {

TEST(LevelRelation, CorrelationMatchesMonteCarloOfTheLatentModel) {
  tune::GpHyperparameters hp;
  hp.lengthscales = Eigen::VectorXd::Constant(3, 0.3);
  hp.outputscale = 2.0;
  hp.noise_variances = {0.3, 0.05, 1e-4};  // levels 0, 1 and the top, standardised
  hp.group_scales = {0.6, 1.1};
  hp.discrepancy_ratios = {0.8, 0.05};
  hp.trend_variances = {1.5, 0.2};
  tune::Standardization st;
  st.mean = 4.0;
  st.scale = 2.5;
  const std::size_t d = 3;
  for (std::size_t level = 0; level < 2; ++level) {
    const tune::LevelRelation r = tune::level_relation(hp, st, level, d);
    tune::Rng rng(17 + level);
    const int n = 400000;
    double sf = 0, sy = 0, sff = 0, syy = 0, sfy = 0;
    for (int i = 0; i < n; ++i) {
      // f at one point is N(0, outputscale); the discrepancy, N(0, ratio outputscale).
      const double f = std::sqrt(hp.outputscale) * tune::standard_normal(rng);
      const double delta = std::sqrt(hp.discrepancy_ratios[level] * hp.outputscale) * tune::standard_normal(rng);
      double tilt = 0.0;
      for (std::size_t k = 0; k < d; ++k)
        tilt += std::sqrt(hp.trend_variances[level]) * tune::standard_normal(rng) * (tune::uniform01(rng) - 0.5);
      const double e = std::sqrt(hp.noise_variances[level]) * tune::standard_normal(rng);
      const double y = hp.group_scales[level] * f + delta + tilt + 7.0 + e;
      sf += f, sy += y, sff += f * f, syy += y * y, sfy += f * y;
    }
    const double cov = sfy / n - sf / n * sy / n;
    const double corr = cov / std::sqrt((sff / n - sf / n * sf / n) * (syy / n - sy / n * sy / n));
    EXPECT_NEAR(r.correlation, corr, 0.005) << "level " << level;
    EXPECT_EQ(r.scale, hp.group_scales[level]);
    EXPECT_EQ(r.discrepancy_ratio, hp.discrepancy_ratios[level]);
    EXPECT_NEAR(r.noise_sd, std::sqrt(hp.noise_variances[level]) * 2.5, 1e-12);
  }
  // Without a level structure a group is f itself, observed with its noise.
  tune::GpHyperparameters plain = hp;
  plain.group_scales.clear();
  plain.discrepancy_ratios.clear();
  plain.trend_variances.clear();
  EXPECT_NEAR(tune::level_relation(plain, st, 2, d).correlation, 1.0 / std::sqrt(1.0 + 1e-4 / 2.0), 1e-12);
}

}  // namespace
