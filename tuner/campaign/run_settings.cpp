#include "tuner/campaign/run_settings.hpp"

#include <algorithm>

#include "tune/io/yaml_values.hpp"
#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/event_log.hpp"

namespace tune::tuner {
namespace {

std::string text_of(const YAML::Node& node) {
  if (!node) return "(none)";
  YAML::Node flow = YAML::Clone(node);
  flow.SetStyle(YAML::EmitterStyle::Flow);
  return emit_yaml(flow);
}

// `key`'s value in each map as written; a change where they differ.
void compare(const YAML::Node& a, const YAML::Node& b, const std::string& key, const std::string& prefix,
             std::vector<RunSettingChange>& changes) {
  const std::string from = text_of(a ? a[key] : YAML::Node()), to = text_of(b ? b[key] : YAML::Node());
  if (from != to) changes.push_back({prefix + key, from, to});
}

}  // namespace

std::vector<RunSettingChange> run_setting_changes(const CampaignConfig& saved, const CampaignConfig& edited) {
  const YAML::Node a = saved.to_yaml(), b = edited.to_yaml();
  std::vector<RunSettingChange> changes;
  compare(a["resolution"], b["resolution"], "timeout", "resolution.", changes);
  compare(a, b, "pruning", "", changes);
  for (const char* key : {"failures", "wall"}) compare(a["budget"], b["budget"], key, "budget.", changes);
  // Every key either writes (a Slurm key only with kind slurm), in to_yaml's order.
  std::vector<std::string> keys;
  for (const YAML::Node& x : {a["executor"], b["executor"]})
    for (const auto& kv : x)
      if (std::find(keys.begin(), keys.end(), kv.first.Scalar()) == keys.end()) keys.push_back(kv.first.Scalar());
  // executor.timeout is no trial's limit where resolution.timeout gives every level one: a change
  // of it changes nothing, and is not listed as if it did.
  const bool unused_timeout = !saved.level_timeouts.empty() && !edited.level_timeouts.empty();
  for (const std::string& key : keys)
    if (!(unused_timeout && key == "timeout")) compare(a["executor"], b["executor"], key, "executor.", changes);
  return changes;
}

std::vector<RunSettingChange> budget_changes(const CampaignConfig& saved, const CampaignConfig& edited) {
  const YAML::Node a = saved.to_yaml(), b = edited.to_yaml();
  std::vector<RunSettingChange> changes;
  for (const char* key : {"trials", "cost"}) compare(a["budget"], b["budget"], key, "budget.", changes);
  return changes;
}

CampaignConfig with_run_settings(CampaignConfig saved, const CampaignConfig& edited) {
  saved.executor = edited.executor;
  saved.pruning = edited.pruning;
  // Only with the same levels (else the resolution differs anyway, and the difference is refused).
  if (saved.resolution && edited.resolution && saved.resolution->values == edited.resolution->values)
    saved.level_timeouts = edited.level_timeouts;
  saved.budget.max_failures = edited.budget.max_failures;
  saved.budget.wall_seconds = edited.budget.wall_seconds;
  return saved;
}

std::string describe(const std::vector<RunSettingChange>& changes) {
  std::string text;
  for (const RunSettingChange& c : changes) text += (text.empty() ? "" : ", ") + c.key + " " + c.from + " -> " + c.to;
  return text;
}

std::string run_settings_refusal(const std::filesystem::path& dir, const CampaignState& state, const CampaignConfig& edited) {
  if (state.config.executor.kind != edited.executor.kind)
    for (const TrialRun& r : state.runs)
      if (!r.external && r.status == RunStatus::running)
        return "trial " + std::to_string(r.id) + " runs under executor.kind " + state.config.executor.kind +
               ", which executor.kind " + edited.executor.kind + " cannot follow; resume the campaign as it is and " +
               "let its running trials end ('tune stop " + dir.string() + "' after 'tune resume " + dir.string() +
               " --wait-on-stop'), then change the executor";
  return "";
}

std::string apply_run_settings(const std::filesystem::path& dir, CampaignState& state, const CampaignConfig& edited) {
  const std::vector<RunSettingChange> changes = run_setting_changes(state.config, edited);
  if (changes.empty()) return "";
  if (std::string refusal = run_settings_refusal(dir, state, edited); !refusal.empty()) return refusal;
  state.config = with_run_settings(state.config, edited);
  save_state(dir, state);
  EventFields fields;
  for (const RunSettingChange& c : changes) fields.push_back({c.key, json_string(c.from + " -> " + c.to)});
  EventLog(dir / campaign_files::kEvents).write("run_settings", fields);
  return "";
}

}  // namespace tune::tuner
