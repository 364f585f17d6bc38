// What the `tune` program costs per trial, end to end: runs real campaigns of a trainer that only
// sleeps, and measures from the supervisors' records (trials/<id>/exit.yaml: the instant the command
// was started and the instant it ended, taken by the supervisor) how long each worker slot stays
// empty between one trial's end and the next trial's start.
//
//   1. gaps: a 50 ms trainer (/bin/sh script: sleep 0.05; echo objective=$1) on one float x in
//      [0, 1], strategies ei (the default) and random (to separate the strategy's time from the
//      process and bookkeeping time), 1 worker x N trials and 8 workers x 2N trials (N = 60).
//      1 worker: gap = start[i+1] - end[i] in launch order. W workers: for every trial after the
//      first W (in start order), its start minus the latest end among the trials that had ended
//      before it started (per the brief; "gap"), and, since several slots free up together, also
//      the slot-matched gap: the k-th start after the first W minus the k-th end ("slot gap").
//   2. busy fraction: 4 workers on a 1 s trainer, 24 trials (--quick: 12):
//      busy = sum of trial durations / (4 x (last end - first start)); target >= 95 %.
//
// Where a gap goes, from the tuner's own records: the 'complete' event (the tuner has read the
// trial's report, told the study and checkpointed the state), runs[i].started_at in state.yaml
// (taken after the ask, just before the launch checkpoint) and the 'launch' event (the supervisor
// process has been exec'd). So a slot gap (the trial whose end it starts at being the slot-matched
// one; for 1 worker both gaps are the same) = detect (supervisor tail + poll + collect + checkpoint)
// + ask + tuner launch (checkpoint, command.yaml, fork/exec) + supervisor start-up. (Before the
// event log wrote an event after the checkpoint that records it, the checkpoint fell in the second
// part: bench/results/tuner_overhead.md was measured so.)
// The checkpoint is also timed on its own (rebuilding and emitting the final state.yaml and writing
// it atomically, as save_state does), and the strategy's ask() is timed in-process on the same
// space, seed and values.
//
//   tuner_overhead [--tune PATH] [--trials N] [--csv PATH] [--quick]
//
// PATH defaults to the `tune` built next to this program (../tuner/tune from this executable's
// directory). The campaigns run in a temporary directory, removed at the end.
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_machine.hpp"
#include "bench_process.hpp"
#include "tune/io/atomic_file.hpp"
#include "tune/tune.hpp"

namespace {

namespace fs = std::filesystem;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::uint64_t kSeed = 1;

double epoch_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Options {
  fs::path tune;
  std::size_t trials = 60;
  fs::path csv = "tuner_overhead.csv";
  bool quick = false;
};

struct Scenario {
  std::string name;
  std::string strategy;
  std::size_t workers = 1;
  std::size_t trials = 0;
  std::string sleep;  // the trainer's `sleep` argument
  bool busy_test = false;
};

struct TrialRow {
  std::uint64_t id = 0;
  std::string status;     // from state.yaml
  std::string exit_kind;  // from exit.yaml
  int exit_code = 0;
  double launch_rec = kNaN;    // runs[i].started_at: after the ask, before the launch checkpoint
  double launch_ev = kNaN;     // 'launch' event: the supervisor has been exec'd
  double start = kNaN;         // exit.yaml started_at (supervisor, just before it forks the command)
  double end = kNaN;           // exit.yaml finished_at (supervisor, after the command was reaped)
  double collected_ev = kNaN;  // 'complete'/'fail' event: report read, study told, state checkpointed
  // Derived, in seconds; NaN for the first W trials.
  double gap = kNaN;       // start minus the latest end before it (the brief's definition)
  double gap_slot = kNaN;  // k-th start after the first W minus the k-th end
  // The decomposition follows the slot-matched predecessor (for 1 worker the same trial).
  double detect = kNaN;    // slot predecessor: end -> collected (its checkpoint included)
  double ask_ckpt = kNaN;  // slot predecessor collected -> this launch_rec (the ask)
  double tuner_launch = kNaN;      // launch_rec -> launch_ev (checkpoint + command.yaml + fork/exec)
  double supervisor_start = kNaN;  // launch_ev -> start (supervisor start-up until it forks the command)
  std::optional<std::uint64_t> predecessor;       // the trial whose end `gap` is measured from
  std::optional<std::uint64_t> slot_predecessor;  // the trial whose end `gap_slot` is measured from
};

struct Stats {
  std::size_t n = 0;
  double median = kNaN, p90 = kNaN, max = kNaN, mean = kNaN;
};

Stats stats(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto q = [&](double p) {
    const double pos = p * static_cast<double>(v.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  s.median = q(0.5);
  s.p90 = q(0.9);
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  return s;
}

struct CheckpointCost {
  std::size_t bytes = 0;
  Stats build_emit_ms;  // YAML tree of the state (the study rebuilt) + emit
  Stats write_ms;       // write_file_atomically (temporary file, fsync, rename, fsync of the dir)
};

struct Result {
  Scenario scenario;
  int exit_status = -1;
  double wall_s = kNaN;     // fork of `tune run` -> its exit
  double startup_s = kNaN;  // fork -> first trial's launch record
  double tail_s = kNaN;     // last trial's end -> `tune run` exited
  std::vector<TrialRow> rows;  // in start order
  std::size_t failed = 0;
  double busy = kNaN;
  Stats gap_ms, gap_slot_ms, duration_ms, detect_ms, ask_ckpt_ms, tuner_launch_ms, supervisor_start_ms;
  Stats ask_ms;  // in-process ask() on the same space, seed and values
  CheckpointCost checkpoint;
};

std::vector<double> ms(const std::vector<TrialRow>& rows, double TrialRow::*field) {
  std::vector<double> out;
  for (const TrialRow& r : rows) out.push_back(1000.0 * (r.*field));
  return out;
}

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "tuner_overhead: %s\n", message.c_str());
  std::exit(1);
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) die("cannot write " + path.string());
}

