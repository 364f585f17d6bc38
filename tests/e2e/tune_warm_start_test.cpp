// `warm_start:` with the real `tune`: a campaign made from an earlier one's directory starts with
// exactly the earlier results that fit its space (checked against the earlier campaign's own state
// file), runs its own trial budget on top of them, never imports twice, and refuses what cannot
// carry over before anything is written.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

std::size_t count_lines_with(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The quadratic trainer's campaign on x in [x_low, x_high], y in [-3, 1].
std::string quadratic(const std::string& name, double x_high, int trials, const std::string& extra = "") {
  return "name: " + name + "\ncommand: [" + (kTrainers / "quadratic.sh").string() +
         ", \"{x}\", \"{y}\"]\n"
         "space:\n  x: {type: float, low: -1, high: " + std::to_string(x_high) + "}\n  y: {type: float, low: -3, high: 1}\n"
         "objective: loss\nbudget: {trials: " + std::to_string(trials) + "}\nseed: 3\n" + extra;
}

TEST(TuneWarmStart, AWidenedSpaceStartsFromTheEarlierResultsAndRunsItsOwnBudget) {
  const fs::path d = fresh_dir("warm-start-widened");
  // The earlier campaign searched x <= 0 only; the optimum is at x = 0.3.
  write(d / "narrow.yaml", quadratic("narrow", 0.0, 8));
  ASSERT_EQ(tune(d, {"run", "narrow.yaml", "--quiet"}).code, 0);
  write(d / "wide.yaml", quadratic("wide", 1.0, 4, "warm_start: narrow\n"));
  const Result r = tune(d, {"run", "wide.yaml", "--quiet"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("warm start: 8 of the 8 trials of " + (d / "narrow").string()), std::string::npos) << r.err;

  const YAML::Node before = state_of(d / "narrow")["study"]["trials"];
  const YAML::Node state = state_of(d / "wide");
  const YAML::Node trials = state["study"]["trials"];
  ASSERT_EQ(trials.size(), 12u);  // the 8 imported, then the campaign's own budget of 4
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(trials[i]["source"].as<std::string>(), "imported");
    EXPECT_EQ(trials[i]["imported_from"].as<std::string>(), (d / "narrow").string() + ", trial " + std::to_string(i));
    EXPECT_EQ(trials[i]["value"].as<double>(), before[i]["value"].as<double>());
    EXPECT_EQ(trials[i]["config"]["x"].as<double>(), before[i]["config"]["x"].as<double>());
    EXPECT_EQ(trials[i]["config"]["y"].as<double>(), before[i]["config"]["y"].as<double>());
    EXPECT_EQ(state["runs"][i]["status"].as<std::string>(), "complete");
  }
  // ei's design is 2 * 2 + 1 = 5 points: the 8 results stand in for it, and no trial of the earlier
  // campaign runs again (its trainer's runs are exactly the own trials).
  for (std::size_t i = 8; i < 12; ++i) {
    EXPECT_EQ(trials[i]["source"].as<std::string>(), "acquisition") << i;
    EXPECT_FALSE(trials[i]["imported_from"]) << i;
    EXPECT_TRUE(fs::exists(d / "wide" / "trials" / std::to_string(i) / "stdout")) << i;
  }
  EXPECT_FALSE(fs::exists(d / "wide" / "trials" / "0" / "stdout"));
  // The model knew the wall at x = 0 was not the optimum: its own trials went past it.
  double best_own = INFINITY;
  for (std::size_t i = 8; i < 12; ++i) best_own = std::min(best_own, trials[i]["value"].as<double>());
  double best_before = INFINITY;
  for (std::size_t i = 0; i < 8; ++i) best_before = std::min(best_before, before[i]["value"].as<double>());
  EXPECT_LT(best_own, best_before);

  const Result status = tune(d, {"status", "wide"});
  EXPECT_NE(status.out.find("trials: 4 complete (and 8 results imported by the warm start)"), std::string::npos)
      << status.out;
  const Result exported = tune(d, {"export", "wide"});
  EXPECT_NE(exported.out.find(",imported_from,"), std::string::npos) << exported.out;
  EXPECT_EQ(count_lines_with(exported.out, ",imported,\"" + (d / "narrow").string() + ", trial "), 8u) << exported.out;
  const std::string events = slurp(d / "wide" / "events.jsonl");
  EXPECT_EQ(count_lines_with(events, "\"event\": \"warm_start\""), 1u);
  EXPECT_EQ(count_lines_with(events, "\"event\": \"complete\""), 4u) << events;  // the own trials' outcomes only

  // tune export's CSV of the earlier campaign carries over the same results as its directory.
  const Result table = tune(d, {"export", "narrow", "-o", (d / "narrow.csv").string()});
  ASSERT_EQ(table.code, 0) << table.err;
  write(d / "from-table.yaml", quadratic("from-table", 1.0, 1, "warm_start: narrow.csv\n"));
  const Result from_table = tune(d, {"run", "from-table.yaml", "--quiet"});
  ASSERT_EQ(from_table.code, 0) << from_table.err;
  const YAML::Node tabled = state_of(d / "from-table")["study"]["trials"];
  ASSERT_EQ(tabled.size(), 9u);
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(tabled[i]["value"].as<double>(), before[i]["value"].as<double>()) << i;
    EXPECT_EQ(tabled[i]["config"]["x"].as<double>(), before[i]["config"]["x"].as<double>()) << i;
    EXPECT_EQ(tabled[i]["config"]["y"].as<double>(), before[i]["config"]["y"].as<double>()) << i;
    EXPECT_EQ(tabled[i]["imported_from"].as<std::string>(), (d / "narrow.csv").string() + ", line " + std::to_string(i + 2));
  }

  // The same file again, with a raised budget: the campaign continues, nothing imported twice.
  write(d / "wide.yaml", quadratic("wide", 1.0, 6, "warm_start: narrow\n"));
  const Result again = tune(d, {"run", "wide.yaml", "--quiet"});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err.find("warm start:"), std::string::npos) << again.err;
  EXPECT_EQ(state_of(d / "wide")["study"]["trials"].size(), 14u);
  EXPECT_EQ(count_lines_with(slurp(d / "wide" / "events.jsonl"), "\"event\": \"warm_start\""), 1u);

  // A chain: wide holds narrow's results and its own; naming narrow too adds none of them twice, and
  // each keeps the name of the campaign that ran it. The file is reached through a symbolic link
  // from elsewhere, its `..` the link target's parent (as the system resolves it).
  fs::create_directories(d / "sub");
  fs::create_directories(d / "elsewhere");
  fs::create_symlink(d / "sub", d / "elsewhere" / "lnk");
  write(d / "sub" / "chain.yaml", quadratic("chain", 1.0, 1, "warm_start: [../wide, ../narrow]\n"));
  const Result chain = tune(d, {"run", "elsewhere/lnk/chain.yaml", "--quiet"});
  ASSERT_EQ(chain.code, 0) << chain.err;
  EXPECT_NE(chain.err.find("warm start: 14 of the 14 trials of " + (d / "wide").string()), std::string::npos) << chain.err;
  EXPECT_NE(chain.err.find("warm start: 0 of the 8 trials of " + (d / "narrow").string() +
                           " (not carried over: 8: are the same runs as results of an earlier source"),
            std::string::npos)
      << chain.err;
  const YAML::Node chained = state_of(d / "chain")["study"]["trials"];
  ASSERT_EQ(chained.size(), 15u);
  for (std::size_t i = 0; i < 14; ++i)
    EXPECT_EQ(chained[i]["imported_from"].as<std::string>(),
              i < 8 ? (d / "narrow").string() + ", trial " + std::to_string(i) : (d / "wide").string() + ", trial " + std::to_string(i))
        << i;
}

