// parse_trial_output: each protocol form (key=value, JSON line, SMAC's two forms, result file), the
// objective name option, which value wins, intermediate values, failing statuses, non-finite values,
// and garbage that must be ignored without throwing.
#include "tune/adapters/protocol/trial_report.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using tune::adapters::IntermediateValue;
using tune::adapters::parse_trial_output;
using tune::adapters::ProtocolOptions;
using tune::adapters::TrialReport;

TrialReport parse(const std::string& out, const std::string& file = "",
                  const ProtocolOptions& options = {}) {
  return parse_trial_output(out, file, options);
}

ProtocolOptions named(const std::string& name) {
  ProtocolOptions options;
  options.objective_name = name;
  return options;
}

std::vector<std::pair<std::int64_t, double>> steps(const TrialReport& r) {
  std::vector<std::pair<std::int64_t, double>> out;
  for (const IntermediateValue& v : r.intermediate) out.emplace_back(v.step, v.value);
  return out;
}

using Steps = std::vector<std::pair<std::int64_t, double>>;

// The result file's error message, or "" if it did not throw std::invalid_argument.
std::string file_error(const std::string& file) {
  try {
    parse("objective=0.5\n", file);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// ---------------------------------------------------------------- key=value

TEST(TrialReport, KeyValueLine) {
  const TrialReport r = parse("epoch 1 done\nobjective=0.93\n");
  ASSERT_TRUE(r.objective.has_value());
  EXPECT_DOUBLE_EQ(*r.objective, 0.93);
  EXPECT_TRUE(r.intermediate.empty());
  EXPECT_TRUE(r.metrics.empty());
  EXPECT_FALSE(r.failure.has_value());
}

TEST(TrialReport, KeyValueSpacingCarriageReturnAndSigns) {
  EXPECT_EQ(parse("  objective =\t0.25  \n").objective, 0.25);
  EXPECT_EQ(parse("objective=0.5\r\n").objective, 0.5);
  EXPECT_EQ(parse("objective=-1.5e-3\n").objective, -1.5e-3);
  EXPECT_EQ(parse("objective=+2\n").objective, 2.0);
  EXPECT_EQ(parse("objective=.5\n").objective, 0.5);
  EXPECT_EQ(parse("objective=1e-400\n").objective, 0.0);  // underflow: a tiny number, not garbage
}

TEST(TrialReport, SeveralPairsOnOneLine) {
  const TrialReport r = parse("loss=0.5; acc=0.9, lr = 1e-3 val.top-5=0.99;objective=0.7;\n");
  EXPECT_EQ(r.objective, 0.7);
  const std::map<std::string, double> expected{
      {"loss", 0.5}, {"acc", 0.9}, {"lr", 1e-3}, {"val.top-5", 0.99}};
  EXPECT_EQ(r.metrics, expected);
}

TEST(TrialReport, NoObjectiveReported) {
  const TrialReport r = parse("loss=0.5\nhello\n");
  EXPECT_FALSE(r.objective.has_value());
  EXPECT_FALSE(r.failure.has_value());  // a missing value is for the caller to judge
  EXPECT_EQ(r.metrics.at("loss"), 0.5);
}

// A metric printed as `loss=nan` is quoted as the trainer wrote it, not in YAML's spelling (".nan"),
// in the reason a trial that reported another metric than the objective fails with.
TEST(TrialReport, AnotherMetricNotANumberIsQuotedAsPrinted) {
  const TrialReport r = parse("loss=nan\nacc=-inf\n", "", named("val_loss"));
  ASSERT_TRUE(r.unread_line.has_value());
  EXPECT_NE(r.unread_line->find("the trial reported acc=-inf, loss=nan, but not the objective 'val_loss'"),
            std::string::npos)
      << *r.unread_line;
}

TEST(TrialReport, ObjectiveNameOption) {
  const ProtocolOptions options = named("val_acc");
  const TrialReport r = parse("val_acc=0.8\nloss=0.3\n", "", options);
  EXPECT_EQ(r.objective, 0.8);
  EXPECT_EQ(r.metrics.count("val_acc"), 0u);
  EXPECT_EQ(r.metrics.at("loss"), 0.3);

  // "objective" is accepted too, the later line wins
  EXPECT_EQ(parse("val_acc=0.8\nobjective=0.6\n", "", options).objective, 0.6);
  EXPECT_EQ(parse("objective=0.6\nval_acc=0.8\n", "", options).objective, 0.8);
  // on one line, the configured name wins over "objective"
  EXPECT_EQ(parse("val_acc=0.8 objective=0.6\n", "", options).objective, 0.8);
  EXPECT_EQ(parse("objective=0.6 val_acc=0.8\n", "", options).objective, 0.8);

  // with the default name, val_acc is just a metric
  const TrialReport d = parse("val_acc=0.8\n");
  EXPECT_FALSE(d.objective.has_value());
  EXPECT_EQ(d.metrics.at("val_acc"), 0.8);
}

TEST(TrialReport, LastValueWins) {
  const TrialReport r = parse("objective=0.1\nloss=3\nobjective=0.2\nloss=2\nacc=0.5\nloss=1\n");
  EXPECT_EQ(r.objective, 0.2);
  EXPECT_EQ(r.metrics.at("loss"), 1.0);
  EXPECT_EQ(r.metrics.at("acc"), 0.5);
}

TEST(TrialReport, UnterminatedLastLineIsNotComplete) {
  EXPECT_EQ(parse("objective=0.1\nobjective=0.2").objective, 0.1);
  EXPECT_FALSE(parse("objective=0.2").objective.has_value());
}

// ---------------------------------------------------------------- intermediate values

TEST(TrialReport, IntermediateValuesAndLastOneAsFinal) {
  const TrialReport r = parse("step=1 objective=0.5\nobjective=0.6, step=2\nloss=1 step=3\n");
  EXPECT_EQ(steps(r), (Steps{{1, 0.5}, {2, 0.6}}));  // a step without a value is no value
  EXPECT_EQ(r.objective, 0.6);                         // no final value: the last intermediate one
  EXPECT_EQ(r.metrics.at("loss"), 1.0);
  EXPECT_EQ(r.metrics.count("step"), 0u);
}

TEST(TrialReport, FinalValueWithoutStepWinsOverLaterIntermediates) {
  const TrialReport r = parse("step=1 objective=0.5\nobjective=0.55\nstep=2 objective=0.7\n");
  EXPECT_EQ(r.objective, 0.55);
  EXPECT_EQ(steps(r), (Steps{{1, 0.5}, {2, 0.7}}));
  EXPECT_EQ(parse("objective=0.1\nobjective=0.55\nstep=9 objective=0.7\n").objective, 0.55);
}

TEST(TrialReport, IntermediateValuesInJsonAndWithObjectiveName) {
  const TrialReport r = parse(R"({"step": 3, "val_acc": 0.4}
{"step": 4.0, "val_acc": 0.45, "loss": 1.25}
)", "", named("val_acc"));
  EXPECT_EQ(steps(r), (Steps{{3, 0.4}, {4, 0.45}}));
  EXPECT_EQ(r.objective, 0.45);
  EXPECT_EQ(r.metrics.at("loss"), 1.25);
}

TEST(TrialReport, NonIntegerStepIgnoresTheRecord) {
  const TrialReport r = parse("step=1 objective=0.5\nstep=1.5 objective=0.9 loss=2\n");
  EXPECT_EQ(steps(r), (Steps{{1, 0.5}}));
  EXPECT_EQ(r.objective, 0.5);
  EXPECT_EQ(r.metrics.count("loss"), 0u);
}

// ---------------------------------------------------------------- SMAC

TEST(TrialReport, SmacCostAndStatus) {
  const TrialReport r = parse("cost=0.07; status=SUCCESS\n");
  EXPECT_EQ(r.objective, 0.07);
  EXPECT_FALSE(r.failure.has_value());
  EXPECT_TRUE(r.metrics.empty());  // neither cost nor status is a metric
}

TEST(TrialReport, CostOnlyWhenTheObjectiveKeyIsNotReported) {
  EXPECT_EQ(parse("objective=0.5\ncost=0.07\n").objective, 0.5);
  EXPECT_EQ(parse("cost=0.07\nobjective=0.5\n").objective, 0.5);
  EXPECT_EQ(parse("cost=0.07\ncost=0.06\n").objective, 0.06);
  const TrialReport r = parse("step=1 cost=0.3\nstep=2 cost=0.2\n");
  EXPECT_EQ(r.objective, 0.2);
  EXPECT_EQ(steps(r), (Steps{{1, 0.3}, {2, 0.2}}));
}

TEST(TrialReport, SmacClassicResultLine) {
  for (const std::string prefix :
       {"Result for SMAC:", "Result of this algorithm run:", "Result for ParamILS:"}) {
    SCOPED_TRACE(prefix);
    const TrialReport r = parse("some log\n" + prefix + " SUCCESS, 1.5, 0, 0.07, 42\n");
    EXPECT_EQ(r.objective, 0.07);  // quality is the cost
    EXPECT_FALSE(r.failure.has_value());
    EXPECT_EQ(r.metrics.at("runtime"), 1.5);
  }
  // the seed and additional run data are optional
  EXPECT_EQ(parse("Result of this algorithm run: SAT, 0, 0, 0.07\n").objective, 0.07);
  EXPECT_EQ(parse("Result for SMAC: UNSAT, 3, -1, 12, 7, extra data\n").objective, 12.0);
  // GenericWrapper4AC prints a JSON object after the colon
  const TrialReport j =
      parse(R"(Result of this algorithm run: {"status": "SUCCESS", "cost": 0.25, "runtime": 3})"
            "\n");
  EXPECT_EQ(j.objective, 0.25);
  EXPECT_EQ(j.metrics.at("runtime"), 3.0);
}

TEST(TrialReport, SmacClassicMalformedLinesIgnored) {
  EXPECT_FALSE(parse("Result for SMAC: SUCCESS, 0, 0\n").objective.has_value());
  EXPECT_FALSE(parse("Result for SMAC: SUCCESS, 0, 0, abc, 1\n").objective.has_value());
  EXPECT_FALSE(parse("Result for SMAC: MAYBE, 0, 0, 0.3, 1\n").objective.has_value());
  EXPECT_FALSE(parse("Result for something: SUCCESS, 0, 0, 0.3, 1\n").objective.has_value());
}

TEST(TrialReport, FailingStatuses) {
  for (const std::string status :
       {"CRASHED", "TIMEOUT", "ABORT", "MEMOUT", "FAIL", "FAILED", "crashed", "Timeout"}) {
    SCOPED_TRACE(status);
    std::string upper = status;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const std::string expected = "the trial reported status " + upper;

    const TrialReport kv = parse("cost=0.07; status=" + status + "\n");
    EXPECT_EQ(kv.failure, expected);
    EXPECT_EQ(kv.objective, 0.07);  // still reported, for the record

    const TrialReport classic = parse("Result for SMAC: " + status + ", 0, 0, 1e9, 1\n");
    EXPECT_EQ(classic.failure, expected);

    const TrialReport json = parse(R"({"objective": 1, "status": ")" + status + "\"}\n");
    EXPECT_EQ(json.failure, expected);
  }
  for (const std::string status : {"SUCCESS", "SAT", "UNSAT", "success"}) {
    SCOPED_TRACE(status);
    EXPECT_FALSE(parse("cost=0.07; status=" + status + "\n").failure.has_value());
  }
  // a later status wins
  EXPECT_FALSE(parse("status=CRASHED\ncost=1 status=SUCCESS\n").failure.has_value());
  EXPECT_EQ(parse("status=SUCCESS\ncost=1; status=TIMEOUT\n").failure,
            "the trial reported status TIMEOUT");
  // a status that is not a word makes the line unreadable; an unknown word is ignored
  EXPECT_FALSE(parse("objective=1 status=12\n").objective.has_value());
  EXPECT_EQ(parse("status=CRASHED\nstatus=RUNNING\n").failure, "the trial reported status CRASHED");
}

// ---------------------------------------------------------------- JSON lines

TEST(TrialReport, JsonLine) {
  const TrialReport r = parse(R"(  {"objective": 0.93, "loss": 0.1, "name": "mlp", "ok": true, "none": null}  )"
                              "\n");
  EXPECT_EQ(r.objective, 0.93);
  const std::map<std::string, double> expected{{"loss", 0.1}};
  EXPECT_EQ(r.metrics, expected);
  EXPECT_EQ(parse(R"({"objective":0.5,"loss":-Infinity,"b":1e3})"
                  "\n")
                .metrics,
            (std::map<std::string, double>{{"loss", -INFINITY}, {"b", 1000.0}}));
  EXPECT_EQ(parse("{}\n{ }\n").metrics.size(), 0u);
}

TEST(TrialReport, JsonLineWithNestedParts) {
  const TrialReport r = parse(
      R"({"objective": 0.8, "extra": {"objective": 0.1, "x": 2}, "list": [1, 2], "loss": "0.25"})"
      "\n");
  EXPECT_EQ(r.objective, 0.8);
  const std::map<std::string, double> expected{{"loss", 0.25}};
  EXPECT_EQ(r.metrics, expected);
}

TEST(TrialReport, JsonLineFastPathAgreesWithYaml) {
  // The same flat object, once as json.dumps writes it and once with a nested member, escapes and
  // YAML-only spelling that only yaml-cpp reads: the numbers must come out the same.
  const std::string flat = R"({"objective": 0.5, "loss": -1.5e-3, "acc": NaN, "t": "7", "x": false})";
  const std::string mixed =
      R"({"objective": 0.5, "lo\u0073s": -1.5e-3, acc: NaN, "t": '7', "x": false, "n": {"a": 1}})";
  const TrialReport a = parse(flat + "\n");
  const TrialReport b = parse(mixed + "\n");
  EXPECT_EQ(a.objective, 0.5);
  EXPECT_EQ(b.objective, 0.5);
  ASSERT_EQ(a.metrics.size(), 3u);
  ASSERT_EQ(b.metrics.size(), 3u);
  EXPECT_EQ(a.metrics.at("loss"), -1.5e-3);
  EXPECT_EQ(b.metrics.at("loss"), -1.5e-3);
  EXPECT_TRUE(std::isnan(a.metrics.at("acc")));
  EXPECT_TRUE(std::isnan(b.metrics.at("acc")));
  EXPECT_EQ(a.metrics.at("t"), 7.0);
  EXPECT_EQ(b.metrics.at("t"), 7.0);
  // an otherwise flat line whose key has an escape is unescaped (by yaml-cpp)
  EXPECT_EQ(parse(R"({"objective": 0.5, "lo\u0073s": 2})" "\n").metrics,
            (std::map<std::string, double>{{"loss", 2.0}}));
  EXPECT_EQ(parse(R"({"q\"": 3})" "\n").metrics, (std::map<std::string, double>{{"q\"", 3.0}}));
}