fs::path write_trainer(const fs::path& dir, const std::string& sleep) {
  const fs::path path = dir / ("trainer-" + sleep + ".sh");
  write_text(path, "#!/bin/sh\nsleep " + sleep + "\necho \"objective=$1\"\n");
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add);
  return path;
}

fs::path write_campaign(const fs::path& dir, const Scenario& sc, const fs::path& trainer) {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << sc.name;
  e << YAML::Key << "command" << YAML::Value << YAML::Flow << YAML::BeginSeq << "/bin/sh" << trainer.string() << "{x}"
    << YAML::EndSeq;
  e << YAML::Key << "space" << YAML::Value << YAML::BeginMap << YAML::Key << "x" << YAML::Value << YAML::Flow
    << YAML::BeginMap << YAML::Key << "type" << YAML::Value << "float" << YAML::Key << "low" << YAML::Value << 0.0
    << YAML::Key << "high" << YAML::Value << 1.0 << YAML::EndMap << YAML::EndMap;
  e << YAML::Key << "objective" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value
    << "objective" << YAML::Key << "direction" << YAML::Value << "minimize" << YAML::EndMap;
  e << YAML::Key << "strategy" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value
    << sc.strategy << YAML::EndMap;
  e << YAML::Key << "budget" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "trials" << YAML::Value
    << sc.trials << YAML::EndMap;
  e << YAML::Key << "executor" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "kind" << YAML::Value
    << "local" << YAML::Key << "workers" << YAML::Value << sc.workers << YAML::EndMap;
  e << YAML::Key << "seed" << YAML::Value << kSeed;
  e << YAML::EndMap;
  const fs::path path = dir / (sc.name + ".yaml");
  write_text(path, std::string(e.c_str()) + "\n");
  return path;
}

// "key": value or "key": "value" in one events.jsonl line.
std::optional<std::string> json_field(const std::string& line, const std::string& key) {
  const std::string needle = "\"" + key + "\": ";
  std::size_t p = line.find(needle);
  if (p == std::string::npos) return std::nullopt;
  p += needle.size();
  if (p < line.size() && line[p] == '"') {
    const std::size_t q = line.find('"', p + 1);
    if (q == std::string::npos) return std::nullopt;
    return line.substr(p + 1, q - p - 1);
  }
  const std::size_t q = line.find_first_of(",}", p);
  return line.substr(p, q == std::string::npos ? std::string::npos : q - p);
}

void read_events(const fs::path& file, std::map<std::uint64_t, TrialRow>& rows) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const auto event = json_field(line, "event");
    const auto time = json_field(line, "time");
    const auto trial = json_field(line, "trial");
    if (!event || !time || !trial) continue;
    const std::uint64_t id = std::stoull(*trial);
    const double t = std::stod(*time);
    auto it = rows.find(id);
    if (it == rows.end()) continue;
    // Last one wins: a re-queued trial's later attempt is the one whose exit.yaml we read.
    if (*event == "launch") it->second.launch_ev = t;
    if (*event == "complete" || *event == "fail") it->second.collected_ev = t;
  }
}

