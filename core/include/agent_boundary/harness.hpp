// The Harness interface: how an agent harness (Claude Code, Codex, ...) talks to
// agent-boundary. A harness turns its hook payloads into neutral tool calls and encodes
// core's decisions back into its own wire format. Every payload field, tool name and
// environment variable of a harness lives in its plugin; core decides on neutral data.
#pragma once

#include <string>
#include <vector>

#include "agent_boundary/export.hpp"
#include "agent_boundary/policy.hpp"

namespace agent_boundary {

enum class ToolClass {
  shell,    // runs a command: wrapped into the boundary
  path,     // opens one path in-process (read or write): probed
  search,   // reads under a path in-process (grep/glob with a path): probed for read
  safe,     // cannot read outside contents nor mutate the host: allowed
  unknown,  // anything else: the user is asked
};

struct ToolCall {
  std::string session_id;  // as the harness names its session (validated by core)
  std::string cwd;         // absolute
  std::string tool_name;   // for messages only
  ToolClass tool_class = ToolClass::unknown;
  std::string command;     // shell: the command text
  std::string path;        // path/search: as given (may be relative or empty)
  Access access = Access::read;
};

struct Decision {
  enum class Verdict { no_opinion, allow, ask, deny };
  Verdict verdict = Verdict::deny;
  std::string reason;
  std::string updated_command;  // shell: replaces the command when non-empty
  std::string updated_path;     // path: replaces the path when non-empty
};

class AB_API Harness {
 public:
  virtual ~Harness();

  // Parse a tool-use hook payload; throws Error on anything malformed.
  virtual ToolCall parse_tool_call(const std::string& payload) const = 0;

  // Encode a decision for the same payload (every original field the harness must echo is
  // kept). Returns the text for stdout; `exit_code` is what the hook process returns.
  virtual std::string encode_decision(const std::string& payload, const Decision& decision,
                                      int& exit_code) const = 0;
};

}  // namespace agent_boundary
