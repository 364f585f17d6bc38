#include "tune/adapters/executor/executor.hpp"

#include <yaml-cpp/yaml.h>

#include "tune/adapters/executor/supervisor.hpp"
#include "tune/io/atomic_file.hpp"

namespace tune::adapters {

void write_command_record(const std::filesystem::path& dir, const TrialLaunch& trial) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "argv" << YAML::Value << YAML::BeginSeq;
  for (const std::string& arg : trial.argv) out << YAML::DoubleQuoted << arg;
  out << YAML::EndSeq;
  out << YAML::Key << "environment" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, value] : trial.environment)
    out << YAML::Key << name << YAML::Value << YAML::DoubleQuoted << value;
  out << YAML::EndMap;
  out << YAML::Key << "timeout_ms" << YAML::Value << static_cast<long long>(trial.timeout.count());
  out << YAML::Key << "grace_ms" << YAML::Value << static_cast<long long>(trial.grace.count());
  out << YAML::EndMap;
  remove_leftover_temporaries(dir / kCommandFile);  // the tuner, launching the trial, is its only writer
  write_file_atomically(dir / kCommandFile, std::string(out.c_str()) + "\n");
}

void set_aside_attempt(const std::filesystem::path& dir, std::size_t attempt) {
  const std::filesystem::path to = dir / "attempts" / std::to_string(attempt);
  // The exit record first: until it is gone, nothing else of the attempt can be read as a new one's.
  for (const char* name : {kExitFile, kResultFile, kSupervisorFile, kCommandFile, kStdoutFile, kStderrFile,
                           kSupervisorLog, kScriptFile, kJobOutputFile}) {
    const std::filesystem::path from = dir / name;
    if (!std::filesystem::exists(std::filesystem::symlink_status(from))) continue;
    if (std::filesystem::exists(std::filesystem::symlink_status(to / name))) {
      // Set aside already, so this one was written by a launch that failed before its run started:
      // the attempt's own record is kept.
      std::filesystem::remove(from);
      continue;
    }
    std::filesystem::create_directories(to);
    std::filesystem::rename(from, to / name);
  }
}

}  // namespace tune::adapters
