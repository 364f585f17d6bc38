#pragma once
// The command of a campaign is an argument vector whose elements may contain `{name}` placeholders:
// the parameters of the space, and `{trial_id}`, `{trial_dir}`, `{result_file}`. `{{` and `}}` are
// literal braces. Substitution never goes through a shell: each element stays one argument.
#include <map>
#include <string>
#include <vector>

#include "tune/space/space.hpp"

namespace tune::adapters {

struct TrialContext {
  std::string trial_id;
  std::string trial_dir;    // absolute
  std::string result_file;  // absolute
};

// Throws std::invalid_argument naming the element and the placeholder when a placeholder is
// unknown, or a brace is unbalanced. Validate once with `check_command_template` before a campaign.
void check_command_template(const std::vector<std::string>& command, const Space& space);
std::vector<std::string> render_command(const std::vector<std::string>& command, const Config& config,
                                        const TrialContext& trial);

// The trial's environment additions: TUNE_TRIAL_ID, TUNE_TRIAL_DIR, TUNE_RESULT_FILE and
// TUNE_PARAM_<NAME> for every parameter (NAME upper-cased, non-alphanumerics replaced by '_').
std::map<std::string, std::string> trial_environment(const Config& config, const TrialContext& trial);

}  // namespace tune::adapters