CheckpointCost measure_checkpoint(const fs::path& dir, int repetitions) {
  CheckpointCost cost;
  const YAML::Node root = YAML::LoadFile((dir / "state.yaml").string());
  const tune::Study study = tune::Study::from_yaml(root["study"]);
  std::vector<double> build, write;
  for (int i = 0; i < repetitions; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    YAML::Node node = YAML::Clone(root);  // stands for rebuilding the runs and the campaign
    node["study"] = study.to_yaml();
    YAML::Emitter out;
    out << node;
    const std::string text = std::string(out.c_str()) + "\n";
    const auto t1 = std::chrono::steady_clock::now();
    tune::write_file_atomically(dir / "checkpoint_probe.yaml", text);
    const auto t2 = std::chrono::steady_clock::now();
    build.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    write.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    cost.bytes = text.size();
  }
  fs::remove(dir / "checkpoint_probe.yaml");
  cost.build_emit_ms = stats(build);
  cost.write_ms = stats(write);
  return cost;
}

// The strategy's ask() in-process on the same space, seed and objective (value = x), with W trials
// pending as in the campaign (the oldest is told before each new ask).
Stats measure_ask(const Scenario& sc) {
  tune::Space space({tune::Parameter::floating("x", 0.0, 1.0)});
  tune::Study study(space, tune::make_strategy(sc.strategy), {.direction = tune::Direction::minimize, .seed = kSeed});
  std::vector<double> times;
  std::vector<tune::Suggestion> pending;
  std::size_t next_tell = 0;
  while (times.size() < sc.trials) {
    if (pending.size() - next_tell >= sc.workers) {
      const tune::Suggestion& s = pending[next_tell++];
      study.tell(s.id, std::get<double>(s.config.at("x")));
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<tune::Suggestion> s = study.ask();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (!s) break;
    pending.push_back(*s);
  }
  return stats(times);
}

Result run_scenario(const Options& opt, const Scenario& sc, const fs::path& root, const fs::path& trainer) {
  Result res;
  res.scenario = sc;
  const fs::path campaign = write_campaign(root, sc, trainer);
  const fs::path dir = root / sc.name;
  std::printf("  %-14s %s, %zu worker(s), %zu trials of sleep %s ...", sc.name.c_str(), sc.strategy.c_str(), sc.workers,
              sc.trials, sc.sleep.c_str());
  const double e0 = epoch_now();
  const auto t0 = std::chrono::steady_clock::now();
  const int status = tune::bench::run_program({opt.tune.string(), "run", campaign.string(), "--dir", dir.string(), "--quiet"});
  const auto t1 = std::chrono::steady_clock::now();
  const double e1 = epoch_now();
  res.wall_s = std::chrono::duration<double>(t1 - t0).count();
  res.exit_status = tune::bench::exit_status(status);
  std::printf(" %.2f s (exit %d)\n", res.wall_s, res.exit_status);
  if (res.exit_status != 0) die("'tune run' failed for " + sc.name + " (see the messages above)");

  std::map<std::uint64_t, TrialRow> by_id;
  const YAML::Node state = YAML::LoadFile((dir / "state.yaml").string());
  for (const YAML::Node& r : state["runs"]) {
    TrialRow row;
    row.id = r["id"].as<std::uint64_t>();
    row.status = r["status"].as<std::string>();
    row.launch_rec = r["started_at"].as<double>();
    const fs::path exit_file = dir / "trials" / std::to_string(row.id) / "exit.yaml";
    if (fs::exists(exit_file)) {
      const YAML::Node x = YAML::LoadFile(exit_file.string());
      row.exit_kind = x["kind"].as<std::string>();
      row.exit_code = x["code"].as<int>();
      row.start = x["started_at"].as<double>();
      row.end = x["finished_at"].as<double>();
    }
    by_id.emplace(row.id, row);
  }
  read_events(dir / "events.jsonl", by_id);

  for (auto& [id, row] : by_id) {
    if (row.status != "complete" || row.exit_kind != "exited" || row.exit_code != 0) ++res.failed;
    if (!std::isnan(row.start)) res.rows.push_back(row);
  }
  std::sort(res.rows.begin(), res.rows.end(), [](const TrialRow& a, const TrialRow& b) { return a.start < b.start; });
  std::vector<const TrialRow*> by_end;
  for (const TrialRow& r : res.rows) by_end.push_back(&r);
  std::sort(by_end.begin(), by_end.end(), [](const TrialRow* a, const TrialRow* b) { return a->end < b->end; });

  const std::size_t w = sc.workers;
  double busy_sum = 0, first_start = std::numeric_limits<double>::infinity(), last_end = -first_start;
  for (std::size_t k = 0; k < res.rows.size(); ++k) {
    TrialRow& r = res.rows[k];
    busy_sum += r.end - r.start;
    first_start = std::min(first_start, r.start);
    last_end = std::max(last_end, r.end);
    r.tuner_launch = r.launch_ev - r.launch_rec;
    r.supervisor_start = r.start - r.launch_ev;
    if (k < w) continue;
    const TrialRow* pred = nullptr;
    for (const TrialRow& other : res.rows)
      if (other.end <= r.start && (!pred || other.end > pred->end)) pred = &other;
    if (pred) {
      r.predecessor = pred->id;
      r.gap = r.start - pred->end;
    }
    const TrialRow& slot = *by_end[k - w];
    r.slot_predecessor = slot.id;
    r.gap_slot = r.start - slot.end;
    r.detect = slot.collected_ev - slot.end;
    r.ask_ckpt = r.launch_rec - slot.collected_ev;
  }
  res.busy = busy_sum / (static_cast<double>(w) * (last_end - first_start));
  if (!res.rows.empty()) {
    res.startup_s = res.rows.front().launch_rec - e0;
    res.tail_s = e1 - last_end;
  }
  res.gap_ms = stats(ms(res.rows, &TrialRow::gap));
  res.gap_slot_ms = stats(ms(res.rows, &TrialRow::gap_slot));
  std::vector<double> durations;
  for (const TrialRow& r : res.rows) durations.push_back(1000.0 * (r.end - r.start));
  res.duration_ms = stats(durations);
  res.detect_ms = stats(ms(res.rows, &TrialRow::detect));
  res.ask_ckpt_ms = stats(ms(res.rows, &TrialRow::ask_ckpt));
  res.tuner_launch_ms = stats(ms(res.rows, &TrialRow::tuner_launch));
  res.supervisor_start_ms = stats(ms(res.rows, &TrialRow::supervisor_start));
  res.ask_ms = measure_ask(sc);
  res.checkpoint = measure_checkpoint(dir, 15);
  return res;
}

void usage() {
  std::fprintf(stderr, "usage: tuner_overhead [--tune PATH] [--trials N] [--csv PATH] [--quick]\n");
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  o.tune = tune::bench::tune_next_to_this_program();
  bool trials_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--tune") o.tune = value();
    else if (a == "--trials") {
      const std::string v = value();
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 2) usage();
      o.trials = static_cast<std::size_t>(n);
      trials_given = true;
    } else if (a == "--csv") o.csv = value();
    else if (a == "--quick") o.quick = true;
    else usage();
  }
  if (o.quick && !trials_given) o.trials = 20;
  if (::access(o.tune.c_str(), X_OK) != 0) die("cannot execute '" + o.tune.string() + "' (build tune_cli, or give --tune PATH)");
  o.tune = fs::absolute(o.tune);
  return o;
}

