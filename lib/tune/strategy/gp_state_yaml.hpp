#pragma once
// The fitted state of a GP strategy's model as YAML: its hyperparameters and output
// standardisation, under state["hyperparameters"] and state["standardization"]. Shared by the GP
// strategies so that their saved studies spell the model alike. The offset variance and the
// per-group blocks (discrepancy ratios and lengthscale factors, scales, trends) are written only
// when set, and read as absent = 0 / none. An active output transform goes under
// state["output_transform"].
#include <yaml-cpp/yaml.h>

#include "tune/gp/gaussian_process.hpp"
#include "tune/gp/output_transform.hpp"

namespace tune {

void write_gp_state(YAML::Node& state, const GpHyperparameters& hyperparameters, const Standardization& standardization);

// Reads what write_gp_state wrote; throws StateError naming the field. Returns the hyperparameters
// node, for messages about a model that cannot be built from them.
YAML::Node read_gp_state(const YAML::Node& state, GpHyperparameters& hyperparameters, Standardization& standardization);

// Writes nothing for an inactive transform; reads an absent one as inactive. Throws StateError for
// a transform that cannot invert (scale or shift <= 0, reference or lambda not finite).
void write_output_transform(YAML::Node& state, const OutputTransform& transform);
OutputTransform read_output_transform(const YAML::Node& state);
// A {fence, value} map (value_floor.hpp), refused with the field's name and line unless both are
// finite and value >= fence; and its writer (a floor that exists).
ValueFloor read_value_floor(const YAML::Node& node, const std::string& field);
YAML::Node value_floor_yaml(const ValueFloor& floor);

}  // namespace tune
