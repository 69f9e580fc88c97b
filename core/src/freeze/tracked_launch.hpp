// The launcher's half of the freeze (see freeze.hpp): every sandboxed command starts in a
// new PID namespace whose init is a reaper registered in the session, and never while an
// in-process file tool of the session is in flight.
#pragma once

#include <string>

namespace agent_boundary::freeze {

// Wait (up to `wait_ms`, then throw SessionError) until no in-process tool of the session is
// in flight, then split this process in three:
//   - this process stays outside, waits for the command and ends with its status (or its
//     signal), passing SIGTERM and SIGHUP on;
//   - the reaper, init of a new PID namespace, registered in `<session>/tracked/` while it
//     lives, reaps every orphan and keeps the namespace alive while any process is in it;
//   - the command: the only one that returns from this call, to exec the sandbox.
// Throws SystemError (in this process, before anything was started) when the namespace
// cannot be made.
void enter_tracked(const std::string& session_dir, int wait_ms);

}  // namespace agent_boundary::freeze
