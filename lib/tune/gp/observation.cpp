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

// A single-measure query (not a weighted point set) as a measure. Windows that are degenerate in
// every coordinate are the point itself, so that they give exactly the point's covariances (and
// cost one kernel evaluation).
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

void check_points(const WeightedPointsQuery& w, const Kernel& k) {
  // The points are read through raw column pointers and the weights by index.
  if (static_cast<std::size_t>(w.points.rows()) != k.dim())
    throw std::invalid_argument("weighted-points covariance: points of dimension " + std::to_string(w.points.rows()) +
                                " for a " + std::to_string(k.dim()) + "-dimensional kernel");
  if (w.weights.size() != w.points.cols())
    throw std::invalid_argument("weighted-points covariance: " + std::to_string(w.weights.size()) +
                                " weights for " + std::to_string(w.points.cols()) + " points");
}

// A query as weighted atoms for the covariance sums: a weighted point set is its points; any other
// query is one atom of weight 1, its own measure.
class Atoms {
 public:
  Atoms(const Query& q, const Kernel& k) : set_(std::get_if<WeightedPointsQuery>(&q)) {
    if (set_)
      check_points(*set_, k);
    else
      single_ = view_of(q, k);
  }
  Eigen::Index size() const { return set_ ? set_->weights.size() : 1; }
  double weight(Eigen::Index i) const { return set_ ? set_->weights(i) : 1.0; }
  View view(Eigen::Index i) const { return set_ ? View{Kind::point, set_->points.col(i).data(), nullptr} : single_; }

 private:
  const WeightedPointsQuery* set_;
  View single_;
};

bool is_point_set(const Query& q) { return std::holds_alternative<WeightedPointsQuery>(q); }

double atom_covariance(const Kernel& k, const View& a, const View& b) {
  if (a.kind == Kind::point && b.kind == Kind::point) return k(point_of(a, k), point_of(b, k));
  return window::expected_kernel(k, a, b, nullptr, nullptr);
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

double atom_covariance_with_log_gradient(const Kernel& k, const View& a, const View& b,
                                         Eigen::Ref<Eigen::VectorXd> grad) {
  if (a.kind == Kind::point && b.kind == Kind::point) return point_point_with_log_gradient(k, a.a, b.a, grad);
  return window::expected_kernel(k, a, b, grad.data(), nullptr);
}

}  // namespace

double covariance(const Kernel& k, const Query& a, const Query& b) {
  const auto* pa = std::get_if<PointQuery>(&a);
  const auto* pb = std::get_if<PointQuery>(&b);
  if (pa && pb) return k(pa->x, pb->x);
  if (is_point_set(a) || is_point_set(b)) {
    // The pair weights multiply before the covariance, in the same order as
    // covariance_with_log_gradient, so that the GP and the fit see the same bits.
    const Atoms atoms_a(a, k), atoms_b(b, k);
    double sum = 0.0;
    for (Eigen::Index i = 0; i < atoms_a.size(); ++i)
      for (Eigen::Index j = 0; j < atoms_b.size(); ++j)
        sum += (atoms_a.weight(i) * atoms_b.weight(j)) * atom_covariance(k, atoms_a.view(i), atoms_b.view(j));
    return sum;
  }
  return atom_covariance(k, view_of(a, k), view_of(b, k));
}

double covariance(const Kernel& k, const Query& a, const Eigen::Ref<const Eigen::VectorXd>& x) {
  if (const auto* pa = std::get_if<PointQuery>(&a)) return k(pa->x, x);
  if (const auto* set = std::get_if<WeightedPointsQuery>(&a)) {
    check_points(*set, k);
    double sum = 0.0;
    for (Eigen::Index i = 0; i < set->points.cols(); ++i) sum += set->weights(i) * k(set->points.col(i), x);
    return sum;
  }
  const View va = view_of(a, k);
  if (va.kind == Kind::point) return k(point_of(va, k), x);
  check_dim(x.size(), k);
  return window::expected_kernel(k, va, View{Kind::point, x.data(), nullptr}, nullptr, nullptr);
}