// An earlier campaign driven by ask and tell: `results` maps each handed-out trial to its value
// (nullopt: told as failed).
void ask_and_tell(const fs::path& d, const std::string& file, const std::string& dir, std::size_t trials,
                  const std::function<std::optional<double>(const YAML::Node& config)>& value_of) {
  for (std::size_t i = 0; i < trials; ++i) {
    const Result asked = tune(d, {"ask", i == 0 ? file : dir, "--json"});
    ASSERT_EQ(asked.code, 0) << asked.err;
    const YAML::Node out = YAML::Load(asked.out);
    const std::string id = out["trial"].as<std::string>();
    const std::optional<double> v = value_of(out["config"]);
    const Result told = v ? tune(d, {"tell", dir, id, "--", std::to_string(*v)})
                          : tune(d, {"tell", dir, id, "--failed", "diverged"});
    ASSERT_EQ(told.code, 0) << told.err;
  }
}

TEST(TuneWarmStart, FixedValuesCarryOverTheTrialsOfAParameterOnlyOneCampaignVaries) {
  const fs::path d = fresh_dir("warm-start-fixed");
  write(d / "old.yaml",
        "name: old\nspace:\n  lr: {type: float, low: 0.001, high: 1, log: true}\n"
        "  act: {type: categorical, choices: [relu, tanh]}\nobjective: loss\nseed: 4\n");
  std::map<std::string, int> by_act;
  ask_and_tell(d, "old.yaml", "old", 12, [&](const YAML::Node& c) -> std::optional<double> {
    const double lr = c["lr"].as<double>();
    ++by_act[c["act"].as<std::string>()];
    if (lr > 0.5) return std::nullopt;  // diverged
    return std::log10(lr) * std::log10(lr);
  });
  ASSERT_GT(by_act["relu"], 0);
  ASSERT_GT(by_act["tanh"], 0);
  const YAML::Node old_trials = state_of(d / "old")["study"]["trials"];
  std::size_t relu_results = 0, failed = 0;
  for (const YAML::Node& t : old_trials) {
    if (t["status"].as<std::string>() != "complete") ++failed;
    else if (t["config"]["act"].as<std::string>() == "relu") ++relu_results;
  }

  // The new campaign fixes act (relu) and adds wd, which the old one ran at 0.
  const std::string space = "name: new\nspace:\n  lr: {type: float, low: 0.001, high: 1, log: true}\n"
                            "  wd: {type: float, low: 0, high: 0.1}\nobjective: loss\n";
  write(d / "plain.yaml", space + "warm_start: old\n");
  const Result plain = tune(d, {"ask", "plain.yaml", "--dir", "plain"});
  EXPECT_EQ(plain.code, 1);
  EXPECT_NE(plain.err.find("none of the 12 trials of " + (d / "old").string() + " carries over"), std::string::npos)
      << plain.err;
  EXPECT_NE(plain.err.find("which " + (d / "old").string() + " does not vary (fixed: {wd: V}"), std::string::npos)
      << plain.err;
  EXPECT_FALSE(fs::exists(d / "plain")) << "a refused campaign left its directory behind";

  write(d / "new.yaml", space + "warm_start: {from: old, fixed: {act: relu, wd: 0}}\n");
  const Result made = tune(d, {"ask", "new.yaml", "--dir", "new"});
  ASSERT_EQ(made.code, 0) << made.err;
  const std::string expected = "warm start: " + std::to_string(relu_results) + " of the 12 trials of " + (d / "old").string() +
                               " (not carried over: ";
  EXPECT_NE(made.err.find(expected), std::string::npos) << made.err;
  ASSERT_GT(failed, 0u) << "no earlier trial failed: the test misses its case";
  EXPECT_NE(made.err.find(std::to_string(failed) + ": failed, were stopped early or did not finish"), std::string::npos)
      << made.err;
  EXPECT_NE(made.err.find("sets 'act' to another value than the fixed relu"), std::string::npos) << made.err;
  const YAML::Node trials = state_of(d / "new")["study"]["trials"];
  ASSERT_EQ(trials.size(), relu_results + 1);  // and the trial tune ask handed out
  for (std::size_t i = 0; i < relu_results; ++i) {
    EXPECT_EQ(trials[i]["config"]["wd"].as<double>(), 0.0);
    EXPECT_FALSE(trials[i]["config"]["act"]);
  }

  // A choice the earlier campaign never had is named as such.
  write(d / "sigmoid.yaml", space + "warm_start: {from: old, fixed: {act: sigmoid, wd: 0}}\n");
  const Result sigmoid = tune(d, {"ask", "sigmoid.yaml", "--dir", "sigmoid"});
  EXPECT_EQ(sigmoid.code, 1);
  EXPECT_NE(sigmoid.err.find("field 'warm_start.fixed.act': 'sigmoid' is not one of the choices of 'act' in " +
                             (d / "old").string() + " [relu, tanh]"),
            std::string::npos)
      << sigmoid.err;
  // A parameter both vary is not `fixed`'s to set; a directory without a campaign is named.
  write(d / "both.yaml", space + "warm_start: {from: old, fixed: {lr: 0.01}}\n");
  const Result both = tune(d, {"ask", "both.yaml", "--dir", "both"});
  EXPECT_EQ(both.code, 1);
  EXPECT_NE(both.err.find("field 'warm_start.fixed.lr': both campaigns vary 'lr'"), std::string::npos) << both.err;
  write(d / "none.yaml", space + "warm_start: [{from: old, fixed: {act: relu, wd: 0}}, nowhere]\n");
  const Result none = tune(d, {"ask", "none.yaml", "--dir", "none"});
  EXPECT_EQ(none.code, 1);
  EXPECT_NE(none.err.find((d / "nowhere").string() + " holds no campaign"), std::string::npos) << none.err;
  write(d / "other.yaml", "name: other\nspace:\n  lr: {type: float, low: 0.001, high: 1, log: true}\n"
                          "objective: acc\nwarm_start: {from: old, fixed: {act: relu}}\n");
  const Result other = tune(d, {"ask", "other.yaml", "--dir", "other"});
  EXPECT_EQ(other.code, 1);
  EXPECT_NE(other.err.find("measured 'loss', this campaign 'acc'"), std::string::npos) << other.err;
  for (const char* refused : {"both", "none", "other"}) EXPECT_FALSE(fs::exists(d / refused)) << refused;
  // A directory that was there before stays (empty, as it was); one made with its parents goes with them.
  fs::create_directories(d / "was-there");
  EXPECT_EQ(tune(d, {"ask", "none.yaml", "--dir", "was-there"}).code, 1);
  EXPECT_TRUE(fs::is_directory(d / "was-there"));
  EXPECT_TRUE(fs::is_empty(d / "was-there"));
  EXPECT_EQ(tune(d, {"run", "none.yaml", "--dir", "deep/a/b"}).code, 2);  // no command: tune run refuses first
  EXPECT_EQ(tune(d, {"ask", "none.yaml", "--dir", "deep/a/b"}).code, 1);
  EXPECT_FALSE(fs::exists(d / "deep"));
}

