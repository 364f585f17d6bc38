#pragma once
// Text from outside (a parser's message quoting a byte of a damaged file, a trainer's output) made
// safe to print in a one-line message: a damaged record's raw bytes reached the terminal as they were.
#include <string>
#include <string_view>

namespace tune {

// `text` with every control character and every byte that is not part of valid UTF-8 written as
// \xNN; printable ASCII and well-formed UTF-8 (a non-ASCII parameter name) are kept as they are.
std::string printable_text(std::string_view text);

}  // namespace tune
