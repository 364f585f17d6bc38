// Multi-resolution campaigns as a user meets them (dogfood): the inline form declaring a resolution,
// cmets without one, what tune ask / tell / enqueue say on a resolution campaign, and a cost budget
// spent without a single full run.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Writes NAME.yaml, a campaign of one parameter x in [0, 1] with the `rest` of its keys, and creates
// it with tune ask (which hands out trial 0).
Result ask_new_campaign(const fs::path& d, const std::string& name, const std::string& rest) {
  write(d / (name + ".yaml"), "name: " + name + "\nspace:\n  x: {type: float, low: 0, high: 1}\n" + rest);
  return tune(d, {"ask", name + ".yaml"});
}

// Per level index, how many trials of the state's study ran at it.
std::map<int, int> trials_per_level(const fs::path& dir) {
  std::map<int, int> n;
  for (const YAML::Node& t : state_of(dir)["study"]["trials"]) ++n[t["level"] ? t["level"].as<int>() : -1];
  return n;
}

// An argument NAME~levels(...) declares the resolution in the inline form (there was no way to, and
// `--strategy cmets` ran every trial in full): the trial gets each level's value as {epochs}, which
// the toy trainer checks against $TUNE_RESOLUTION (exit 2 otherwise), costs are measured, and
// --cost-budget is the limit, with no trial limit unless --trials is given.
TEST(TuneResolutionDogfood, InlineLevelsDeclareTheResolutionAndCostBudgetItsBudget) {
  const fs::path d = fresh_dir("dogfood-inline-levels");
  const std::map<std::string, std::string> env{{"MULTIRES_SLEEP", "0.02"}};
  const Result r = tune(d,
                        {"run", "--name", "il", "--strategy", "cmets", "--objective", "loss", "--cost-budget", "1.5",
                         "--workers", "2", "--quiet", "--", (kTrainers / "multires.sh").string(), "--x~uniform(-1,1)",
                         "--y~uniform(-3,1)", "--epochs~levels(1,3,9)"},
                        env);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(has(r.err, "note:")) << r.err;  // a resolution: nothing to warn about
  const YAML::Node c = state_of(d / "il")["campaign"];
  EXPECT_EQ(c["resolution"]["param"].as<std::string>(), "epochs");
  EXPECT_EQ(c["resolution"]["levels"].as<std::vector<double>>(), (std::vector<double>{1, 3, 9}));
  EXPECT_EQ(c["resolution"]["cost"].as<std::string>(), "measured");
  EXPECT_DOUBLE_EQ(c["budget"]["cost"].as<double>(), 1.5);
  EXPECT_FALSE(c["budget"]["trials"]) << "a cost budget alone sets no trial limit, as in a campaign file";
  // The command as the trial got it: the placeholder in place of the levels() argument.
  const std::vector<std::string> command = c["command"].as<std::vector<std::string>>();
  ASSERT_EQ(command.size(), 7u);
  EXPECT_EQ(command[5], "--epochs");
  EXPECT_EQ(command[6], "{epochs}");
  for (const YAML::Node& t : state_of(d / "il")["study"]["trials"])
    EXPECT_EQ(t["status"].as<std::string>(), "complete") << t;  // argv and TUNE_RESOLUTION agreed
  EXPECT_GE(trials_per_level(d / "il").size(), 2u) << "cmets chose between the levels";

  // With --trials as well, both limits hold.
  const Result both = tune(d, {"run", "--name", "both", "--strategy", "cmets", "--objective", "loss", "--cost-budget",
                               "100", "--trials", "4", "--quiet", "--", (kTrainers / "multires.sh").string(),
                               "--x~uniform(-1,1)", "--y~uniform(-3,1)", "--epochs~levels(1,3,9)"});
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_EQ(state_of(d / "both")["campaign"]["budget"]["trials"].as<int>(), 4);
  EXPECT_EQ(state_of(d / "both")["study"]["trials"].size(), 4u);
}

