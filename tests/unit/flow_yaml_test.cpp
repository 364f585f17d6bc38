// FlowYamlWriter against yaml-cpp's emitter, byte for byte: the state files must not change with
// the writer that formats them. yaml-cpp is the reference: each case is written by FlowYamlWriter
// and by yaml-cpp (a node in flow style, as the state files' records were emitted before), and
// the texts must be equal wherever FlowYamlWriter claims the case; where it gives up, only for the
// strings it documents (control or non-ASCII bytes, over 1000 bytes), flow_record_text() must
// still give yaml-cpp's text.
#include "tune/io/flow_yaml.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "flow_yaml_random.hpp"
#include "tune/tune.hpp"

namespace tune {
namespace {

using namespace flow_test;

std::string emitted_flow(YAML::Node node) {
  node.SetStyle(YAML::EmitterStyle::Flow);
  return emit_yaml(node);
}

bool documented_give_up(const std::string& s) {
  if (s.size() > 1000) return true;
  for (const char c : s)
    if (c < 0x20 || c > 0x7E) return true;
  return false;
}

// One string as a map's key and value, and as a sequence's item.
void expect_string_as_yaml_cpp_writes_it(const std::string& s, std::size_t& claimed, std::vector<std::string>& wrong) {
  YAML::Node map;
  map[s] = s;
  YAML::Node seq(YAML::NodeType::Sequence);
  seq.push_back(s);
  const std::string expected = emitted_flow(map) + emitted_flow(seq);

  FlowYamlWriter fast;
  fast.begin_map();
  fast.key(s);
  fast.string(s);
  fast.end_map();
  fast.begin_seq();
  fast.string(s);
  fast.end_seq();
  if (fast.supported()) {
    ++claimed;
    if (fast.text() != expected) wrong.push_back(escaped(s) + ": " + fast.text() + " instead of " + expected);
  } else if (!documented_give_up(s)) {
    wrong.push_back(escaped(s) + ": left to yaml-cpp, though it is short printable ASCII");
  }
  const std::string via_fallback = flow_record_text([&](auto& w) {
    w.begin_map();
    w.key(s);
    w.string(s);
    w.end_map();
  });
  if (via_fallback != emitted_flow(map)) wrong.push_back(escaped(s) + ": flow_record_text gave " + via_fallback);
}

std::string report(const std::vector<std::string>& wrong) {
  std::string out = std::to_string(wrong.size()) + " strings differ, e.g.:\n";
  for (std::size_t i = 0; i < std::min<std::size_t>(wrong.size(), 20); ++i) out += "  " + wrong[i] + "\n";
  return out;
}

TEST(FlowYamlWriter, WritesEveryShortPrintableStringAsYamlCppDoes) {
  // Exhaustive up to two characters: every first and last character, and every pair.
  std::vector<std::string> wrong;
  std::size_t claimed = 0;
  expect_string_as_yaml_cpp_writes_it("", claimed, wrong);
  for (int a = 0x20; a <= 0x7E; ++a) {
    expect_string_as_yaml_cpp_writes_it(std::string(1, static_cast<char>(a)), claimed, wrong);
    for (int b = 0x20; b <= 0x7E; ++b)
      expect_string_as_yaml_cpp_writes_it(std::string{static_cast<char>(a), static_cast<char>(b)}, claimed, wrong);
  }
  EXPECT_TRUE(wrong.empty()) << report(wrong);
  EXPECT_EQ(claimed, 1u + 95u + 95u * 95u);
}

TEST(FlowYamlWriter, WritesRandomStringsAsYamlCppDoes) {
  std::mt19937_64 rng(20240611);
  std::vector<std::string> wrong;
  std::size_t claimed = 0, quoted = 0;
  constexpr std::size_t kCases = 200000;
  for (std::size_t i = 0; i < kCases; ++i) {
    const std::string s = random_string(rng);
    expect_string_as_yaml_cpp_writes_it(s, claimed, wrong);
    quoted += flow_scalar_form(s) == FlowScalarForm::double_quoted;
  }
  EXPECT_TRUE(wrong.empty()) << report(wrong);
  // The fast path is what is tested: most strings are claimed, and many of those quoted.
  EXPECT_GT(claimed, kCases / 2);
  EXPECT_GT(quoted, kCases / 10);
}

TEST(FlowYamlWriter, LeavesLongStringsToYamlCpp) {
  const std::string long_key(1500, 'k');
  std::size_t claimed = 0;
  std::vector<std::string> wrong;
  expect_string_as_yaml_cpp_writes_it(long_key, claimed, wrong);
  expect_string_as_yaml_cpp_writes_it(std::string(1000, 'v'), claimed, wrong);
  EXPECT_TRUE(wrong.empty()) << report(wrong);
  EXPECT_EQ(claimed, 1u);
}

std::vector<double> interesting_doubles(std::mt19937_64& rng, std::size_t random_count) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0,
                           -0.0,
                           1.0,
                           -1.0,
                           0.1,
                           1e-3,
                           123456789.0,
                           9007199254740993.0,
                           1e21,
                           1e22,
                           1e300,
                           -1e-300,
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::denorm_min(),
                           -std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::lowest(),
                           std::numeric_limits<double>::epsilon(),
                           inf,
                           -inf,
                           std::numeric_limits<double>::quiet_NaN(),
                           -std::numeric_limits<double>::quiet_NaN()};
  std::uniform_int_distribution<std::int64_t> whole(-1000000, 1000000);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (std::size_t i = 0; i < random_count; ++i) {
    v.push_back(std::bit_cast<double>(rng()));  // any bit pattern: NaNs, infinities, subnormals too
    v.push_back(static_cast<double>(whole(rng)));
    v.push_back(unit(rng));
    v.push_back(std::ldexp(unit(rng), static_cast<int>(whole(rng) % 1100)));
  }
  return v;
}