TEST(TuneWarmStart, ResultsCarryOverAtTheLevelsBothResolutionsHave) {
  const fs::path d = fresh_dir("warm-start-levels");
  write(d / "old.yaml",
        "name: old\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: loss\n"
        "resolution: {param: epochs, levels: [1, 3, 9]}\nstrategy: cmets\nbudget: {trials: 14}\n");
  std::map<std::string, int> at_level;
  ask_and_tell(d, "old.yaml", "old", 14, [](const YAML::Node& c) -> std::optional<double> {
    return c["x"].as<double>();
  });
  for (const YAML::Node& t : state_of(d / "old")["study"]["trials"]) ++at_level[t["level"].as<std::string>()];
  const std::size_t carried = static_cast<std::size_t>(at_level["1"] + at_level["2"]);  // epochs 3 and 9
  ASSERT_GT(at_level["0"], 0) << "the earlier campaign ran nothing at epochs = 1";
  write(d / "new.yaml",
        "name: new\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: loss\n"
        "resolution: {param: epochs, levels: [3, 9, 27]}\nstrategy: cmets\nwarm_start: old\n");
  const Result made = tune(d, {"ask", "new.yaml", "--dir", "new"});
  ASSERT_EQ(made.code, 0) << made.err;
  EXPECT_NE(made.err.find(std::to_string(at_level["0"]) + ": ran at epochs = 1, not one of this campaign's levels [3, 9, 27]"),
            std::string::npos)
      << made.err;
  const YAML::Node old_trials = state_of(d / "old")["study"]["trials"];
  const YAML::Node trials = state_of(d / "new")["study"]["trials"];
  ASSERT_EQ(trials.size(), carried + 1);
  std::size_t i = 0;
  for (const YAML::Node& t : old_trials) {
    const int old_level = t["level"].as<int>();
    if (old_level == 0) continue;
    EXPECT_EQ(trials[i]["level"].as<int>(), old_level - 1) << i;  // epochs 3 is level 0 here
    EXPECT_EQ(trials[i]["value"].as<double>(), t["value"].as<double>()) << i;
    ++i;
  }
  // tune status's level table counts them apart from the runs made here (none has finished), and
  // they spent nothing here.
  const Result status = tune(d, {"status", "new"});
  EXPECT_NE(status.out.find("cost: 0s spent + unknown (not yet measured) committed to 1 running"), std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("and imported by the warm start (results run elsewhere, no cost here), by level: " +
                            std::to_string(at_level["1"]) + ", " + std::to_string(at_level["2"]) + ", 0\n"),
            std::string::npos)
      << status.out;
  // Epochs chosen as a level there are the epochs parameter of a campaign that searches them so.
  write(d / "param.yaml", "name: param\nspace:\n  x: {type: float, low: 0, high: 1}\n"
                          "  epochs: {type: int, low: 1, high: 27}\nobjective: loss\nwarm_start: old\n");
  const Result param = tune(d, {"ask", "param.yaml", "--dir", "param"});
  ASSERT_EQ(param.code, 0) << param.err;
  const YAML::Node by_param = state_of(d / "param")["study"]["trials"];
  ASSERT_EQ(by_param.size(), old_trials.size() + 1);
  const int epochs_of_level[] = {1, 3, 9};
  for (std::size_t k = 0; k < old_trials.size(); ++k)
    EXPECT_EQ(by_param[k]["config"]["epochs"].as<int>(), epochs_of_level[old_trials[k]["level"].as<int>()]) << k;
  // A campaign without a resolution takes the full runs it names.
  write(d / "flat.yaml", "name: flat\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: loss\n"
                         "warm_start: {from: old, fixed: {epochs: 9}}\n");
  const Result flat = tune(d, {"ask", "flat.yaml", "--dir", "flat"});
  ASSERT_EQ(flat.code, 0) << flat.err;
  EXPECT_EQ(state_of(d / "flat")["study"]["trials"].size(), static_cast<std::size_t>(at_level["2"]) + 1);
}

