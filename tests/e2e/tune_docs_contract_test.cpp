// What the README promises a user who types what it says, checked against the `tune` program: each
// test is a documented option or behaviour that once did not hold.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tune_process.hpp"

namespace fs = std::filesystem;

namespace {

using namespace tune_test;

// README, gpoo's options: `variant: code` expands the root first (the authors' warm start). The
// campaign's state was written before the strategy's first round and then refused on load ("the
// rounds do not replay"), so tune ask and tune run ended at once.
TEST(TuneDocsContract, GpooWithTheCodeVariantRunsFromACampaignFile) {
  const fs::path d = fresh_dir("docs-gpoo-code");
  write(d / "c.yaml", "name: g\n"
                      "space:\n  x: {type: float, low: -1, high: 1}\n  y: {type: float, low: -3, high: 1}\n"
                      "strategy: {name: gpoo, variant: code}\n"
                      "budget: {trials: 4}\n");
  const Result first = tune(d, {"ask", "c.yaml"});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(YAML::Load(first.out)["trial"].as<int>(), 0) << first.out;
  const Result told = tune(d, {"tell", "g", "0", "0.5"});
  ASSERT_EQ(told.code, 0) << told.err;
  const Result second = tune(d, {"ask", "g"});
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(YAML::Load(second.out)["trial"].as<int>(), 1) << second.out;
}

// README, Stopping: "`--quiet` prints nothing" (but errors). Running a campaign file again said
// "tune: continuing the campaign in DIR" on stderr, --quiet or not.
TEST(TuneDocsContract, QuietPrintsNothingWhenItContinuesACampaign) {
  const fs::path d = fresh_dir("docs-quiet");
  write(d / "c.yaml", quadratic_campaign_with("q", 2, "{workers: 1}"));
  const Result first = tune(d, {"run", "c.yaml", "--quiet"});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(first.out + first.err, "");
  const Result again = tune(d, {"run", "c.yaml", "--quiet"});
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.out + again.err, "");
  // Without --quiet the notice says what happened.
  const Result loud = tune(d, {"run", "c.yaml"});
  EXPECT_EQ(loud.code, 0) << loud.err;
  EXPECT_NE(loud.err.find("continuing the campaign in q"), std::string::npos) << loud.err;
}

// The repository's root, where README.md and examples/ are (TUNE_TRAINERS_DIR is tests/e2e/trainers).
const fs::path kRoot = kTrainers.parent_path().parent_path().parent_path();

// The fenced blocks of a Markdown file whose opening fence is exactly `fence` ("```yaml", "```").
std::vector<std::string> fenced_blocks(const fs::path& markdown, const std::string& fence) {
  std::vector<std::string> blocks;
  std::istringstream in(slurp(markdown));
  std::string line, block;
  bool inside = false, wanted = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      if (inside && wanted) blocks.push_back(block);
      wanted = !inside && line == fence;
      inside = !inside;
      block.clear();
    } else if (inside) {
      block += line + "\n";
    }
  }
  return blocks;
}

std::vector<fs::path> documents() {
  std::vector<fs::path> docs{kRoot / "README.md"};
  for (const auto& e : fs::directory_iterator(kRoot / "examples"))
    if (fs::exists(e.path() / "README.md")) docs.push_back(e.path() / "README.md");
  return docs;
}

