// The tool-call decision engine: one neutral tool call in, one decision out. This is the
// single policy engine behind every harness's pre-tool hook; harness plugins only parse
// and encode. Tiers (in order): state `off` exactly -> no opinion; shell -> toggle escape or
// rewrite through the pinned launcher; path/search -> the backend's probe inside the
// boundary; safe -> allow; anything else -> ask. Any internal error denies.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "agent_boundary/backend.hpp"
#include "agent_boundary/harness.hpp"
#include "session.hpp"

namespace agent_boundary {

struct HookContext {
  std::string state_root;
  std::string self_exe;  // used for the toggle when the session pins no binary
  // Loads the session's pinned backend (tests substitute a mock).
  std::function<std::shared_ptr<Backend>(const BoundaryConfig&)> backend_for;
  int probe_timeout_ms = 5000;
  // A session with a protection plan (Linux) is probed through the pinned launcher, so the
  // probe sees the same read-only binds as commands; tests of the backend's probe turn it off.
  bool probe_through_launcher = true;
  // The backend a new session gets (--backend / AGENT_BOUNDARY_BACKEND); empty: the
  // profile's `backend:`, else nono.
  std::string backend;
  // Whole-agent mode: the session dir of the boundary the hook verifiably runs inside
  // (whole_agent.hpp's verified_inside), or empty. Inside, shell commands already run in
  // the boundary and in-process tools hit the kernel themselves: nothing is wrapped again.
  std::string inside_session;
};

// `<state>/sessions/<id>` for an id of 8-64 [A-Za-z0-9_-]; empty for anything else.
std::string session_dir_for_id(const std::string& state_root, const std::string& id);
// Where a failed session start leaves its reason, beside the session dir it could not make
// (`<sessions>/.<id>.start-error`), so every later tool call can say why it is blocked.
std::string start_error_file(const std::string& session_dir);

// The rewritten shell command: the pinned launcher by absolute path, running the original
// text with `bash -c` inside the boundary. Quoting makes the original a single word, so
// nothing in it can run outside.
std::string wrapped_command(const std::string& agent_boundary, const std::string& session_dir,
                            const std::string& cwd, const std::string& command);

// True when `command` is exactly what wrapped_command() renders for this binary and session
// (some cwd and inner command), so a second hook does not wrap it twice.
bool is_wrapped_command(const std::string& command, const std::string& agent_boundary,
                        const std::string& session_dir);

// Never throws: internal errors become deny decisions.
Decision decide_tool_call(const ToolCall& call, const HookContext& ctx);

}  // namespace agent_boundary
