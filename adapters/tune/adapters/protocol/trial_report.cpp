// parse_trial_output: one pass over stdout, line by line, with string_views (no regex, no copies of
// lines). Each line (or the result file) becomes a Record; Records are folded into a Source (stdout
// or the result file), and the two Sources are resolved into the TrialReport at the end.
//
// Line forms, tried in this order on the trimmed line:
//   {...}                                    a JSON object (flat objects by a small fast path;
//                                            anything else by yaml-cpp)
//   Result for SMAC: STATUS, runtime, runlength, quality[, seed[, ...]]
//   Result of this algorithm run: ...         (also "Result for ParamILS:"; the remainder may also
//                                            be a JSON object, as GenericWrapper4AC prints it)
//   key=value[; key=value, key = value ...]  every token must be a pair, every value a number
//                                            (or a word for `status`); otherwise the whole line
//                                            is ignored ("objective=0.9abc", "Epoch 3: loss=1")
//
// A line is read whole or not at all. Bytes that are not UTF-8 before `val_acc=0.9` make the line
// unreadable like any other prefix: where the garbage ends cannot be told safely (is "Epoch 3:" or a
// mangled progress bar garbage?), and taking the pair after it would also take `loss=1` from
// "Epoch 3: loss=1", which is not a report. Instead, when no value is found, the report says which
// line named the objective (or looked like a JSON object) and why it was not read.
#include "tune/adapters/protocol/trial_report.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>

#include "tune/io/number_text.hpp"
#include "tune/io/printable_text.hpp"
#include "tune/io/yaml_values.hpp"
#include "tune/study/study.hpp"  // kMaxObjectiveMagnitude

namespace tune::adapters {
namespace {

constexpr std::size_t kMaxLineBytes = 64 * 1024;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
bool is_ascii_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_key_start(char c) { return is_ascii_alpha(c) || c == '_'; }
// '/' for the names TensorBoard and Ray Tune users give metrics (eval/loss).
bool is_key_char(char c) { return is_key_start(c) || is_ascii_digit(c) || c == '.' || c == '-' || c == '/'; }

// Whether `name` can be reported as name=value: a key the key=value form reads.
bool is_pair_key(std::string_view name) {
  if (name.empty() || !is_key_start(name.front())) return false;
  for (const char c : name)
    if (!is_key_char(c)) return false;
  return true;
}

// The line without ANSI escape sequences (colours, bold, cursor moves of loguru, rich or tqdm):
// ESC '[' parameters, then a final byte in @..~; ESC and one other byte for the short forms.
std::string without_ansi_escapes(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\x1b') {
      out += line[i];
      continue;
    }
    if (i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && !(line[i] >= '@' && line[i] <= '~')) ++i;
    } else {
      ++i;
    }
  }
  return out;
}
char ascii_upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_upper(a[i]) != ascii_upper(b[i])) return false;
  }
  return true;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