// Every YAML block of the READMEs is a campaign, or part of one (the `enqueue:` list, the Slurm
// `executor:`) that a campaign with the README's lr / layers / act space accepts; so are the
// examples' campaign files and what `tune init` writes. `tune ask FILE` checks a file as `tune run`
// does, creates the campaign and hands out its first trial, running nothing.
TEST(TuneDocsContract, EveryCampaignTheDocumentsShowIsAccepted) {
  const fs::path d = fresh_dir("docs-campaign-blocks");
  std::vector<std::pair<std::string, std::string>> campaigns;  // (where it is from, text)
  for (const fs::path& doc : documents())
    for (const std::string& block : fenced_blocks(doc, "```yaml")) campaigns.emplace_back(doc.string(), block);
  ASSERT_GE(campaigns.size(), 4u) << "the README's campaign, enqueue, Slurm and resolution blocks";
  for (const auto& e : fs::directory_iterator(kRoot / "examples"))
    for (const auto& f : fs::directory_iterator(e.is_directory() ? e.path() : d))
      if (f.path().extension() == ".yaml" && f.path().parent_path() != d) campaigns.emplace_back(f.path().string(), slurp(f.path()));
  ASSERT_EQ(tune(d, {"init", "init.yaml"}).code, 0);
  const std::string init = slurp(d / "init.yaml");
  campaigns.emplace_back("tune init", init);
  // Its commented-out options, taken up as a user would: with ei, and with a resolution and cmets.
  const auto uncomment = [](std::string text, const std::vector<std::pair<std::string, std::string>>& edits) {
    for (const auto& [from, to] : edits) {
      const std::size_t at = text.find(from);
      EXPECT_NE(at, std::string::npos) << "tune init no longer writes '" << from << "'";
      if (at != std::string::npos) text.replace(at, from.size(), to);
    }
    return text;
  };
  const std::vector<std::pair<std::string, std::string>> both{
      {"  # wall:", "  wall:"}, {"  # timeout:", "  timeout:"}, {"# enqueue:", "enqueue:"}, {"#   - {", "  - {"},
      {"  # gain:", "  gain:"}, {"# pruning: {rule", "pruning: {rule"}};
  std::vector<std::pair<std::string, std::string>> with_ei{
      {"\nobjective: {name: val_acc", "\n# objective: {name: val_acc"}, {"# objective: {name: loss,", "objective: {name: loss,"},
      {"  # epsilon:", "  epsilon:"}};
  std::vector<std::pair<std::string, std::string>> with_cmets{
      {"# resolution:", "resolution:"}, {"  name: ei ", "  name: cmets"}, {"  # stop_when_nothing_to_learn:", "  stop_when_nothing_to_learn:"},
      {"  # cost:", "  cost:"}};
  with_ei.insert(with_ei.end(), both.begin(), both.end());
  with_cmets.insert(with_cmets.end(), both.begin(), both.end());
  campaigns.emplace_back("tune init, its options for ei", uncomment(init, with_ei));
  campaigns.emplace_back("tune init, its options for a resolution", uncomment(init, with_cmets));

  const std::string space = "space:\n  lr: {type: float, low: 1.0e-5, high: 1.0, log: true}\n"
                            "  layers: {type: int, low: 1, high: 8}\n  act: {type: categorical, choices: [relu, tanh]}\n";
  // The README's warm start builds on the campaign ../mlp: made here, with results of both act
  // values (told by hand), so that the block is checked as a user would run it.
  const fs::path earlier = d.parent_path() / "mlp";
  fs::remove_all(earlier);
  write(d / "mlp.yaml", "name: mlp\nspace:\n  lr: {type: float, low: 1.0e-5, high: 1.0e-2, log: true}\n"
                        "  layers: {type: int, low: 1, high: 8}\n  act: {type: categorical, choices: [relu, tanh]}\n"
                        "objective: {name: val_acc, direction: maximize}\nstrategy: sobol\n");
  for (int i = 0; i < 4; ++i) {
    const Result asked = i == 0 ? tune(d, {"ask", "mlp.yaml", "--dir", earlier.string()}) : tune(d, {"ask", earlier.string()});
    ASSERT_EQ(asked.code, 0) << asked.err;
    ASSERT_EQ(tune(d, {"tell", earlier.string(), std::to_string(i), "0.5"}).code, 0);
  }
  for (std::size_t i = 0; i < campaigns.size(); ++i) {
    std::string text = campaigns[i].second;
    if (text.find("\nspace:") == std::string::npos && text.rfind("space:", 0) != 0) text = space + text;
    if (text.find("\nname:") == std::string::npos && text.rfind("name:", 0) != 0) text = "name: doc\n" + text;
    const std::string file = "c" + std::to_string(i) + ".yaml";
    write(d / file, text);
    const Result r = tune(d, {"ask", file, "--dir", "dir" + std::to_string(i)});
    EXPECT_EQ(r.code, 0) << campaigns[i].first << ":\n" << campaigns[i].second << r.err;
    // A warm start's first own trial follows the results it imported (the relu ones of ../mlp).
    const bool warm = text.find("\nwarm_start:") != std::string::npos;
    EXPECT_EQ(r.out.rfind(warm ? "trial: 2\n" : "trial: 0\n", 0), 0u) << campaigns[i].first << ":\n" << r.out;
  }
}

