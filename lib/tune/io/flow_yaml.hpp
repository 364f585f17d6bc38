#pragma once
// Flow-style YAML records ({key: value, ...} and [a, b], one per line of a state file) written
// without yaml-cpp's emitter, which costs ~50 us per record: the first save after a load formats
// every trial of the file, hundreds of ms at 2000 trials for each `tune ask` and `tune tell`.
//
// A record's layout is written once, as a template over a writer (see study_yaml.cpp's write_trial);
// FlowYamlWriter writes it as text, YamlNodeWriter as the yaml-cpp node the text must equal when
// emitted in flow style. flow_record_text() takes FlowYamlWriter's text, or yaml-cpp's where
// FlowYamlWriter was not sure, so the bytes of a file never depend on which one wrote them.
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <concepts>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tune/io/yaml_values.hpp"

namespace tune {

// How yaml-cpp's emitter writes a string in a flow collection, for the strings FlowYamlWriter
// writes itself: printable ASCII up to 1000 bytes. `unsupported` for every other string (a control or
// non-ASCII byte, which yaml-cpp escapes by code point; a key over 1024 bytes, which it writes in
// long-key form).
enum class FlowScalarForm { plain, double_quoted, unsupported };
FlowScalarForm flow_scalar_form(std::string_view text);

// Writes a flow record as text, byte for byte as yaml-cpp emits the same node in flow style, or
// gives up (supported() false) at the first string it cannot judge.
class FlowYamlWriter {
 public:
  void begin_map();
  void end_map();
  void begin_seq();
  void end_seq();
  void key(std::string_view name);  // in a map, before each value
  void string(std::string_view text);
  void number(double value) { scalar(format_double(value)); }
  void boolean(bool value) { scalar(value ? "true" : "false"); }
  template <std::integral Int>
    requires(!std::same_as<Int, bool>)
  void integer(Int value) {
    char digits[24];
    scalar(std::string_view(digits, static_cast<std::size_t>(std::to_chars(digits, digits + sizeof digits, value).ptr - digits)));
  }

  bool supported() const { return supported_; }
  const std::string& text() const { return text_; }
  void clear();  // to write another record, reusing the storage

 private:
  void scalar(std::string_view text);
  void begin_item();  // the ", " between items of a collection

  struct Collection {
    bool map = false;
    bool empty = true;
  };
  std::string text_;
  std::vector<Collection> open_;
  bool after_key_ = false;
  bool supported_ = true;
};

// The same calls, building the yaml-cpp node of the record (what the state files held before
// FlowYamlWriter): a nested collection in flow style, as the records always were.
class YamlNodeWriter {
 public:
  void begin_map() { open(YAML::Node(YAML::NodeType::Map)); }
  void end_map() { close(); }
  void begin_seq() { open(YAML::Node(YAML::NodeType::Sequence)); }
  void end_seq() { close(); }
  void key(std::string_view name) { key_ = name; }
  void string(std::string_view text) { attach(YAML::Node(std::string(text)), key_); }
  void number(double value) { attach(yaml_double(value), key_); }
  void boolean(bool value) { attach(YAML::Node(value), key_); }
  template <std::integral Int>
    requires(!std::same_as<Int, bool>)
  void integer(Int value) {
    attach(YAML::Node(value), key_);
  }

  const YAML::Node& node() const { return root_; }

 private:
  void open(YAML::Node collection);
  void close();
  void attach(const YAML::Node& child, const std::string& key);

