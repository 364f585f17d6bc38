#pragma once
// What the GP observes: a linear functional of f plus Gaussian noise. Today the functional is the
// value at a point; window averages (uniform box, Gaussian window) are further alternatives of
// `Query`, and only the covariance functions below need to learn them: the GP and the
// hyperparameter fit see queries only through these functions.
#include <Eigen/Core>
#include <variant>

#include "tune/gp/kernel.hpp"

namespace tune {

struct PointQuery {
  Eigen::VectorXd x;
};

using Query = std::variant<PointQuery>;

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

// A representative location of the query (the point itself, or a window's centre).
const Eigen::VectorXd& location(const Query& q);

}  // namespace tune
