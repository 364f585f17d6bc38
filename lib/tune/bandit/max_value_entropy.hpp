#pragma once
// Max-value entropy search on an integrated (indirect) observation: CMES of the IQBO paper
// (digest-iqbo-cmets.md, Sec. 3 and 7.2), and the baseline MES.
//
// A query a observes z = g(a) + eps, eps ~ N(0, sigma^2), where g(a) is a linear functional of f
// (e.g. its average over a window) with GP posterior N(nu, sigma_g^2). The acquisition is the mutual
// information between z and the maximum f_* of f, averaged over samples of f_*:
//
//   Eq. 14 (noiseless):  (1/|F|) sum_{f_*} [ gamma psi(gamma) / (2 Psi(gamma)) - log Psi(gamma) ],
//                        gamma = (f_* - nu) / sigma_g
//   Appendix A (noisy):  H0 - (1/|F|) sum_{f_*} H1(f_*),  H0 = 0.5 log(2 pi e (sigma_g^2 + sigma^2)),
//                        H1 = -E_{z ~ N(nu, sigma_g^2 + sigma^2)}[ r(z) log(r(z) p(z|a)) ],
//                        r(z) = Phi(gamma'(z)) / Phi(gamma), gamma'(z) = (f_* - E[g|z]) / sd[g|z]
//                        (the sign and normalisation corrected as in the digest, 3.4 and 7.6.3).
//
// CMES versus MES: both evaluate the same formula with the posterior (nu, sigma_g) of the observed
// function g. CMES plugs in samples of the maximum of f, the function whose optimum is wanted
// (drawn from the posterior of f on the input space X); MES plugs in samples of the maximum of g
// itself (from the posterior of g on the candidate queries), so it seeks the best query rather than
// the best point of f. When queries are points (g = f) the two coincide.
//
// Guard (digest 7.2.3): g(a) <= f_* holds for every a (an average never exceeds the maximum), but a
// sampled f_* may fall below a posterior mean nu(a); then gamma is very negative and -log Psi(gamma)
// dominates the score with an artefact. Every public score therefore clamps each f_* sample to at
// least max_a (nu(a) + 1e-6 sigma_g(a)) over the candidates it is given (one candidate for the
// scalar overloads), which guarantees gamma >= 1e-6 for every candidate. The digest's second guard,
// clamping Psi and Phi below at 1e-8, is not needed: everything is evaluated in log space with the
// tail-accurate helpers of tune/math/normal.hpp, and after the f_* clamp Psi(gamma) >= 1/2 anyway.
// Candidates with sigma_g <= 0 (g(a) already known) score 0.
#include <Eigen/Core>
#include <cstddef>
#include <vector>

#include "tune/gp/gaussian_process.hpp"
#include "tune/random/rng.hpp"

