#pragma once
// The intermediate values a running trial appends to its stdout, read a little at a time: each call
// reads what the trial wrote since the last one and parses its complete lines (the line being
// written waits for the next call), so a trial that logs for days is never read twice. The curve is
// the objective's own values with a step, never cost's: a parse of the whole file takes cost's
// (SMAC's form) when no line names the objective, but a running trial's first lines cannot tell
// (a trainer that logs `cost=` per batch and the loss per epoch was judged on its cost, and good
// trials were stopped), and a trial judged on nothing is only never stopped.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tune/adapters/protocol/trial_report.hpp"

namespace tune::adapters {

class IntermediateFollower {
 public:
  IntermediateFollower(std::filesystem::path stdout_path, std::string objective_name);
  // Reads what was written since the last call (at most kMaxReadBytes; the rest comes at the next)
  // and returns whether curve() changed.
  bool read_new();
  // The intermediate values so far, in the order reported.
  const std::vector<IntermediateValue>& curve() const { return objective_steps_; }
  std::uintmax_t offset() const { return offset_; }

  static constexpr std::size_t kMaxReadBytes = std::size_t{4} << 20;

 private:
  std::filesystem::path path_;
  std::string objective_name_;
  std::uintmax_t offset_ = 0;  // bytes of the file read so far
  std::string partial_;        // the start of a line not yet ended
  bool skipping_ = false;      // inside a line too long to read (the parser skips those whole too)
  std::vector<IntermediateValue> objective_steps_;
};

}  // namespace tune::adapters
