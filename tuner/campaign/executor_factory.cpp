#include "tuner/campaign/executor_factory.hpp"

#include <cmath>
#include <stdexcept>

#include "tune/adapters/executor/local_executor.hpp"

namespace tune::tuner {

adapters::SlurmOptions slurm_options(const CampaignConfig& config, const std::vector<std::string>& supervisor_command,
                                     std::function<void(const std::string&)> warn) {
  const ExecutorSpec& x = config.executor;
  const SlurmSpec& s = x.slurm;
  adapters::SlurmOptions o{.supervisor_command = supervisor_command,
                           .job_name = config.name,
                           .partition = s.partition,
                           .cpus = s.cpus,
                           .memory = s.memory,
                           .gres = s.gres,
                           .account = s.account,
                           .qos = s.qos,
                           .extra_directives = s.extra,
                           .setup = s.setup,
                           .poll_interval = std::chrono::milliseconds(static_cast<long long>(s.poll_seconds * 1000)),
                           .warn = std::move(warn)};
  // Slurm counts whole minutes. Without an explicit time limit, a trial timeout gives the job room
  // for the timeout, the grace period and a minute to start and record its exit.
  if (s.time_seconds)
    o.time_limit = std::chrono::minutes(static_cast<long long>(std::ceil(*s.time_seconds / 60.0)));
  else if (const std::optional<double> longest = config.longest_trial_timeout())
    o.time_limit = std::chrono::minutes(static_cast<long long>(std::ceil((*longest + x.grace_seconds) / 60.0)) + 1);
  return o;
}

std::unique_ptr<adapters::Executor> make_executor(const CampaignConfig& config,
                                                  const std::vector<std::string>& supervisor_command,
                                                  std::function<void(const std::string&)> warn) {
  const std::string& kind = config.executor.kind;
  if (kind == "local") return std::make_unique<adapters::LocalExecutor>(supervisor_command);
  if (kind != "slurm") throw std::runtime_error("unknown executor kind '" + kind + "'");
  return std::make_unique<adapters::SlurmExecutor>(slurm_options(config, supervisor_command, std::move(warn)));
}

}  // namespace tune::tuner
