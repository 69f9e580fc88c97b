// Closing the race between the gate's probe and a harness's in-process file tool (issue 13).
//
// A harness runs Read/Edit/Write in its own process, outside the boundary: the gate probes
// the path inside the boundary, allows it, and the harness opens the path itself a moment
// later. A sandboxed process still running in the background (started by an earlier shell
// call) could swap a component of that path for a symlink to a secret in between. The
// check and the use cannot be made atomic from outside the harness, so instead nothing
// sandboxed runs between them:
//
// - Every sandboxed command of a session runs in its own PID namespace whose init is a
//   small reaper of ours, registered in `<session>/tracked/` while it lives (it holds a lock
//   on its entry). A process can leave neither its PID namespace nor the reaper's tree of
//   descendants, and the namespace dies with the reaper, so the registered reapers name
//   every live sandboxed process of the session.
// - Before the probe of an in-process tool, `hold` counts the tool as in flight and stops
//   (SIGSTOP) every descendant of every registered reaper, repeating until all are stopped
//   and no new one appeared; launchers wait while a tool is in flight, so no new sandboxed
//   process starts either. `release` (the tool finished) continues them when the last
//   in-flight tool is done; `release_all` (the turn ended) forgets every count.
//
// A backend whose sandboxed processes do not descend from the launcher (a container's
// processes are children of the engine, not of the command that ran `exec`) declares in its
// rendering, as `freeze.json` (`{"stop": [argv], "resume": [argv]}`), how to stop them all
// and wait until they are stopped, and how to continue them; `hold` runs "stop" after the
// tracked trees are stopped and fails unless it exits 0.
//
// Everything here is guarded by one lock file per session, so a launcher registers either
// before a hold (and is stopped by it) or after the last release.
#pragma once

#include <string>

namespace agent_boundary::freeze {

inline constexpr const char* kLockFile = "freeze.lock";
inline constexpr const char* kCountFile = "frozen";  // how many in-process tools are in flight
inline constexpr const char* kTrackDir = "tracked";  // one locked entry per live reaper
inline constexpr const char* kBackendFreezeFile = "freeze.json";  // rendered by the backend

// Count one in-process tool in flight and stop every tracked process of the session.
// Throws Error when they cannot all be stopped within `timeout_ms` (the count is then
// unchanged and whatever was stopped for it runs again).
void hold(const std::string& session_dir, int timeout_ms);

// One in-process tool finished: continue the session's processes when none is in flight.
void release(const std::string& session_dir);

// The harness's turn is over (no tool can be in flight): continue everything.
void release_all(const std::string& session_dir);

// How many in-process tools are in flight (0 when the session has no count file).
int in_flight(const std::string& session_dir);

}  // namespace agent_boundary::freeze
