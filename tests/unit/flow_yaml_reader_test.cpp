// read_flow_record and parse_with_fast_records against yaml-cpp: for every line the fast reader
// accepts, its node must be yaml-cpp's (type, scalar text, tag, style, key order); every other line
// (and so the file) is left to yaml-cpp, and a study loads the same either way, refusals included.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>
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

// Every field of two trials, the doubles bit for bit (test_statistic and acquisition may be NaN).
void expect_identical_trials(const Study& a, const Study& b, const std::string& what) {
  ASSERT_EQ(a.trials().size(), b.trials().size()) << what;
  const auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
  for (std::size_t i = 0; i < a.trials().size(); ++i) {
    const Trial &x = a.trials()[i], &y = b.trials()[i];
    const std::string at = what + ", trial " + std::to_string(i);
    EXPECT_EQ(x.id, y.id) << at;
    EXPECT_EQ(x.status, y.status) << at;
    EXPECT_TRUE(x.config == y.config) << at;
    ASSERT_EQ(x.unit.size(), y.unit.size()) << at;
    for (Eigen::Index k = 0; k < x.unit.size(); ++k) EXPECT_EQ(bits(x.unit(k)), bits(y.unit(k))) << at;
    ASSERT_EQ(x.value.has_value(), y.value.has_value()) << at;
    if (x.value) {
      EXPECT_EQ(bits(*x.value), bits(*y.value)) << at;
    }
    EXPECT_EQ(x.failure_reason, y.failure_reason) << at;
    EXPECT_EQ(x.source, y.source) << at;
    EXPECT_EQ(x.in_model, y.in_model) << at;
    EXPECT_EQ(bits(x.test_statistic), bits(y.test_statistic)) << at;
    EXPECT_EQ(x.model_size, y.model_size) << at;
    EXPECT_EQ(bits(x.acquisition), bits(y.acquisition)) << at;
    EXPECT_EQ(x.level, y.level) << at;
    ASSERT_EQ(x.cost.has_value(), y.cost.has_value()) << at;
    if (x.cost) {
      EXPECT_EQ(bits(*x.cost), bits(*y.cost)) << at;
    }
  }
}

// A random study: every kind of parameter, values of every magnitude, failures with random reasons
// (with `any_bytes`, some that yaml-cpp writes with escapes), pending trials, and with `levels` a
// resolution whose trials carry a level and a measured cost.
Study random_study(std::mt19937_64& rng, bool levels, bool any_bytes = false) {
  Space space({Parameter::floating("lr", 1e-5, 1.0, Scale::log), Parameter::integer("layers", 1, 8),
               Parameter::integer("batch", 1, 4096, Scale::log),
               Parameter::categorical("act", {"relu", "a: b", "yes", "#x", "- y", "q\"t", "", "null", "\\"}),
               Parameter::ordinal("size", {"s", "m", "l", "1e3"}), Parameter::floating("x", -3.0, 3.0)});
  StudyOptions options{.direction = Direction::minimize, .seed = rng()};
  if (levels) options.resolution = Resolution{.parameter = "epochs", .values = {1, 3, 27}, .costs = {}};
  Study study(space, make_strategy(rng() % 2 ? "random" : "sobol"), options);
  std::uniform_real_distribution<double> unit(0, 1);
  std::uniform_int_distribution<int> exponent(-300, 300);
  for (int i = 0; i < 60; ++i) {
    const auto s = study.ask();
    if (!s) break;
    const std::optional<double> cost = levels ? std::optional<double>(unit(rng) * 100) : std::nullopt;
    const double u = unit(rng);
    std::string reason = random_string(rng);
    while (!any_bytes && flow_scalar_form(reason) == FlowScalarForm::unsupported) reason = random_string(rng);
    if (u < 0.2) study.fail(s->id, reason, cost);
    else if (u < 0.9) study.tell(s->id, (unit(rng) - 0.5) * std::pow(10.0, exponent(rng) / 30), cost);
    // else: left pending
  }
  return study;
}

