#pragma once
// What the GP observes: a linear functional of f plus Gaussian noise: the value at a point, the
// uniform average over a box, the average under a Gaussian window, or a weighted sum of point
// values. The GP and the hyperparameter fit see queries only through the functions below.
//
// Squared exponential: window covariances are exact closed forms (window_kernels.hpp). Matern-5/2:
// quasi-Monte Carlo with a fixed node set per window (window::kWindowNodes nodes), gradients
// differentiating that same quadrature. Point-point covariances are the kernel itself, bit for bit.
// A weighted point set is handled by linearity: the weighted sum of its points' covariances (each
// computed exactly as for a PointQuery at that point), so a one-hot weight vector reproduces the
// PointQuery bit for bit.
#include <Eigen/Core>
#include <optional>
#include <variant>
#include <vector>

#include "tune/gp/kernel.hpp"

namespace tune {

struct PointQuery {
  Eigen::VectorXd x;
};

// The uniform average of f over the axis-aligned box [lower, upper] (unit-cube coordinates). A
// side of zero width fixes that coordinate; a box of zero width in every coordinate is the point.
struct BoxQuery {
  Eigen::VectorXd lower, upper;
};

// E[f(X)], X ~ N(centre, diag(sd^2)) (not truncated to the cube). sd = 0 fixes a coordinate; sd = 0
// everywhere is the point query at centre.
struct GaussianWindowQuery {
  Eigen::VectorXd centre;
  Eigen::VectorXd sd;
};

// sum_i weights(i) f(points.col(i)): a finite mixture of point values (the indirect-query bandit of
// the IQBO paper, Sec. 3.1, with arms at the points and policy weights p(a); or the average of f over
// a cell's representative points, GPOO). Weights need not sum to 1. Covariances cost one point
// covariance per point (per pair of points between two sets).
struct WeightedPointsQuery {
  Eigen::MatrixXd points;   // dim x m
  Eigen::VectorXd weights;  // m
};

using Query = std::variant<PointQuery, BoxQuery, GaussianWindowQuery, WeightedPointsQuery>;

struct Observation {
  Query query;
  double value = 0.0;
  // Index into the GP's noise variances: observations of different kinds (e.g. resolution levels)
  // may have different noise.
  std::size_t noise_group = 0;
  // Observations sharing an offset group share one unknown constant added to their functional (a
  // random effect with prior N(0, GpHyperparameters::offset_variance)): a resolution level whose
  // values are shifted everywhere (fewer epochs, lower accuracy). Empty: no offset, f itself.
  std::optional<std::size_t> offset_group;
};

// Group g's entry of a per-group vector of hyperparameters, `otherwise` for a group beyond its end
// (an empty vector: the feature is off for every group).
inline double group_entry(const std::vector<double>& per_group, std::size_t g, double otherwise) {
  return g < per_group.size() ? per_group[g] : otherwise;
}

// The factor by which an observation sees f: rho_g of its offset group g (group_scales[g]), 1 for
// an observation without a group or a group without a scale.
double group_scale(const std::vector<double>& group_scales, const Observation& o);

// The functional of the centred coordinates x - 1/2 (a vector, one entry per dimension): what a
// linear trend w . (x - 1/2) contributes to the observation is w . trend_feature(query). Exact for
// every query kind: the point's x - 1/2, a box's or a Gaussian window's centre - 1/2 (their
// averages of a linear function), a weighted point set's sum_i w_i (x_i - 1/2).
Eigen::VectorXd trend_feature(const Query& q);

// The level structure of the covariance between observations (GpHyperparameters' fields of the
// same names), by offset group; an empty vector or a group beyond its end means none.
struct GroupCovariance {
  double offset_variance = 0.0;
  const std::vector<double>& discrepancy_ratios;
  const std::vector<double>& group_scales;
  const std::vector<double>& trend_variances;
  // Per group, the discrepancy's own kernel (GpHyperparameters::make_discrepancy_kernels); a group
  // beyond its end uses f's.
  const std::vector<Kernel>& discrepancy_kernels;
};

// Cov(z_a, z_b) without noise: the functionals' covariance c times rho_a rho_b, plus r_g c_g (c
// under group g's discrepancy kernel),
// t_g phi_a . phi_b (phi = trend_feature) and offset_variance when both share offset group g.
double observation_covariance(const Kernel& k, const GroupCovariance& groups, const Observation& a,
                              const Observation& b);

// Cov(L_a f, L_b f) under the GP prior with kernel k.
double covariance(const Kernel& k, const Query& a, const Query& b);
// Cov(L_a f, f(x)) and its gradient with respect to x.
double covariance(const Kernel& k, const Query& a, const Eigen::Ref<const Eigen::VectorXd>& x);
Eigen::VectorXd covariance_gradient_x(const Kernel& k, const Query& a,
                                      const Eigen::Ref<const Eigen::VectorXd>& x);
// Cov(L_a f, L_b f) and its gradient with respect to (log l_1..log l_d, log outputscale), written
// into grad (size dim + 1), for the marginal-likelihood fit.
double covariance_with_log_gradient(const Kernel& k, const Query& a, const Query& b,
                                    Eigen::Ref<Eigen::VectorXd> grad);

// Throws std::invalid_argument unless a window is well formed: lower and upper (centre and sd) of
// the same size, finite, lower <= upper, sd >= 0; or a weighted point set has at least one point,
// one finite weight per point and finite coordinates. Points are not checked.
void validate_query(const Query& q);

// A representative location of the query: the point itself, or a window's centre ((lower + upper)
// / 2 for a box), or a point set's weighted mean (its plain mean when the weights sum to 0, where
// the weighted mean is undefined). Validates the query first (validate_query), so
// GaussianProcess::add, which checks the dimension through it, rejects malformed queries before
// they enter the model. Returned by value: a box stores no centre.
Eigen::VectorXd location(const Query& q);

}  // namespace tune
