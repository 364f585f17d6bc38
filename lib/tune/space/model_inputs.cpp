#include "tune/space/model_inputs.hpp"

#include <cmath>
#include <stdexcept>

namespace tune {

namespace {
// Two choices' inputs differ by this in each of their two coordinates: distance 1 between any two.
const double kChosen = std::sqrt(0.5);
}  // namespace

const char* to_string(CategoricalEncoding encoding) {
  switch (encoding) {
    case CategoricalEncoding::ordered: return "ordered";
    case CategoricalEncoding::one_hot: return "one_hot";
  }
  return "?";
}

CategoricalEncoding categorical_encoding_from_string(const std::string& name) {
  if (name == "ordered") return CategoricalEncoding::ordered;
  if (name == "one_hot") return CategoricalEncoding::one_hot;
  throw std::invalid_argument("unknown categorical_encoding '" + name +
                              "': expected 'one_hot' (each choice its own input) or 'ordered' (one coordinate, "
                              "the choices in the order given)");
}

ModelInputs::ModelInputs(const Space& space, CategoricalEncoding encoding)
    : unit_dim_(space.dim()), input_of_(space.dim()), space_(space) {
  std::size_t next = 0;
  for (std::size_t i = 0; i < space.dim(); ++i) {
    const Parameter& p = space.parameters()[i];
    input_of_[i] = next;
    if (encoding == CategoricalEncoding::one_hot && p.type == ParamType::categorical && p.choices.size() >= 3) {
      one_hot_.push_back({i, next, p.choices.size()});
      next += p.choices.size();
    } else {
      ++next;
    }
  }
  dim_ = next;
}

Eigen::VectorXd ModelInputs::operator()(const Eigen::Ref<const Eigen::VectorXd>& unit) const {
  if (identity()) return unit;
  Eigen::VectorXd inputs = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(dim_));
  const std::vector<bool> applying = space_.has_conditions() ? space_.active(unit) : std::vector<bool>{};
  std::size_t block = 0;
  for (std::size_t i = 0; i < unit_dim_; ++i) {
    const bool applies = applying.empty() || applying[i];
    const double u = applies ? unit(static_cast<Eigen::Index>(i)) : Space::inactive_coordinate;
    if (block < one_hot_.size() && one_hot_[block].coordinate == i) {
      const OneHot& h = one_hot_[block++];
      if (applies) inputs(static_cast<Eigen::Index>(h.first_input + cell_index(u, h.choices))) = kChosen;
    } else {
      inputs(static_cast<Eigen::Index>(input_of_[i])) = u;
    }
  }
  return inputs;
}

Eigen::MatrixXd ModelInputs::columns(const Eigen::MatrixXd& units) const {
  if (identity()) return units;
  Eigen::MatrixXd inputs(static_cast<Eigen::Index>(dim_), units.cols());
  for (Eigen::Index j = 0; j < units.cols(); ++j) inputs.col(j) = (*this)(units.col(j));
  return inputs;
}

Eigen::VectorXd ModelInputs::unit_of(const Eigen::Ref<const Eigen::VectorXd>& inputs) const {
  if (identity()) return inputs;
  Eigen::VectorXd unit(static_cast<Eigen::Index>(unit_dim_));
  std::size_t block = 0;
  for (std::size_t i = 0; i < unit_dim_; ++i) {
    if (block < one_hot_.size() && one_hot_[block].coordinate == i) {
      const OneHot& h = one_hot_[block++];
      Eigen::Index chosen = 0;
      inputs.segment(static_cast<Eigen::Index>(h.first_input), static_cast<Eigen::Index>(h.choices)).maxCoeff(&chosen);
      unit(static_cast<Eigen::Index>(i)) = cell_centre(static_cast<std::size_t>(chosen), h.choices);
    } else {
      unit(static_cast<Eigen::Index>(i)) = inputs(static_cast<Eigen::Index>(input_of_[i]));
    }
  }
  if (space_.has_conditions()) {
    const std::vector<bool> applying = space_.active(unit);
    for (std::size_t i = 0; i < unit_dim_; ++i)
      if (!applying[i]) unit(static_cast<Eigen::Index>(i)) = Space::inactive_coordinate;
  }
  return unit;
}

Eigen::MatrixXd ModelInputs::units_of(const Eigen::MatrixXd& inputs) const {
  if (identity()) return inputs;
  Eigen::MatrixXd units(static_cast<Eigen::Index>(unit_dim_), inputs.cols());
  for (Eigen::Index j = 0; j < inputs.cols(); ++j) units.col(j) = unit_of(inputs.col(j));
  return units;
}

double ModelInputs::lengthscale_prior_factor() const {
  return identity() ? 1.0 : std::sqrt(static_cast<double>(unit_dim_) / static_cast<double>(dim_));
}

double ModelInputs::trend_feature_mean_square() const {
  double m = 0.0;
  std::size_t block = 0;
  for (std::size_t i = 0; i < unit_dim_; ++i) {
    const double share = space_.active_fraction(i);
    if (block < one_hot_.size() && one_hot_[block].coordinate == i) {
      const auto k = static_cast<double>(one_hot_[block++].choices);
      m += share * ((kChosen - 0.5) * (kChosen - 0.5) + 0.25 * (k - 1)) + (1 - share) * 0.25 * k;
    } else {
      m += share / 12.0;
    }
  }
  return m;
}

Eigen::VectorXd ModelInputs::unit_gradient(const Eigen::Ref<const Eigen::VectorXd>& unit,
                                           const Eigen::Ref<const Eigen::VectorXd>& input_gradient) const {
  if (identity()) return input_gradient;
  const std::vector<bool> applying = space_.has_conditions() ? space_.active(unit) : std::vector<bool>{};
  Eigen::VectorXd g(static_cast<Eigen::Index>(unit_dim_));
  std::size_t block = 0;
  for (std::size_t i = 0; i < unit_dim_; ++i) {
    if (block < one_hot_.size() && one_hot_[block].coordinate == i) {
      ++block;
      g(static_cast<Eigen::Index>(i)) = 0.0;
    } else if (!applying.empty() && !applying[i]) {
      g(static_cast<Eigen::Index>(i)) = 0.0;
    } else {
      g(static_cast<Eigen::Index>(i)) = input_gradient(static_cast<Eigen::Index>(input_of_[i]));
    }
  }
  return g;
}

}  // namespace tune
