#include "tune/gp/observation.hpp"

namespace tune {

double covariance(const Kernel& k, const Query& a, const Query& b) {
  return std::visit([&](const PointQuery& pa, const PointQuery& pb) { return k(pa.x, pb.x); }, a, b);
}

double covariance(const Kernel& k, const Query& a, const Eigen::Ref<const Eigen::VectorXd>& x) {
  return std::visit([&](const PointQuery& pa) { return k(pa.x, x); }, a);
}

Eigen::VectorXd covariance_gradient_x(const Kernel& k, const Query& a,
                                      const Eigen::Ref<const Eigen::VectorXd>& x) {
  return std::visit([&](const PointQuery& pa) { return k.gradient_x(x, pa.x); }, a);
}

double covariance_with_log_gradient(const Kernel& k, const Query& a, const Query& b,
                                    Eigen::Ref<Eigen::VectorXd> grad) {
  return std::visit(
      [&](const PointQuery& pa, const PointQuery& pb) {
        // Allocation-free: this runs for every pair of observations at every step of a fit.
        const Eigen::Index d = pa.x.size();
        const Eigen::VectorXd& inv_sq = k.inverse_squared_lengthscales();
        double r2 = 0.0;
        for (Eigen::Index i = 0; i < d; ++i) {  // the same sum as Kernel::scaled_sq_distance
          const double t = pa.x(i) - pb.x(i);
          grad(i) = t * t * inv_sq(i);
          r2 += grad(i);
        }
        double value = 0.0, slope = 0.0;
        k.of_r2_with_slope(r2, value, slope);
        // dr2/dlog l_i = -2 (a_i - b_i)^2 / l_i^2; dk/dlog s = k.
        grad.head(d) *= -2.0 * slope;
        grad(d) = value;
        return value;
      },
      a, b);
}

const Eigen::VectorXd& location(const Query& q) {
  return std::visit([](const PointQuery& p) -> const Eigen::VectorXd& { return p.x; }, q);
}

}  // namespace tune