// The fast load reads each trial line straight into a Trial: for random studies, the trials (every
// field, bit for bit) and the text saved again are those of yaml-cpp's reading, and the fast path
// takes every file FlowYamlWriter wrote in full (a line yaml-cpp wrote is refused, and the load
// falls back).
TEST(FastRecordLoad, RandomStudiesLoadToTheSameTrialsAsThroughYamlCpp) {
  std::mt19937_64 rng(2024);
  std::size_t fast_loads = 0;
  for (int round = 0; round < 40; ++round) {
    const Study study = random_study(rng, round % 2 == 1, round % 4 == 3);
    const std::string text = study.to_yaml_string();
    const std::string what = "round " + std::to_string(round);
    const Study by_yaml_cpp = Study::from_yaml(parse_yaml(text));
    const std::optional<FastDocument> document = split_record_lists(text);
    ASSERT_TRUE(document.has_value()) << what;
    const std::vector<std::string_view>* lines = record_lines(&document->records, "trials");
    ASSERT_NE(lines, nullptr) << what;
    bool all_flow = true;
    for (const Trial& t : study.trials()) all_flow = all_flow && flow_scalar_form(t.failure_reason) != FlowScalarForm::unsupported;
    if (all_flow) {
      const Study by_lines = Study::from_yaml(document->root, lines);
      expect_identical_trials(by_lines, by_yaml_cpp, what);
      EXPECT_EQ(by_lines.to_yaml_string(), text) << what;
      ++fast_loads;
    } else {
      EXPECT_THROW((void)Study::from_yaml(document->root, lines), StateError) << what;
    }
    const Study loaded = Study::from_yaml_string(text, "s.yaml");  // either way
    expect_identical_trials(loaded, by_yaml_cpp, what);
    EXPECT_EQ(loaded.to_yaml_string(), text) << what;
  }
  EXPECT_GT(fast_loads, 10u);
}

// The outcome of loading `text`: the trials saved again, or the refusal's message.
std::string load_outcome(const std::function<Study()>& load) {
  try {
    return "loaded:\n" + load().to_yaml_string();
  } catch (const StateError& e) {
    return std::string("refused: ") + e.what();
  }
}

// Random damage to a trial line (a token replaced, inserted or removed) loads as through yaml-cpp
// alone: the same trials, or the same refusal with yaml-cpp's position, field and fix.
TEST(FastRecordLoad, DamagedTrialLinesLoadOrAreRefusedAsThroughYamlCpp) {
  std::mt19937_64 rng(77);
  const std::vector<std::string> tokens = {"x", "-1", "0", "1", "2", "1e400", "-0", ".nan", ".inf", "0.5", "\"",
                                           ", ", ": ", "{", "}", "[", "]", "null", "true", "false", "complete",
                                           "failed", "pending", "\"a\"", "id", "value", "level", "cost", "9",
                                           "18446744073709551616", " ", "relu", "\"1\"", "in_model", "unit"};
  std::size_t refused = 0, loaded = 0;
  for (int round = 0; round < 300; ++round) {
    std::mt19937_64 study_rng(static_cast<std::uint64_t>(round / 30));
    std::string text = random_study(study_rng, round % 3 == 0).to_yaml_string();
    // A trial line, and a place in it at a token's edge.
    std::vector<std::size_t> starts;
    for (std::size_t at = text.find("\n  - {"); at != std::string::npos; at = text.find("\n  - {", at + 1)) starts.push_back(at + 5);
    const std::size_t line = starts[rng() % starts.size()];
    damage_record_line(text, line, tokens, rng);
    const std::string expected = load_outcome([&] {
      try {
        return Study::from_yaml(parse_yaml(text));
      } catch (const StateError& e) {
        throw StateError(std::string("s.yaml: ") + e.what() + "; the file was not changed");
      }
    });
    const std::string actual = load_outcome([&] { return Study::from_yaml_string(text, "s.yaml"); });
    ASSERT_EQ(actual, expected) << "round " << round << ": " << text.substr(line, text.find('\n', line) - line);
    (expected.starts_with("refused") ? refused : loaded) += 1;
  }
  EXPECT_GT(refused, 100u);
  EXPECT_GT(loaded, 50u);
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
