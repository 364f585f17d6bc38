// `tune export`: every trial of a campaign as one table, for pandas, R or a spreadsheet (what
// Optuna's trials_dataframe and Orion's dump give their users). Read-only, like `tune status`: it
// reads state.yaml, which the tuner replaces atomically, so a running campaign exports a consistent
// snapshot.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "tune/adapters/command/command_template.hpp"
#include "tune/io/atomic_file.hpp"
#include "tune/io/yaml_values.hpp"
#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/event_log.hpp"
#include "tuner/cli/commands.hpp"

namespace tune::tuner {

namespace {

// One cell of the table: text, a number, or nothing (an empty CSV field, JSON null).
struct Cell {
  enum class Kind { empty, text, number, boolean } kind = Kind::empty;
  std::string text;  // the text, or the number / boolean as JSON writes it

  static Cell of_text(std::string s) { return {Kind::text, std::move(s)}; }
  static Cell of_number(double v) { return std::isfinite(v) ? Cell{Kind::number, format_double(v)} : Cell{}; }
  static Cell of_count(std::uint64_t v) { return {Kind::number, std::to_string(v)}; }
  static Cell of_bool(bool v) { return {Kind::boolean, v ? "true" : "false"}; }
};

// Seconds since the epoch as ISO 8601 UTC with milliseconds ("2026-11-23T22:41:07.123Z"), which
// pandas and spreadsheets read as a time; 0 (never started) is no time.
Cell time_cell(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return {};
  const auto whole = static_cast<std::time_t>(std::floor(seconds));
  const int millis = std::min(999, static_cast<int>(std::lround((seconds - static_cast<double>(whole)) * 1000.0)));
  std::tm utc{};
  gmtime_r(&whole, &utc);
  char buf[96];  // room for any int the format could print
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
  return Cell::of_text(buf);
}

Cell value_cell(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return Cell::of_text(*s);
  if (const auto* d = std::get_if<double>(&v)) return Cell::of_number(*d);
  return {Cell::Kind::number, tune::to_string(v)};
}

// RFC 4180: a field with a comma, a quote, a line break or edge spaces is quoted, quotes doubled.
std::string csv_field(const Cell& c) {
  const std::string& s = c.text;
  const bool quote = c.kind == Cell::Kind::text &&
                     (s.find_first_of(",\"\r\n") != std::string::npos || (!s.empty() && (s.front() == ' ' || s.back() == ' ')));
  if (!quote) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string json_value(const Cell& c) {
  switch (c.kind) {
    case Cell::Kind::empty: return "null";
    case Cell::Kind::text: return "\"" + json_escape(c.text) + "\"";
    default: return c.text;
  }
}

struct Column {
  std::string name;
  std::vector<Cell> cells;  // one per trial
};

// The table: fixed columns (with a resolution: the level, its value as `resolution.<parameter>`, and
// the cost the trial counts against the budget), then one per parameter (`param.<name>`, the space's
// order) and one per extra metric any trial reported (`metric.<name>`, sorted). Prefixed names keep
// a parameter called `status` from colliding with the trial's status.
std::vector<Column> trial_table(const CampaignState& s) {
  const Resolution* res = s.config.resolution ? &*s.config.resolution : nullptr;
  const std::vector<double> costs = res ? level_costs(*res, s.study.trials()) : std::vector<double>{};
  std::vector<Column> cols;
  const auto column = [&cols](const std::string& name) -> std::vector<Cell>& {
    for (Column& c : cols)
      if (c.name == name) return c.cells;
    cols.push_back({name, {}});
    return cols.back().cells;
  };
  std::set<std::string> metric_names;
  for (const TrialRun& r : s.runs)
    for (const auto& [name, value] : r.metrics) metric_names.insert(name);
  const bool any_imported = s.study.imported_count() > 0;  // (a warm start's; the column only then)
  const bool any_pruned = std::any_of(s.runs.begin(), s.runs.end(), [](const TrialRun& r) { return r.ended_pruned(); });
  for (const TrialRun& r : s.runs) {
    const Trial& t = s.study.trial(r.id);
    const bool finished = r.status == RunStatus::complete || r.status == RunStatus::failed;
    column("id").push_back(Cell::of_count(r.id));
    column("status").push_back(Cell::of_text(r.ended_pruned() ? "pruned" : to_string(r.status)));
    const std::optional<double> reached = reached_value(r, t);
    column("value").push_back(reached ? Cell::of_number(*reached) : Cell{});
    if (res) {
      const std::size_t level = t.level.value_or(res->top());
      column("level").push_back(Cell::of_count(level));
      column("resolution." + res->parameter).push_back({Cell::Kind::number, adapters::resolution_value_text(res->values.at(level))});
      // A trial still to finish has charged what its interrupted runs ran: the column sums to the spend.
      column("cost").push_back(finished                    ? Cell::of_number(trial_cost(t, costs))
                               : t.interrupted_cost > 0.0 ? Cell::of_number(t.interrupted_cost)
                                                          : Cell{});
    }
    column("started_at").push_back(time_cell(r.started_at));
    column("finished_at").push_back(finished ? time_cell(r.finished_at) : Cell{});
    const double duration = r.exit ? r.exit->duration() : r.finished_at - r.started_at;
    column("duration").push_back(finished && r.started_at > 0 && duration >= 0 ? Cell::of_number(duration) : Cell{});
    column("attempts").push_back(Cell::of_count(r.attempts));
    column("source").push_back(Cell::of_text(t.source));
    if (any_imported) column("imported_from").push_back(t.imported() ? Cell::of_text(t.imported_from) : Cell{});
    column("external").push_back(Cell::of_bool(r.external));
    // A pruned run's reason is the rule's verdict, and its step where it stopped (the column only
    // when a run was pruned).
    const std::string& why = r.ended_pruned() ? r.pruned->reason : r.failure_reason;
    column("failure").push_back(why.empty() ? Cell{} : Cell::of_text(why));
    if (any_pruned) column("pruned_at_step").push_back(r.ended_pruned() ? Cell{Cell::Kind::number, std::to_string(r.pruned->step)} : Cell{});
    for (const Parameter& p : s.config.space.parameters()) {
      const auto it = t.config.find(p.name);
      column("param." + p.name).push_back(it == t.config.end() ? Cell{} : value_cell(it->second));
    }
    for (const std::string& name : metric_names) {
      const auto it = r.metrics.find(name);
      column("metric." + name).push_back(it == r.metrics.end() ? Cell{} : Cell::of_number(it->second));
    }
  }
  return cols;
}

std::string as_csv(const std::vector<Column>& cols, std::size_t rows) {
  std::string out;
  for (std::size_t c = 0; c < cols.size(); ++c) out += (c ? "," : "") + csv_field(Cell::of_text(cols[c].name));
  out += "\r\n";
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t c = 0; c < cols.size(); ++c) out += (c ? "," : "") + csv_field(cols[c].cells[i]);
    out += "\r\n";
  }
  return out;
}

// JSON Lines: one object per trial; parameters, metrics and the resolution's value nested under
// "config", "metrics" and "resolution", with the trial's intermediate values (which a table cannot
// hold) under "intermediate".
std::string as_jsonl(const std::vector<Column>& cols, const CampaignState& s) {
  std::string out;
  for (std::size_t i = 0; i < s.runs.size(); ++i) {
    std::string fixed, resolution, config, metrics;
    for (const Column& col : cols) {
      std::string* group = &fixed;
      std::string key = col.name;
      if (key.rfind("param.", 0) == 0) group = &config, key.erase(0, 6);
      else if (key.rfind("metric.", 0) == 0) group = &metrics, key.erase(0, 7);
      else if (key.rfind("resolution.", 0) == 0) group = &resolution, key.erase(0, 11);
      if (group != &fixed && col.cells[i].kind == Cell::Kind::empty) continue;
      *group += (group->empty() ? "" : ", ") + ("\"" + json_escape(key) + "\": ") + json_value(col.cells[i]);
    }
    std::string intermediate;
    for (const adapters::IntermediateValue& v : s.runs[i].intermediate)
      intermediate += (intermediate.empty() ? "" : ", ") + ("{\"step\": " + std::to_string(v.step) + ", \"value\": ") +
                      json_value(Cell::of_number(v.value)) + "}";
    if (!resolution.empty()) fixed += ", \"resolution\": {" + resolution + "}";
    out += "{" + fixed + ", \"config\": {" + config + "}, \"metrics\": {" + metrics + "}, \"intermediate\": [" +
           intermediate + "]}\n";
  }
  return out;
}

// Whether `output` is one of the files the campaign in `dir` keeps (state.yaml, events.jsonl, the
// locks, the tuner's pid and log) or lies in its trials/: `-o DIR/state.yaml` would replace the
// campaign's state by a table.
bool is_campaign_file(const std::filesystem::path& dir, const std::filesystem::path& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(dir, ec);
  const fs::path out = fs::weakly_canonical(output, ec);
  if (ec) return false;
  if (out.parent_path() == root &&
      std::ranges::find(campaign_files::kFiles, out.filename().string()) != campaign_files::kFiles.end())
    return true;
  const fs::path trials = root / campaign_files::kTrials;
  const auto [end, at] = std::mismatch(trials.begin(), trials.end(), out.begin(), out.end());
  return end == trials.end();
}

}  // namespace

