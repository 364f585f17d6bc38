#pragma once
// Kernel expectations over windows (the machinery behind the window alternatives of `Query`).
//
// A query is seen here as a probability measure on R^d: a point (Dirac), the uniform law on an
// axis-aligned box, or an axis-aligned Gaussian. Cov(L_a f, L_b f) = E[k(U, V)], U ~ a, V ~ b
// independent.
//
// Squared exponential (separable): exact, one factor per dimension (digest-iqbo-cmets.md 7.1.6,
// digest-gpoo-zoghi.md 3.4). In one dimension, with T^2 the sum of the Gaussian variances of both
// sides and L^2 = l^2 + T^2, a Gaussian side convolves the kernel into (l/L) exp(-u^2/(2L^2)); what
// remains is an average of exp(-u^2/(2L^2)) over zero, one or two uniform intervals:
//   none:  exp(-D^2/(2L^2))
//   one:   P = (L/w) sqrt(pi/2) [erf(beta/(sqrt2 L)) - erf(alpha/(sqrt2 L))],  alpha = lo - c,
//          beta = hi - c (point-box, or Gaussian-box with c the Gaussian's centre)
//   two:   B = [sqrt(2 pi) L ov + L^2 (H(z1) - H(z2) - H(z3) + H(z4))] / (w1 w2)
//          ov = overlap length of the two intervals, z_k = |u_k| / (sqrt2 L) for
//          u = (hi1-lo2, hi1-hi2, lo1-lo2, lo1-hi2), H(z) = exp(-z^2) - sqrt(pi) z erfc(z).
// B is the digest's second difference of G(t) = t l sqrt(pi/2) erf(t/(sqrt2 l)) + l^2 exp(..)
// with G split as sqrt(pi/2) l |t| + l^2 H(|t|/(sqrt2 l)): the |t| parts sum exactly to
// 2 sqrt(pi/2) l ov (the second difference of |t| is twice the overlap), which removes their
// cancellation. An interval much narrower than L (w < kNarrowInterval L) is integrated by 6-point
// Gauss-Legendre instead: the closed forms cancel there (relative error ~ eps L/w, eps (L/w)^2),
// while Gauss-Legendre is exact to round-off (error ~ (w/L)^12). Gradients are the exact
// derivatives of whichever form is used.
//
// Matern-5/2 (not separable): quasi-Monte Carlo with one fixed node set per dimension
// (window_nodes). Gradients differentiate the same quadrature.
#include <Eigen/Core>
#include <cstddef>

#include "tune/gp/kernel.hpp"

namespace tune::window {

// Nodes per window of the Matern quadrature. A point-window covariance costs kWindowNodes kernel
// evaluations and a window-window covariance kWindowNodes^2 = 4096 (~0.1 ms); a marginal-likelihood
// evaluation over n windows makes n(n+1)/2 of those, so 100 windows cost ~0.5 s per evaluation.
// Accuracy against fine quadrature (window_observation_test): worst relative error 8e-5 for boxes
// up to two lengthscales wide and 3e-3 for Gaussian windows of sd up to a lengthscale (a 1-D sweep
// with sd up to two lengthscales: 7e-3 relative where the covariance exceeds 1e-2 of the
// outputscale, 1e-3 of the outputscale absolute).
inline constexpr std::size_t kWindowNodes = 64;

// Below this width / L an interval is integrated by Gauss-Legendre (see above).
inline constexpr double kNarrowInterval = 0.25;

// The Matern quadrature's node set for dimension dim, one node per column, each of weight
// 1 / kWindowNodes. It is the first 64 points of the unshifted Sobol sequence (origin included): a
// (t, 6, d)-net, so every coordinate puts exactly one point in each of the cells [k/64, (k+1)/64).
// Each cell is represented by its conditional mean: `uniform` holds the cell midpoints (mapped into
// a box as lower + (upper - lower) u) and `normal` the conditional means of the corresponding
// standard-normal cells [Phi^{-1}(k/64), Phi^{-1}((k+1)/64)] (mapped as centre + sd z; exactly
// antisymmetric, so mean 0; mean square 0.996). Conditional means keep the tails better than the
// quantiles of the midpoints (measured: 2-3 times smaller errors for the Matern kernel). Computed
// once per thread and dimension.
struct NodeSet {
  Eigen::MatrixXd uniform;
  Eigen::MatrixXd normal;
};
const NodeSet& window_nodes(std::size_t dim);

enum class Kind { point, box, gaussian };

// A query seen as a measure, without copies. point: a = x. box: a = lower, b = upper. gaussian:
// a = centre, b = sd. Windows that are degenerate in every coordinate are passed as points.
struct View {
  Kind kind = Kind::point;
  const double* a = nullptr;
  const double* b = nullptr;
};

// E[k(U, V)], U ~ a, V ~ b, for any kernel. grad_log (size dim + 1, or null): the gradient with
// respect to (log l_1..log l_d, log outputscale). grad_x (size dim, or null; b must be a point):
// the gradient with respect to b's point.
double expected_kernel(const Kernel& k, const View& a, const View& b, double* grad_log, double* grad_x);

}  // namespace tune::window
