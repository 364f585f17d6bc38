#pragma once
// Shared by the behavioural tests: a space of d floats x0..x{d-1} on [0, 1] (the test functions'
// unit cube) and the median of a sample.
#include <algorithm>
#include <string>
#include <vector>

#include "tune/tune.hpp"

namespace tune::behaviour {

inline Space unit_cube(std::size_t dim) {
  std::vector<Parameter> params;
  for (std::size_t i = 0; i < dim; ++i) params.push_back(Parameter::floating("x" + std::to_string(i), 0, 1));
  return Space(params);
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace tune::behaviour
