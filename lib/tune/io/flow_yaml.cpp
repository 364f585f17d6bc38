#include "tune/io/flow_yaml.hpp"

namespace tune {

FlowScalarForm flow_scalar_form(std::string_view s) {
  // A longer map key switches yaml-cpp to its long-key form; values are left to it as well.
  if (s.size() > 1000) return FlowScalarForm::unsupported;
  for (const char c : s)
    if (c < 0x20 || c > 0x7E) return FlowScalarForm::unsupported;
  // yaml-cpp's rules for a plain scalar in a flow collection (IsValidPlainScalar): not a null
  // ("" included), no indicator first, no trailing space, and nothing inside that would end the
  // scalar or start a comment.
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return FlowScalarForm::double_quoted;
  if (std::string_view(" ?,[]{}#&*!|>'\"%@`").find(s.front()) != std::string_view::npos)
    return FlowScalarForm::double_quoted;
  if ((s.front() == '-' || s.front() == ':') && (s.size() == 1 || s[1] == ' ')) return FlowScalarForm::double_quoted;
  if (s.back() == ' ') return FlowScalarForm::double_quoted;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (std::string_view(",?[]{}").find(c) != std::string_view::npos) return FlowScalarForm::double_quoted;
    if (c == ':' && (next == '\0' || std::string_view(" ,]}").find(next) != std::string_view::npos))
      return FlowScalarForm::double_quoted;
    if (c == ' ' && next == '#') return FlowScalarForm::double_quoted;
  }
  return FlowScalarForm::plain;
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

namespace {

// A recursive descent over exactly the grammar FlowYamlWriter writes, echoing every item to a
// FlowYamlWriter: the line is accepted only if the echo is the line itself.
class FlowRecordReader {
 public:
  explicit FlowRecordReader(std::string_view line) : s_(line) {}

  std::optional<YAML::Node> read() {
    if (s_.empty() || s_.front() != '{') return std::nullopt;
    YAML::Node root;
    if (!value(root, 0) || at_ != s_.size() || !echo_.supported() || echo_.text() != s_) return std::nullopt;
    return root;
  }

 private:
  static constexpr int kMaxDepth = 32;

  char peek() const { return at_ < s_.size() ? s_[at_] : '\0'; }
  bool take(std::string_view text) {
    if (s_.substr(at_, text.size()) != text) return false;
    at_ += text.size();
    return true;
  }

  bool value(YAML::Node& out, int depth) {
    if (depth > kMaxDepth) return false;
    switch (peek()) {
      case '{': return map(out, depth);
      case '[': return seq(out, depth);
      default: {
        std::string text;
        if (!scalar(text, out)) return false;
        echo_.string(text);
        return true;
      }
    }
  }

  bool map(YAML::Node& out, int depth) {
    ++at_;
    echo_.begin_map();
    out = YAML::Node(YAML::NodeType::Map);
    out.SetStyle(YAML::EmitterStyle::Flow);
    out.SetTag("?");
    std::vector<std::string> keys;
    if (!take("}")) {
      do {
        YAML::Node key, item;
        std::string name;
        if (peek() == '{' || peek() == '[' || !scalar(name, key) || !take(": ")) return false;
        for (const std::string& k : keys)
          if (k == name) return false;  // parse_yaml refuses it, with a message
        echo_.key(name);
        if (!value(item, depth + 1)) return false;
        out.force_insert(key, item);
        keys.push_back(std::move(name));
      } while (take(", "));
      if (!take("}")) return false;
    }
    echo_.end_map();
    return true;
  }

  bool seq(YAML::Node& out, int depth) {
    ++at_;
    echo_.begin_seq();
    out = YAML::Node(YAML::NodeType::Sequence);
    out.SetStyle(YAML::EmitterStyle::Flow);
    out.SetTag("?");
    if (!take("]")) {
      do {
        YAML::Node item;
        if (!value(item, depth + 1)) return false;
        out.push_back(item);
      } while (take(", "));
      if (!take("]")) return false;
    }
    echo_.end_seq();
    return true;
  }

  // A plain scalar runs to the first character that ends one in a flow collection (the echo
  // refuses one that should have been quoted); a double-quoted one holds only \" and \\ escapes.
  bool scalar(std::string& text, YAML::Node& node) {
    if (peek() == '"') {
      ++at_;
      for (;;) {
        if (at_ >= s_.size()) return false;
        char c = s_[at_++];
        if (c == '"') break;
        if (c == '\\') {
          if (at_ >= s_.size() || (s_[at_] != '"' && s_[at_] != '\\')) return false;
          c = s_[at_++];
        }
        text += c;
      }
      node = YAML::Node(text);
      node.SetTag("!");
      return true;
    }
    const std::size_t start = at_;
    while (at_ < s_.size()) {
      const char c = s_[at_];
      if (c == ',' || c == '[' || c == ']' || c == '{' || c == '}') break;
      if (c == ':' && (at_ + 1 == s_.size() || std::string_view(" ,]}").find(s_[at_ + 1]) != std::string_view::npos))
        break;
      ++at_;
    }
    if (at_ == start) return false;
    text.assign(s_.substr(start, at_ - start));
    node = YAML::Node(text);
    node.SetTag("?");
    return true;
  }

  std::string_view s_;
  std::size_t at_ = 0;
  FlowYamlWriter echo_;
};

// A record list of the file: its key's line, where the key is, and the record lines under it.
struct RecordList {
  std::size_t line = 0;     // 0-based, of "<pad><key>:"
  std::size_t indent = 0;   // of the key: 0, or 2 under a top-level `study:`
  std::string key;          // "trials" or "runs"
  std::vector<YAML::Node> records;
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

std::optional<YAML::Node> read_flow_record(std::string_view line) { return FlowRecordReader(line).read(); }

std::optional<YAML::Node> parse_with_fast_records(const std::string& text) {
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
    RecordList list{.line = line_no, .indent = indent, .key = std::string(line.substr(indent, line.size() - indent - 1)), .records = {}};
    skeleton += line;
    skeleton += " []\n";
    ++line_no;
    while (pos < text.size() && next_line(pos).starts_with(item_prefix)) {
      const std::string_view item = next_line(pos);
      pos += item.size() + 1;
      std::optional<YAML::Node> record = read_flow_record(item.substr(item_prefix.size()));
      if (!record) return std::nullopt;
      list.records.push_back(std::move(*record));
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
    YAML::Node root = parse_yaml(skeleton);
    for (RecordList& list : lists) {
      std::optional<YAML::Node> node = list_node(root, list);
      if (!node) return std::nullopt;
      node->SetStyle(YAML::EmitterStyle::Block);
      for (const YAML::Node& record : list.records) node->push_back(record);
    }
    return root;
  } catch (...) {  // not valid: yaml-cpp's reading of the whole text says where
    return std::nullopt;
  }
}

}  // namespace tune
