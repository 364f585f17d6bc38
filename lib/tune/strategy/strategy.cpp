#include "tune/strategy/strategy.hpp"

#include "tune/io/yaml_values.hpp"

namespace tune {

const Trial& trial_by_id(const std::vector<Trial>& trials, std::uint64_t id) {
  if (id >= trials.size() || trials[id].id != id)
    throw StateError("strategy state refers to trial " + std::to_string(id) + ", which the study does not hold");
  return trials[id];
}

void check_model_holds_results(const std::vector<std::uint64_t>& ids, const std::vector<Trial>& trials,
                               const std::function<bool(const Trial&)>& belongs, const std::string& field,
                               const YAML::Node& at) {
  const std::string fix =
      ": the trials and the strategy's state disagree, as after an edit of the file by hand; put the "
      "trial's status back as it was (a result is reported with tune tell or Study::tell, which the model "
      "takes in)";
  std::vector<bool> held(trials.size(), false);
  for (std::uint64_t id : ids) {
    if (id < held.size() && held[id])
      throw StateError("field '" + field + "' at " + position_of(at) + ": trial " + std::to_string(id) +
                       " is listed twice" + fix);
    if (id < held.size()) held[id] = true;
  }
  for (const Trial& t : trials)
    if (belongs(t) && !held[t.id])
      throw StateError("trial " + std::to_string(t.id) + " is complete, and its value is not in the model (field '" +
                       field + "' at " + position_of(at) + ")" + fix);
}

bool coincides_with_pending(const Eigen::VectorXd& unit, const std::vector<Trial>& trials) {
  for (const Trial& t : trials)
    if (t.status == TrialStatus::pending && t.unit.size() == unit.size() && t.unit == unit) return true;
  return false;
}

std::size_t imported_results(const std::vector<Trial>& trials, std::optional<std::size_t> level) {
  std::size_t n = 0;
  for (const Trial& t : trials) n += t.imported() && t.status == TrialStatus::complete && (!level || t.level == level);
  return n;
}

std::vector<double> unit_key(const Eigen::VectorXd& unit) { return {unit.data(), unit.data() + unit.size()}; }

}  // namespace tune
