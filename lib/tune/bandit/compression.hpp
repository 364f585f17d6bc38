#pragma once
// The information-threshold test of compressed GP bandits (Bedi et al., "Regret and belief
// complexity trade-off in Gaussian process bandits via information thresholding", eq. 2.11/2.12):
// a suggestion x joins the dictionary only if
//     posterior variance at x  >  noise variance * (exp(2 eps) - 1),
// i.e. if observing it would carry more than eps nats of information, 1/2 log(1 + var/noise) > eps.
#include <cmath>
#include <string>

namespace tune {

// What happens to a suggestion that fails the test (digest section 4.3):
//  literal          the paper: the step is counted but not evaluated, the model is unchanged
//  next_informative take the best candidate that passes the test (extension, product default)
//  evaluate_no_add  evaluate it anyway, but keep it out of the model
//  stop             end the search at the first rejection
enum class RejectPolicy { literal, next_informative, evaluate_no_add, stop };

const char* to_string(RejectPolicy policy);
RejectPolicy reject_policy_from_string(const std::string& name);  // throws std::invalid_argument

// rho = exp(2 eps) - 1, computed with expm1 so that small eps keep their precision.
inline double variance_ratio_threshold(double epsilon) { return std::expm1(2.0 * epsilon); }

// The budget schedule for a known horizon T: eps = 1/2 log(1 + T^-alpha), i.e. rho = T^-alpha.
inline double epsilon_schedule(double horizon, double alpha) {
  return 0.5 * std::log1p(std::pow(horizon, -alpha));
}

struct InformationTest {
  double statistic = 0.0;  // posterior variance / noise variance at the suggestion
  double threshold = 0.0;  // rho = exp(2 eps) - 1
  bool accepted = true;
};

// eps = 0 is the exact GP: every suggestion is accepted, even where round-off makes the posterior
// variance exactly zero (the paper's strict test would then reject it).
inline InformationTest information_test(double posterior_variance, double noise_variance, double epsilon) {
  InformationTest t;
  t.statistic = posterior_variance / noise_variance;
  t.threshold = variance_ratio_threshold(epsilon);
  t.accepted = epsilon == 0.0 || t.statistic > t.threshold;
  return t;
}

}  // namespace tune
