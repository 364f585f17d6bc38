#pragma once
// What a trial reported, parsed from its stdout and its result file. The protocols, all accepted at
// once (later lines win over earlier ones, the result file over stdout):
//   objective=0.93                 or <objective name>=<value>  (one per line, spaces allowed around '=')
//   {"objective": 0.93, "loss": 0.1, "step": 3}   a JSON object on one line
//   cost=0.07; status=SUCCESS       SMAC's form (cost is minimised: objective = cost as reported;
//                                   status CRASHED/TIMEOUT/ABORT/MEMOUT marks the trial failed)
//   a JSON or YAML mapping in the file $TUNE_RESULT_FILE, same keys as the JSON line
// A line (or JSON object) that carries a `step` together with a value is an intermediate value,
// kept in `intermediate`; the final value is the last one reported without a step, or, if none, the
// last intermediate one.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tune/study/learning_curve.hpp"

namespace tune::adapters {

// The engine's own record of a value reported with a step, so that a trial's curve goes to the
// pruning rule as it was read.
using IntermediateValue = tune::CurvePoint;

struct TrialReport {
  std::optional<double> objective;             // the value of the objective, if reported
  std::vector<IntermediateValue> intermediate; // in the order reported
  std::map<std::string, double> metrics;       // every other numeric key=value reported
  std::optional<std::string> failure;          // the trial said it failed (SMAC status), or the value is non-finite
  // The last line (or result-file entry) that gave the objective a value that is not a number, e.g.
  // "the value 'abc' for val_acc is not a number (stdout line 3: 'val_acc=abc')": why a trial that
  // reported no value failed, more useful than "no value reported". Such a line is still ignored.
  std::optional<std::string> unreadable_objective;
  // When no value was found: the last stdout line that looks as if it meant to report one but was not
  // read, and why, e.g. "stdout line 3 looks like a JSON object but does not parse (end of map flow
  // not found at column 1; ...): '{"val_acc": 0.9'", or "stdout line 2 holds bytes that are not
  // UTF-8 (...)". A JSON-looking line or one naming the objective (or `objective`) qualifies.
  std::optional<std::string> unread_line;
  // Stdout's values of the objective key itself with a step, whether or not `intermediate` took
  // cost's instead (no line named the objective): for a reader that sees stdout in pieces
  // (IntermediateFollower), to which a piece without the objective is no sign of a trial that
  // reports only cost.
  std::vector<IntermediateValue> stdout_objective_steps;
};

struct ProtocolOptions {
  std::string objective_name = "objective";  // the key that carries the objective (also accepted: "objective")
};

// Parses stdout text (any size; only complete lines are considered; lines longer than 64 KiB and
// lines with bytes that are not UTF-8 are skipped whole, even when a key=value pair follows the
// garbage: see trial_report.cpp) and, if non-empty, the result file's content. Never throws on
// malformed trial output: what cannot be read is ignored. Throws std::invalid_argument only for a
// result file that is present but is not a JSON/YAML mapping (the message says what was found).
TrialReport parse_trial_output(const std::string& stdout_text, const std::string& result_file_text,
                               const ProtocolOptions& options);

}  // namespace tune::adapters
