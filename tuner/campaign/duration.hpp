#pragma once
// Durations in campaign files and on the command line: "90" (seconds), "500ms", "30s", "15m", "6h",
// "2d", and sums such as "1h30m".
#include <optional>
#include <string>

namespace tune::tuner {

// Seconds, or nullopt if the text is not a duration.
std::optional<double> parse_duration(const std::string& text);
std::string format_duration(double seconds);  // "1h02m", "3m05s", "4.2s", "120ms"

}  // namespace tune::tuner
