#include "functions/learning_curves.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <random>
#include <stdexcept>

namespace tune::testfn {
namespace {

constexpr std::array<double, 6> kSpeedWeights{1.3, 0.7, 0.9, 1.1, 0.5, 0.8};
constexpr std::array<double, 6> kAmplitudeWeights{0.6, 1.1, 0.4, 0.9, 1.2, 0.3};

double dot(const Eigen::VectorXd& u, const std::array<double, 6>& w) {
  double s = 0.0;
  for (Eigen::Index j = 0; j < u.size(); ++j) s += w[static_cast<std::size_t>(j) % w.size()] * u(j);
  return s;
}

}  // namespace

double CurveModel::amplitude(const Eigen::VectorXd& u) const {
  const double a = 0.5 + 0.5 * std::cos(2.0 * std::numbers::pi * dot(u, kAmplitudeWeights));
  return gap * (0.5 + a);
}

double CurveModel::tau(const Eigen::VectorXd& u) const {
  double s = 0.0;
  switch (shape) {
    case CurveShape::independent:
      s = 0.5 + 0.5 * std::sin(2.0 * std::numbers::pi * dot(u, kSpeedWeights) + 1.0);
      break;
    case CurveShape::slow_good:
      s = std::clamp(1.0 - (final_value(u) - fn.minimum) / (2.0 * gap), 0.0, 1.0);
      break;
  }
  return tau_fast * std::pow(tau_slow / tau_fast, s);
}

double CurveModel::mean_at(const Eigen::VectorXd& u, int t) const {
  const double tu = tau(u);
  const double end = std::exp(-static_cast<double>(steps) / tu);
  const double g = (std::exp(-static_cast<double>(t) / tu) - end) / (1.0 - end);
  return final_value(u) + amplitude(u) * g;
}

double typical_gap(const TestFunction& fn, std::size_t samples) {
  std::mt19937_64 rng(20261125);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  std::vector<double> gaps;
  Eigen::VectorXd u(static_cast<Eigen::Index>(fn.dim()));
  for (std::size_t s = 0; s < samples; ++s) {
    for (Eigen::Index j = 0; j < u.size(); ++j) u(j) = unif(rng);
    gaps.push_back(fn.at_unit(u) - fn.minimum);
  }
  std::sort(gaps.begin(), gaps.end());
  const std::size_t m = gaps.size();
  return m % 2 ? gaps[m / 2] : 0.5 * (gaps[m / 2 - 1] + gaps[m / 2]);
}

CurveShape curve_shape_by_name(const std::string& name) {
  if (name == "independent") return CurveShape::independent;
  if (name == "slow_good") return CurveShape::slow_good;
  throw std::invalid_argument("unknown curve shape '" + name + "' (independent, slow_good)");
}

const char* to_string(CurveShape shape) {
  return shape == CurveShape::independent ? "independent" : "slow_good";
}

CurveModel curve_model(const std::string& function, CurveShape shape) {
  CurveModel m;
  m.fn = by_name(function);
  m.shape = shape;
  m.gap = typical_gap(m.fn);
  return m;
}

}  // namespace tune::testfn