int export_trials(const std::filesystem::path& dir, const std::string& format,
                  const std::optional<std::filesystem::path>& output) {
  if (format != "csv" && format != "jsonl") {
    std::fprintf(stderr, "tune export: unknown --format '%s'; use csv or jsonl\n", format.c_str());
    return kExitUsage;
  }
  if (!holds_campaign(dir, "export")) return kExitUsage;
  if (output && is_campaign_file(dir, *output)) {
    std::fprintf(stderr, "tune export: -o %s is a file of the campaign %s, which the table would replace; write it "
                         "elsewhere (e.g. -o trials.csv)\n", output->c_str(), dir.c_str());
    return kExitUsage;
  }
  // The table is replaced whole by a rename, which a pipe, a device or a directory cannot take: said
  // in the table's terms (the rename's message spoke of a state file, and of /proc/self/fd/pipe:[...]
  // for -o /dev/stdout). `-o -` is stdout, as usual.
  const bool to_stdout = !output || output->string() == "-";
  if (!to_stdout) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(*output, ec);
    if (!ec && fs::exists(st) && !fs::is_regular_file(st)) {
      std::fprintf(stderr, "tune export: -o %s is %s, not a regular file; name a file (written whole, atomically), or "
                           "leave out -o (or give -o -) for stdout\n",
                   output->c_str(), fs::is_directory(st) ? "a directory" : "a pipe, a socket or a device");
      return kExitUsage;
    }
  }
  const CampaignState s = load_state(dir);
  const std::vector<Column> cols = trial_table(s);
  const std::string text = format == "csv" ? as_csv(cols, s.runs.size()) : as_jsonl(cols, s);
  if (to_stdout) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitComplete;
  }
  write_file_atomically(*output, text);  // a half-written table is never left where one was
  std::fprintf(stderr, "tune export: %zu trials written to %s\n", s.runs.size(), output->c_str());
  return kExitComplete;
}

}  // namespace tune::tuner