// Every shipped example campaign, as written but for its command (a stand-in trainer of 50 ms that
// takes every placeholder and prints the objective) and a trial budget of 3, runs its trials under
// `tune run`. Accepted by `tune ask`, the xgboost and libsvm campaigns ran nothing under `tune run`:
// their 5-minute guard exceeded their cost budgets, and a run started only if it fitted at its limit.
TEST(TuneDocsContract, EveryExampleCampaignRunsItsTrials) {
  const fs::path d = fresh_dir("docs-example-runs");
  const fs::path trainer = write_script(d, "stand-in.sh", "#!/bin/sh\nsleep 0.05\necho \"$1=0.$$\"\n");
  std::size_t ran = 0;
  for (const auto& e : fs::directory_iterator(kRoot / "examples")) {
    if (!e.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(e.path())) {
      if (f.path().extension() != ".yaml") continue;
      YAML::Node c = YAML::LoadFile(f.path().string());
      const YAML::Node objective = c["objective"];
      YAML::Node command(YAML::NodeType::Sequence);
      command.push_back(trainer.string());
      command.push_back(objective.IsMap() ? objective["name"].as<std::string>() : objective.as<std::string>());
      // A conditional parameter's argument is left out where it does not apply: NAME={NAME}, one argument.
      for (const auto& p : c["space"]) {
        const std::string name = p.first.as<std::string>();
        command.push_back((p.second["when"] ? name + "=" : std::string()) + "{" + name + "}");
      }
      if (c["resolution"]) command.push_back("{" + c["resolution"]["param"].as<std::string>() + "}");
      c["command"] = command;
      c["budget"]["trials"] = 3;
      YAML::Emitter out;
      out << c;
      const std::string name = e.path().filename().string() + "-" + f.path().stem().string();
      write(d / (name + ".yaml"), out.c_str());
      const Result r = tune(d, {"run", name + ".yaml", "--dir", name, "--quiet"});
      EXPECT_EQ(r.code, 0) << f.path() << ":\n" << out.c_str() << "\n" << r.err;
      std::size_t complete = 0;
      for (const YAML::Node& t : state_of(d / name)["study"]["trials"]) complete += t["status"].as<std::string>() == "complete";
      EXPECT_EQ(complete, 3u) << f.path() << ": " << state_of(d / name)["stop_reason"];
      ++ran;
    }
  }
  EXPECT_GE(ran, 5u) << "quickstart, libsvm (three) and xgboost";
}

// The keys of one map the program checks, as its refusal of an unknown key lists them
// ("unknown key; expected one of: a, b, c"; a strategy's options: "...; known keys: a, b, c").
std::vector<std::string> accepted_keys(const fs::path& d, const std::string& name, const std::string& campaign) {
  write(d / (name + ".yaml"), campaign);
  const Result r = tune(d, {"ask", name + ".yaml", "--dir", name});
  std::string marker = "expected one of: ";
  if (r.err.find(marker) == std::string::npos) marker = "known keys: ";
  const std::size_t at = r.err.find(marker);
  EXPECT_NE(at, std::string::npos) << campaign << r.err;
  std::vector<std::string> keys;
  if (at == std::string::npos) return keys;
  std::istringstream list(r.err.substr(at + marker.size()));
  for (std::string key; std::getline(list, key, ',');) {
    while (!key.empty() && std::isspace(static_cast<unsigned char>(key.front()))) key.erase(0, 1);
    while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
    keys.push_back(key);
  }
  return keys;
}

