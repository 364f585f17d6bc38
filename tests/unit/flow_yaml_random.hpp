#pragma once
// Random strings and flow records for the tests of tune/io/flow_yaml.hpp (the writer's and the
// reader's): strings made of pieces yaml-cpp treats specially, records nested in maps and sequences.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace tune::flow_test {

// The string as C source, for a readable failure message.
inline std::string escaped(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F && c != '"' && c != '\\') {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    }
  }
  return out + "\"";
}

// Pieces of which the random strings are made: words that stay plain, and everything that makes
// yaml-cpp quote a string or that it might treat specially.
inline const std::vector<std::string> kPieces = {
    "relu", "tanh", "lr", "x_1", "epochs", "a", "Z", "0", "42", "-7", "3.5", "1e-3", "1e+300", ".5", "-.inf", ".nan",
    "0x1F", "yes", "no", "null", "Null", "NULL", "~", "true", "false", "True", "on", "off", "y", "n", " ", "  ", ":",
    ": ", "#", " #", "- ", "-", "--", "---", "...", "?", "? ", ",", "[", "]", "{", "}", "[]", "{}", "\"", "'", "\\",
    "&", "*", "!", "|", ">", "%", "@", "`", "=", "<", "^", "$", "(", ")", ";", "/", "+", "_", ".", "~x", "a:b",
    "a: b", "\t", "\n", "\r", "\x01", "\x1b", "\x7f", "\xc3\xa9", "\xe6\x97\xa5", "\xc2\x85", "\xc2\xa0",
    "\xef\xbb\xbf", "\xff", "\xf0\x9f\x98\x80"};

inline std::string random_string(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> kind(0, 9);
  std::string s;
  switch (kind(rng)) {
    case 0: {  // any printable ASCII, short: the edges of the rules (first and last character)
      std::uniform_int_distribution<int> length(0, 4), ch(0x20, 0x7E);
      for (int i = length(rng); i > 0; --i) s += static_cast<char>(ch(rng));
      return s;
    }
    case 1: {  // any byte at all
      std::uniform_int_distribution<int> length(0, 6), byte(0, 255);
      for (int i = length(rng); i > 0; --i) s += static_cast<char>(byte(rng));
      return s;
    }
    default: {  // pieces
      std::uniform_int_distribution<std::size_t> length(0, 5), piece(0, kPieces.size() - 1);
      for (std::size_t i = length(rng); i > 0; --i) s += kPieces[piece(rng)];
      return s;
    }
  }
}

// Random records (nested maps and sequences, empty ones too) written by both writers: the commas,
// colons and brackets are placed alike.
template <class Writer>
void write_random_record(Writer& w, std::mt19937_64 rng, int depth) {
  std::uniform_int_distribution<int> size(0, 4), kind(0, 5);
  const auto item = [&](auto& self, int level) -> void {
    const int k = level >= 3 ? kind(rng) % 4 : kind(rng);
    switch (k) {
      case 0: w.string(random_string(rng)); break;
      case 1: w.number(std::bit_cast<double>(rng())); break;
      case 2: w.integer(static_cast<std::int64_t>(rng())); break;
      case 3: w.boolean(rng() % 2 == 0); break;
      case 4:
        w.begin_seq();
        for (int i = size(rng); i > 0; --i) self(self, level + 1);
        w.end_seq();
        break;
      default:
        w.begin_map();
        for (int i = size(rng); i > 0; --i) {
          w.key("k" + std::to_string(i) + (rng() % 4 == 0 ? random_string(rng) : std::string()));
          self(self, level + 1);
        }
        w.end_map();
    }
  };
  w.begin_map();
  for (int i = size(rng); i > 0; --i) {
    w.key("key" + std::to_string(i));
    item(item, depth);
  }
  w.end_map();
}

// Damages the record line that starts at `line` in `text`: at a random token's start (after a space
// or an indicator), the token replaced by one of `tokens`, that inserted, or the token removed.
inline void damage_record_line(std::string& text, std::size_t line, const std::vector<std::string>& tokens,
                               std::mt19937_64& rng) {
  const std::size_t end = text.find('\n', line);
  std::vector<std::size_t> edges;
  for (std::size_t i = text.find('{', line); i < end; ++i)
    if (std::string_view(" ,:{}[]").find(text[i]) != std::string_view::npos) edges.push_back(i + 1);
  const std::size_t at = edges[rng() % edges.size()];
  const std::size_t next = std::min(end, text.find_first_of(" ,:{}[]", at));
  const std::string& token = tokens[rng() % tokens.size()];
  switch (rng() % 3) {
    case 0: text.replace(at, next - at, token); break;
    case 1: text.insert(at, token); break;
    default: text.erase(at, next - at); break;
  }
}

}  // namespace tune::flow_test
