#pragma once
// A trial's values along the way: what a trainer reports with a step (`val_loss=0.41 step=3`), read
// by the adapters' protocols and judged by the pruning rule (tune/study/pruning_rule.hpp).
#include <cstdint>
#include <vector>

namespace tune {

// One intermediate value: the step (epoch, iteration) it was reported at, and the objective then.
struct CurvePoint {
  std::int64_t step = 0;
  double value = 0.0;
};
using LearningCurve = std::vector<CurvePoint>;  // in the order reported

}  // namespace tune
