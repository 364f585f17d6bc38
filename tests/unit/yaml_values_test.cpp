// The shared YAML reading helpers: a key given twice in one map is refused with both positions, and
// keys outside a known set are refused with theirs.
#include <gtest/gtest.h>

#include <string>

#include "tune/io/yaml_values.hpp"

namespace {

std::string parse_error(const std::string& text) {
  try {
    tune::parse_yaml(text);
  } catch (const tune::StateError& e) {
    return e.what();
  }
  return "";
}

TEST(YamlDuplicateKeys, AreRefusedNamingTheFieldAndBothLines) {
  // yaml-cpp keeps both pairs: a lookup sees the first, an iteration both.
  const std::string top = parse_error("seed: 1\nname: x\nseed: 2\n");
  EXPECT_NE(top.find("field 'seed' at line 3, column 1"), std::string::npos) << top;
  EXPECT_NE(top.find("also at line 1, column 1"), std::string::npos) << top;
  EXPECT_NE(top.find("remove one"), std::string::npos) << top;

  const std::string nested = parse_error("strategy:\n  name: ei\n  options:\n    epsilon: 0\n    beta: 1\n    epsilon: 0.1\n");
  EXPECT_NE(nested.find("field 'strategy.options.epsilon' at line 6, column 5"), std::string::npos) << nested;
  EXPECT_NE(nested.find("also at line 4, column 5"), std::string::npos) << nested;

  // In a flow map inside a list, as state.yaml writes its trials; the second item is the damaged one.
  const std::string in_list = parse_error("trials:\n  - {id: 0, value: 1}\n  - {id: 1, value: 2, value: 3}\n");
  EXPECT_NE(in_list.find("field 'trials[1].value' at line 3, column 23"), std::string::npos) << in_list;
  EXPECT_NE(in_list.find("also at line 3, column 13"), std::string::npos) << in_list;

  // A quoted key is the same key.
  EXPECT_NE(parse_error("a: 1\n\"a\": 2\n").find("duplicate key"), std::string::npos);
}

TEST(YamlDuplicateKeys, TheSameKeyInDifferentMapsOrThroughAliasesIsNoDuplicate) {
  EXPECT_EQ(parse_error("a: {x: 1, y: 2}\nb: {x: 1, y: 2}\nlist:\n  - {id: 0}\n  - {id: 1}\n"), "");
  // One map reached twice through aliases is checked once, and is no duplicate of itself.
  EXPECT_EQ(parse_error("a: &shared {x: 1}\nb: *shared\nc: [*shared, *shared]\n"), "");
  // ... but its own duplicate is found.
  EXPECT_NE(parse_error("a: &shared {x: 1, x: 2}\nb: *shared\n").find("'a.x'"), std::string::npos);
  // A list that contains itself does not loop.
  EXPECT_EQ(parse_error("&self [*self, {k: 1}]\n"), "");
  // Scalars and empty documents have no keys.
  EXPECT_EQ(parse_error("42\n"), "");
  EXPECT_EQ(parse_error(""), "");
}

TEST(YamlKnownKeys, AnUnknownKeyIsRefusedWithItsPositionAndTheKnownOnes) {
  const YAML::Node node = tune::parse_yaml("outer:\n  name: x\n  colour: red\n");
  EXPECT_NO_THROW(tune::check_known_keys(node["outer"], "outer", {"name", "colour"}));
  try {
    tune::check_known_keys(node["outer"], "outer", {"name", "size"});
    FAIL() << "an unknown key was accepted";
  } catch (const tune::StateError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("field 'outer.colour' at line 3, column 3"), std::string::npos) << what;
    EXPECT_NE(what.find("expected one of: name, size"), std::string::npos) << what;
  }
  EXPECT_THROW(tune::check_known_keys(node["outer"]["name"], "outer.name", {"a"}), tune::StateError);  // not a map
}

}  // namespace
