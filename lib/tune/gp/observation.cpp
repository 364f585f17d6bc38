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
        const Eigen::ArrayXd diff2 = (pa.x - pb.x).array().square();
        const Eigen::ArrayXd scaled = diff2 / k.lengthscales().array().square();
        const double r2 = scaled.sum();
        const double value = k.of_r2(r2);
        const double g = k.d_dr2(r2);
        const Eigen::Index d = scaled.size();
        // dr2/dlog l_i = -2 (a_i - b_i)^2 / l_i^2; dk/dlog s = k.
        grad.head(d) = (-2.0 * g) * scaled.matrix();
        grad(d) = value;
        return value;
      },
      a, b);
}

const Eigen::VectorXd& location(const Query& q) {
  return std::visit([](const PointQuery& p) -> const Eigen::VectorXd& { return p.x; }, q);
}

}  // namespace tune