// The offset of the first byte of `s` that is not part of well-formed UTF-8 (overlong forms,
// surrogates, anything above U+10FFFF), or npos.
std::size_t first_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (n - i < len) return i;
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    if (c1 < lo || c1 > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      const auto ck = static_cast<unsigned char>(s[i + k]);
      if (ck < 0x80 || ck > 0xBF) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

bool valid_utf8(std::string_view s) { return first_invalid_utf8(s) == std::string_view::npos; }

std::string describe_non_finite(double v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

// A reported value as a message quotes it: a number as format_double writes it, a non-finite one as
// a trainer prints it (nan, inf), not in YAML's spelling (.nan).
std::string value_text(double v) { return std::isfinite(v) ? format_double(v) : describe_non_finite(v); }

// SMAC's run statuses (classic SMAC and SMAC3 spellings) and the generic FAIL/FAILED.
enum class StatusKind { unknown, success, failure };

StatusKind classify_status(std::string_view word) {
  for (const std::string_view s : {"SUCCESS", "SAT", "UNSAT"}) {
    if (iequals(word, s)) return StatusKind::success;
  }
  for (const std::string_view s :
       {"CRASHED", "TIMEOUT", "ABORT", "MEMOUT", "MEMORYOUT", "FAIL", "FAILED"}) {
    if (iequals(word, s)) return StatusKind::failure;
  }
  return StatusKind::unknown;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_upper(c);
  return out;
}

// What one line, one JSON object or the result file reported.
struct Record {
  std::optional<double> named;    // options.objective_name
  std::optional<double> generic;  // "objective"
  std::optional<double> cost;     // SMAC's cost (or quality)
  std::optional<double> step;
  std::optional<std::string> status;  // upper case; only statuses we know
  std::vector<std::pair<std::string, double>> metrics;
  // The objective's key and its text, when that text is not a number.
  std::optional<std::pair<std::string, std::string>> unreadable_objective;

  void clear() {
    unreadable_objective.reset();
    named.reset();
    generic.reset();
    cost.reset();
    step.reset();
    status.reset();
    metrics.clear();
  }
};

// Stores key = text in the record. `strict` (key=value lines): a value that cannot be read fails
// the whole line (returns false). Otherwise (JSON/YAML): such a value is skipped.
bool set_value(Record& r, std::string_view key, std::string_view text,
               const ProtocolOptions& options, bool strict) {
  if (key == "status" && key != options.objective_name) {
    bool word = !text.empty();
    for (const char c : text) word = word && (is_ascii_alpha(c) || c == '_');
    if (!word) return !strict;
    if (classify_status(text) != StatusKind::unknown) r.status = upper(text);
    return true;
  }
  const std::optional<double> value = parse_number_text(text);
  if (!value) {
    if (key == options.objective_name || key == "objective") r.unreadable_objective.emplace(key, text);
    return !strict;
  }
  if (key == options.objective_name) {
    r.named = value;
  } else if (key == "objective") {
    r.generic = value;
  } else if (key == "step") {
    r.step = value;
  } else if (key == "cost") {
    r.cost = value;
  } else {
    r.metrics.emplace_back(std::string(key), *value);
  }
  return true;
}

// key=value pairs separated by ';', ',' or blanks, with optional blanks around '='.
bool parse_pairs(std::string_view line, Record& r, const ProtocolOptions& options) {
  const auto is_separator = [](char c) { return c == ';' || c == ',' || is_blank(c); };
  const std::size_t n = line.size();
  std::size_t i = 0;
  bool any = false;
  for (;;) {
    while (i < n && is_separator(line[i])) ++i;
    if (i == n) break;
    if (!is_key_start(line[i])) return false;
    const std::size_t key_begin = i;
    while (i < n && is_key_char(line[i])) ++i;
    const std::string_view key = line.substr(key_begin, i - key_begin);
    while (i < n && is_blank(line[i])) ++i;
    if (i == n || line[i] != '=') return false;
    ++i;
    while (i < n && is_blank(line[i])) ++i;
    const std::size_t value_begin = i;
    while (i < n && !is_separator(line[i])) ++i;
    const std::string_view value = line.substr(value_begin, i - value_begin);
    if (value.empty() || !set_value(r, key, value, options, /*strict=*/true)) return false;
    any = true;
  }
  return any;
}

// Numeric (and status) scalars of a mapping; nested values, non-scalar keys and keys that are not
// UTF-8 text are skipped.
void take_mapping(const YAML::Node& map, Record& r, const ProtocolOptions& options) {
  for (const auto& entry : map) {
    if (!entry.first.IsScalar() || !entry.second.IsScalar()) continue;
    const std::string& key = entry.first.Scalar();
    if (key.empty() || !valid_utf8(key)) continue;
    set_value(r, key, trim(entry.second.Scalar()), options, /*strict=*/false);
  }
}

enum class FastJson { parsed, unsupported };

// The common case of a JSON line, as json.dumps writes it: a flat object of "key": number / "string"
// / true / false / null, strings without escapes. yaml-cpp takes ~13 us per such line, which is
// seconds for a trial that logs every step as JSON; this reads it in a fraction of that. Anything
// else (nesting, escapes, unquoted keys, YAML-only syntax) is left to yaml-cpp, so the two agree on
// what they both accept.
FastJson parse_flat_json(std::string_view s, Record& r, const ProtocolOptions& options) {
  const std::size_t n = s.size();
  std::size_t i = 1;  // after '{'
  const auto skip_blanks = [&] {
    while (i < n && (s[i] == ' ' || s[i] == '\t')) ++i;
  };
  const auto read_string = [&](std::string_view& out) {
    // at '"'
    const std::size_t begin = ++i;
    while (i < n && s[i] != '"') {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c == '\\' || c < 0x20) return false;
      ++i;
    }
    if (i == n) return false;
    out = s.substr(begin, i - begin);
    ++i;
    return true;
  };
  skip_blanks();
  if (i < n && s[i] == '}') return ++i == n ? FastJson::parsed : FastJson::unsupported;
  for (;;) {
    skip_blanks();
    std::string_view key;
    if (i == n || s[i] != '"' || !read_string(key)) return FastJson::unsupported;
    skip_blanks();
    if (i == n || s[i] != ':') return FastJson::unsupported;
    ++i;
    skip_blanks();
    if (i == n) return FastJson::unsupported;
    std::string_view value;
    if (s[i] == '"') {
      if (!read_string(value)) return FastJson::unsupported;
    } else {
      const std::size_t begin = i;
      while (i < n && s[i] != ',' && s[i] != '}' && s[i] != ' ' && s[i] != '\t') ++i;
      value = s.substr(begin, i - begin);
      if (!(parse_number_text(value) || value == "true" || value == "false" || value == "null")) {
        return FastJson::unsupported;
      }
    }
    if (!key.empty() && valid_utf8(key)) set_value(r, key, trim(value), options, /*strict=*/false);
    skip_blanks();
    if (i == n) return FastJson::unsupported;
    if (s[i] == ',') {
      ++i;
      continue;
    }
    if (s[i] == '}' && i + 1 == n) return FastJson::parsed;
    return FastJson::unsupported;
  }
}

// A JSON object on one line (`s` starts with '{' and ends with '}'). False if it cannot be read.
bool parse_json_object(std::string_view s, Record& r, const ProtocolOptions& options) {
  if (parse_flat_json(s, r, options) == FastJson::parsed) return true;
  r.clear();
  try {
    // LoadAll, not Load: Load stops after the first node and would accept `{"a": 1} junk`.
    const std::vector<YAML::Node> docs = YAML::LoadAll(std::string(s));
    if (docs.size() != 1 || !docs.front().IsMap()) return false;
    take_mapping(docs.front(), r, options);
    return true;
  } catch (const YAML::Exception&) {
    r.clear();
    return false;
  }
}

// SMAC's classic result line. False if `line` is not one (or is malformed).
bool parse_smac_line(std::string_view line, Record& r, const ProtocolOptions& options) {
  std::string_view rest;
  for (const std::string_view prefix :
       {"Result of this algorithm run:", "Result for SMAC:", "Result for ParamILS:"}) {
    if (istarts_with(line, prefix)) {
      rest = trim(line.substr(prefix.size()));
      break;
    }
  }
  if (rest.empty()) return false;
  if (rest.front() == '{' && rest.back() == '}') {
    return valid_utf8(rest) && parse_json_object(rest, r, options);
  }
  // STATUS, runtime, runlength, quality[, seed[, additional run data]]
  std::string_view fields[4];
  for (std::size_t k = 0; k < 4; ++k) {
    const std::size_t comma = rest.find(',');
    if (comma == std::string_view::npos && k < 3) return false;
    fields[k] = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  if (classify_status(fields[0]) == StatusKind::unknown) return false;
  const auto runtime = parse_number_text(fields[1]);
  const auto runlength = parse_number_text(fields[2]);
  const auto quality = parse_number_text(fields[3]);
  if (!runtime || !runlength || !quality) return false;
  r.status = upper(fields[0]);
  r.cost = quality;
  r.metrics.emplace_back("runtime", *runtime);
  r.metrics.emplace_back("runlength", *runlength);
  return true;
}

// [-2^63, 2^63) and whole: the doubles that convert to int64 exactly.
bool whole_step(double s) { return s >= -9223372036854775808.0 && s < 9223372036854775808.0 && std::trunc(s) == s; }

// What stdout, or the result file, reported over all its records.
struct Source {
  std::optional<double> value;  // last objective reported without a step
  std::optional<double> cost;   // last cost reported without a step
  std::vector<IntermediateValue> value_steps;
  std::vector<IntermediateValue> cost_steps;
  std::optional<std::string> status;

  // Folds a record in (metrics go straight to the report: later wins). A record whose step is not
  // an integer is ignored as a whole (returns false).
  bool take(const Record& r, std::map<std::string, double>& metrics) {
    std::optional<std::int64_t> step;
    if (r.step) {
      if (!whole_step(*r.step)) return false;
      step = static_cast<std::int64_t>(*r.step);
    }
    const std::optional<double> v = r.named ? r.named : r.generic;
    if (v) {
      if (step) {
        value_steps.push_back({*step, *v});
      } else {
        value = v;
      }
    }
    if (r.cost) {
      if (step) {
        cost_steps.push_back({*step, *r.cost});
      } else {
        cost = r.cost;
      }
    }
    if (r.status) status = r.status;
    for (const auto& [key, metric] : r.metrics) metrics[key] = metric;
    return true;
  }

  // The objective of this source: from the objective key if it was ever reported, else from cost;
  // the last value without a step, else the last intermediate one. Moves the intermediate values
  // of the chosen key to `intermediate`.
  std::optional<double> resolve(std::vector<IntermediateValue>& intermediate) {
    const bool by_objective = value || !value_steps.empty();
    std::optional<double>& final_value = by_objective ? value : cost;
    std::vector<IntermediateValue>& steps = by_objective ? value_steps : cost_steps;
    std::optional<double> result = final_value;
    if (!result && !steps.empty()) result = steps.back().value;
    intermediate.insert(intermediate.end(), steps.begin(), steps.end());
    return result;
  }
};

// At most `limit` bytes of `s` for an error message, as printable_text writes them: well-formed
// UTF-8 as it is (an objective named 'é' was quoted as '??'), other bytes as \xNN.
std::string excerpt(std::string_view s, std::size_t limit = 60) {
  std::string out = printable_text(s.substr(0, limit));
  if (s.size() > limit) out += "...";
  return out;
}

// The message for an objective whose value is not a number, `where` the record came from.
std::string unreadable_message(const std::pair<std::string, std::string>& key_and_text, const std::string& where) {
  const std::string value = "the value '" + excerpt(key_and_text.second) + "' for " + excerpt(key_and_text.first);
  // Said as bytes before the key are (why_unread): "0.9\xFF is not a number" hid what to fix.
  if (const std::size_t bad = first_invalid_utf8(key_and_text.second); bad != std::string_view::npos)
    return value + " holds bytes that are not UTF-8 (the first is byte " + std::to_string(bad + 1) +
           " of the value), so it is not a number; " +
           (where == "result file" ? "write the value alone as a number" : "end the report's line right after the value") +
           " (" + where + ")";
  return value + " is not a number (" + where + ")";
}

// Whether `line` holds `key` as a word of its own (not inside val_loss when the key is loss).
bool names_key(std::string_view line, std::string_view key) {
  for (std::size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
    const bool starts = at == 0 || !is_key_char(line[at - 1]);
    const bool ends = at + key.size() == line.size() || !is_key_char(line[at + key.size()]);
    if (starts && ends) return true;
  }
  return false;
}

// A stdout line that was not read, kept in case no value is found: the failure reason then says
// why the line that (probably) meant to report it was not read.
struct UnreadLine {
  std::string_view text;  // as printed (a trailing '\r' removed)
  std::size_t number = 0;
};

// Why a line was not read, for a failure reason: "stdout line 3 looks like a JSON object but does not
// parse (...): '{"val_acc": 0.9'". Only called for the one line a failure reason quotes.
std::string why_unread(const UnreadLine& line, const ProtocolOptions& options) {
  const std::string where = "stdout line " + std::to_string(line.number);
  const std::string quoted = ": '" + excerpt(line.text, 100) + "'";
  if (const std::size_t bad = first_invalid_utf8(line.text); bad != std::string_view::npos)
    return where + " holds bytes that are not UTF-8 (the first is byte " + std::to_string(bad + 1) +
           ") and was not read; print the report on a line of its own" + quoted;
  const std::string_view trimmed = trim(line.text);
  Record record;
  const bool parsed = trimmed.front() == '{' ? trimmed.back() == '}' && parse_json_object(trimmed, record, options)
                                             : parse_pairs(trimmed, record, options);
  if (parsed && record.step && !whole_step(*record.step))
    return where + " gives step=" + format_double(*record.step) +
           ", which is not a whole number of at most 19 digits, and was not read (a step counts epochs or "
           "iterations, e.g. step=3)" + quoted;
  if (trimmed.front() != '{') {
    const std::string key = names_key(trimmed, options.objective_name) ? options.objective_name : "objective";
    if (!is_pair_key(key))
      return where + " names " + key + ", a name the key=value form cannot carry (only letters, digits and _ . - /, " +
             "starting with a letter or _): report it in a JSON object line, e.g. {\"" + key +
             "\": 0.93}, or in the result file" + quoted;
    return where + " names " + key + " but is not a report line (one holds only key=value pairs, each value a " +
           "number, e.g. " + key + "=0.93)" + quoted;
  }
  std::string problem;
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(std::string(trimmed));
    if (docs.size() != 1) problem = "text follows the object";
    else if (!docs.front().IsMap()) problem = "it is not an object";
    else problem = "text follows the closing '}'";
  } catch (const YAML::Exception& e) {
    problem = printable_text(e.msg) + (e.mark.is_null() ? "" : " at column " + std::to_string(e.mark.column + 1));
  }
  if (trimmed.back() != '}') problem += "; a JSON report is one object on one line, closed by '}'";
  return where + " looks like a JSON object but does not parse (" + problem + ")" + quoted;
}

// The path ("metrics" or "eval.metrics") of the first map nested in `node` that holds `key`, or "".
std::string nested_path_of(const YAML::Node& node, const std::string& key) {
  if (!node.IsMap()) return "";
  for (const auto& kv : node) {
    if (!kv.second.IsMap()) continue;
    const std::string name = kv.first.Scalar();
    if (kv.second[key]) return name;
    if (std::string deeper = nested_path_of(kv.second, key); !deeper.empty()) return name + "." + deeper;
  }
  return "";
}

// Why a JSON object line that was read did not report the objective it names: it holds it only in
// a nested object ({"metrics": {"val_acc": 0.9}}). Empty if it does not.
std::string why_nested(const UnreadLine& line, const ProtocolOptions& options) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(trim(line.text)));
  } catch (const YAML::Exception&) {
    return "";
  }
  for (const std::string& key : {options.objective_name, std::string("objective")}) {
    const std::string path = nested_path_of(root, key);
    if (!path.empty())
      return "stdout line " + std::to_string(line.number) + " is a JSON object that holds " + key + " only inside '" +
             path + "'; a report has it at the top level, e.g. {\"" + key + "\": 0.93}: '" + excerpt(line.text, 100) + "'";
  }
  return "";
}

