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
#include <optional>
#include <string>
#include <string_view>
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

// Reading. yaml-cpp's parser costs ~75 us per record line of a state file; the records FlowYamlWriter
// wrote are read here instead, at a fraction of that, into the node yaml-cpp would make of them.

// The node of one record line ("{id: 0, ...}", without the "  - " before it), as yaml-cpp reads it:
// plain scalars and collections tagged "?", double-quoted scalars "!", collections in flow style. Only a line that
// FlowYamlWriter would write again byte for byte is read; any other text (a comment, a single-quoted
// or escaped string, a null, a tab, a byte outside printable ASCII, a key given twice, a space out of
// place, ...) gives nullopt, and yaml-cpp must read it.
std::optional<YAML::Node> read_flow_record(std::string_view line);

// The document of a study or campaign state file, as parse_yaml() makes it, its record lists (the
// `trials:` of a study, the `runs:` and `study: trials:` of a state) read by read_flow_record and the
// rest by yaml-cpp; nullopt when any of it is not as the writers write it, or is not valid. The
// nodes of the records carry no position: load_with_fast_records() reads a file through it.
std::optional<YAML::Node> parse_with_fast_records(const std::string& text);

// load(root) of the file's text parsed by parse_with_fast_records(), or, when it gives nullopt or
// load throws anything at all, of the text parsed by parse_yaml(): a refusal's message and positions
// are always those of yaml-cpp's reading, as are its parse errors.
template <class Load>
auto load_with_fast_records(const std::string& text, const Load& load) -> decltype(load(YAML::Node())) {
  if (const std::optional<YAML::Node> fast = parse_with_fast_records(text)) {
    try {
      return load(*fast);
    } catch (...) {  // refused (or anything else): read again, so that the error is yaml-cpp's
    }
  }
  return load(parse_yaml(text));
}

}  // namespace tune
