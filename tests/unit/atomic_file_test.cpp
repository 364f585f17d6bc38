// Atomic writes of state: the file is replaced whole or not at all, and a failed write says so.
#include "tune/io/atomic_file.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path fresh(const std::string& name) {
  const fs::path d = fs::path(TUNE_TEST_TMPDIR) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// Makes every write past `bytes` fail with EFBIG (as a full disk fails with ENOSPC) while it lives.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = old_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit old_{};
  sighandler_t old_handler_ = SIG_DFL;
};

}  // namespace

TEST(AtomicFile, ReplacesTheFileWholeAndLeavesNoTemporary) {
  const fs::path d = fresh("atomic-replace");
  tune::write_file_atomically(d / "state.yaml", "first\n");
  tune::write_file_atomically(d / "state.yaml", "second, longer\n");
  EXPECT_EQ(read(d / "state.yaml"), "second, longer\n");
  EXPECT_EQ(entries(d), 1u);
}

TEST(AtomicFile, AWriteThatFailsLeavesTheFileAsItWasAndSaysSo) {
  const fs::path d = fresh("atomic-fail");
  tune::write_file_atomically(d / "state.yaml", "the last good state\n");
  std::string message;
  {
    const FileSizeLimit limit(4096);
    try {
      tune::write_file_atomically(d / "state.yaml", std::string(100000, 'x'));
    } catch (const std::runtime_error& e) {
      message = e.what();
    }
  }
  EXPECT_NE(message.find("cannot write '" + (d / "state.yaml").string() + ".tmp."), std::string::npos) << message;
  EXPECT_NE(message.find("; '" + (d / "state.yaml").string() + "' is unchanged"), std::string::npos) << message;
  EXPECT_EQ(read(d / "state.yaml"), "the last good state\n");
  EXPECT_EQ(entries(d), 1u) << "the temporary file is removed";
}

TEST(AtomicFile, ACreateThatFailsNamesTheTemporaryAndTheFile) {
  const fs::path d = fresh("atomic-missing-dir");
  try {
    tune::write_file_atomically(d / "gone" / "state.yaml", "x");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cannot create '" + (d / "gone" / "state.yaml").string() + ".tmp."), std::string::npos)
        << message;
    EXPECT_NE(message.find("No such file or directory; '" + (d / "gone" / "state.yaml").string() + "' is unchanged"),
              std::string::npos)
        << message;
  }
}

namespace {

// A save through a symbolic link (a study kept in a shared place) replaced the link by a regular
// file and left the target as it was; the link is followed, and the target replaced.
TEST(AtomicFile, ASymbolicLinkIsFollowedAndStaysALink) {
  const fs::path d = fresh("atomic-symlink");
  fs::create_directories(d / "shared");
  std::ofstream(d / "shared" / "study.yaml") << "old\n";
  fs::create_symlink("shared/study.yaml", d / "study.yaml");
  tune::write_file_atomically(d / "study.yaml", "new\n");
  EXPECT_TRUE(fs::is_symlink(d / "study.yaml"));
  EXPECT_EQ(read(d / "shared" / "study.yaml"), "new\n");
  EXPECT_EQ(read(d / "study.yaml"), "new\n");
  // No temporary is left beside the link or the target.
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(d)) files += e.is_regular_file() || e.is_symlink();
  EXPECT_EQ(files, 2u);
}

// The new file keeps the old one's permissions: a study kept private (0600) became 0644.
TEST(AtomicFile, ThePermissionsOfTheReplacedFileAreKept) {
  const fs::path d = fresh("atomic-mode");
  std::ofstream(d / "s.yaml") << "old\n";
  fs::permissions(d / "s.yaml", fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  tune::write_file_atomically(d / "s.yaml", "new\n");
  EXPECT_EQ(fs::status(d / "s.yaml").permissions(), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(read(d / "s.yaml"), "new\n");
}

// A path that is not a regular file is refused, and left as it was: renamed over, a FIFO (or, as
// root, /dev/full) became a regular file.
TEST(AtomicFile, APathThatIsNotARegularFileIsRefused) {
  const fs::path d = fresh("atomic-fifo");
  ASSERT_EQ(::mkfifo((d / "pipe").c_str(), 0644), 0);
  try {
    tune::write_file_atomically(d / "pipe", "new\n");
    ADD_FAILURE() << "a FIFO was written over";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fs::status(d / "pipe").type(), fs::file_type::fifo);
  EXPECT_THROW(tune::write_file_atomically(d, "new\n"), std::runtime_error);  // a directory
  EXPECT_TRUE(fs::is_directory(d));
}

}  // namespace
