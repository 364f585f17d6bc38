#include "tune/gp/output_transform.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "tune/gp/hyperparameter_fit.hpp"
#include "tune/gp/value_floor.hpp"

namespace tune {

const char* to_string(OutputTransformKind kind) {
  switch (kind) {
    case OutputTransformKind::none: return "none";
    case OutputTransformKind::automatic: return "auto";
    case OutputTransformKind::log: return "log";
  }
  return "?";
}

OutputTransformKind output_transform_kind_from_string(const std::string& name) {
  if (name == "none") return OutputTransformKind::none;
  if (name == "auto") return OutputTransformKind::automatic;
  if (name == "log") return OutputTransformKind::log;
  throw std::invalid_argument("unknown output transform '" + name + "' (expected auto, none or log)");
}

namespace {

// (d^lambda - 1) / lambda, continuous through lambda = 0 (log d).
double box_cox(double d, double lambda) {
  const double log_d = std::log(d);
  return lambda == 0.0 ? log_d : std::expm1(lambda * log_d) / lambda;
}

}  // namespace

double OutputTransform::operator()(double reward) const {
  reward = floor(reward);
  if (!active) return reward;
  const double d = (reference - reward) / scale + shift;
  if (d >= shift) return -box_cox(d, lambda);
  // Above the reference: continue linearly with the slope at d = shift (-dz/dd = shift^(lambda-1)).
  return -box_cox(shift, lambda) + std::pow(shift, lambda - 1.0) * (shift - d);
}

double OutputTransform::inverse(double z) const {
  if (!active) return z;
  const double z_at_shift = -box_cox(shift, lambda);
  double d;
  if (z > z_at_shift) {
    d = shift - (z - z_at_shift) / std::pow(shift, lambda - 1.0);
  } else {
    // d = (1 - lambda z)^(1/lambda), exp(-z) at lambda = 0.
    d = lambda == 0.0 ? std::exp(-z) : std::exp(std::log1p(-lambda * z) / lambda);
  }
  return reference - scale * (d - shift);
}

double OutputTransform::log_derivative(double reward) const {
  if (!active) return 0.0;
  reward = floor(reward);
  const double d = std::max((reference - reward) / scale + shift, shift);
  return (lambda - 1.0) * std::log(d) - std::log(scale);
}

std::vector<Observation> transformed(std::vector<Observation> observations, const OutputTransform& transform) {
  if (transform.changes_values())
    for (Observation& o : observations) o.value = transform(o.value);
  return observations;
}

double transformed_log_likelihood(const std::vector<Observation>& observations, const OutputTransform& transform,
                                  const GpHyperparameters& hyperparameters) {
  const std::vector<Observation> z = transformed(observations, transform);
  const Standardization s = standardization_of(z);
  double log_jacobian = -static_cast<double>(z.size()) * std::log(s.scale);
  for (const Observation& o : observations) log_jacobian += transform.log_derivative(o.value);
  return log_marginal_likelihood(z, s, hyperparameters) + log_jacobian;
}

OutputTransform fit_output_transform(const std::vector<Observation>& told, OutputTransformKind kind,
                                     const GpHyperparameters& hyperparameters, const ValueFloor& previous_floor) {
  if (kind == OutputTransformKind::none) return {};
  OutputTransform floored;
  floored.floor = next_value_floor(previous_floor, told);
  if (told.size() < 3) return floored;
  // The warping is chosen for the floored rewards, which are what the GP will see.
  const std::vector<Observation> all_observations = transformed(told, floored);
  // The likelihood costs a Cholesky per candidate: beyond a few hundred points an even subset says
  // as much about the shape of the values.
  constexpr std::size_t kMaxPoints = 200;
  std::vector<Observation> observations;
  const std::size_t stride = (all_observations.size() + kMaxPoints - 1) / kMaxPoints;
  for (std::size_t i = 0; i < all_observations.size(); i += stride) observations.push_back(all_observations[i]);

  std::vector<double> gaps;
  double reference = -std::numeric_limits<double>::infinity();
  for (const Observation& o : all_observations) reference = std::max(reference, o.value);
  for (const Observation& o : all_observations) gaps.push_back(reference - o.value);
  // Scale: the median gap to the best, robust to the very tail the transform is for; the mean gap
  // when more than half the values tie with the best.
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  double scale = gaps[gaps.size() / 2];
  if (!(scale > 0.0)) {
    double sum = 0.0;
    for (double g : gaps) sum += g;
    scale = sum / static_cast<double>(gaps.size());
  }
  if (!(scale > 0.0) || !std::isfinite(scale)) return floored;

  // The grid, and why it stops where it does (bench/peer_benchmark, ei, 20 seeds):
  // - lambda < 1 only: lambda > 1 squeezes the values near the best to spread the bulk; the
  //   likelihood sometimes prefers that, but the search needs resolution near the best (Hartmann-6
  //   at 50 evaluations: 4.6e-3 with lambda up to 2, 3.5e-3 without).
  // - shift >= 0.1 median gaps: near a smooth optimum the gap grows like r^2, so with a tiny shift
  //   z ~ -r^(2 lambda) has a cusp at the best point, which the likelihood likes (it spreads the many
  //   points clustered there) but a Matern-5/2 GP extrapolates badly: EI's last digits suffer
  //   (Branin at 50 evaluations 7.9e-4 with shifts down to 1e-4, 4.9e-5 with {0.1, 1}).
  // The identity first: a candidate replaces it only with a clearly higher likelihood.
  OutputTransform best;
  double best_value = kind == OutputTransformKind::automatic ? transformed_log_likelihood(observations, best, hyperparameters)
                                                              : -std::numeric_limits<double>::infinity();
  if (!std::isfinite(best_value)) best_value = -std::numeric_limits<double>::infinity();
  // A warped model has two more fitted numbers (lambda, shift) than the identity: as in AIC, it must
  // beat it by one nat per number, so that a handful of points does not switch it on by chance.
  if (kind == OutputTransformKind::automatic) best_value += 2.0;
  const std::vector<double> lambdas =
      kind == OutputTransformKind::log ? std::vector<double>{0.0} : std::vector<double>{0.0, 0.25, 0.5, 0.75};
  for (double lambda : lambdas)
    for (double shift : {0.1, 1.0}) {
      const OutputTransform t{.active = true, .reference = reference, .scale = scale, .shift = shift, .lambda = lambda};
      const double value = transformed_log_likelihood(observations, t, hyperparameters);
      if (std::isfinite(value) && value > best_value) {
        best_value = value;
        best = t;
      }
    }
  best.floor = floored.floor;
  return best;
}

}  // namespace tune
