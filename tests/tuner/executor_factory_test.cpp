// The batch jobs a slurm campaign asks for, as the campaign's executor block and its time limits
// give them.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "tuner/campaign/executor_factory.hpp"

namespace tune::tuner {
namespace {

adapters::SlurmOptions options_of(const std::string& executor, const std::string& resolution = "") {
  const std::string text = "name: c\ncommand: [train]\nspace: {x: {type: float, low: 0, high: 1}}\n"
                           "executor: " + executor + "\n" + resolution;
  return slurm_options(campaign_from_yaml(YAML::Load(text), "c.yaml"), {"tune", "__supervise"}, nullptr);
}

// Without `time`, the job's limit allows for the longest trial timeout plus the grace period, in
// whole minutes rounded up, and a minute to start and record the exit: a job killed by Slurm before
// its supervisor's own timeout fired would be recorded as lost, not timed out.
TEST(SlurmJobTimeLimit, AllowsForTheLongestLevelsTimeoutAndTheGrace) {
  // 20 min + 10 s grace = 20.17 min -> 21, + 1.
  EXPECT_EQ(options_of("{kind: slurm, timeout: 1h}",
                       "resolution: {param: epochs, levels: [1, 3, 9], timeout: [1m, 20m, 90s]}\n")
                .time_limit,
            std::chrono::minutes(22));
  // No resolution.timeout: executor.timeout's 60 min + 30 s grace -> 61, + 1.
  EXPECT_EQ(options_of("{kind: slurm, timeout: 1h, grace: 30s}").time_limit, std::chrono::minutes(62));
  // A limit of exactly whole minutes once the grace is added is not rounded up further: 50 s + 10 s.
  EXPECT_EQ(options_of("{kind: slurm, timeout: 50s}").time_limit, std::chrono::minutes(2));
}

TEST(SlurmJobTimeLimit, AnExplicitTimeWinsAndNoTimeoutLeavesTheClustersDefault) {
  // `time` is the user's, rounded up to whole minutes, whatever the timeouts.
  EXPECT_EQ(options_of("{kind: slurm, timeout: 1h, time: 90s}").time_limit, std::chrono::minutes(2));
  EXPECT_EQ(options_of("{kind: slurm, time: 2h}", "resolution: {param: epochs, levels: [1, 3], timeout: [1m, 3h]}\n")
                .time_limit,
            std::chrono::minutes(120));
  EXPECT_FALSE(options_of("{kind: slurm}").time_limit.has_value());
}

TEST(SlurmOptionsOfCampaign, CarryTheExecutorBlocksSettings) {
  const adapters::SlurmOptions o =
      options_of("{kind: slurm, partition: gpu, cpus: 4, memory: 8G, gres: \"gpu:1\", account: lab, qos: long, "
                 "poll: 2s, extra: [\"--constraint=a100\"], setup: \"module load cuda\"}");
  EXPECT_EQ(o.job_name, "c");
  EXPECT_EQ(o.partition, "gpu");
  EXPECT_EQ(o.cpus, 4u);
  EXPECT_EQ(o.memory, "8G");
  EXPECT_EQ(o.gres, "gpu:1");
  EXPECT_EQ(o.account, "lab");
  EXPECT_EQ(o.qos, "long");
  EXPECT_EQ(o.poll_interval, std::chrono::milliseconds(2000));
  EXPECT_EQ(o.extra_directives, std::vector<std::string>{"--constraint=a100"});
  EXPECT_EQ(o.setup, "module load cuda");
  EXPECT_EQ(o.supervisor_command, (std::vector<std::string>{"tune", "__supervise"}));
}

}  // namespace
}  // namespace tune::tuner
