// The names of the files a campaign directory holds, in one place: the runner, the commands and the
// locks create and read them, and `tune export` refuses to write over any of them.
#pragma once

#include <array>
#include <string_view>

namespace tune::tuner::campaign_files {

inline constexpr const char* kState = "state.yaml";      // the campaign, its study and every run record
inline constexpr const char* kEvents = "events.jsonl";   // every event, appended as it happens
inline constexpr const char* kTunerPid = "tuner.pid";    // the running tuner's process id
inline constexpr const char* kTunerLog = "tuner.log";    // a detached tuner's output
inline constexpr const char* kLock = "tune.lock";        // held while a command changes the state
inline constexpr const char* kTunerLock = "tuner.lock";  // held by the running tuner for its session
inline constexpr const char* kTrials = "trials";         // one directory per trial

inline constexpr std::array<std::string_view, 6> kFiles{kState, kEvents, kTunerPid, kTunerLog, kLock, kTunerLock};

}  // namespace tune::tuner::campaign_files