TEST(TrialReport, UnreadableJsonLinesIgnored) {
  const TrialReport r = parse(
      "objective=0.3\n"
      "{\"objective\": 0.9,}x}\n"                      // not JSON
      "{\"objective\": 0.9\n"                          // not closed on the line
      "{\"objective\": 0.9} {\"objective\": 0.8}\n"    // two objects
      "[{\"objective\": 0.9}]\n"                       // not an object
      "log: {\"objective\": 0.9}\n"                    // text before the object
      "{\"objective\": 0.9, \"k\xff\": 1}\n"           // not UTF-8
      + std::string(5000, '{') + std::string(5000, '}') + "\n");  // deeply nested
  EXPECT_EQ(r.objective, 0.3);
  EXPECT_TRUE(r.metrics.empty());
}

// ---------------------------------------------------------------- result file

TEST(TrialReport, ResultFileYamlOverridesStdout) {
  const TrialReport r =
      parse("objective=0.1\nloss=5\nacc=0.5\n", "objective: 0.93\nloss: 0.25\nnested: {a: 1}\n");
  EXPECT_EQ(r.objective, 0.93);
  EXPECT_EQ(r.metrics.at("loss"), 0.25);  // the file wins for metrics too
  EXPECT_EQ(r.metrics.at("acc"), 0.5);    // what only stdout said is kept
  EXPECT_EQ(r.metrics.count("a"), 0u);
}

