// gpoo at thousands of trials, through tune::Study directly (no subprocesses): what an ask + tell
// costs as the campaign grows, the peak memory, the refits, a reload of the saved study, and asks
// with every trial pending (bench/results/gpoo_scale.md).
//
// Part "sequential": --trials N (default 3000) ask/tell steps of the default `gpoo` on Hartmann-3
// (minimised, noise-free, as the tuner's scale_dogfood campaign). Per bucket of --bucket trials
// (default 1000): the process CPU time of the bucket's ask + tell pairs (median, p90, max per pair,
// total), the asks that refitted the kernel (their count and the slowest), and VmHWM / VmRSS at the
// bucket's end. At the end the study is saved to a string and loaded back (the load replays the
// search), the loaded study's next suggestion is compared bit for bit with the original's, and a
// hash of every suggestion (the unit points' bits, in order) identifies the trajectory.
// Part "pending": --pending M (default 1500) asks without any tell, timed per bucket of 500.
//
// --pending-space mixed runs the pending part in a space of a float, an integer and a categorical,
// where snapped points coincide.
//
// --representatives S and --aggregation representatives|cell set those gpoo options (defaults 1 and
// representatives): with S > 1 or cells an aggregated kernel value costs S^2 kernel evaluations or a
// box-box covariance, which the search memoises. With S > 1 a round is S trials.
//
// Recommendation: at each bucket's end, and on the loaded study before its first ask (what `tune
// status` and `tune best` do after loading a campaign), Study::recommendation() is timed (CPU) and
// its point's mean and sd printed in full, and VmHWM read after it.
//
//   gpoo_scale [--trials N] [--bucket B] [--pending M] [--part sequential|pending|both]
//              [--pending-space cube|mixed] [--representatives S] [--aggregation representatives|cell]
//              [--csv PATH]
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "bench_args.hpp"
#include "bench_stats.hpp"
#include "functions/test_functions.hpp"
#include "tune/strategy/gpoo_strategy.hpp"
#include "tune/tune.hpp"

namespace {

using tune::bench::fmt;
using tune::bench::median;
using tune::bench::quantile;

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double wall_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A field of /proc/self/status in MB (VmHWM: peak resident set; VmRSS: current).
double status_mb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::size_t n = std::strlen(field);
  while (std::getline(in, line))
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':')
      return std::stod(line.substr(n + 1)) / 1024.0;
  return -1.0;
}

struct Hash {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the bytes
  void add(const Eigen::VectorXd& v) {
    const auto* p = reinterpret_cast<const unsigned char*>(v.data());
    for (std::size_t i = 0; i < static_cast<std::size_t>(v.size()) * sizeof(double); ++i) {
      h ^= p[i];
      h *= 1099511628211ULL;
    }
  }
};

tune::Space cube(std::size_t d) {
  std::vector<tune::Parameter> ps;
  for (std::size_t i = 0; i < d; ++i) ps.push_back(tune::Parameter::floating("x" + std::to_string(i + 1), 0, 1));
  return tune::Space(ps);
}

// A float, an integer with 8 values and a categorical with 3: snapped points coincide, so pending
// asks often find their leaf's point taken and look for the next free leaf.
tune::Space mixed() {
  return tune::Space({tune::Parameter::floating("x1", 0, 1), tune::Parameter::integer("x2", 1, 8),
                      tune::Parameter::categorical("x3", {"a", "b", "c"})});
}

tune::Study make_study(const tune::Space& space, std::size_t representatives, const std::string& aggregation) {
  YAML::Node options;
  if (representatives != 1) options["representatives"] = representatives;
  if (aggregation != "representatives") options["aggregation"] = aggregation;
  return tune::Study(space, tune::make_strategy("gpoo", options), {.direction = tune::Direction::minimize, .seed = 1});
}

// Study::recommendation() timed: "CPU ms, mean, sd" printed, and the CPU ms returned.
double timed_recommendation(const tune::Study& study, const char* label, std::ofstream& csv, std::size_t trials) {
  const double c0 = cpu_ms();
  const auto r = study.recommendation();
  const double ms = cpu_ms() - c0;
  std::printf("recommendation (%s, %zu trials): %s ms CPU, mean %.17g sd %.17g, VmHWM %.0f MB\n", label, trials,
              fmt(ms).c_str(), r ? r->mean : 0.0, r ? r->sd : 0.0, status_mb("VmHWM"));
  std::fflush(stdout);
  if (csv)
    csv << "recommend_" << label << ',' << trials << ',' << trials << ",1," << ms / 1e3 << ",," << ms << ",,,,,"
        << status_mb("VmHWM") << ',' << status_mb("VmRSS") << ",\n";
  return ms;
}

