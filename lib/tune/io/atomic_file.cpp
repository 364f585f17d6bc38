#include "tune/io/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tune {

namespace {
[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path) {
  throw std::runtime_error(what + " '" + path.string() + "': " + std::strerror(errno));
}

// A write that fails before its rename leaves the file as it was: said, so that a user who reads
// "No space left on device" knows the last good state is there to go on from once there is room.
[[noreturn]] void fail_unchanged(const std::string& what, const std::filesystem::path& tmp,
                                 const std::filesystem::path& path) {
  throw std::runtime_error(what + " '" + tmp.string() + "': " + std::strerror(errno) + "; '" + path.string() +
                           "' is unchanged");
}

void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot open directory", dir);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) fail("cannot fsync directory", dir);
}
// A writer's temporary file is `path` + kTemporarySuffix + its pid.
constexpr const char* kTemporarySuffix = ".tmp.";

std::filesystem::path temporary_of(const std::filesystem::path& path, pid_t pid) {
  std::filesystem::path tmp = path;
  tmp += kTemporarySuffix + std::to_string(pid);
  return tmp;
}

// The file a write to `path` replaces: `path`, or the file its symbolic links lead to. Renamed over,
// the link became a regular file and its target kept the old content (a study saved through a link
// to a shared location was never updated there).
std::filesystem::path replaced_file(const std::filesystem::path& path) {
  std::filesystem::path target = path;
  std::error_code ec;
  for (int hops = 0; hops < 40 && std::filesystem::is_symlink(target, ec); ++hops) {
    const std::filesystem::path link = std::filesystem::read_symlink(target, ec);
    if (ec) break;
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  return target;
}
}  // namespace

void write_file_atomically(const std::filesystem::path& given, std::string_view content) {
  const std::filesystem::path path = replaced_file(given);
  const std::filesystem::path dir = path.parent_path();
  // Only a regular file is replaced: renamed over, a device (a save to /dev/full) or a FIFO became a
  // regular file. The new file keeps the old one's permissions (a 0600 study became 0644).
  struct stat old {};
  const bool exists = ::stat(path.c_str(), &old) == 0;
  if (exists && !S_ISREG(old.st_mode))
    throw std::runtime_error("cannot write '" + given.string() + "': not a regular file (a state file is replaced "
                             "whole by a rename, which a device, a FIFO or a directory cannot be); give the path of a "
                             "regular file");
  const std::filesystem::path tmp = temporary_of(path, ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_unchanged("cannot create", tmp, path);
  if (exists && ::fchmod(fd, old.st_mode & 07777) != 0) {
    const int saved = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    errno = saved;
    fail_unchanged("cannot set the permissions of", tmp, path);
  }
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = saved;
      fail_unchanged("cannot write", tmp, path);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int saved = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    errno = saved;
    fail_unchanged("cannot fsync", tmp, path);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail("cannot rename temporary file onto", path);
  }
  fsync_directory(dir);
}

void remove_leftover_temporaries(const std::filesystem::path& given) {
  const std::filesystem::path path = replaced_file(given);  // where write_file_atomically writes them
  const std::string prefix = path.filename().string() + kTemporarySuffix;
  std::error_code ec;
  const std::filesystem::path dir = path.parent_path().empty() ? "." : path.parent_path();
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    pid_t pid = 0;
    const char* digits = name.data() + prefix.size();
    const auto [end_of_pid, error] = std::from_chars(digits, name.data() + name.size(), pid);
    if (error != std::errc() || end_of_pid != name.data() + name.size() || pid <= 0) continue;
    if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) {
      std::error_code ignored;  // a file that cannot be removed is left; it harms nothing
      std::filesystem::remove(it->path(), ignored);
    }
  }
}

}  // namespace tune
