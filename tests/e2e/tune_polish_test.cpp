// Small defects of the command line and the campaign file, each found by using the `tune` program as
// a user would: the message a user reads, a slip the program must not take silently, a file it must
// not overwrite.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

const char* kAskTellSpace = "space:\n  x: {type: float, low: 0, high: 1}\n";

// A campaign driven by ask/tell, created by its first ask (trial 0 handed out).
fs::path ask_tell_campaign(const std::string& name) {
  const fs::path d = fresh_dir(name);
  write(d / "c.yaml", "name: c\n" + std::string(kAskTellSpace) + "budget: {trials: 10}\n");
  EXPECT_EQ(tune(d, {"ask", "c.yaml"}).code, 0);
  return d;
}

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

// "tuner running (the tuner (process N))" said the tuner twice, in nested brackets.
TEST(TunePolish, StatusOfARunningCampaignNamesTheTunersProcessOnce) {
  const fs::path d = fresh_dir("polish-running");
  write(d / "c.yaml", quadratic_campaign_with("r", 2, "{workers: 1}"));
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"}, {{"TOY_SLEEP", "30"}});
  std::string pid;
  for (int i = 0; i < 500 && (pid.empty() || !fs::exists(d / "r" / "trials" / "0")); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    pid = slurp(d / "r" / "tuner.pid");
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  }
  ASSERT_FALSE(pid.empty());
  const Result st = tune(d, {"status", "r"});
  EXPECT_EQ(st.code, 0) << st.err;
  EXPECT_NE(st.out.find("): tuner running (process " + pid + ")\n"), std::string::npos) << st.out;
  EXPECT_EQ(st.out.find("the tuner"), std::string::npos) << st.out;
  EXPECT_EQ(tune(d, {"stop", "r"}).code, 0);
  EXPECT_EQ(finish(d, tuner).code, 3);
}

// `tune run c.yaml` (with --detach or not) on a campaign a tuner drives said "continuing the campaign
// in r", then refused (exit 5) because the tuner holds it.
TEST(TunePolish, RunOfACampaignATunerDrivesIsRefusedWithoutSayingItContinues) {
  const fs::path d = fresh_dir("polish-driven");
  write(d / "c.yaml", quadratic_campaign_with("r", 2, "{workers: 1}"));
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"}, {{"TOY_SLEEP", "30"}});
  for (int i = 0; i < 500 && !fs::exists(d / "r" / "trials" / "0"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "c.yaml"}, std::vector<std::string>{"run", "c.yaml", "--detach"}}) {
    const Result r = tune(d, args);
    EXPECT_EQ(r.code, 5) << r.err;
    EXPECT_EQ(r.err.find("continuing"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("tuner"), std::string::npos) << r.err;
  }
  EXPECT_EQ(tune(d, {"stop", "r"}).code, 0);
  EXPECT_EQ(finish(d, tuner).code, 3);
}

// `tune tell DIR 0 --failed ""` recorded a failure with no reason, which `tune status` showed as a blank.
TEST(TunePolish, TellFailedNeedsAReason) {
  const fs::path d = ask_tell_campaign("polish-tell-failed");
  const std::string before = slurp(d / "c" / "state.yaml");
  for (const std::string reason : {"", "  "}) {
    const Result r = tune(d, {"tell", "c", "0", "--failed", reason});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("--failed needs a reason"), std::string::npos) << r.err;
  }
  EXPECT_EQ(slurp(d / "c" / "state.yaml"), before);
  EXPECT_EQ(tune(d, {"tell", "c", "0", "--failed", "out of memory"}).code, 0);
}

