// The last line of a trial's log, as failure reasons quote it, and the tail read of a large file.
#include "tune/adapters/executor/trial_file_text.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using tune::adapters::last_line;
using tune::adapters::last_line_of_file;
using tune::adapters::read_file;

TEST(TrialFileText, LastLineSkipsTrailingBlankLinesAndTrimsBothEnds) {
  EXPECT_EQ(last_line("first\n  Traceback: KeyError 'lr'  \r\n\n \t\n"), "Traceback: KeyError 'lr'");
  EXPECT_EQ(last_line("only line, no newline"), "only line, no newline");
  EXPECT_EQ(last_line("\n \n\t\r\n"), "");
  EXPECT_EQ(last_line(""), "");
}

TEST(TrialFileText, LastLineIsShortenedTo200Characters) {
  const std::string line(500, 'x');
  EXPECT_EQ(last_line("head\n" + line + "\n"), std::string(200, 'x') + "...");
  EXPECT_EQ(last_line(std::string(200, 'y')), std::string(200, 'y'));
}

TEST(TrialFileText, ReadsTheTailOfAFileAndTheLastLineOfItsLast64KiB) {
  const fs::path dir = fs::path(TUNE_TEST_TMPDIR) / "trial-file-text";
  fs::create_directories(dir);
  const fs::path log = dir / "stderr";
  {
    std::ofstream out(log, std::ios::binary);
    out << std::string(100 * 1024, 'a') << "\nlast words\n";
  }
  const std::string whole = read_file(log);
  EXPECT_EQ(whole.size(), 100u * 1024 + 12);
  EXPECT_EQ(read_file(log, 0, 11), "last words\n");
  EXPECT_GE(read_file(log, 1).capacity(), whole.size() + 1);  // room for the newline the runner appends
  EXPECT_EQ(last_line_of_file(log), "last words");
  EXPECT_EQ(read_file(dir / "missing"), "");
  EXPECT_EQ(last_line_of_file(dir / "missing"), "");
}
