#include "tuner/cli/running_trial_progress.hpp"

#include "tune/adapters/executor/trial_exit.hpp"
#include "tune/adapters/executor/trial_file_text.hpp"
#include "tune/adapters/protocol/trial_report.hpp"
#include "tune/io/yaml_values.hpp"

namespace tune::tuner {

std::string running_trial_progress(const std::filesystem::path& trial_dir, const std::string& objective_name) {
  std::string text = adapters::read_file(trial_dir / adapters::kStdoutFile, 0, adapters::kTailBytes);
  // A tail that starts inside a line could read "ive=10.5" of "objective=10.5" as another key, or
  // "objective=0.5" of "val_objective=0.5" as the objective: it starts after its first newline.
  if (text.size() == adapters::kTailBytes) {
    const std::size_t newline = text.find('\n');
    text.erase(0, newline == std::string::npos ? std::string::npos : newline + 1);
  }
  // Only complete lines are read: the one being written is left for the next look.
  const adapters::TrialReport report = adapters::parse_trial_output(text, "", {.objective_name = objective_name});
  if (!report.intermediate.empty()) {
    const adapters::IntermediateValue& last = report.intermediate.back();
    return "so far: step " + std::to_string(last.step) + ", " + objective_name + " " + format_double(last.value);
  }
  if (report.objective) return "so far: " + objective_name + " " + format_double(*report.objective);
  return {};
}

}  // namespace tune::tuner
