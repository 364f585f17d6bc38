#include "tune/io/yaml_values.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace tune {

std::string format_double(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, r.ptr);
}

YAML::Node parse_yaml(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw StateError("line " + std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1) +
                     ": not valid YAML (" + e.msg + ")");
  }
}

YAML::Node load_yaml_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StateError("cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_yaml(text.str());
}

std::string emit_yaml(const YAML::Node& node) {
  YAML::Emitter e;
  e << node;
  return e.c_str();
}

void append_indented(std::string& out, std::string_view text, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out += pad;
    out.append(text.substr(start, end - start));
    out += '\n';
    start = end + 1;
  }
}

YAML::Node yaml_double(double value) { return YAML::Node(format_double(value)); }

YAML::Node yaml_vector(const Eigen::VectorXd& v) {
  YAML::Node node(YAML::NodeType::Sequence);
  node.SetStyle(YAML::EmitterStyle::Flow);
  for (Eigen::Index i = 0; i < v.size(); ++i) node.push_back(yaml_double(v(i)));
  return node;
}

std::string position_of(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return "unknown position";
  return "line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1);
}

namespace {
[[noreturn]] void fail(const YAML::Node& node, const std::string& field, const std::string& what) {
  throw StateError("field '" + field + "' at " + position_of(node) + ": " + what);
}

std::string scalar_of(const YAML::Node& node, const std::string& field) {
  if (!node.IsDefined() || node.IsNull()) fail(node, field, "missing value");
  if (!node.IsScalar()) fail(node, field, "expected a single value, found a list or map");
  return node.Scalar();
}
}  // namespace

const YAML::Node require(const YAML::Node& parent, const std::string& field) {
  if (!parent.IsMap()) fail(parent, field, "expected a map containing '" + field + "'");
  const YAML::Node child = parent[field];
  if (!child.IsDefined()) fail(parent, field, "missing (required)");
  return child;
}

double read_double(const YAML::Node& node, const std::string& field) {
  const std::string s = scalar_of(node, field);
  if (s == ".nan" || s == ".NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == ".inf" || s == "inf" || s == "+.inf") return std::numeric_limits<double>::infinity();
  if (s == "-.inf" || s == "-inf") return -std::numeric_limits<double>::infinity();
  double value = 0.0;
  const char* begin = s.data() + (s.size() > 1 && s[0] == '+' ? 1 : 0);
  const auto r = std::from_chars(begin, s.data() + s.size(), value);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) fail(node, field, "expected a number, found '" + s + "'");
  return value;
}

std::int64_t read_int(const YAML::Node& node, const std::string& field) {
  const std::string s = scalar_of(node, field);
  std::int64_t value = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), value);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) fail(node, field, "expected an integer, found '" + s + "'");
  return value;
}

std::uint64_t read_uint(const YAML::Node& node, const std::string& field) {
  const std::string s = scalar_of(node, field);
  std::uint64_t value = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), value);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    fail(node, field, "expected a non-negative integer, found '" + s + "'");
  return value;
}

bool read_bool(const YAML::Node& node, const std::string& field) {
  const std::string s = scalar_of(node, field);
  if (s == "true") return true;
  if (s == "false") return false;
  fail(node, field, "expected true or false, found '" + s + "'");
}

std::string read_string(const YAML::Node& node, const std::string& field) { return scalar_of(node, field); }

std::vector<double> read_doubles(const YAML::Node& node, const std::string& field) {
  if (!node.IsSequence()) fail(node, field, "expected a list of numbers");
  std::vector<double> out;
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(read_double(node[i], field));
  return out;
}

Eigen::VectorXd read_vector(const YAML::Node& node, const std::string& field) {
  const std::vector<double> v = read_doubles(node, field);
  return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

}  // namespace tune
