// The launcher: the single place that turns a session into a sandboxed process. It reads
// the pinned session, prepares the child's environment, asks the pinned backend to wrap
// the command and execs the result by absolute path. `exec`, `run` and every harness
// rewrite go through it.
#pragma once

#include <string>
#include <vector>

#include "agent_boundary/plugin_host.hpp"
#include "protect/protect.hpp"

namespace agent_boundary {

struct LaunchRequest {
  std::string session_dir;  // absolute
  std::string cwd;          // empty: the session's workdir
  std::vector<std::string> argv;
};

struct LaunchPlan {
  std::vector<std::string> argv;  // argv[0] absolute
  std::vector<std::string> env;   // "K=V" (injected credentials included: never in argv)
  std::string cwd;
  std::vector<std::string> notes;   // printed on stderr before the exec (no secrets)
  protect::ProtectPlan protection;  // applied in exec_plan, just before the exec
  std::string session_dir;
  bool tracked = true;  // run in a registered PID namespace (freeze/tracked_launch.hpp)
};

// Everything up to the exec: throws Error on a missing/corrupt session or a backend error.
// Credentials the session asks for are exported here, outside the boundary (see
// credentials/credentials.hpp); a failed export is a note, never a failed launch.
LaunchPlan plan_launch(const LaunchRequest& request, const PluginHost& host);

// Print the notes, then execve the plan; only returns by throwing SystemError.
[[noreturn]] void exec_plan(const LaunchPlan& plan);

// Run the plan as a child and return its exit status (128+signal when killed).
int run_plan(const LaunchPlan& plan);

}  // namespace agent_boundary
