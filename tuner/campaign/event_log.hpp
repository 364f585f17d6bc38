#pragma once
// DIR/events.jsonl: one JSON object per line, {"time": <epoch seconds>, "event": "...", ...fields},
// appended and flushed per event, for machines to follow a campaign. Numbers are JSON numbers (a
// non-finite one is null). An event follows the checkpoint of state.yaml that records it, so a crash
// can lose the last event but never report what the state does not have; a trial's outcome
// (`complete` or `fail`) is written once, and one lost to a crash is written by the next session,
// marked "recovered": true.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tune::tuner {

struct CampaignState;

// Field name and its value as JSON text (json_string, json_number, json_bool).
using EventFields = std::vector<std::pair<std::string, std::string>>;

std::string json_escape(const std::string& text);
std::string json_string(const std::string& text);  // quoted and escaped
std::string json_number(double value);             // shortest round-trip; null if not finite
std::string json_number(std::uint64_t value);
std::string json_number(std::int64_t value);
std::string json_bool(bool value);

class EventLog {
 public:
  // Reads which trials' outcomes the file already holds (old logs' string ids included).
  explicit EventLog(const std::filesystem::path& path);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  void write(const std::string& event, const EventFields& fields);
  // Trial `id`'s outcome as `state` records it: `complete` with its value or `fail` with its reason,
  // then its cost (measured or told), "external": true for a trial told by `tune tell`, and
  // "recovered": true if asked. Nothing if the file already holds an outcome for the trial (a tuner
  // killed after the event and before its checkpoint, by a version that wrote events first,
  // collects the trial again on resume).
  void write_outcome(const CampaignState& state, std::uint64_t id, bool recovered = false);
  // The outcomes `state` holds and the file lacks (the tuner died between a checkpoint and its event,
  // or a version before this one did not write them for told trials), marked "recovered": true.
  void recover_outcomes(const CampaignState& state);

 private:
  std::FILE* file_ = nullptr;
  std::set<std::uint64_t> outcomes_;  // trials whose outcome the file holds
};

}  // namespace tune::tuner
