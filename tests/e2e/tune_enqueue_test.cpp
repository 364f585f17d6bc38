// `enqueue:` in a campaign file: the configurations a user chose run first, exactly as written,
// then the strategy's; the queue survives between processes; bad entries are refused at their line.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// The toy trainer's log lines "start <id> <x> <y>", in order.
std::vector<std::string> started(const fs::path& log) {
  std::vector<std::string> lines;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("start ", 0) == 0) lines.push_back(line);
  return lines;
}

TEST(TuneEnqueue, EnqueuedConfigurationsRunFirstExactlyAsWritten) {
  const fs::path d = fresh_dir("enqueue");
  // 0.1 and -0.7 are not points the space's own encoding would produce by chance.
  write(d / "c.yaml", quadratic_campaign_with("eq", 6, "{workers: 1}",
                                              "enqueue:\n  - {x: 0.1, y: -0.7}\n  - {y: 0.25, x: -0.5}\n"));
  const Result r = tune(d, {"run", "c.yaml", "--quiet"}, {{"TUNE_TOY_LOG", (d / "toy.log").string()}});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> runs = started(d / "toy.log");
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(runs[0], "start 0 0.1 -0.7");
  EXPECT_EQ(runs[1], "start 1 -0.5 0.25");
  const YAML::Node trials = state_of(d / "eq")["study"]["trials"];
  EXPECT_EQ(trials[0]["source"].as<std::string>(), "enqueued");
  EXPECT_EQ(trials[1]["source"].as<std::string>(), "enqueued");
  EXPECT_DOUBLE_EQ(trials[0]["value"].as<double>(), (0.1 - 0.3) * (0.1 - 0.3) + 0.3 * 0.3 / 4);
  for (std::size_t i = 2; i < 6; ++i) EXPECT_NE(trials[i]["source"].as<std::string>(), "enqueued") << i;
  // The campaign file is the campaign: running it again resumes it, it does not enqueue again.
  const Result again = tune(d, {"run", "c.yaml", "--quiet"}, {{"TUNE_TOY_LOG", (d / "toy.log").string()}});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(started(d / "toy.log").size(), 6u);
}

TEST(TuneEnqueue, AskAndTellHandOutTheQueueAcrossProcessesThenTheStrategys) {
  const fs::path d = fresh_dir("enqueue-ask");
  write(d / "c.yaml", "name: q\n"
                      "space:\n  lr: {type: float, low: 1.0e-5, high: 1, log: true}\n"
                      "  act: {type: categorical, choices: [relu, tanh]}\n"
                      "resolution: {param: epochs, levels: [1, 3, 9], cost: [1, 3, 9]}\n"
                      "strategy: cmets\nbudget: {cost: 100}\n"
                      "enqueue:\n  - {lr: 0.001, act: relu}\n  - {lr: 0.01, act: tanh, epochs: 3}\n");
  const std::vector<std::string> expected{"{act: relu, lr: 0.001}", "{act: tanh, lr: 0.01}"};
  for (int k = 0; k < 3; ++k) {
    const Result a = tune(d, {"ask", k == 0 ? "c.yaml" : "q", "--json"});
    ASSERT_EQ(a.code, 0) << a.err;
    const YAML::Node asked = YAML::Load(a.out);
    const std::string id = asked["trial"].as<std::string>();
    const YAML::Node t = state_of(d / "q")["study"]["trials"][std::stoi(id)];
    if (k < 2) {
      EXPECT_EQ(asked["config"]["lr"].as<std::string>(), k == 0 ? "0.001" : "0.01") << a.out;
      EXPECT_EQ(t["source"].as<std::string>(), "enqueued");
      EXPECT_EQ(t["level"].as<int>(), k == 0 ? 2 : 1);
    } else {
      EXPECT_NE(t["source"].as<std::string>(), "enqueued");
    }
    ASSERT_EQ(tune(d, {"tell", "q", id, "0.5"}).code, 0);
  }
}