TEST(TrialReport, ResultFileJson) {
  const TrialReport r = parse("", "{\n  \"val_acc\": 0.91,\n  \"loss\": 0.2\n}\n", named("val_acc"));
  EXPECT_EQ(r.objective, 0.91);
  EXPECT_EQ(r.metrics.at("loss"), 0.2);
}

TEST(TrialReport, ResultFileWithoutObjectiveKeepsStdout) {
  const TrialReport r = parse("objective=0.4\n", "loss: 0.1\n");
  EXPECT_EQ(r.objective, 0.4);
  EXPECT_EQ(r.metrics.at("loss"), 0.1);
  // the file's cost is the file's objective, and the file wins
  EXPECT_EQ(parse("objective=0.4\n", "cost: 0.1\nstatus: SUCCESS\n").objective, 0.1);
  // the file's status wins over stdout's
  EXPECT_EQ(parse("status=SUCCESS\n", "cost: 0.1\nstatus: crashed\n").failure,
            "the trial reported status CRASHED");
}

// The file wins over stdout also when it names the objective without a number: the trial completed
// with the value stdout printed earlier (loss=0.9, then {"loss": "diverged"} in the file).
TEST(TrialReport, AResultFileNamingTheObjectiveWithoutANumberWinsOverStdout) {
  TrialReport r = parse("loss=0.9\n", "{\"loss\": \"diverged\"}\n", named("loss"));
  EXPECT_FALSE(r.objective.has_value());
  EXPECT_EQ(r.unreadable_objective, "the value 'diverged' for loss is not a number (result file)");
  r = parse("loss=0.9\n", "{\"loss\": null}\n", named("loss"));
  EXPECT_FALSE(r.objective.has_value());
  EXPECT_EQ(r.unreadable_objective, "the result file gives loss no value (null)");
  r = parse("", "objective: [1]\n");
  EXPECT_FALSE(r.objective.has_value());
  EXPECT_EQ(r.unreadable_objective, "the value '[1]' for objective is not a number (result file)");
  r = parse("loss=0.9\n", "loss: {mean: 0.5}\n", named("loss"));
  EXPECT_FALSE(r.objective.has_value());
  EXPECT_EQ(r.unreadable_objective, "the value '{mean: 0.5}' for loss is not a number (result file)");
  // A number under either key in the file is the file's value; a file that names neither keeps stdout's.
  EXPECT_EQ(parse("loss=0.9\n", "loss: 0.5\nobjective: null\n", named("loss")).objective, 0.5);
  EXPECT_EQ(parse("loss=0.9\n", "acc: null\n", named("loss")).objective, 0.9);
}

