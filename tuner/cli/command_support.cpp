#include "tuner/cli/command_support.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tune/adapters/command/command_template.hpp"
#include "tune/io/number_text.hpp"
#include "tuner/campaign/campaign_files.hpp"
#include "tuner/campaign/campaign_state.hpp"
#include "tuner/campaign/event_log.hpp"
#include "tuner/cli/commands.hpp"

namespace tune::tuner {

// DIR's lock, for a command that changes the campaign: ask, tell, and any command creating one. It
// waits its turn behind other such commands (parallel workers telling results), but not behind a
// tuner, which holds the campaign for its whole session.
std::optional<CampaignLock> lock_campaign(const std::filesystem::path& dir, const char* command) {
  CampaignLock::Refusal refusal;
  auto lock = CampaignLock::acquire(dir, CampaignLock::Role::command, "tune " + std::string(command), &refusal);
  if (lock) return lock;
  std::fprintf(stderr, "tune %s: %s\n", command, refusal.text(dir).c_str());
  return lock;
}

std::string level_value(const Resolution& resolution, std::size_t level) {
  return adapters::resolution_value_text(resolution.values.at(level));
}

std::string config_json(const Space& space, const Config& c) {
  std::string s;
  for (const Parameter& p : space.parameters()) {
    const auto it = c.find(p.name);
    if (it == c.end()) continue;
    s += (s.empty() ? "" : ", ") + std::string("\"") + json_escape(p.name) + "\": ";
    if (std::holds_alternative<std::string>(it->second)) s += "\"" + json_escape(std::get<std::string>(it->second)) + "\"";
    else s += tune::to_string(it->second);
  }
  return "{" + s + "}";
}

bool refused_as_a_campaigns_state(const std::filesystem::path& file, const char* command, const char* suggested) {
  const std::filesystem::path dir = file.parent_path().empty() ? "." : file.parent_path();
  if (file.filename() != campaign_files::kState || !has_state(dir)) return false;
  std::fprintf(stderr, "tune %s: %s is the state of the campaign in %s, not a campaign file: 'tune %s %s'\n", command,
               file.c_str(), dir.c_str(), suggested, dir.c_str());
  return true;
}

bool refused_as_a_campaigns_file(const std::filesystem::path& file, const char* command) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return false;
  for (std::filesystem::path up = file.parent_path(); !up.empty(); up = up.parent_path()) {
    if (has_state(up)) {
      std::fprintf(stderr, "tune %s: %s is a file of the campaign in %s; give that directory: 'tune %s %s'\n", command,
                   file.c_str(), up.c_str(), command, up.c_str());
      return true;
    }
    if (up == up.parent_path()) break;
  }
  return false;
}

// Every command but run and init works on an existing campaign. Without DIR/state.yaml there is
// nothing damaged to restore: the directory is simply not a campaign, which is a usage error.
bool holds_campaign(const std::filesystem::path& dir, const char* command) {
  if (has_state(dir)) return true;
  std::error_code ec;
  const char* what = !std::filesystem::exists(dir, ec)       ? "does not exist"
                     : !std::filesystem::is_directory(dir, ec) ? "is not a directory"
                                                               : "holds no campaign (no state.yaml)";
  const bool ask = std::string(command) == "ask";
  // A file inside a campaign's directory (its state.yaml, a trial's record): that directory. Told to
  // `tune run` the file, the user met "unknown key 'kind'" of a state read as a campaign file.
  if (refused_as_a_campaigns_file(dir, command)) return false;
  // `tune resume c.yaml`: the campaign file, not its directory. Running the file continues it.
  if (std::filesystem::is_regular_file(dir, ec) && std::string(command) != "ask") {
    std::fprintf(stderr,
                 "tune %s: %s is a file, not a campaign directory: give the directory its campaign runs in (./<name>, "
                 "or tune run's --dir); 'tune run %s' runs the campaign it defines, or continues it there with the "
                 "file's run settings and budget\n",
                 command, dir.c_str(), dir.c_str());
    return false;
  }
  std::fprintf(stderr,
               "tune %s: %s %s; give the directory of a campaign (the one 'tune run' created: ./<name>, or its "
               "--dir), or start one with 'tune run CAMPAIGN.yaml'%s ('tune init' writes an example)\n",
               command, dir.c_str(), what,
               ask ? " or, to run its trials yourself, 'tune ask CAMPAIGN.yaml'" : "");
  return false;
}

std::optional<double> parse_number(const std::string& text, std::string& problem) {
  // The trial protocol's syntax (tune/io/number_text.hpp; nan and inf, which the callers refuse in
  // their own terms): strtod also took hex (0x10 told 16) and leading blanks. 1e-400 is a number,
  // and 0 is the double nearest to it.
  const std::optional<double> v = parse_number_text(text);
  if (!v) {
    problem = "is not a number";
    return std::nullopt;
  }
  // inf from a number too large, not from inf written as such.
  if (std::isinf(*v) && text.find_first_of("iI") == std::string::npos) {
    problem = "is too large for a double (the largest is about 1.8e308)";
    return std::nullopt;
  }
  return v;
}

}  // namespace tune::tuner
