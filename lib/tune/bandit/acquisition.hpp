#pragma once
// Acquisition functions on the GP posterior of the reward (to be maximised).
//  UCB: mean + sqrt(beta_t) sd, with the paper's finite-set beta_t = 2 log(N t^2 pi^2 / (6 delta))
//       (Thm 3.2(i)) times a user scale.
//  EI:  sd * tau(z), z = (mean - incumbent) / sd, scored as log EI so that it stays finite and
//       informative where EI underflows.
#include <Eigen/Core>
#include <string>

#include "tune/gp/gaussian_process.hpp"

namespace tune {

enum class AcquisitionType { ucb, ei };

const char* to_string(AcquisitionType type);
AcquisitionType acquisition_type_from_string(const std::string& name);  // throws std::invalid_argument

// beta_t for a finite candidate set of size n_candidates at step t >= 1, times scale.
double ucb_beta(std::size_t t, std::size_t n_candidates, double delta, double scale);

struct Acquisition {
  AcquisitionType type = AcquisitionType::ei;
  double sqrt_beta = 1.0;  // UCB
  double incumbent = 0.0;  // EI: best retained reward

  // The score to maximise: UCB value, or log EI (-inf where the variance is zero).
  double score(double mean, double variance) const;
  double score(const PredictionWithGradient& p, Eigen::VectorXd& gradient) const;
};

}  // namespace tune
