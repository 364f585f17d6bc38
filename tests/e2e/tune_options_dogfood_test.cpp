// Option and error-message defects, each found by using the `tune` program as a demanding user: which
// command failed, an option of one strategy silently taken by another, a typo's nearest key, a
// cost-aware strategy asked for without levels.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Every line of `err` starts with `prefix` (and there is one).
::testing::AssertionResult every_line_starts_with(const std::string& err, const std::string& prefix) {
  std::istringstream in(err);
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines)
    if (line.rfind(prefix, 0) != 0 && line != "Run with --help for more information.")
      return ::testing::AssertionFailure() << "the line '" << line << "' does not start with '" << prefix << "'";
  if (lines == 0) return ::testing::AssertionFailure() << "no error line";
  return ::testing::AssertionSuccess();
}

// A campaign file with the quadratic trainer and the given strategy line ("{name: ei}").
std::string campaign(const std::string& name, const std::string& strategy) {
  return "name: " + name + "\ncommand: [" + (kTrainers / "quadratic.sh").string() +
         ", \"{x}\", \"{y}\"]\n"
         "space:\n  x: {type: float, low: -1, high: 1}\n  y: {type: float, low: -3, high: 1}\n"
         "objective: loss\n"
         "strategy: " + strategy + "\n"
         "budget: {trials: 2}\n";
}

// The position of the value of `key: value` in line `line` of a campaign file, as a message cites it
// ("line 7, column 34").
std::string value_position(const std::string& file_text, int line, const std::string& key) {
  std::istringstream in(file_text);
  std::string l;
  for (int i = 0; i < line; ++i) std::getline(in, l);
  return "line " + std::to_string(line) + ", column " + std::to_string(l.find(key + ": ") + key.size() + 3);
}