namespace tune {

// ---- max-value samples ---------------------------------------------------------------------------

// Wang & Jegelka (2017) Gumbel approximation of the distribution of max_i f(x_i) for independent
// f(x_i) ~ N(mean_i, sd_i^2): Pr[f_* < y] ~= prod_i Phi((y - mean_i) / sd_i). The quartiles
// y25, y50, y75 are found by bisection on the sum of log-cdfs; then b = (y25 - y75) / (log log(4/3)
// - log log 4), a = y50 + b log log 2 and f_* = a - b log(-log u), u ~ U(0, 1). Points with sd <= 0
// are deterministic (a step at their mean). Throws std::invalid_argument on size mismatch, an empty
// set, or non-finite input.
Eigen::VectorXd gumbel_max_samples(const Eigen::Ref<const Eigen::VectorXd>& mean,
                                   const Eigen::Ref<const Eigen::VectorXd>& sd, std::size_t count, Rng& rng);

// Thompson samples of the maximum: count joint draws of f at the columns of points from the GP
// posterior, mean + L z with L = chol(posterior covariance + jitter I), jitter = 1e-6 times the mean
// posterior variance (raised tenfold, up to 1e-1 of it, if the factorisation still fails), z standard
// normal by Box-Muller from rng; returns the maximum of each draw (units of the observed values).
Eigen::VectorXd thompson_max_samples(const GaussianProcess& gp, const Eigen::MatrixXd& points, std::size_t count,
                                     Rng& rng);

// ---- Gauss-Hermite quadrature --------------------------------------------------------------------

// Probabilists' rule: E[h(T)], T ~ N(0, 1), ~= sum_k weights[k] h(nodes[k]), exact for polynomials of
// degree <= 2n - 1. Nodes from the Golub-Welsch eigenvalues (Eigen's SelfAdjointEigenSolver on the
// Jacobi matrix with off-diagonal sqrt(k)), polished by Newton on He_n; weights from the Christoffel
// formula 1 / sum_j p_j(x_k)^2 with the orthonormal p_j, which keeps full relative accuracy even for
// the outermost weights (the eigenvector formula only has absolute accuracy ~1e-16).
struct GaussHermiteRule {
  std::vector<double> nodes;    // ascending
  std::vector<double> weights;  // sum to 1
};
// Computed once per n and cached for the life of the program (thread-safe); n >= 1.
const GaussHermiteRule& gauss_hermite_rule(std::size_t n);

// ---- CMES / MES ----------------------------------------------------------------------------------

// One summand of Eq. 14 at gamma, unguarded: gamma psi(gamma) / (2 Psi(gamma)) - log Psi(gamma).
// Finite and accurate for every finite gamma; decreasing; -> 0 as gamma -> +inf, ~ log(-gamma) as
// gamma -> -inf.
double cmes_noiseless_term(double gamma) noexcept;

// Eq. 14 at one candidate (with the f_* guard).
double cmes_noiseless(double nu, double sigma_g, const Eigen::Ref<const Eigen::VectorXd>& f_star_samples);
// Eq. 14 at many candidates: entry i scores (nu(i), sigma_g(i)). The f_* guard uses the whole set.
Eigen::VectorXd cmes_noiseless(const Eigen::Ref<const Eigen::VectorXd>& nu,
                               const Eigen::Ref<const Eigen::VectorXd>& sigma_g,
                               const Eigen::Ref<const Eigen::VectorXd>& f_star_samples);

// Appendix A (noisy observations, noise standard deviation noise_sd >= 0) with nodes-point
// Gauss-Hermite quadrature. noise_sd = 0 gives Eq. 14 exactly. See the .cpp for the exact rewriting
// that makes the quadrature accurate for every noise level.
double cmes_noisy(double nu, double sigma_g, double noise_sd, const Eigen::Ref<const Eigen::VectorXd>& f_star_samples,
                  std::size_t nodes = 64);
Eigen::VectorXd cmes_noisy(const Eigen::Ref<const Eigen::VectorXd>& nu, const Eigen::Ref<const Eigen::VectorXd>& sigma_g,
                           double noise_sd, const Eigen::Ref<const Eigen::VectorXd>& f_star_samples,
                           std::size_t nodes = 64);

// An upper bound on cmes_noisy(nu, sigma_g, noise_sd, f_star_samples, n) for every n, without the
// quadrature (a few transcendental calls per sample instead of ~3 per node and sample): each f_*
// summand less the noise's correction, which is never positive. It holds in floating point too, so
// a search may skip the exact score of any candidate whose bound is below the best exact score.
double cmes_noisy_upper_bound(double nu, double sigma_g, double noise_sd,
                              const Eigen::Ref<const Eigen::VectorXd>& f_star_samples);

// The log of cmes_noisy far below every f_* sample, where the score itself underflows to 0 (each
// summand decays like phi(gamma), below the smallest double at gamma ~ 38): a model sure of f_* to a
// few thousandths, with every remaining candidate a few hundredths below it, scores all of them 0,
// and an argmax of zeros picks whichever comes first. This orders them instead, by the summands'
// common asymptote delta^2 phi(gamma) (gamma / 2 + 1 / gamma), delta = sigma_g / sqrt(sigma_g^2 +
// noise_sd^2) (exact for gamma -> inf at noise_sd = 0; within a factor 1 + 2 / gamma^2 otherwise),
// averaged over the guarded samples in log space. -inf for sigma_g <= 0 (nothing to learn). Not a
// score to add to others: a key for choosing among candidates whose scores are all 0.
double cmes_log_tail(double nu, double sigma_g, double noise_sd, const Eigen::Ref<const Eigen::VectorXd>& f_star_samples);

// Baseline MES (Wang & Jegelka 2017) on g: Eq. 14 with samples g_star_samples of max_a g(a) (for
// instance gumbel_max_samples over the candidates' posterior of g), where CMES uses samples of
// max_x f(x). Same guard.
double mes(double nu, double sigma_g, const Eigen::Ref<const Eigen::VectorXd>& g_star_samples);
Eigen::VectorXd mes(const Eigen::Ref<const Eigen::VectorXd>& nu, const Eigen::Ref<const Eigen::VectorXd>& sigma_g,
                    const Eigen::Ref<const Eigen::VectorXd>& g_star_samples);

}  // namespace tune