// Returns whether the line was read as a report.
bool parse_line(std::string_view line, std::size_t line_number, Record& r, Source& source, TrialReport& report,
                const ProtocolOptions& options) {
  line = trim(line);
  if (line.empty()) return false;
  r.clear();
  bool ok = false;
  if (line.front() == '{') {
    ok = line.back() == '}' && valid_utf8(line) && parse_json_object(line, r, options);
  } else if (line.front() == 'R' || line.front() == 'r') {
    ok = parse_smac_line(line, r, options);
    if (!ok) {
      r.clear();
      ok = parse_pairs(line, r, options);
    }
  } else {
    ok = parse_pairs(line, r, options);
  }
  if (ok && !source.take(r, report.metrics)) ok = false;  // a step that is not whole: why_unread says so
  if (r.unreadable_objective) {
    report.unreadable_objective = unreadable_message(
        *r.unreadable_objective, "stdout line " + std::to_string(line_number) + ": '" + excerpt(line, 100) + "'");
  }
  return ok || r.unreadable_objective.has_value();  // an unreadable value has its own message
}

// Returns, when the file names the objective but gives it no number (a word, null, a list), why:
// the file wins over stdout, so its failure must not fall back to a value stdout printed earlier.
std::optional<std::string> parse_result_file(const std::string& text, Source& source, TrialReport& report,
                                             const ProtocolOptions& options) {
  const std::string prefix = "result file: expected a mapping such as {objective: 0.93}, found ";
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    std::string where;
    if (!e.mark.is_null()) {
      where = "line " + std::to_string(e.mark.line + 1) + ", column " +
              std::to_string(e.mark.column + 1) + ": ";
    }
    throw std::invalid_argument(prefix + "text that is not valid YAML or JSON (" + where + printable_text(e.msg) +
                                ")");
  }
  if (docs.size() > 1) {
    throw std::invalid_argument(prefix + std::to_string(docs.size()) + " YAML documents");
  }
  const YAML::Node doc = docs.empty() ? YAML::Node() : docs.front();
  if (doc.IsNull()) throw std::invalid_argument(prefix + "an empty (null) document");
  if (doc.IsSequence()) throw std::invalid_argument(prefix + "a sequence");
  if (doc.IsScalar()) {
    throw std::invalid_argument(prefix + "the scalar \"" + excerpt(doc.Scalar()) + "\"");
  }
  if (!doc.IsMap()) throw std::invalid_argument(prefix + "something that is not a mapping");
  Record r;
  take_mapping(doc, r, options);
  source.take(r, report.metrics);
  if (r.unreadable_objective) return unreadable_message(*r.unreadable_objective, "result file");
  if (r.named || r.generic) return std::nullopt;
  for (const std::string& key : {options.objective_name, std::string("objective")}) {
    const YAML::Node value = doc[key];
    if (!value || value.IsScalar()) continue;
    if (value.IsNull()) return "the result file gives " + excerpt(key) + " no value (null)";
    YAML::Emitter flow;
    flow << YAML::Flow << value;
    return unreadable_message({key, flow.c_str()}, "result file");
  }
  return std::nullopt;
}

