// The session's register of live reapers and the lock every freeze operation takes. Shared
// by the hook side (freeze.cpp) and the launcher side (tracked_launch.cpp).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "secure_file.hpp"

namespace agent_boundary::freeze {

// The session's freeze lock (throws SystemError past `timeout_ms`).
FileLock lock_session(const std::string& session_dir, int timeout_ms);

// The host pids of the session's live reapers; removes entries whose reaper is gone.
std::vector<pid_t> live_reapers(const std::string& session_dir);

// The in-flight count; call with the lock held.
int in_flight_locked(const std::string& session_dir);

}  // namespace agent_boundary::freeze
