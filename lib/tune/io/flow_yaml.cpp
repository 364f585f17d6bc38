#include "tune/io/flow_yaml.hpp"

#include <array>

namespace tune {

namespace {
// What a byte is to flow_scalar_form: most are ordinary, and a table says so at one load per byte
// (searching a list of indicators per character was a sixth of a command that loads 5000 trials).
enum CharClass : std::uint8_t { kOrdinary, kOutside, kIndicator, kColon, kSpace };
constexpr std::array<std::uint8_t, 256> kCharClass = [] {
  std::array<std::uint8_t, 256> table{};
  for (std::size_t c = 0; c < table.size(); ++c) table[c] = c < 0x20 || c > 0x7E ? kOutside : kOrdinary;
  for (const char c : std::string_view(",?[]{}")) table[static_cast<unsigned char>(c)] = kIndicator;
  table[':'] = kColon;
  table[' '] = kSpace;
  return table;
}();

// Whether the ':' at `i` of `s` ends a plain scalar in a flow collection: at the end, or before one
// of " ,]}".
constexpr bool colon_ends_plain(std::string_view s, std::size_t i) {
  if (i + 1 == s.size()) return true;
  const char next = s[i + 1];
  return next == ' ' || next == ',' || next == ']' || next == '}';
}
}  // namespace

FlowScalarForm flow_scalar_form(std::string_view s) {
  // A longer map key switches yaml-cpp to its long-key form; values are left to it as well.
  if (s.size() > 1000) return FlowScalarForm::unsupported;
  // yaml-cpp's rules for a plain scalar in a flow collection (IsValidPlainScalar): nothing inside
  // that would end the scalar or start a comment; below, not a null ("" included), no indicator
  // first, no trailing space. A control or non-ASCII byte anywhere makes the string unsupported.
  bool quoted = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    switch (kCharClass[static_cast<unsigned char>(s[i])]) {
      case kOrdinary: break;
      case kOutside: return FlowScalarForm::unsupported;
      case kIndicator: quoted = true; break;
      case kColon: quoted = quoted || colon_ends_plain(s, i); break;
      case kSpace: quoted = quoted || (i + 1 < s.size() && s[i + 1] == '#'); break;
    }
  }
  if (quoted) return FlowScalarForm::double_quoted;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return FlowScalarForm::double_quoted;
  if (std::string_view(" ?,[]{}#&*!|>'\"%@`").find(s.front()) != std::string_view::npos)
    return FlowScalarForm::double_quoted;
  if ((s.front() == '-' || s.front() == ':') && (s.size() == 1 || s[1] == ' ')) return FlowScalarForm::double_quoted;
  if (s.back() == ' ') return FlowScalarForm::double_quoted;
  return FlowScalarForm::plain;
}

void FlowYamlWriter::clear() {
  text_.clear();
  open_.clear();
  after_key_ = false;
  supported_ = true;
}

void FlowYamlWriter::begin_item() {
  if (after_key_) {  // a map's value follows its key
    after_key_ = false;
    return;
  }
  if (open_.empty()) return;
  if (!open_.back().empty) text_ += ", ";
  open_.back().empty = false;
}

void FlowYamlWriter::begin_map() {
  begin_item();
  text_ += '{';
  open_.push_back({.map = true});
}

void FlowYamlWriter::begin_seq() {
  begin_item();
  text_ += '[';
  open_.push_back({.map = false});
}

void FlowYamlWriter::end_map() {
  text_ += '}';
  open_.pop_back();
}

void FlowYamlWriter::end_seq() {
  text_ += ']';
  open_.pop_back();
}

void FlowYamlWriter::key(std::string_view name) {
  scalar(name);
  text_ += ": ";
  after_key_ = true;
}

void FlowYamlWriter::string(std::string_view text) { scalar(text); }

void FlowYamlWriter::scalar(std::string_view s) {
  begin_item();
  switch (flow_scalar_form(s)) {
    case FlowScalarForm::plain: text_ += s; break;
    case FlowScalarForm::double_quoted:
      text_ += '"';
      for (const char c : s) {
        if (c == '"' || c == '\\') text_ += '\\';
        text_ += c;
      }
      text_ += '"';
      break;
    case FlowScalarForm::unsupported: supported_ = false; break;
  }
}

