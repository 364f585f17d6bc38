#pragma once
// A Study over a multi-fidelity test function (bench/functions/multi_fidelity): one [0, 1] float per
// dimension, the function's levels as the resolution with its declared costs, a cost budget in
// top-level evaluations. Shared by multi_fidelity_cost and multi_resolution_latency.
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "functions/multi_fidelity.hpp"
#include "tune/tune.hpp"

namespace tune::bench {

inline tune::Space unit_space(std::size_t dim) {
  std::vector<tune::Parameter> p;
  for (std::size_t i = 0; i < dim; ++i) p.push_back(tune::Parameter::floating("x" + std::to_string(i), 0, 1));
  return tune::Space(p);
}

inline Eigen::VectorXd unit_of(const tune::Config& c, std::size_t dim) {
  Eigen::VectorXd u(static_cast<Eigen::Index>(dim));
  for (std::size_t i = 0; i < dim; ++i) u(static_cast<Eigen::Index>(i)) = std::get<double>(c.at("x" + std::to_string(i)));
  return u;
}

// The strategy a method runs: "ei" for "ei" and for "ei:output_transform=none".
inline std::string strategy_name(const std::string& method) { return method.substr(0, method.find(':')); }

// "name" or "name:key=value+key=value" with strategy options, e.g.
// "cmets:level_choice=acquisition+window=point+fit.discrepancy_prior_log_median=0".
inline std::unique_ptr<tune::Strategy> make_method(const std::string& method) {
  const std::size_t colon = method.find(':');
  if (colon == std::string::npos) return tune::make_strategy(method);
  YAML::Node options;
  std::string rest = method.substr(colon + 1);
  while (!rest.empty()) {
    const std::size_t plus = rest.find('+');
    const std::string kv = rest.substr(0, plus);
    const std::size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    const std::size_t dot = key.find('.');  // "fit.noise_min=1e-9": a field of a nested block
    if (dot == std::string::npos) options[key] = kv.substr(eq + 1);
    else options[key.substr(0, dot)][key.substr(dot + 1)] = kv.substr(eq + 1);
    rest = plus == std::string::npos ? "" : rest.substr(plus + 1);
  }
  return tune::make_strategy(strategy_name(method), options);
}

inline tune::Study multi_fidelity_study(const tune::testfn::MultiFidelityFunction& fn, const std::string& method,
                                        std::uint64_t seed, double budget) {
  tune::StudyOptions so;
  so.direction = tune::Direction::minimize;
  so.seed = seed;
  tune::Resolution r;
  r.parameter = "fidelity";
  for (std::size_t l = 0; l < fn.levels(); ++l) r.values.push_back(static_cast<double>(l + 1));
  r.costs = fn.cost;
  so.resolution = r;
  so.cost_budget = budget;
  return tune::Study(unit_space(fn.dim()), make_method(method), so);
}

}  // namespace tune::bench
