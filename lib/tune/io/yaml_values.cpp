#include "tune/io/yaml_values.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "tune/io/printable_text.hpp"

namespace tune {

std::string format_double(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, r.ptr);
}

namespace {
std::string line_and_column(const YAML::Mark& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

// Refuses a key given twice in one map of the tree under `node`, naming both. A node reached again
// through an alias is checked once: nodes are told apart by their position in the text and their
// kind, so that a self-referencing alias cannot loop and nested aliases cost no more than their
// text. (A map that starts where its parent map starts, a flow map as a key, is then skipped; no
// reader here uses such keys.)
void check_unique_keys(const YAML::Node& node, const std::string& path,
                       std::unordered_set<std::size_t>& visited) {
  if (!visited.insert(2 * node.Mark().pos + (node.IsMap() ? 1 : 0)).second) return;
  const auto is_collection = [](const YAML::Node& n) { return n.IsMap() || n.IsSequence(); };
  if (node.IsSequence()) {
    std::size_t i = 0;
    for (const YAML::Node& item : node) {
      if (is_collection(item)) check_unique_keys(item, path + "[" + std::to_string(i) + "]", visited);
      ++i;
    }
    return;
  }
  std::unordered_map<std::string, YAML::Mark> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    const auto field = [&] { return path.empty() ? key : path + "." + key; };
    if (kv.first.IsScalar()) {
      const auto [first, added] = seen.emplace(key, kv.first.Mark());
      if (!added)
        throw StateError("field '" + field() + "' at " + line_and_column(kv.first.Mark()) +
                         ": duplicate key (also at " + line_and_column(first->second) +
                         "); a map holds each key once and readers would disagree on which one counts: "
                         "remove one of them");
    }
    if (is_collection(kv.second)) check_unique_keys(kv.second, field(), visited);
  }
}
}  // namespace

YAML::Node parse_yaml(const std::string& text) {
  try {
    YAML::Node root = YAML::Load(text);
    std::unordered_set<std::size_t> visited;
    if (root.IsMap() || root.IsSequence()) check_unique_keys(root, "", visited);
    return root;
  } catch (const YAML::Exception& e) {
    throw StateError(line_and_column(e.mark) + ": not valid YAML (" + printable_text(e.msg) + ")");
  }
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StateError("cannot open the file");
  // Straight into the string, sized once: through an ostringstream a 2.5 MB state.yaml was copied
  // twice over a growing buffer, ~10% of a command that loads a campaign of 5000 trials.
  std::string text;
  std::error_code size_unknown;
  if (const std::uintmax_t size = std::filesystem::file_size(path, size_unknown); !size_unknown) text.reserve(size);
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) text.append(chunk, static_cast<std::size_t>(in.gcount()));
  return text;
}

YAML::Node load_yaml_file(const std::filesystem::path& path) { return parse_yaml(read_text_file(path)); }

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
  return line_and_column(m);
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

void check_known_keys(const YAML::Node& node, const std::string& field, const std::set<std::string>& known) {
  if (!node.IsMap()) fail(node, field, "expected a map");
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (known.contains(key)) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    fail(kv.first, field.empty() ? key : field + "." + key, "unknown key; expected one of: " + list);
  }
}

const YAML::Node require(const YAML::Node& parent, const std::string& field) { return require(parent, field, field); }

const YAML::Node require(const YAML::Node& parent, const std::string& key, const std::string& field) {
  if (!parent.IsMap()) fail(parent, field, "expected a map containing '" + key + "'");
  const YAML::Node child = parent[key];
  if (!child.IsDefined()) fail(parent, field, "missing (required)");
  return child;
}

std::optional<double> double_from_text(std::string_view s) {
  if (s == ".nan" || s == ".NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == ".inf" || s == "inf" || s == "+.inf") return std::numeric_limits<double>::infinity();
  if (s == "-.inf" || s == "-inf") return -std::numeric_limits<double>::infinity();
  double value = 0.0;
  const char* begin = s.data() + (s.size() > 1 && s[0] == '+' ? 1 : 0);
  const auto r = std::from_chars(begin, s.data() + s.size(), value);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

namespace {
template <class Int>
std::optional<Int> integer_from_text(std::string_view s) {
  Int value = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), value);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return value;
}
}  // namespace

std::optional<std::int64_t> int_from_text(std::string_view s) { return integer_from_text<std::int64_t>(s); }
std::optional<std::uint64_t> uint_from_text(std::string_view s) { return integer_from_text<std::uint64_t>(s); }

std::optional<bool> bool_from_text(std::string_view s) {
  if (s == "true") return true;
  if (s == "false") return false;
  return std::nullopt;
}

double read_double(const YAML::Node& node, const std::string& field) {
  const std::string s = scalar_of(node, field);
  const std::optional<double> value = double_from_text(s);
  if (!value) fail(node, field, "expected a number, found '" + s + "'");
  return *value;
}

std::int64_t read_int(const YAML::Node& node, const std::string& field) {
  const std::string s = scalar_of(node, field);
  const std::optional<std::int64_t> value = int_from_text(s);
  if (!value) fail(node, field, "expected an integer, found '" + s + "'");
  return *value;
}

std::uint64_t read_uint(const YAML::Node& node, const std::string& field) {
  const std::string s = scalar_of(node, field);
  const std::optional<std::uint64_t> value = uint_from_text(s);
  if (!value) fail(node, field, "expected a non-negative integer, found '" + s + "'");
  return *value;
}

bool read_bool(const YAML::Node& node, const std::string& field) {
  const std::string s = scalar_of(node, field);
  const std::optional<bool> value = bool_from_text(s);
  if (!value) fail(node, field, "expected true or false, found '" + s + "'");
  return *value;
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