void YamlNodeWriter::open(YAML::Node collection) {
  if (!open_.empty()) collection.SetStyle(YAML::EmitterStyle::Flow);
  open_.push_back({collection, key_});
}

// A collection joins its parent when it is complete, under the key that preceded it.
void YamlNodeWriter::close() {
  const Collection done = open_.back();
  open_.pop_back();
  if (open_.empty()) root_ = done.node;
  else attach(done.node, done.key);
}

void YamlNodeWriter::attach(const YAML::Node& child, const std::string& key) {
  YAML::Node& parent = open_.back().node;
  if (parent.IsMap()) parent[key] = child;
  else parent.push_back(child);
}

}  // namespace tune

namespace tune {

// A recursive descent over exactly the grammar FlowYamlWriter writes, echoing every item to a
// FlowYamlWriter: the line is accepted only if the echo is the line itself.
class FlowRecord::Reader {
 public:
  Reader(FlowRecord& record, std::string_view line) : r_(record), s_(line) {}

  bool read() {
    r_.items_.clear();
    r_.unescaped_used_ = 0;
    r_.echo_.clear();
    if (s_.empty() || s_.front() != '{') return false;
    if (!value(0) || at_ != s_.size() || !r_.echo_.supported() || r_.echo_.text() != s_) {
      r_.items_.clear();
      return false;
    }
    return true;
  }

 private:
  static constexpr int kMaxDepth = 32;

  char peek() const { return at_ < s_.size() ? s_[at_] : '\0'; }
  bool take(std::string_view text) {
    if (s_.substr(at_, text.size()) != text) return false;
    at_ += text.size();
    return true;
  }
  std::uint32_t add(Kind kind) {
    r_.items_.push_back({.kind = kind});
    return static_cast<std::uint32_t>(r_.items_.size() - 1);
  }
  // Links `item` after `last` in its collection (or as its first), and counts it.
  void link(std::uint32_t collection, std::uint32_t& last, std::uint32_t item) {
    if (r_.items_[collection].size == 0 && last == 0) r_.items_[collection].first = item;
    else r_.items_[last].next = item;
    last = item;
  }

  bool value(int depth) {
    if (depth > kMaxDepth) return false;
    switch (peek()) {
      case '{': return map(depth);
      case '[': return seq(depth);
      default: {
        const std::optional<std::uint32_t> item = scalar();
        if (!item) return false;
        r_.echo_.string(r_.items_[*item].text);
        return true;
      }
    }
  }

  bool map(int depth) {
    ++at_;
    r_.echo_.begin_map();
    const std::uint32_t self = add(Kind::map);
    std::uint32_t last = 0;
    if (!take("}")) {
      do {
        if (peek() == '{' || peek() == '[') return false;
        const std::optional<std::uint32_t> key = scalar();
        if (!key || !take(": ")) return false;
        const std::string_view name = r_.items_[*key].text;
        // A key given twice: parse_yaml refuses it, with a message.
        for (std::uint32_t j = 0, k = r_.items_[self].first; j < r_.items_[self].size; ++j, k = r_.items_[r_.items_[k].next].next)
          if (r_.items_[k].text == name) return false;
        r_.echo_.key(name);
        link(self, last, *key);
        const std::uint32_t item = static_cast<std::uint32_t>(r_.items_.size());
        if (!value(depth + 1)) return false;
        link(self, last, item);
        ++r_.items_[self].size;
      } while (take(", "));
      if (!take("}")) return false;
    }
    r_.echo_.end_map();
    return true;
  }

  bool seq(int depth) {
    ++at_;
    r_.echo_.begin_seq();
    const std::uint32_t self = add(Kind::seq);
    std::uint32_t last = 0;
    if (!take("]")) {
      do {
        const std::uint32_t item = static_cast<std::uint32_t>(r_.items_.size());
        if (!value(depth + 1)) return false;
        link(self, last, item);
        ++r_.items_[self].size;
      } while (take(", "));
      if (!take("]")) return false;
    }
    r_.echo_.end_seq();
    return true;
  }

