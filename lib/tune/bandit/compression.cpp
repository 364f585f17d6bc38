#include "tune/bandit/compression.hpp"

#include <stdexcept>

namespace tune {

const char* to_string(RejectPolicy policy) {
  switch (policy) {
    case RejectPolicy::literal: return "literal";
    case RejectPolicy::next_informative: return "next_informative";
    case RejectPolicy::evaluate_no_add: return "evaluate_no_add";
    case RejectPolicy::stop: return "stop";
  }
  return "?";
}

RejectPolicy reject_policy_from_string(const std::string& name) {
  if (name == "literal") return RejectPolicy::literal;
  if (name == "next_informative") return RejectPolicy::next_informative;
  if (name == "evaluate_no_add") return RejectPolicy::evaluate_no_add;
  if (name == "stop") return RejectPolicy::stop;
  throw std::invalid_argument("unknown rejection policy '" + name +
                              "': expected literal, next_informative, evaluate_no_add or stop");
}

}  // namespace tune
