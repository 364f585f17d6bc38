#pragma once
// A CSV file read as a table of text (RFC 4180: fields in double quotes may hold commas, newlines and
// doubled quotes; CRLF or LF line ends; a trailing newline or none), for a warm start from a table
// of earlier results: `tune export`'s, Optuna's `study.trials_dataframe().to_csv(...)`, Ray Tune's.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace tune::tuner {

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // each as long as the header
  std::vector<std::size_t> row_lines;          // the line each row starts on (1-based; the header is line 1)
  // The column named `name`, or npos.
  std::size_t column(const std::string& name) const;
};

// Throws CampaignError naming the file and the line: a quote left open, a row with another number of
// fields than the header, a header with an empty or repeated name, no header.
CsvTable parse_csv(const std::string& text, const std::string& source);
CsvTable read_csv_file(const std::filesystem::path& path);

}  // namespace tune::tuner
