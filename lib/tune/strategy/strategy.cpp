#include "tune/strategy/strategy.hpp"

namespace tune {

bool coincides_with_pending(const Eigen::VectorXd& unit, const std::vector<Trial>& trials) {
  for (const Trial& t : trials)
    if (t.status == TrialStatus::pending && t.unit.size() == unit.size() && t.unit == unit) return true;
  return false;
}

}  // namespace tune