// Whether `text` names `key` as a key: `key`, `parent.key`, `key: value`, {key: ...}, {a, key, b}.
bool names_key(const std::string& text, const std::string& key) {
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    const char before = at == 0 ? ' ' : text[at - 1];
    const char after = at + key.size() < text.size() ? text[at + key.size()] : ' ';
    if (std::string("`{ .\n").find(before) != std::string::npos && std::string("`:,}").find(after) != std::string::npos)
      return true;
  }
  return false;
}

// Every key the program accepts in a campaign file, the strategies' options included, is documented
// in the README: named in backticks (`budget.cost`, `grace`), or written as a key in one of its
// examples (`qos: normal`, `fit: {noise_pooling_log_sd: 1}`).
TEST(TuneDocsContract, EveryKeyACampaignFileAcceptsIsDocumented) {
  const fs::path d = fresh_dir("docs-campaign-keys");
  const std::string readme = slurp(kRoot / "README.md");
  const std::string x = "name: k\nspace:\n  x: {type: float, low: 0, high: 1}\n";
  const std::vector<std::pair<std::string, std::string>> maps{
      {"top", x + "zzz: 1\n"},
      {"float", "name: k\nspace:\n  x: {type: float, low: 0, high: 1, zzz: 1}\n"},
      {"choice", "name: k\nspace:\n  x: {type: ordinal, choices: [a, b], zzz: 1}\n"},
      {"objective", x + "objective: {name: loss, zzz: 1}\n"},
      {"budget", x + "budget: {trials: 3, zzz: 1}\n"},
      {"resolution", x + "resolution: {param: epochs, levels: [1, 3], zzz: 1}\n"},
      {"pruning", x + "pruning: {zzz: 1}\n"},
      {"slurm", x + "executor: {kind: slurm, zzz: 1}\n"},
      {"ei", x + "strategy: {name: ei, zzz: 1}\n"},
      {"ucb", x + "strategy: {name: ucb, zzz: 1}\n"},
      {"ei.fit", x + "strategy: {name: ei, fit: {zzz: 1}}\n"},
      {"ei.optimizer", x + "strategy: {name: ei, optimizer: {zzz: 1}}\n"},
      {"cmets", x + "strategy: {name: cmets, zzz: 1}\n"},
      {"cmets.fit", x + "strategy: {name: cmets, fit: {zzz: 1}}\n"},
      {"gpoo", x + "strategy: {name: gpoo, zzz: 1}\n"},
      {"bnb", x + "strategy: {name: bnb, zzz: 1}\n"},
  };
  std::size_t checked = 0;
  for (const auto& [name, campaign] : maps)
    for (const std::string& key : accepted_keys(d, name, campaign)) {
      ++checked;
      EXPECT_TRUE(names_key(readme, key)) << "the key '" << key << "' (" << name << ") is accepted but not in README.md";
    }
  // top 11, float 4, choices 2, objective 3, budget 4, resolution 3, pruning 5, slurm executor 15; then the
  // strategies' options, each listing its own: ei 16, its fit 17 and optimizer 5, ucb 18, cmets 26
  // and its fit 34, gpoo 15, bnb 9.
  EXPECT_GE(checked, 187u);
}

// The options of a subcommand as its --help lists them, each with all its names ("-o,--output TEXT",
// "--last N Excludes: --all").
std::vector<std::vector<std::string>> help_options(const fs::path& d, const std::string& command) {
  const Result r = tune(d, {command, "--help"});
  EXPECT_EQ(r.code, 0) << r.err;
  std::vector<std::vector<std::string>> options;
  std::istringstream in(r.out);
  bool in_options = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "Options:" || line.empty()) in_options = line == "Options:";  // the section ends at a blank line
    if (!in_options || line.rfind("  -", 0) != 0) continue;
    std::istringstream words(line);
    std::string first;
    words >> first;
    std::istringstream names(first);
    std::vector<std::string> option;
    for (std::string name; std::getline(names, name, ',');) option.push_back(name);
    if (first != "-h,--help") options.push_back(option);
  }
  return options;
}

