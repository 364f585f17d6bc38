// What the tuner's checkpoints cost as a campaign grows to thousands of trials. The tuner rewrites
// state.yaml atomically after every event, twice per trial (the launch, the outcome), with one
// StateWriter that lives as long as the session (its cache holds the text of finished records); so a
// checkpoint's formatting, its write and its fsync grow with the file, and their sum is the part
// of the tuner's overhead per trial that grows with the campaign (bench/results/scale_dogfood.md).
//
// The campaign is built in-process through the tuner's own CampaignState and StateWriter, as the
// tuner's loop does it: ask, the run recorded as running, checkpoint, tell, the run complete,
// checkpoint. Hartmann-3 on three float parameters, seed 1. Each checkpoint is timed whole (what
// the tuner pays); every 10th trial the formatting alone (StateWriter::text, warm cache) and the
// study's tell + ask are timed as well. Medians per bucket of trials.
//
//   checkpoint_cost [--trials N] [--bucket B] [--strategies random,ei-eps] [--dir DIR] [--csv PATH]
//
// Strategies: random (nothing but the bookkeeping), ei-eps (ei with epsilon 0.05 and on_reject:
// evaluate_no_add, whose model stays ~100 points). DIR (default: a new directory under the current
// one, removed at the end) is where state.yaml is written: put it on the file system a campaign
// would use, since the fsync is real.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "bench_machine.hpp"
#include "bench_stats.hpp"
#include "functions/test_functions.hpp"
#include "tuner/campaign/campaign_config.hpp"
#include "tuner/campaign/campaign_state.hpp"

namespace {

namespace fs = std::filesystem;
using tune::bench::fmt;
using tune::bench::median;

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "checkpoint_cost: %s\n", message.c_str());
  std::exit(2);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Options {
  std::size_t trials = 5000;
  std::size_t bucket = 1000;
  std::vector<std::string> strategies = {"random", "ei-eps"};
  fs::path dir;
  fs::path csv = "checkpoint_cost.csv";
};

struct Bucket {
  std::string strategy;
  std::size_t first = 0, last = 0;
  std::vector<double> checkpoint_ms, format_ms, study_ms;
  std::size_t state_bytes = 0;  // at the bucket's end
};

std::string campaign_text(const std::string& strategy, std::size_t trials) {
  std::string text =
      "name: checkpoint-cost\n"
      "command: [/bin/true]\n"
      "space:\n"
      "  x1: {type: float, low: 0, high: 1}\n"
      "  x2: {type: float, low: 0, high: 1}\n"
      "  x3: {type: float, low: 0, high: 1}\n"
      "seed: 1\n"
      "budget: {trials: " + std::to_string(trials) + "}\n";
  if (strategy == "random") return text + "strategy: random\n";
  if (strategy == "ei-eps") return text + "strategy: {name: ei, epsilon: 0.05, on_reject: evaluate_no_add}\n";
  die("unknown strategy '" + strategy + "' (random, ei-eps)");
}

