#include "tuner/campaign/event_log.hpp"

#include "tuner/campaign/campaign_state.hpp"

namespace tune::tuner {

EventLog::EventLog(const std::filesystem::path& path) : file_(std::fopen(path.c_str(), "ae")) {}

EventLog::~EventLog() {
  if (file_) std::fclose(file_);
}

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

void EventLog::write(const std::string& event, const std::vector<std::pair<std::string, std::string>>& fields) {
  if (!file_) return;  // the event log is a convenience; the state file is the truth
  std::string line = "{\"time\": " + std::to_string(now_seconds()) + ", \"event\": \"" + json_escape(event) + "\"";
  for (const auto& [k, v] : fields) line += ", \"" + json_escape(k) + "\": \"" + json_escape(v) + "\"";
  line += "}\n";
  std::fputs(line.c_str(), file_);
  std::fflush(file_);
}

}  // namespace tune::tuner
