#pragma once
// Exact YAML round trips for the numbers of a saved study: doubles are written in their shortest
// round-trip form, so a loaded study holds bit-identical values and replays the same suggestions.
// Reading errors name the line and column of the offending node.
#include <yaml-cpp/yaml.h>

#include <Eigen/Core>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string_view>
#include <stdexcept>
#include <string>
#include <vector>

namespace tune {

// A saved state that cannot be read; the message names the source, the position and the field.
class StateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string format_double(double value);  // shortest round-trip; .inf, -.inf, .nan

// Parses YAML text; throws StateError("line L, column C: not valid YAML (...)"). A key given twice in
// one map is refused too, naming both lines: yaml-cpp keeps both pairs, a lookup sees only the first
// and an iteration sees both, so the file would mean different things to different readers.
YAML::Node parse_yaml(const std::string& text);
// Reads a file's text; throws StateError("cannot open the file").
std::string read_text_file(const std::filesystem::path& path);
// Reads and parses a file; throws StateError ("cannot open", or the parse error with its position).
YAML::Node load_yaml_file(const std::filesystem::path& path);
// The node as YAML text (no trailing newline).
std::string emit_yaml(const YAML::Node& node);
// Appends every line of `text` to `out`, indented by `indent` spaces and newline-terminated.
void append_indented(std::string& out, std::string_view text, int indent);
YAML::Node yaml_double(double value);
YAML::Node yaml_vector(const Eigen::VectorXd& v);  // flow sequence

// "line L, column C" of a node (1-based), or "unknown position".
std::string position_of(const YAML::Node& node);
// A map's entries and a key's text, for code that reads either kind of node (yaml-cpp's, or a record
// line's FlowNode, tune/io/flow_yaml.hpp, which has its own overloads): a yaml-cpp map iterates itself.
inline const YAML::Node& entries_of(const YAML::Node& node) { return node; }
inline std::string key_text(const YAML::Node& key) { return key.as<std::string>(); }

// Refuses a key of the map `node` that is not in `known`, so that a misspelt key is not silently
// ignored: StateError("field '<field>.<key>' at line L, column C: unknown key; expected one of: ...").
void check_known_keys(const YAML::Node& node, const std::string& field, const std::set<std::string>& known);

// Required fields: throw StateError("<field> at line L, column C: ...") when missing or malformed.
const YAML::Node require(const YAML::Node& parent, const std::string& field);
// The same for a key of a nested map, named in the message by its whole path (`space.x.low`).
const YAML::Node require(const YAML::Node& parent, const std::string& key, const std::string& field);
double read_double(const YAML::Node& node, const std::string& field);
// The conversions of read_double, read_int, read_uint and read_bool, of a scalar's text: nullopt
// where they refuse it.
std::optional<double> double_from_text(std::string_view s);
std::optional<std::int64_t> int_from_text(std::string_view s);
std::optional<std::uint64_t> uint_from_text(std::string_view s);
std::optional<bool> bool_from_text(std::string_view s);
std::int64_t read_int(const YAML::Node& node, const std::string& field);
std::uint64_t read_uint(const YAML::Node& node, const std::string& field);
bool read_bool(const YAML::Node& node, const std::string& field);
std::string read_string(const YAML::Node& node, const std::string& field);
Eigen::VectorXd read_vector(const YAML::Node& node, const std::string& field);
std::vector<double> read_doubles(const YAML::Node& node, const std::string& field);

}  // namespace tune