// Whether `text` names `option` as a whole word ("--all", not the "--all" of "--allow").
bool mentions(const std::string& text, const std::string& option) {
  for (std::size_t at = text.find(option); at != std::string::npos; at = text.find(option, at + 1)) {
    const std::size_t end = at + option.size();
    if (end == text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '-')) return true;
  }
  return false;
}

// The README's command summary and the subcommands' --help agree: every option the summary shows a
// subcommand with is one its --help lists, and every option a --help lists is documented in the
// README (as `--option`, or in a command line shown there).
TEST(TuneDocsContract, TheReadmeAndEachSubcommandsHelpNameTheSameOptions) {
  const fs::path d = fresh_dir("docs-help");
  const std::string readme = slurp(kRoot / "README.md");
  std::map<std::string, std::vector<std::vector<std::string>>> help;
  std::map<std::string, std::set<std::string>> names;
  for (const char* c : {"init", "run", "resume", "status", "best", "export", "enqueue", "stop", "ask", "tell"}) {
    help[c] = help_options(d, c);
    for (const auto& option : help[c]) names[c].insert(option.begin(), option.end());
  }
  ASSERT_TRUE(names["run"].contains("--trials") && names["export"].contains("-o")) << "--help parsed";

  std::size_t used = 0;
  for (const std::string& block : fenced_blocks(kRoot / "README.md", "```sh")) {
    std::istringstream in(block);
    for (std::string line; std::getline(in, line);) {
      line = line.substr(0, line.find('#'));
      // "tune ask DIR / tune tell DIR ID VALUE": two commands on one line.
      for (std::size_t at = line.find("tune "); at != std::string::npos; at = line.find("tune ", at + 1)) {
        if (at > 0 && line[at - 1] != ' ' && line[at - 1] != '/') continue;  // ./build/tuner/tune is fine too
        std::istringstream words(line.substr(at + 5));
        std::string command, word;
        words >> command;
        if (!names.contains(command)) continue;
        while (words >> word && word != "--" && word != "/" && word != "&&") {
          if (word.rfind("--", 0) != 0 && !(word.size() == 2 && word[0] == '-')) continue;
          word = word.substr(0, word.find_first_of("=]"));
          EXPECT_TRUE(names[command].contains(word)) << "README: '" << line << "': tune " << command << " has no " << word;
          ++used;
        }
      }
    }
  }
  EXPECT_GE(used, 12u) << "the README's command summary was read";

  for (const auto& [command, options] : help)
    for (const std::vector<std::string>& option : options)
      EXPECT_TRUE(std::any_of(option.begin(), option.end(), [&](const std::string& n) { return mentions(readme, n); }))
          << "tune " << command << " --help lists " << option.back() << ", which README.md does not mention";
}

// A README output sample and the program's output agree up to numbers (which change with the
// engine) and durations: every number becomes '#', every run of blanks one space.
std::string shape(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto digit = [&](std::size_t k) { return k < text.size() && std::isdigit(static_cast<unsigned char>(text[k])); };
    const bool starts_number = digit(i) || (text[i] == '-' && digit(i + 1) &&
                                            (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]))));
    if (starts_number) {
      i += text[i] == '-' ? 1 : 0;
      while (digit(i) || (text[i] == '.' && digit(i + 1))) ++i;
      if (i < text.size() && text[i] == 'e' && (digit(i + 1) || ((text[i + 1] == '-' || text[i + 1] == '+') && digit(i + 2)))) {
        i += 2;
        while (digit(i)) ++i;
      }
      // A duration's unit goes with its number: "active time 1.1s" and "337ms" have one shape.
      const auto unit = [&](const std::string& u) {
        return text.compare(i, u.size(), u) == 0 && !std::isalpha(static_cast<unsigned char>(i + u.size() < text.size() ? text[i + u.size()] : ' '));
      };
      if (unit("ms")) i += 2;
      else if (unit("s")) i += 1;
      out += '#';
    } else if (text[i] == ' ') {
      if (out.empty() || out.back() != ' ') out += ' ';
      ++i;
    } else {
      out += text[i++];
    }
  }
  return out;
}

