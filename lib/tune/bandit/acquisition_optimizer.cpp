#include "tune/bandit/acquisition_optimizer.hpp"

#include <nlopt.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "tune/space/sampling.hpp"

namespace tune {

std::size_t AcquisitionOptimizerOptions::candidate_count(std::size_t dim) const {
  if (candidates > 0) return candidates;
  return std::clamp<std::size_t>(100 * dim, 256, 1024);
}

namespace {

struct LocalObjective {
  const GaussianProcess* gp;
  const Acquisition* acquisition;
  std::size_t dim;
  const ModelInputs* inputs = nullptr;  // null: the GP's inputs are the unit points

  static double callback(unsigned n, const double* x, double* g, void* self) {
    const auto& o = *static_cast<LocalObjective*>(self);
    const Eigen::Map<const Eigen::VectorXd> xv(x, n);
    Eigen::VectorXd grad;
    double value = 0.0;
    if (o.inputs) {
      value = o.acquisition->score(o.gp->predict_with_gradient((*o.inputs)(xv)), grad);
      grad = o.inputs->unit_gradient(xv, grad);
    } else {
      value = o.acquisition->score(o.gp->predict_with_gradient(xv), grad);
    }
    if (!std::isfinite(value)) {
      if (g) std::fill(g, g + n, 0.0);
      return -1e300;
    }
    if (g) Eigen::Map<Eigen::VectorXd>(g, n) = grad;
    return value;
  }
};

}  // namespace

std::vector<ScoredPoint> rank_acquisition(const GaussianProcess& gp, const Acquisition& acquisition,
                                          const SnapFunction& snap, const std::vector<Eigen::VectorXd>& anchors,
                                          const AcquisitionOptimizerOptions& options, Rng& rng,
                                          const ModelInputs* inputs) {
  if (inputs && inputs->identity()) inputs = nullptr;
  const std::size_t dim = inputs ? inputs->unit_dim() : gp.dim();
  // Unit points mapped to the GP's inputs only when they differ (no copy of the candidates otherwise).
  const auto predict_at = [&](const Eigen::MatrixXd& X, Eigen::VectorXd& mean, Eigen::VectorXd& variance) {
    if (inputs) gp.predict(inputs->columns(X), mean, variance);
    else gp.predict(X, mean, variance);
  };
  const Eigen::Index d = static_cast<Eigen::Index>(dim);
  const std::size_t n_total = options.candidate_count(dim);
  const std::size_t n_perturbed =
      anchors.empty() ? 0 : static_cast<std::size_t>(options.perturbation_fraction * static_cast<double>(n_total));

  // Base candidates: the model's tracked points if it has them (their posterior is kept current
  // incrementally), otherwise a fresh shifted Sobol set. Perturbations around the anchors are fresh
  // at every call and scored with one batched solve.
  Eigen::VectorXd base_mean, base_variance;
  Eigen::MatrixXd base;
  if (gp.tracking()) {
    base = inputs ? inputs->units_of(gp.tracked_points()) : gp.tracked_points();
    gp.tracked_prediction(base_mean, base_variance);
  } else {
    base = sobol_points(dim, n_total - n_perturbed, rng);
    for (Eigen::Index j = 0; j < base.cols(); ++j) base.col(j) = snap(base.col(j));
    predict_at(base, base_mean, base_variance);
  }
  Eigen::MatrixXd local(d, static_cast<Eigen::Index>(n_perturbed));
  for (std::size_t i = 0; i < n_perturbed; ++i) {
    const Eigen::VectorXd& anchor = anchors[i % anchors.size()];
    for (Eigen::Index k = 0; k < d; ++k)
      local(k, static_cast<Eigen::Index>(i)) = std::clamp(anchor(k) + options.perturbation_sd * standard_normal(rng), 0.0, 1.0);
    local.col(static_cast<Eigen::Index>(i)) = snap(local.col(static_cast<Eigen::Index>(i)));
  }
  Eigen::VectorXd local_mean, local_variance;
  predict_at(local, local_mean, local_variance);

  std::vector<ScoredPoint> ranked;
  ranked.reserve(static_cast<std::size_t>(base.cols() + local.cols()) + options.local_starts);
  auto push = [&](const Eigen::MatrixXd& X, const Eigen::VectorXd& mean, const Eigen::VectorXd& variance) {
    for (Eigen::Index j = 0; j < X.cols(); ++j) {
      const double score = acquisition.score(mean(j), variance(j));
      ranked.push_back({X.col(j), std::isnan(score) ? -std::numeric_limits<double>::infinity() : score, variance(j)});
    }
  };
  push(base, base_mean, base_variance);
  push(local, local_mean, local_variance);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const ScoredPoint& a, const ScoredPoint& b) { return a.score > b.score; });

  // Local refinement from the best distinct candidates.
  if (options.local_starts > 0 && options.local_max_evaluations > 0 && gp.size() > 0) {
    LocalObjective objective{&gp, &acquisition, dim, inputs};
    nlopt_opt opt = nlopt_create(NLOPT_LD_LBFGS, static_cast<unsigned>(dim));
    const std::vector<double> lo(dim, 0.0), hi(dim, 1.0);
    nlopt_set_lower_bounds(opt, lo.data());
    nlopt_set_upper_bounds(opt, hi.data());
    nlopt_set_max_objective(opt, &LocalObjective::callback, &objective);
    nlopt_set_maxeval(opt, static_cast<int>(options.local_max_evaluations));
    nlopt_set_xtol_rel(opt, 1e-6);
    std::vector<ScoredPoint> refined;
    std::size_t started = 0;
    for (std::size_t j = 0; j < ranked.size() && started < options.local_starts; ++j) {
      if (!std::isfinite(ranked[j].score)) break;
      if (j > 0 && ranked[j].x == ranked[j - 1].x) continue;
      ++started;
      std::vector<double> x(ranked[j].x.data(), ranked[j].x.data() + d);
      double value = 0.0;
      nlopt_optimize(opt, x.data(), &value);  // x holds the best point found even on failure
      const Eigen::VectorXd xs = snap(Eigen::Map<const Eigen::VectorXd>(x.data(), d));
      const Prediction p = inputs ? gp.predict((*inputs)(xs)) : gp.predict(xs);
      refined.push_back({xs, acquisition.score(p.mean, p.variance), p.variance});
    }
    nlopt_destroy(opt);
    ranked.insert(ranked.end(), refined.begin(), refined.end());
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const ScoredPoint& a, const ScoredPoint& b) { return a.score > b.score; });
  }
  return ranked;
}

