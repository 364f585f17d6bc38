#include "tune/gp/kernel.hpp"

#include <cmath>
#include <stdexcept>

namespace tune {

namespace {
const double kSqrt5 = std::sqrt(5.0);
}

const char* to_string(KernelType type) {
  switch (type) {
    case KernelType::squared_exponential: return "squared_exponential";
    case KernelType::matern52: return "matern52";
  }
  return "?";
}

KernelType kernel_type_from_string(const std::string& name) {
  if (name == "squared_exponential" || name == "se" || name == "rbf") return KernelType::squared_exponential;
  if (name == "matern52" || name == "matern") return KernelType::matern52;
  throw std::invalid_argument("unknown kernel '" + name +
                              "': expected 'matern52' or 'squared_exponential'");
}

Kernel::Kernel(KernelType type, Eigen::VectorXd lengthscales, double outputscale)
    : type_(type), lengthscales_(std::move(lengthscales)), outputscale_(outputscale) {
  if (lengthscales_.size() == 0) throw std::invalid_argument("kernel: no lengthscales");
  if (!(lengthscales_.array() > 0).all() || !lengthscales_.allFinite())
    throw std::invalid_argument("kernel: lengthscales must be positive and finite");
  if (!(outputscale_ > 0) || !std::isfinite(outputscale_))
    throw std::invalid_argument("kernel: outputscale must be positive and finite");
  inv_sq_lengthscales_ = lengthscales_.array().square().inverse();
}

double Kernel::scaled_sq_distance(const Eigen::Ref<const Eigen::VectorXd>& a,
                                  const Eigen::Ref<const Eigen::VectorXd>& b) const {
  // A plain loop, shared in spirit with covariance_with_log_gradient: both must sum in the same
  // order so that a kernel value is the same bits whichever function computed it.
  double r2 = 0.0;
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    const double t = a(i) - b(i);
    r2 += t * t * inv_sq_lengthscales_(i);
  }
  return r2;
}

double Kernel::of_r2(double r2) const {
  double value = 0.0, slope = 0.0;
  of_r2_with_slope(r2, value, slope);
  return value;
}

double Kernel::d_dr2(double r2) const {
  if (type_ == KernelType::squared_exponential) return -0.5 * outputscale_ * std::exp(-0.5 * r2);
  // dk/dr = -s (5/3) r (1 + sqrt5 r) e^{-sqrt5 r}; dk/dr2 = dk/dr / (2r), smooth at r = 0.
  const double r = std::sqrt(r2);
  return -outputscale_ * (5.0 / 6.0) * (1.0 + kSqrt5 * r) * std::exp(-kSqrt5 * r);
}

void Kernel::of_r2_with_slope(double r2, double& value, double& slope) const {
  if (type_ == KernelType::squared_exponential) {
    value = outputscale_ * std::exp(-0.5 * r2);
    slope = -0.5 * value;
    return;
  }
  const double r = std::sqrt(r2);
  const double e = outputscale_ * std::exp(-kSqrt5 * r);
  value = (1.0 + kSqrt5 * r + (5.0 / 3.0) * r2) * e;
  slope = -(5.0 / 6.0) * (1.0 + kSqrt5 * r) * e;
}

Eigen::VectorXd Kernel::gradient_x(const Eigen::Ref<const Eigen::VectorXd>& x,
                                   const Eigen::Ref<const Eigen::VectorXd>& b) const {
  const double g = d_dr2(scaled_sq_distance(x, b));
  return (2.0 * g) * ((x - b).array() * inv_sq_lengthscales_.array()).matrix();
}

Eigen::MatrixXd Kernel::cross(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const {
  // A direct loop (not the |a|^2 + |b|^2 - 2ab expansion) so that every entry is bit-identical to
  // operator() and free of cancellation near the diagonal.
  Eigen::MatrixXd K(A.cols(), B.cols());
  for (Eigen::Index j = 0; j < B.cols(); ++j)
    for (Eigen::Index i = 0; i < A.cols(); ++i) K(i, j) = (*this)(A.col(i), B.col(j));
  return K;
}

}  // namespace tune
