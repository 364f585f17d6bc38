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
  write_file_atomically(dir / kCommandFile, std::string(out.c_str()) + "\n");
}

}  // namespace tune::adapters
