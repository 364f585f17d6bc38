#pragma once
// Atomic replacement of a file: write a temporary file in the same directory, fsync it, rename it
// over the target, fsync the directory. A crash at any instant leaves either the old or the new
// content, never a mix. A symbolic link is followed (its target is replaced, the link stays), the
// new file keeps the old one's permissions, and a path that is not a regular file (a device, a
// FIFO) is refused with std::runtime_error.
#include <filesystem>
#include <string_view>

namespace tune {

void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// Removes the temporary files (`path`.tmp.PID) that write_file_atomically(path, ...) left when its
// process was killed between creating one and renaming it: each such kill -9 left one more, and
// nothing else ever removed them. Only for a caller that alone writes `path` (it holds the lock every
// writer of it takes), so none of them is being written now; one whose process is alive is kept
// all the same.
void remove_leftover_temporaries(const std::filesystem::path& path);

}  // namespace tune