  // A plain scalar runs to the first character that ends one in a flow collection (the echo
  // refuses one that should have been quoted); a double-quoted one holds only \" and \\ escapes.
  std::optional<std::uint32_t> scalar() {
    if (peek() == '"') {
      ++at_;
      const std::size_t start = at_;
      bool escaped = false;
      for (;;) {
        if (at_ >= s_.size()) return std::nullopt;
        const char c = s_[at_++];
        if (c == '"') break;
        if (c == '\\') {
          if (at_ >= s_.size() || (s_[at_] != '"' && s_[at_] != '\\')) return std::nullopt;
          ++at_;
          escaped = true;
        }
      }
      const std::string_view quoted = s_.substr(start, at_ - 1 - start);
      const std::uint32_t item = add(Kind::quoted);
      if (!escaped) {
        r_.items_[item].text = quoted;
        return item;
      }
      if (r_.unescaped_used_ == r_.unescaped_.size()) r_.unescaped_.emplace_back();
      std::string& text = r_.unescaped_[r_.unescaped_used_++];
      text.clear();
      for (std::size_t i = 0; i < quoted.size(); ++i) text += quoted[i] == '\\' ? quoted[++i] : quoted[i];
      r_.items_[item].text = text;
      return item;
    }
    const std::size_t start = at_;
    while (at_ < s_.size()) {
      const char c = s_[at_];
      if (c == ',' || c == '[' || c == ']' || c == '{' || c == '}') break;
      if (c == ':' && colon_ends_plain(s_, at_)) break;
      ++at_;
    }
    if (at_ == start) return std::nullopt;
    const std::uint32_t item = add(Kind::scalar);
    r_.items_[item].text = s_.substr(start, at_ - start);
    return item;
  }