TEST(TuneResolutionDogfood, InlineLevelsAreCheckedAsACampaignFilesAre) {
  const fs::path d = fresh_dir("dogfood-inline-refusals");
  const std::string trainer = (kTrainers / "multires.sh").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases{
      {{"--x~uniform(-1,1)", "--epochs~levels(9,3)"},
       "argument '--epochs~levels(9,3)': resolution: 'levels' must be strictly increasing"},
      // validate()'s message gave the value as std::to_string's "-1.000000".
      {{"--x~uniform(-1,1)", "--epochs~levels(1,-1)"}, "level 1 has value -1; levels must be finite and > 0"},
      {{"--x~uniform(-1,1)", "--epochs~levels(1,x)"}, "level 'x' of levels(...) is not a finite number"},
      {{"--x~uniform(-1,1)", "--epochs~levels(1,3)", "--frac~levels(0.5,1)"},
       "the resolution is already declared by argument '--epochs~levels(1,3)'"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"run", "--name", "bad", "--", trainer};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const Result r = tune(d, args);
    EXPECT_EQ(r.code, 2) << c.message;
    EXPECT_TRUE(has(r.err, c.message)) << r.err;
    EXPECT_FALSE(fs::exists(d / "bad")) << c.message;
  }
  // A cost budget needs a resolution; beside a campaign file it is the file's budget.cost.
  const Result no_levels =
      tune(d, {"run", "--name", "bad", "--cost-budget", "5", "--", trainer, "--x~uniform(-1,1)"});
  EXPECT_EQ(no_levels.code, 2);
  EXPECT_TRUE(has(no_levels.err, "--cost-budget 5: a cost budget counts the costs of resolution levels")) << no_levels.err;
  write(d / "c.yaml", quadratic_campaign_with("c", 2, "{workers: 1}"));
  const Result with_file = tune(d, {"run", "c.yaml", "--cost-budget", "5"});
  EXPECT_EQ(with_file.code, 2);
  EXPECT_TRUE(has(with_file.err, "--cost-budget is an option of the inline form")) << with_file.err;
  EXPECT_TRUE(has(with_file.err, "set 'budget.cost' in c.yaml")) << with_file.err;
}

// `strategy: cmets` without a resolution ran every trial in full without a word; it now says so
// when the campaign is made (tune run without --quiet, or tune ask), and how to declare levels. Other
// strategies, and cmets with levels, say nothing. (The inline form's `--strategy cmets` without levels
// is refused: tests/e2e/tune_options_dogfood_test.cpp.)
TEST(TuneResolutionDogfood, CmetsWithoutAResolutionSaysEveryTrialIsAFullRun) {
  const fs::path d = fresh_dir("dogfood-cmets-no-resolution");
  const std::string trainer = (kTrainers / "quadratic.sh").string();
  const std::string file = "command: [" + trainer + ", \"{x}\", \"{y}\"]\nspace:\n  x: {type: float, low: -1, high: 1}\n"
                           "  y: {type: float, low: -3, high: 1}\nobjective: loss\nstrategy: cmets\n";
  write(d / "n.yaml", "name: n\n" + file + "budget: {trials: 2}\n");
  const Result r = tune(d, {"run", "n.yaml"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.err, "tune run: note: strategy cmets without a resolution runs every trial in full")) << r.err;
  EXPECT_TRUE(has(r.err, "--epochs~'levels(1,3,9,27)'")) << r.err;
  // Resumed, it is not said again; --quiet prints nothing but errors.
  const Result again = tune(d, {"resume", "n"});
  EXPECT_FALSE(has(again.err, "note:")) << again.err;
  write(d / "q.yaml", "name: q\n" + file + "budget: {trials: 1}\n");
  const Result quiet = tune(d, {"run", "q.yaml", "--quiet"});
  EXPECT_EQ(quiet.out + quiet.err, "");
  const Result ask = ask_new_campaign(d, "a", "strategy: cmets\n");
  ASSERT_EQ(ask.code, 0) << ask.err;
  EXPECT_TRUE(has(ask.err, "tune ask: note: strategy cmets without a resolution")) << ask.err;
  const Result ei = tune(d, {"run", "--name", "e", "--objective", "loss", "--trials", "1", "--quiet", "--", trainer,
                             "--x~uniform(-1,1)", "--y~uniform(-3,1)"});
  ASSERT_EQ(ei.code, 0) << ei.err;
  EXPECT_FALSE(has(ei.err, "note:")) << ei.err;
}

