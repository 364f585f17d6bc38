// parse_csv: RFC 4180 as Python's csv module and pandas write it, and refusals that name the line.
#include <gtest/gtest.h>

#include "tuner/campaign/campaign_config.hpp"
#include "tuner/campaign/csv_table.hpp"

namespace tune::tuner {
namespace {

using Rows = std::vector<std::vector<std::string>>;

TEST(CsvTable, QuotedFieldsHoldCommasNewlinesAndDoubledQuotes) {
  // As Python's csv.writer writes ["a", "b,c", 'say "hi"', "two\nlines"] (QUOTE_MINIMAL, \r\n).
  const CsvTable t = parse_csv("x,y,z,w\r\na,\"b,c\",\"say \"\"hi\"\"\",\"two\nlines\"\r\n1,,3,\r\n", "t.csv");
  EXPECT_EQ(t.header, (std::vector<std::string>{"x", "y", "z", "w"}));
  EXPECT_EQ(t.rows, (Rows{{"a", "b,c", "say \"hi\"", "two\nlines"}, {"1", "", "3", ""}}));
  EXPECT_EQ(t.row_lines, (std::vector<std::size_t>{2, 4}));  // the quoted newline moved the next row down
  EXPECT_EQ(t.column("z"), 2u);
  EXPECT_EQ(t.column("nope"), std::string::npos);
}

TEST(CsvTable, LineEndsAndTheLastLine) {
  const Rows expected{{"1", "2"}, {"3", "4"}};
  for (const std::string text : {"a,b\n1,2\n3,4\n", "a,b\n1,2\n3,4", "a,b\r\n1,2\r\n3,4\r\n", "a,b\n1,2\n3,4\n\n"})
    EXPECT_EQ(parse_csv(text, "t.csv").rows, expected) << text;
  // pandas' to_csv writes its index as a first column without a name.
  const CsvTable pandas = parse_csv(",number,value,params_lr\n0,0,0.5,0.01\n1,1,0.25,0.1\n", "p.csv");
  EXPECT_EQ(pandas.column("value"), 2u);
  EXPECT_EQ(pandas.rows[1][3], "0.1");
}

TEST(CsvTable, AByteOrderMarkAndSpacesAroundNamesAreNoPartOfTheNames) {
  const CsvTable t = parse_csv("\xEF\xBB\xBFx , value, c\n1, 2 , \" a \"\n", "excel.csv");
  EXPECT_EQ(t.header, (std::vector<std::string>{"x", "value", "c"}));
  EXPECT_EQ(t.rows, (Rows{{"1", "2", " a "}}));  // in quotes, a field keeps its spaces
}

TEST(CsvTable, DamagedFilesAreRefusedNamingTheLine) {
  const auto refusal = [](const std::string& text) {
    try {
      (void)parse_csv(text, "runs.csv");
    } catch (const CampaignError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal("a,b\n1,2\n3\n"),
            "runs.csv, line 3: 1 field where the header has 2 columns; a field holding a comma is written in double "
            "quotes");
  EXPECT_EQ(refusal("a,b\n1,\"2\n3,4\n"),
            "runs.csv: the quoted field that starts on line 2 is not closed (a '\"' is missing): the file is cut short, "
            "or not CSV");
  EXPECT_EQ(refusal("a,a\n1,2\n"), "runs.csv, line 1: the column 'a' is named twice; rename one");
  EXPECT_EQ(refusal("a,,b\n1,2,3\n"), "runs.csv, line 1: column 2 has no name; give every column one");
  EXPECT_EQ(refusal(""), "runs.csv: the file is empty: expected a header line of column names");
}

}  // namespace
}  // namespace tune::tuner
