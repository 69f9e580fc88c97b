// What a harness's session-start hook does, harness-neutral: find or create the session
// for the harness's session id, prune sessions idle for 30 days, and check that the
// boundary really denies (a probe of a protected path must come back denied).
#pragma once

#include <string>
#include <vector>

#include "agent_boundary/harness.hpp"
#include "hook_engine.hpp"
#include "session.hpp"

namespace agent_boundary {

inline constexpr long kSessionIdleSeconds = 30L * 24 * 3600;
// The file a project uses to ask for one of the user's profiles instead of `default`.
inline constexpr const char* kProjectProfileFile = ".agent-boundary-profile";

// Remove session dirs under `sessions_dir` whose newest mtime (dir and direct children) is
// older than `idle_seconds`, except `keep`, after stopping what their backend keeps running.
// Errors are ignored (a concurrent prune; a stop failure is logged at debug level).
void prune_sessions(const std::string& sessions_dir, const std::string& keep, long idle_seconds,
                    const Installation& install);

// The harness's session-end hook: stop the session's backend (its files stay for resume).
// Returns a note for the harness's log, or empty.
std::string end_session(const std::string& session_id, const Installation& install,
                        const HookContext& hook);

// The profile for a new session in `workdir`: `default`, or the name in the project's
// .agent-boundary-profile when that profile is no wider than `default` (see README).
// `note` explains a refusal.
std::string choose_profile(const std::string& workdir, const std::string& profiles_dir,
                           const Installation& install, std::string& note);

SessionStartReport start_session(const SessionStartEvent& event,
                                 const std::vector<std::string>& harness_protected,
                                 const Installation& install, const HookContext& hook);

// The state of a session id, for status lines (never throws).
SessionStatus lookup_session_status(const std::string& session_id);

}  // namespace agent_boundary
