#pragma once
// What the GP observes: a linear functional of f plus Gaussian noise: the value at a point, the
// uniform average over a box, or the average under a Gaussian window. The GP and the
// hyperparameter fit see queries only through the functions below.
//
// Squared exponential: window covariances are exact closed forms (window_kernels.hpp). Matern-5/2:
// quasi-Monte Carlo with a fixed node set per window (window::kWindowNodes nodes), gradients
// differentiating that same quadrature. Point-point covariances are the kernel itself, bit for bit.
#include <Eigen/Core>
#include <variant>

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

using Query = std::variant<PointQuery, BoxQuery, GaussianWindowQuery>;

struct Observation {
  Query query;
  double value = 0.0;
  // Index into the GP's noise variances: observations of different kinds (e.g. resolution levels)
  // may have different noise.
  std::size_t noise_group = 0;
};

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
// the same size, finite, lower <= upper, sd >= 0. Points are not checked.
void validate_query(const Query& q);

// A representative location of the query: the point itself, or a window's centre ((lower + upper)
// / 2 for a box). Validates the query first (validate_query), so GaussianProcess::add, which checks
// the dimension through it, rejects malformed windows before they enter the model. Returned by
// value: a box stores no centre.
Eigen::VectorXd location(const Query& q);

}  // namespace tune