// Optuna's own CSV (study.trials_dataframe().to_csv(), written by tests/e2e/fixtures/optuna_trials.py
// with a real Optuna study): its COMPLETE trials carry over with the values and parameters Optuna
// holds (optuna_trials.expected), a conditional parameter's empty cells left out.
TEST(TuneWarmStart, AnOptunaStudysCsvCarriesOverItsCompleteTrials) {
  const fs::path d = fresh_dir("warm-start-optuna");
  const fs::path csv = fs::path(TUNE_FIXTURES_DIR) / "optuna_trials.csv";
  write(d / "c.yaml", "name: c\nspace:\n  lr: {type: float, low: 1.0e-5, high: 0.1, log: true}\n"
                      "  layers: {type: int, low: 1, high: 8}\n  act: {type: categorical, choices: [relu, tanh]}\n"
                      "  slope: {type: float, low: 0, high: 0.3, when: {act: [relu]}}\n"
                      "objective: loss\nwarm_start: " + csv.string() + "\n");
  const Result made = tune(d, {"ask", "c.yaml"});
  ASSERT_EQ(made.code, 0) << made.err;
  std::vector<std::string> expected;
  {
    std::ifstream in(fs::path(TUNE_FIXTURES_DIR) / "optuna_trials.expected");
    for (std::string line; std::getline(in, line);) expected.push_back(line);
  }
  ASSERT_EQ(expected.size(), 8u);
  EXPECT_NE(made.err.find("warm start: 8 of the 30 trials of " + csv.string() +
                          " (not carried over: 22: failed, were stopped early or did not finish)"),
            std::string::npos)
      << made.err;
  const YAML::Node trials = state_of(d / "c")["study"]["trials"];
  ASSERT_EQ(trials.size(), expected.size() + 1);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    // "3 0.634... act='relu' layers=3 lr=0.0039... slope=0.0071..."
    std::istringstream fields(expected[i]);
    std::string number, value;
    fields >> number >> value;
    const YAML::Node t = trials[i];
    EXPECT_EQ(t["value"].as<double>(), std::stod(value)) << expected[i];
    std::size_t params = 0;
    for (std::string kv; fields >> kv; ++params) {
      const std::string name = kv.substr(0, kv.find('=')), v = kv.substr(kv.find('=') + 1);
      if (v.front() == '\'')
        EXPECT_EQ(t["config"][name].as<std::string>(), v.substr(1, v.size() - 2)) << expected[i];
      else
        EXPECT_EQ(t["config"][name].as<double>(), std::stod(v)) << expected[i];
    }
    EXPECT_EQ(t["config"].size(), params) << expected[i];  // slope only where act is relu
    EXPECT_NE(t["imported_from"].as<std::string>().find(csv.string() + ", line "), std::string::npos);
  }
}

