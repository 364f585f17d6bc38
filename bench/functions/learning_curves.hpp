#pragma once
// Synthetic learning curves over a standard test function, for the pruning benchmark
// (bench/pruning.cpp). A "training run" at a point u of the unit cube reports, at steps t = 1 .. T,
//
//   y(u, t) = f(u) + A(u) * g(t, tau(u)) + noise,   g(t, tau) = (e^{-t/tau} - e^{-T/tau}) / (1 - e^{-T/tau}),
//
// f the test function (minimised; TestFunction::at_unit), so the excess A * g falls from about A at
// the start to exactly 0 at t = T: a run that finishes ends, in expectation, at f(u), and its simple
// regret is f(u) - minimum. The noise is Gaussian, independent per step, sd = noise_fraction * G.
// G is the function's typical gap (the median of f - minimum over uniform random points, fixed seed),
// so every constant is relative to the function's own scale:
//
//   A(u)   = G * (0.5 + a(u)),         a(u) = 0.5 + 0.5 cos(2 pi (v . u)),  v = (0.6, 1.1, 0.4, ...)
//   tau(u) = tau_fast * (tau_slow / tau_fast)^{s(u)},  tau_fast = 2, tau_slow = 20 steps
//
// and s(u) in [0, 1], how slowly the run learns, is given by the shape:
//
//   independent  s(u) = 0.5 + 0.5 sin(2 pi (w . u) + 1),  w = (1.3, 0.7, 0.9, ...): a smooth
//                function of the point that has nothing to do with f. Curves still cross (a slow
//                starter with a good f is above a fast one with a worse f for its first steps).
//   slow_good    s(u) = clamp(1 - (f(u) - minimum) / (2 G), 0, 1): the better the final value, the
//                slower the run (tau 20 at the minimum, 6.3 at the median gap, 2 from 2 G up), as a
//                small learning rate that learns slowly but ends best. The stress case of a median
//                rule: the best configurations are the ones that look worst early.
//
// The constants were fixed before any pruning run and are not tuned to its results.
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "functions/test_functions.hpp"

namespace tune::testfn {

enum class CurveShape { independent, slow_good };

struct CurveModel {
  TestFunction fn;
  CurveShape shape = CurveShape::independent;
  double gap = 1.0;               // G, the typical gap of fn
  int steps = 50;                 // T, the steps of a full run
  double noise_fraction = 0.02;   // per-step noise sd / G
  double tau_fast = 2.0;
  double tau_slow = 20.0;

  double final_value(const Eigen::VectorXd& u) const { return fn.at_unit(u); }  // f(u), the noise-free end
  double amplitude(const Eigen::VectorXd& u) const;                             // A(u)
  double tau(const Eigen::VectorXd& u) const;                                   // tau(u)
  double mean_at(const Eigen::VectorXd& u, int t) const;  // y(u, t) without noise, t in 1 .. steps
  double noise_sd() const { return noise_fraction * gap; }
};

// The median of f - minimum over `samples` uniform random points of the unit cube (fixed seed).
double typical_gap(const TestFunction& fn, std::size_t samples = 4096);

// Throws std::invalid_argument for a name other than "independent" or "slow_good".
CurveShape curve_shape_by_name(const std::string& name);
const char* to_string(CurveShape shape);

// The model over testfn::by_name(function) with the given shape and the documented constants.
CurveModel curve_model(const std::string& function, CurveShape shape);

}  // namespace tune::testfn
