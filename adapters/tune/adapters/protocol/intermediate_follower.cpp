#include "tune/adapters/protocol/intermediate_follower.hpp"

#include <algorithm>
#include <fstream>

namespace tune::adapters {

namespace {
// parse_trial_output skips lines longer than this; a partial line that grows beyond it is dropped
// here rather than held (a trial printing a progress bar without newlines).
constexpr std::size_t kLongestLine = std::size_t{64} << 10;
}  // namespace

IntermediateFollower::IntermediateFollower(std::filesystem::path stdout_path, std::string objective_name)
    : path_(std::move(stdout_path)), objective_name_(std::move(objective_name)) {}

bool IntermediateFollower::read_new() {
  // Only what was written since (the tuner looks four times a second at every running trial: a
  // buffer of kMaxReadBytes at each look was 4 MiB allocated and cleared for a few new lines).
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path_, ec);
  if (ec || size <= offset_) return false;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return false;
  in.seekg(static_cast<std::streamoff>(offset_));
  if (!in) return false;
  std::string chunk(static_cast<std::size_t>(std::min<std::uintmax_t>(size - offset_, kMaxReadBytes)), '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  chunk.resize(static_cast<std::size_t>(in.gcount()));
  offset_ += chunk.size();
  std::string lines;  // the complete lines this call adds
  if (const std::size_t last_newline = chunk.rfind('\n'); last_newline == std::string::npos) {
    if (!skipping_) partial_ += chunk;
  } else {
    if (skipping_) {
      // The rest of the overlong line ends at the first newline: drop it with it.
      const std::size_t end = chunk.find('\n');
      lines = chunk.substr(end + 1, last_newline - end);
      skipping_ = false;
    } else {
      lines = std::move(partial_);
      lines.append(chunk, 0, last_newline + 1);
    }
    partial_.assign(chunk, last_newline + 1);
  }
  if (partial_.size() > kLongestLine) {
    partial_.clear();
    skipping_ = true;
  }
  if (lines.empty()) return false;
  const TrialReport report = parse_trial_output(lines, "", {.objective_name = objective_name_});
  objective_steps_.insert(objective_steps_.end(), report.stdout_objective_steps.begin(), report.stdout_objective_steps.end());
  return !report.stdout_objective_steps.empty();
}

}  // namespace tune::adapters