// A line whose step is not whole is not read; the failure said no line named the objective.
TEST(TrialReport, ALineWithAStepThatIsNotWholeIsNamedWhenNoValueIsFound) {
  TrialReport r = parse("val_acc=0.91 step=1.5\n", "", named("val_acc"));
  EXPECT_FALSE(r.objective.has_value());
  EXPECT_EQ(r.unread_line,
            "stdout line 1 gives step=1.5, which is not a whole number of at most 19 digits, and was not read (a "
            "step counts epochs or iterations, e.g. step=3): 'val_acc=0.91 step=1.5'");
  r = parse("{\"val_acc\": 0.91, \"step\": 0.5}\n", "", named("val_acc"));
  EXPECT_FALSE(r.objective.has_value());
  ASSERT_TRUE(r.unread_line.has_value());
  EXPECT_NE(r.unread_line->find("stdout line 1 gives step=0.5, which is not a whole number"), std::string::npos)
      << *r.unread_line;
  // Whole steps are intermediate values, as before.
  r = parse("val_acc=0.91 step=2\n", "", named("val_acc"));
  EXPECT_EQ(r.objective, 0.91);
  EXPECT_FALSE(r.unread_line.has_value());
}

TEST(TrialReport, EmptyResultFileIsNoFile) {
  EXPECT_EQ(parse("objective=0.4\n", "").objective, 0.4);
  EXPECT_EQ(parse("objective=0.4\n", " \n\t\r\n").objective, 0.4);
}

