// Atomic writes of state: the file is replaced whole or not at all, and a failed write says so.
#include "tune/io/atomic_file.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

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
