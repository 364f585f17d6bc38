#include "tune/gp/hyperparameter_fit.hpp"

#include <nlopt.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace tune {

namespace {

constexpr double kLog2Pi = 1.8378770664093454836;

std::size_t noise_groups_of(const GpHyperparameters& hp) { return hp.noise_variances.size(); }

Eigen::VectorXd to_theta(const GpHyperparameters& hp) {
  const Eigen::Index d = hp.lengthscales.size();
  std::vector<double> logs;
  for (Eigen::Index i = 0; i < d; ++i) logs.push_back(std::log(hp.lengthscales(i)));
  logs.push_back(std::log(hp.outputscale));
  for (double v : hp.noise_variances) logs.push_back(std::log(v));
  for (double r : hp.discrepancy_ratios) logs.push_back(std::log(std::max(r, 1e-300)));
  for (double rho : hp.group_scales) logs.push_back(std::log(rho));
  for (double t : hp.trend_variances) logs.push_back(std::log(std::max(t, 1e-300)));
  for (double m : hp.discrepancy_lengthscale_factors) logs.push_back(std::log(m));
  return Eigen::Map<const Eigen::VectorXd>(logs.data(), static_cast<Eigen::Index>(logs.size()));
}

// theta = (log l, log outputscale, log noise per noise group, log r per discrepancy group, log rho
// per scaled group, log t per trend group, log m per group with a discrepancy lengthscale factor);
// `shape` gives the kernel, the fixed offset variance
// and how many entries each block has.
GpHyperparameters from_theta(const Eigen::VectorXd& theta, const GpHyperparameters& shape) {
  GpHyperparameters hp;
  hp.offset_variance = shape.offset_variance;  // fixed by the caller, not fitted
  hp.kernel = shape.kernel;
  const Eigen::Index d = shape.lengthscales.size();
  hp.lengthscales = theta.head(d).array().exp();
  hp.outputscale = std::exp(theta(d));
  Eigen::Index at = d + 1;
  auto block = [&](std::vector<double>& out, std::size_t count) {
    out.clear();
    for (std::size_t i = 0; i < count; ++i) out.push_back(std::exp(theta(at++)));
  };
  block(hp.noise_variances, shape.noise_variances.size());
  block(hp.discrepancy_ratios, shape.discrepancy_ratios.size());
  block(hp.group_scales, shape.group_scales.size());
  block(hp.trend_variances, shape.trend_variances.size());
  block(hp.discrepancy_lengthscale_factors, shape.discrepancy_lengthscale_factors.size());
  return hp;
}

struct Objective {
  const std::vector<Observation>* observations;
  const Standardization* standardization;
  GpHyperparameters shape;  // the warm start: kernel, offset variance, block sizes
  Eigen::VectorXd prior_mean;  // of theta
  Eigen::VectorXd prior_sd;    // <= 0 disables
  Eigen::VectorXd fixed;       // theta entries held fixed when free(i) is false
  std::vector<bool> free;
  std::size_t evaluations = 0;
  double best_value = -std::numeric_limits<double>::infinity();
  Eigen::VectorXd best_theta;

  // Expands the optimiser's vector (free entries only) into the full theta.
  Eigen::VectorXd expand(const double* x) const {
    Eigen::VectorXd theta = fixed;
    std::size_t k = 0;
    for (std::size_t i = 0; i < free.size(); ++i)
      if (free[i]) theta(static_cast<Eigen::Index>(i)) = x[k++];
    return theta;
  }

  // The noise block [noise_at, noise_at + noise_count) under the pooled prior, if pooled.
  Eigen::Index noise_at = 0, noise_count = 0;
  double pooling_sd = 0.0;

  double log_prior(const Eigen::VectorXd& theta, Eigen::VectorXd& grad) const {
    double lp = 0.0;
    for (Eigen::Index i = 0; i < theta.size(); ++i) {
      if (prior_sd(i) <= 0.0 || (i >= noise_at && i < noise_at + noise_count)) continue;
      const double z = (theta(i) - prior_mean(i)) / prior_sd(i);
      lp += -0.5 * z * z;
      grad(i) += -z / prior_sd(i);
    }
    if (noise_count > 0) lp += pooled_noise_log_prior(theta, grad);
    return lp;
  }

