#pragma once
// What the tuner shows while it runs: on a terminal, one live line (done / running / failed, cost
// spent of a cost budget, best value and its configuration, elapsed time and remaining budget)
// redrawn a few times a second; when stderr is not a terminal, one plain log line per event
// instead. --quiet shows neither.
#include <chrono>
#include <string>

namespace tune::tuner {

struct CampaignState;

// A number for people (a cost, a summary value): four significant digits, whole from 1000 on.
std::string format_short(double value);

class Progress {
 public:
  explicit Progress(bool quiet);
  void log(const std::string& line);  // an event (plain mode), or above the live line
  void update(const CampaignState& state, std::size_t running, double elapsed_seconds);
  void finish(const CampaignState& state, double elapsed_seconds);

 private:
  std::string status_line(const CampaignState& state, std::size_t running, double elapsed_seconds) const;
  bool quiet_;
  bool terminal_;
  bool line_shown_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace tune::tuner
