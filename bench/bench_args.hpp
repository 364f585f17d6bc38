#pragma once
// Command-line pieces shared by the benchmark programs.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace tune::bench {

// "a,b,,c" -> {a, b, c}: a comma-separated list, empty items dropped.
inline std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : text) {
    if (c == ',') {
      if (!current.empty()) parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) parts.push_back(current);
  return parts;
}

// "a,b:{x: 1, y: 2},c" -> {a, b:{x: 1, y: 2}, c}: a list of strategies with YAML options, whose
// commas inside {} or [] do not split.
inline std::vector<std::string> split_methods(const std::string& text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  for (const char ch : text) {
    if (ch == '{' || ch == '[') ++depth;
    if (ch == '}' || ch == ']') --depth;
    if (ch == ',' && depth == 0) {
      if (!current.empty()) parts.push_back(current);
      current.clear();
    } else {
      current += ch;
    }
  }
  if (!current.empty()) parts.push_back(current);
  return parts;
}

// A decimal whole number parsed in full by strtoull (so an optional leading '+'), or nothing
// (empty, '-', trailing characters).
inline std::optional<std::size_t> whole_number(const std::string& text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || end == nullptr || *end != '\0' || text[0] == '-') return std::nullopt;
  return static_cast<std::size_t>(v);
}

// A positive decimal integer, or nothing (empty, negative, trailing characters, zero; a leading '+'
// is accepted).
inline std::optional<std::size_t> positive_count(const std::string& text) {
  const auto v = whole_number(text);
  if (!v || *v == 0) return std::nullopt;
  return v;
}

// A whole number >= 0 given to an option, parsed in full; otherwise "<program>: <option> needs a
// whole number >= 0, not '<text>'" on stderr and exit status 2 (std::stoul would accept "12abc" and
// abort the program on "abc").
inline std::size_t count_value(const std::string& text, const char* program, const char* option) {
  const auto v = whole_number(text);
  if (!v || text[0] == '+') {
    std::fprintf(stderr, "%s: %s needs a whole number >= 0, not '%s'\n", program, option, text.c_str());
    std::exit(2);
  }
  return *v;
}

// A finite number given to an option, parsed in full; otherwise "<program>: <option> needs a number,
// not '<text>'" on stderr and exit status 2.
inline double real_value(const std::string& text, const char* program, const char* option) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == nullptr || *end != '\0' || !std::isfinite(v)) {
    std::fprintf(stderr, "%s: %s needs a number, not '%s'\n", program, option, text.c_str());
    std::exit(2);
  }
  return v;
}

// The value of option argv[i], advancing i past it; without one, "<program>: <option> needs a value"
// on stderr and exit status 2.
inline std::string option_value(int argc, char** argv, int& i, const char* program) {
  if (i + 1 >= argc) {
    std::fprintf(stderr, "%s: %s needs a value\n", program, argv[i]);
    std::exit(2);
  }
  return argv[++i];
}

}  // namespace tune::bench
