#include "tune/strategy/gp_state_yaml.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "tune/io/yaml_values.hpp"

namespace tune {

namespace {
YAML::Node yaml_doubles(const std::vector<double>& v) {
  return yaml_vector(Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size())));
}
}  // namespace

void write_gp_state(YAML::Node& state, const GpHyperparameters& h, const Standardization& s) {
  YAML::Node hp;
  hp["kernel"] = to_string(h.kernel);
  hp["lengthscales"] = yaml_vector(h.lengthscales);
  hp["outputscale"] = yaml_double(h.outputscale);
  hp["noise_variances"] = yaml_doubles(h.noise_variances);
  if (h.offset_variance != 0.0) hp["offset_variance"] = yaml_double(h.offset_variance);
  if (!h.discrepancy_ratios.empty()) hp["discrepancy_ratios"] = yaml_doubles(h.discrepancy_ratios);
  if (!h.group_scales.empty()) hp["group_scales"] = yaml_doubles(h.group_scales);
  if (!h.trend_variances.empty()) hp["trend_variances"] = yaml_doubles(h.trend_variances);
  if (!h.discrepancy_lengthscale_factors.empty())
    hp["discrepancy_lengthscale_factors"] = yaml_doubles(h.discrepancy_lengthscale_factors);
  state["hyperparameters"] = hp;
  state["standardization"]["mean"] = yaml_double(s.mean);
  state["standardization"]["scale"] = yaml_double(s.scale);
}

YAML::Node read_gp_state(const YAML::Node& state, GpHyperparameters& h, Standardization& s) {
  const YAML::Node hp = require(state, "hyperparameters");
  try {
    h.kernel = kernel_type_from_string(read_string(require(hp, "kernel"), "kernel"));
  } catch (const std::invalid_argument& e) {
    throw StateError(std::string("hyperparameters.kernel at ") + position_of(hp["kernel"]) + ": " + e.what());
  }
  h.lengthscales = read_vector(require(hp, "lengthscales"), "lengthscales");
  h.outputscale = read_double(require(hp, "outputscale"), "outputscale");
  h.noise_variances = read_doubles(require(hp, "noise_variances"), "noise_variances");
  h.offset_variance = hp["offset_variance"] ? read_double(hp["offset_variance"], "offset_variance") : 0.0;
  h.discrepancy_ratios.clear();
  if (hp["discrepancy_ratios"]) h.discrepancy_ratios = read_doubles(hp["discrepancy_ratios"], "discrepancy_ratios");
  h.group_scales.clear();
  if (hp["group_scales"]) h.group_scales = read_doubles(hp["group_scales"], "group_scales");
  h.trend_variances.clear();
  if (hp["trend_variances"]) h.trend_variances = read_doubles(hp["trend_variances"], "trend_variances");
  h.discrepancy_lengthscale_factors.clear();
  if (hp["discrepancy_lengthscale_factors"])
    h.discrepancy_lengthscale_factors = read_doubles(hp["discrepancy_lengthscale_factors"], "discrepancy_lengthscale_factors");
  const YAML::Node st = require(state, "standardization");
  s.mean = read_double(require(st, "mean"), "standardization.mean");
  s.scale = read_double(require(st, "scale"), "standardization.scale");
  return hp;
}

ValueFloor read_value_floor(const YAML::Node& node, const std::string& field) {
  const ValueFloor floor{.fence = read_double(require(node, "fence"), field + ".fence"),
                         .value = read_double(require(node, "value"), field + ".value")};
  if (!std::isfinite(floor.fence) || !std::isfinite(floor.value) || floor.value < floor.fence)
    throw StateError("field '" + field + "' at " + position_of(node) +
                     ": fence and value must be finite numbers with value >= fence (or no " + field + ": none)");
  return floor;
}

YAML::Node value_floor_yaml(const ValueFloor& floor) {
  YAML::Node f;
  f["fence"] = yaml_double(floor.fence);
  f["value"] = yaml_double(floor.value);
  f.SetStyle(YAML::EmitterStyle::Flow);
  return f;
}

void write_output_transform(YAML::Node& state, const OutputTransform& transform) {
  if (transform.floor.exists()) state["value_floor"] = value_floor_yaml(transform.floor);
  if (!transform.active) return;
  YAML::Node t;
  t["reference"] = yaml_double(transform.reference);
  t["scale"] = yaml_double(transform.scale);
  t["shift"] = yaml_double(transform.shift);
  t["lambda"] = yaml_double(transform.lambda);
  state["output_transform"] = t;
}

OutputTransform read_output_transform(const YAML::Node& state) {
  // Written since the floor exists; a state without it has none (its model was built without one).
  ValueFloor floor;
  if (const YAML::Node f = state["value_floor"]) floor = read_value_floor(f, "value_floor");
  const YAML::Node t = state["output_transform"];
  if (!t) {
    OutputTransform none;
    none.floor = floor;
    return none;
  }
  OutputTransform transform{.active = true,
                            .reference = read_double(require(t, "reference"), "output_transform.reference"),
                            .scale = read_double(require(t, "scale"), "output_transform.scale"),
                            .shift = read_double(require(t, "shift"), "output_transform.shift"),
                            .lambda = read_double(require(t, "lambda"), "output_transform.lambda")};
  // The fit picks lambda in [0, 1) (output_transform.hpp); one outside [0, 1] was never written, and
  // lambda = 7 loaded and warped the rewards into a shape no fit would choose.
  if (!(transform.scale > 0.0) || !(transform.shift > 0.0) || !std::isfinite(transform.reference) ||
      !(transform.lambda >= 0.0 && transform.lambda <= 1.0))
    throw StateError("output_transform at " + position_of(t) +
                     ": scale and shift must be > 0, reference finite and lambda between 0 and 1; restore the "
                     "values tune wrote, or delete output_transform to model the values unwarped until the next refit");
  transform.floor = floor;
  return transform;
}

}  // namespace tune
