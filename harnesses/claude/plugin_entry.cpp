// The exported descriptor of harness-claude.so (kept apart so tests can build the class
// without it).
#include "agent_boundary/plugin.hpp"
#include "claude_harness.hpp"

AB_HARNESS_PLUGIN(agent_boundary::claude::ClaudeHarness, "claude", "0.1.0");
