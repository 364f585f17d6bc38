#pragma once
// Standard global-optimisation test functions on their usual boxes, for benchmarks and the
// behavioural tests. Every function is to be MINIMISED; `minimum` is the known global minimum value.
#include <Eigen/Core>
#include <array>
#include <functional>
#include <string>
#include <vector>

namespace tune::testfn {

struct TestFunction {
  std::string name;
  Eigen::VectorXd lower;  // box, one entry per dimension
  Eigen::VectorXd upper;
  double minimum;         // global minimum value on the box
  Eigen::VectorXd argmin; // one global minimiser
  std::function<double(const Eigen::VectorXd&)> f;  // takes a point of the box (not the unit cube);
                                                    // throws std::invalid_argument on a wrong size

  std::size_t dim() const { return static_cast<std::size_t>(lower.size()); }
  // f at a point of the unit cube, mapped linearly to the box.
  double at_unit(const Eigen::VectorXd& u) const;
};

// Throws std::invalid_argument "<what>: expected a point of dimension <dim>, got <n>" on a mismatch.
void check_dimension(const Eigen::VectorXd& x, Eigen::Index dim, const std::string& what);

// The point of the box [lower, upper] at unit-cube coordinates u (exact at the corners).
Eigen::VectorXd unit_to_box(const Eigen::VectorXd& u, const Eigen::VectorXd& lower, const Eigen::VectorXd& upper);

// Hartmann-3 with other weights alpha in place of (1.0, 1.2, 3.0, 3.2) (hartmann3() uses those);
// the multi-fidelity Hartmann-3 perturbs them per level.
double hartmann3_weighted(const Eigen::VectorXd& x, const std::array<double, 4>& alpha);

TestFunction branin();        // [-5,10] x [0,15], min 0.397887
TestFunction hartmann3();     // [0,1]^3, min -3.86278 (exactly -3.8627797873326625, see the .cpp)
TestFunction hartmann6();     // [0,1]^6, min -3.32237
TestFunction rosenbrock(std::size_t dim, double low = -5.0, double high = 10.0);  // min 0 at 1
// (named "rosenbrock<dim>"; throws std::invalid_argument unless dim >= 2 and low <= 1 <= high)
// The compressed-GP paper's 1-D example f(x) = sin x + cos x + 0.1 x on [0, 10], as a
// minimisation of -f (the paper maximises f).
TestFunction paper_example_1d();
// The paper's Rosenbrock (a = 1, b = 10) on [-2, 2]^2.
TestFunction paper_rosenbrock_2d();

TestFunction by_name(const std::string& name);  // throws std::invalid_argument
std::vector<std::string> names();

}  // namespace tune::testfn
