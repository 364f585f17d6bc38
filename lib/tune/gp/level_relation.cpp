#include "tune/gp/level_relation.hpp"

#include <cmath>

#include "tune/gp/observation.hpp"

namespace tune {

LevelRelation level_relation(const GpHyperparameters& hp, const Standardization& st, std::size_t level, std::size_t dim) {
  // E |x - 1/2|^2 = d / 12 for x uniform on the cube.
  return level_relation_over_inputs(hp, st, level, static_cast<double>(dim) / 12.0);
}

LevelRelation level_relation_over_inputs(const GpHyperparameters& hp, const Standardization& st, std::size_t level,
                                         double trend_feature_mean_square) {
  LevelRelation r;
  const double s = hp.outputscale;
  r.scale = group_entry(hp.group_scales, level, 1.0);
  r.discrepancy_ratio = group_entry(hp.discrepancy_ratios, level, 0.0);
  // The tilt w . (x - 1/2), w ~ N(0, t I), has variance t E|x - 1/2|^2 averaged over the cube.
  const double trend_variance = group_entry(hp.trend_variances, level, 0.0) * trend_feature_mean_square;
  r.trend_sd = std::sqrt(trend_variance / s);
  const double noise_variance = group_entry(hp.noise_variances, level, 0.0);  // standardised units
  r.noise_sd = std::sqrt(noise_variance) * st.scale;
  r.correlation = r.scale / std::sqrt(r.scale * r.scale + r.discrepancy_ratio + (trend_variance + noise_variance) / s);
  return r;
}

}  // namespace tune
