// Claude's tool names and the tool_input fields that carry a command or a path.
#pragma once

#include <string>

#include "agent_boundary/harness.hpp"
#include "payload.hpp"

namespace agent_boundary::claude {

// The tool_input field that names the path a tool opens or searches ("file_path",
// "notebook_path", "path"), or nullptr for tools without one.
const char* path_field(const std::string& tool_name);

// Fills tool_class, command, path and access of `call` (tool_name already set) from the
// tool's input object; throws UsageError naming `what` on a malformed input.
void classify(ToolCall& call, const Json& input, const std::string& what);

// For a tool that asks (ToolClass::unknown): what it does outside the boundary, or, for a
// tool agent-boundary does not know, how to report it. Appended to core's reason.
std::string ask_note(const std::string& tool_name);

}  // namespace agent_boundary::claude
