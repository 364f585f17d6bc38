// read_flow_record and parse_with_fast_records against yaml-cpp: for every line the fast reader
// accepts, its node must be yaml-cpp's (type, scalar text, tag, style, key order); every other line
// (and so the file) is left to yaml-cpp, and a study loads the same either way, refusals included.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "flow_yaml_random.hpp"
#include "tune/io/flow_yaml.hpp"
#include "tune/tune.hpp"

namespace tune {
namespace {

using namespace flow_test;

// Where two trees differ ("" if nowhere), positions aside.
std::string difference(const YAML::Node& a, const YAML::Node& b, const std::string& path = "") {
  const std::string at = path.empty() ? "the root" : path;
  if (a.Type() != b.Type()) return at + ": node types differ";
  if (a.Tag() != b.Tag()) return at + ": tag '" + a.Tag() + "' vs '" + b.Tag() + "'";
  if (a.Style() != b.Style()) return at + ": styles differ";
  if (a.IsScalar()) return a.Scalar() == b.Scalar() ? "" : at + ": " + escaped(a.Scalar()) + " vs " + escaped(b.Scalar());
  if (a.size() != b.size()) return at + ": sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  if (a.IsSequence()) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (std::string d = difference(a[i], b[i], path + "[" + std::to_string(i) + "]"); !d.empty()) return d;
  } else if (a.IsMap()) {
    auto ia = a.begin(), ib = b.begin();
    for (; ia != a.end(); ++ia, ++ib) {
      if (std::string d = difference(ia->first, ib->first, path + ".<key>"); !d.empty()) return d;
      if (std::string d = difference(ia->second, ib->second, path + "." + ia->first.Scalar()); !d.empty()) return d;
    }
  }
  return "";
}

TEST(FlowRecordReader, ReadsRandomRecordsAsYamlCppDoes) {
  std::mt19937_64 seeds(123);
  std::size_t accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::mt19937_64 rng(seeds());
    FlowYamlWriter writer;
    write_random_record(writer, rng, 0);
    const std::string line = flow_record_text([&](auto& w) { write_random_record(w, rng, 0); });
    const std::optional<YAML::Node> fast = read_flow_record(line);
    // Everything FlowYamlWriter writes is read; yaml-cpp's escapes (where it gave up) are not.
    ASSERT_EQ(fast.has_value(), writer.supported()) << "record " << i << ": " << line;
    if (!fast) continue;
    ++accepted;
    const std::string d = difference(*fast, YAML::Load(line));
    ASSERT_EQ(d, "") << "record " << i << ": " << line;
  }
  EXPECT_GT(accepted, 10000u);
}

// Lines yaml-cpp reads but FlowYamlWriter would not write: each is refused, and read_flow_record of
// what FlowYamlWriter makes of yaml-cpp's node would accept it (the writer's text is the reference).
TEST(FlowRecordReader, RefusesWhatFlowYamlWriterWouldNotWrite) {
  const std::vector<std::string> lines = {
      "{a: 1} # comment", "{a: 1 # comment\n}", "{a: 'x'}", "{a: \"\\n\"}", "{a: \"\\t\"}", "{a: \"\\x41\"}",
      "{a:\t1}", "{a: caf\xc3\xa9}", "{a: &x 1, b: *x}", "{a: !!str 1}", "{a: !x 1}", "{a: 1, a: 2}", "{a: 1,b: 2}",
      "{a:  1}", "{a: 1 }", "{ a: 1}", "{a: null}", "{a: ~}", "{a: }", "{a}", "{a: \"abc\"}", "{\"a\": 1}",
      "{a: [1,2]}", "{a: 1}\r", "{a: 1}\n", "{a: 1}}", "{a: {b: 1}", "{? a: 1}", "{a: \"x}", "{a: b: c}",
      "[1, 2]", "a: 1", "", "{a: |\n  x}", "{[a]: 1}", "{{a: 1}: 2}", "{a: \"\"\"}", "{a: 1, }", "{a: ,}"};
  for (const std::string& line : lines) EXPECT_FALSE(read_flow_record(line).has_value()) << escaped(line);
  // The strings just inside the rules: plain where yaml-cpp writes them plain, quoted where it quotes.
  for (const std::string line : {"{a: \"null\", b: \"\", c: \"a: b\", d: \"\\\"\\\\\", e: a:b, f: it's, g: -1}",
                                 "{x: [], y: {}, z: [[], {}], w: \" \"}"}) {
    const std::optional<YAML::Node> fast = read_flow_record(line);
    ASSERT_TRUE(fast.has_value()) << line;
    EXPECT_EQ(difference(*fast, YAML::Load(line)), "") << line;
  }
}