// A campaign without a command is driven by ask and tell: tune enqueue said the configuration ran at
// the next ask when the spent trial budget kept it out, and named tune resume, which refuses such a
// campaign.
TEST(TuneEnqueue, ACampaignWithoutACommandIsToldToAskAndHowToRaiseTheBudgetInTheWay) {
  const fs::path d = fresh_dir("enqueue-asked");
  write(d / "c.yaml", "name: q\nspace:\n  x: {type: float, low: 0, high: 1}\nbudget: {trials: 2}\n");
  ASSERT_EQ(tune(d, {"ask", "c.yaml"}).code, 0);
  const Result waiting = tune(d, {"enqueue", "q", "x=0.75"});
  ASSERT_EQ(waiting.code, 0) << waiting.err;
  EXPECT_EQ(waiting.out, "enqueued {x: 0.75} (1 waiting); the next 'tune ask q' hands it out\n");
  const Result next = tune(d, {"ask", "q", "--json"});
  ASSERT_EQ(next.code, 0) << next.err;
  EXPECT_EQ(YAML::Load(next.out)["config"]["x"].as<double>(), 0.75);
  ASSERT_EQ(tune(d, {"tell", "q", "0", "1"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "q", "1", "2"}).code, 0);
  const Result spent = tune(d, {"enqueue", "q", "x=0.25"});
  ASSERT_EQ(spent.code, 0) << spent.err;
  EXPECT_EQ(spent.out,
            "enqueued {x: 0.25} (1 waiting); the budget of 2 trials is spent: 'tune ask q --trials N' raises it to N "
            "trials in all and hands it out\n");
  // What it says works.
  const Result raised = tune(d, {"ask", "q", "--trials", "3", "--json"});
  ASSERT_EQ(raised.code, 0) << raised.err;
  EXPECT_EQ(YAML::Load(raised.out)["config"]["x"].as<double>(), 0.25);
}

TEST(TuneEnqueue, BadEntriesAreRefusedAtTheirLineAndNothingIsCreated) {
  const fs::path d = fresh_dir("enqueue-bad");
  const std::string base = quadratic_campaign_with("bad", 4, "{workers: 1}");
  struct Case {
    std::string extra, fragment;
  };
  const std::vector<Case> cases{
      {"enqueue:\n  - {x: 0.1}\n", "field 'enqueue[0]' at line 10, column 5: parameter 'y' has no value"},
      {"enqueue:\n  - {x: 0.1, y: 0}\n  - {x: 0.1, y: 0, z: 1}\n", "field 'enqueue[1]' at line 11, column 20: unknown parameter 'z'; the space has x, y"},
      {"enqueue:\n  - {x: 5, y: 0}\n", "field 'enqueue[0].x' at line 10, column 9: parameter 'x': value 5 is outside"},
      {"enqueue:\n  - {x: 0.1, y: zero}\n", "field 'enqueue[0].y' at line 10, column 17: expected a number"},
      {"enqueue: {x: 0.1, y: 0}\n", "expected a list of configurations to run first"},
      {"strategy: gpoo\nenqueue:\n  - {x: 0.1, y: 0}\n", "strategy gpoo runs only configurations it chose itself"},
  };
  for (const Case& c : cases) {
    write(d / "c.yaml", base + c.extra);
    const Result r = tune(d, {"run", "c.yaml", "--quiet"});
    EXPECT_EQ(r.code, 1) << c.extra;
    EXPECT_NE(r.err.find("c.yaml"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("line"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.fragment), std::string::npos) << c.extra << r.err;
    EXPECT_FALSE(fs::exists(d / "bad")) << c.extra;
  }
  write(d / "r.yaml", "name: res\nspace:\n  x: {type: float, low: 0, high: 1}\n"
                      "resolution: {param: epochs, levels: [1, 3, 9], cost: [1, 3, 9]}\nstrategy: cmets\n"
                      "budget: {cost: 50}\nenqueue:\n  - {x: 0.5, epochs: 4}\n");
  const Result level = tune(d, {"ask", "r.yaml"});
  EXPECT_EQ(level.code, 1);
  EXPECT_NE(level.err.find("field 'enqueue[0].epochs'"), std::string::npos) << level.err;
  EXPECT_NE(level.err.find("expected one of the resolution's levels [1, 3, 9], found 4"), std::string::npos) << level.err;
  EXPECT_FALSE(fs::exists(d / "res"));
}

TEST(TuneEnqueue, EnqueueCommandAddsAConfigurationTheNextSessionRunsFirst) {
  const fs::path d = fresh_dir("enqueue-cmd");
  write(d / "c.yaml", quadratic_campaign_with("ec", 3, "{workers: 1}"));
  const std::map<std::string, std::string> env{{"TUNE_TOY_LOG", (d / "toy.log").string()}};
  // Created and one trial handed out by ask (run from outside), then told.
  const Result a = tune(d, {"ask", "c.yaml"});
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(tune(d, {"tell", "ec", "0", "1.5"}).code, 0);
  const std::string before = slurp(d / "ec" / "state.yaml");
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> refused{
      {{"x=0.1"}, "tune enqueue: parameter 'y' has no value; give every parameter of the space\n"},
      {{"x=0.1", "y=0", "z=1"}, "tune enqueue: 'z=1': the campaign has no parameter 'z' (it has x, y)\n"},
      {{"x=abc", "y=0"}, "tune enqueue: 'x=abc': 'abc' is not a number, as parameter 'x' needs\n"},
      {{"x", "y=0"}, "tune enqueue: 'x' is not NAME=VALUE (e.g. lr=0.001)\n"},
  };
  for (const Case& c : refused) {
    std::vector<std::string> args{"enqueue", "ec"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const Result r = tune(d, args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, c.err);
  }
  const Result range = tune(d, {"enqueue", "ec", "x=7", "y=0"});
  EXPECT_EQ(range.code, 2);
  EXPECT_NE(range.err.find("'x'"), std::string::npos) << range.err;
  EXPECT_EQ(slurp(d / "ec" / "state.yaml"), before);  // nothing refused was written

  const Result e = tune(d, {"enqueue", "ec", "y=-0.9", "x=0.35"});
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NE(tune(d, {"status", "ec"}).out.find("enqueued: 1 configuration to run before the strategy's next suggestion"),
            std::string::npos);
  const Result r = tune(d, {"resume", "ec", "--quiet"}, env);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> runs = started(d / "toy.log");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], "start 1 0.35 -0.9");
  EXPECT_EQ(state_of(d / "ec")["study"]["trials"][1]["source"].as<std::string>(), "enqueued");
  // The trial budget is spent: the configuration waits for 'tune resume --trials N', which runs it first.
  const Result late = tune(d, {"enqueue", "ec", "x=0", "y=-1"});
  ASSERT_EQ(late.code, 0) << late.err;
  EXPECT_NE(late.out.find("(1 waiting); the budget of 3 trials is spent: 'tune resume ec --trials N' raises it to N "
                          "trials in all and runs it\n"),
            std::string::npos) << late.out;
  ASSERT_EQ(tune(d, {"resume", "ec", "--trials", "5", "--quiet"}, env).code, 0);
  const std::vector<std::string> more = started(d / "toy.log");
  ASSERT_EQ(more.size(), 4u);
  EXPECT_EQ(more[2], "start 3 0 -1");
}