  // -1/2 r' S^-1 r for r = theta_noise - mean, S = (t^2 - s^2) 11' + s^2 I (t the marginal sd, s
  // the pooling sd): by Sherman-Morrison S^-1 = (I - c 11') / s^2, c = (t^2 - s^2) / (s^2 + G (t^2 - s^2)).
  double pooled_noise_log_prior(const Eigen::VectorXd& theta, Eigen::VectorXd& grad) const {
    const Eigen::VectorXd r =
        theta.segment(noise_at, noise_count) - prior_mean.segment(noise_at, noise_count);
    const double t2 = prior_sd(noise_at) * prior_sd(noise_at), s2 = pooling_sd * pooling_sd;
    const double c = (t2 - s2) / (s2 + static_cast<double>(noise_count) * (t2 - s2));
    const Eigen::VectorXd precision_r = (r.array() - c * r.sum()).matrix() / s2;
    grad.segment(noise_at, noise_count) -= precision_r;
    return -0.5 * r.dot(precision_r);
  }

  double operator()(unsigned n, const double* x, double* g) {
    ++evaluations;
    const Eigen::VectorXd theta = expand(x);
    Eigen::VectorXd grad = Eigen::VectorXd::Zero(theta.size());
    double value = log_marginal_likelihood(*observations, *standardization, from_theta(theta, shape), &grad);
    if (!std::isfinite(value)) {
      // A failed factorisation: report a very poor value with no slope so L-BFGS backs off.
      if (g) std::fill(g, g + n, 0.0);
      return -1e300;
    }
    value += log_prior(theta, grad);
    if (value > best_value) {
      best_value = value;
      best_theta = theta;
    }
    if (g) {
      std::size_t k = 0;
      for (std::size_t i = 0; i < free.size(); ++i)
        if (free[i]) g[k++] = grad(static_cast<Eigen::Index>(i));
    }
    return value;
  }

  static double callback(unsigned n, const double* x, double* g, void* self) {
    return (*static_cast<Objective*>(self))(n, x, g);
  }
};

}  // namespace

Standardization standardization_of(const std::vector<Observation>& observations) {
  Standardization s;
  const std::size_t n = observations.size();
  if (n == 0) return s;
  double sum = 0.0;
  for (const Observation& o : observations) sum += o.value;
  s.mean = sum / static_cast<double>(n);
  if (n < 2) return s;
  double ss = 0.0;
  for (const Observation& o : observations) ss += (o.value - s.mean) * (o.value - s.mean);
  const double sd = std::sqrt(ss / static_cast<double>(n - 1));
  // Constant values (or nearly so relative to their magnitude) would divide by ~0.
  if (sd > 1e-12 * std::max(1.0, std::abs(s.mean))) s.scale = sd;
  return s;
}

