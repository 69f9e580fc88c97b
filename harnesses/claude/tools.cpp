// PreToolUse: Claude's payload to a neutral ToolCall.
#include "tools.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "claude_harness.hpp"

namespace agent_boundary::claude {
namespace {

const std::string kWhat = "Claude PreToolUse payload";

// Tools that can neither read contents outside the boundary nor change the host. Network
// egress (WebFetch, WebSearch) is accepted: the boundary is about file contents.
constexpr std::array<std::string_view, 21> kSafeTools = {
    "EnterPlanMode",    "ExitPlanMode", "AskUserQuestion", "Agent",      "Task",
    "TaskCreate",       "TaskGet",      "TaskList",        "TaskOutput", "TaskStop",
    "TaskUpdate",       "TodoWrite",    "Skill",           "ToolSearch", "ReportFindings",
    "StructuredOutput", "BashOutput",   "KillShell",       "KillBash",   "WebFetch",
    "WebSearch"};

bool is_safe(const std::string& name) {
  return std::find(kSafeTools.begin(), kSafeTools.end(), name) != kSafeTools.end();
}

bool has_string(const Json& input, const char* key) {
  const auto it = input.find(key);
  return it != input.end() && it->is_string();
}

}  // namespace

const char* path_field(const std::string& tool_name) {
  if (tool_name == "Read" || tool_name == "Edit" || tool_name == "MultiEdit" ||
      tool_name == "Write")
    return "file_path";
  if (tool_name == "NotebookEdit") return "notebook_path";
  if (tool_name == "Grep" || tool_name == "Glob") return "path";
  return nullptr;
}

void classify(ToolCall& call, const Json& input, const std::string& what) {
  const std::string& tool = call.tool_name;
  if (tool == "Bash" || (tool == "Monitor" && has_string(input, "command"))) {
    if (!has_string(input, "command"))
      malformed(what, tool + ": `tool_input.command` is missing or not a string");
    call.tool_class = ToolClass::shell;
    call.command = string_field(input, "command", what + " (" + tool + " tool_input)");
    return;
  }
  if (const char* field = path_field(tool)) {
    const bool search = tool == "Grep" || tool == "Glob";
    call.tool_class = search ? ToolClass::search : ToolClass::path;
    call.access = (search || tool == "Read") ? Access::read : Access::readwrite;
    // Absent: "" (core denies a path tool without a path, and probes cwd for a search).
    call.path = string_field(input, field, what + " (" + tool + " tool_input)");
    return;
  }
  // Everything else asks, deliberately including PowerShell (would bypass the boundary),
  // every mcp__* tool, and any tool Claude adds later.
  call.tool_class = is_safe(tool) ? ToolClass::safe : ToolClass::unknown;
}

ToolCall ClaudeHarness::parse_tool_call(const std::string& payload) const {
  const Json p = parse_object(payload, kWhat);
  ToolCall call;
  call.session_id = string_field(p, "session_id", kWhat);
  call.cwd = cwd_field(p, kWhat);
  call.tool_name = string_field(p, "tool_name", kWhat);
  if (call.tool_name.empty()) malformed(kWhat, "`tool_name` is missing or empty");
  const Json empty = Json::object();
  const auto it = p.find("tool_input");
  const bool absent = it == p.end() || it->is_null();
  if (!absent && !it->is_object())
    malformed(kWhat, "`tool_input` must be an object, got " + std::string(it->type_name()));
  classify(call, absent ? empty : *it, kWhat);
  return call;
}

}  // namespace agent_boundary::claude