TEST(TrialReport, ResultFileNotAMappingThrows) {
  const std::string prefix = "result file: expected a mapping such as {objective: 0.93}, found ";
  EXPECT_EQ(file_error("0.93\n"), prefix + "the scalar \"0.93\"");
  EXPECT_EQ(file_error("- 1\n- 2\n"), prefix + "a sequence");
  EXPECT_EQ(file_error("# nothing\n"), prefix + "an empty (null) document");
  EXPECT_EQ(file_error("~\n"), prefix + "an empty (null) document");
  EXPECT_EQ(file_error("{objective: 0.93} junk\n"), prefix + "2 YAML documents");
  EXPECT_EQ(file_error("objective: 1\n---\nobjective: 2\n"), prefix + "2 YAML documents");
  const std::string bad = file_error("{objective: 0.93\n");
  EXPECT_EQ(bad.rfind(prefix + "text that is not valid YAML or JSON (line ", 0), 0u) << bad;
  EXPECT_EQ(file_error("objective: 0.93\n"), "");
}

// ---------------------------------------------------------------- garbage

// Names of TensorBoard and Ray Tune metrics (eval/loss) are keys of the key=value form; names it
// cannot carry are explained with the JSON form that can. (A user's `eval/loss=0.25` failed with
// "names eval/loss but is not a report line (... e.g. eval/loss=0.93)".)
TEST(TrialReport, SlashNamesAreKeysAndOtherNamesPointToJson) {
  TrialReport r = parse("eval/loss=0.25 train/loss=0.5\n", "", named("eval/loss"));
  ASSERT_TRUE(r.objective.has_value());
  EXPECT_EQ(*r.objective, 0.25);
  EXPECT_EQ(r.metrics.at("train/loss"), 0.5);
  for (const std::string name : {"loss (val)", "x y", "a=b", "\xc3\xa9"}) {
    r = parse(name + "=0.25\n", "", named(name));
    EXPECT_FALSE(r.objective.has_value()) << name;
    ASSERT_TRUE(r.unread_line.has_value()) << name;
    EXPECT_NE(r.unread_line->find("names " + name + ", a name the key=value form cannot carry"), std::string::npos)
        << *r.unread_line;
    EXPECT_NE(r.unread_line->find("e.g. {\"" + name + "\": 0.93}"), std::string::npos) << *r.unread_line;
    EXPECT_EQ(parse("{\"" + name + "\": 0.25}\n", "", named(name)).objective, 0.25) << name;
  }
}

// Logging libraries colour their lines: the text between the escape sequences is the report.
TEST(TrialReport, AnsiColouredReportLineIsRead) {
  TrialReport r = parse("\x1b[32mloss=0.5\x1b[0m\n", "", named("loss"));
  EXPECT_EQ(r.objective, 0.5);
  r = parse("\x1b[1m\x1b[36m{\"loss\": 0.25, \"acc\": 0.9}\x1b[0m\n", "", named("loss"));
  EXPECT_EQ(r.objective, 0.25);
  EXPECT_EQ(r.metrics.at("acc"), 0.9);
  // An escape that is not a CSI sequence: ESC and its one byte go.
  EXPECT_EQ(parse("\x1b" "7loss=0.75\n", "", named("loss")).objective, 0.75);
}

// LOSS=0.5 for an objective named loss was kept as a metric, and the failure said no line reported
// a value.
TEST(TrialReport, ObjectiveNameInAnotherCaseIsExplained) {
  const TrialReport r = parse("LOSS=0.5\n", "", named("loss"));
  EXPECT_FALSE(r.objective.has_value());
  EXPECT_EQ(r.unread_line, "the metric LOSS=0.5 was reported, but the objective is loss (names are case-sensitive)");
  EXPECT_FALSE(parse("loss=0.5 LOSS=0.1\n", "", named("loss")).unread_line.has_value());
}