// Tables as people and other tools write them: choices as numbers or in other letters, a column
// only `fixed` names, a parameter called status, an Excel byte order mark, a metric named as the
// objective beside `value`.
TEST(TuneWarmStart, TablesAsOtherToolsWriteThem) {
  const fs::path d = fresh_dir("warm-start-tables");
  // pandas writes a choice column with gaps as floats, and Python's booleans capitalised.
  write(d / "optuna.csv", ",number,value,params_units,params_bn,params_lr,state\n"
                          "0,0,0.5,256.0,True,0.001,COMPLETE\n1,1,0.25,,False,0.1,COMPLETE\n"
                          "2,2,0.75,64.0,True,1e-3,PRUNED\n");
  write(d / "choices.yaml", "name: choices\nspace:\n  lr: {type: categorical, choices: [1e-3, 0.1]}\n"
                            "  bn: {type: categorical, choices: [true, false]}\n"
                            "  units: {type: ordinal, choices: [64, 128, 256], when: {bn: [true]}}\n"
                            "objective: loss\nwarm_start: optuna.csv\n");
  const Result choices = tune(d, {"ask", "choices.yaml"});
  ASSERT_EQ(choices.code, 0) << choices.err;
  EXPECT_NE(choices.err.find("warm start: 2 of the 3 trials of " + (d / "optuna.csv").string() +
                             " (not carried over: 1: failed, were stopped early or did not finish)"),
            std::string::npos)
      << choices.err;
  const YAML::Node t = state_of(d / "choices")["study"]["trials"];
  EXPECT_EQ(t[0]["config"]["lr"].as<std::string>(), "1e-3");
  EXPECT_EQ(t[0]["config"]["bn"].as<std::string>(), "true");
  EXPECT_EQ(t[0]["config"]["units"].as<std::string>(), "256");
  EXPECT_EQ(t[1]["config"]["bn"].as<std::string>(), "false");
  EXPECT_FALSE(t[1]["config"]["units"]);

  // A hand-written table (Excel's byte order mark, spaces after commas): `act` is not a parameter here,
  // `fixed` names it, so only its relu rows carry over; `status` is a parameter, not the rows' status.
  write(d / "hand.csv", "\xEF\xBB\xBFx, act, status, loss\n0.1, relu, on, 1\n0.2, tanh, on, 2\n0.3, relu, off, 3\n");
  write(d / "hand.yaml", "name: hand\nspace:\n  x: {type: float, low: 0, high: 1}\n"
                         "  status: {type: categorical, choices: [on, off]}\n"
                         "objective: loss\nwarm_start: {from: hand.csv, fixed: {act: relu}}\n");
  const Result hand = tune(d, {"ask", "hand.yaml"});
  ASSERT_EQ(hand.code, 0) << hand.err;
  const YAML::Node h = state_of(d / "hand")["study"]["trials"];
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0]["value"].as<double>(), 1.0);
  EXPECT_EQ(h[1]["value"].as<double>(), 3.0);
  EXPECT_EQ(h[1]["config"]["status"].as<std::string>(), "off");

  // tune export's `duration` column is a metric: the objective named `duration` is its `value`.
  write(d / "dur.yaml", "name: dur\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: duration\n");
  ASSERT_EQ(tune(d, {"ask", "dur.yaml"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "dur", "0", "100"}).code, 0);
  ASSERT_EQ(tune(d, {"export", "dur", "-o", "dur.csv"}).code, 0);
  write(d / "dur2.yaml", "name: dur2\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: duration\n"
                         "warm_start: [dur, dur.csv]\n");
  const Result dur2 = tune(d, {"ask", "dur2.yaml"});
  ASSERT_EQ(dur2.code, 0) << dur2.err;
  // The campaign and its own export hold one run: it is imported once, with its value.
  const YAML::Node t2 = state_of(d / "dur2")["study"]["trials"];
  ASSERT_EQ(t2.size(), 2u) << dur2.err;
  EXPECT_EQ(t2[0]["value"].as<double>(), 100.0);
  EXPECT_NE(dur2.err.find("0 of the 1 trial of " + (d / "dur.csv").string() +
                          " (not carried over: 1: are the same runs as results of an earlier source"),
            std::string::npos)
      << dur2.err;

  // A file separated by ';' is said to be one.
  write(d / "semi.csv", "x;value\n0.5;1\n");
  write(d / "semi.yaml", "name: semi\nspace:\n  x: {type: float, low: 0, high: 1}\nobjective: loss\nwarm_start: semi.csv\n");
  const Result semi = tune(d, {"ask", "semi.yaml"});
  EXPECT_EQ(semi.code, 1);
  EXPECT_NE(semi.err.find("the header is one column ('x;value'): the file is separated by ';'"), std::string::npos)
      << semi.err;
}

