#pragma once
// DIR/events.jsonl: one JSON object per line, {"time": <epoch seconds>, "event": "...", ...fields},
// appended and flushed per event, for machines to follow a campaign.
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace tune::tuner {

class EventLog {
 public:
  explicit EventLog(const std::filesystem::path& path);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;
  void write(const std::string& event, const std::vector<std::pair<std::string, std::string>>& fields);

 private:
  std::FILE* file_ = nullptr;
};

std::string json_escape(const std::string& text);

}  // namespace tune::tuner