ScoredPoint refine_within(const GaussianProcess& gp, const Acquisition& acquisition, const SnapFunction& snap,
                          const Eigen::VectorXd& start, const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                          std::size_t max_evaluations, const ModelInputs* inputs) {
  if (inputs && inputs->identity()) inputs = nullptr;
  const std::size_t dim = inputs ? inputs->unit_dim() : gp.dim();
  const Eigen::Index d = static_cast<Eigen::Index>(dim);
  std::vector<double> x(dim), lo(dim), hi(dim);
  for (Eigen::Index k = 0; k < d; ++k) {
    lo[static_cast<std::size_t>(k)] = std::clamp(lower(k), 0.0, 1.0);
    hi[static_cast<std::size_t>(k)] = std::clamp(upper(k), lo[static_cast<std::size_t>(k)], 1.0);
    x[static_cast<std::size_t>(k)] = std::clamp(start(k), lo[static_cast<std::size_t>(k)], hi[static_cast<std::size_t>(k)]);
  }
  if (gp.size() > 0 && max_evaluations > 0) {
    LocalObjective objective{&gp, &acquisition, dim, inputs};
    nlopt_opt opt = nlopt_create(NLOPT_LD_LBFGS, static_cast<unsigned>(dim));
    nlopt_set_lower_bounds(opt, lo.data());
    nlopt_set_upper_bounds(opt, hi.data());
    nlopt_set_max_objective(opt, &LocalObjective::callback, &objective);
    nlopt_set_maxeval(opt, static_cast<int>(max_evaluations));
    nlopt_set_xtol_rel(opt, 1e-6);
    double value = 0.0;
    nlopt_optimize(opt, x.data(), &value);  // x holds the best point found even on failure
    nlopt_destroy(opt);
  }
  const Eigen::VectorXd xs = snap(Eigen::Map<const Eigen::VectorXd>(x.data(), d));
  const Prediction p = inputs ? gp.predict((*inputs)(xs)) : gp.predict(xs);
  return {xs, acquisition.score(p.mean, p.variance), p.variance};
}

}  // namespace tune