TEST(TrialReport, MalformedKeyValueLinesIgnored) {
  const TrialReport r = parse(
      "objective=0.3\n"
      "objective=0.9abc\n"
      "objective=\n"
      "objective\n"
      "=0.9\n"
      "objective=0,9\n"          // a decimal comma: "9" is not a pair
      "objective=0.9 # note\n"   // trailing text
      "Epoch 3: objective=0.9\n" // leading text
      "objective=0x1p3\n"
      "objective=--1\n"
      "objective=0.9=1\n"
      "9objective=0.9\n"
      "loss=abc objective=0.9\n");
  EXPECT_EQ(r.objective, 0.3);
  EXPECT_TRUE(r.metrics.empty());
}

// A trial that printed its objective with a value that is not a number still reports no value, but
// says which value and which line, so that its failure reason is not a bare "no value reported".
TEST(TrialReport, ObjectiveValueThatIsNotANumberIsExplained) {
  TrialReport r = parse("epoch 1\nval_acc=abc\n", "", named("val_acc"));
  EXPECT_FALSE(r.objective.has_value());
  EXPECT_EQ(r.unreadable_objective, "the value 'abc' for val_acc is not a number (stdout line 2: 'val_acc=abc')");

  r = parse("{\"objective\": \"0.9 (best)\", \"loss\": 0.1}\n");
  EXPECT_FALSE(r.objective.has_value());
  EXPECT_EQ(r.unreadable_objective,
            "the value '0.9 (best)' for objective is not a number (stdout line 1: "
            "'{\"objective\": \"0.9 (best)\", \"loss\": 0.1}')");

  r = parse("", "val_acc: n/a\n", named("val_acc"));
  EXPECT_EQ(r.unreadable_objective, "the value 'n/a' for val_acc is not a number (result file)");
  // A byte that is not UTF-8 glued to the value is named as such (it read "'0.9\xFF' is not a number").
  r = parse("objective=0.9\xff\n");
  EXPECT_EQ(r.unreadable_objective,
            "the value '0.9\\xFF' for objective holds bytes that are not UTF-8 (the first is byte 4 of the value), so "
            "it is not a number; end the report's line right after the value (stdout line 1: 'objective=0.9\\xFF')");

  // Another key's unreadable value is not the objective's; a readable objective leaves no note.
  EXPECT_FALSE(parse("loss=abc\n").unreadable_objective.has_value());
  r = parse("objective=abc\nobjective=0.5\n");
  EXPECT_EQ(r.objective, 0.5);
}

