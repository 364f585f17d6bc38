// Reading what a trial left in its files: the whole of a (possibly huge) stdout, or the tail of a log
// whose last line says why the trial failed.
#pragma once

#include <cstddef>
#include <filesystem>
#include <limits>
#include <string>

namespace tune::adapters {

// The file's last `last_bytes` bytes (all of them by default), with room reserved for `extra` more: a
// trial's stdout can be hundreds of MB (a 400 MB line made the tuner peak at 788 MB when a stream's
// buffer and its copy, then `+ "\n"`, each held it). Empty if the file is missing or empty.
std::string read_file(const std::filesystem::path& path, std::size_t extra = 0,
                      std::size_t last_bytes = std::numeric_limits<std::size_t>::max());

// The last line of `text` that is not blank, trimmed, shortened to 200 characters and "..." (it goes
// into a failure reason, printed on one line of `tune status`); empty if there is none.
std::string last_line(const std::string& text);

// How much of a trial's log is read for its last line or its latest value: bounded whatever the
// trainer logs.
inline constexpr std::size_t kTailBytes = 64 * 1024;

// The last line of the file's last kTailBytes, as last_line says.
std::string last_line_of_file(const std::filesystem::path& path);

}  // namespace tune::adapters
