// Small defects of the command line and the campaign file, each found by using the `tune` program as
// a user would: the message a user reads, a slip the program must not take silently, a file it must
// not overwrite.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// yaml-cpp reads YAML 1.1's merge key `<<` as a key like any other, so `y` below lacked `type` and was
// refused for that ("field 'type' ... missing (required)"), which sent the user looking in the wrong place.
TEST(TunePolish, AMergeKeyIsRefusedAtItsLineAsUnsupported) {
  const fs::path d = fresh_dir("polish-merge");
  write(d / "c.yaml", "name: m\nspace:\n  x: &d {type: float, low: 0, high: 1}\n  y: {<<: *d, high: 2}\n");
  const Result r = tune(d, {"ask", "c.yaml"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("c.yaml: field 'space.y.<<' at line 4, column 7: merge keys ('<<') are not supported; "
                       "repeat the fields"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(d / "m"));
  // A quoted '<<' is an ordinary (here unknown) key.
  write(d / "q.yaml", "name: m\nspace:\n  x: {type: float, low: 0, high: 1, '<<': 1}\n");
  const Result quoted = tune(d, {"ask", "q.yaml"});
  EXPECT_EQ(quoted.code, 1);
  EXPECT_NE(quoted.err.find("field 'space.x.<<' at line 3, column 37: unknown key"), std::string::npos) << quoted.err;
}

// `lo:` for `low:` was reported as "field 'low' ... missing (required)": the key the user wrote went
// unnamed, and the field lacked its path.
TEST(TunePolish, AMisspeltKeyOfAParameterIsNamedWithItsPath) {
  const fs::path d = fresh_dir("polish-misspelt");
  struct Case {
    std::string parameter, fragment;
  };
  const std::vector<Case> cases{
      {"{type: float, lo: 0, high: 1}", "field 'space.x.lo' at line 3, column 20: unknown key; expected one of: "
                                        "high, log, low, type"},
      {"{tpye: float, low: 0, high: 1}", "field 'space.x.tpye' at line 3, column 7: unknown key"},
      {"{type: float, high: 1}", "field 'space.x.low' at line 3, column 6: missing (required)"},
      {"{type: categorical, choices: [a], low: 0}", "field 'space.x.low' at line 3, column 40: unknown key; "
                                                     "expected one of: choices, type"},
      {"{type: int, low: 0, high: one}", "field 'space.x.high' at line 3, column 32: expected a number"},
  };
  for (const Case& c : cases) {
    write(d / "c.yaml", "name: s\nspace:\n  x: " + c.parameter + "\n");
    const Result r = tune(d, {"ask", "c.yaml"});
    EXPECT_EQ(r.code, 1) << c.parameter;
    EXPECT_NE(r.err.find("c.yaml: " + c.fragment), std::string::npos) << c.parameter << "\n" << r.err;
  }
}

}  // namespace
