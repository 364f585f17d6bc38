#pragma once
// Multi-fidelity test functions from the literature, for benchmarking the cost-aware
// multi-resolution tuner. Each has a stack of levels: level 0 is the cheapest and least faithful,
// the top level (levels() - 1) is the true function. Every level is to be MINIMISED (Currin, which
// the literature maximises, is negated), and every level takes a point of the UNIT CUBE, mapped
// linearly onto the function's box exactly as TestFunction::at_unit does.
#include <Eigen/Core>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace tune::testfn {

struct MultiFidelityFunction {
  std::string name;
  Eigen::VectorXd lower;  // box the unit cube is mapped onto, one entry per dimension
  Eigen::VectorXd upper;
  std::vector<double> cost;     // default cost of one evaluation per level, cheapest first; top = 1
  double minimum;               // global minimum of the top level on the box
  Eigen::VectorXd argmin_unit;  // one global minimiser of the top level, in UNIT-CUBE coordinates
                                // (unlike TestFunction::argmin, which is a point of the box)
  // f(unit, level); throws std::invalid_argument on a wrong size or a level >= levels().
  std::function<double(const Eigen::VectorXd&, std::size_t)> f;

  std::size_t dim() const { return static_cast<std::size_t>(lower.size()); }
  std::size_t levels() const { return cost.size(); }
  std::size_t top() const { return levels() - 1; }
  double value(const Eigen::VectorXd& unit, std::size_t level) const { return f(unit, level); }
  Eigen::VectorXd to_box(const Eigen::VectorXd& unit) const;  // throws std::invalid_argument on a wrong size
};

// The sources, exact forms, costs and how each minimum was obtained are in multi_fidelity.cpp.
MultiFidelityFunction forrester_mf();  // 1-D, [0,1], 2 levels, min -6.0207400557670828
MultiFidelityFunction branin_mf();     // [-5,10] x [0,15], 3 levels, top = branin(), min 0.397887
MultiFidelityFunction hartmann3_mf();  // [0,1]^3, 3 levels, top = hartmann3(), min -3.8627797873326625
MultiFidelityFunction park_mf();       // [0,1]^4, 2 levels, min e * 1e-9 on the face x1 = x3 = x4 = 0
MultiFidelityFunction currin_mf();     // [0,1]^2, 2 levels, NEGATED, min -4319/313 at (13/60, 0)

// All of the above, in that order (names "forrester_mf", "branin_mf", "hartmann3_mf", "park_mf",
// "currin_mf").
std::vector<MultiFidelityFunction> multi_fidelity_functions();

}  // namespace tune::testfn
