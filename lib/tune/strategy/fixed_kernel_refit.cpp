#include "tune/strategy/fixed_kernel_refit.hpp"

#include <algorithm>
#include <cmath>

#include "tune/io/yaml_values.hpp"
#include "tune/random/rng.hpp"
#include "tune/strategy/gp_state_yaml.hpp"

namespace tune {

bool FixedKernelRefit::due(const RefitSchedule& s, std::size_t n) const {
  if (n == 0) return false;
  if (refresh_count == 0) return true;
  if (n <= size_at_refresh) return false;
  if (s.every == 0 && s.growth <= 0.0) return false;
  if (n <= s.every) return true;
  const auto by_growth = static_cast<std::size_t>(std::ceil(s.growth * static_cast<double>(n)));
  return n - size_at_refresh >= std::max<std::size_t>({s.every, by_growth, 1});
}

void FixedKernelRefit::refresh(const std::vector<Observation>& told, KernelType kernel, std::size_t dim,
                               const HyperparameterFitOptions& fit, bool fit_noise, double fixed_noise,
                               std::uint64_t seed) {
  floor = next_value_floor(floor, told);
  std::vector<Observation> observations = told;
  for (Observation& o : observations) o.value = floor(o.value);
  if (refresh_count == 0 || hyperparameters.kernel != kernel ||
      static_cast<std::size_t>(hyperparameters.lengthscales.size()) != dim)
    hyperparameters = default_hyperparameters(kernel, dim, 1, fit);
  if (!fit_noise) hyperparameters.noise_variances = {fixed_noise};
  standardization = standardization_of(observations);
  if (observations.size() >= kMinFitPoints) {
    HyperparameterFitOptions o = fit;
    if (!fit_noise) o.fit_noise = false;
    Rng rng = make_rng(seed, RngStream::hyperparameter_fit, refresh_count);
    hyperparameters = fit_hyperparameters(observations, standardization, hyperparameters, o, rng).hyperparameters;
  }
  ++refresh_count;
  size_at_refresh = observations.size();
}

void FixedKernelRefit::write(YAML::Node& state) const {
  state["refresh_count"] = refresh_count;
  state["size_at_refresh"] = size_at_refresh;
  if (refresh_count > 0) write_gp_state(state, hyperparameters, standardization);
  if (floor.exists()) state["value_floor"] = value_floor_yaml(floor);
}

void FixedKernelRefit::read(const YAML::Node& state) {
  refresh_count = read_uint(require(state, "refresh_count"), "refresh_count");
  size_at_refresh = read_uint(require(state, "size_at_refresh"), "size_at_refresh");
  if (refresh_count > 0) {
    const YAML::Node hp = read_gp_state(state, hyperparameters, standardization);
    if (hyperparameters.noise_variances.empty() || !(hyperparameters.noise_variances[0] > 0.0) ||
        !(standardization.scale > 0.0) || hyperparameters.lengthscales.size() == 0)
      throw StateError("hyperparameters at " + position_of(hp) + ": a positive noise variance, lengthscales and a "
                       "positive standardisation scale are needed");
  } else {
    hyperparameters = GpHyperparameters{};
    standardization = Standardization{};
  }
  // Written since the floor exists; a state without it has none (its values were standardised raw).
  floor = state["value_floor"] ? read_value_floor(state["value_floor"], "value_floor") : ValueFloor{};
}

}  // namespace tune