  struct Collection {
    YAML::Node node;
    std::string key;  // its key in the enclosing map
  };
  std::vector<Collection> open_;
  std::string key_;
  YAML::Node root_;
};

// `key: value` in a map of either writer, the value written as its type says.
template <class Writer, class Value>
void write_entry(Writer& writer, std::string_view key, const Value& value) {
  writer.key(key);
  if constexpr (std::same_as<Value, bool>) writer.boolean(value);
  else if constexpr (std::floating_point<Value>) writer.number(value);
  else if constexpr (std::integral<Value>) writer.integer(value);
  else writer.string(value);
}

// The one-line flow text of the record `write(writer)` writes (see the top of this file).
template <class WriteRecord>
std::string flow_record_text(const WriteRecord& write) {
  FlowYamlWriter fast;
  write(fast);
  if (fast.supported()) return fast.text();
  YamlNodeWriter slow;
  write(slow);
  YAML::Node node = slow.node();
  node.SetStyle(YAML::EmitterStyle::Flow);
  return emit_yaml(node);
}

// Reading. yaml-cpp's parser costs ~75 us per record line of a state file, and its nodes as much
// again to build and free; the records FlowYamlWriter wrote are read here instead, into a flat tree
// of views of the line that the loaders read straight into their structs.

class FlowRecord;

// An item of a FlowRecord, read with the calls the loaders make of a YAML::Node (the names are
// yaml-cpp's), so that one template reads a record from either: a default-constructed one is absent,
// as yaml-cpp's lookup of a missing key. Valid while its FlowRecord and the line are.
class FlowNode {
 public:
  FlowNode() = default;
  bool IsDefined() const { return record_ != nullptr; }
  explicit operator bool() const { return IsDefined(); }
  bool IsNull() const { return false; }  // a null is never written plain, and a quoted one is a string
  bool IsScalar() const;
  bool IsMap() const;
  bool IsSequence() const;
  std::string_view Scalar() const;  // the text, unescaped; empty for a collection
  std::size_t size() const;
  FlowNode operator[](std::string_view key) const;  // a map's value; absent if there is none
  FlowNode operator[](std::size_t index) const;     // a sequence's item; absent if there is none
  // A map's entries in order, as pairs (first: the key, second: the value); empty for anything else.
  std::vector<std::pair<FlowNode, FlowNode>> entries() const;

 private:
  friend class FlowRecord;
  FlowNode(const FlowRecord* record, std::uint32_t index) : record_(record), index_(index) {}
  const FlowRecord* record_ = nullptr;
  std::uint32_t index_ = 0;
};

// One record line ("{id: 0, ...}", without the "  - " before it) as yaml-cpp reads it: plain scalars
// and collections tagged "?", double-quoted scalars "!", collections in flow style. Only a line that
// FlowYamlWriter would write again byte for byte is read; any other text (a comment, a single-quoted
// or escaped string, a null, a tab, a byte outside printable ASCII, a key given twice, a space out of
// place, ...) is refused, and yaml-cpp must read it. One FlowRecord reads line after line, reusing
// its storage.
class FlowRecord {
 public:
  bool read(std::string_view line);  // false: refused (and the record is empty)
  FlowNode root() const { return items_.empty() ? FlowNode() : FlowNode(this, 0); }
  YAML::Node to_yaml() const;  // the node yaml-cpp makes of the line (tags, styles, key order)

 private:
  friend class FlowNode;
  class Reader;  // the parser (flow_yaml.cpp)
  enum class Kind : std::uint8_t { scalar, quoted, map, seq };
  struct Item {
    Kind kind = Kind::scalar;
    std::string_view text;     // a scalar's (a map's items are its keys and values, alternating)
    std::uint32_t first = 0;   // a collection's first item (a map's: the first key), 0 if empty
    std::uint32_t next = 0;    // the next item of the enclosing collection, 0 if last
    std::uint32_t size = 0;    // a collection's items (a map's: its entries)
  };
  YAML::Node item_yaml(std::uint32_t index) const;

