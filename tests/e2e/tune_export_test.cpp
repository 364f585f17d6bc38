// `tune export`: a real campaign's trials as CSV and JSON Lines, read back by an independent
// RFC 4180 reader (and yaml-cpp for JSON) and compared with what state.yaml records.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// RFC 4180 records: fields split at commas outside quotes, "" inside quotes is one quote, CRLF ends
// a record (a line break inside quotes is part of the field).
std::vector<std::vector<std::string>> read_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    std::string& field = rows.back().back();
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.emplace_back(1);
      ++i;
    } else {
      field += c;
    }
  }
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();  // after the last CRLF
  return rows;
}

// A trainer with a categorical choice whose names need CSV quoting, an extra metric, intermediate
// values on the first trials, and a failure for one choice.
const char* kTrainer = R"(#!/bin/sh
x=$1; act=$2
if [ "$act" = crash ]; then echo "oom, at \"step\" 3" >&2; exit 3; fi
echo '{"loss": 9, "step": 1}'
awk -v x="$x" 'BEGIN { printf "loss=%.17g acc=%.17g\n", (x - 0.3) ^ 2, 1 - x / 10 }'
)";

const char* kCampaign = R"(name: ex
command: ["./trainer.sh", "{x}", "{act}"]
space:
  x: {type: float, low: 0, high: 1}
  act: {type: categorical, choices: ["a,b", "q\"t", crash]}
objective: {name: loss, direction: minimize}
budget: {trials: 9, failures: 9}
seed: 3
)";

