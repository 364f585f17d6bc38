#pragma once
// A resolution: the knob that makes a trial cheaper and less faithful (epochs, a fraction of the
// data, boosting rounds). Its levels are ordered from the cheapest to the full run; the last level
// is the one the objective is about, and recommendations are always for it.
//
// Costs per level are either declared or measured. Measured costs are the mean cost (run time) of
// the completed trials of each level, or of its failed ones while none completed (a failed run's time
// is spent all the same, but one that diverged at its first step does not price a run that trains).
// Until every level has been seen, an unseen level's cost is extrapolated from the seen ones: with
// one level seen, as proportional to its value (a level of 27 epochs is first guessed 9 times dearer
// than one of 3); with two or more, by a start-up time plus a cost per unit of value, both >= 0,
// fitted by least squares to the seen levels' means (fit_affine_cost). The proportional guess had
// a trainer whose runs took 17 ms at 1000 and at 100000 boosting rounds (its start-up) guess 3.4 s
// for 10^7 rounds, beyond a 3 s budget, and cmets spent the budget without one full run. A guess is
// never below a measured cheaper level's cost nor above a measured dearer level's.
//
// Before any trial has a cost the costs are unknown: they are kUncalibratedCostPerValue times the
// values (in proportion, and all fit any budget), and a study with a cost budget runs one trial at a
// time until the first cost is in (costs_calibrated). Likewise, while a run is pending at a level no run
// has completed at, its cost is a guess and nothing else starts: four full runs guessed at 0.54 s
// from the cheap levels, which took 3 s each, spent 12 of a budget of 5 (level_cost_measured).
// Guessing a second per unit of value, as before, made a campaign with levels [100, 300, 1000] boosting rounds and a budget of 600 seconds
// end at once, "the cost budget is spent: 0 of 600", although a full run took 0.3 s.
#include <cstddef>
#include <string>
#include <optional>
#include <vector>

#include "tune/study/trial.hpp"

namespace tune {

struct Resolution {
  std::string parameter;        // its name for the trial: {parameter} placeholder, TUNE_RESOLUTION
  std::vector<double> values;   // one per level, cheapest first; the last is the full resolution
  std::vector<double> costs{};  // declared cost per level (increasing); empty = measured

  std::size_t levels() const { return values.size(); }
  std::size_t top() const { return values.size() - 1; }
  bool measured() const { return costs.empty(); }
};

// Throws std::invalid_argument naming the field: no levels, a non-finite or non-positive value,
// values not strictly increasing, costs of the wrong count, not finite and > 0, or decreasing.
void validate(const Resolution& resolution);

// The level whose value is `value` exactly (`epochs: 3` names level 1 of [1, 3, 9]); nothing if none.
std::optional<std::size_t> level_of(const Resolution& resolution, double value);

// cost(value) = start_up + per_value * value.
struct AffineCost {
  double start_up = 0.0;
  double per_value = 0.0;
  double at(double value) const { return start_up + per_value * value; }
};
// The least-squares line through (values[i], costs[i]) (two or more points) with both coefficients
// >= 0: a falling fit is flat at the mean cost, and one with a negative start-up goes through 0.
AffineCost fit_affine_cost(const std::vector<double>& values, const std::vector<double>& costs);

// The cost of each level now: declared, or measured from the trials (see the header comment).
std::vector<double> level_costs(const Resolution& resolution, const std::vector<Trial>& trials);

// Whether the level costs are known: declared, or some finished trial has a measured cost.
bool costs_calibrated(const Resolution& resolution, const std::vector<Trial>& trials);
inline constexpr double kUncalibratedCostPerValue = 1e-9;

// Whether the cost of `level` is known rather than guessed: declared, or measured by a completed trial
// at that level (failed runs alone, which may have stopped at once, are an estimate, as tune status
// marks them).
bool level_cost_measured(const Resolution& resolution, const std::vector<Trial>& trials, std::size_t level);

// The cost a trial counts against a budget: its measured cost when it has one, else its level's, and
// what its interrupted runs spent (Trial::interrupted_cost); nothing for an imported result.
double trial_cost(const Trial& trial, const std::vector<double>& costs);

}  // namespace tune