std::vector<Bucket> run(const Options& opt, const std::string& strategy, const fs::path& root) {
  using namespace tune::tuner;
  const fs::path dir = root / strategy;
  fs::create_directories(dir);
  {
    std::ofstream(dir / "campaign.yaml") << campaign_text(strategy, opt.trials);
  }
  CampaignState s = CampaignState::create(load_campaign_file(dir / "campaign.yaml"), now_seconds());
  const tune::testfn::TestFunction hartmann = tune::testfn::hartmann3();
  StateWriter writer;
  std::vector<Bucket> buckets;
  for (std::size_t n = 0; n < opt.trials; ++n) {
    if (n % opt.bucket == 0) buckets.push_back({.strategy = strategy, .first = n, .last = n});
    Bucket& b = buckets.back();
    const bool sample = n % 10 == 0;
    auto t0 = std::chrono::steady_clock::now();
    const auto suggestion = s.study.ask();
    double study = ms_since(t0);
    if (!suggestion) die(strategy + " stopped after " + std::to_string(n) + " trials: " + s.study.stop_reason());
    s.runs.push_back(TrialRun{.id = suggestion->id});
    TrialRun& r = s.runs.back();
    r.status = RunStatus::running;
    r.attempts = 1;
    r.started_at = now_seconds();
    t0 = std::chrono::steady_clock::now();
    writer.save(dir, s);  // the launch checkpoint
    b.checkpoint_ms.push_back(ms_since(t0));
    Eigen::VectorXd x(3);
    for (int i = 0; i < 3; ++i) x(i) = std::get<double>(suggestion->config.at("x" + std::to_string(i + 1)));
    t0 = std::chrono::steady_clock::now();
    s.study.tell(r.id, hartmann.f(x));
    study += ms_since(t0);
    r.status = RunStatus::complete;
    r.finished_at = now_seconds();
    r.exit = tune::adapters::TrialExit{.kind = tune::adapters::ExitKind::exited, .started_at = r.started_at,
                                       .finished_at = r.finished_at, .message = "exited with code 0"};
    t0 = std::chrono::steady_clock::now();
    writer.save(dir, s);  // the outcome checkpoint
    b.checkpoint_ms.push_back(ms_since(t0));
    if (sample) {
      b.study_ms.push_back(study);
      t0 = std::chrono::steady_clock::now();
      const std::string text = writer.text(s);
      b.format_ms.push_back(ms_since(t0));
      b.state_bytes = text.size();
    }
    b.last = n;
  }
  return buckets;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&] { return tune::bench::option_value(argc, argv, i, "checkpoint_cost"); };
    if (a == "--trials") opt.trials = tune::bench::count_value(value(), "checkpoint_cost", "--trials");
    else if (a == "--bucket") opt.bucket = tune::bench::count_value(value(), "checkpoint_cost", "--bucket");
    else if (a == "--strategies") opt.strategies = tune::bench::split_commas(value());
    else if (a == "--dir") opt.dir = value();
    else if (a == "--csv") opt.csv = value();
    else die("unknown argument '" + a + "' (--trials N --bucket B --strategies random,ei-eps --dir DIR --csv PATH)");
  }
  if (opt.trials == 0 || opt.bucket == 0) die("--trials and --bucket must be > 0");
  const bool own_dir = opt.dir.empty();
  const fs::path root = own_dir ? fs::absolute("checkpoint_cost." + std::to_string(::getpid())) : opt.dir;
  fs::create_directories(root);
  std::printf("%s\nstate.yaml written under %s (%s)\n", tune::bench::machine_line().c_str(), root.c_str(),
              tune::bench::filesystem_type(root).c_str());

  std::vector<Bucket> all;
  for (const std::string& strategy : opt.strategies) {
    const std::vector<Bucket> b = run(opt, strategy, root);
    all.insert(all.end(), b.begin(), b.end());
  }
  if (own_dir) fs::remove_all(root);

  std::printf("\n| strategy | trials | checkpoint median ms | p90 | max | of which formatting | tell + ask | state.yaml KB |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
  std::ofstream csv(opt.csv);
  csv << "strategy,first_trial,last_trial,checkpoint_median_ms,checkpoint_p90_ms,checkpoint_max_ms,format_median_ms,"
         "study_median_ms,state_bytes\n";
  for (const Bucket& b : all) {
    const double mx = *std::max_element(b.checkpoint_ms.begin(), b.checkpoint_ms.end());
    std::printf("| %s | %zu-%zu | %s | %s | %s | %s | %s | %zu |\n", b.strategy.c_str(), b.first, b.last,
                fmt(median(b.checkpoint_ms)).c_str(), fmt(tune::bench::quantile(b.checkpoint_ms, 0.9)).c_str(),
                fmt(mx).c_str(), fmt(median(b.format_ms)).c_str(), fmt(median(b.study_ms)).c_str(),
                b.state_bytes / 1024);
    csv << b.strategy << ',' << b.first << ',' << b.last << ',' << median(b.checkpoint_ms) << ','
        << tune::bench::quantile(b.checkpoint_ms, 0.9) << ',' << mx << ',' << median(b.format_ms) << ','
        << median(b.study_ms) << ',' << b.state_bytes << '\n';
  }
  std::printf("\nCSV: %s\n", opt.csv.c_str());
  return 0;
}
