#pragma once
// GP hyperparameters by maximising the log marginal likelihood plus log-normal priors (a MAP fit)
// over log-parameters, with analytic gradients, multi-start L-BFGS (NLopt) and box bounds.
//
// Parameter vector theta = (log l_1 .. log l_d, log outputscale, log noise_1 .. log noise_G), all
// in standardised units (inputs in the unit cube, outputs (y - mean) / scale).
#include <Eigen/Core>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/random/rng.hpp"

namespace tune {

struct LogNormalPrior {
  double log_median = 0.0;  // mean of the log
  double log_sd = 1.0;      // sd of the log; <= 0 disables the prior
};

struct HyperparameterFitOptions {
  // Bounds (natural units). The lower noise bound doubles as the jitter of the Cholesky factor.
  double lengthscale_min = 1e-2;
  double lengthscale_max = 20.0;
  double outputscale_min = 1e-2;
  double outputscale_max = 1e2;
  double noise_min = 1e-6;
  double noise_max = 1.0;
  // Priors keep a fit on a handful of points away from the degenerate corners (a lengthscale that
  // interpolates every point with huge noise, or one far below the spacing of the data). The
  // lengthscale prior's median grows like sqrt(d) because distances in the unit cube do.
  double lengthscale_prior_median_1d = 0.3;
  double lengthscale_prior_log_sd = 1.0;
  LogNormalPrior outputscale_prior{0.0, 1.5};
  LogNormalPrior noise_prior{-6.9, 3.0};  // median 1e-3, broad
  bool fit_noise = true;                  // false: noise variances stay at the warm start's
  // If > 0, several noise groups (one per resolution level) share what their noises have in common:
  // the log noise variances are jointly normal, each with the marginal noise_prior, any two
  // correlated 1 - pooling^2 / noise_prior.log_sd^2, so a level with a handful of runs leans on the
  // levels with many. 0 (or >= noise_prior.log_sd): independent. Not the default: with 1.0, noisy
  // cmets campaigns' recommendations were better calibrated (|z| > 2 in fewer seeds on all four
  // problems of bench/results/noisy_recommendation.md), but their regret was better on two and worse
  // on one, and noise-free campaigns paid (Park's cost to target 2.9 -> 5.8): there a cheap level's
  // noise holds its misfit, which the full runs then inherit.
  double noise_pooling_log_sd = 0.0;
  // Discrepancy ratios of the offset groups (GpHyperparameters::discrepancy_ratios; fitted when the
  // warm start has them): a low level is believed to track f fairly closely unless the data say
  // otherwise.
  double discrepancy_min = 1e-4;
  double discrepancy_max = 1e2;
  LogNormalPrior discrepancy_prior{-2.3, 2.0};  // median 0.1
  // Scales of the offset groups (GpHyperparameters::group_scales; fitted when the warm start has
  // them): a level sees f at its own amplitude, believed close to f's unless the data say otherwise.
  double scale_min = 0.05;
  double scale_max = 20.0;
  LogNormalPrior scale_prior{0.0, 1.0};
  // Trend variances of the offset groups (GpHyperparameters::trend_variances; fitted when the warm
  // start has them): a slope of about one standardised unit across the cube, broadly; the fit
  // shrinks it when the levels' tilts agree with f's.
  double trend_min = 1e-4;
  double trend_max = 1e3;
  LogNormalPrior trend_prior{0.0, 2.0};
  // Lengthscale factors of the discrepancies (GpHyperparameters::discrepancy_lengthscale_factors;
  // fitted when the warm start has them): centred on f's lengthscales, free to grow when a level
  // deviates from f smoothly.
  double discrepancy_lengthscale_factor_min = 0.25;
  double discrepancy_lengthscale_factor_max = 20.0;
  LogNormalPrior discrepancy_lengthscale_factor_prior{0.0, 1.0};

  std::size_t random_restarts = 1;   // in addition to the warm start
  // If > 0, one more start: every prior at its median and every noise variance at this value
  // (standardised units). A MAP fit of noisy values has two modes, one that interpolates them (short
  // lengthscales, noise at the floor) and a smooth one (noise near the truth); from a warm start in
  // the first, L-BFGS never finds the second, and the posterior cannot weigh them. 0: no such start.
  // Not a default: on noisy cmets campaigns (bench/results/noisy_recommendation.md) 0.1 helped the
  // trainer-shaped problem and Hartmann-3 and cost Forrester and Branin.
  double smooth_start_noise = 0.0;
  std::size_t max_evaluations = 30;  // per start
  // Fits on at most this many observations (a seeded random subset) so that a refit stays cheap
  // for large models; the model itself keeps all of them.
  std::size_t max_points = 150;
};

struct HyperparameterFitResult {
  GpHyperparameters hyperparameters;
  double log_marginal_likelihood = 0.0;  // at the optimum, on the points used
  double log_posterior = 0.0;            // log marginal likelihood + log prior
  std::size_t evaluations = 0;
  std::size_t points_used = 0;
};

// Log marginal likelihood of standardised observations under hyperparameters hp, and its gradient
// with respect to the log-parameter vector theta (if gradient is non-null).
double log_marginal_likelihood(const std::vector<Observation>& observations,
                               const Standardization& standardization, const GpHyperparameters& hp,
                               Eigen::VectorXd* gradient = nullptr);

// Standardisation from observed values: their mean and sample standard deviation (1 when fewer than
// two distinct values).
Standardization standardization_of(const std::vector<Observation>& observations);

HyperparameterFitResult fit_hyperparameters(const std::vector<Observation>& observations,
                                            const Standardization& standardization,
                                            const GpHyperparameters& warm_start,
                                            const HyperparameterFitOptions& options, Rng& rng);

// A starting point when nothing has been fitted yet: lengthscales at the prior median, outputscale 1,
// noise 1e-2 in every group.
GpHyperparameters default_hyperparameters(KernelType kernel, std::size_t dim, std::size_t noise_groups,
                                          const HyperparameterFitOptions& options = {});

}  // namespace tune
