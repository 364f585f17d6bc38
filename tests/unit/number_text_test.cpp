// The one number syntax of the trial protocol, tune tell, tune enqueue and the inline priors: each
// had a parser of its own, and they drifted (tune tell took 0x10 for 16 and +-5 for -5).
#include "tune/io/number_text.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace {

using tune::parse_number_text;

TEST(NumberText, ReadsDecimalsAndRefusesWhatIsNotOne) {
  struct Case {
    const char* text;
    double value;
  };
  for (const Case c : {Case{"0.93", 0.93}, Case{"-0.5", -0.5}, Case{"+2.5e-3", 2.5e-3}, Case{".5", 0.5},
                       Case{"-.5", -0.5}, Case{"1E3", 1000.0}, Case{"7", 7.0}, Case{"+.25", 0.25}}) {
    const auto v = parse_number_text(c.text);
    ASSERT_TRUE(v.has_value()) << c.text;
    EXPECT_EQ(*v, c.value) << c.text;
  }
  for (const char* text : {"", "+", "-", "0x10", "0x1p3", " 7", "7 ", "++1", "+-5", "-+5", "1,5", "1.5.2", "abc",
                           "1e", "e3", "0.9abc"})
    EXPECT_FALSE(parse_number_text(text).has_value()) << "'" << text << "'";
}

TEST(NumberText, NonFiniteSpellingsAndValuesBeyondADoubleAreNumbersTheCallersJudge) {
  EXPECT_TRUE(std::isnan(*parse_number_text("nan")));
  EXPECT_TRUE(std::isnan(*parse_number_text(".NaN")));
  EXPECT_EQ(*parse_number_text("inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(*parse_number_text("-Infinity"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(*parse_number_text("+.inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(*parse_number_text("-.inf"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(*parse_number_text("1e999"), std::numeric_limits<double>::infinity());  // detected as non-finite
  EXPECT_EQ(*parse_number_text("-1e999"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(*parse_number_text("1e-400"), 0.0);  // the double nearest to it
  EXPECT_EQ(*parse_number_text("4e-320"), std::strtod("4e-320", nullptr));  // a subnormal, kept
}

}  // namespace
