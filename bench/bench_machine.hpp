#pragma once
// The machine a benchmark ran on, printed above its tables: a latency means little without the CPU,
// how busy the machine already was, and the file system its fsyncs went to.
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace tune::bench {

inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const std::size_t p = line.find(':');
      return p == std::string::npos ? line : line.substr(p + 2);
    }
  return "unknown";
}

inline std::string first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

inline std::string filesystem_type(const std::filesystem::path& path) {
  struct statfs s {};
  if (::statfs(path.c_str(), &s) != 0) return "unknown";
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0xEF53UL: return "ext4";
    case 0x01021994UL: return "tmpfs";
    case 0x58465342UL: return "xfs";
    case 0x9123683EUL: return "btrfs";
    case 0x794c7630UL: return "overlayfs";
    default: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%lx", static_cast<unsigned long>(s.f_type));
      return buf;
    }
  }
}

// "machine: 2 CPUs online, <model>; load average at start: <loadavg>"
inline std::string machine_line() {
  return "machine: " + std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)) + " CPUs online, " + cpu_model() +
         "; load average at start: " + first_line("/proc/loadavg");
}

}  // namespace tune::bench
