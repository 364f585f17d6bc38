// What a running trial has reported so far, for `tune status`: the last intermediate value its
// stdout holds ("step 12, val_acc 0.873"), read from the file the trial writes, while it runs.
#pragma once

#include <filesystem>
#include <string>

namespace tune::tuner {

// Empty when the trial's stdout holds no value of `objective_name` yet (or there is no stdout: a
// trial handed out by `tune ask` runs elsewhere). Reads only the file's last adapters::kTailBytes.
std::string running_trial_progress(const std::filesystem::path& trial_dir, const std::string& objective_name);

}  // namespace tune::tuner
