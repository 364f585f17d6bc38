#include "tuner/campaign/event_log.hpp"

#include <cmath>
#include <fstream>

#include "tune/io/yaml_values.hpp"
#include "tuner/campaign/campaign_state.hpp"

namespace tune::tuner {

namespace {

// The value of `"key": ` in one line the log wrote: a number or a string (without its quotes).
std::string field_text(const std::string& line, const std::string& key) {
  const std::string needle = "\"" + key + "\": ";
  std::size_t p = line.find(needle);
  if (p == std::string::npos) return {};
  p += needle.size();
  if (p < line.size() && line[p] == '"') ++p;
  const std::size_t end = line.find_first_of("\",}", p);
  return line.substr(p, end == std::string::npos ? std::string::npos : end - p);
}

// The trials with a complete or fail event in the log at `path`.
std::set<std::uint64_t> logged_outcomes(const std::filesystem::path& path) {
  std::set<std::uint64_t> trials;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const std::string event = field_text(line, "event");
    if (event != "complete" && event != "fail") continue;
    const std::string trial = field_text(line, "trial");
    if (trial.empty() || trial.find_first_not_of("0123456789") != std::string::npos) continue;
    trials.insert(std::stoull(trial));
  }
  return trials;
}

}  // namespace

std::string json_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 2);
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string json_string(const std::string& text) { return "\"" + json_escape(text) + "\""; }
std::string json_number(double value) { return std::isfinite(value) ? format_double(value) : "null"; }
std::string json_number(std::uint64_t value) { return std::to_string(value); }

std::string json_number(std::int64_t value) { return std::to_string(value); }
std::string json_bool(bool value) { return value ? "true" : "false"; }

EventLog::EventLog(const std::filesystem::path& path) : outcomes_(logged_outcomes(path)) {
  file_ = std::fopen(path.c_str(), "ae");
  // A line cut short (a full disk) must not swallow the next event.
  std::error_code ec;
  if (file_ && std::filesystem::file_size(path, ec) > 0 && !ec) {
    std::ifstream in(path, std::ios::binary);
    in.seekg(-1, std::ios::end);
    if (in.get() != '\n') std::fputc('\n', file_);
  }
}

EventLog::~EventLog() {
  if (file_) std::fclose(file_);
}

void EventLog::write(const std::string& event, const EventFields& fields) {
  if (!file_) return;  // the event log is a convenience; the state file is the truth
  std::string line = "{\"time\": " + std::to_string(now_seconds()) + ", \"event\": " + json_string(event);
  for (const auto& [k, v] : fields) line += ", " + json_string(k) + ": " + v;
  line += "}\n";
  std::fputs(line.c_str(), file_);
  std::fflush(file_);
}

void EventLog::write_outcome(const CampaignState& state, std::uint64_t id, bool recovered) {
  const TrialRun& r = state.runs.at(id);
  const Trial& t = state.study.trial(id);
  if (t.imported()) return;  // a warm start's result: an outcome of another campaign (its own warm_start event says so)
  const bool pruned = r.ended_pruned();
  const bool complete = r.status == RunStatus::complete && (t.value || pruned);
  if ((!complete && r.status != RunStatus::failed) || !outcomes_.insert(id).second) return;
  EventFields fields{{"trial", json_number(id)}};
  if (pruned) fields.emplace_back("value", json_number(r.pruned->value));
  else if (complete) fields.emplace_back("value", json_number(*t.value));
  else fields.emplace_back("reason", json_string(r.failure_reason));
  if (t.cost) fields.emplace_back("cost", json_number(*t.cost));
  if (pruned) {
    fields.emplace_back("pruned_at_step", json_number(r.pruned->step));
    fields.emplace_back("reason", json_string(r.pruned->reason));
  }
  if (r.external) fields.emplace_back("external", json_bool(true));
  if (recovered) fields.emplace_back("recovered", json_bool(true));
  write(complete ? "complete" : "fail", fields);
}

void EventLog::recover_outcomes(const CampaignState& state) {
  for (const TrialRun& r : state.runs) write_outcome(state, r.id, /*recovered=*/true);
}

}  // namespace tune::tuner