  std::vector<Item> items_;
  std::deque<std::string> unescaped_;  // quoted scalars with escapes (their views stay valid)
  std::size_t unescaped_used_ = 0;
  FlowYamlWriter echo_;
};

// read_* of tune/io/yaml_values.hpp for a FlowNode: the same text conversions, and a refusal that
// names no position (the loaders read the file again through yaml-cpp for the message).
std::string position_of(const FlowNode& node);
void check_known_keys(const FlowNode& node, const std::string& field, const std::set<std::string>& known);
FlowNode require(const FlowNode& parent, const std::string& field);
double read_double(const FlowNode& node, const std::string& field);
std::int64_t read_int(const FlowNode& node, const std::string& field);
std::uint64_t read_uint(const FlowNode& node, const std::string& field);
bool read_bool(const FlowNode& node, const std::string& field);
std::string read_string(const FlowNode& node, const std::string& field);
Eigen::VectorXd read_vector(const FlowNode& node, const std::string& field);
// entries_of and key_text of yaml_values.hpp for a FlowNode: its entries, its scalar.
inline std::vector<std::pair<FlowNode, FlowNode>> entries_of(const FlowNode& node) { return node.entries(); }
inline std::string key_text(const FlowNode& key) { return std::string(key.Scalar()); }

// read(node, i) of each record i of a record list: its lines read by FlowRecord where the fast load
// split them off (`lines`; the list's node is then empty), else the items of the yaml-cpp list. A
// line FlowRecord refuses throws StateError, and the loader reads the file again through yaml-cpp.
template <class Read>
void read_records(const YAML::Node& list, const std::vector<std::string_view>* lines, std::string_view what,
                  const Read& read) {
  if (!lines) {
    for (std::size_t i = 0; i < list.size(); ++i) read(list[i], i);
    return;
  }
  FlowRecord record;
  for (std::size_t i = 0; i < lines->size(); ++i) {
    if (!record.read((*lines)[i]))
      throw StateError(std::string(what) + " " + std::to_string(i) + ": not a line FlowYamlWriter writes");
    read(record.root(), i);
  }
}

// The node of one record line, as FlowRecord reads it (nullopt where it refuses the line).
std::optional<YAML::Node> read_flow_record(std::string_view line);

// The record lines of a file's record lists (each without the "  - " before it), by the list's key:
// "trials" (a study file), "runs" and "study.trials" (a campaign's state). Views of the file's text.
using RecordLines = std::map<std::string, std::vector<std::string_view>, std::less<>>;
// The lines of the list `key`, or nullptr when the file has no such list (then its node holds it).
const std::vector<std::string_view>* record_lines(const RecordLines* lines, std::string_view key);

// A study or campaign state file as its loaders read it: the document parsed by yaml-cpp without the
// items of its record lists (each list's key stands as an empty flow sequence, "<key>: []", at its
// own line and column), and those items' lines.
struct FastDocument {
  YAML::Node root;
  RecordLines records;
};
// nullopt when the file is not laid out as the writers write it (a record list's items are not one
// line each, something other than the next key follows a list, yaml-cpp refuses the rest, ...).
std::optional<FastDocument> split_record_lists(const std::string& text);

// The document of the file as parse_yaml() makes it, its record lines read by FlowRecord; nullopt
// when split_record_lists or FlowRecord refuses any of it. The records' nodes carry no position.
std::optional<YAML::Node> parse_with_fast_records(const std::string& text);

// load(root, &lines) of the file split by split_record_lists(), its loaders reading each record line
// through FlowRecord straight into their structs; or, when the split gives nullopt or that load throws
// anything at all (a line FlowRecord refuses included), load(parse_yaml(text), nullptr): a refusal's
// message and positions are always those of yaml-cpp's reading, as are its parse errors.
template <class Load>
auto load_with_fast_records(const std::string& text, const Load& load) -> decltype(load(YAML::Node(), nullptr)) {
  if (const std::optional<FastDocument> fast = split_record_lists(text)) {
    try {
      return load(fast->root, &fast->records);
    } catch (...) {  // refused (or anything else): read again, so that the error is yaml-cpp's
    }
  }
  return load(parse_yaml(text), nullptr);
}

}  // namespace tune
