#pragma once
// A box of the unit cube in the user's units: one range per parameter. Used for the region a
// strategy recommends (gpoo recommends a cell, not a point).
#include <Eigen/Core>
#include <string>
#include <vector>

#include "tune/space/space.hpp"

namespace tune {

struct ParameterRange {
  std::string name;
  // Float and integer parameters: the smallest and largest value in the box (floats: the box's
  // faces decoded, log scales included; integers: the values whose cells' centres lie in the box,
  // or the one whose cell holds the box's centre when no centre does).
  Value low, high;
  // Categorical and ordinal parameters: the choices in the box, by the same rule; empty otherwise.
  std::vector<std::string> choices;
};

// The ranges of the box [lower, upper] (unit-cube coordinates, lower <= upper), in the order of
// the space's parameters; a conditional parameter only if it applies at the box's centre.
std::vector<ParameterRange> decode_box(const Space& space, const Eigen::VectorXd& lower, const Eigen::VectorXd& upper);

// "{x: [0.25, 0.5], act: [relu, tanh]}": for messages.
std::string to_string(const std::vector<ParameterRange>& box);

}  // namespace tune