std::string fmt(double v, const char* f = "%.1f") {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void write_csv(const fs::path& path, const std::vector<Result>& results) {
  std::ofstream out(path);
  if (!out) die("cannot write " + path.string());
  out << "scenario,strategy,workers,trial,status,exit_kind,exit_code,launch_record,launch_event,start,end,collected_event,"
         "duration_ms,predecessor,gap_ms,slot_predecessor,slot_gap_ms,detect_ms,ask_checkpoint_ms,tuner_launch_ms,supervisor_start_ms\n";
  char buf[64];
  auto num = [&](double v, const char* f) -> std::string {
    if (std::isnan(v)) return "";
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
  };
  for (const Result& res : results)
    for (const TrialRow& r : res.rows) {
      out << res.scenario.name << ',' << res.scenario.strategy << ',' << res.scenario.workers << ',' << r.id << ','
          << r.status << ',' << r.exit_kind << ',' << r.exit_code << ',' << num(r.launch_rec, "%.6f") << ','
          << num(r.launch_ev, "%.6f") << ',' << num(r.start, "%.6f") << ',' << num(r.end, "%.6f") << ','
          << num(r.collected_ev, "%.6f") << ',' << num(1000.0 * (r.end - r.start), "%.3f") << ','
          << (r.predecessor ? std::to_string(*r.predecessor) : std::string()) << ',' << num(1000.0 * r.gap, "%.3f")
          << ',' << (r.slot_predecessor ? std::to_string(*r.slot_predecessor) : std::string()) << ','
          << num(1000.0 * r.gap_slot, "%.3f") << ',' << num(1000.0 * r.detect, "%.3f") << ','
          << num(1000.0 * r.ask_ckpt, "%.3f") << ',' << num(1000.0 * r.tuner_launch, "%.3f") << ','
          << num(1000.0 * r.supervisor_start, "%.3f") << '\n';
    }
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);

  std::string tmpl = (fs::temp_directory_path() / "tuner_overhead.XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) die(std::string("mkdtemp: ") + std::strerror(errno));
  const fs::path root = tmpl;

  std::printf("tuner_overhead: tune = %s\n", opt.tune.c_str());
  std::printf("%s\n", tune::bench::machine_line().c_str());
  std::printf("campaigns in %s (%s)\n\n", root.c_str(), tune::bench::filesystem_type(root).c_str());

  const fs::path short_trainer = write_trainer(root, "0.05");
  const fs::path long_trainer = write_trainer(root, "1");
  const std::size_t n = opt.trials;
  const std::vector<Scenario> scenarios = {
      {"w1-random", "random", 1, n, "0.05", false},
      {"w1-ei", "ei", 1, n, "0.05", false},
      {"w8-random", "random", 8, 2 * n, "0.05", false},
      {"w8-ei", "ei", 8, 2 * n, "0.05", false},
      {"w4-busy-1s", "ei", 4, opt.quick ? std::size_t{12} : std::size_t{24}, "1", true},
  };
  std::vector<Result> results;
  for (const Scenario& sc : scenarios)
    results.push_back(run_scenario(opt, sc, root, sc.sleep == "1" ? long_trainer : short_trainer));

  std::printf("\nGap between a trial's end and the next start in its worker slot (ms; supervisor records)\n\n");
  std::printf("| scenario | strategy | workers | trials | trial median ms | gap median | gap p90 | gap max | slot gap median | slot gap p90 | busy | tune wall s |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Result& r : results)
    std::printf("| %s | %s | %zu | %zu | %s | %s | %s | %s | %s | %s | %s%% | %s |\n", r.scenario.name.c_str(),
                r.scenario.strategy.c_str(), r.scenario.workers, r.rows.size(), fmt(r.duration_ms.median).c_str(),
                fmt(r.gap_ms.median).c_str(), fmt(r.gap_ms.p90).c_str(), fmt(r.gap_ms.max).c_str(),
                fmt(r.gap_slot_ms.median).c_str(), fmt(r.gap_slot_ms.p90).c_str(), fmt(100.0 * r.busy).c_str(),
                fmt(r.wall_s, "%.2f").c_str());

  std::printf("\nWhere a slot gap goes (median ms; detect: the slot predecessor's end -> its report read and told)\n\n");
  std::printf("| scenario | detect (exit.yaml, poll, collect, tell, checkpoint) | ask | tuner launch (checkpoint, fork/exec) | supervisor start-up | in-process ask median / p90 / max | checkpoint build+emit | checkpoint write (fsync) | state.yaml KB | startup s | tail s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Result& r : results)
    std::printf("| %s | %s | %s | %s | %s | %s / %s / %s | %s | %s | %s | %s | %s |\n", r.scenario.name.c_str(),
                fmt(r.detect_ms.median).c_str(), fmt(r.ask_ckpt_ms.median).c_str(),
                fmt(r.tuner_launch_ms.median).c_str(), fmt(r.supervisor_start_ms.median).c_str(),
                fmt(r.ask_ms.median, "%.3f").c_str(), fmt(r.ask_ms.p90, "%.3f").c_str(),
                fmt(r.ask_ms.max, "%.3f").c_str(), fmt(r.checkpoint.build_emit_ms.median).c_str(),
                fmt(r.checkpoint.write_ms.median).c_str(),
                fmt(static_cast<double>(r.checkpoint.bytes) / 1024.0).c_str(), fmt(r.startup_s, "%.2f").c_str(),
                fmt(r.tail_s, "%.2f").c_str());

  std::printf("\n");
  int rc = 0;
  for (const Result& r : results) {
    if (r.failed) {
      std::printf("WARNING: %s: %zu trials did not complete cleanly\n", r.scenario.name.c_str(), r.failed);
      rc = 1;
    }
    if (!r.scenario.busy_test) continue;
    const double busy = 100.0 * r.busy;
    const std::string verdict = busy >= 95.0 ? std::string("met") : "missed by " + fmt(95.0 - busy) + " points";
    std::printf("busy fraction (%s): %.1f%% (target >= 95%%): %s\n", r.scenario.name.c_str(), busy, verdict.c_str());
  }
  write_csv(opt.csv, results);
  std::printf("per-trial rows: %s\n", fs::absolute(opt.csv).c_str());
  std::error_code ec;
  fs::remove_all(root, ec);
  return rc;
}
