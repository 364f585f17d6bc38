#include "tuner/campaign/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "tune/io/yaml_values.hpp"
#include "tuner/campaign/campaign_spend.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/duration.hpp"

namespace tune::tuner {

// Four significant digits (costs are sums of run times or declared units, not exact values), and
// whole numbers from 1000 on (36000, not 3.6e+04).
std::string format_short(double value) {
  char buf[64];
  if (std::isfinite(value) && std::fabs(value) >= 1000 && std::fabs(value) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", value);
  else
    std::snprintf(buf, sizeof buf, "%.4g", value);
  return buf;
}

Progress::Progress(bool quiet) : quiet_(quiet), terminal_(::isatty(STDERR_FILENO) == 1) {}

void Progress::log(const std::string& line) {
  if (quiet_) return;
  if (terminal_ && line_shown_) std::fputs("\r\033[K", stderr);
  line_shown_ = false;
  std::fprintf(stderr, "%s\n", line.c_str());
}

std::string Progress::status_line(const CampaignState& s, std::size_t running, double elapsed) const {
  std::string line = "done " + std::to_string(s.count(RunStatus::complete) - s.study.imported_count());
  if (s.config.budget.trials) line += "/" + std::to_string(*s.config.budget.trials);
  line += "  running " + std::to_string(running) + "  failed " + std::to_string(s.count(RunStatus::failed));
  if (s.config.budget.cost && s.config.resolution) {
    // What finished trials spent: the study's spend also counts running ones at a guessed cost.
    const std::optional<double> spent = campaign_spend(s).spent;
    line += "  cost " + (spent ? format_short(*spent) : std::string("?")) + "/" + format_short(*s.config.budget.cost) +
            (s.config.resolution->measured() ? "s" : "");
  }
  if (const Trial* best = s.study.best()) {
    line += "  best " + format_double(*best->value) + " " + tune::to_string(best->config);
    if (s.config.resolution) line += " (full resolution)";
  }
  line += "  elapsed " + format_duration(elapsed);
  if (s.config.budget.wall_seconds) line += " of " + format_duration(*s.config.budget.wall_seconds);
  return line;
}

void Progress::update(const CampaignState& state, std::size_t running, double elapsed) {
  if (quiet_ || !terminal_) return;
  const auto now = std::chrono::steady_clock::now();
  if (line_shown_ && now - last_draw_ < std::chrono::milliseconds(250)) return;
  last_draw_ = now;
  // One row of the terminal: '\r' and erase-line redraw only the row the cursor is on, so a line
  // that wrapped left its first rows behind at every redraw.
  std::size_t columns = 160;
  if (winsize ws{}; ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) columns = ws.ws_col;
  std::string line = status_line(state, running, elapsed);
  if (columns > 1 && line.size() > columns - 1) {  // bytes >= columns, so this fits in any case
    std::size_t keep = columns > 4 ? columns - 4 : 0;
    while (keep > 0 && (static_cast<unsigned char>(line[keep]) & 0xC0) == 0x80) --keep;  // not inside a UTF-8 character
    line = line.substr(0, keep) + "...";
  }
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  line_shown_ = true;
}

void Progress::finish(const CampaignState& state, double elapsed) {
  if (quiet_) return;
  if (terminal_ && line_shown_) std::fputs("\r\033[K", stderr);
  line_shown_ = false;
  std::fprintf(stderr, "%s\n", status_line(state, 0, elapsed).c_str());
  if (!state.stop_reason.empty()) std::fprintf(stderr, "ended: %s\n", state.stop_reason.c_str());
}

}  // namespace tune::tuner
