// Bytes of a damaged file quoted in a message are written as \xNN; valid UTF-8 is kept.
#include <gtest/gtest.h>

#include <string>

#include "tune/io/printable_text.hpp"

namespace {

using tune::printable_text;

TEST(PrintableText, KeepsPrintableAsciiAndWellFormedUtf8) {
  EXPECT_EQ(printable_text("line 1, column 3: not valid YAML"), "line 1, column 3: not valid YAML");
  EXPECT_EQ(printable_text("taux_\xC3\xA9tude \xE2\x82\xAC \xF0\x9F\x98\x80"), "taux_\xC3\xA9tude \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(printable_text(""), "");
}

TEST(PrintableText, WritesControlCharactersAsHex) {
  EXPECT_EQ(printable_text(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable_text("a\nb\tc\x7F\x1B[31m"), "a\\x0Ab\\x09c\\x7F\\x1B[31m");
}

TEST(PrintableText, WritesBytesOutsideValidUtf8AsHex) {
  EXPECT_EQ(printable_text("escape character: \xB3"), "escape character: \\xB3");  // a lone continuation byte
  EXPECT_EQ(printable_text("\xC3"), "\\xC3");                                        // a sequence cut short
  EXPECT_EQ(printable_text("\xC3(x"), "\\xC3(x");                                     // a lead without continuation
  EXPECT_EQ(printable_text("\xC0\x80"), "\\xC0\\x80");                                // overlong NUL
  EXPECT_EQ(printable_text("\xE0\x80\xAF"), "\\xE0\\x80\\xAF");                       // overlong '/'
  EXPECT_EQ(printable_text("\xED\xA0\x80"), "\\xED\\xA0\\x80");                       // a UTF-16 surrogate
  EXPECT_EQ(printable_text("\xF4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");              // above U+10FFFF
  EXPECT_EQ(printable_text("\xFF\xFE"), "\\xFF\\xFE");
  // The first invalid byte is escaped and the rest read afresh: a valid sequence right after is kept.
  EXPECT_EQ(printable_text("\xE2\x82\xC3\xA9"), "\\xE2\\x82\xC3\xA9");
}

}  // namespace
