#pragma once
// A number as a person or a program writes it in text: the one syntax of the trial protocol
// (`objective=0.93`), tune tell, tune enqueue and the inline form's priors, which had three parsers
// and drifted (tune tell took 0x10 for 16 and +-5 for -5; the protocol refused both).
#include <optional>
#include <string_view>

namespace tune {

// The whole of `text` as std::from_chars reads a decimal (general format: no hex, no blanks; nan,
// inf and infinity in any case), with one optional leading '+' before a digit or a '.', and YAML's
// .nan, .inf, +.inf, -.inf. A value beyond the range of a double is +-inf (1e999) or 0 or a
// subnormal (1e-400), as strtod gives it. nullopt if it is not a number.
std::optional<double> parse_number_text(std::string_view text);

}  // namespace tune
