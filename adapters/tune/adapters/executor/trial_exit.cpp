#include "tune/adapters/executor/trial_exit.hpp"

#include <yaml-cpp/yaml.h>

#include <array>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "tune/adapters/executor/supervisor.hpp"
#include "tune/io/atomic_file.hpp"
#include "tune/io/printable_text.hpp"
#include "tune/io/yaml_values.hpp"

namespace tune::adapters {

namespace {

constexpr std::array<std::pair<ExitKind, const char*>, 7> kKindNames{{
    {ExitKind::exited, "exited"},
    {ExitKind::signaled, "signaled"},
    {ExitKind::timeout, "timeout"},
    {ExitKind::cancelled, "cancelled"},
    {ExitKind::launch_failed, "launch_failed"},
    {ExitKind::lost, "lost"},
    {ExitKind::aborted, "aborted"},
}};

ExitKind kind_from_string(const YAML::Node& node) {
  const std::string name = read_string(node, "kind");
  for (const auto& [kind, text] : kKindNames)
    if (name == text) return kind;
  throw StateError("field 'kind' at " + position_of(node) + ": unknown exit kind '" + name +
                   "' (expected exited, signaled, timeout, cancelled, launch_failed, lost or aborted)");
}

// Reads `dir/name` with `parse`; nullopt if the file does not exist, std::runtime_error naming the
// file if it cannot be read or parsed.
template <class Parse>
auto read_record(const std::filesystem::path& dir, const char* name, Parse parse)
    -> std::optional<decltype(parse(YAML::Node{}))> {
  const std::filesystem::path path = dir / name;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  try {
    const YAML::Node root = load_yaml_file(path);
    if (!root.IsMap()) throw StateError("expected a map of fields");
    return parse(root);
  } catch (const std::exception& e) {
    throw std::runtime_error(kDamagedRecord + path.string() + "': " + printable_text(e.what()) +
                             " (delete the file: the tuner then tells from the trial's other records whether it "
                             "ended, still runs or must run again)");
  }
}

}  // namespace

const char* to_string(ExitKind kind) {
  for (const auto& [k, text] : kKindNames)
    if (k == kind) return text;
  return "unknown";
}

void write_trial_exit(const std::filesystem::path& trial_dir, const TrialExit& exit) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "kind" << YAML::Value << to_string(exit.kind);
  out << YAML::Key << "code" << YAML::Value << exit.code;
  out << YAML::Key << "signal" << YAML::Value << exit.signal;
  out << YAML::Key << "started_at" << YAML::Value << format_double(exit.started_at);
  out << YAML::Key << "finished_at" << YAML::Value << format_double(exit.finished_at);
  out << YAML::Key << "message" << YAML::Value << YAML::DoubleQuoted << exit.message;
  out << YAML::EndMap;
  write_file_atomically(trial_dir / kExitFile, std::string(out.c_str()) + "\n");
}

std::optional<TrialExit> read_trial_exit(const std::filesystem::path& trial_dir) {
  return read_record(trial_dir, kExitFile, [](const YAML::Node& root) {
    TrialExit exit;
    exit.kind = kind_from_string(require(root, "kind"));
    exit.code = static_cast<int>(read_int(require(root, "code"), "code"));
    exit.signal = static_cast<int>(read_int(require(root, "signal"), "signal"));
    exit.started_at = read_double(require(root, "started_at"), "started_at");
    exit.finished_at = read_double(require(root, "finished_at"), "finished_at");
    const YAML::Node message = root["message"];
    if (message.IsDefined() && !message.IsNull()) exit.message = read_string(message, "message");
    return exit;
  });
}

void write_supervisor_record(const std::filesystem::path& trial_dir, const SupervisorRecord& record) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "supervisor_pid" << YAML::Value << static_cast<long long>(record.supervisor_pid);
  out << YAML::Key << "process_group" << YAML::Value << static_cast<long long>(record.process_group);
  out << YAML::Key << "started_at" << YAML::Value << format_double(record.started_at);
  out << YAML::EndMap;
  write_file_atomically(trial_dir / kSupervisorFile, std::string(out.c_str()) + "\n");
}

std::optional<SupervisorRecord> read_supervisor_record(const std::filesystem::path& trial_dir) {
  return read_record(trial_dir, kSupervisorFile, [](const YAML::Node& root) {
    SupervisorRecord record;
    record.supervisor_pid = static_cast<pid_t>(read_int(require(root, "supervisor_pid"), "supervisor_pid"));
    record.process_group = static_cast<pid_t>(read_int(require(root, "process_group"), "process_group"));
    record.started_at = read_double(require(root, "started_at"), "started_at");
    if (record.supervisor_pid <= 0 || record.process_group <= 0)
      throw StateError("supervisor_pid and process_group must be positive process ids");
    return record;
  });
}

}  // namespace tune::adapters
