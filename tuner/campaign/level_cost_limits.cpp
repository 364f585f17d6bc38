#include "tuner/campaign/level_cost_limits.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>

#include "tune/adapters/executor/supervisor.hpp"  // kCommandFile

namespace tune::tuner {
namespace {

// The cost limit of the run started in `tdir`, from the time limit and grace its command.yaml
// records; nothing if it had no time limit or the record cannot be read.
std::optional<double> started_run_cost_limit(const std::filesystem::path& tdir) {
  try {
    const YAML::Node command = YAML::LoadFile((tdir / adapters::kCommandFile).string());
    const double timeout_ms = command["timeout_ms"].as<double>(), grace_ms = command["grace_ms"].as<double>();
    if (!(timeout_ms > 0) || !(grace_ms >= 0)) return std::nullopt;
    return run_cost_limit(timeout_ms / 1000, grace_ms / 1000);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::vector<double> session_level_cost_limits(const std::filesystem::path& dir, const CampaignState& state) {
  std::vector<double> limits = state.config.level_cost_limits();
  for (const TrialRun& r : state.runs) {
    if (limits.empty()) break;
    if (r.status != RunStatus::running) continue;
    const std::optional<double> limit = r.external ? std::nullopt : started_run_cost_limit(trial_dir(dir, r.id));
    if (!limit) return {};
    double& level_limit = limits.at(state.study.trial(r.id).level.value_or(limits.size() - 1));
    level_limit = std::max(level_limit, *limit);
  }
  return limits;
}

}  // namespace tune::tuner