// The converse: a resolution with a strategy that does not choose levels runs every trial at the
// full run. tune init's file names `strategy: ei`, so a user who uncommented its `resolution:` line
// (and budget.cost) got every trial at 27 epochs and no word of it; the campaign's creation now says
// so, and which strategy chooses the levels. cmes, flat at the full run by design, says nothing.
TEST(TuneResolutionDogfood, AResolutionWithAStrategyThatRunsEveryTrialInFullSaysSo) {
  const fs::path d = fresh_dir("dogfood-resolution-flat-strategy");
  ASSERT_EQ(tune(d, {"init", "campaign.yaml"}).code, 0);
  std::string text = slurp(d / "campaign.yaml");
  const std::string commented = "# resolution: {param: epochs";
  ASSERT_TRUE(has(text, commented)) << text;
  text.replace(text.find(commented), 2, "");
  write(d / "campaign.yaml", text);
  const Result init = tune(d, {"ask", "campaign.yaml"});
  ASSERT_EQ(init.code, 0) << init.err;
  EXPECT_EQ(YAML::Load(init.out)["resolution"]["value"].as<double>(), 27);
  EXPECT_TRUE(has(init.err, "tune ask: note: strategy ei runs every trial at the full run (epochs 27)")) << init.err;
  EXPECT_TRUE(has(init.err, "strategy: cmets")) << init.err;
  const std::string levels = "resolution: {param: epochs, levels: [1, 3, 9, 27], cost: [1, 3, 9, 27]}\n";
  const Result flat = ask_new_campaign(d, "r", levels + "strategy: random\n");
  ASSERT_EQ(flat.code, 0) << flat.err;
  EXPECT_TRUE(has(flat.err, "note: strategy random runs every trial at the full run (epochs 27)")) << flat.err;
  for (const std::string strategy : {"cmets", "cmes"}) {
    const Result quiet = ask_new_campaign(d, strategy, levels + "strategy: " + strategy + "\n");
    ASSERT_EQ(quiet.code, 0) << quiet.err;
    EXPECT_FALSE(has(quiet.err, "note:")) << strategy << ": " << quiet.err;
  }
}

std::string measured_campaign(const std::string& name, double budget) {
  return "name: " + name + "\nspace:\n  x: {type: float, low: -1, high: 1}\n"
         "resolution: {param: epochs, levels: [1, 3, 9, 27], cost: measured}\n"
         "objective: loss\nstrategy: cmets\nbudget: {cost: " + std::to_string(budget) + "}\n";
}

// Drives a campaign by hand: asks until nothing is handed out, telling each trial (x - 0.3)^2 + 1 /
// epochs at a cost of `seconds_per_epoch` per epoch; returns the last ask.
Result ask_and_tell_until_done(const fs::path& d, const std::string& dir, double seconds_per_epoch) {
  for (int i = 0; i < 200; ++i) {
    const Result a = tune(d, {"ask", dir});
    if (a.out.empty()) return a;
    const YAML::Node n = YAML::Load(a.out);
    const double x = n["config"]["x"].as<double>(), epochs = n["resolution"]["value"].as<double>();
    char value[64], cost[64];
    std::snprintf(value, sizeof value, "%.17g", (x - 0.3) * (x - 0.3) + 1 / epochs);
    std::snprintf(cost, sizeof cost, "%.17g", seconds_per_epoch * epochs);
    const Result t = tune(d, {"tell", dir, n["trial"].as<std::string>(), value, "--cost", cost});
    if (t.code != 0) return t;
  }
  return {};
}

