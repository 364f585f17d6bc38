#pragma once
// Stationary ARD kernels on the unit cube: squared exponential and Matern-5/2. Both are written as
// a function of the scaled squared distance r2 = sum_i (a_i - b_i)^2 / l_i^2, so their gradients
// with respect to inputs and log-hyperparameters share one derivative dk/dr2.
#include <Eigen/Core>
#include <string>

namespace tune {

enum class KernelType { squared_exponential, matern52 };

const char* to_string(KernelType type);
KernelType kernel_type_from_string(const std::string& name);  // throws std::invalid_argument

class Kernel {
 public:
  Kernel() = default;
  Kernel(KernelType type, Eigen::VectorXd lengthscales, double outputscale);

  KernelType type() const { return type_; }
  std::size_t dim() const { return static_cast<std::size_t>(lengthscales_.size()); }
  const Eigen::VectorXd& lengthscales() const { return lengthscales_; }
  const Eigen::VectorXd& inverse_squared_lengthscales() const { return inv_sq_lengthscales_; }
  double outputscale() const { return outputscale_; }  // prior variance k(x, x)

  double scaled_sq_distance(const Eigen::Ref<const Eigen::VectorXd>& a,
                            const Eigen::Ref<const Eigen::VectorXd>& b) const;
  // k as a function of r2, and dk/dr2; both include the outputscale.
  double of_r2(double r2) const;
  double d_dr2(double r2) const;
  // Both at once, with a single exponential.
  void of_r2_with_slope(double r2, double& value, double& slope) const;

  double operator()(const Eigen::Ref<const Eigen::VectorXd>& a,
                    const Eigen::Ref<const Eigen::VectorXd>& b) const {
    return of_r2(scaled_sq_distance(a, b));
  }
  // d k(x, b) / d x.
  Eigen::VectorXd gradient_x(const Eigen::Ref<const Eigen::VectorXd>& x,
                             const Eigen::Ref<const Eigen::VectorXd>& b) const;
  // Cross-covariance matrix: entry (i, j) = k(A.col(i), B.col(j)).
  Eigen::MatrixXd cross(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) const;

 private:
  KernelType type_ = KernelType::matern52;
  Eigen::VectorXd lengthscales_;
  Eigen::VectorXd inv_sq_lengthscales_;
  double outputscale_ = 1.0;
};

}  // namespace tune
