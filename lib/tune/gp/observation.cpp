#include "tune/gp/observation.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "tune/gp/window_kernels.hpp"

namespace tune {

namespace {

using window::Kind;
using window::View;
using ConstMap = Eigen::Map<const Eigen::VectorXd>;

void check_dim(Eigen::Index size, const Kernel& k) {
  // Reading a window goes through raw pointers: a size mismatch must not read out of bounds.
  if (static_cast<std::size_t>(size) != k.dim())
    throw std::invalid_argument("window covariance: an argument of dimension " + std::to_string(size) + " for a " +
                                std::to_string(k.dim()) + "-dimensional kernel");
}

// The query as a measure. Windows that are degenerate in every coordinate are the point itself, so
// that they give exactly the point's covariances (and cost one kernel evaluation).
View view_of(const Query& q, const Kernel& k) {
  if (const auto* p = std::get_if<PointQuery>(&q)) return {Kind::point, p->x.data(), nullptr};
  if (const auto* box = std::get_if<BoxQuery>(&q)) {
    check_dim(box->lower.size(), k);
    check_dim(box->upper.size(), k);
    if (box->lower == box->upper) return {Kind::point, box->lower.data(), nullptr};
    return {Kind::box, box->lower.data(), box->upper.data()};
  }
  const auto& g = std::get<GaussianWindowQuery>(q);
  check_dim(g.centre.size(), k);
  check_dim(g.sd.size(), k);
  if ((g.sd.array() == 0.0).all()) return {Kind::point, g.centre.data(), nullptr};
  return {Kind::gaussian, g.centre.data(), g.sd.data()};
}

ConstMap point_of(const View& v, const Kernel& k) {
  return ConstMap(v.a, static_cast<Eigen::Index>(k.dim()));
}

// The point-point covariance and its log-parameter gradient, allocation-free: this runs for every
// pair of observations at every step of a fit.
double point_point_with_log_gradient(const Kernel& k, const double* a, const double* b,
                                     Eigen::Ref<Eigen::VectorXd>& grad) {
  const Eigen::Index d = static_cast<Eigen::Index>(k.dim());
  const Eigen::VectorXd& inv_sq = k.inverse_squared_lengthscales();
  double r2 = 0.0;
  for (Eigen::Index i = 0; i < d; ++i) {  // the same sum as Kernel::scaled_sq_distance
    const double t = a[i] - b[i];
    grad(i) = t * t * inv_sq(i);
    r2 += grad(i);
  }
  double value = 0.0, slope = 0.0;
  k.of_r2_with_slope(r2, value, slope);
  // dr2/dlog l_i = -2 (a_i - b_i)^2 / l_i^2; dk/dlog s = k.
  grad.head(d) *= -2.0 * slope;
  grad(d) = value;
  return value;
}

}  // namespace

double covariance(const Kernel& k, const Query& a, const Query& b) {
  const auto* pa = std::get_if<PointQuery>(&a);
  const auto* pb = std::get_if<PointQuery>(&b);
  if (pa && pb) return k(pa->x, pb->x);
  const View va = view_of(a, k), vb = view_of(b, k);
  if (va.kind == Kind::point && vb.kind == Kind::point) return k(point_of(va, k), point_of(vb, k));
  return window::expected_kernel(k, va, vb, nullptr, nullptr);
}

double covariance(const Kernel& k, const Query& a, const Eigen::Ref<const Eigen::VectorXd>& x) {
  if (const auto* pa = std::get_if<PointQuery>(&a)) return k(pa->x, x);
  const View va = view_of(a, k);
  if (va.kind == Kind::point) return k(point_of(va, k), x);
  check_dim(x.size(), k);
  return window::expected_kernel(k, va, View{Kind::point, x.data(), nullptr}, nullptr, nullptr);
}

Eigen::VectorXd covariance_gradient_x(const Kernel& k, const Query& a,
                                      const Eigen::Ref<const Eigen::VectorXd>& x) {
  if (const auto* pa = std::get_if<PointQuery>(&a)) return k.gradient_x(x, pa->x);
  const View va = view_of(a, k);
  if (va.kind == Kind::point) return k.gradient_x(x, point_of(va, k));
  check_dim(x.size(), k);
  Eigen::VectorXd grad(x.size());
  window::expected_kernel(k, va, View{Kind::point, x.data(), nullptr}, nullptr, grad.data());
  return grad;
}

double covariance_with_log_gradient(const Kernel& k, const Query& a, const Query& b,
                                    Eigen::Ref<Eigen::VectorXd> grad) {
  const auto* pa = std::get_if<PointQuery>(&a);
  const auto* pb = std::get_if<PointQuery>(&b);
  if (pa && pb) return point_point_with_log_gradient(k, pa->x.data(), pb->x.data(), grad);
  const View va = view_of(a, k), vb = view_of(b, k);
  if (va.kind == Kind::point && vb.kind == Kind::point) return point_point_with_log_gradient(k, va.a, vb.a, grad);
  return window::expected_kernel(k, va, vb, grad.data(), nullptr);
}

void validate_query(const Query& q) {
  if (const auto* box = std::get_if<BoxQuery>(&q)) {
    if (box->lower.size() != box->upper.size())
      throw std::invalid_argument("box observation: lower has " + std::to_string(box->lower.size()) +
                                  " coordinates but upper has " + std::to_string(box->upper.size()));
    for (Eigen::Index i = 0; i < box->lower.size(); ++i) {
      if (!std::isfinite(box->lower(i)) || !std::isfinite(box->upper(i)))
        throw std::invalid_argument("box observation: non-finite bound in coordinate " + std::to_string(i));
      if (box->lower(i) > box->upper(i))
        throw std::invalid_argument("box observation: lower bound " + std::to_string(box->lower(i)) +
                                    " exceeds upper bound " + std::to_string(box->upper(i)) +
                                    " in coordinate " + std::to_string(i));
    }
  } else if (const auto* g = std::get_if<GaussianWindowQuery>(&q)) {
    if (g->centre.size() != g->sd.size())
      throw std::invalid_argument("Gaussian-window observation: centre has " + std::to_string(g->centre.size()) +
                                  " coordinates but sd has " + std::to_string(g->sd.size()));
    for (Eigen::Index i = 0; i < g->centre.size(); ++i) {
      if (!std::isfinite(g->centre(i)) || !std::isfinite(g->sd(i)))
        throw std::invalid_argument("Gaussian-window observation: non-finite centre or sd in coordinate " +
                                    std::to_string(i));
      if (g->sd(i) < 0.0)
        throw std::invalid_argument("Gaussian-window observation: negative sd " + std::to_string(g->sd(i)) +
                                    " in coordinate " + std::to_string(i));
    }
  }
}

Eigen::VectorXd location(const Query& q) {
  validate_query(q);
  if (const auto* p = std::get_if<PointQuery>(&q)) return p->x;
  if (const auto* box = std::get_if<BoxQuery>(&q)) return 0.5 * box->lower + 0.5 * box->upper;
  return std::get<GaussianWindowQuery>(q).centre;
}

double observation_covariance(const Kernel& k, double offset_variance, const Observation& a, const Observation& b) {
  const double shared = a.offset_group && a.offset_group == b.offset_group ? offset_variance : 0.0;
  return covariance(k, a.query, b.query) + shared;
}

}  // namespace tune
