// The Claude Code harness: Claude's hook payloads (PreToolUse, SessionStart) and status-line
// payload in, core's neutral types out, and core's decisions back in Claude's wire format.
//
// Member functions are defined by topic: claude_harness.cpp (events, environment),
// tools.cpp (PreToolUse parsing and classification), decision.cpp (PreToolUse output),
// session_start.cpp (SessionStart and CLAUDE_ENV_FILE), statusline.cpp (status line),
// whole_agent.cpp (Claude's own paths for whole-agent mode).
#pragma once

#include <string>
#include <vector>

#include "agent_boundary/harness.hpp"
#include "agent_boundary/plugin_host.hpp"

namespace agent_boundary::claude {

class ClaudeHarness final : public Harness {
 public:
  explicit ClaudeHarness(const PluginHost& host);

  Event event_kind(const std::string& event_name) const override;

  ToolCall parse_tool_call(const std::string& payload) const override;
  std::string encode_decision(const std::string& payload, const Decision& decision,
                              int& exit_code) const override;

  SessionStartEvent parse_session_start(const std::string& payload) const override;
  std::string finish_session_start(const SessionStartReport& report) const override;

  std::vector<std::string> protected_paths() const override;
  std::string ambient_session_id() const override;
  WholeAgentFootprint whole_agent_footprint(const std::string& home, const std::string& workdir,
                                            unsigned uid) const override;

  std::string statusline(const std::string& payload,
                         SessionStatus (*lookup)(const std::string& session_id)) const override;

 private:
  const PluginHost& host_;
};

}  // namespace agent_boundary::claude
