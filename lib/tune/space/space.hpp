#pragma once
// The search space: named parameters, each mapped to one dimension of the unit cube [0,1]^d that
// the models work in. Points are Eigen column vectors; sets of points are matrices with one point
// per column.
#include <Eigen/Core>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace tune {

// A parameter value as the user sees it: float parameters hold double, integer parameters
// std::int64_t, categorical and ordinal parameters the chosen string.
using Value = std::variant<double, std::int64_t, std::string>;
using Config = std::map<std::string, Value>;

std::string to_string(const Value& value);
// "{act: relu, layers: 3, lr: 0.001}", in name order: for messages and tables.
std::string to_string(const Config& config);

enum class ParamType { floating, integer, categorical, ordinal };
enum class Scale { linear, log };

const char* to_string(ParamType type);
const char* to_string(Scale scale);

struct Parameter {
  std::string name;
  ParamType type = ParamType::floating;
  double low = 0.0;   // floating, integer
  double high = 1.0;  // floating, integer (inclusive for integers)
  Scale scale = Scale::linear;
  std::vector<std::string> choices;  // categorical, ordinal (in order)

  static Parameter floating(std::string name, double low, double high, Scale scale = Scale::linear);
  static Parameter integer(std::string name, std::int64_t low, std::int64_t high,
                           Scale scale = Scale::linear);
  static Parameter categorical(std::string name, std::vector<std::string> choices);
  static Parameter ordinal(std::string name, std::vector<std::string> choices);

  // Number of distinct values; 0 for floating parameters.
  std::size_t cardinality() const;
};

// Thrown for an invalid space or value; the message names the parameter and the fix.
class SpaceError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class Space {
 public:
  Space() = default;
  explicit Space(std::vector<Parameter> parameters);  // validates; throws SpaceError

  std::size_t dim() const { return parameters_.size(); }
  const std::vector<Parameter>& parameters() const { return parameters_; }
  const Parameter& parameter(const std::string& name) const;  // throws SpaceError if unknown
  const Parameter* find(const std::string& name) const;        // nullptr if unknown
  std::size_t index_of(const std::string& name) const;         // throws SpaceError if unknown

  // Unit-cube coordinates of a configuration. Throws SpaceError if a parameter is missing,
  // unknown, of the wrong type or outside its range.
  Eigen::VectorXd encode(const Config& config) const;
  // Configuration at a point of the unit cube (coordinates clamped to [0,1]).
  Config decode(const Eigen::VectorXd& unit) const;
  // The canonical unit-cube point of the configuration decode(unit): discrete coordinates move to
  // the centre of their cell; continuous ones are only clamped.
  Eigen::VectorXd snap(const Eigen::VectorXd& unit) const;
  // True if every parameter is discrete (the space is a finite grid).
  bool is_finite() const;
  // Number of points of a finite space (saturates at SIZE_MAX); 0 if the space is not finite.
  std::size_t grid_size() const;

 private:
  std::vector<Parameter> parameters_;
};

// The cell of k equal cells of [0, 1] that holds a unit coordinate (a choice's or a linear integer's
// index), and a cell's centre, where snap() puts every point of it.
std::size_t cell_index(double u, std::size_t k);
double cell_centre(std::size_t i, std::size_t k);

// The parameters' names in the space's order, "lr, layers, act": for messages naming what exists.
std::string parameter_names(const Space& space);

}  // namespace tune
