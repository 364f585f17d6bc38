#pragma once
// One-call tuning of an in-process objective:
//   auto result = tune::minimize([](const tune::Config& c) { return f(c); }, space, {.evaluations = 60});
// The objective may throw (a std::exception's what() is the failure's reason; anything else is
// said as such); such evaluations, and values that are not finite or beyond
// +-kMaxObjectiveMagnitude, are recorded as failed trials, with the reason.
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tune/space/space.hpp"
#include "tune/strategy/gp_bandit.hpp"
#include "tune/study/trial.hpp"

namespace tune {

struct MinimizeOptions {
  std::size_t evaluations = 50;
  std::string strategy = "ei";  // any name of make_strategy, with its default options (no resolution)
  GpBanditOptions gp{};         // for ucb and ei (the acquisition is taken from `strategy`)
  std::uint64_t seed = 0;
  Direction direction = Direction::minimize;
};

struct MinimizeResult {
  Config best_config;
  double best_value = std::numeric_limits<double>::quiet_NaN();  // NaN when no evaluation succeeded
  std::size_t evaluations = 0;   // objective calls, failed ones included
  std::vector<Trial> history;    // every trial in order
  std::string stop_reason;       // why the strategy stopped early; "no evaluation succeeded" when
                                 // none did; empty otherwise (the budget was used up)
};

// Throws std::invalid_argument for options.evaluations == 0 (no evaluation to make).
MinimizeResult minimize(const std::function<double(const Config&)>& objective, const Space& space,
                        const MinimizeOptions& options = {});

}  // namespace tune
