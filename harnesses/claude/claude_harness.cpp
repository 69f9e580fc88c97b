#include "claude_harness.hpp"

#include <climits>
#include <cstdlib>

namespace agent_boundary::claude {

ClaudeHarness::ClaudeHarness(const PluginHost& host) : host_(host) {}

Harness::Event ClaudeHarness::event_kind(const std::string& event_name) const {
  if (event_name == "SessionStart") return Event::session_start;
  if (event_name == "SessionEnd") return Event::session_end;
  if (event_name == "PreToolUse") return Event::tool_use;
  if (event_name == "PostToolUse" || event_name == "PostToolUseFailure") return Event::tool_done;
  if (event_name == "Stop" || event_name == "UserPromptSubmit") return Event::turn_end;
  return Event::unknown;
}

// The plugin's own installation (hooks.json, bin/bootstrap): a sandboxed command that could
// rewrite it would change what the next hook runs.
std::vector<std::string> ClaudeHarness::protected_paths() const {
  const char* root = std::getenv("CLAUDE_PLUGIN_ROOT");
  if (!root || !*root) return {};
  char* resolved = ::realpath(root, nullptr);
  if (!resolved) {
    host_.debug(std::string("CLAUDE_PLUGIN_ROOT does not resolve, not protected: ") + root);
    return {};
  }
  std::string out = resolved;
  std::free(resolved);
  return {out};
}

std::string ClaudeHarness::ambient_session_id() const {
  const char* id = std::getenv("CLAUDE_CODE_SESSION_ID");
  return id ? id : "";
}

}  // namespace agent_boundary::claude