// What tune ask, tell and enqueue say on a campaign with measured costs: the awaited result is told
// with --cost (which tell then requires), enqueue lists the levels a value must be one of (it gave
// "1 ... 27", a range that 2 is in) and says at which level the configuration will run.
TEST(TuneResolutionDogfood, AskTellAndEnqueueNameTheCostAndTheLevels) {
  const fs::path d = fresh_dir("dogfood-ask-enqueue");
  write(d / "m.yaml", measured_campaign("m", 200));
  ASSERT_EQ(tune(d, {"ask", "m.yaml"}).code, 0);
  const Result waiting = tune(d, {"ask", "m"});
  EXPECT_EQ(waiting.code, 6);
  EXPECT_TRUE(has(waiting.err, "tell it with 'tune tell m 0 VALUE --cost SECONDS'")) << waiting.err;
  // tune status says why one trial runs alone (and its cost is unknown) before the first cost is in.
  const std::string one_at_a_time = "the levels' costs are unknown until the first run's time is in: until then one "
                                    "trial runs at a time";
  EXPECT_TRUE(has(tune(d, {"status", "m"}).out, one_at_a_time));
  const Result without_cost = tune(d, {"tell", "m", "0", "0.5"});
  EXPECT_EQ(without_cost.code, 2) << "the hint is needed: tell refuses a result without its cost";
  ASSERT_EQ(tune(d, {"tell", "m", "0", "0.5", "--cost", "1"}).code, 0);
  EXPECT_FALSE(has(tune(d, {"status", "m"}).out, one_at_a_time));

  const Result bad = tune(d, {"enqueue", "m", "x=0.1", "epochs=2"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "tune enqueue: 'epochs=2': expected one of the levels of epochs, [1, 3, 9, 27]\n");
  const Result cheap = tune(d, {"enqueue", "m", "x=0.1", "epochs=3"});
  ASSERT_EQ(cheap.code, 0) << cheap.err;
  EXPECT_TRUE(has(cheap.out, "enqueued {x: 0.1} at epochs 3 (1 waiting)")) << cheap.out;
  const Result full = tune(d, {"enqueue", "m", "x=0.2"});
  ASSERT_EQ(full.code, 0) << full.err;
  EXPECT_TRUE(has(full.out, "enqueued {x: 0.2} at the full run (epochs 27) (2 waiting)")) << full.out;
  // Levels as the trial receives them, never 1e+07.
  ASSERT_EQ(ask_new_campaign(d, "r", "resolution: {param: rounds, levels: [1000, 1e7], cost: [1, 10]}\nstrategy: cmets\n")
                .code,
            0);
  EXPECT_EQ(tune(d, {"enqueue", "r", "x=0.5", "rounds=5"}).err,
            "tune enqueue: 'rounds=5': expected one of the levels of rounds, [1000, 10000000]\n");
  EXPECT_TRUE(has(tune(d, {"enqueue", "r", "x=0.5"}).out, "at the full run (rounds 10000000)"));
  const Result first = tune(d, {"ask", "m"});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(YAML::Load(first.out)["resolution"]["value"].as<double>(), 3);

  // A campaign file's enqueue entry is refused with the same list.
  write(d / "e.yaml", measured_campaign("e", 200) + "enqueue:\n  - {x: 0.5, epochs: 4}\n");
  const Result file = tune(d, {"ask", "e.yaml"});
  EXPECT_EQ(file.code, 1);
  EXPECT_TRUE(has(file.err, "expected one of the resolution's levels [1, 3, 9, 27], found 4")) << file.err;
}

// Once a level is measured, the first run at a level not yet run has a guessed cost (from the
// measured ones): a trainer whose full run took 3 s where its cheap runs suggested 0.54 s had four
// workers start four full runs on that guess and spend 12.7 of a budget of 5. While such a run is
// out nothing else is handed out: tune ask exits 6 naming the trial it waits for, and tune status
// says why no other trial starts; once the run's cost is told, asking goes on.
TEST(TuneResolutionDogfood, TheFirstRunAtAGuessedLevelRunsAlone) {
  const fs::path d = fresh_dir("dogfood-guessed-level-alone");
  write(d / "g.yaml", measured_campaign("g", 200) + "enqueue:\n  - {x: 0.1, epochs: 1}\n  - {x: 0.2, epochs: 27}\n");
  ASSERT_EQ(tune(d, {"ask", "g.yaml"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "g", "0", "1.5", "--cost", "0.5"}).code, 0);
  const Result full = tune(d, {"ask", "g"});
  ASSERT_EQ(full.code, 0) << full.err;
  ASSERT_EQ(YAML::Load(full.out)["resolution"]["value"].as<double>(), 27);
  const Result waiting = tune(d, {"ask", "g"});
  EXPECT_EQ(waiting.code, 6) << waiting.out;
  EXPECT_TRUE(has(waiting.err, "waiting for the measured cost of trial 1 at epochs 27, a level whose cost is still a guess"))
      << waiting.err;
  const std::string alone = "trial 1 runs at epochs 27, whose cost is still a guess (no run there has completed): until "
                            "it ends no other trial starts";
  EXPECT_TRUE(has(tune(d, {"status", "g"}).out, alone));
  ASSERT_EQ(tune(d, {"tell", "g", "1", "0.2", "--cost", "20"}).code, 0);
  EXPECT_FALSE(has(tune(d, {"status", "g"}).out, alone));
  const Result next = tune(d, {"ask", "g"});
  EXPECT_EQ(next.code, 0) << next.err;
  EXPECT_EQ(YAML::Load(next.out)["trial"].as<int>(), 2);
}

// A failure whose run time is unknown (a lost node; tune ask's own advice for a trial it could not
// hand out is --failed "lost") may be told without --cost on a campaign that measures its costs
// against a budget, as Study::fail allows: it was refused for want of a cost no one knows. It is
// charged its level's mean measured cost. A value still needs its cost.
TEST(TuneResolutionDogfood, AFailureOfUnknownRunTimeIsToldWithoutACost) {
  const fs::path d = fresh_dir("dogfood-failed-without-cost");
  write(d / "m.yaml", measured_campaign("m", 200));
  ASSERT_EQ(tune(d, {"ask", "m.yaml"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "m", "0", "0.5", "--cost", "2"}).code, 0);
  const YAML::Node second = YAML::Load(tune(d, {"ask", "m"}).out);
  ASSERT_EQ(second["trial"].as<int>(), 1);
  ASSERT_EQ(second["resolution"]["level"].as<int>(), 0) << "the test needs a second run at level 0";
  const Result value = tune(d, {"tell", "m", "1", "0.5"});
  EXPECT_EQ(value.code, 2);
  EXPECT_TRUE(has(value.err, "give the trial's run time in seconds with --cost SECONDS")) << value.err;
  const Result lost = tune(d, {"tell", "m", "1", "--failed", "lost"});
  ASSERT_EQ(lost.code, 0) << lost.err;
  const YAML::Node t = state_of(d / "m")["study"]["trials"][1];
  EXPECT_EQ(t["status"].as<std::string>(), "failed");
  EXPECT_FALSE(t["cost"]) << "no run time was measured";
  const Result st = tune(d, {"status", "m"});
  EXPECT_TRUE(has(st.out, "cost: 4s spent of the budget 200s")) << st.out;  // 2 s measured + level 0's mean, 2 s
}

// Measured costs cannot be checked against the budget before a run (declared ones are: a budget
// below one full run is refused), so a campaign whose full run costs more than its whole budget
// spent it all on cheap runs and ended as any other, with no full run and no word why. It now says
// that no full run completed and what a full run costs: here 1 s per epoch is told, so level 0
// costs 1 and the unseen full level is guessed proportional to its value, 27 s, above the 20 s
// budget.
TEST(TuneResolutionDogfood, ACostBudgetSpentWithoutAFullRunSaysSoAndWhy) {
  const fs::path d = fresh_dir("dogfood-no-full-run");
  write(d / "s.yaml", measured_campaign("s", 20));
  ASSERT_EQ(tune(d, {"ask", "s.yaml"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "s", "0", "1", "--cost", "1"}).code, 0);
  const Result last = ask_and_tell_until_done(d, "s", 1.0);
  EXPECT_EQ(last.code, 0) << last.err;
  for (const auto& [level, n] : trials_per_level(d / "s")) EXPECT_NE(level, 3) << n << " full runs";
  const std::string why =
      "no full-resolution trial (epochs 27) completed, so 'tune best' recommends from cheaper runs only: a full run "
      "costs 27s (guessed from the cheaper levels), more than the whole budget of 20s";
  EXPECT_TRUE(has(last.err, why)) << last.err;
  EXPECT_TRUE(has(state_of(d / "s")["stop_reason"].as<std::string>(), why));
  const Result st = tune(d, {"status", "s"});
  EXPECT_TRUE(has(st.out, "last session ended: ")) << st.out;
  EXPECT_TRUE(has(st.out, why)) << st.out;

  // A campaign that ran a full run ends as before.
  write(d / "ok.yaml", measured_campaign("ok", 60));
  ASSERT_EQ(tune(d, {"ask", "ok.yaml"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "ok", "0", "1", "--cost", "0.1"}).code, 0);
  const Result ok = ask_and_tell_until_done(d, "ok", 0.1);
  EXPECT_EQ(ok.code, 0) << ok.err;
  ASSERT_GT(trials_per_level(d / "ok")[3], 0);
  EXPECT_FALSE(has(ok.err, "no full-resolution trial")) << ok.err;

  // The tuner's own end says it too (runs of 0.05 s per epoch against 1 s: a full run of 30 epochs
  // costs 1.5 s).
  write(d / "t.yaml", "name: t\ncommand: [" + (kTrainers / "multires.sh").string() +
                          ", \"{x}\", \"{y}\", --epochs, \"{epochs}\"]\n"
                          "space:\n  x: {type: float, low: -1, high: 1}\n  y: {type: float, low: -3, high: 1}\n"
                          "resolution: {param: epochs, levels: [1, 30]}\nobjective: loss\nstrategy: cmets\n"
                          "budget: {cost: 1}\n");
  const Result run = tune(d, {"run", "t.yaml"}, {{"MULTIRES_SLEEP", "0.05"}, {"MULTIRES_TOP", "30"}});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(trials_per_level(d / "t").count(1), 0u) << "no full run fits the budget";
  const std::string said = run.out + run.err;
  EXPECT_TRUE(has(said, "ended: the cost budget is spent")) << said;
  EXPECT_TRUE(has(said, "no full-resolution trial (epochs 30) completed")) << said;
  EXPECT_TRUE(has(said, "more than the whole budget of 1s")) << said;

  // A larger trial budget does not continue a campaign whose cost budget is spent: resume --trials
  // ended the session at once and left the campaign, which had no trial limit, with one.
  for (const std::vector<std::string>& raise : {std::vector<std::string>{"resume", "t", "--trials", "50"},
                                                std::vector<std::string>{"ask", "s", "--trials", "50"}}) {
    const Result r = tune(d, raise);
    EXPECT_EQ(r.code, 2) << raise[0] << r.out << r.err;
    EXPECT_TRUE(has(r.err, "--trials 50: " + raise[1] + " is finished (cost budget exhausted")) << r.err;
    EXPECT_FALSE(state_of(d / raise[1])["campaign"]["budget"]["trials"]) << raise[0];
  }
}

// tune status's table of levels stays aligned when a level's value is long (a data fraction of 1/3):
// its column was as wide as the parameter's name.
TEST(TuneResolutionDogfood, StatusLevelTableStaysAlignedWithLongLevelValues) {
  const fs::path d = fresh_dir("dogfood-status-columns");
  ASSERT_EQ(ask_new_campaign(d, "f",
                             "resolution: {param: frac, levels: [0.1, 0.3333333333333333, 1], cost: [1, 3, 10]}\n"
                             "strategy: cmets\nbudget: {cost: 50}\n")
                .code,
            0);
  const Result st = tune(d, {"status", "f"});
  ASSERT_EQ(st.code, 0) << st.err;
  std::vector<std::string> table;
  bool in_table = false;
  for (std::size_t at = 0, end; at < st.out.size(); at = end + 1) {
    end = st.out.find('\n', at);
    if (end == std::string::npos) end = st.out.size();
    const std::string line = st.out.substr(at, end - at);
    if (line.rfind("resolution frac", 0) == 0) {
      in_table = true;
    } else if (in_table && line.rfind("  ", 0) == 0) {
      table.push_back(line);
    } else {
      in_table = false;
    }
  }
  ASSERT_EQ(table.size(), 4u) << st.out;  // the header and a row per level
  EXPECT_TRUE(has(table[2], "0.3333333333333333")) << st.out;
  for (const std::string& row : table) EXPECT_EQ(row.size(), table[0].size()) << st.out;
}


// ei with a resolution runs every trial in full and recommends, as without one, the trial whose
// configuration its model believes best; tune best printed that configuration without the trial
// it is (and did not withhold a poorly fitting model's choice, as tune best does without levels).
TEST(TuneResolutionDogfood, EiWithAResolutionRecommendsATrialAndNamesIt) {
  const fs::path d = fresh_dir("dogfood-ei-best");
  ASSERT_EQ(ask_new_campaign(d, "e",
                             "resolution: {param: epochs, levels: [1, 3], cost: [1, 3]}\n"
                             "objective: {name: loss}\nstrategy: ei\nbudget: {cost: 30}\n")
                .code,
            0);
  for (int i = 0; i < 8; ++i) {
    if (i > 0) {
      ASSERT_EQ(tune(d, {"ask", "e"}).code, 0);
    }
    const double x = state_of(d / "e")["study"]["trials"][i]["config"]["x"].as<double>();
    char value[64];
    std::snprintf(value, sizeof value, "%.17g", (x - 0.3) * (x - 0.3));
    ASSERT_EQ(tune(d, {"tell", "e", std::to_string(i), value}).code, 0);
  }
  for (const bool json : {false, true}) {
    std::vector<std::string> args{"best", "e"};
    if (json) args.push_back("--json");
    const Result best = tune(d, args);
    ASSERT_EQ(best.code, 0) << best.err;
    const YAML::Node rec = YAML::Load(best.out)["recommendation"];
    ASSERT_TRUE(rec && rec["trial"]) << best.out;
    const YAML::Node trial = state_of(d / "e")["study"]["trials"][rec["trial"].as<std::size_t>()];
    EXPECT_EQ(trial["config"]["x"].as<double>(), rec["config"]["x"].as<double>()) << best.out;
    EXPECT_EQ(trial["status"].as<std::string>(), "complete");
    EXPECT_EQ(trial["level"].as<int>(), 1) << "a full-resolution trial";
    if (!json) {
      EXPECT_TRUE(has(best.out, "the model recommends trial " + rec["trial"].as<std::string>() + "'s configuration"))
          << best.out;
    }
  }
}

}  // namespace