double log_marginal_likelihood(const std::vector<Observation>& observations,
                               const Standardization& standardization, const GpHyperparameters& hp,
                               Eigen::VectorXd* gradient) {
  const Eigen::Index n = static_cast<Eigen::Index>(observations.size());
  const Eigen::Index d = hp.lengthscales.size();
  const Kernel kernel = hp.make_kernel();
  Eigen::MatrixXd K(n, n);
  Eigen::VectorXd y(n);
  // With a gradient, the kernel's log-parameter derivatives of every pair (i >= j) are kept from
  // this pass, so each pair costs one kernel evaluation (two in a group whose discrepancy has its
  // own lengthscales).
  Eigen::MatrixXd dK(gradient ? d + 1 : 0, gradient ? n * (n + 1) / 2 : 0);
  Eigen::Index pair = 0;
  // K_ij = k_ij rho_i rho_j + [same group g] (r_g k^g_ij + t_g phi_i . phi_j + offset_variance),
  // k^g being group g's discrepancy kernel (k itself without a lengthscale factor). For the
  // gradients with respect to log r, log rho, log t and log m, each pair's k_ij and k^g_ij before
  // those factors, and its phi_i . phi_j, are kept.
  const std::size_t r_groups = hp.discrepancy_ratios.size();
  const std::size_t s_groups = hp.group_scales.size();
  const std::size_t t_groups = hp.trend_variances.size();
  const std::size_t m_groups = hp.discrepancy_lengthscale_factors.size();
  const std::vector<Kernel> discrepancy_kernels = hp.make_discrepancy_kernels();
  const std::size_t pairs = static_cast<std::size_t>(n * (n + 1) / 2);
  const bool keep_base = gradient && (r_groups > 0 || s_groups > 0);
  // base: k_ij under f's kernel; base_discrepancy: under the pair's discrepancy kernel (k_ij when
  // its group has none); lengthscale_slope: the sum over dimensions of that kernel's log-lengthscale
  // derivatives, d/d log m_g of it.
  std::vector<double> base(keep_base ? pairs : 0), base_discrepancy(keep_base ? pairs : 0);
  std::vector<double> lengthscale_slope(gradient && m_groups > 0 ? pairs : 0);
  Eigen::VectorXd discrepancy_gradient(d + 1);
  std::vector<double> trend_features(gradient && t_groups > 0 ? pairs : 0);  // phi_i . phi_j
  // The trend features of the observations in a trend group (empty for the others).
  std::vector<Eigen::VectorXd> phi(t_groups > 0 ? static_cast<std::size_t>(n) : 0);
  for (std::size_t i = 0; i < phi.size(); ++i)
    if (observations[i].offset_group && *observations[i].offset_group < t_groups)
      phi[i] = trend_feature(observations[i].query);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Observation& oi = observations[static_cast<std::size_t>(i)];
    y(i) = (oi.value - standardization.mean) / standardization.scale;
    const double rho_i = group_scale(hp.group_scales, oi);
    for (Eigen::Index j = 0; j <= i; ++j) {
      const Observation& oj = observations[static_cast<std::size_t>(j)];
      const Eigen::Index this_pair = pair;
      const double k = gradient ? covariance_with_log_gradient(kernel, oi.query, oj.query, dK.col(pair++))
                                : covariance(kernel, oi.query, oj.query);
      const auto at = static_cast<std::size_t>(this_pair);
      double factor = rho_i * group_scale(hp.group_scales, oj);
      const bool shared = oi.offset_group && oi.offset_group == oj.offset_group;
      const bool discrepant = shared && *oi.offset_group < r_groups;
      double k_discrepancy = k;
      if (discrepant && *oi.offset_group < m_groups) {
        // The discrepancy's own kernel: K_ij = k_ij rho_i rho_j + r_g k^g_ij.
        const Kernel& kg = discrepancy_kernels[*oi.offset_group];
        const double r = hp.discrepancy_ratios[*oi.offset_group];
        if (gradient) {
          k_discrepancy = covariance_with_log_gradient(kg, oi.query, oj.query, discrepancy_gradient);
          dK.col(this_pair) = dK.col(this_pair) * factor + r * discrepancy_gradient;
          lengthscale_slope[at] = r * discrepancy_gradient.head(d).sum();
        } else {
          k_discrepancy = covariance(kg, oi.query, oj.query);
        }
        K(i, j) = k * factor + r * k_discrepancy;
      } else {
        // f's own kernel: k_ij (rho_i rho_j + r_g), summed as before the factors existed, so that a
        // model without them fits to the same bits.
        if (discrepant) factor += hp.discrepancy_ratios[*oi.offset_group];
        if (gradient) dK.col(this_pair) *= factor;
        K(i, j) = k * factor;
      }
      if (keep_base) {
        base[at] = k;
        base_discrepancy[at] = k_discrepancy;
      }
      // The offsets' prior variance is fixed, so it adds to K but not to the gradient.
      if (shared) K(i, j) += hp.offset_variance;
      if (shared && *oi.offset_group < t_groups) {
        const double features = phi[static_cast<std::size_t>(i)].dot(phi[static_cast<std::size_t>(j)]);
        K(i, j) += hp.trend_variances[*oi.offset_group] * features;
        if (!trend_features.empty()) trend_features[at] = features;
      }
    }
    K(i, i) += hp.noise_variances.at(oi.noise_group);
  }
  const Eigen::LLT<Eigen::MatrixXd> llt(K.selfadjointView<Eigen::Lower>());
  if (llt.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  const Eigen::MatrixXd& L = llt.matrixLLT();
  const Eigen::VectorXd alpha = llt.solve(y);
  const double log_det = 2.0 * L.diagonal().array().log().sum();
  const double value = -0.5 * y.dot(alpha) - 0.5 * log_det - 0.5 * static_cast<double>(n) * kLog2Pi;
  if (gradient) {
    // d/dtheta_j = 1/2 tr((alpha alpha' - K^{-1}) dK/dtheta_j). K^{-1} is formed from the Cholesky
    // factor (two triangular solves) only because the trace needs all of it.
    Eigen::MatrixXd W = Eigen::MatrixXd::Identity(n, n);
    llt.solveInPlace(W);
    W = alpha * alpha.transpose() - W;
    const std::size_t groups = hp.noise_variances.size();
    Eigen::VectorXd& g = *gradient;
    g.setZero(d + 1 + static_cast<Eigen::Index>(groups + r_groups + s_groups + t_groups + m_groups));
    // Weights of the pairs: off-diagonal pairs count twice, times the 1/2.
    Eigen::VectorXd w(pair);
    pair = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
      for (Eigen::Index j = 0; j < i; ++j) w(pair++) = W(i, j);
      w(pair++) = 0.5 * W(i, i);
      const Observation& oi = observations[static_cast<std::size_t>(i)];
      g(d + 1 + static_cast<Eigen::Index>(oi.noise_group)) += 0.5 * W(i, i) * hp.noise_variances[oi.noise_group];
    }
    g.head(d + 1).noalias() += dK * w;
    if (keep_base || !trend_features.empty() || !lengthscale_slope.empty()) {
      // d K_ij / d log r_g = r_g k_ij for the pairs of group g; d K_ij / d log rho_g =
      // k_ij rho_i rho_j ([i in g] + [j in g]); d K_ij / d log t_g = t_g phi_i . phi_j.
      const Eigen::Index r_at = d + 1 + static_cast<Eigen::Index>(groups);
      const Eigen::Index s_at = r_at + static_cast<Eigen::Index>(r_groups);
      const Eigen::Index t_at = s_at + static_cast<Eigen::Index>(s_groups);
      const Eigen::Index m_at = t_at + static_cast<Eigen::Index>(t_groups);
      pair = 0;
      for (Eigen::Index i = 0; i < n; ++i) {
        const Observation& oi = observations[static_cast<std::size_t>(i)];
        const double rho_i = group_scale(hp.group_scales, oi);
        for (Eigen::Index j = 0; j <= i; ++j, ++pair) {
          const Observation& oj = observations[static_cast<std::size_t>(j)];
          const auto at = static_cast<std::size_t>(pair);
          const bool shared = oi.offset_group && oi.offset_group == oj.offset_group;
          if (shared && *oi.offset_group < t_groups)
            g(t_at + static_cast<Eigen::Index>(*oi.offset_group)) +=
                w(pair) * hp.trend_variances[*oi.offset_group] * trend_features[at];
          if (shared && *oi.offset_group < m_groups && *oi.offset_group < r_groups)
            g(m_at + static_cast<Eigen::Index>(*oi.offset_group)) += w(pair) * lengthscale_slope[at];
          if (!keep_base) continue;
          const double wk = w(pair) * base[at];
          if (shared && *oi.offset_group < r_groups)
            g(r_at + static_cast<Eigen::Index>(*oi.offset_group)) +=
                w(pair) * base_discrepancy[at] * hp.discrepancy_ratios[*oi.offset_group];
          const double both = wk * rho_i * group_scale(hp.group_scales, oj);
          if (oi.offset_group && *oi.offset_group < s_groups) g(s_at + static_cast<Eigen::Index>(*oi.offset_group)) += both;
          if (oj.offset_group && *oj.offset_group < s_groups) g(s_at + static_cast<Eigen::Index>(*oj.offset_group)) += both;
        }
      }
    }
  }
  return value;
}

