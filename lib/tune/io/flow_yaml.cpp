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
