#include "tuner/campaign/duration.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace tune::tuner {

std::optional<double> parse_duration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double total = 0.0;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  bool any = false;
  while (p < end) {
    double value = 0.0;
    const auto r = std::from_chars(p, end, value);
    if (r.ec != std::errc() || !std::isfinite(value) || value < 0) return std::nullopt;
    p = r.ptr;
    double unit = 1.0;
    if (p == end) {
      if (any) return std::nullopt;  // "1h30" is ambiguous
    } else if (end - p >= 2 && p[0] == 'm' && p[1] == 's') {
      unit = 1e-3;
      p += 2;
    } else if (*p == 's' || *p == 'm' || *p == 'h' || *p == 'd') {
      unit = *p == 's' ? 1.0 : *p == 'm' ? 60.0 : *p == 'h' ? 3600.0 : 86400.0;
      ++p;
    } else {
      return std::nullopt;
    }
    total += value * unit;
    any = true;
  }
  return total;
}

std::string format_duration(double seconds) {
  char buf[64];
  if (seconds < 1.0) std::snprintf(buf, sizeof buf, "%.0fms", seconds * 1e3);
  else if (seconds < 60.0) std::snprintf(buf, sizeof buf, "%.1fs", seconds);
  else if (seconds < 3600.0) std::snprintf(buf, sizeof buf, "%dm%02ds", int(seconds / 60), int(std::fmod(seconds, 60.0)));
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(seconds / 3600), int(std::fmod(seconds, 3600.0) / 60));
  return buf;
}

}  // namespace tune::tuner
