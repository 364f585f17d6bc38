#pragma once
// What a GP sees of a point of the unit cube. A categorical parameter is one coordinate of the cube
// (its choices are equal cells in the order given), and a stationary kernel on that coordinate
// believes neighbouring choices alike and the first and last the least alike: an order the user never
// meant ([sgd, adam, rmsprop] says nothing of which two behave alike). With `one_hot`, each
// categorical parameter of three or more choices becomes one input per choice, 1/sqrt(2) for the
// chosen one and 0 for the others, so that every two choices are at distance 1, the width of a
// float's range; each choice's input has its own lengthscale. Floats, integers, ordinals (whose order
// is meant) and categoricals of two choices (whose one distance needs no order) pass through as they
// are. With `ordered`, or a space without such a categorical, the inputs are the unit point itself.
//
// A conditional parameter (Condition, space.hpp) where it does not apply has no value, and its inputs
// are the same wherever its coordinate is: 1/2 for one that passes through, all 0 for a one-hot
// block, each as near to every value it takes where it applies as any two of those are at most (a
// float's 1/2 from either end; 1/sqrt(2) from each choice). So the model's function is flat along
// the coordinate there, as the objective is, and an acquisition does not favour points whose only
// difference is a value the trial will not receive. The parent's inputs already tell the two regions
// apart.
//
// The cube stays the space of suggestions, snapping and the state; only the model's inputs change.
// A categorical coordinate moves no input within its cell, so an acquisition's gradient along it is
// 0 (unit_gradient): a local optimiser keeps each start's choice, and the choices are searched by
// the candidate points.
#include <Eigen/Core>
#include <string>
#include <vector>

#include "tune/space/space.hpp"

namespace tune {

enum class CategoricalEncoding { ordered, one_hot };

const char* to_string(CategoricalEncoding encoding);
CategoricalEncoding categorical_encoding_from_string(const std::string& name);  // throws std::invalid_argument

class ModelInputs {
 public:
  ModelInputs() = default;  // the identity of a 0-dimensional cube, until made from a space
  ModelInputs(const Space& space, CategoricalEncoding encoding);

  std::size_t unit_dim() const { return unit_dim_; }
  std::size_t dim() const { return dim_; }
  bool identity() const { return one_hot_.empty() && !space_.has_conditions(); }

  // The inputs of a unit point (of a matrix of them, one per column).
  Eigen::VectorXd operator()(const Eigen::Ref<const Eigen::VectorXd>& unit) const;
  Eigen::MatrixXd columns(const Eigen::MatrixXd& units) const;
  // The unit point, snapped, whose inputs these are (a one-hot block's largest input is its choice).
  Eigen::VectorXd unit_of(const Eigen::Ref<const Eigen::VectorXd>& inputs) const;
  Eigen::MatrixXd units_of(const Eigen::MatrixXd& inputs) const;
  // The factor of a lengthscale prior whose median grows like sqrt(dimension), as distances do
  // (hyperparameter_fit.hpp): a one-hot categorical adds one input per choice but at most 1 to a
  // squared distance, as a float does, so the dimension is the parameters' count, not the inputs'.
  // sqrt(unit_dim / dim); exactly 1 for the identity.
  double lengthscale_prior_factor() const;
  // E |inputs(x) - 1/2|^2 for x uniform on the cube (a level's trend feature, observation.cpp): 1/12
  // per coordinate that passes through, (1/sqrt(2) - 1/2)^2 + (k - 1)/4 per one-hot block of k; a
  // conditional parameter's term weighted by the share of the cube where it applies, and k/4 for a
  // one-hot block elsewhere.
  double trend_feature_mean_square() const;
  // d/d unit at `unit` of a function of the inputs, from its gradient in the inputs: 0 along a one-hot
  // coordinate and along one that does not apply at `unit`.
  Eigen::VectorXd unit_gradient(const Eigen::Ref<const Eigen::VectorXd>& unit,
                                const Eigen::Ref<const Eigen::VectorXd>& input_gradient) const;

 private:
  struct OneHot {
    std::size_t coordinate = 0;   // in the unit cube
    std::size_t first_input = 0;  // its choices' inputs are [first_input, first_input + choices)
    std::size_t choices = 0;
  };
  std::size_t unit_dim_ = 0;
  std::size_t dim_ = 0;
  std::vector<OneHot> one_hot_;         // in coordinate order
  std::vector<std::size_t> input_of_;   // unit coordinate -> its input (the first one, for one-hot)
  Space space_;                         // for its conditions
};

}  // namespace tune