// The README block that begins with `first_line_prefix`.
std::string readme_sample(const std::string& first_line_prefix) {
  for (const std::string& block : fenced_blocks(kRoot / "README.md", "```"))
    if (block.rfind(first_line_prefix, 0) == 0) return block;
  ADD_FAILURE() << "no README sample begins with '" << first_line_prefix << "'";
  return "";
}

// README, "Noisy objectives", "Robust regions" and "Multi-resolution campaigns": the `tune best` and
// `tune status` outputs shown are what the program prints for the campaigns named there. The
// samples had drifted (a best result abbreviated to 4 digits, a gpoo region no campaign produced,
// a level table and recommendation of an older engine).
TEST(TuneDocsContract, TheReadmesOutputSamplesAreWhatTheProgramPrints) {
  const fs::path d = fresh_dir("docs-samples");
  // Noisy objectives: the quadratic plus noise of sd 0.3, seeded by the trial id (tests/e2e/tune_best_test.cpp).
  write_script(d, "bn.sh", "#!/bin/sh\nawk -v x=\"$1\" -v y=\"$2\" -v id=\"$TUNE_TRIAL_ID\" 'BEGIN { srand(id + 7); "
                           "u = rand(); v = rand(); n = sqrt(-2 * log(1 - u)) * cos(6.283185307 * v); "
                           "printf \"loss=%.17g\\n\", (x - 0.3) ^ 2 + (y + 1) ^ 2 / 4 + 0.3 * n }'\n");
  const std::string square = "space:\n  x: {type: float, low: -1, high: 1}\n  y: {type: float, low: -3, high: 1}\n";
  write(d / "bn.yaml", "name: bn\ncommand: [./bn.sh, \"{x}\", \"{y}\"]\n" + square +
                           "objective: {name: loss}\nbudget: {trials: 30}\nseed: 2\n");
  // Robust regions: 60 trials of gpoo on the noise-free quadratic.
  write(d / "gq.yaml", "name: gq\ncommand: [" + (kTrainers / "quadratic.sh").string() + ", \"{x}\", \"{y}\"]\n" + square +
                           "objective: loss\nbudget: {trials: 60}\nstrategy: gpoo\n");
  // Multi-resolution campaigns: declared costs, cheap runs shifted 1 below the full ones.
  write(d / "md.yaml", "name: md\ncommand: [" + (kTrainers / "multires.sh").string() +
                           ", \"{x}\", \"{y}\", --epochs, \"{epochs}\"]\n" + square +
                           "resolution: {param: epochs, levels: [1, 3, 9], cost: [1, 3, 9]}\n"
                           "objective: {name: loss, direction: minimize}\nstrategy: {name: cmets}\n"
                           "budget: {cost: 60}\nexecutor: {workers: 1}\n");
  for (const char* c : {"bn", "gq"}) ASSERT_EQ(tune(d, {"run", std::string(c) + ".yaml", "--quiet"}).code, 0) << c;
  ASSERT_EQ(tune(d, {"run", "md.yaml", "--quiet"}, {{"MULTIRES_SHIFT", "-1"}}).code, 0);

  const auto expect_sample = [&](const std::vector<std::string>& args, const std::string& prefix, std::size_t lines) {
    const Result r = tune(d, args);
    ASSERT_EQ(r.code, 0) << r.err;
    std::string printed;
    std::istringstream in(r.out);
    std::string line;
    for (std::size_t n = 0; n < lines && std::getline(in, line); ++n) printed += line + "\n";
    EXPECT_EQ(shape(readme_sample(prefix)), shape(printed)) << "README sample:\n" << readme_sample(prefix) << "printed:\n" << printed;
  };
  expect_sample({"best", "bn"}, "# the model believes trial", 1000);
  expect_sample({"best", "gq"}, "# gpoo recommends the region", 1000);
  expect_sample({"status", "md"}, "campaign md (minimize loss", 15);  // the summary; the trial list is not shown
  expect_sample({"best", "md"}, "# at full resolution (epochs = ", 1000);
}