// Errors raised inside a command (a damaged state, a bad value, a bad campaign file) were printed as
// "tune: ...", so a script running several commands could not tell which one failed. Each now names
// its command; an error before any command is known keeps "tune:".
TEST(TuneOptionsDogfood, EveryCommandNamesItselfInItsErrors) {
  const fs::path d = fresh_dir("options-prefix");
  write(d / "c.yaml", "name: c\nspace:\n  x: {type: float, low: 0, high: 1}\nbudget: {trials: 5}\n");
  ASSERT_EQ(tune(d, {"ask", "c.yaml"}).code, 0);

  // A bad value, a bad cost: tell's own checks.
  const Result tell = tune(d, {"tell", "c", "0", "abc"});
  EXPECT_EQ(tell.code, 2);
  EXPECT_TRUE(every_line_starts_with(tell.err, "tune tell: ")) << tell.err;
  const Result cost = tune(d, {"tell", "c", "0", "1", "--cost", "3"});
  EXPECT_EQ(cost.code, 2);
  EXPECT_TRUE(every_line_starts_with(cost.err, "tune tell: --cost is for campaigns")) << cost.err;
  // stop without a tuner; init over an existing file.
  const Result stop = tune(d, {"stop", "c"});
  EXPECT_EQ(stop.code, 1);
  EXPECT_TRUE(every_line_starts_with(stop.err, "tune stop: no tuner is running")) << stop.err;
  const Result init = tune(d, {"init", "c.yaml"});
  EXPECT_EQ(init.code, 1);
  EXPECT_TRUE(every_line_starts_with(init.err, "tune init: c.yaml exists; not overwriting it")) << init.err;
  // A directory exists too, but is no file to overwrite: say what to give.
  const Result init_dir = tune(d, {"init", "c"});
  EXPECT_EQ(init_dir.code, 1);
  EXPECT_EQ(init_dir.err, "tune init: c is a directory; give the file to write, e.g. c/campaign.yaml\n");

  // A damaged state: every command that reads it says which command refused it.
  write(d / "c" / "state.yaml", "garbage: [\n");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"status", "c"}, {"best", "c"}, {"resume", "c"}, {"ask", "c"}, {"tell", "c", "0", "1"},
           {"enqueue", "c", "x=0.5"}, {"export", "c"}}) {
    const Result r = tune(d, args);
    EXPECT_EQ(r.code, 1) << args[0] << ": " << r.err;
    EXPECT_TRUE(every_line_starts_with(r.err, "tune " + args[0] + ": ")) << r.err;
    EXPECT_TRUE(has(r.err, "state.yaml")) << r.err;
  }
  // A bad campaign file, and a bad option value of the command line (CLI11's own message).
  write(d / "bad.yaml", campaign("bad", "{name: ei, epsilon: -1}"));
  const Result run = tune(d, {"run", "bad.yaml"});
  EXPECT_EQ(run.code, 1);
  EXPECT_TRUE(every_line_starts_with(run.err, "tune run: bad.yaml: field 'strategy.epsilon'")) << run.err;
  const Result last = tune(d, {"status", "c", "--last", "x"});
  EXPECT_EQ(last.code, 2);
  EXPECT_TRUE(every_line_starts_with(last.err, "tune status: --last: ")) << last.err;
  // Before a command is known there is none to name.
  const Result unknown = tune(d, {"stauts", "c"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(every_line_starts_with(unknown.err, "tune: unknown command 'stauts'")) << unknown.err;
}

// ei accepted ucb's beta_scale and delta (they share GpBandit's options) and ignored them; each
// strategy now refuses, at its line, an option it does not use, saying whose it is. The strategies
// that use it still take it.
TEST(TuneOptionsDogfood, AnOptionAStrategyDoesNotUseIsRefusedSayingWhoseItIs) {
  const fs::path d = fresh_dir("options-unused");
  struct Case {
    std::string strategy, key, message;
  };
  const std::vector<Case> refused{
      {"{name: ei, beta_scale: 0.5}", "beta_scale", "strategy option 'beta_scale' is ucb's; ei does not use it ("},
      {"{name: ei, delta: 0.2}", "delta", "strategy option 'delta' is ucb's; ei does not use it ("},
      {"{name: ucb, fit: {discrepancy_min: 0.001}}", "discrepancy_min",
       "strategy option 'fit.discrepancy_min' is cmets's and cmes's; ucb does not use it ("},
      {"{name: gpoo, fit: {noise_pooling_log_sd: 1}}", "noise_pooling_log_sd",
       "strategy option 'fit.noise_pooling_log_sd' is cmets's and cmes's; gpoo does not use it ("},
      {"{name: ei, max_skipped_steps: 5}", "max_skipped_steps",
       "strategy option 'max_skipped_steps' is on_reject: literal's; ei with on_reject: next_informative does not use it ("},
      {"{name: gpoo, beta_scale: 0.3}", "beta_scale",
       "strategy option 'beta_scale' is gpoo's with beta: code; gpoo with beta: theory does not use it ("},
      {"{name: gpoo, delta: paper, delta_z: 3}", "delta_z",
       "strategy option 'delta_z' is gpoo's with delta: geometric; gpoo with delta: paper does not use it ("},
      {"{name: gpoo, delta_c: 3}", "delta_c",
       "strategy option 'delta_c' is gpoo's with delta: paper; gpoo with delta: geometric does not use it ("},
      {"{name: cmes, level_choice: depth}", "level_choice", "strategy option 'level_choice' is cmets's; cmes does not use it ("},
      {"{name: cmets, initial_design: 4}", "initial_design",
       "strategy option 'initial_design' is cmes's (and ei's, ucb's); cmets does not use it ("},
  };
  for (const Case& c : refused) {
    const std::string text = campaign("u", c.strategy);
    write(d / "u.yaml", text);
    const Result r = tune(d, {"ask", "u.yaml", "--dir", "u"});
    EXPECT_EQ(r.code, 1) << c.strategy;
    const std::string field = c.key == "discrepancy_min" || c.key == "noise_pooling_log_sd" ? "strategy.fit." + c.key
                                                                                             : "strategy." + c.key;
    EXPECT_TRUE(has(r.err, "u.yaml: field '" + field + "' at " + value_position(text, 7, c.key) + ": " + c.message))
        << c.strategy << "\n" << r.err;
    EXPECT_FALSE(fs::exists(d / "u" / "state.yaml")) << c.strategy;
    fs::remove_all(d / "u");
  }
  // Where they are used, they are taken.
  const std::vector<std::string> taken{
      "{name: ucb, beta_scale: 0.5, delta: 0.2}", "{name: ei, on_reject: literal, max_skipped_steps: 5}",
      "{name: gpoo, beta: code, beta_scale: 0.3, delta: paper, delta_c: 3}", "{name: gpoo, delta_z: 3}",
      "{name: cmets, level_choice: depth}", "{name: cmes, initial_design: 4}"};
  for (const std::string& s : taken) {
    write(d / "t.yaml", campaign("t", s));
    const Result r = tune(d, {"ask", "t.yaml", "--dir", "t"});
    EXPECT_EQ(r.code, 0) << s << "\n" << r.err;
    // The campaign loads again (its state holds every option, the unused ones at their defaults).
    const Result status = tune(d, {"status", "t"});
    EXPECT_EQ(status.code, 0) << s << "\n" << status.err;
    fs::remove_all(d / "t");
  }
}

// A campaign started by an earlier version with an option its strategy does not use (accepted and
// ignored then) holds it in its state.yaml: refused there too, it could no longer be resumed, nor
// its status or best shown ("restore it from a backup"). What was saved loads as it was.
TEST(TuneOptionsDogfood, ACampaignSavedWithAnOptionNowRefusedStillResumes) {
  const fs::path d = fresh_dir("options-unused-saved");
  write(d / "c.yaml", campaign("old", "{name: ei}"));
  ASSERT_EQ(tune(d, {"ask", "c.yaml", "--dir", "old"}).code, 0);
  // The state as the earlier version wrote it: the user's strategy map held beta_scale.
  std::string state = slurp(d / "old" / "state.yaml");
  const std::string user_map = "  strategy:\n    name: ei\n";
  ASSERT_NE(state.find(user_map), std::string::npos) << state;
  state.replace(state.find(user_map), user_map.size(), user_map + "    beta_scale: 0.5\n");
  write(d / "old" / "state.yaml", state);
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"status", "old"}, {"tell", "old", "0", "0.25"}, {"ask", "old"}}) {
    const Result r = tune(d, command);
    EXPECT_EQ(r.code, 0) << command[0] << "\n" << r.err;
  }
  EXPECT_EQ(state_of(d / "old")["campaign"]["strategy"]["beta_scale"].as<double>(), 0.5);
  // Written now, the same option is refused.
  write(d / "new.yaml", campaign("new", "{name: ei, beta_scale: 0.5}"));
  EXPECT_EQ(tune(d, {"ask", "new.yaml", "--dir", "new"}).code, 1);
}

