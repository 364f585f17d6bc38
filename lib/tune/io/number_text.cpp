#include "tune/io/number_text.hpp"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <string>
#include <system_error>

namespace tune {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

std::optional<double> parse_number_text(std::string_view s) {
  if (s.empty()) return std::nullopt;
  if (iequals(s, ".nan")) return std::numeric_limits<double>::quiet_NaN();
  if (iequals(s, ".inf") || iequals(s, "+.inf")) return std::numeric_limits<double>::infinity();
  if (iequals(s, "-.inf")) return -std::numeric_limits<double>::infinity();
  if (s.front() == '+') {
    s.remove_prefix(1);
    if (s.empty() || s.front() == '+' || s.front() == '-') return std::nullopt;  // "++1", "+-5"
  }
  double value = 0.0;
  const char* const end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, value, std::chars_format::general);
  if (ptr != end) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    const std::string copy(s);  // rare: let strtod pick +-HUGE_VAL or the (subnormal) zero
    return std::strtod(copy.c_str(), nullptr);
  }
  if (ec != std::errc{}) return std::nullopt;
  return value;
}

}  // namespace tune
