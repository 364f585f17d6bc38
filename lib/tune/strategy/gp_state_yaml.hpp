#pragma once
// The fitted state of a GP strategy's model as YAML: its hyperparameters and output
// standardisation, under state["hyperparameters"] and state["standardization"]. Shared by the GP
// strategies so that their saved studies spell the model alike. The offset variance and the
// discrepancy ratios are written only when set, and read as absent = 0 / none.
#include <yaml-cpp/yaml.h>

#include "tune/gp/gaussian_process.hpp"

namespace tune {

void write_gp_state(YAML::Node& state, const GpHyperparameters& hyperparameters, const Standardization& standardization);

// Reads what write_gp_state wrote; throws StateError naming the field. Returns the hyperparameters
// node, for messages about a model that cannot be built from them.
YAML::Node read_gp_state(const YAML::Node& state, GpHyperparameters& hyperparameters, Standardization& standardization);

}  // namespace tune
