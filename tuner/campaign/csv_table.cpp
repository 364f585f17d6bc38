#include "tuner/campaign/csv_table.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "tuner/campaign/campaign_config.hpp"

namespace tune::tuner {

std::size_t CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  return std::string::npos;
}

CsvTable parse_csv(const std::string& text, const std::string& source) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::size_t> lines;
  std::vector<std::string> record;
  std::string field;
  std::size_t line = 1, record_line = 1;
  bool quoted = false, field_started = false, was_quoted = false;
  const auto end_field = [&] {
    // Spaces around an unquoted field ("0.1, relu", as people type) are not part of it; in quotes
    // they are (tune export quotes a choice that has them).
    if (!was_quoted) {
      field.erase(0, field.find_first_not_of(" \t"));
      field.erase(field.find_last_not_of(" \t") + 1);
    }
    record.push_back(std::move(field));
    field.clear();
    field_started = was_quoted = false;
  };
  const auto end_record = [&] {
    end_field();
    // A blank line (a lone empty field) is no record: a file may end with one.
    if (!(record.size() == 1 && record[0].empty())) {
      records.push_back(std::move(record));
      lines.push_back(record_line);
    }
    record.clear();
  };
  // A byte order mark (Excel's "CSV UTF-8") is no part of the first column's name.
  const std::size_t start = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && field.find_first_not_of(" \t") == std::string::npos) {  // (after spaces, too)
      field.clear();
      quoted = field_started = was_quoted = true;
    } else if (c == ',') {
      end_field();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_record();
      record_line = ++line;
    } else {
      field += c;
      field_started = true;
    }
  }
  if (quoted)
    throw CampaignError(source + ": the quoted field that starts on line " + std::to_string(record_line) +
                        " is not closed (a '\"' is missing): the file is cut short, or not CSV");
  if (field_started || !record.empty()) end_record();
  if (records.empty()) throw CampaignError(source + ": the file is empty: expected a header line of column names");
  CsvTable table;
  table.header = std::move(records.front());
  std::set<std::string> seen;
  for (std::size_t i = 0; i < table.header.size(); ++i) {
    const std::string& name = table.header[i];
    // pandas writes its index as a first column without a name: it is no column of the table.
    if (name.empty() && i > 0)
      throw CampaignError(source + ", line 1: column " + std::to_string(i + 1) + " has no name; give every column one");
    if (!name.empty() && !seen.insert(name).second)
      throw CampaignError(source + ", line 1: the column '" + name + "' is named twice; rename one");
  }
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != table.header.size())
      throw CampaignError(source + ", line " + std::to_string(lines[r]) + ": " + std::to_string(records[r].size()) +
                          (records[r].size() == 1 ? " field" : " fields") + " where the header has " +
                          std::to_string(table.header.size()) + " columns; a field holding a comma is written in double quotes");
    table.rows.push_back(std::move(records[r]));
    table.row_lines.push_back(lines[r]);
  }
  return table;
}

CsvTable read_csv_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CampaignError(path.string() + ": cannot be read (does it exist?); give a CSV file of earlier results");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_csv(text.str(), path.string());
}

}  // namespace tune::tuner