TEST(TuneExport, CsvAndJsonLinesHoldEveryTrialAsStateYamlRecordsIt) {
  const fs::path d = fresh_dir("export");
  write_script(d, "trainer.sh", kTrainer);
  write(d / "c.yaml", kCampaign);
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const YAML::Node state = state_of(d / "ex");
  const YAML::Node trials = state["study"]["trials"];
  const YAML::Node runs = state["runs"];
  ASSERT_EQ(trials.size(), 9u);

  const Result csv = tune(d, {"export", "ex"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  const auto rows = read_csv(csv.out);
  ASSERT_EQ(rows.size(), 10u) << csv.out;
  const std::vector<std::string> header{"id", "status", "value", "started_at", "finished_at", "duration", "attempts",
                                        "source", "external", "failure", "param.x", "param.act", "metric.acc"};
  EXPECT_EQ(rows[0], header);
  std::map<std::string, std::size_t> at;
  for (std::size_t c = 0; c < header.size(); ++c) at[header[c]] = c;
  int failed = 0, quoted_choices = 0;
  for (std::size_t i = 0; i < 9; ++i) {
    const std::vector<std::string>& row = rows[i + 1];
    ASSERT_EQ(row.size(), header.size()) << "row " << i;
    const YAML::Node t = trials[i];
    const YAML::Node r = runs[i];
    EXPECT_EQ(row[at["id"]], std::to_string(i));
    EXPECT_EQ(row[at["status"]], r["status"].as<std::string>());
    EXPECT_EQ(row[at["attempts"]], r["attempts"].as<std::string>());
    EXPECT_EQ(std::stod(row[at["param.x"]]), t["config"]["x"].as<double>());
    const std::string act = t["config"]["act"].as<std::string>();
    EXPECT_EQ(row[at["param.act"]], act);
    quoted_choices += act != "crash";
    EXPECT_EQ(row[at["external"]], "false");
    EXPECT_EQ(row[at["started_at"]].size(), 24u) << row[at["started_at"]];  // 2026-11-23T22:41:07.123Z
    EXPECT_LE(row[at["started_at"]], row[at["finished_at"]]);
    EXPECT_GE(std::stod(row[at["duration"]]), 0.0);
    if (act == "crash") {
      ++failed;
      EXPECT_EQ(row[at["status"]], "failed");
      EXPECT_EQ(row[at["value"]], "");
      EXPECT_EQ(row[at["metric.acc"]], "");
      EXPECT_EQ(row[at["failure"]], r["failure_reason"].as<std::string>());
      EXPECT_NE(row[at["failure"]].find("oom, at \"step\" 3"), std::string::npos) << row[at["failure"]];
    } else {
      const double x = t["config"]["x"].as<double>();
      EXPECT_EQ(std::stod(row[at["value"]]), t["value"].as<double>());
      EXPECT_NEAR(std::stod(row[at["value"]]), (x - 0.3) * (x - 0.3), 1e-15);
      EXPECT_NEAR(std::stod(row[at["metric.acc"]]), 1 - x / 10, 1e-15);
      EXPECT_EQ(row[at["failure"]], "");
    }
  }
  EXPECT_GT(failed, 0);  // the seed's nine trials include each kind
  EXPECT_GT(quoted_choices, 0);

  // JSON Lines: the same trials, parameters under config, the intermediate value under intermediate.
  const Result jsonl = tune(d, {"export", "ex", "--format", "jsonl"});
  ASSERT_EQ(jsonl.code, 0) << jsonl.err;
  std::istringstream lines(jsonl.out);
  std::size_t i = 0;
  for (std::string line; std::getline(lines, line); ++i) {
    const YAML::Node o = YAML::Load(line);
    ASSERT_LT(i, 9u);
    EXPECT_EQ(o["id"].as<std::size_t>(), i);
    EXPECT_EQ(o["config"]["act"].as<std::string>(), trials[i]["config"]["act"].as<std::string>());
    EXPECT_EQ(o["config"]["x"].as<double>(), trials[i]["config"]["x"].as<double>());
    if (o["status"].as<std::string>() == "complete") {
      EXPECT_EQ(o["value"].as<double>(), trials[i]["value"].as<double>());
      ASSERT_EQ(o["intermediate"].size(), 1u) << line;
      EXPECT_EQ(o["intermediate"][0]["step"].as<int>(), 1);
      EXPECT_EQ(o["intermediate"][0]["value"].as<double>(), 9.0);
    } else {
      EXPECT_TRUE(o["value"].IsNull()) << line;
      EXPECT_EQ(o["failure"].as<std::string>(), runs[i]["failure_reason"].as<std::string>());
    }
  }
  EXPECT_EQ(i, 9u);

  // --output writes the same bytes to a file; nothing on stdout.
  const Result to_file = tune(d, {"export", "ex", "-o", "trials.csv"});
  ASSERT_EQ(to_file.code, 0) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  EXPECT_EQ(slurp(d / "trials.csv"), csv.out);
}

TEST(TuneExport, CampaignWithAResolutionExportsLevelValueAndCost) {
  const fs::path d = fresh_dir("export-res");
  write(d / "c.yaml", "name: mr\n"
                      "space:\n  x: {type: float, low: 0, high: 1}\n"
                      "objective: {name: loss, direction: minimize}\n"
                      "strategy: cmets\n"
                      "resolution: {param: epochs, levels: [1, 3, 9], cost: [1, 3, 9]}\n"
                      "budget: {cost: 60}\n");
  // Trials handed out and told from outside: level, resolution value and declared cost per trial.
  for (int k = 0; k < 4; ++k) {
    const Result a = tune(d, {"ask", k == 0 ? "c.yaml" : "mr"});
    ASSERT_EQ(a.code, 0) << a.err;
    const YAML::Node asked = YAML::Load(a.out);
    ASSERT_EQ(tune(d, {"tell", "mr", asked["trial"].as<std::string>(), std::to_string(0.5 + k)}).code, 0);
  }
  const Result pending = tune(d, {"ask", "mr"});  // one handed out, not told: no cost, no finish
  ASSERT_EQ(pending.code, 0) << pending.err;
  const YAML::Node state = state_of(d / "mr");
  const Result csv = tune(d, {"export", "mr"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  const auto rows = read_csv(csv.out);
  ASSERT_EQ(rows.size(), 6u) << csv.out;
  const std::vector<std::string> header{"id", "status", "value", "level", "resolution.epochs", "cost", "started_at",
                                        "finished_at", "duration", "attempts", "source", "external", "failure",
                                        "param.x"};
  ASSERT_EQ(rows[0], header);
  const std::vector<double> epochs{1, 3, 9};
  for (std::size_t i = 0; i < 5; ++i) {
    const YAML::Node t = state["study"]["trials"][i];
    const std::size_t level = t["level"].as<std::size_t>();
    EXPECT_EQ(rows[i + 1][3], std::to_string(level));
    EXPECT_EQ(std::stod(rows[i + 1][4]), epochs[level]);
    EXPECT_EQ(rows[i + 1][11], "true");
    if (i < 4) {
      EXPECT_EQ(std::stod(rows[i + 1][5]), epochs[level]);  // the declared cost of its level
      EXPECT_EQ(std::stod(rows[i + 1][2]), 0.5 + static_cast<double>(i));
    } else {
      EXPECT_EQ(rows[i + 1][1], "running");
      EXPECT_EQ(rows[i + 1][5], "");
      EXPECT_EQ(rows[i + 1][7], "");
    }
  }
}

TEST(TuneExport, BadRequestsExitTwoAndWriteNothing) {
  const fs::path d = fresh_dir("export-bad");
  const Result none = tune(d, {"export", "nothing-here", "-o", "t.csv"});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("tune export: nothing-here does not exist"), std::string::npos) << none.err;
  EXPECT_FALSE(fs::exists(d / "t.csv"));
  write(d / "c.yaml", quadratic_campaign_with("q", 2, "{workers: 1}"));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const Result format = tune(d, {"export", "q", "--format", "xlsx", "-o", "t.csv"});
  EXPECT_EQ(format.code, 2);
  EXPECT_EQ(format.err, "tune export: unknown --format 'xlsx'; use csv or jsonl\n");
  EXPECT_FALSE(fs::exists(d / "t.csv"));
}

// A trainer that logs every step: the run record keeps 1000 of its intermediate values, evenly
// spaced with the first and the last (50,000 steps a trial made state.yaml 48 MB for 30 trials).
TEST(TuneExport, ATrainerLoggingEveryStepKeepsAThousandEvenlySpacedIntermediateValues) {
  const fs::path d = fresh_dir("export-steps");
  write(d / "steps.sh", "#!/bin/sh\nawk 'BEGIN { for (i = 1; i <= 2500; i++) printf \"step=%d loss=%d\\n\", i, 3 * i; "
                        "print \"loss=0.5\" }'\n");
  fs::permissions(d / "steps.sh", fs::perms::owner_all);
  write(d / "c.yaml", "name: st\ncommand: [./steps.sh, \"{x}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\n"
                      "objective: {name: loss}\nbudget: {trials: 2}\n");
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const YAML::Node iv = state_of(d / "st")["runs"][0]["intermediate"];
  ASSERT_EQ(iv.size(), 1000u);
  EXPECT_EQ(iv[0][0].as<int>(), 1);
  EXPECT_EQ(iv[999][0].as<int>(), 2500);
  for (std::size_t k = 1; k < 1000; ++k) {
    const int step = iv[k][0].as<int>(), before = iv[k - 1][0].as<int>();
    EXPECT_TRUE(step - before == 2 || step - before == 3) << k << ": " << before << " -> " << step;  // 2499 / 999
    EXPECT_EQ(iv[k][1].as<int>(), 3 * step);
  }
  const Result jsonl = tune(d, {"export", "st", "--format", "jsonl"});
  ASSERT_EQ(jsonl.code, 0) << jsonl.err;
  const YAML::Node first = YAML::Load(jsonl.out.substr(0, jsonl.out.find('\n')));
  EXPECT_EQ(first["intermediate"].size(), 1000u);
  EXPECT_EQ(first["value"].as<double>(), 0.5);
}

}  // namespace
