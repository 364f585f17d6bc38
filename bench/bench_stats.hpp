#pragma once
// Summary statistics shared by the benchmark programs.
#include <algorithm>
#include <limits>
#include <vector>

namespace tune::bench {

// The median (the mean of the two middle values for an even count); NaN for no values.
inline double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace tune::bench
