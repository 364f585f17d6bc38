#include "tune/bandit/acquisition.hpp"

#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>

#include "tune/math/normal.hpp"

namespace tune {

const char* to_string(AcquisitionType type) {
  switch (type) {
    case AcquisitionType::ucb: return "ucb";
    case AcquisitionType::ei: return "ei";
  }
  return "?";
}

AcquisitionType acquisition_type_from_string(const std::string& name) {
  if (name == "ucb") return AcquisitionType::ucb;
  if (name == "ei") return AcquisitionType::ei;
  throw std::invalid_argument("unknown acquisition '" + name + "': expected 'ucb' or 'ei'");
}

double ucb_beta(std::size_t t, std::size_t n_candidates, double delta, double scale) {
  if (t < 1) t = 1;
  const double tt = static_cast<double>(t);
  const double pi2 = std::numbers::pi * std::numbers::pi;
  return scale * 2.0 * std::log(static_cast<double>(n_candidates) * tt * tt * pi2 / (6.0 * delta));
}

double Acquisition::score(double mean, double variance) const {
  const double sd = std::sqrt(std::max(variance, 0.0));
  if (type == AcquisitionType::ucb) return mean + sqrt_beta * sd;
  if (sd <= 0.0) return -std::numeric_limits<double>::infinity();
  return std::log(sd) + math::log_ei_tau((mean - incumbent) / sd);
}

double Acquisition::score(const PredictionWithGradient& p, Eigen::VectorXd& gradient) const {
  const double sd = std::sqrt(std::max(p.variance, 0.0));
  if (type == AcquisitionType::ucb) {
    gradient = p.mean_gradient;
    if (sd > 0.0) gradient += (sqrt_beta / (2.0 * sd)) * p.variance_gradient;
    return p.mean + sqrt_beta * sd;
  }
  if (sd <= 0.0) {
    gradient = Eigen::VectorXd::Zero(p.mean_gradient.size());
    return -std::numeric_limits<double>::infinity();
  }
  // log EI = log sd + log tau(z); dsd = dvar / (2 sd); dz = (dmean - z dsd) / sd.
  const double z = (p.mean - incumbent) / sd;
  const Eigen::VectorXd dsd = p.variance_gradient / (2.0 * sd);
  const Eigen::VectorXd dz = (p.mean_gradient - z * dsd) / sd;
  gradient = dsd / sd + math::dlog_ei_tau_dz(z) * dz;
  return std::log(sd) + math::log_ei_tau(z);
}

}  // namespace tune