GpHyperparameters default_hyperparameters(KernelType kernel, std::size_t dim, std::size_t noise_groups,
                                          const HyperparameterFitOptions& options) {
  GpHyperparameters hp;
  hp.kernel = kernel;
  const double median = options.lengthscale_prior_median_1d * std::sqrt(static_cast<double>(dim));
  hp.lengthscales = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(dim),
                                              std::clamp(median, options.lengthscale_min, options.lengthscale_max));
  hp.outputscale = 1.0;
  hp.noise_variances.assign(std::max<std::size_t>(1, noise_groups),
                            std::clamp(1e-2, options.noise_min, options.noise_max));
  return hp;
}

HyperparameterFitResult fit_hyperparameters(const std::vector<Observation>& all_observations,
                                            const Standardization& standardization,
                                            const GpHyperparameters& warm_start,
                                            const HyperparameterFitOptions& options, Rng& rng) {
  const std::size_t dim = static_cast<std::size_t>(warm_start.lengthscales.size());
  const std::size_t groups = noise_groups_of(warm_start);
  if (dim == 0 || groups == 0) throw std::invalid_argument("fit_hyperparameters: empty warm start");

  // A seeded random subset (kept in the original order) when there are too many points.
  std::vector<Observation> subset;
  const std::vector<Observation>* observations = &all_observations;
  if (options.max_points > 0 && all_observations.size() > options.max_points) {
    std::vector<std::size_t> index(all_observations.size());
    std::iota(index.begin(), index.end(), 0);
    for (std::size_t i = 0; i < options.max_points; ++i) {  // partial Fisher-Yates
      const std::size_t j = i + static_cast<std::size_t>(rng() % (index.size() - i));
      std::swap(index[i], index[j]);
    }
    index.resize(options.max_points);
    std::sort(index.begin(), index.end());
    for (std::size_t i : index) subset.push_back(all_observations[i]);
    observations = &subset;
  }

  const Eigen::Index p = to_theta(warm_start).size();
  Objective objective;
  objective.shape = warm_start;
  objective.observations = observations;
  objective.standardization = &standardization;
  objective.prior_mean.resize(p);
  objective.prior_sd.resize(p);
  objective.fixed = to_theta(warm_start);
  objective.free.assign(static_cast<std::size_t>(p), true);
  Eigen::VectorXd lower(p), upper(p);
  Eigen::Index at = 0;
  // The next `count` entries of theta: bounds and log-normal prior (natural units).
  auto block = [&](std::size_t count, double lo_value, double hi_value, const LogNormalPrior& prior, bool free) {
    for (std::size_t k = 0; k < count; ++k, ++at) {
      lower(at) = std::log(lo_value);
      upper(at) = std::log(hi_value);
      objective.prior_mean(at) = prior.log_median;
      objective.prior_sd(at) = prior.log_sd;
      objective.free[static_cast<std::size_t>(at)] = free;
    }
  };
  const double ls_median = options.lengthscale_prior_median_1d * std::sqrt(static_cast<double>(dim));
  block(dim, options.lengthscale_min, options.lengthscale_max, {std::log(ls_median), options.lengthscale_prior_log_sd},
        true);
  block(1, options.outputscale_min, options.outputscale_max, options.outputscale_prior, true);
  if (groups >= 2 && options.fit_noise && options.noise_prior.log_sd > 0 && options.noise_pooling_log_sd > 0 &&
      options.noise_pooling_log_sd < options.noise_prior.log_sd) {
    objective.noise_at = at;
    objective.noise_count = static_cast<Eigen::Index>(groups);
    objective.pooling_sd = options.noise_pooling_log_sd;
  }
  block(groups, options.noise_min, options.noise_max, options.noise_prior, options.fit_noise);
  block(warm_start.discrepancy_ratios.size(), options.discrepancy_min, options.discrepancy_max,
        options.discrepancy_prior, true);
  block(warm_start.group_scales.size(), options.scale_min, options.scale_max, options.scale_prior, true);
  block(warm_start.trend_variances.size(), options.trend_min, options.trend_max, options.trend_prior, true);
  block(warm_start.discrepancy_lengthscale_factors.size(), options.discrepancy_lengthscale_factor_min,
        options.discrepancy_lengthscale_factor_max, options.discrepancy_lengthscale_factor_prior, true);
  std::vector<double> lo, hi;
  for (Eigen::Index i = 0; i < p; ++i)
    if (objective.free[static_cast<std::size_t>(i)]) {
      lo.push_back(lower(i));
      hi.push_back(upper(i));
    }
  const unsigned nfree = static_cast<unsigned>(lo.size());

  // Starts: the warm start, then draws from the priors, all clamped into the box.
  std::vector<Eigen::VectorXd> starts{to_theta(warm_start)};
  if (options.smooth_start_noise > 0 && options.fit_noise) {
    Eigen::VectorXd theta = to_theta(warm_start);
    for (Eigen::Index i = 0; i < p; ++i)
      if (objective.prior_sd(i) > 0) theta(i) = objective.prior_mean(i);
    for (std::size_t k = 0; k < groups; ++k)
      theta(static_cast<Eigen::Index>(dim + 1 + k)) = std::log(options.smooth_start_noise);
    starts.push_back(theta);
  }
  for (std::size_t r = 0; r < options.random_restarts; ++r) {
    Eigen::VectorXd theta(p);
    for (Eigen::Index i = 0; i < p; ++i) {
      const double z = standard_normal(rng);
      const double sd = objective.prior_sd(i) > 0 ? objective.prior_sd(i) : 1.0;
      theta(i) = objective.prior_mean(i) + sd * z;
    }
    starts.push_back(theta);
  }

  nlopt_opt opt = nlopt_create(NLOPT_LD_LBFGS, nfree);
  if (!opt) throw std::runtime_error("fit_hyperparameters: NLopt could not create an L-BFGS optimiser");
  nlopt_set_lower_bounds(opt, lo.data());
  nlopt_set_upper_bounds(opt, hi.data());
  nlopt_set_max_objective(opt, &Objective::callback, &objective);
  nlopt_set_maxeval(opt, static_cast<int>(options.max_evaluations));
  nlopt_set_ftol_rel(opt, 1e-9);
  nlopt_set_xtol_rel(opt, 1e-6);
  for (const Eigen::VectorXd& start : starts) {
    std::vector<double> x;
    for (Eigen::Index i = 0; i < p; ++i)
      if (objective.free[static_cast<std::size_t>(i)]) x.push_back(std::clamp(start(i), lower(i), upper(i)));
    double value = 0.0;
    // Failures (round-off limits, a bad start) are fine: the objective keeps the best point seen.
    nlopt_optimize(opt, x.data(), &value);
  }
  nlopt_destroy(opt);

  if (!std::isfinite(objective.best_value) || objective.best_theta.size() == 0)
    throw std::runtime_error("fit_hyperparameters: the marginal likelihood could not be evaluated at any start");
  HyperparameterFitResult result;
  result.hyperparameters = from_theta(objective.best_theta, warm_start);
  result.log_posterior = objective.best_value;
  result.log_marginal_likelihood = log_marginal_likelihood(*observations, standardization, result.hyperparameters);
  result.evaluations = objective.evaluations;
  result.points_used = observations->size();
  return result;
}

}  // namespace tune