  FlowRecord& r_;
  std::string_view s_;
  std::size_t at_ = 0;
};

namespace {

// A record list of the file: its key's line, where the key is, and the record lines under it.
struct RecordList {
  std::size_t line = 0;     // 0-based, of "<pad><key>:"
  std::size_t indent = 0;   // of the key: 0, or 2 under a top-level `study:`
  std::string key;          // "trials" or "runs"
  std::vector<std::string_view> lines;  // of its records, without "<pad>- "
};

// The list `list` stands for in `root`: the empty flow sequence its key line became, found by its
// position, so that a line that only looks like the key (inside a quoted scalar) is not taken.
std::optional<YAML::Node> list_node(const YAML::Node& root, const RecordList& list) {
  const auto find = [&](const YAML::Node& map) -> std::optional<YAML::Node> {
    if (!map.IsMap()) return std::nullopt;
    for (const auto& kv : map) {
      const YAML::Mark m = kv.second.Mark();
      if (kv.first.IsScalar() && kv.first.Scalar() == list.key && kv.second.IsSequence() && kv.second.size() == 0 &&
          m.line == static_cast<int>(list.line) && m.column == static_cast<int>(list.indent + list.key.size() + 2))
        return kv.second;
    }
    return std::nullopt;
  };
  if (list.indent == 0) return find(root);
  if (!root.IsMap()) return std::nullopt;
  for (const auto& kv : root)
    if (kv.first.IsScalar() && kv.first.Scalar() == "study")
      if (std::optional<YAML::Node> found = find(kv.second)) return found;
  return std::nullopt;
}

}  // namespace

bool FlowRecord::read(std::string_view line) { return Reader(*this, line).read(); }

YAML::Node FlowRecord::item_yaml(std::uint32_t index) const {
  const Item& item = items_[index];
  if (item.kind == Kind::scalar || item.kind == Kind::quoted) {
    YAML::Node node{std::string(item.text)};
    node.SetTag(item.kind == Kind::quoted ? "!" : "?");
    return node;
  }
  YAML::Node node(item.kind == Kind::map ? YAML::NodeType::Map : YAML::NodeType::Sequence);
  node.SetStyle(YAML::EmitterStyle::Flow);
  node.SetTag("?");
  std::uint32_t at = item.first;
  for (std::uint32_t i = 0; i < item.size; ++i) {
    if (item.kind == Kind::map) {
      const std::uint32_t value = items_[at].next;
      node.force_insert(item_yaml(at), item_yaml(value));
      at = items_[value].next;
    } else {
      node.push_back(item_yaml(at));
      at = items_[at].next;
    }
  }
  return node;
}

YAML::Node FlowRecord::to_yaml() const { return items_.empty() ? YAML::Node() : item_yaml(0); }

bool FlowNode::IsScalar() const {
  return record_ && (record_->items_[index_].kind == FlowRecord::Kind::scalar ||
                     record_->items_[index_].kind == FlowRecord::Kind::quoted);
}
bool FlowNode::IsMap() const { return record_ && record_->items_[index_].kind == FlowRecord::Kind::map; }
bool FlowNode::IsSequence() const { return record_ && record_->items_[index_].kind == FlowRecord::Kind::seq; }
std::string_view FlowNode::Scalar() const { return IsScalar() ? record_->items_[index_].text : std::string_view(); }
std::size_t FlowNode::size() const { return IsMap() || IsSequence() ? record_->items_[index_].size : 0; }

FlowNode FlowNode::operator[](std::string_view key) const {
  if (!IsMap()) return {};
  const auto& items = record_->items_;
  std::uint32_t at = items[index_].first;
  for (std::uint32_t i = 0; i < items[index_].size; ++i) {
    const std::uint32_t value = items[at].next;
    if (items[at].text == key) return {record_, value};
    at = items[value].next;
  }
  return {};
}

FlowNode FlowNode::operator[](std::size_t index) const {
  if (!IsSequence() || index >= size()) return {};
  std::uint32_t at = record_->items_[index_].first;
  for (std::size_t i = 0; i < index; ++i) at = record_->items_[at].next;
  return {record_, at};
}

std::vector<std::pair<FlowNode, FlowNode>> FlowNode::entries() const {
  std::vector<std::pair<FlowNode, FlowNode>> out;
  if (!IsMap()) return out;
  std::uint32_t at = record_->items_[index_].first;
  for (std::uint32_t i = 0; i < size(); ++i) {
    const std::uint32_t value = record_->items_[at].next;
    out.emplace_back(FlowNode(record_, at), FlowNode(record_, value));
    at = record_->items_[value].next;
  }
  return out;
}

namespace {
[[noreturn]] void refuse(const std::string& field, const std::string& what) {
  throw StateError("field '" + field + "': " + what + " (read again by yaml-cpp for its position)");
}

std::string_view scalar_of(const FlowNode& node, const std::string& field) {
  if (!node.IsDefined()) refuse(field, "missing value");
  if (!node.IsScalar()) refuse(field, "expected a single value, found a list or map");
  return node.Scalar();
}

template <class T>
T converted(const std::optional<T>& value, const std::string& field) {
  if (!value) refuse(field, "not a value of its type");
  return *value;
}
}  // namespace

std::string position_of(const FlowNode&) { return "unknown position"; }

void check_known_keys(const FlowNode& node, const std::string& field, const std::set<std::string>& known) {
  if (!node.IsMap()) refuse(field, "expected a map");
  for (const auto& [key, value] : node.entries())
    if (!known.contains(std::string(key.Scalar()))) refuse(field, "unknown key");
}

FlowNode require(const FlowNode& parent, const std::string& field) {
  if (!parent.IsMap()) refuse(field, "expected a map");
  const FlowNode child = parent[field];
  if (!child.IsDefined()) refuse(field, "missing (required)");
  return child;
}

double read_double(const FlowNode& node, const std::string& field) {
  return converted(double_from_text(scalar_of(node, field)), field);
}
std::int64_t read_int(const FlowNode& node, const std::string& field) {
  return converted(int_from_text(scalar_of(node, field)), field);
}
std::uint64_t read_uint(const FlowNode& node, const std::string& field) {
  return converted(uint_from_text(scalar_of(node, field)), field);
}
bool read_bool(const FlowNode& node, const std::string& field) { return converted(bool_from_text(scalar_of(node, field)), field); }
std::string read_string(const FlowNode& node, const std::string& field) { return std::string(scalar_of(node, field)); }

Eigen::VectorXd read_vector(const FlowNode& node, const std::string& field) {
  if (!node.IsSequence()) refuse(field, "expected a list of numbers");
  Eigen::VectorXd out(static_cast<Eigen::Index>(node.size()));
  for (Eigen::Index i = 0; i < out.size(); ++i) out(i) = read_double(node[static_cast<std::size_t>(i)], field);
  return out;
}

std::optional<YAML::Node> read_flow_record(std::string_view line) {
  FlowRecord record;
  if (!record.read(line)) return std::nullopt;
  return record.to_yaml();
}

const std::vector<std::string_view>* record_lines(const RecordLines* lines, std::string_view key) {
  if (!lines) return nullptr;
  const auto found = lines->find(key);
  return found == lines->end() ? nullptr : &found->second;
}

std::optional<FastDocument> split_record_lists(const std::string& text) {
  // The skeleton is the text with each record list's key line "<key>: []" and its record lines
  // emptied: yaml-cpp reads it at the same lines and columns, and the records join it afterwards.
  std::string skeleton;
  skeleton.reserve(text.size() / 8);
  std::vector<RecordList> lists;
  std::string top_key;  // the last line at indent 0
  std::size_t pos = 0, line_no = 0;
  const auto next_line = [&](std::size_t from) {
    const std::size_t end = text.find('\n', from);
    return std::string_view(text).substr(from, (end == std::string::npos ? text.size() : end) - from);
  };
  while (pos < text.size()) {
    const std::string_view line = next_line(pos);
    pos += line.size() + 1;
    if (!line.empty() && line.front() != ' ') top_key = line;
    const std::size_t indent = line == "trials:" || line == "runs:" ? 0
                               : top_key == "study:" && line == "  trials:" ? 2
                                                                               : std::string::npos;
    const std::string item_prefix = indent == std::string::npos ? "" : std::string(indent + 2, ' ') + "- ";
    if (indent == std::string::npos || pos >= text.size() || !next_line(pos).starts_with(item_prefix)) {
      skeleton += line;
      skeleton += '\n';
      ++line_no;
      continue;
    }
    RecordList list{.line = line_no, .indent = indent, .key = std::string(line.substr(indent, line.size() - indent - 1)), .lines = {}};
    skeleton += line;
    skeleton += " []\n";
    ++line_no;
    while (pos < text.size() && next_line(pos).starts_with(item_prefix)) {
      const std::string_view item = next_line(pos);
      pos += item.size() + 1;
      list.lines.push_back(item.substr(item_prefix.size()));
      skeleton += '\n';
      ++line_no;
    }
    // What follows is the next key of the map holding the list (or the end): a blank line, a comment
    // or a deeper line might belong to the list, and is left to yaml-cpp.
    if (pos < text.size()) {
      const std::string_view after = next_line(pos);
      const std::size_t after_indent = after.find_first_not_of(' ');
      if (after_indent == std::string_view::npos || after_indent > indent || after[after_indent] == '#' ||
          after[after_indent] == '-')
        return std::nullopt;
    }
    lists.push_back(std::move(list));
  }
  if (!text.empty() && text.back() != '\n') skeleton.pop_back();  // the text's own last line end
  try {
    FastDocument document{.root = parse_yaml(skeleton), .records = {}};
    for (RecordList& list : lists) {
      if (!list_node(document.root, list)) return std::nullopt;
      const std::string name = list.indent == 0 ? list.key : "study." + list.key;
      if (!document.records.emplace(name, std::move(list.lines)).second) return std::nullopt;
    }
    return document;
  } catch (...) {  // not valid: yaml-cpp's reading of the whole text says where
    return std::nullopt;
  }
}

std::optional<YAML::Node> parse_with_fast_records(const std::string& text) {
  std::optional<FastDocument> document = split_record_lists(text);
  if (!document) return std::nullopt;
  for (const auto& [name, lines] : document->records) {
    const std::size_t dot = name.find('.');
    YAML::Node list = dot == std::string::npos ? document->root[name] : document->root["study"][name.substr(dot + 1)];
    list.SetStyle(YAML::EmitterStyle::Block);
    FlowRecord record;
    for (const std::string_view line : lines) {
      if (!record.read(line)) return std::nullopt;
      list.push_back(record.to_yaml());
    }
  }
  return document->root;
}

}  // namespace tune
