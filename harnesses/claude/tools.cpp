// PreToolUse: Claude's payload to a neutral ToolCall.
#include "tools.hpp"

#include <array>
#include <string_view>

#include "claude_harness.hpp"

namespace agent_boundary::claude {
namespace {

const std::string kWhat = "Claude PreToolUse payload";

// Every built-in tool of Claude Code 2.1.328 (the version the end-to-end suite pins; the
// list is what it offers the model, deferred tools included), classified by what it can
// read, write or run. Shell and path tools are handled by name below this table.
struct KnownTool {
  std::string_view name;
  bool safe;              // true: cannot read contents outside the boundary nor change the host
  std::string_view note;  // for the tools that ask: what they do outside the boundary
};
constexpr std::array<KnownTool, 32> kKnownTools = {{
    // Claude's own bookkeeping: plans, questions, the task list, its tool index.
    {"EnterPlanMode", true, ""},
    {"ExitPlanMode", true, ""},
    {"AskUserQuestion", true, ""},
    {"TodoWrite", true, ""},
    {"TaskCreate", true, ""},
    {"TaskGet", true, ""},
    {"TaskList", true, ""},
    {"TaskUpdate", true, ""},
    {"ToolSearch", true, ""},
    {"ReportFindings", true, ""},
    {"StructuredOutput", true, ""},
    // Background commands: their output (produced inside the boundary) and stopping them.
    {"TaskOutput", true, ""},
    {"BashOutput", true, ""},
    {"TaskStop", true, ""},
    {"KillShell", true, ""},
    {"KillBash", true, ""},
    // Subagents and later turns of this session: their own tool calls pass this hook.
    {"Agent", true, ""},
    {"Task", true, ""},
    {"Skill", true, ""},  // user and project skills live where the sandbox cannot write
    {"ScheduleWakeup", true, ""},
    {"CronCreate", true, ""},  // a prompt, fired later as a turn; `durable` is Claude's write
    {"CronDelete", true, ""},
    {"CronList", true, ""},
    {"ListAgents", true, ""},  // names only
    // Network only: the boundary is about file contents (see README).
    {"WebFetch", true, ""},
    {"WebSearch", true, ""},
    // Known, and deliberately asked: they act outside the boundary.
    {"SendMessage", false,
     "SendMessage hands text to another agent, which may be a local Claude session running "
     "without a boundary."},
    {"Workflow", false,
     "Workflow runs a script in Claude Code's own process, outside the boundary."},
    {"EnterWorktree", false,
     "EnterWorktree makes Claude Code run `git worktree add` on the host, outside the "
     "boundary, in a repository the sandbox can write."},
    {"ExitWorktree", false,
     "ExitWorktree can delete a worktree and its branch from the host, outside the boundary."},
    {"PowerShell", false, "PowerShell runs commands that this hook does not wrap."},
    {"REPL", false, "REPL runs code in Claude Code's own process, outside the boundary."},
}};

const KnownTool* known(const std::string& name) {
  for (const auto& t : kKnownTools)
    if (t.name == name) return &t;
  return nullptr;
}

bool is_safe(const std::string& name) {
  const KnownTool* t = known(name);
  return t && t->safe;
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
  // A Monitor without a command watches a WebSocket: network only.
  if (tool == "Monitor") {
    call.tool_class = ToolClass::safe;
    return;
  }
  // Everything else asks: the known tools that act outside the boundary (kKnownTools),
  // every mcp__* tool, and any tool Claude adds later (ask_note says how to report it).
  call.tool_class = is_safe(tool) ? ToolClass::safe : ToolClass::unknown;
}

std::string ask_note(const std::string& tool_name) {
  if (const KnownTool* t = known(tool_name); t && !t->safe) return std::string(t->note);
  if (tool_name.rfind("mcp__", 0) == 0)
    return "MCP tools run outside the boundary; agent-boundary cannot see what they access.";
  return "agent-boundary does not know the tool '" + tool_name +
         "' (it classifies the tools of Claude Code 2.1.328). If your Claude Code added it, "
         "report it on agent-boundary's issue tracker with the output of `claude --version` "
         "and this message, so it gets classified.";
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