// A study whose trials cover the records' forms: floats, integers, choices (quoted ones too),
// failures with reasons, pending trials, levels and costs. `reasons` are the failures' reasons.
Study sample_study(const std::vector<std::string>& reasons) {
  Space space({Parameter::floating("lr", 1e-5, 1.0, Scale::log), Parameter::integer("layers", 1, 8),
               Parameter::categorical("act", {"relu", "a: b", "yes", "#x", "- y", "q\"t", "", "null"}),
               Parameter::floating("x", -3.0, 3.0)});
  Study study(space, make_strategy("ei"), {.direction = Direction::minimize, .seed = 3});
  for (int i = 0; i < 30; ++i) {
    const auto s = study.ask();
    if (!s) break;
    if (i % 7 == 3) study.fail(s->id, reasons[static_cast<std::size_t>(i / 7) % reasons.size()]);
    else if (i < 28) study.tell(s->id, std::get<double>(s->config.at("x")) * 0.37 + std::sin(i));
  }
  return study;
}

void expect_same_trials(const Study& a, const Study& b) {
  ASSERT_EQ(a.trials().size(), b.trials().size());
  for (std::size_t i = 0; i < a.trials().size(); ++i) {
    const Trial &x = a.trials()[i], &y = b.trials()[i];
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.status, y.status);
    EXPECT_TRUE(x.config == y.config);
    EXPECT_TRUE(x.unit == y.unit);
    EXPECT_EQ(x.value, y.value);
    EXPECT_EQ(x.failure_reason, y.failure_reason);
    EXPECT_EQ(x.source, y.source);
  }
}

TEST(FastRecordLoad, ReadsAStudyFileAsYamlCppDoes) {
  const std::string text =
      sample_study({"diverged", "exit status 1: out of memory", "\"quoted\" \\ back", " padded "}).to_yaml_string();
  const std::optional<YAML::Node> fast = parse_with_fast_records(text);
  ASSERT_TRUE(fast.has_value());  // every line as FlowYamlWriter writes it
  EXPECT_EQ(difference(*fast, parse_yaml(text)), "");
  const Study by_fast = Study::from_yaml(*fast), by_yaml_cpp = Study::from_yaml(parse_yaml(text));
  EXPECT_EQ(by_fast.to_yaml_string(), text);
  EXPECT_EQ(by_yaml_cpp.to_yaml_string(), text);
  expect_same_trials(by_fast, by_yaml_cpp);
  expect_same_trials(Study::from_yaml_string(text, "s.yaml"), by_yaml_cpp);
}

TEST(FastRecordLoad, ReadsACampaignStateLayoutAsYamlCppDoes) {
  // The layout of a campaign's state.yaml: runs at the top, the study's trials under `study:`.
  std::mt19937_64 seeds(5);
  std::string text = "kind: tune.campaign\nschema: 1\ncampaign:\n  name: x\nruns:\n";
  for (int i = 0; i < 50; ++i) {
    const std::mt19937_64 rng(seeds());
    FlowYamlWriter w;
    write_random_record(w, rng, 0);
    if (w.supported()) text += "  - " + w.text() + "\n";
  }
  text += "study:\n";
  append_indented(text, sample_study({"diverged"}).to_yaml_string(), 2);
  const std::optional<YAML::Node> fast = parse_with_fast_records(text);
  ASSERT_TRUE(fast.has_value());
  EXPECT_GT((*fast)["runs"].size(), 20u);
  EXPECT_EQ((*fast)["study"]["trials"].size(), 30u);
  EXPECT_EQ(difference(*fast, parse_yaml(text)), "");
}

