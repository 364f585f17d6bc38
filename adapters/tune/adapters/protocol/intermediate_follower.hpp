#pragma once
// The intermediate values a running trial appends to its stdout, read a little at a time: each call
// reads what the trial wrote since the last one and parses its complete lines (the line being
// written waits for the next call), so a trial that logs for days is never read twice.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tune/adapters/protocol/trial_report.hpp"

namespace tune::adapters {

class IntermediateFollower {
 public:
  IntermediateFollower(std::filesystem::path stdout_path, std::string objective_name);
  // The values of the objective reported with a step since the last call, in order; empty when there
  // are none (or no file yet). Reads at most kMaxReadBytes a call; the rest comes at the next.
  std::vector<IntermediateValue> read_new();
  std::uintmax_t offset() const { return offset_; }

  static constexpr std::size_t kMaxReadBytes = std::size_t{4} << 20;

 private:
  std::filesystem::path path_;
  std::string objective_name_;
  std::uintmax_t offset_ = 0;  // bytes of the file read so far
  std::string partial_;        // the start of a line not yet ended
  bool skipping_ = false;      // inside a line too long to read (the parser skips those whole too)
};

}  // namespace tune::adapters
