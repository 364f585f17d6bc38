// `tune init FILE`: writes an example campaign file to start from.
#include <cstdio>

#include "tune/io/atomic_file.hpp"
#include "tuner/cli/commands.hpp"

namespace tune::tuner {

int init(const std::filesystem::path& file) {
  // A directory "exists" too, but "not overwriting it" told the user of `tune init DIR` nothing.
  if (std::error_code ec; std::filesystem::is_directory(file, ec)) {
    std::fprintf(stderr, "tune init: %s is a directory; give the file to write, e.g. %s\n", file.c_str(),
                 (file / "campaign.yaml").c_str());
    return kExitError;
  }
  if (std::filesystem::exists(file)) {
    std::fprintf(stderr, "tune init: %s exists; not overwriting it\n", file.c_str());
    return kExitError;
  }
  write_file_atomically(file, example_campaign_text(file.string()));
  std::printf("wrote %s; edit it, then run: tune run %s\n", file.c_str(), file.c_str());
  return kExitComplete;
}

}  // namespace tune::tuner
