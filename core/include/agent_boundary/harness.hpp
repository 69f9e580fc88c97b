// The Harness interface: how an agent harness (Claude Code, Codex, ...) talks to
// agent-boundary. A harness turns its hook payloads into neutral events and encodes core's
// decisions back into its own wire format. Every payload field, tool name, environment
// variable and path of a harness lives in its plugin; core decides on neutral data.
#pragma once

#include <string>
#include <vector>

#include "agent_boundary/export.hpp"
#include "agent_boundary/policy.hpp"

namespace agent_boundary {

enum class ToolClass {
  shell,    // runs a command: wrapped into the boundary through the launcher
  path,     // opens one path in-process (read or write): probed
  search,   // reads below a path in-process (grep/glob with a path): probed for read
  safe,     // cannot read outside contents nor mutate the host: allowed
  unknown,  // anything else (including every MCP tool): the user is asked
};

struct ToolCall {
  std::string session_id;  // as the harness names its session (validated by core)
  std::string cwd;         // absolute
  std::string tool_name;   // for messages only
  ToolClass tool_class = ToolClass::unknown;
  std::string command;  // shell: the command text
  std::string path;     // path/search: as given (may be relative or empty)
  Access access = Access::read;
};

struct Decision {
  enum class Verdict { no_opinion, allow, ask, deny };
  Verdict verdict = Verdict::deny;
  std::string reason;
  std::string updated_command;  // shell: replaces the command when non-empty
  std::string updated_path;     // path: replaces the path when non-empty
};

struct SessionStartEvent {
  std::string session_id;
  std::string cwd;     // absolute
  std::string source;  // "startup", "resume", ... (informational)
};

// What core did at session start, for the harness to report and export.
struct SessionStartReport {
  std::string session_dir;            // empty when no session could be made
  std::string status_line;            // "profile default, state on" or the error
  std::vector<std::string> notes;     // warnings and degraded denies
  std::string agent_boundary_bin;     // the pinned binary's directory goes on PATH
  std::string kubeconfig;             // the session kubeconfig, or empty
  bool enforcement_verified = false;  // a probe of a denied path was denied
};

// What a harness needs to run whole inside a boundary (`agent-boundary run --harness NAME`),
// for the current user. Paths are absolute.
struct HarnessPath {
  std::string path;
  PathKind kind = PathKind::directory;
  // held files absent at launch are created with this content (so the sandbox cannot
  // create them); directories are created empty.
  std::string placeholder;
};

struct WholeAgentFootprint {
  // The harness's own state, writable inside: config dir, caches, temp dir, its config
  // file and lock files. Absent directories are created (0700); absent files are not
  // granted (a sandbox cannot grant what does not exist).
  std::vector<HarnessPath> writable;
  // Read-only inside, when present: its own installation (e.g. a native binary under HOME).
  std::vector<HarnessPath> readable;
  // Inside `writable` (or the workdir), held read-only: everything the harness would later
  // run or load outside any boundary (settings, hooks, plugins, commands, agents).
  std::vector<HarnessPath> held;
  // Hosts the harness must reach (its model API). Not applied yet: the seam for the
  // profile's network allow-list, which then adds them to it.
  std::vector<std::string> network_hosts;
  // Variables of the caller's environment the harness needs inside although their names
  // mark them as secrets (its own model API key): passed to it, and only to it, by name.
  std::vector<std::string> keep_env = {};
  bool empty() const { return writable.empty() && held.empty(); }
};

// State of one session for a status line.
struct SessionStatus {
  bool exists = false;
  std::string profile;
  std::string state;  // "on", "off", or empty when unknown
  bool self_edit = false;
};

class AB_API Harness {
 public:
  virtual ~Harness();

  // tool_done: an in-process file tool the gate allowed has finished (or failed);
  // turn_end: no tool of the harness can be in flight any more. Both release what the gate
  // held stopped for those tools (ABI 2.1).
  enum class Event { session_start, session_end, tool_use, unknown, tool_done, turn_end };
  // What `agent-boundary <harness> hook <event_name>` is.
  virtual Event event_kind(const std::string& event_name) const = 0;

  // Tool-use hook. parse throws Error on anything malformed; encode returns the text for
  // stdout and sets the hook's exit code (every original field the harness must echo is
  // kept in a rewrite).
  virtual ToolCall parse_tool_call(const std::string& payload) const = 0;
  virtual std::string encode_decision(const std::string& payload, const Decision& decision,
                                      int& exit_code) const = 0;

  // Session-start hook (parse also reads the session-end payload: only its id is used).
  // finish exports what later commands need (the harness's own env
  // mechanism) and returns what to print (on stderr by the caller).
  virtual SessionStartEvent parse_session_start(const std::string& payload) const = 0;
  virtual std::string finish_session_start(const SessionStartReport& report) const = 0;

  // Directories of the harness's own installation the sandbox must never write (e.g. the
  // plugin root); pinned as protected paths of sessions it creates.
  virtual std::vector<std::string> protected_paths() const = 0;

  // The harness's session id in the current environment, or empty.
  virtual std::string ambient_session_id() const = 0;

  // Whole-agent mode: the harness's own paths for a user with this HOME and uid, running
  // in `workdir`. The default (empty) means the harness does not support the mode.
  virtual WholeAgentFootprint whole_agent_footprint(const std::string& home,
                                                    const std::string& workdir, unsigned uid) const;

  // The status line for a harness status-line payload; `lookup` returns the state of a
  // session id (core validates the id). Empty when the harness does not use the plugin.
  virtual std::string statusline(const std::string& payload,
                                 SessionStatus (*lookup)(const std::string& session_id)) const = 0;
};

}  // namespace agent_boundary
