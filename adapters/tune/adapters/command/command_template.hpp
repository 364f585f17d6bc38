#pragma once
// The command of a campaign is an argument vector whose elements may contain `{name}` placeholders:
// the parameters of the space, the resolution parameter of a multi-resolution campaign (e.g.
// `{epochs}`), and `{trial_id}`, `{trial_dir}`, `{result_file}`. `{{` and `}}` are literal braces.
// Substitution never goes through a shell: each element stays one argument.
#include <cstddef>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tune/space/space.hpp"

namespace tune::adapters {

struct TrialContext {
  std::string trial_id;
  std::string trial_dir;    // absolute
  std::string result_file;  // absolute
};

// The resolution a trial of a multi-resolution campaign runs at: the parameter's name (its
// placeholder), the level's value (e.g. 9 epochs; printed like any number, 9 not 9.000000) and the
// level's index (0 = cheapest).
struct TrialResolution {
  std::string parameter;
  double value = 0.0;
  std::size_t level = 0;
};

// A level's value as the trial receives it: an integer-valued level (epochs, rounds, samples) as an
// integer in plain digits (100000, never 1e+05 or 100000.000000), any other as the shortest
// round-trip decimal (0.25).
std::string resolution_value_text(double value);

// An error in one element of a command: "command[INDEX] 'ELEMENT': PROBLEM". The parts let a caller
// that built the command from other text (the inline form rewrites NAME~PRIOR arguments) cite what
// the user wrote instead of an index into the rewritten command.
class CommandTemplateError : public std::invalid_argument {
 public:
  CommandTemplateError(std::size_t index, const std::string& element, const std::string& problem)
      : std::invalid_argument("command[" + std::to_string(index) + "] '" + element + "': " + problem),
        index_(index),
        problem_(problem) {}
  std::size_t index() const { return index_; }
  const std::string& problem() const { return problem_; }

 private:
  std::size_t index_;
  std::string problem_;
};

// The environment variable a parameter's value is passed in: TUNE_PARAM_ and the name upper-cased,
// every character but a letter or a digit as '_' (lr-max -> TUNE_PARAM_LR_MAX).
std::string environment_name(const std::string& parameter);

// Throws CommandTemplateError naming the element and the placeholder when a placeholder is
// unknown, or a brace is unbalanced; std::invalid_argument for a problem of the names themselves. Validate once with `check_command_template` before a campaign.
// `resolution_parameter` (empty: none) is one more known placeholder; it must not be the name of a
// parameter of the space or of a built-in placeholder.
//
// A conditional parameter (space.hpp, Condition) has no value where it does not apply, and an
// argument holding its placeholder is then left out of the command (`--momentum={momentum}` for
// adam). An argument that is nothing but such a placeholder is refused here: `--momentum {momentum}`
// would leave `--momentum` behind, and a positional one would shift the arguments after it.
void check_command_template(const std::vector<std::string>& command, const Space& space,
                            const std::string& resolution_parameter = {});
// `not_applying`: the parameters of the space the configuration leaves out (conditional ones that do
// not apply); an argument naming one is left out. Another placeholder without a value throws.
std::vector<std::string> render_command(const std::vector<std::string>& command, const Config& config,
                                        const TrialContext& trial,
                                        const std::optional<TrialResolution>& resolution = std::nullopt,
                                        const std::vector<std::string>& not_applying = {});

// The trial's environment additions: TUNE_TRIAL_ID, TUNE_TRIAL_DIR, TUNE_RESULT_FILE and
// TUNE_PARAM_<NAME> for every parameter the configuration holds (NAME upper-cased, non-alphanumerics
// replaced by '_'; none for a conditional parameter that does not apply); with
// a resolution also TUNE_RESOLUTION (the level's value), TUNE_RESOLUTION_LEVEL (its 0-based index)
// and TUNE_PARAM_<PARAMETER> (the value again, under the resolution parameter's name).
std::map<std::string, std::string> trial_environment(const Config& config, const TrialContext& trial,
                                                     const std::optional<TrialResolution>& resolution = std::nullopt);

}  // namespace tune::adapters
