#include "tune/study/trial.hpp"

#include <stdexcept>

namespace tune {

const char* to_string(Direction direction) {
  return direction == Direction::maximize ? "maximize" : "minimize";
}

Direction direction_from_string(const std::string& name) {
  if (name == "minimize" || name == "min") return Direction::minimize;
  if (name == "maximize" || name == "max") return Direction::maximize;
  throw std::invalid_argument("unknown direction '" + name + "': expected 'minimize' or 'maximize'");
}

const char* to_string(TrialStatus status) {
  switch (status) {
    case TrialStatus::pending: return "pending";
    case TrialStatus::complete: return "complete";
    case TrialStatus::failed: return "failed";
  }
  return "?";
}

TrialStatus trial_status_from_string(const std::string& name) {
  if (name == "pending") return TrialStatus::pending;
  if (name == "complete") return TrialStatus::complete;
  if (name == "failed") return TrialStatus::failed;
  throw std::invalid_argument("unknown trial status '" + name + "': expected pending, complete or failed");
}

}  // namespace tune
