#pragma once
// The search space: named parameters, each mapped to one dimension of the unit cube [0,1]^d that
// the models work in. Points are Eigen column vectors; sets of points are matrices with one point
// per column.
#include <Eigen/Core>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
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

// A parameter that applies only for some values of an earlier one (`momentum` only when `opt` is
// sgd): elsewhere it has no value, is left out of the configuration, and its unit coordinate sits at
// 1/2 (inactive_coordinate). The parent is a categorical, ordinal or integer parameter declared
// before it, and may itself be conditional (the child then applies only where the parent does).
struct Condition {
  std::string parent;
  std::vector<std::string> values;  // the parent's values, as text ("sgd", "3")
};
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
  std::optional<Condition> condition;  // none: the parameter always applies

  static Parameter floating(std::string name, double low, double high, Scale scale = Scale::linear);
  static Parameter integer(std::string name, std::int64_t low, std::int64_t high,
                           Scale scale = Scale::linear);
  static Parameter categorical(std::string name, std::vector<std::string> choices);
  static Parameter ordinal(std::string name, std::vector<std::string> choices);

  // This parameter, applying only where `parent` takes one of `values`.
  Parameter when(std::string parent, std::vector<std::string> values) const;

  // Number of distinct values; 0 for floating parameters.
  std::size_t cardinality() const;
};

// Thrown for an invalid space or value; the message names the parameter and the fix.
class SpaceError : public std::invalid_argument {
 public:
  explicit SpaceError(const std::string& message, std::string parameter = {})
      : std::invalid_argument(message), parameter_(std::move(parameter)) {}
  // The parameter the error is about (its message then begins "parameter 'NAME': "); empty if none.
  const std::string& parameter() const { return parameter_; }

 private:
  std::string parameter_;
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

  // Unit-cube coordinates of a configuration. Throws SpaceError if a parameter that applies is
  // missing, one that does not apply is given, or one is unknown, of the wrong type or outside its range.
  Eigen::VectorXd encode(const Config& config) const;
  // Configuration at a point of the unit cube (coordinates clamped to [0,1]); the parameters that do
  // not apply there are left out.
  Config decode(const Eigen::VectorXd& unit) const;
  // The canonical unit-cube point of the configuration decode(unit): discrete coordinates move to
  // the centre of their cell; continuous ones are only clamped; those that do not apply move to
  // inactive_coordinate.
  Eigen::VectorXd snap(const Eigen::VectorXd& unit) const;
  // True if every parameter is discrete (the space is a finite grid).
  bool is_finite() const;
  // Number of distinct configurations of a finite space (saturates at SIZE_MAX); 0 if the space is not
  // finite. With conditions, the count of a space whose parents' value combinations exceed 2^20 is
  // the product of the cardinalities, an upper bound.
  std::size_t grid_size() const;
  // Every distinct configuration of a finite space, as its canonical unit point (snap), if there are
  // at most `limit`; empty otherwise, or if the space is not finite.
  std::vector<Eigen::VectorXd> grid_points(std::size_t limit) const;

  // Conditional parameters (Condition).
  bool has_conditions() const { return !parents_.empty(); }
  // Which parameters apply at a unit point, or in a configuration (whose parents' values decide;
  // a parent missing or not applying makes its children not apply).
  std::vector<bool> active(const Eigen::Ref<const Eigen::VectorXd>& unit) const;
  std::vector<bool> active(const Config& config) const;
  // The share of the unit cube where parameter i applies (1 without a condition).
  double active_fraction(std::size_t i) const;
  // "applies only when opt is sgd or rmsprop": for messages; empty without a condition.
  std::string condition_text(std::size_t i) const;

  static constexpr double inactive_coordinate = 0.5;

 private:
  // Parameter i's condition, resolved: its parent's index and the parent's values that let it apply.
  struct ResolvedCondition {
    std::size_t parent = 0;
    std::vector<Value> values;
  };
  bool applies(std::size_t i, const std::vector<bool>& active, const Value* parent_value) const;

  std::vector<Parameter> parameters_;
  std::vector<std::optional<ResolvedCondition>> parents_by_parameter_;  // empty without conditions
  std::vector<std::size_t> parents_;  // the parameters some condition names, in order
};

// The cell of k equal cells of [0, 1] that holds a unit coordinate (a choice's or a linear integer's
// index), and a cell's centre, where snap() puts every point of it.
std::size_t cell_index(double u, std::size_t k);
double cell_centre(std::size_t i, std::size_t k);

// The space's parameters with their conditions dropped: every one applies everywhere.
Space without_conditions(const Space& space);

// The parameters' names in the space's order, "lr, layers, act": for messages naming what exists.
std::string parameter_names(const Space& space);

}  // namespace tune
