// load_state reads the run records and the study's trials of state.yaml straight from their lines
// (tune/io/flow_yaml.hpp's FlowRecord), without a yaml-cpp node per record: held here to the reading
// through yaml-cpp alone (state_from_yaml of parse_yaml), on random campaigns and on random damage.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../unit/flow_yaml_random.hpp"
#include "tune/io/flow_yaml.hpp"
#include "tune/io/yaml_values.hpp"
#include "tuner/campaign/campaign_state.hpp"

namespace tune::tuner {
namespace {

using flow_test::random_string;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tune-state-load-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_file(const std::filesystem::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// A printable string FlowYamlWriter writes itself, or with `any_bytes` any random string.
std::string random_text(std::mt19937_64& rng, bool any_bytes) {
  std::string s = random_string(rng);
  while (!any_bytes && flow_scalar_form(s) == FlowScalarForm::unsupported) s = random_string(rng);
  return s;
}

// A random campaign: runs of every status with random exits, messages, failure reasons, intermediate
// values, metrics, jobs and lost counts, external ones; with `measured`, a resolution whose trials
// carry their run's duration as their cost.
CampaignState random_campaign(std::mt19937_64& rng, bool measured, bool any_bytes) {
  std::string text =
      "name: c\ncommand: [echo, \"{x}\"]\n"
      "space: {x: {type: float, low: -2, high: 3}, k: {type: int, low: 1, high: 50, log: true}, "
      "act: {type: categorical, choices: [relu, \"a: b\", \"yes\"]}}\n"
      "objective: {name: loss, direction: minimize}\nstrategy: {name: random}\n";
  if (measured) text += "resolution: {param: epochs, levels: [1, 3, 9], cost: measured}\n";
  CampaignState s = CampaignState::create(campaign_from_yaml(YAML::Load(text), "c.yaml"), 1.7e9);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int i = 0; i < 50; ++i) {
    const auto suggestion = s.study.ask();
    if (!suggestion) break;
    TrialRun r;
    r.id = suggestion->id;
    r.attempts = rng() % 4;
    r.started_at = unit(rng) < 0.1 ? 0.0 : 1.7e9 + unit(rng) * 1e6;
    r.external = unit(rng) < 0.2;
    if (unit(rng) < 0.3) r.job = random_text(rng, any_bytes);
    if (unit(rng) < 0.2) r.lost = rng() % 5;
    const double u = unit(rng);
    if (u < 0.7) {  // finished
      adapters::TrialExit exit;
      exit.kind = static_cast<adapters::ExitKind>(rng() % 7);
      exit.code = static_cast<int>(rng() % 300) - 20;
      exit.signal = static_cast<int>(rng() % 20);
      exit.started_at = r.started_at;
      exit.finished_at = r.started_at + unit(rng) * 1000;
      if (unit(rng) < 0.5) exit.message = random_text(rng, any_bytes);
      r.finished_at = exit.finished_at;
      if (unit(rng) < 0.9) r.exit = exit;
      for (int k = static_cast<int>(rng() % 4); k > 0; --k)
        r.intermediate.push_back({static_cast<std::int64_t>(rng() % 1000) - 5, (unit(rng) - 0.5) * 1e3});
      for (int k = static_cast<int>(rng() % 3); k > 0; --k) r.metrics[random_text(rng, any_bytes)] = unit(rng);
      const std::optional<double> cost =
          measured ? std::optional<double>(r.exit && !r.external && r.started_at > 0 ? r.exit->duration() : unit(rng) * 10)
                   : std::nullopt;
      if (u < 0.5) {
        r.status = RunStatus::complete;
        if (unit(rng) < 0.3) {  // stopped by the pruning rule
          r.pruned = PruneRecord{static_cast<std::int64_t>(rng() % 100) - 3, (unit(rng) - 0.5) * 100,
                                 random_text(rng, any_bytes)};
          s.study.tell_pruned(r.id, r.pruned->step, r.pruned->value, cost);
        } else {
          s.study.tell(r.id, (unit(rng) - 0.5) * 100, cost);
        }
      } else {
        r.status = RunStatus::failed;
        r.failure_reason = random_text(rng, any_bytes);
        s.study.fail(r.id, r.failure_reason, cost);
      }
    } else {
      r.status = u < 0.85 ? RunStatus::running : RunStatus::queued;
      // A verdict recorded, the run not yet stopped.
      if (r.status == RunStatus::running && unit(rng) < 0.3) r.pruned = PruneRecord{7, unit(rng), random_text(rng, any_bytes)};
    }
    s.runs.push_back(r);
  }
  s.active_seconds = unit(rng) * 100;
  return s;
}

// The run records' fields, the doubles bit for bit.
void expect_identical_runs(const CampaignState& a, const CampaignState& b, const std::string& what) {
  ASSERT_EQ(a.runs.size(), b.runs.size()) << what;
  const auto bits = [](double x) { return std::bit_cast<std::uint64_t>(x); };
  for (std::size_t i = 0; i < a.runs.size(); ++i) {
    const TrialRun &x = a.runs[i], &y = b.runs[i];
    const std::string at = what + ", run " + std::to_string(i);
    EXPECT_EQ(x.id, y.id) << at;
    EXPECT_EQ(x.status, y.status) << at;
    EXPECT_EQ(x.attempts, y.attempts) << at;
    EXPECT_EQ(bits(x.started_at), bits(y.started_at)) << at;
    EXPECT_EQ(bits(x.finished_at), bits(y.finished_at)) << at;
    ASSERT_EQ(x.exit.has_value(), y.exit.has_value()) << at;
    if (x.exit) {
      EXPECT_EQ(x.exit->kind, y.exit->kind) << at;
      EXPECT_EQ(x.exit->code, y.exit->code) << at;
      EXPECT_EQ(x.exit->signal, y.exit->signal) << at;
      EXPECT_EQ(bits(x.exit->started_at), bits(y.exit->started_at)) << at;
      EXPECT_EQ(bits(x.exit->finished_at), bits(y.exit->finished_at)) << at;
      EXPECT_EQ(x.exit->message, y.exit->message) << at;
    }
    EXPECT_EQ(x.failure_reason, y.failure_reason) << at;
    ASSERT_EQ(x.intermediate.size(), y.intermediate.size()) << at;
    for (std::size_t k = 0; k < x.intermediate.size(); ++k) {
      EXPECT_EQ(x.intermediate[k].step, y.intermediate[k].step) << at;
      EXPECT_EQ(bits(x.intermediate[k].value), bits(y.intermediate[k].value)) << at;
    }
    EXPECT_EQ(x.metrics, y.metrics) << at;
    EXPECT_EQ(x.external, y.external) << at;
    EXPECT_EQ(x.job, y.job) << at;
    EXPECT_EQ(x.lost, y.lost) << at;
    ASSERT_EQ(x.pruned.has_value(), y.pruned.has_value()) << at;
    if (x.pruned) {
      EXPECT_EQ(x.pruned->step, y.pruned->step) << at;
      EXPECT_EQ(bits(x.pruned->value), bits(y.pruned->value)) << at;
      EXPECT_EQ(x.pruned->reason, y.pruned->reason) << at;
      ASSERT_TRUE(y.status != RunStatus::complete || b.study.trials()[i].pruned) << at;
      if (a.study.trials()[i].pruned) {
        EXPECT_EQ(a.study.trials()[i].pruned->step, b.study.trials()[i].pruned->step) << at;
        EXPECT_EQ(bits(a.study.trials()[i].pruned->last_value), bits(b.study.trials()[i].pruned->last_value)) << at;
      }
    }
  }
}

// The file's text as a save of the loaded state writes it, its clock's time masked.
std::string saved_again(const CampaignState& s) {
  // (Not std::regex: GCC 12 warns "may be used uninitialized" inside it at -O1, the sanitizer build.)
  std::string text = StateWriter().text(s);
  for (std::size_t at = text.find("updated_at: "); at != std::string::npos; at = text.find("updated_at: ", at + 1))
    text.replace(at + 12, text.find('\n', at) - at - 12, "T");
  return text;
}

TEST(CampaignStateLoad, RandomStatesLoadToTheSameRunsAsThroughYamlCpp) {
  std::mt19937_64 rng(31);
  std::size_t fast_loads = 0;
  for (int round = 0; round < 30; ++round) {
    const bool any_bytes = round % 4 == 3;
    const CampaignState original = random_campaign(rng, round % 2 == 1, any_bytes);
    const TempDir dir;
    save_state(dir.path(), original);
    const std::string text = read_file(state_path(dir.path()));
    const std::string what = "round " + std::to_string(round);
    const CampaignState by_yaml_cpp = state_from_yaml(parse_yaml(text));
    const std::optional<FastDocument> document = split_record_lists(text);
    ASSERT_TRUE(document.has_value()) << what;
    ASSERT_NE(record_lines(&document->records, "runs"), nullptr) << what;
    ASSERT_NE(record_lines(&document->records, "study.trials"), nullptr) << what;
    if (!any_bytes) {  // every line FlowYamlWriter's: the records are read from their lines
      const CampaignState by_lines = state_from_yaml(document->root, &document->records);
      expect_identical_runs(by_lines, by_yaml_cpp, what);
      EXPECT_EQ(saved_again(by_lines), saved_again(by_yaml_cpp)) << what;
      ++fast_loads;
    }
    const CampaignState loaded = load_state(dir.path());
    expect_identical_runs(loaded, by_yaml_cpp, what);
    EXPECT_EQ(saved_again(loaded), saved_again(by_yaml_cpp)) << what;
    if (!any_bytes) {  // (yaml-cpp reads an invalid UTF-8 byte as U+FFFD)
      expect_identical_runs(loaded, original, what);
      EXPECT_EQ(saved_again(loaded), saved_again(original)) << what;
    }
  }
  EXPECT_GE(fast_loads, 20u);
}

// The outcome of a load: the state saved again, or the refusal's message.
std::string load_outcome(const std::function<CampaignState()>& load) {
  try {
    return "loaded:\n" + saved_again(load());
  } catch (const std::exception& e) {
    return std::string("refused: ") + e.what();
  }
}

// Random damage to a run record or a trial line (a token replaced, inserted or removed) loads as
// through yaml-cpp alone: the same state, or the same refusal (position, field, fix), the checks
// across records (a trial's measured cost against its run's duration) included.
TEST(CampaignStateLoad, DamagedRecordLinesLoadOrAreRefusedAsThroughYamlCpp) {
  std::mt19937_64 rng(12);
  const std::vector<std::string> tokens = {"x", "-1", "0", "1", "2", "1e400", ".nan", ".inf", "0.5", "\"", ", ",
                                           ": ", "{", "}", "[", "]", "null", "true", "false", "complete", "failed",
                                           "running", "queued", "exited", "signaled", "duration", "cost", "exit",
                                           "metrics", "9", "\"a\"", " ", "lost", "job", "intermediate", "[1, 2]"};
  std::size_t refused = 0, loaded = 0;
  const TempDir dir;
  const std::string fix = "; the file was left as it is (restore it from a backup, or start a new campaign directory)";
  for (int round = 0; round < 300; ++round) {
    std::mt19937_64 campaign_rng(static_cast<std::uint64_t>(round / 30));
    save_state(dir.path(), random_campaign(campaign_rng, round % 2 == 0, false));
    std::string text = read_file(state_path(dir.path()));
    std::vector<std::size_t> starts;  // the record lines: runs' and the study's trials'
    for (const char* prefix : {"\n  - {", "\n    - {"})
      for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1))
        starts.push_back(at + 1);
    const std::size_t line = starts[rng() % starts.size()];
    flow_test::damage_record_line(text, line, tokens, rng);
    write_file(state_path(dir.path()), text);
    const std::string expected = load_outcome([&] {
      try {
        return state_from_yaml(parse_yaml(text));
      } catch (const StateError& e) {
        throw CampaignError(state_path(dir.path()).string() + ": " + e.what() + fix);
      } catch (const CampaignError& e) {
        throw CampaignError(state_path(dir.path()).string() + ": " + e.what() + fix);
      }
    });
    const std::string actual = load_outcome([&] { return load_state(dir.path()); });
    ASSERT_EQ(actual, expected) << "round " << round << ": " << text.substr(line, text.find('\n', line) - line);
    (expected.starts_with("refused") ? refused : loaded) += 1;
  }
  EXPECT_GT(refused, 100u);
  EXPECT_GT(loaded, 30u);
}