// `max_skipped_steps: 0` stopped at the first rejection, as 1 does; the README counts the rejections
// in a row before the study stops, and 0 of them cannot be: refused.
TEST(TuneOptionsDogfood, ZeroSkippedStepsIsRefused) {
  const fs::path d = fresh_dir("options-skipped");
  const std::string text = campaign("z", "{name: ei, on_reject: literal, max_skipped_steps: 0}");
  write(d / "z.yaml", text);
  const Result r = tune(d, {"ask", "z.yaml"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(has(r.err, "field 'strategy.max_skipped_steps' at " + value_position(text, 7, "max_skipped_steps") +
                             ": strategy option 'max_skipped_steps' must be >= 1 (got 0)"))
      << r.err;
}

// A misspelt key was refused with the list of keys to compare by eye; the nearest is now named, at
// the key's own line (a key of a strategy's `fit` was cited at the strategy's line, and a value of
// the wrong type there said "invalid node").
TEST(TuneOptionsDogfood, AMisspeltKeyNamesTheKeyItMeant) {
  const fs::path d = fresh_dir("options-typos");
  const std::string body = "name: t\nspace:\n  x: {type: float, low: 0, high: 1}\n";
  struct Case {
    std::string extra, expected;
  };
  const std::vector<Case> cases{
      {"budgt: {trials: 3}\n", "field 'budgt' at line 4, column 1: unknown key (did you mean 'budget'?); expected one of: "},
      {"budget: {trails: 3}\n",
       "field 'budget.trails' at line 4, column 10: unknown key (did you mean 'trials'?); expected one of: "},
      {"executor: {wokers: 2}\n",
       "field 'executor.wokers' at line 4, column 12: unknown key (did you mean 'workers'?); expected one of: "},
      {"budget: {zzz: 3}\n", "field 'budget.zzz' at line 4, column 10: unknown key; expected one of: "},
      {"objective: {direction: maximise}\n", "expected 'minimize' or 'maximize' (did you mean 'maximize'?)"},
      {"strategy: {name: ie}\n", "unknown strategy 'ie': did you mean 'ei'? expected one of "},
      {"strategy: {name: ei, epsilonn: 0.1}\n",
       "field 'strategy.epsilonn' at line 4, column 22: unknown option of strategy 'ei'; did you mean 'epsilon'? known "
       "keys: "},
      {"strategy: {name: ei, fit: {noise_mn: 1}}\n",
       "field 'strategy.fit.noise_mn' at line 4, column 28: unknown option of strategy 'ei'; did you mean 'noise_min'? "
       "known keys: "},
      {"strategy: {name: ei, epsilon: abc}\n",
       "field 'strategy.epsilon' at line 4, column 31: expected a number, found 'abc'"},
      {"strategy: {name: ei, fit: {noise_min: abc}}\n",
       "field 'strategy.fit.noise_min' at line 4, column 39: expected a number, found 'abc'"},
  };
  for (const Case& c : cases) {
    write(d / "t.yaml", body + c.extra);
    const Result r = tune(d, {"ask", "t.yaml"});
    EXPECT_EQ(r.code, 1) << c.extra;
    EXPECT_TRUE(has(r.err, "tune ask: t.yaml: ")) << r.err;
    EXPECT_TRUE(has(r.err, c.expected)) << c.extra << r.err;
    EXPECT_EQ(fs::exists(d / "t"), false) << c.extra;
  }
}

// A count past 2^64 - 1 was clamped to it by CLI11: `tune ask DIR --trials 99999999999999999999999`
// set budget.trials to 18446744073709551615 and handed out a trial. It is refused, and nothing changes.
TEST(TuneOptionsDogfood, ACountTooLargeForSixtyFourBitsIsRefused) {
  const fs::path d = fresh_dir("options-huge-count");
  write(d / "c.yaml", "name: c\nspace:\n  x: {type: float, low: 0, high: 1}\nbudget: {trials: 1}\n");
  ASSERT_EQ(tune(d, {"ask", "c.yaml"}).code, 0);
  const std::string huge = "99999999999999999999999";
  const Result ask = tune(d, {"ask", "c", "--trials", huge});
  EXPECT_EQ(ask.code, 2);
  EXPECT_TRUE(every_line_starts_with(ask.err, "tune ask: --trials: '" + huge + "' is too large (the largest is "
                                              "18446744073709551615)"))
      << ask.err;
  EXPECT_EQ(ask.out, "");
  EXPECT_EQ(state_of(d / "c")["campaign"]["budget"]["trials"].as<std::string>(), "1");
  // The largest value itself is a number as typed (a trial budget far above the trials so far).
  const Result largest = tune(d, {"status", "c", "--last", "18446744073709551615"});
  EXPECT_EQ(largest.code, 0) << largest.err;
  const Result seed = tune(d, {"run", "--name", "s", "--seed", huge, "--", "true", "--x~uniform(0,1)"});
  EXPECT_EQ(seed.code, 2);
  EXPECT_TRUE(every_line_starts_with(seed.err, "tune run: --seed: '" + huge + "' is too large")) << seed.err;
  EXPECT_FALSE(fs::exists(d / "s"));
}

// A binary file given as the campaign (a program, an archive) was refused as "not valid YAML (unknown
// escape character: " cut short by the NUL byte it then printed; a count too large for 64 bits was
// "expected a whole number". Each now says what is wrong.
TEST(TuneOptionsDogfood, ABinaryCampaignFileAndAHugeCountSayWhatIsWrong) {
  const fs::path d = fresh_dir("options-binary");
  write(d / "b.yaml", std::string("\x7f" "ELF\x02\x01\x01\0\0\0\\\x01", 12) + "name: b\n");
  for (const char* command : {"run", "ask"}) {
    const Result r = tune(d, {command, "b.yaml"});
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(r.err, "tune " + std::string(command) + ": b.yaml: not a text file (byte 7 is NUL); give a campaign "
                      "file in YAML ('tune init' writes an example)\n");
  }
  write(d / "h.yaml", "name: h\nspace:\n  x: {type: float, low: 0, high: 1}\nbudget: {trials: 99999999999999999999999}\n");
  const Result huge = tune(d, {"ask", "h.yaml"});
  EXPECT_EQ(huge.code, 1);
  EXPECT_TRUE(has(huge.err, "h.yaml: field 'budget.trials' at line 4, column 18: '99999999999999999999999' is too "
                            "large (the largest is 18446744073709551615)"))
      << huge.err;
  EXPECT_FALSE(fs::exists(d / "h"));
}

// `tune run --strategy cmets` inline without a resolution ran every trial in full (a tree search at
// one level), with a note that --quiet kept back; it is refused now, saying how the inline form
// declares the levels, and nothing is created. With levels it runs; a campaign file asking for
// cmets without a resolution runs with the note.
TEST(TuneOptionsDogfood, InlineCmetsWithoutLevelsIsRefusedSayingHowToDeclareThem) {
  const fs::path d = fresh_dir("options-inline-cmets");
  const std::string trainer = (kTrainers / "quadratic.sh").string();
  for (const char* quiet : {"--quiet", "--wait-on-stop"}) {
    const Result r = tune(d, {"run", "--name", "n", "--strategy", "cmets", "--objective", "loss", "--trials", "2", quiet,
                              "--", trainer, "--x~uniform(-1,1)", "--y~uniform(-3,1)"});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(has(r.err, "tune run: --strategy cmets: the campaign has no resolution")) << r.err;
    EXPECT_TRUE(has(r.err, "declare them with an argument NAME~'levels(...)' after -- (e.g. "
                           "--epochs~'levels(1,3,9,27)': each trial gets its level's value there, and cmets chooses "
                           "the level)"))
        << r.err;
    EXPECT_FALSE(fs::exists(d / "n"));
  }
  const Result levels = tune(d, {"run", "--name", "l", "--strategy", "cmets", "--objective", "loss", "--trials", "2",
                                 "--quiet", "--", trainer, "--epochs~levels(1,3)", "--x~uniform(-1,1)", "--y~uniform(-3,1)"});
  EXPECT_EQ(levels.code, 0) << levels.err;
  EXPECT_EQ(state_of(d / "l")["campaign"]["strategy"]["name"].as<std::string>(), "cmets");
  write(d / "f.yaml", campaign("f", "cmets"));
  const Result file = tune(d, {"run", "f.yaml"});
  EXPECT_EQ(file.code, 0) << file.err;
  EXPECT_TRUE(has(file.err, "tune run: note: strategy cmets without a resolution runs every trial in full")) << file.err;
}

}  // namespace