const tune::GpooStrategy& gpoo_of(const tune::Study& s) { return dynamic_cast<const tune::GpooStrategy&>(s.strategy()); }

}  // namespace

int main(int argc, char** argv) {
  const char* program = "gpoo_scale";
  std::size_t trials = 3000, bucket = 1000, pending = 1500;
  std::size_t representatives = 1;
  std::string part = "both", csv_path, pending_space = "cube", aggregation = "representatives";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--trials") trials = tune::bench::count_value(tune::bench::option_value(argc, argv, i, program), program, "--trials");
    else if (a == "--bucket") bucket = tune::bench::count_value(tune::bench::option_value(argc, argv, i, program), program, "--bucket");
    else if (a == "--pending") pending = tune::bench::count_value(tune::bench::option_value(argc, argv, i, program), program, "--pending");
    else if (a == "--part") part = tune::bench::option_value(argc, argv, i, program);
    else if (a == "--pending-space") pending_space = tune::bench::option_value(argc, argv, i, program);
    else if (a == "--representatives")
      representatives = tune::bench::count_value(tune::bench::option_value(argc, argv, i, program), program, "--representatives");
    else if (a == "--aggregation") aggregation = tune::bench::option_value(argc, argv, i, program);
    else if (a == "--csv") csv_path = tune::bench::option_value(argc, argv, i, program);
    else {
      std::fprintf(stderr, "usage: %s [--trials N] [--bucket B] [--pending M] [--part sequential|pending|both] [--pending-space cube|mixed] [--representatives S] [--aggregation representatives|cell] [--csv PATH]\n", program);
      return 2;
    }
  }
  if (bucket == 0) bucket = 1000;
  const tune::testfn::TestFunction f = tune::testfn::hartmann3();
  const tune::Space space = cube(3);
  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    csv << "part,first,last,pairs,cpu_total_s,wall_total_s,median_ms,p90_ms,max_ms,refits,refit_max_ms,vmhwm_mb,vmrss_mb,tree_nodes\n";
  }

  if (part == "sequential" || part == "both") {
    tune::Study study = make_study(space, representatives, aggregation);
    Hash hash;
    std::printf("sequential: %zu trials of gpoo (representatives %zu, aggregation %s) on Hartmann-3, ask + tell per trial, CPU ms\n\n",
                trials, representatives, aggregation.c_str());
    std::printf("| trials | CPU s | wall s | median ms | p90 ms | max ms | refits | slowest refit ask ms | VmHWM MB | VmRSS MB | tree nodes |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    std::vector<double> pair_ms;
    std::size_t refits = 0;
    double refit_max = 0.0, cpu_total = 0.0, wall0 = wall_ms();
    for (std::size_t t = 1; t <= trials; ++t) {
      const std::size_t refresh_before = gpoo_of(study).model().refresh_count;
      const double c0 = cpu_ms();
      const auto s = study.ask();
      if (!s) {
        std::printf("stopped at %zu: %s\n", t, study.stop_reason().c_str());
        break;
      }
      const double c1 = cpu_ms();
      hash.add(study.trial(s->id).unit);
      study.tell(s->id, f.at_unit(study.trial(s->id).unit));
      const double c2 = cpu_ms();
      pair_ms.push_back(c2 - c0);
      cpu_total += c2 - c0;
      if (gpoo_of(study).model().refresh_count != refresh_before) {
        ++refits;
        refit_max = std::max(refit_max, c1 - c0);
      }
      if (t % bucket == 0 || t == trials) {
        const std::size_t first = t - pair_ms.size() + 1;
        const double wall = (wall_ms() - wall0) / 1e3;
        const std::size_t nodes = 1 + gpoo_of(study).options().branching * gpoo_of(study).expand_sequence().size();
        std::printf("| %zu-%zu | %s | %s | %s | %s | %s | %zu | %s | %.0f | %.0f | %zu |\n", first, t, fmt(cpu_total / 1e3).c_str(),
                    fmt(wall).c_str(), fmt(median(pair_ms)).c_str(), fmt(quantile(pair_ms, 0.9)).c_str(),
                    fmt(quantile(pair_ms, 1.0)).c_str(), refits, fmt(refit_max).c_str(), status_mb("VmHWM"),
                    status_mb("VmRSS"), nodes);
        std::fflush(stdout);
        if (csv)
          csv << "sequential," << first << ',' << t << ',' << pair_ms.size() << ',' << cpu_total / 1e3 << ',' << wall << ','
              << median(pair_ms) << ',' << quantile(pair_ms, 0.9) << ',' << quantile(pair_ms, 1.0) << ',' << refits << ','
              << refit_max << ',' << status_mb("VmHWM") << ',' << status_mb("VmRSS") << ',' << nodes << '\n';
        timed_recommendation(study, "running", csv, t);
        pair_ms.clear();
        refits = 0;
        refit_max = 0.0;
        cpu_total = 0.0;
        wall0 = wall_ms();
      }
    }
    // Save, load (the load replays the search) and ask both: the same next suggestion, bit for bit.
    const std::string text = study.to_yaml_string();
    const double l0 = cpu_ms();
    tune::Study loaded = tune::Study::from_yaml_string(text, "gpoo_scale");
    const double l1 = cpu_ms();
    timed_recommendation(loaded, "loaded", csv, study.trials().size());
    const double l1b = cpu_ms();
    const auto a = loaded.ask();
    const double l2 = cpu_ms();
    const auto b = study.ask();
    const bool same = a && b && loaded.trial(a->id).unit == study.trial(b->id).unit;
    std::printf("\nload of the saved study (%zu trials, %.2f MB of YAML): %s ms CPU; first ask after it: %s ms; "
                "next suggestion identical to the uninterrupted study's: %s\n",
                study.trials().size() - 1, static_cast<double>(text.size()) / 1e6, fmt(l1 - l0).c_str(), fmt(l2 - l1b).c_str(),
                same ? "yes" : "NO");
    std::printf("trajectory hash (every suggested point's bits, in order): %016llx\n",
                static_cast<unsigned long long>(hash.h));
    std::printf("VmHWM %.0f MB at the end\n\n", status_mb("VmHWM"));
    if (csv)
      csv << "load," << study.trials().size() - 1 << ',' << study.trials().size() - 1 << ",1," << (l1 - l0) / 1e3 << ",,"
          << l1 - l0 << ",,," << ",," << status_mb("VmHWM") << ',' << status_mb("VmRSS") << ",\n";
  }

  if (part == "pending" || part == "both") {
    tune::Study study = make_study(pending_space == "mixed" ? mixed() : space, representatives, aggregation);
    std::printf("pending: %zu asks of gpoo without any tell (%s space), CPU ms per ask\n\n", pending, pending_space.c_str());
    std::printf("| asks | CPU s | median ms | max ms | VmHWM MB |\n|---|---:|---:|---:|---:|\n");
    std::vector<double> ask_ms;
    double total = 0.0;
    const double wall_start = wall_ms();
    double wall0 = wall_start;
    const std::size_t pb = 500;
    for (std::size_t t = 1; t <= pending; ++t) {
      const double c0 = cpu_ms();
      const auto s = study.ask();
      const double c1 = cpu_ms();
      if (!s) {
        std::printf("stopped at %zu: %s\n", t, study.stop_reason().c_str());
        break;
      }
      ask_ms.push_back(c1 - c0);
      total += c1 - c0;
      if (t % pb == 0 || t == pending) {
        const std::size_t first = t - ask_ms.size() + 1;
        const double wall = (wall_ms() - wall0) / 1e3;
        std::printf("| %zu-%zu | %s | %s | %s | %.0f |\n", first, t, fmt(total / 1e3).c_str(), fmt(median(ask_ms)).c_str(),
                    fmt(quantile(ask_ms, 1.0)).c_str(), status_mb("VmHWM"));
        std::fflush(stdout);
        if (csv)
          csv << "pending," << first << ',' << t << ',' << ask_ms.size() << ',' << total / 1e3 << ',' << wall << ','
              << median(ask_ms) << ',' << quantile(ask_ms, 0.9) << ',' << quantile(ask_ms, 1.0) << ",0,0,"
              << status_mb("VmHWM") << ',' << status_mb("VmRSS") << ",\n";
        ask_ms.clear();
        total = 0.0;
        wall0 = wall_ms();
      }
    }
    std::printf("\n%zu pending asks: %s s wall\n", pending, fmt((wall_ms() - wall_start) / 1e3).c_str());
  }
  return 0;
}