namespace {

// A campaign that spent its cost budget had no way on: `--trials` does not change a spent cost
// budget (and is refused, now naming the way), and an edited budget.cost is refused as a changed
// campaign. `tune resume DIR --cost-budget B` continues it with B in all; a B not above the present
// budget is refused with nothing written.
TEST(TuneResolutionDogfood, ASpentCostBudgetIsRaisedByResume) {
  const fs::path d = fresh_dir("dogfood-raise-cost");
  write(d / "c.yaml", "name: rc\ncommand: [" + (kTrainers / "quadratic.sh").string() +
                          ", \"{x}\", \"{y}\"]\n"
                          "space:\n  x: {type: float, low: -1, high: 1}\n  y: {type: float, low: -3, high: 1}\n"
                          "objective: {name: loss}\nstrategy: {name: cmets}\n"
                          "resolution: {param: epochs, levels: [1, 3], cost: [1, 3]}\n"
                          "budget: {cost: 12}\nexecutor: {workers: 1}\n");
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const auto spent = [&] {
    double total = 0;
    for (const YAML::Node& t : state_of(d / "rc")["study"]["trials"]) total += t["level"].as<int>() == 0 ? 1 : 3;
    return total;
  };
  const double first = spent();
  ASSERT_LE(first, 12.0);
  ASSERT_GT(first, 9.0);  // within one full run of the budget
  const std::string before = slurp(d / "rc" / "state.yaml");

  const Result trials = tune(d, {"resume", "rc", "--trials", "100", "--quiet"});
  EXPECT_EQ(trials.code, 2) << trials.err;
  EXPECT_TRUE(has(trials.err, "'--cost-budget B' raises the cost budget to B")) << trials.err;
  const Result lower = tune(d, {"resume", "rc", "--cost-budget", "12", "--quiet"});
  EXPECT_EQ(lower.code, 2) << lower.err;
  EXPECT_TRUE(has(lower.err, "give the new total, more than the present budget of 12")) << lower.err;
  EXPECT_EQ(slurp(d / "rc" / "state.yaml"), before) << "a refused raise wrote the state";

  const Result raised = tune(d, {"resume", "rc", "--cost-budget", "30", "--quiet"});
  ASSERT_EQ(raised.code, 0) << raised.err;
  const YAML::Node s = state_of(d / "rc");
  EXPECT_DOUBLE_EQ(s["campaign"]["budget"]["cost"].as<double>(), 30.0);
  EXPECT_GT(spent(), first + 9.0) << "the raised budget was not spent";
  EXPECT_LE(spent(), 30.0);
  EXPECT_TRUE(has(s["stop_reason"].as<std::string>(), "the cost budget is spent")) << s["stop_reason"];
  // tune ask raises it too; a campaign without a cost budget has none to raise.
  const Result ask = tune(d, {"ask", "rc", "--cost-budget", "33"});
  EXPECT_EQ(ask.code, 0) << ask.err;
  EXPECT_TRUE(has(ask.out, "trial:")) << ask.out;
  write(d / "n.yaml", quadratic_campaign_with("nc", 2, "{workers: 1}"));
  ASSERT_EQ(tune(d, {"run", "n.yaml", "--quiet"}).code, 0);
  const Result none = tune(d, {"resume", "nc", "--cost-budget", "5"});
  EXPECT_EQ(none.code, 2) << none.err;
  EXPECT_TRUE(has(none.err, "has no cost budget to raise")) << none.err;
}

// A campaign that declares a resolution and names no strategy got ei, which runs every trial at the
// full run: the levels declared were never used, and nothing said so. It now gets cmets, in a
// campaign file and in the inline form; a strategy named explicitly is kept.
TEST(TuneResolutionDogfood, AResolutionWithoutAStrategyGetsCmets) {
  const fs::path d = fresh_dir("dogfood-default-cmets");
  const std::string resolution = "resolution: {param: epochs, levels: [1, 3], cost: [1, 3]}\nbudget: {cost: 12}\n";
  ASSERT_EQ(ask_new_campaign(d, "f", resolution).code, 0);
  EXPECT_EQ(state_of(d / "f")["campaign"]["strategy"]["name"].as<std::string>(), "cmets");
  EXPECT_EQ(state_of(d / "f")["study"]["strategy"]["name"].as<std::string>(), "cmets");
  ASSERT_EQ(ask_new_campaign(d, "g", resolution + "strategy: ei\n").code, 0);
  EXPECT_EQ(state_of(d / "g")["campaign"]["strategy"]["name"].as<std::string>(), "ei");
  ASSERT_EQ(ask_new_campaign(d, "n", "budget: {trials: 3}\n").code, 0);
  EXPECT_EQ(state_of(d / "n")["campaign"]["strategy"]["name"].as<std::string>(), "ei") << "no resolution: ei";
  const std::string trainer = (kTrainers / "multires.sh").string();
  const std::map<std::string, std::string> env{{"MULTIRES_SLEEP", "0"}};
  const Result inline_run = tune(d, {"run", "--name", "i", "--objective", "loss", "--trials", "4", "--quiet", "--", trainer,
                                     "--x~uniform(-1,1)", "--y~uniform(-3,1)", "--epochs~levels(1,3,9)"},
                                 env);
  ASSERT_EQ(inline_run.code, 0) << inline_run.err;
  EXPECT_EQ(state_of(d / "i")["campaign"]["strategy"]["name"].as<std::string>(), "cmets");
  const Result inline_ei = tune(d, {"run", "--name", "j", "--objective", "loss", "--trials", "2", "--strategy", "ei",
                                    "--quiet", "--", trainer, "--x~uniform(-1,1)", "--y~uniform(-3,1)",
                                    "--epochs~levels(1,3,9)"},
                                env);
  ASSERT_EQ(inline_ei.code, 0) << inline_ei.err;
  EXPECT_EQ(state_of(d / "j")["campaign"]["strategy"]["name"].as<std::string>(), "ei");
}


// One executor.timeout for every level: a one-epoch run that hung waited the full run's limit.
// resolution.timeout gives each level its own; here a hung run at epochs 1 is stopped after 1 s while
// the campaign's timeout is a minute, and a full run at epochs 2 completes.
TEST(TuneResolutionDogfood, EachLevelHasItsOwnTimeout) {
  const fs::path d = fresh_dir("dogfood-level-timeouts");
  const fs::path trainer = write_script(
      d, "hangs_at_one_epoch.sh",
      "#!/bin/sh\nif [ \"$2\" = 1 ]; then exec sleep 60; fi\necho \"loss=$1\"\n");
  const std::string head = "name: lt\ncommand: [" + trainer.string() +
                           ", \"{x}\", \"{epochs}\"]\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: loss\n";
  write(d / "c.yaml", head +
                          "resolution: {param: epochs, levels: [1, 2], cost: [1, 2], timeout: [1s, 30s]}\n"
                          "strategy: random\nbudget: {trials: 2}\nexecutor: {workers: 1, timeout: 1m, grace: 200ms}\n"
                          "enqueue:\n  - {x: 0.25, epochs: 1}\n  - {x: 0.5, epochs: 2}\n");
  const Result r = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  const YAML::Node state = state_of(d / "lt");
  const YAML::Node runs = state["runs"];
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]["status"].as<std::string>(), "failed") << runs[0];
  EXPECT_EQ(runs[0]["failure_reason"].as<std::string>(), "timed out after 1.0s") << runs[0];
  EXPECT_EQ(runs[0]["exit"]["kind"].as<std::string>(), "timeout") << runs[0];
  EXPECT_EQ(runs[1]["status"].as<std::string>(), "complete") << runs[1];
  EXPECT_EQ(state["campaign"]["resolution"]["timeout"][0].as<std::string>(), "1s");
  EXPECT_EQ(state["campaign"]["resolution"]["timeout"][1].as<std::string>(), "30s");
  // The file is the campaign's: running it again continues it, no key differs.
  EXPECT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  // One limit per level, each a positive duration, at the field's line.
  for (const auto& [timeout, message] : std::vector<std::pair<std::string, std::string>>{
           {"[1s]", "expected one time limit per level (2), such as [1m, 3m, 9m, 30m] for levels [1, 2]"},
           {"[1s, 0s]", "a timeout of zero would stop every trial of its level as it starts"},
           {"[1s, soon]", "expected a duration such as 90s"}}) {
    write(d / "bad.yaml", head + "resolution: {param: epochs, levels: [1, 2], cost: [1, 2], timeout: " + timeout + "}\n");
    const Result bad = tune(d, {"run", "bad.yaml", "--quiet", "--dir", "bad"});
    EXPECT_EQ(bad.code, 1) << timeout;
    EXPECT_NE(bad.err.find("field 'resolution.timeout' at line 6"), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find(message), std::string::npos) << bad.err;
    EXPECT_FALSE(fs::exists(d / "bad")) << timeout;
  }
}

}  // namespace

