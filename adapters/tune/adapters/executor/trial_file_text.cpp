#include "tune/adapters/executor/trial_file_text.hpp"

#include <algorithm>
#include <fstream>

namespace tune::adapters {

std::string read_file(const std::filesystem::path& path, std::size_t extra, std::size_t last_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const std::streamoff size = in.tellg();
  if (size <= 0) return {};
  const std::size_t length = std::min(static_cast<std::size_t>(size), last_bytes);
  std::string text;
  text.reserve(length + extra);
  text.resize(length);
  in.seekg(size - static_cast<std::streamoff>(length));
  in.read(text.data(), static_cast<std::streamsize>(length));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::string last_line(const std::string& text) {
  constexpr const char* kBlank = "\r\n \t";
  constexpr std::size_t kMaxChars = 200;
  const std::size_t end = text.find_last_not_of(kBlank);
  if (end == std::string::npos) return {};
  const std::size_t newline = text.find_last_of('\n', end);
  const std::size_t start = text.find_first_not_of(kBlank, newline == std::string::npos ? 0 : newline + 1);
  std::string line = text.substr(start, end - start + 1);
  if (line.size() > kMaxChars) line = line.substr(0, kMaxChars) + "...";
  return line;
}

std::string last_line_of_file(const std::filesystem::path& path) { return last_line(read_file(path, 0, kTailBytes)); }

}  // namespace tune::adapters