// Replaces the first occurrence of `from` in `text`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(FastRecordLoad, LeavesUnusualFilesToYamlCpp) {
  const std::string text = sample_study({"diverged", "oom"}).to_yaml_string();
  const std::string trial0 = text.substr(text.find("  - {id: 0,"));
  const std::string line0 = trial0.substr(0, trial0.find('\n'));
  const std::string record0 = line0.substr(4);
  YAML::Node block = YAML::Load(record0);
  block.SetStyle(YAML::EmitterStyle::Block);
  std::string block_item = "  - " + emit_yaml(block);  // over several lines, indented under the dash
  for (std::size_t at = block_item.find('\n'); at != std::string::npos; at = block_item.find('\n', at + 1))
    block_item.insert(at + 1, "    ");
  const std::vector<std::string> variants = {
      replaced(text, line0, line0 + "  # edited"),
      replaced(text, "status: complete", "status: 'complete'"),
      replaced(text, "status: complete", "status: \"compl\\x65te\""),
      replaced(text, "status: complete", "status:\tcomplete"),
      replaced(text, "source: ", "source: &s "),
      replaced(text, line0, block_item),
      replaced(text, line0, line0 + "\n\n"),
      replaced(text, line0, "  -  " + record0),
      text + "# the end\n",
      // A failure reason yaml-cpp writes with escapes: that line is its text, not FlowYamlWriter's.
      sample_study({"caf\xc3\xa9", "line 1\nline 2"}).to_yaml_string(),
  };
  for (const std::string& variant : variants) {
    ASSERT_NE(variant, text);
    EXPECT_FALSE(parse_with_fast_records(variant).has_value()) << variant.substr(variant.find("trials:"), 300);
    const Study loaded = Study::from_yaml_string(variant, "s.yaml");
    expect_same_trials(loaded, Study::from_yaml(parse_yaml(variant)));
  }
  // A comment between the key and its records: the list is not taken for one, and yaml-cpp reads
  // it with the rest of the file.
  const std::string commented = replaced(text, "trials:\n", "trials:\n  # comment\n");
  const std::optional<YAML::Node> fast = parse_with_fast_records(commented);
  ASSERT_TRUE(fast.has_value());
  EXPECT_EQ(difference(*fast, parse_yaml(commented)), "");
}

// A damaged file is refused with yaml-cpp's positions and message, also where every line is one
// the fast reader accepts.
TEST(FastRecordLoad, RefusesADamagedStudyAsYamlCppDoes) {
  const std::string text = sample_study({"diverged"}).to_yaml_string();
  const std::vector<std::string> damaged = {
      replaced(text, "status: complete", "status: done"),
      replaced(text, "{id: 1,", "{id: 7,"),
      replaced(text, "in_model: ", "in_model: 2, x: "),
      replaced(text, "unit: [", "unit: [2, "),
      replaced(text, "status: complete", "status: complete, status: complete"),
      replaced(text, "trials:\n", "trials: [\n"),
  };
  for (const std::string& variant : damaged) {
    std::string expected;
    try {
      (void)Study::from_yaml(parse_yaml(variant));
    } catch (const StateError& e) {
      expected = std::string("s.yaml: ") + e.what() + "; the file was not changed";
    }
    ASSERT_NE(expected, "") << variant;
    EXPECT_NE(expected.find("line "), std::string::npos) << expected;
    try {
      (void)Study::from_yaml_string(variant, "s.yaml");
      ADD_FAILURE() << "loaded: " << expected;
    } catch (const StateError& e) {
      EXPECT_EQ(std::string(e.what()), expected);
    }
  }
}

}  // namespace
}  // namespace tune