TEST(FlowYamlWriter, WritesNumbersAndBooleansAsYamlCppDoes) {
  std::mt19937_64 rng(7);
  for (const double x : interesting_doubles(rng, 20000)) {
    FlowYamlWriter fast;
    fast.begin_seq();
    fast.number(x);
    fast.end_seq();
    YAML::Node seq(YAML::NodeType::Sequence);
    seq.push_back(yaml_double(x));
    ASSERT_TRUE(fast.supported()) << format_double(x);
    ASSERT_EQ(fast.text(), emitted_flow(seq)) << format_double(x);
  }
  const auto expect_integer = [](auto n) {
    FlowYamlWriter fast;
    fast.begin_seq();
    fast.integer(n);
    fast.end_seq();
    YAML::Node seq(YAML::NodeType::Sequence);
    seq.push_back(n);  // as the records' integers were put into nodes
    EXPECT_EQ(fast.text(), emitted_flow(seq)) << n;
  };
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{-1}, std::numeric_limits<std::int64_t>::min(),
                         std::numeric_limits<std::int64_t>::max()})
    expect_integer(n);
  expect_integer(std::numeric_limits<std::uint64_t>::max());
  expect_integer(std::size_t{2000});
  expect_integer(-15);  // int: an exit code or a signal
  for (std::size_t i = 0; i < 10000; ++i) {
    expect_integer(static_cast<std::int64_t>(rng()));
    expect_integer(rng());
    expect_integer(static_cast<int>(rng()));
  }
  for (const bool b : {true, false}) {
    FlowYamlWriter fast;
    fast.begin_seq();
    fast.boolean(b);
    fast.end_seq();
    YAML::Node seq(YAML::NodeType::Sequence);
    seq.push_back(b);
    EXPECT_EQ(fast.text(), emitted_flow(seq));
  }
}

TEST(FlowYamlWriter, WritesNestedRecordsAsYamlCppDoes) {
  std::mt19937_64 seeds(99);
  std::size_t claimed = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::mt19937_64 rng(seeds());
    FlowYamlWriter fast;
    write_random_record(fast, rng, 0);
    YamlNodeWriter slow;
    write_random_record(slow, rng, 0);
    const std::string expected = emitted_flow(slow.node());
    if (fast.supported()) {
      ++claimed;
      ASSERT_EQ(fast.text(), expected) << "record " << i;
    }
    ASSERT_EQ(flow_record_text([&](auto& w) { write_random_record(w, rng, 0); }), expected) << "record " << i;
  }
  EXPECT_GT(claimed, 10000u);
}

// What the state files held before FlowYamlWriter: the header, then each trial's node (to_yaml())
// emitted in flow style on its own line.
std::string text_through_yaml_cpp(const Study& study) {
  YAML::Node root = study.to_yaml();
  const YAML::Node trials = root["trials"];
  root.remove("trials");
  std::string out;
  append_indented(out, emit_yaml(root), 0);
  if (trials.size() == 0) return out + "trials: []\n";
  out += "trials:\n";
  for (const YAML::Node& t : trials) out += "  - " + emitted_flow(YAML::Clone(t)) + "\n";
  return out;
}

TEST(FlowYamlWriter, SavesAStudyAsYamlCppWould) {
  // Choices and failure reasons that plain, quoted, escaped and non-ASCII text all appear.
  Space space({Parameter::floating("lr", 1e-5, 1.0, Scale::log), Parameter::integer("layers", 1, 8),
               Parameter::categorical("act", {"relu", "a: b", "yes", "#x", "- y", "na\xc3\xafve", "q\"t", ""}),
               Parameter::floating("x", -3.0, 3.0)});
  Study study(space, make_strategy("ei"), {.direction = Direction::minimize, .seed = 3});
  const std::vector<std::string> reasons = {"diverged", "exit status 1: out of memory", "line 1\nline 2",
                                            "\"quoted\" \\ back", "caf\xc3\xa9", " padded "};
  for (int i = 0; i < 40; ++i) {
    const auto s = study.ask();
    ASSERT_TRUE(s);
    if (i % 7 == 3) study.fail(s->id, reasons[static_cast<std::size_t>(i / 7) % reasons.size()]);
    else if (i < 38) study.tell(s->id, std::get<double>(s->config.at("x")) * 0.37 + std::sin(i));
    // the last two stay pending
  }
  const std::string saved = study.to_yaml_string();
  EXPECT_EQ(saved, text_through_yaml_cpp(study));
  EXPECT_NE(saved.find("\"a: b\""), std::string::npos);  // the quoted choices made it into the file
  // Loaded, the study writes the same text again (the first save after a load formats every trial).
  EXPECT_EQ(Study::from_yaml_string(saved, "study.yaml").to_yaml_string(), saved);
}

}  // namespace
}  // namespace tune