// README, Trials run from outside: exit 6 ("results are awaited") also when the trials handed out
// hold every configuration left to propose; after a tell the next ask hands out again (or ends).
TEST(TuneDocsContract, AskExitsSixWhileTheTrialsHandedOutHoldEveryConfigurationLeft) {
  const fs::path d = fresh_dir("docs-ask-six");
  write(d / "c.yaml", "name: two\nspace:\n  c: {type: categorical, choices: [a, b]}\n"
                      "objective: {name: loss, deterministic: true}\nbudget: {trials: 5}\n");
  ASSERT_EQ(tune(d, {"ask", "c.yaml"}).code, 0);
  ASSERT_EQ(tune(d, {"ask", "two"}).code, 0);
  const Result waiting = tune(d, {"ask", "two"});
  EXPECT_EQ(waiting.code, 6) << waiting.err;
  EXPECT_EQ(waiting.out, "");
  EXPECT_NE(waiting.err.find("are awaited"), std::string::npos) << waiting.err;
  ASSERT_EQ(tune(d, {"tell", "two", "0", "1"}).code, 0);
  ASSERT_EQ(tune(d, {"tell", "two", "1", "2"}).code, 0);
  const Result done = tune(d, {"ask", "two"});
  EXPECT_EQ(done.code, 0) << done.err;
  EXPECT_EQ(done.out, "") << "every configuration has run: the campaign is finished";
}

// README, the command summary: `tune run campaign.yaml`, `tune resume DIR`. `tune run DIR` (for
// resume) was read as YAML and refused with exit 1 as "expected a campaign: a map with name, command,
// ..."; a missing file exited 1 while `tune ask` exits 2 for one. Both are a bad command line (exit 2).
TEST(TuneDocsContract, RunOfACampaignDirectoryOrAMissingFileSaysWhatToTypeAndExitsTwo) {
  const fs::path d = fresh_dir("docs-run-dir");
  write(d / "c.yaml", quadratic_campaign_with("q", 1, "{workers: 1}"));
  ASSERT_EQ(tune(d, {"run", "c.yaml", "--quiet"}).code, 0);
  const std::string before = slurp(d / "q" / "state.yaml");
  const Result dir = tune(d, {"run", "q"});
  EXPECT_EQ(dir.code, 2) << dir.err;
  EXPECT_NE(dir.err.find("q is a campaign directory; continue it with 'tune resume q'"), std::string::npos) << dir.err;
  EXPECT_EQ(slurp(d / "q" / "state.yaml"), before);
  fs::create_directories(d / "plain");
  const Result plain = tune(d, {"run", "plain"});
  EXPECT_EQ(plain.code, 2) << plain.err;
  EXPECT_NE(plain.err.find("plain is a directory; give a campaign file"), std::string::npos) << plain.err;
  const Result missing = tune(d, {"run", "nofile.yaml"});
  EXPECT_EQ(missing.code, 2) << missing.err;
  EXPECT_NE(missing.err.find("nofile.yaml does not exist"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(d / "nofile.yaml"));
}

// README, the inline form: its errors cite the option, and `--cost-budget` needs a resolution. Without
// one the refusal was the campaign file's, telling the user to declare 'resolution' or use
// budget.trials / budget.wall, keys the command line cannot write.
TEST(TuneDocsContract, AnInlineCostBudgetWithoutLevelsSaysHowTheInlineFormDeclaresThem) {
  const fs::path d = fresh_dir("docs-inline-cost");
  const Result r = tune(d, {"run", "--name", "c", "--cost-budget", "10", "--", (kTrainers / "quadratic.sh").string(),
                            "--x~uniform(-1,1)", "--y~uniform(-3,1)"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("tune run: --cost-budget 10: a cost budget counts the costs of resolution levels"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--epochs~'levels(1,3,9,27)'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("budget.wall"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(d / "c")) << "nothing is created";
}

}  // namespace
