#include "tuner/cli/output_yaml.hpp"

#include "tune/space/space_yaml.hpp"

namespace tune::tuner {
namespace {

// A private tag, never written: emit() writes a scalar carrying it in double quotes.
constexpr const char* kQuotedText = "tag:tune,2026:quoted-text";

void emit(YAML::Emitter& e, const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      if (node.Style() == YAML::EmitterStyle::Flow) e << YAML::Flow;
      e << YAML::BeginMap;
      for (const auto& kv : node) {
        e << YAML::Key;
        emit(e, kv.first);
        e << YAML::Value;
        emit(e, kv.second);
      }
      e << YAML::EndMap;
      break;
    case YAML::NodeType::Sequence:
      if (node.Style() == YAML::EmitterStyle::Flow) e << YAML::Flow;
      e << YAML::BeginSeq;
      for (const auto& item : node) emit(e, item);
      e << YAML::EndSeq;
      break;
    case YAML::NodeType::Scalar:
      if (node.Tag() == kQuotedText) e << YAML::DoubleQuoted;
      e << node.Scalar();
      break;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      e << YAML::Null;
      break;
  }
}

}  // namespace

YAML::Node quoted_text(const std::string& text) {
  YAML::Node node(text);
  node.SetTag(kQuotedText);
  return node;
}

YAML::Node config_for_readers(const Space& space, const Config& config) {
  YAML::Node node = config_to_yaml(space, config);
  node.SetStyle(YAML::EmitterStyle::Block);
  for (const Parameter& p : space.parameters())
    if ((p.type == ParamType::categorical || p.type == ParamType::ordinal) && node[p.name])
      node[p.name] = quoted_text(node[p.name].Scalar());
  return node;
}

std::string emit_for_readers(const YAML::Node& node) {
  YAML::Emitter e;
  emit(e, node);
  return e.c_str();
}

}  // namespace tune::tuner
