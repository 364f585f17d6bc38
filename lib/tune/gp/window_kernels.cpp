#include "tune/gp/window_kernels.hpp"

#include <boost/math/special_functions/erf.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "tune/space/sampling.hpp"

namespace tune::window {

namespace {

constexpr double kSqrtPi = 1.77245385090551602729816748334;
constexpr double kSqrtHalfPi = 1.25331413731550025120788264241;  // sqrt(pi / 2)
constexpr double kSqrtTwoPi = 2.50662827463100050241576528481;   // sqrt(2 pi)
constexpr double kInvSqrt2 = 0.707106781186547524400844362105;

// 6-point Gauss-Legendre on [0, 1]: nodes (1 + x_j) / 2, weights w_j / 2.
constexpr int kGl = 6;
constexpr double kGlNode[kGl] = {
    0.0337652428984239860938492, 0.169395306766867743169300, 0.380690406958401545684750,
    0.619309593041598454315250,  0.830604693233132256830700, 0.966234757101576013906151};
constexpr double kGlWeight[kGl] = {
    0.0856622461895851725201480, 0.180380786524069303784916, 0.233956967286345523694935,
    0.233956967286345523694935,  0.180380786524069303784916, 0.0856622461895851725201480};

// erf(u) - erf(v) for u >= v, through erfc in either tail so that nothing cancels there.
double erf_diff(double u, double v) {
  if (v >= 0.0) return std::erfc(v) - std::erfc(u);
  if (u <= 0.0) return std::erfc(-u) - std::erfc(-v);
  return std::erf(u) - std::erf(v);
}

// H(z) = sqrt(pi) ierfc(z) = exp(-z^2) - sqrt(pi) z erfc(z), z >= 0; H' = -sqrt(pi) erfc(z).
double h_of(double z, double& erfc_z) {
  erfc_z = std::erfc(z);
  return std::exp(-z * z) - kSqrtPi * z * erfc_z;
}

// An average of g(u) = exp(-u^2 / (2 L^2)) and its derivatives with respect to log L and to the
// position c of a point argument (u = y - c).
struct Average {
  double value = 0.0;
  double dlog_l = 0.0;
  double dc = 0.0;
};

// Average of g(y - c) over y uniform in [lo, hi] (hi > lo).
Average point_interval(double c, double lo, double hi, double L, double L2, bool derivatives) {
  const double w = hi - lo;
  Average r;
  if (w < kNarrowInterval * L) {
    for (int j = 0; j < kGl; ++j) {
      const double u = lo + w * kGlNode[j] - c;
      const double t = u * u / L2;
      const double g = kGlWeight[j] * std::exp(-0.5 * t);
      r.value += g;
      r.dlog_l += g * t;        // d g / d log L = g u^2 / L^2
      r.dc += g * (u / L2);     // d g(y - c) / dc = g (y - c) / L^2
    }
    return r;
  }
  const double alpha = lo - c, beta = hi - c, s = kInvSqrt2 / L;
  r.value = (L / w) * kSqrtHalfPi * erf_diff(beta * s, alpha * s);
  if (derivatives) {
    const double ga = std::exp(-0.5 * alpha * alpha / L2), gb = std::exp(-0.5 * beta * beta / L2);
    // L dP/dL by parts: P + (alpha g(alpha) - beta g(beta)) / w; dP/dc = (g(alpha) - g(beta)) / w.
    r.dlog_l = r.value + (alpha * ga - beta * gb) / w;
    r.dc = (ga - gb) / w;
  }
  return r;
}

// Average of g(x - y) over x uniform in [lo1, hi1] and y uniform in [lo2, hi2] (both of positive
// width; a narrow one by Gauss-Legendre).
Average interval_interval(double lo1, double hi1, double lo2, double hi2, double L, double L2, bool derivatives) {
  const double w1 = hi1 - lo1, w2 = hi2 - lo2;
  const bool narrow1 = w1 < kNarrowInterval * L, narrow2 = w2 < kNarrowInterval * L;
  Average r;
  if (narrow1 && narrow2) {
    for (int i = 0; i < kGl; ++i) {
      const double x = lo1 + w1 * kGlNode[i];
      for (int j = 0; j < kGl; ++j) {
        const double u = x - (lo2 + w2 * kGlNode[j]);
        const double t = u * u / L2;
        const double g = kGlWeight[i] * kGlWeight[j] * std::exp(-0.5 * t);
        r.value += g;
        r.dlog_l += g * t;
      }
    }
    return r;
  }
  if (narrow1 || narrow2) {
    // Gauss-Legendre over the narrow interval of the point-interval form over the other one.
    const double lo_n = narrow1 ? lo1 : lo2, w_n = narrow1 ? w1 : w2;
    const double lo_w = narrow1 ? lo2 : lo1, hi_w = narrow1 ? hi2 : hi1;
    for (int j = 0; j < kGl; ++j) {
      const Average p = point_interval(lo_n + w_n * kGlNode[j], lo_w, hi_w, L, L2, derivatives);
      r.value += kGlWeight[j] * p.value;
      r.dlog_l += kGlWeight[j] * p.dlog_l;
    }
    return r;
  }
  const double scale = kInvSqrt2 / L;
  const double u[4] = {hi1 - lo2, hi1 - hi2, lo1 - lo2, lo1 - hi2};
  const double sign[4] = {1.0, -1.0, -1.0, 1.0};
  const double overlap = std::max(0.0, std::min(hi1, hi2) - std::max(lo1, lo2));
  double h_sum = 0.0, dh_sum = 0.0;
  for (int k = 0; k < 4; ++k) {
    const double z = std::abs(u[k]) * scale;
    double erfc_z = 0.0;
    const double h = h_of(z, erfc_z);
    h_sum += sign[k] * h;
    // d (L^2 H(z)) / d log L with dz/dlog L = -z: L^2 (2 H + sqrt(pi) z erfc z).
    if (derivatives) dh_sum += sign[k] * (2.0 * h + kSqrtPi * z * erfc_z);
  }
  const double linear = kSqrtTwoPi * L * overlap;  // d/dlog L of this is itself
  const double inv_area = 1.0 / (w1 * w2);
  r.value = (linear + L2 * h_sum) * inv_area;
  if (derivatives) r.dlog_l = (linear + L2 * dh_sum) * inv_area;
  return r;
}

// One coordinate of a measure: [lo, hi] uniform if interval, else a point at lo (plus a Gaussian of
// variance var).
struct Side {
  double lo, hi, var;
  bool interval;
};

Side side_of(const View& v, Eigen::Index i) {
  switch (v.kind) {
    case Kind::point: return {v.a[i], v.a[i], 0.0, false};
    case Kind::box: return {v.a[i], v.b[i], 0.0, v.b[i] > v.a[i]};
    case Kind::gaussian: return {v.a[i], v.a[i], v.b[i] * v.b[i], false};
  }
  return {0.0, 0.0, 0.0, false};
}

double se_expected(const Kernel& k, const View& a, const View& b, double* grad_log, double* grad_x) {
  const Eigen::Index d = static_cast<Eigen::Index>(k.dim());
  const Eigen::VectorXd& inv_sq = k.inverse_squared_lengthscales();
  const Eigen::VectorXd& ls = k.lengthscales();
  const bool derivatives = grad_log != nullptr || grad_x != nullptr;
  // value = s exp(-r2 / 2) prod, r2 collecting the dimensions of Gaussian form and prod the others;
  // the gradients are first collected as logarithmic derivatives.
  double r2 = 0.0, prod = 1.0;
  for (Eigen::Index i = 0; i < d; ++i) {
    const Side sa = side_of(a, i), sb = side_of(b, i);
    const double t2 = sa.var + sb.var;
    double dlog_l = 0.0, dlog_x = 0.0;
    if (!sa.interval && !sb.interval) {
      const double u = sa.lo - sb.lo;
      if (t2 == 0.0) {
        // As a point pair: the same terms as Kernel::scaled_sq_distance.
        const double q = u * u * inv_sq(i);
        r2 += q;
        dlog_l = q;                 // -1/2 dq/dlog l, dq/dlog l = -2 q
        dlog_x = u * inv_sq(i);     // -1/2 dq/dx_b, q = (a - x_b)^2 / l^2
      } else {
        // (l / L) exp(-u^2 / (2 L^2)), L^2 = l^2 + T^2.
        const double l2 = ls(i) * ls(i), L2 = l2 + t2;
        const double q = u * u / L2;
        r2 += q;
        prod *= std::sqrt(l2 / L2);
        // d log(l/L)/dlog l = T^2 / L^2; -1/2 dq/dlog l = q l^2 / L^2.
        dlog_l = t2 / L2 + q * l2 / L2;
        dlog_x = u / L2;
      }
    } else {
      const double l = ls(i), l2 = l * l;
      const double L2 = t2 == 0.0 ? l2 : l2 + t2, L = t2 == 0.0 ? l : std::sqrt(L2);
      const double pre = t2 == 0.0 ? 1.0 : std::sqrt(l2 / L2);
      Average avg;
      double dc_b = 0.0;  // derivative with respect to b's point, when b is the point
      if (sa.interval && sb.interval) {
        avg = interval_interval(sa.lo, sa.hi, sb.lo, sb.hi, L, L2, derivatives);
      } else if (sa.interval) {
        avg = point_interval(sb.lo, sa.lo, sa.hi, L, L2, derivatives);
        dc_b = avg.dc;
      } else {
        avg = point_interval(sa.lo, sb.lo, sb.hi, L, L2, derivatives);
      }
      const double f = pre * avg.value;
      prod *= f;
      if (avg.value > 0.0) {
        // d log f / d log l = T^2/L^2 + (l^2/L^2) dlog avg / dlog L   (dlog L / dlog l = l^2 / L^2).
        dlog_l = t2 / L2 + (l2 / L2) * (avg.dlog_l / avg.value);
        dlog_x = dc_b / avg.value;
      }
    }
    if (grad_log) grad_log[i] = dlog_l;
    if (grad_x) grad_x[i] = dlog_x;
  }
  const double value = k.outputscale() * std::exp(-0.5 * r2) * prod;
  if (grad_log) {
    for (Eigen::Index i = 0; i < d; ++i) grad_log[i] *= value;
    grad_log[d] = value;
  }
  if (grad_x)
    for (Eigen::Index i = 0; i < d; ++i) grad_x[i] *= value;
  return value;
}

// The quadrature nodes of a measure, one per column of `scratch` (or the point itself).
const double* nodes_of(const View& v, Eigen::Index d, Eigen::MatrixXd& scratch, Eigen::Index& count) {
  if (v.kind == Kind::point) {
    count = 1;
    return v.a;
  }
  const NodeSet& nodes = window_nodes(static_cast<std::size_t>(d));
  const Eigen::MatrixXd& base = v.kind == Kind::box ? nodes.uniform : nodes.normal;
  count = base.cols();
  scratch.resize(d, count);
  for (Eigen::Index j = 0; j < count; ++j)
    for (Eigen::Index i = 0; i < d; ++i) {
      // box: lower + (upper - lower) u; Gaussian: centre + sd z.
      const double spread = v.kind == Kind::box ? v.b[i] - v.a[i] : v.b[i];
      scratch(i, j) = v.a[i] + spread * base(i, j);
    }
  return scratch.data();
}

double qmc_expected(const Kernel& k, const View& a, const View& b, double* grad_log, double* grad_x) {
  const Eigen::Index d = static_cast<Eigen::Index>(k.dim());
  const double* inv_sq = k.inverse_squared_lengthscales().data();
  // Per-thread scratch: no allocation once a thread has seen the dimension.
  thread_local Eigen::MatrixXd scratch_a, scratch_b;
  Eigen::Index na = 0, nb = 0;
  const double* A = nodes_of(a, d, scratch_a, na);
  const double* B = nodes_of(b, d, scratch_b, nb);
  if (grad_log)
    for (Eigen::Index i = 0; i <= d; ++i) grad_log[i] = 0.0;
  if (grad_x)
    for (Eigen::Index i = 0; i < d; ++i) grad_x[i] = 0.0;
  double sum = 0.0;
  for (Eigen::Index j = 0; j < nb; ++j) {
    const double* y = B + j * d;
    for (Eigen::Index m = 0; m < na; ++m) {
      const double* x = A + m * d;
      double r2 = 0.0;
      for (Eigen::Index i = 0; i < d; ++i) {
        const double t = x[i] - y[i];
        r2 += t * t * inv_sq[i];
      }
      double value = 0.0, slope = 0.0;
      k.of_r2_with_slope(r2, value, slope);
      sum += value;
      if (grad_log)  // dr2/dlog l_i = -2 t_i^2 / l_i^2
        for (Eigen::Index i = 0; i < d; ++i) {
          const double t = x[i] - y[i];
          grad_log[i] -= 2.0 * slope * t * t * inv_sq[i];
        }
      if (grad_x)  // d k(x, y) / dy = 2 slope (y - x) / l^2
        for (Eigen::Index i = 0; i < d; ++i) grad_x[i] += 2.0 * slope * (y[i] - x[i]) * inv_sq[i];
    }
  }
  const double weight = 1.0 / static_cast<double>(na * nb);
  const double value = sum * weight;
  if (grad_log) {
    for (Eigen::Index i = 0; i < d; ++i) grad_log[i] *= weight;
    grad_log[d] = value;  // k is linear in the outputscale
  }
  if (grad_x)
    for (Eigen::Index i = 0; i < d; ++i) grad_x[i] *= weight;
  return value;
}

double normal_pdf_or_zero(double z) { return std::isinf(z) ? 0.0 : std::exp(-0.5 * z * z) / kSqrtTwoPi; }

std::unique_ptr<NodeSet> make_nodes(std::size_t dim) {
  const Eigen::Index d = static_cast<Eigen::Index>(dim);
  const Eigen::Index n = static_cast<Eigen::Index>(kWindowNodes);
  const double nd = static_cast<double>(n);
  // Cell k of the standard normal, [Phi^{-1}(k/n), Phi^{-1}((k+1)/n)], represented by its
  // conditional mean n (phi(a) - phi(b)); mirrored so that the table is exactly antisymmetric.
  std::vector<double> cell_mean(static_cast<std::size_t>(n));
  auto quantile = [](double u) {  // Phi^{-1}(u) = -sqrt(2) erfc^{-1}(2 u), infinite at 0 and 1
    if (u <= 0.0) return -std::numeric_limits<double>::infinity();
    return -std::sqrt(2.0) * boost::math::erfc_inv(2.0 * u);
  };
  for (Eigen::Index k = 0; k < n / 2; ++k) {
    const double a = quantile(static_cast<double>(k) / nd), b = quantile(static_cast<double>(k + 1) / nd);
    cell_mean[static_cast<std::size_t>(k)] = nd * (normal_pdf_or_zero(a) - normal_pdf_or_zero(b));
    cell_mean[static_cast<std::size_t>(n - 1 - k)] = -cell_mean[static_cast<std::size_t>(k)];
  }
  auto nodes = std::make_unique<NodeSet>();
  Eigen::MatrixXd sobol_points(d, n);
  sobol_points.col(0).setZero();  // the unshifted sequence starts at the origin, which SobolSequence skips
  SobolSequence sobol(dim);
  sobol_points.rightCols(n - 1) = sobol.next(static_cast<std::size_t>(n - 1));
  nodes->uniform.resize(d, n);
  nodes->normal.resize(d, n);
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < d; ++i) {
      // Every coordinate of the first 64 points is a multiple of 1/64: the cell index.
      const auto cell = static_cast<std::size_t>(std::lround(sobol_points(i, j) * nd));
      nodes->uniform(i, j) = (static_cast<double>(cell) + 0.5) / nd;  // the cell's midpoint
      nodes->normal(i, j) = cell_mean[cell];
    }
  return nodes;
}

}  // namespace

const NodeSet& window_nodes(std::size_t dim) {
  thread_local std::vector<std::unique_ptr<NodeSet>> cache;
  if (dim >= cache.size()) cache.resize(dim + 1);
  if (!cache[dim]) cache[dim] = make_nodes(dim);
  return *cache[dim];
}

double expected_kernel(const Kernel& k, const View& a, const View& b, double* grad_log, double* grad_x) {
  if (k.type() == KernelType::squared_exponential) return se_expected(k, a, b, grad_log, grad_x);
  return qmc_expected(k, a, b, grad_log, grad_x);
}

}  // namespace tune::window