Eigen::VectorXd covariance_gradient_x(const Kernel& k, const Query& a,
                                      const Eigen::Ref<const Eigen::VectorXd>& x) {
  if (const auto* pa = std::get_if<PointQuery>(&a)) return k.gradient_x(x, pa->x);
  if (const auto* set = std::get_if<WeightedPointsQuery>(&a)) {
    check_points(*set, k);
    check_dim(x.size(), k);
    Eigen::VectorXd grad = Eigen::VectorXd::Zero(x.size());
    for (Eigen::Index i = 0; i < set->points.cols(); ++i)
      grad.noalias() += set->weights(i) * k.gradient_x(x, set->points.col(i));
    return grad;
  }
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
  if (is_point_set(a) || is_point_set(b)) {
    const Atoms atoms_a(a, k), atoms_b(b, k);
    Eigen::VectorXd atom_grad(grad.size());
    grad.setZero();
    double sum = 0.0;
    for (Eigen::Index i = 0; i < atoms_a.size(); ++i)
      for (Eigen::Index j = 0; j < atoms_b.size(); ++j) {
        const double w = atoms_a.weight(i) * atoms_b.weight(j);
        sum += w * atom_covariance_with_log_gradient(k, atoms_a.view(i), atoms_b.view(j), atom_grad);
        grad += w * atom_grad;
      }
    return sum;
  }
  return atom_covariance_with_log_gradient(k, view_of(a, k), view_of(b, k), grad);
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
  } else if (const auto* set = std::get_if<WeightedPointsQuery>(&q)) {
    if (set->points.cols() < 1) throw std::invalid_argument("weighted-points observation: no points");
    if (set->weights.size() != set->points.cols())
      throw std::invalid_argument("weighted-points observation: " + std::to_string(set->weights.size()) +
                                  " weights for " + std::to_string(set->points.cols()) + " points");
    if (!set->points.allFinite()) throw std::invalid_argument("weighted-points observation: non-finite point");
    if (!set->weights.allFinite()) throw std::invalid_argument("weighted-points observation: non-finite weight");
  }
}

Eigen::VectorXd location(const Query& q) {
  validate_query(q);
  if (const auto* p = std::get_if<PointQuery>(&q)) return p->x;
  if (const auto* box = std::get_if<BoxQuery>(&q)) return 0.5 * box->lower + 0.5 * box->upper;
  if (const auto* set = std::get_if<WeightedPointsQuery>(&q)) {
    const double total = set->weights.sum();
    if (total != 0.0) return set->points * set->weights / total;
    return set->points.rowwise().mean();
  }
  return std::get<GaussianWindowQuery>(q).centre;
}

double group_scale(const std::vector<double>& group_scales, const Observation& o) {
  return o.offset_group ? group_entry(group_scales, *o.offset_group, 1.0) : 1.0;
}

Eigen::VectorXd trend_feature(const Query& q) {
  if (const auto* set = std::get_if<WeightedPointsQuery>(&q))
    return (set->points.colwise() - Eigen::VectorXd::Constant(set->points.rows(), 0.5)) * set->weights;
  return location(q).array() - 0.5;
}

double observation_covariance(const Kernel& k, const GroupCovariance& groups, const Observation& a,
                              const Observation& b) {
  const double c = covariance(k, a.query, b.query);
  const double scaled = c * group_scale(groups.group_scales, a) * group_scale(groups.group_scales, b);
  if (!(a.offset_group && a.offset_group == b.offset_group)) return scaled;
  const std::size_t g = *a.offset_group;
  const double r = group_entry(groups.discrepancy_ratios, g, 0.0);
  const double t = group_entry(groups.trend_variances, g, 0.0);
  const double trend = t != 0.0 ? t * trend_feature(a.query).dot(trend_feature(b.query)) : 0.0;
  const double c_discrepancy = r != 0.0 && g < groups.discrepancy_kernels.size()
                                   ? covariance(groups.discrepancy_kernels[g], a.query, b.query)
                                   : c;
  return scaled + r * c_discrepancy + trend + groups.offset_variance;
}

}  // namespace tune
