#pragma once
// The regret tables of the benchmarks that run many seeds of a method on a function with a known
// minimum (mixed_space, conditional_space): per method, the median and IQR of the simple regret at
// 15, 30 and 60 evaluations (those within the budget, and the budget), the runs that reached a target
// regret and the median evaluations to it (a run that never does counts as infinite).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "bench_stats.hpp"

namespace tune::bench {

// The evaluations at which the tables show the regret.
inline std::vector<std::size_t> regret_checkpoints(std::size_t budget) {
  std::vector<std::size_t> ks;
  for (const std::size_t k : {15, 30, 60})
    if (k <= budget) ks.push_back(k);
  if (ks.empty() || ks.back() != budget) ks.push_back(budget);
  return ks;
}

// The median of values that may be infinite (a run that never reached the target).
inline double median_with_inf(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n % 2) return v[n / 2];
  const double a = v[n / 2 - 1], b = v[n / 2];
  return std::isinf(a) || std::isinf(b) ? std::numeric_limits<double>::infinity() : 0.5 * (a + b);
}

// "## NAME (minimum ...)" and the table's head; `extra` adds columns after the standard ones
// (" repeats |"), one "---|" each in the rule.
inline void print_regret_table_head(const std::string& name, double minimum, double target, double gap,
                                    std::size_t seeds, std::size_t budget, const std::vector<std::string>& extra = {}) {
  const std::vector<std::size_t> ks = regret_checkpoints(budget);
  std::printf("\n## %s (minimum %.6g; target regret %.3g = 1%% of the median random gap %.3g; median and IQR of "
              "simple regret over %zu seeds)\n\n| method |",
              name.c_str(), minimum, target, gap, seeds);
  for (const std::size_t k : ks) std::printf(" @%zu | IQR @%zu |", k, k);
  std::printf(" reached target | median evals to target |");
  for (const std::string& column : extra) std::printf(" %s |", column.c_str());
  std::printf("\n|---|");
  for (std::size_t i = 0; i < ks.size(); ++i) std::printf("---|---|");
  std::printf("---|---|");
  for (std::size_t i = 0; i < extra.size(); ++i) std::printf("---|");
  std::printf("\n");
}

// One method's standard cells, from its runs' best-so-far values (one vector per run), without the
// row's end: " med | iqr | ... | reached/runs | evals |".
inline void print_regret_cells(const std::vector<const std::vector<double>*>& best_so_far, double minimum, double target,
                               std::size_t budget) {
  for (const std::size_t k : regret_checkpoints(budget)) {
    std::vector<double> regrets;
    for (const std::vector<double>* run : best_so_far)
      if (!run->empty()) regrets.push_back(std::max(0.0, (*run)[std::min(k, run->size()) - 1] - minimum));
    const double iqr = quantile(regrets, 0.75) - quantile(regrets, 0.25);
    std::printf(" %s | %s |", fmt(quantile(regrets, 0.5)).c_str(), fmt(iqr).c_str());
  }
  std::vector<double> to_target;
  std::size_t reached = 0;
  for (const std::vector<double>* run : best_so_far) {
    double first = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < run->size(); ++k)
      if ((*run)[k] - minimum <= target) {
        first = static_cast<double>(k + 1);
        ++reached;
        break;
      }
    to_target.push_back(first);
  }
  const double med = median_with_inf(to_target);
  const std::string cell = std::isinf(med) ? ">" + std::to_string(budget) : fmt(med);
  std::printf(" %zu/%zu | %s |", reached, best_so_far.size(), cell.c_str());
}

}  // namespace tune::bench