TEST(TuneWarmStart, StrategiesThatChooseTheirOwnPointsAndTheInlineForm) {
  const fs::path d = fresh_dir("warm-start-inline");
  write(d / "narrow.yaml", quadratic("narrow", 0.0, 3));
  ASSERT_EQ(tune(d, {"run", "narrow.yaml", "--quiet"}).code, 0);
  write(d / "gpoo.yaml", quadratic("gpoo", 1.0, 30, "strategy: gpoo\nwarm_start: narrow\n"));
  const Result gpoo = tune(d, {"run", "gpoo.yaml", "--quiet"});
  EXPECT_EQ(gpoo.code, 1);
  EXPECT_NE(gpoo.err.find("field 'warm_start' at line"), std::string::npos) << gpoo.err;
  EXPECT_NE(gpoo.err.find("strategy gpoo models only results of its own choosing"), std::string::npos) << gpoo.err;

  const std::string trainer = (kTrainers / "quadratic.sh").string();
  const Result inline_run = tune(d, {"run", "--name", "inl", "--trials", "2", "--objective", "loss", "--warm-start",
                                     "narrow", "--quiet", "--", trainer, "--x~uniform(-1,1)", "--y~uniform(-3,1)"});
  ASSERT_EQ(inline_run.code, 0) << inline_run.err;
  EXPECT_NE(inline_run.err.find("warm start: 3 of the 3 trials of " + (d / "narrow").string()), std::string::npos)
      << inline_run.err;
  EXPECT_EQ(state_of(d / "inl")["study"]["trials"].size(), 5u);
  // The inline form cannot give `fixed` values: its refusal says where they go.
  const Result no_y = tune(d, {"run", "--name", "no-y", "--trials", "2", "--objective", "loss", "--warm-start", "narrow",
                               "--quiet", "--", trainer, "--x~uniform(-1,1)", "--y", "-1"});
  EXPECT_EQ(no_y.code, 1);
  EXPECT_NE(no_y.err.find("sets 'y', which this campaign does not vary"), std::string::npos) << no_y.err;
  EXPECT_NE(no_y.err.find("(fixed values are given in a campaign file: warm_start: {from: DIR, fixed: {...}})"),
            std::string::npos)
      << no_y.err;
  // Continued without the option: the campaign keeps its warm start (made once), and runs on.
  const Result more = tune(d, {"run", "--name", "inl", "--trials", "3", "--objective", "loss", "--quiet", "--", trainer,
                               "--x~uniform(-1,1)", "--y~uniform(-3,1)"});
  ASSERT_EQ(more.code, 0) << more.err;
  EXPECT_EQ(state_of(d / "inl")["study"]["trials"].size(), 6u);
}

}  // namespace
