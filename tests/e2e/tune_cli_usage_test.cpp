// End-to-end tests of the `tune` program as a new user meets it (dogfooding): real subprocesses,
// real trainers, real files.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// The inline form's objective is `objective` unless --objective says otherwise. A trainer that
// prints `loss=...` then reports no objective; its trials' failure reason names what it reported
// and the fix, not "expected a line 'objective=<value>'" as if it had printed nothing.
TEST(TuneCliUsage, ATrialReportingAnotherMetricThanTheObjectiveSaysWhichAndHowToNameIt) {
  const fs::path d = fresh_dir("usage-other-metric");
  const Result r = tune(d, {"run", "--name", "other", "--trials", "2", "--quiet", "--",
                            (kTrainers / "quadratic.sh").string(), "--x~uniform(-1,1)", "--y~uniform(-3,1)"});
  ASSERT_EQ(r.code, 0) << r.err;  // the trial budget is spent; every trial failed
  const YAML::Node trials = state_of(d / "other")["study"]["trials"];
  ASSERT_EQ(trials.size(), 2u);
  for (const YAML::Node& t : trials) {
    ASSERT_EQ(t["status"].as<std::string>(), "failed");
    const std::string reason = t["failure_reason"].as<std::string>();
    EXPECT_NE(reason.find("the trial reported loss="), std::string::npos) << reason;
    EXPECT_NE(reason.find("but not the objective 'objective'"), std::string::npos) << reason;
    EXPECT_NE(reason.find("--objective loss"), std::string::npos) << reason;
    EXPECT_NE(reason.find("objective: {name: loss}"), std::string::npos) << reason;
  }
  // tune status shows the same reason.
  const Result st = tune(d, {"status", "other"});
  ASSERT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("the trial reported loss="), std::string::npos) << st.out;
}

}  // namespace