// A campaign that stopped because its cost budget was spent refused every enqueue ("nothing more
// runs in it"), although a cheap run still fit what was left and the study hands out enqueued
// configurations, budgets permitting. ei runs full runs (cost 9) only: after one, 1.5 of 10.5 is left.
TEST(TuneEnqueue, ACampaignThatSpentItsCostBudgetStillRunsAnEnqueuedRunThatFits) {
  const fs::path d = fresh_dir("enqueue-cost");
  write(d / "c.yaml", "name: cb\ncommand: [echo, \"objective=0.5\"]\nspace:\n  x: {type: float, low: 0, high: 1}\n"
                      "resolution: {param: epochs, levels: [1, 3, 9], cost: [1, 3, 9]}\n"
                      "strategy: ei\nbudget: {cost: 10.5}\n");
  ASSERT_EQ(tune(d, {"ask", "c.yaml"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "cb", "0", "0.5"}).code, 0);
  const Result spent = tune(d, {"ask", "cb"});
  ASSERT_NE(spent.err.find("the campaign is finished, nothing more to hand out: cost budget exhausted"), std::string::npos)
      << spent.err;
  const Result e = tune(d, {"enqueue", "cb", "x=0.25", "epochs=1"});
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("'tune resume cb' runs it if it fits the 1.5 left of the cost budget; 'tune resume cb "
                       "--cost-budget B' raises the budget to B"),
            std::string::npos)
      << e.out;
  // The tuner runs it (it asked no more of a finished study, the queue included).
  ASSERT_EQ(tune(d, {"resume", "cb", "--quiet"}).code, 0);
  YAML::Node trials = state_of(d / "cb")["study"]["trials"];
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[1]["source"].as<std::string>(), "enqueued");
  EXPECT_EQ(trials[1]["config"]["x"].as<double>(), 0.25);
  EXPECT_EQ(trials[1]["level"].as<int>(), 0);
  EXPECT_EQ(trials[1]["status"].as<std::string>(), "complete");
  // A full run does not fit the 0.5 left: enqueued, it waits, and nothing runs.
  ASSERT_EQ(tune(d, {"enqueue", "cb", "x=0.75"}).code, 0);
  const Result full = tune(d, {"resume", "cb"});
  EXPECT_EQ(full.code, 0) << full.err;
  EXPECT_NE((full.out + full.err).find("does not fit the remaining budget"), std::string::npos) << full.out << full.err;
  EXPECT_EQ(state_of(d / "cb")["study"]["trials"].size(), 2u);
}

}  // namespace