// `tune ask` saves the trial as handed out, then prints it: when the printing failed (a full disk, a
// reader gone) it exited 0, and the driver, having read nothing, never told the trial.
TEST(TunePolish, AskSaysWhenTheTrialItHandedOutCouldNotBeWritten) {
  const fs::path d = ask_tell_campaign("polish-ask-full");
  const pid_t ask = start(d, {"ask", "c"}, {}, {"/bin/sh", "-c", "exec \"$0\" \"$@\" > /dev/full"});
  const Result r = finish(d, ask);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("trial 1 was handed out, but writing it to stdout failed (No space left on device); report it "
                       "with 'tune tell c 1 --failed \"lost\"'"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(tune(d, {"tell", "c", "1", "--failed", "lost"}).code, 0);
}

// `tune tell DIR 0 1e300` reached Study::tell's refusal, worded for the library ("report ... with
// fail()"), and exited 1 as for an error of the program.
TEST(TunePolish, TellOfAValueBeyondWhatTheModelsComputeWithIsRefusedInTheCommandsTerms) {
  const fs::path d = ask_tell_campaign("polish-tell-huge");
  const std::string before = slurp(d / "c" / "state.yaml");
  const Result r = tune(d, {"tell", "c", "0", "1e300"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("the value 1e+300 is beyond +-1e+100, which the models cannot compute with; report a diverged "
                       "run with --failed REASON"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(slurp(d / "c" / "state.yaml"), before);
  EXPECT_EQ(tune(d, {"tell", "c", "0", "1e99"}).code, 0);
}

// "... 2 earlier trials not listed (0 of them failed); without --last all are" read as cut off.
TEST(TunePolish, StatusLastSaysHowManyEarlierTrialsItLeavesOutAndHowToListThem) {
  const fs::path d = ask_tell_campaign("polish-last");
  ASSERT_EQ(tune(d, {"ask", "c"}).code, 0);
  ASSERT_EQ(tune(d, {"ask", "c"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "c", "0", "--failed", "diverged"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "c", "1", "0.5"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "c", "2", "0.25"}).code, 0);
  const Result two = tune(d, {"status", "c", "--last", "1"});
  EXPECT_NE(two.out.find("...  2 earlier trials not shown (1 of them failed); without --last every trial is listed\n"),
            std::string::npos)
      << two.out;
  const Result one = tune(d, {"status", "c", "--last", "2"});
  EXPECT_NE(one.out.find("...  1 earlier trial not shown (it failed); without --last every trial is listed\n"),
            std::string::npos)
      << one.out;
}

// 1e400 is a number, too large for a double: "'1e400' is not a number" sent the user looking for a typo.
TEST(TunePolish, AValueTooLargeForADoubleIsSaidToBeSo) {
  const fs::path d = ask_tell_campaign("polish-range");
  const Result tell = tune(d, {"tell", "c", "0", "1e400"});
  EXPECT_EQ(tell.code, 2);
  EXPECT_EQ(tell.err, "tune tell: '1e400' is too large for a double (the largest is about 1.8e308)\n");
  const Result garbage = tune(d, {"tell", "c", "0", "1e4x"});
  EXPECT_EQ(garbage.code, 2);
  EXPECT_EQ(garbage.err, "tune tell: '1e4x' is not a number\n");
  const Result enqueue = tune(d, {"enqueue", "c", "x=-1e400"});
  EXPECT_EQ(enqueue.code, 2);
  EXPECT_EQ(enqueue.err,
            "tune enqueue: 'x=-1e400': '-1e400' is too large for a double (the largest is about 1.8e308)\n");
  // A value too small for a double is 0 as far as a double can tell, and a number.
  EXPECT_EQ(tune(d, {"tell", "c", "0", "1e-400"}).code, 0);
}

// `tune init new.yaml` wrote a header saying `tune run campaign.yaml`.
TEST(TunePolish, InitNamesTheFileItWroteInItsHeader) {
  const fs::path d = fresh_dir("polish-init");
  const Result r = tune(d, {"init", "new.yaml"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = slurp(d / "new.yaml");
  EXPECT_EQ(text.rfind("# A tune campaign. Run it with:  tune run new.yaml\n", 0), 0u) << text;
  EXPECT_NE(text.find("tune ask new.yaml, tune tell"), std::string::npos) << text;
  EXPECT_EQ(text.find("campaign.yaml"), std::string::npos) << text;
  EXPECT_NO_THROW(YAML::Load(text));
}

// CLI11 read `--trials -1` into a std::size_t as 2^64 - 1: `tune ask DIR --trials -1` lifted the trial
// budget altogether, and the inline form's `--workers -1` asked for 2^64 - 1 workers.
TEST(TunePolish, NegativeCountsOnTheCommandLineAreRefused) {
  const fs::path d = ask_tell_campaign("polish-negative");
  const std::string before = slurp(d / "c" / "state.yaml");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"ask", "c", "--trials", "-1"}, {"resume", "c", "--trials", "-1"},
        {"run", "--name", "n", "--trials", "-1", "--", "echo", "x~uniform(0,1)"},
        {"run", "--name", "n", "--workers", "-1", "--", "echo", "x~uniform(0,1)"},
        {"run", "--name", "n", "--seed", "-1", "--", "echo", "x~uniform(0,1)"}}) {
    const Result r = tune(d, args);
    EXPECT_EQ(r.code, 2) << args[0] << " " << args[args.size() > 4 ? 3 : 2];
    EXPECT_NE(r.err.find("expected a whole number, not '-1'"), std::string::npos) << r.err;
  }
  EXPECT_EQ(slurp(d / "c" / "state.yaml"), before);
  EXPECT_FALSE(fs::exists(d / "n"));
}

// `tune export DIR -o DIR/state.yaml` replaced the campaign's state with the table.
TEST(TunePolish, ExportRefusesToWriteOverTheCampaignsOwnFiles) {
  const fs::path d = ask_tell_campaign("polish-export");
  ASSERT_EQ(tune(d, {"tell", "c", "0", "0.5"}).code, 0);
  const std::string state = slurp(d / "c" / "state.yaml"), events = slurp(d / "c" / "events.jsonl");
  for (const std::string out : {"c/state.yaml", "./c/../c/events.jsonl", "c/trials/0/stdout"}) {
    const Result r = tune(d, {"export", "c", "-o", out});
    EXPECT_EQ(r.code, 2) << out;
    EXPECT_NE(r.err.find("is a file of the campaign c"), std::string::npos) << r.err;
  }
  EXPECT_EQ(slurp(d / "c" / "state.yaml"), state);
  EXPECT_EQ(slurp(d / "c" / "events.jsonl"), events);
  // Beside them, a table of its own is fine.
  EXPECT_EQ(tune(d, {"export", "c", "-o", "c/trials.csv"}).code, 0);
  EXPECT_EQ(tune(d, {"status", "c"}).code, 0);
}

// `tune enqueue DIR x=0.5 x=0.1` ran x = 0.1 and dropped 0.5 without a word.
TEST(TunePolish, EnqueueRefusesAParameterGivenTwice) {
  const fs::path d = ask_tell_campaign("polish-twice");
  const std::string before = slurp(d / "c" / "state.yaml");
  const Result r = tune(d, {"enqueue", "c", "x=0.5", "x=0.1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "tune enqueue: 'x=0.1': x is given twice (also 'x=0.5'); give each once\n");
  EXPECT_EQ(slurp(d / "c" / "state.yaml"), before);
}

// Choices were printed plainly by tune ask and tune best: `opt: true`, `opt: 0x10`, which YAML readers
// take for a boolean and 16 (PyYAML did). yaml-cpp marks a quoted scalar with the tag "!" and a plain
// one with "?": a reader's view, independent of how tune writes.
TEST(TunePolish, AskAndBestQuoteChoicesSoReadersTakeThemAsText) {
  const fs::path d = fresh_dir("polish-quoted-choices");
  write(d / "c.yaml",
        "name: c\nspace:\n  opt: {type: categorical, choices: [\"true\", \"yes\"]}\n"
        "  o: {type: ordinal, choices: [\"0x10\", \"0x20\"]}\n  n: {type: int, low: 1, high: 2}\n"
        "  x: {type: float, low: 0, high: 1}\nstrategy: random\nbudget: {trials: 3}\n");
  const Result ask = tune(d, {"ask", "c.yaml"});
  ASSERT_EQ(ask.code, 0) << ask.err;
  ASSERT_EQ(tune(d, {"tell", "c", "0", "1"}).code, 0);
  const Result best = tune(d, {"best", "c"});
  ASSERT_EQ(best.code, 0) << best.err;
  for (const std::string& out : {ask.out, best.out}) {
    const YAML::Node config = YAML::Load(out)["config"];
    EXPECT_EQ(config["opt"].Tag(), "!") << out;
    EXPECT_TRUE(config["opt"].Scalar() == "true" || config["opt"].Scalar() == "yes") << out;
    EXPECT_EQ(config["o"].Tag(), "!") << out;
    EXPECT_EQ(config["o"].Scalar().substr(0, 2), "0x") << out;
    EXPECT_EQ(config["n"].Tag(), "?") << out;  // numbers stay numbers
    EXPECT_EQ(config["x"].Tag(), "?") << out;
    EXPECT_NE(out.find("opt: \"" + config["opt"].Scalar() + "\"\n"), std::string::npos) << out;
  }
}

// `name: ".."` wrote state.yaml, trials/ and the locks into the parent directory; `.` into the
// current one.
TEST(TunePolish, ACampaignNamedDotOrDotDotIsRefusedAndWritesNothing) {
  const fs::path d = fresh_dir("polish-dot-names");
  fs::create_directories(d / "proj");
  for (const std::string name : {".", ".."}) {
    write(d / "proj" / "c.yaml", "name: \"" + name + "\"\n" + std::string(kAskTellSpace) + "budget: {trials: 2}\n");
    for (const std::string command : {"ask", "run"}) {
      const Result r = tune(d / "proj", {command, "c.yaml"});
      EXPECT_EQ(r.code, 1) << command << " " << name;
      EXPECT_NE(r.err.find("field 'name' at line 1, column 7: '" + name +
                           "' names a directory that is not the campaign's own; give the campaign a name"),
                std::string::npos)
          << r.err;
    }
    const Result inline_form = tune(d / "proj", {"run", "--name", name, "--", "true", "--x~uniform(0,1)"});
    EXPECT_NE(inline_form.code, 0) << name;
    EXPECT_NE(inline_form.err.find("names a directory that is not the campaign's own"), std::string::npos)
        << inline_form.err;
  }
  for (const fs::path& dir : {d, d / "proj"})
    for (const char* file : {"state.yaml", "trials", "tuner.lock", "tune.lock", "events.jsonl"})
      EXPECT_FALSE(fs::exists(dir / file)) << dir / file;
  // A campaign an older version named '.' (with --dir, harmless) still loads: only new definitions
  // are refused.
  write(d / "ok.yaml", "name: ok\n" + std::string(kAskTellSpace) + "budget: {trials: 2}\n");
  ASSERT_EQ(tune(d, {"ask", "ok.yaml", "--dir", "older"}).code, 0);
  std::string state = slurp(d / "older" / "state.yaml");
  const std::size_t name = state.find("\n  name: ok\n");
  ASSERT_NE(name, std::string::npos) << state;
  state.replace(name, 12, "\n  name: .\n");
  write(d / "older" / "state.yaml", state);
  const Result status = tune(d, {"status", "older"});
  EXPECT_EQ(status.code, 0) << status.err;
  EXPECT_EQ(tune(d, {"tell", "older", "0", "0.5"}).code, 0);
}

// tune tell read numbers with strtod: 0x10 was told as 16 and " 7" as 7, where a
// trainer's `objective=0x10` is not a number. One syntax now; -.5, which CLI11 takes for an option,
// gets a hint.
TEST(TunePolish, TellAndEnqueueReadNumbersAsTheTrialProtocolDoes) {
  const fs::path d = ask_tell_campaign("polish-number-syntax");
  const std::string before = slurp(d / "c" / "state.yaml");
  for (const std::string value : {"0x10", " 7", "7 ", "++1", "+-5", "1,5"}) {
    const Result r = tune(d, {"tell", "c", "0", value});
    EXPECT_EQ(r.code, 2) << "'" << value << "': " << r.err;
    EXPECT_EQ(r.err, "tune tell: '" + value + "' is not a number\n");
  }
  const Result enqueue = tune(d, {"enqueue", "c", "x=0x0.8p0"});
  EXPECT_EQ(enqueue.code, 2) << enqueue.err;
  // nan was refused as "value .nan is outside the range", in YAML's spelling.
  const Result nan = tune(d, {"enqueue", "c", "x=nan"});
  EXPECT_EQ(nan.code, 2);
  EXPECT_EQ(nan.err, "tune enqueue: 'x=nan': 'nan' is not a finite number, as parameter 'x' needs\n");
  EXPECT_EQ(slurp(d / "c" / "state.yaml"), before);
  const Result dot = tune(d, {"tell", "c", "0", "-.5"});
  EXPECT_EQ(dot.code, 2);
  EXPECT_NE(dot.err.find("tune tell: '-.5' was read as an option: write it -0.5, or give the values after '--'"),
            std::string::npos)
      << dot.err;
  // Only there: a negative number CLI11 reads as one, beside another error, gets no hint.
  const Result other = tune(d, {"tell", "c", "0", "-5", "--bogus"});
  EXPECT_EQ(other.code, 2);
  EXPECT_EQ(other.err.find("was read as an option"), std::string::npos) << other.err;
  EXPECT_EQ(tune(d, {"tell", "c", "0", "--", "-.5"}).code, 0);
  EXPECT_EQ(state_of(d / "c")["study"]["trials"][0]["value"].as<double>(), -0.5);
  ASSERT_EQ(tune(d, {"ask", "c"}).code, 0);
  EXPECT_EQ(tune(d, {"tell", "c", "1", "+2.5e-3"}).code, 0);
  EXPECT_EQ(state_of(d / "c")["study"]["trials"][1]["value"].as<double>(), 2.5e-3);
}

// `tune export -o DIR` spoke of "a state file", `-o /dev/stdout` into a pipe of
// /proc/self/fd/pipe:[...]; `-o -` wrote a file named '-'.
TEST(TunePolish, ExportToADirectoryOrADeviceIsRefusedInTheTablesTermsAndDashIsStdout) {
  const fs::path d = ask_tell_campaign("polish-export-target");
  ASSERT_EQ(tune(d, {"tell", "c", "0", "0.5"}).code, 0);
  const Result to_dir = tune(d, {"export", "c", "-o", "c"});
  EXPECT_EQ(to_dir.code, 2);
  EXPECT_EQ(to_dir.err, "tune export: -o c is a directory, not a regular file; name a file (written whole, "
                        "atomically), or leave out -o (or give -o -) for stdout\n");
  const Result to_device = tune(d, {"export", "c", "-o", "/dev/null"});
  EXPECT_EQ(to_device.code, 2);
  EXPECT_NE(to_device.err.find("-o /dev/null is a pipe, a socket or a device, not a regular file"), std::string::npos)
      << to_device.err;
  const Result dash = tune(d, {"export", "c", "-o", "-"});
  EXPECT_EQ(dash.code, 0) << dash.err;
  EXPECT_EQ(dash.out, tune(d, {"export", "c"}).out);
  EXPECT_FALSE(fs::exists(d / "-"));
}

// A reason of two lines put its second line at the margin of tune status's table, and a choice with a
// line break split the configuration over two rows.
TEST(TunePolish, StatusKeepsAMultiLineReasonAndAChoiceWithALineBreakInsideItsTable) {
  const fs::path d = fresh_dir("polish-status-lines");
  write(d / "c.yaml", "name: c\nspace:\n  c: {type: categorical, choices: [\"a\\nb\", \"a\\nc\"]}\n"
                      "  x: {type: float, low: 0, high: 1}\n"
                      "budget: {trials: 3}\n");
  ASSERT_EQ(tune(d, {"ask", "c.yaml"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "c", "0", "--failed", "first line\nsecond line"}).code, 0);
  const Result status = tune(d, {"status", "c"});
  ASSERT_EQ(status.code, 0) << status.err;
  const std::size_t row = status.out.find("    0  failed");
  ASSERT_NE(row, std::string::npos) << status.out;
  const std::string table = status.out.substr(row);
  EXPECT_NE(table.find("{c: \"a\\n"), std::string::npos) << table;
  const std::size_t first = table.find("first line\n"), second = table.find("second line");
  ASSERT_NE(first, std::string::npos) << table;
  ASSERT_NE(second, std::string::npos) << table;
  // Both lines of the reason start at the same column.
  const std::size_t first_start = table.rfind('\n', first) + 1, second_start = table.rfind('\n', second) + 1;
  EXPECT_EQ(first - first_start, second - second_start) << table;
  EXPECT_GT(second - second_start, 20u) << table;
}

// tune status said "4 Slurm jobs in flight, no time limit" of a finished campaign whose jobs Slurm
// killed at their executor.time.
TEST(TunePolish, StatusOfASlurmCampaignSaysItsJobsTimeLimitAndAtMostHowManyRun) {
  const fs::path d = fresh_dir("polish-slurm-settings");
  const std::string head = "name: c\ncommand: [train, \"{x}\"]\n" + std::string(kAskTellSpace) + "budget: {trials: 3}\n";
  write(d / "c.yaml", head + "executor: {kind: slurm, workers: 4, time: 1m, partition: low}\n");
  ASSERT_EQ(tune(d, {"ask", "c.yaml"}).code, 0);
  EXPECT_NE(tune(d, {"status", "c"}).out.find("\nruns: up to 4 Slurm jobs at a time (partition low), Slurm time limit "
                                              "1m00s per job, no trial time limit\n"),
            std::string::npos);
  write(d / "t.yaml", "name: t\ncommand: [train, \"{x}\"]\n" + std::string(kAskTellSpace) +
                          "budget: {trials: 3}\nexecutor: {kind: slurm, timeout: 30s}\n");
  ASSERT_EQ(tune(d, {"ask", "t.yaml"}).code, 0);
  const Result status = tune(d, {"status", "t"});
  EXPECT_NE(status.out.find("\nruns: up to 1 Slurm job at a time, time limit 30.0s (grace "), std::string::npos)
      << status.out;
}

// While the Slurm controller did not answer sbatch, tune status showed a trial never submitted as
// "running", with a growing run time and no job.
TEST(TunePolish, StatusShowsATrialNotYetSubmittedToSlurmAsWaiting) {
  const fs::path d = fresh_dir("polish-slurm-unanswered");
  fs::create_directories(d / "bin");
  const auto program = [&](const std::string& name, const std::string& body) {
    write(d / "bin" / name, "#!/bin/sh\n" + body);
    fs::permissions(d / "bin" / name, fs::perms::owner_all);
  };
  program("sbatch", "touch '" + (d / "sbatch-ran").string() + "'\nsleep 2\n"
                    "echo 'sbatch: error: Batch job submission failed: Unable to contact slurm controller' >&2\nexit 1\n");
  program("squeue", "exit 0\n");
  program("scancel", "exit 0\n");
  write(d / "c.yaml", "name: c\ncommand: [train, \"{x}\"]\n" + std::string(kAskTellSpace) +
                          "budget: {trials: 2}\nexecutor: {kind: slurm, poll: 1s}\n");
  const std::string path = (d / "bin").string() + ":" + std::getenv("PATH");
  const pid_t tuner = start(d, {"run", "c.yaml", "--quiet"}, {{"PATH", path}});
  ASSERT_TRUE(wait_until([&] { return fs::exists(d / "sbatch-ran"); }, std::chrono::seconds(20)));
  const Result status = tune(d, {"status", "c"});
  EXPECT_NE(status.out.find("    0  waiting"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("not submitted yet (sbatch under way, or the Slurm controller does not answer"),
            std::string::npos)
      << status.out;
  EXPECT_EQ(status.out.find("pending in the Slurm queue"), std::string::npos) << status.out;
  EXPECT_EQ(tune(d, {"stop", "c"}).code, 0);
  finish(d, tuner);
}

}  // namespace
