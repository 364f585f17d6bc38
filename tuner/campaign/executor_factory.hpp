#pragma once
// The executor a campaign's `executor` block asks for: LocalExecutor or SlurmExecutor.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tune/adapters/executor/executor.hpp"
#include "tune/adapters/executor/slurm_executor.hpp"
#include "tuner/campaign/campaign_config.hpp"

namespace tune::tuner {

// `supervisor_command` starts a supervisor ({"/path/to/tune", "__supervise"}); `warn` receives
// transient trouble the executor works around (a failed squeue). Throws std::runtime_error when the
// executor cannot work here (for slurm: sbatch is not on the PATH).
std::unique_ptr<adapters::Executor> make_executor(const CampaignConfig& config,
                                                  const std::vector<std::string>& supervisor_command,
                                                  std::function<void(const std::string&)> warn);

// The batch jobs a slurm campaign asks for: the campaign's executor.slurm settings, and without an
// explicit `time`, a time limit allowing for the longest trial timeout (of any resolution level).
adapters::SlurmOptions slurm_options(const CampaignConfig& config, const std::vector<std::string>& supervisor_command,
                                     std::function<void(const std::string&)> warn);

}  // namespace tune::tuner