// The check across records (a trial's measured cost against its run's exit.duration) holds on the
// fast path too: a cost or a duration edited on its own is refused with yaml-cpp's position.
TEST(CampaignStateLoad, ACostThatDisagreesWithItsRunsDurationIsRefusedAsThroughYamlCpp) {
  std::mt19937_64 rng(8);
  const CampaignState state = random_campaign(rng, true, false);
  const TempDir dir;
  save_state(dir.path(), state);
  const std::string text = read_file(state_path(dir.path()));
  const TrialRun* checked = nullptr;
  for (const TrialRun& r : state.runs)
    if (r.exit && !r.external && r.started_at > 0 && state.study.trials()[r.id].cost) checked = &r;
  ASSERT_NE(checked, nullptr);
  const std::string id = std::to_string(checked->id);
  const std::string fix = "; the file was left as it is (restore it from a backup, or start a new campaign directory)";
  // The value after `key: ` in the record line of `id` that starts with `line_prefix`, replaced.
  const auto edited = [&](const std::string& line_prefix, const std::string& key) {
    std::string t = text;
    const std::size_t line = t.find(line_prefix + id + ",");
    const std::size_t at = t.find(key + ": ", line) + key.size() + 2;
    return t.replace(at, t.find_first_of(",}", at) - at, "123.5");
  };
  for (const std::string& variant : {edited("\n    - {id: ", "cost"), edited("\n  - {id: ", "duration")}) {
    ASSERT_NE(variant, text);
    write_file(state_path(dir.path()), variant);
    std::string expected;
    try {
      (void)state_from_yaml(parse_yaml(variant));
    } catch (const StateError& e) {
      expected = state_path(dir.path()).string() + ": " + e.what() + fix;
    }
    EXPECT_NE(expected.find("restore the cost to the run's duration"), std::string::npos) << expected;
    EXPECT_NE(expected.find("line "), std::string::npos) << expected;
    try {
      (void)load_state(dir.path());
      ADD_FAILURE() << "loaded: " << expected;
    } catch (const CampaignError& e) {
      EXPECT_EQ(std::string(e.what()), expected);
    }
  }
}

}  // namespace
}  // namespace tune::tuner