// A trial whose report line could not be read reports no value; the report says which line looked
// as if it meant to report one, and why it was not read.
TEST(TrialReport, UnreadReportLineIsExplained) {
  // A JSON object cut short (the trainer died mid-print, or pretty-printed it over lines).
  TrialReport r = parse("epoch 1\nepoch 2\n{\"val_acc\": 0.9\n", "", named("val_acc"));
  EXPECT_FALSE(r.objective.has_value());
  EXPECT_EQ(r.unread_line,
            "stdout line 3 looks like a JSON object but does not parse (end of map flow not found at column 1; a "
            "JSON report is one object on one line, closed by '}'): '{\"val_acc\": 0.9'");
  // Two objects on one line: the parser reads both, and a report is one.
  r = parse("{\"a\": 1} {\"b\": 2}\n");
  EXPECT_EQ(r.unread_line,
            "stdout line 1 looks like a JSON object but does not parse (text follows the object): "
            "'{\"a\": 1} {\"b\": 2}'");

  // Bytes that are not UTF-8 before the pair: the line is not read (where garbage ends cannot be
  // told safely), and the report says so, with the first such byte.
  r = parse("epoch 1\n\xff\xfeval_acc=0.9\n", "", named("val_acc"));
  EXPECT_FALSE(r.objective.has_value());
  EXPECT_EQ(r.unread_line,
            "stdout line 2 holds bytes that are not UTF-8 (the first is byte 1) and was not read; print the report "
            "on a line of its own: '\\xFF\\xFEval_acc=0.9'");
  // A name that is well-formed UTF-8 is quoted as it is (it was '??=0.5').
  r = parse("\xc3\xa9=0.5\n", "", named("\xc3\xa9"));
  EXPECT_FALSE(r.objective.has_value());
  ASSERT_TRUE(r.unread_line);
  EXPECT_NE(r.unread_line->find("'\xc3\xa9=0.5'"), std::string::npos) << *r.unread_line;
  r = parse("ok \xc3\x28 {\"objective\": 0.9}\n");
  EXPECT_NE(r.unread_line->find("stdout line 1 holds bytes that are not UTF-8 (the first is byte 4)"),
            std::string::npos)
      << *r.unread_line;

  // Text before the pair, and the generic key under another objective name.
  r = parse("Epoch 3: val_acc=0.9\n", "", named("val_acc"));
  EXPECT_EQ(r.unread_line,
            "stdout line 1 names val_acc but is not a report line (one holds only key=value pairs, each value a "
            "number, e.g. val_acc=0.93): 'Epoch 3: val_acc=0.9'");
  r = parse("final objective: 0.9\n", "", named("val_acc"));
  EXPECT_NE(r.unread_line->find("stdout line 1 names objective but"), std::string::npos) << *r.unread_line;

  // The most telling line wins: a JSON line naming the objective over a later prose line naming it,
  // which wins over a JSON line naming nothing known.
  r = parse("{\"val_acc\": 0.9,\nval_acc is computed\n{\"x\": 1,}\n", "", named("val_acc"));
  EXPECT_NE(r.unread_line->find("stdout line 1 looks like a JSON object"), std::string::npos) << *r.unread_line;
  r = parse("{\"x\": 1,}x}\nval_acc is computed\n", "", named("val_acc"));
  EXPECT_NE(r.unread_line->find("stdout line 2 names val_acc"), std::string::npos) << *r.unread_line;

  // A JSON object that parses but holds the objective only in a nested object: read (its other
  // keys are metrics), and named as the likely report, with the path to the objective.
  r = parse("{\"epoch\": 3, \"eval\": {\"metrics\": {\"val_acc\": 0.9}}}\n", "", named("val_acc"));
  EXPECT_FALSE(r.objective.has_value());
  EXPECT_EQ(r.unread_line,
            "stdout line 1 is a JSON object that holds val_acc only inside 'eval.metrics'; a report has it at the top "
            "level, e.g. {\"val_acc\": 0.93}: '{\"epoch\": 3, \"eval\": {\"metrics\": {\"val_acc\": 0.9}}}'");
  // ... but not when the objective is also reported at the top level, on that line or another.
  r = parse("{\"metrics\": {\"val_acc\": 0.5}}\n{\"val_acc\": 0.9}\n", "", named("val_acc"));
  EXPECT_EQ(r.objective, 0.9);
  EXPECT_FALSE(r.unread_line.has_value());
  r = parse("{\"val_acc\": 0.9, \"metrics\": {\"val_acc\": 0.5}}\n", "", named("val_acc"));
  EXPECT_EQ(r.objective, 0.9);
  // A string value that merely mentions the name is no nested objective: no hint from that line.
  r = parse("{\"note\": \"val_acc later\"}\n", "", named("val_acc"));
  EXPECT_FALSE(r.unread_line.has_value());
}

TEST(TrialReport, UnreadLineNoteOnlyWhenItCouldExplainAMissingValue) {
  // A value found elsewhere: nothing to explain.
  EXPECT_FALSE(parse("{\"val_acc\": 0.9\nval_acc=0.8\n", "", named("val_acc")).unread_line.has_value());
  EXPECT_FALSE(parse("{\"val_acc\": 0.9\n", "val_acc: 0.7\n", named("val_acc")).unread_line.has_value());
  // Lines that name neither the objective (as a word: not val_loss for loss) nor look like JSON.
  EXPECT_FALSE(parse("val_loss 0.3\nloss_history saved\n", "", named("loss")).unread_line.has_value());
  EXPECT_FALSE(parse("\xff\xfe garbage\nEpoch 3: acc=1\n").unread_line.has_value());
  // An objective whose value is not a number has its own message.
  const TrialReport r = parse("val_acc=abc\n", "", named("val_acc"));
  EXPECT_FALSE(r.unread_line.has_value());
  EXPECT_TRUE(r.unreadable_objective.has_value());
}

TEST(TrialReport, BinaryBytesIgnored) {
  std::string out = "objective=0.3\n";
  out += std::string("\x00\x01\xff\xfe objective=0.9\n", 18);
  out += std::string("objective=0.9\x00\n", 15);
  out += "\xc3\x28 loss=1\n";
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) out += static_cast<char>(rng() & 0xFF);
  out += "\n";
  TrialReport r;
  EXPECT_NO_THROW(r = parse(out));
  EXPECT_EQ(r.objective, 0.3);
}

TEST(TrialReport, RandomBytesNeverThrow) {
  // Bytes drawn from the characters the parsers care about, many short lines.
  const std::string alphabet = "{}[]\":,;= \t\r\n.-+eE0123456789abjectivostpnaifSUCRH\xff\x80!&*#";
  for (std::uint32_t seed = 0; seed < 50; ++seed) {
    std::mt19937 rng(seed);
    std::string out;
    for (int i = 0; i < 4000; ++i) out += alphabet[rng() % alphabet.size()];
    EXPECT_NO_THROW(parse(out)) << "seed " << seed;
  }
}