bool only_whitespace(std::string_view s) {
  for (const char c : s) {
    if (!is_blank(c) && c != '\n') return false;
  }
  return true;
}

}  // namespace

TrialReport parse_trial_output(const std::string& stdout_text, const std::string& result_file_text,
                               const ProtocolOptions& options) {
  TrialReport report;
  Source out;
  Source file;
  Record record;

  std::string_view text(stdout_text);
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte order mark
  // The last unread lines that may have meant to report the objective, most telling first: a JSON
  // object line naming it, any other line naming it, a JSON object line naming nothing we know.
  std::optional<UnreadLine> json_naming, naming, json_other;
  std::optional<UnreadLine> json_nested;  // a JSON object read, naming the objective but not reporting it
  std::size_t pos = 0;
  for (std::size_t line_number = 1;; ++line_number) {
    const std::size_t newline = text.find('\n', pos);
    if (newline == std::string_view::npos) break;  // an unterminated last line is not complete
    std::string_view line = text.substr(pos, newline - pos);
    pos = newline + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > kMaxLineBytes) continue;
    std::string plain;  // a coloured report line (logging libraries) is read as its text
    if (line.find('\x1b') != std::string_view::npos) line = plain = without_ansi_escapes(line);
    const std::string_view trimmed = trim(line);
    if (parse_line(line, line_number, record, out, report, options)) {
      if (trimmed.front() == '{' && !record.named && !record.generic &&
          (names_key(trimmed, options.objective_name) || names_key(trimmed, "objective")))
        json_nested = UnreadLine{line, line_number};
      continue;
    }
    if (trimmed.empty()) continue;
    const bool json = trimmed.front() == '{';
    if (names_key(trimmed, options.objective_name) || names_key(trimmed, "objective"))
      (json ? json_naming : naming) = UnreadLine{line, line_number};
    else if (json)
      json_other = UnreadLine{line, line_number};
  }

  std::optional<std::string> file_unreadable;
  if (!only_whitespace(result_file_text)) file_unreadable = parse_result_file(result_file_text, file, report, options);

  report.stdout_objective_steps = out.value_steps;
  const std::optional<double> from_stdout = out.resolve(report.intermediate);
  const std::optional<double> from_file = file.resolve(report.intermediate);
  report.objective = from_file ? from_file : file_unreadable ? std::nullopt : from_stdout;
  if (!from_file && file_unreadable) report.unreadable_objective = file_unreadable;
  if (!report.objective) {
    if (json_nested) report.unread_line = why_nested(*json_nested, options);
    const std::optional<UnreadLine>& unread = json_naming ? json_naming : naming ? naming : json_other;
    if (unread && (!report.unread_line || report.unread_line->empty())) report.unread_line = why_unread(*unread, options);
    if (report.unread_line && report.unread_line->empty()) report.unread_line.reset();
    // LOSS=0.5 for an objective named loss is kept as the metric LOSS: say so rather than "no line".
    if (!report.unread_line)
      for (const auto& [key, value] : report.metrics)
        if (key != options.objective_name && iequals(key, options.objective_name)) {
          report.unread_line = "the metric " + key + "=" + value_text(value) + " was reported, but the objective is " +
                               options.objective_name + " (names are case-sensitive)";
          break;
        }
    // val_acc=0.9 read well, but the objective has another name (the inline form's default is
    // `objective`): name what was reported and the fix rather than "expected a line".
    if (!report.unread_line && !report.metrics.empty()) {
      std::string reported;
      for (const auto& [key, value] : report.metrics)
        reported += (reported.empty() ? "" : ", ") + key + "=" + value_text(value);
      const std::string& first = report.metrics.begin()->first;
      report.unread_line = "the trial reported " + reported + ", but not the objective '" + options.objective_name +
                           "'; if " + first + " is the objective, name it in the campaign (objective: {name: " + first +
                           "}, or --objective " + first + " in the inline form), or print " + options.objective_name +
                           "=<value>";
    }
  }

  const std::optional<std::string>& status = file.status ? file.status : out.status;
  if (status && classify_status(*status) == StatusKind::failure) {
    report.failure = "the trial reported status " + *status;
  } else if (report.objective && !std::isfinite(*report.objective)) {
    report.failure = "the objective is not a finite number (" +
                     describe_non_finite(*report.objective) + ")";
  } else if (report.objective && std::abs(*report.objective) > kMaxObjectiveMagnitude) {
    // A sentinel of a diverged run (DBL_MAX, 1e300), which the models cannot compute with.
    report.failure = "the objective " + format_double(*report.objective) + " is beyond +-" +
                     format_double(kMaxObjectiveMagnitude) +
                     ", which the models cannot compute with: a diverged run? (else rescale the objective, e.g. "
                     "report its logarithm)";
  }
  return report;
}

}  // namespace tune::adapters
