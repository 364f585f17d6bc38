#include "tune/strategy/strategy.hpp"

#include "tune/io/yaml_values.hpp"

namespace tune {

const Trial& trial_by_id(const std::vector<Trial>& trials, std::uint64_t id) {
  if (id >= trials.size() || trials[id].id != id)
    throw StateError("strategy state refers to trial " + std::to_string(id) + ", which the study does not hold");
  return trials[id];
}

bool coincides_with_pending(const Eigen::VectorXd& unit, const std::vector<Trial>& trials) {
  for (const Trial& t : trials)
    if (t.status == TrialStatus::pending && t.unit.size() == unit.size() && t.unit == unit) return true;
  return false;
}

std::vector<double> unit_key(const Eigen::VectorXd& unit) { return {unit.data(), unit.data() + unit.size()}; }

}  // namespace tune