TEST(TrialReport, LongLinesIgnored) {
  const std::size_t limit = 64 * 1024;
  const auto padded = [](std::string line, std::size_t size) {
    line.resize(size, ' ');
    return line + "\n";
  };
  EXPECT_EQ(parse(padded("objective=0.5", limit)).objective, 0.5);
  EXPECT_FALSE(parse(padded("objective=0.5", limit + 1)).objective.has_value());
  std::string json = "{\"objective\": 0.5, \"pad\": \"" + std::string(limit, 'x') + "\"}\n";
  EXPECT_FALSE(parse(json).objective.has_value());
  // the lines around a long one are read
  EXPECT_EQ(parse("objective=0.1\n" + std::string(200000, 'a') + "\nobjective=0.2\n").objective, 0.2);
}

// ---------------------------------------------------------------- non-finite values

TEST(TrialReport, NonFiniteObjectiveIsAFailure) {
  struct Case {
    std::string out;
    std::string file;
    std::string name;
  };
  for (const Case& c : std::vector<Case>{{"objective=nan\n", "", "nan"},
                                         {"objective=NaN\n", "", "nan"},
                                         {"objective=inf\n", "", "inf"},
                                         {"objective=-Infinity\n", "", "-inf"},
                                         {"objective=1e999\n", "", "inf"},
                                         {"{\"objective\": \"nan\"}\n", "", "nan"},
                                         {"{\"objective\": NaN}\n", "", "nan"},
                                         {"objective=0.5\n", "objective: .nan\n", "nan"},
                                         {"", "{\"objective\": -.inf}", "-inf"},
                                         {"step=1 objective=0.5\nstep=2 objective=nan\n", "", "nan"}}) {
    SCOPED_TRACE(c.out + " | " + c.file);
    const TrialReport r = parse(c.out, c.file);
    ASSERT_TRUE(r.objective.has_value());
    EXPECT_FALSE(std::isfinite(*r.objective));
    EXPECT_EQ(std::isnan(*r.objective), c.name == "nan");
    EXPECT_EQ(r.failure, "the objective is not a finite number (" + c.name + ")");
  }
  // a finite value after a non-finite one is fine; so is a non-finite metric
  const TrialReport r = parse("objective=nan\nobjective=0.5\nloss=inf\n");
  EXPECT_EQ(r.objective, 0.5);
  EXPECT_FALSE(r.failure.has_value());
  EXPECT_TRUE(std::isinf(r.metrics.at("loss")));
  // a failing status says more than the value
  EXPECT_EQ(parse("objective=nan status=CRASHED\n").failure, "the trial reported status CRASHED");
}

// ---------------------------------------------------------------- size

TEST(TrialReport, TenMegabytesOfRandomText) {
  std::mt19937_64 rng(42);
  const std::string alphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:=-_{}\"\t";
  const std::size_t size = 10u * 1024u * 1024u;
  std::string out;
  out.reserve(size + 100);
  bool placed = false;
  while (out.size() < size) {
    const std::size_t length = rng() % 200;
    for (std::size_t i = 0; i < length; ++i) out += alphabet[rng() % alphabet.size()];
    out += '\n';
    if (!placed && out.size() > size / 2) {
      out += "objective=0.8125\n";
      placed = true;
    }
  }
  const TrialReport r = parse(out);
  EXPECT_EQ(r.objective, 0.8125);
  EXPECT_FALSE(r.failure.has_value());
}

TEST(TrialReport, ManyJsonLines) {
  std::string out;
  const int n = 100000;
  for (int i = 1; i <= n; ++i) {
    out += "{\"step\": " + std::to_string(i) + ", \"objective\": " + std::to_string(i) +
           ".5, \"loss\": 0.125, \"lr\": 0.001}\n";
  }
  const TrialReport r = parse(out);
  ASSERT_EQ(r.intermediate.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(r.intermediate.back().step, n);
  EXPECT_EQ(r.objective, n + 0.5);
  EXPECT_EQ(r.metrics.at("lr"), 0.001);
}

}  // namespace

// A diverged run that prints DBL_MAX or 1e300: the models' sums of squares overflow beyond ~1e150, and
// Study::tell refuses such a value; the report calls it a failure, saying why, so the trial is
// recorded as failed and the campaign goes on. Values up to the limit are results like any other.
TEST(TrialReport, AnObjectiveBeyondWhatTheModelsComputeWithIsAFailure) {
  for (const std::string huge : {"1e300", "-1.7976931348623157e308", "1.0000001e100"}) {
    const TrialReport r = parse("objective=" + huge + "\n");
    ASSERT_TRUE(r.failure) << huge;
    EXPECT_NE(r.failure->find("is beyond +-1e+100, which the models cannot compute with: a diverged run?"),
              std::string::npos)
        << *r.failure;
  }
  for (const std::string large : {"1e100", "-1e99", "123456789e90"}) {
    const TrialReport r = parse("objective=" + large + "\n");
    EXPECT_FALSE(r.failure) << large << ": " << r.failure.value_or("");
    ASSERT_TRUE(r.objective);
    EXPECT_EQ(*r.objective, std::stod(large));
  }
}
