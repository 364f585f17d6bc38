#pragma once
// Atomic replacement of a file: write a temporary file in the same directory, fsync it, rename it
// over the target, fsync the directory. A crash at any instant leaves either the old or the new
// content, never a mix.
#include <filesystem>
#include <string_view>

namespace tune {

void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace tune
