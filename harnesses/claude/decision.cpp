// PreToolUse: core's decision back to Claude's hookSpecificOutput.
#include <string>

#include "claude_harness.hpp"
#include "payload.hpp"
#include "tools.hpp"

namespace agent_boundary::claude {
namespace {

// Claude caps hook output strings at 10,000 characters; stay clear of it. Counted in bytes
// (never more than UTF-16 units) and cut on a character boundary.
constexpr std::size_t kMaxReason = 9000;

std::string capped(const std::string& reason) {
  if (reason.size() <= kMaxReason) return reason;
  const std::string tail = "...";
  std::size_t cut = kMaxReason - tail.size();
  while (cut > 0 && (static_cast<unsigned char>(reason[cut]) & 0xC0) == 0x80) --cut;
  return reason.substr(0, cut) + tail;
}

const char* verdict_name(Decision::Verdict v) {
  switch (v) {
    case Decision::Verdict::allow:
      return "allow";
    case Decision::Verdict::ask:
      return "ask";
    case Decision::Verdict::deny:
    case Decision::Verdict::no_opinion:
      break;
  }
  return "deny";
}

Json output(const char* verdict, const std::string& reason) {
  return {{"hookSpecificOutput",
           {{"hookEventName", "PreToolUse"},
            {"permissionDecision", verdict},
            {"permissionDecisionReason", capped(reason)}}}};
}

std::string dump(const Json& j) {
  // Reasons may carry arbitrary bytes (paths); replace what is not UTF-8 instead of failing.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Claude replaces the whole tool_input with updatedInput: start from the original input so
// every other field (description, timeout, run_in_background, ...) is kept.
Json updated_input(const Json& payload, const Decision& d) {
  const auto in = payload.find("tool_input");
  Json updated = (in != payload.end() && in->is_object()) ? *in : Json::object();
  if (!d.updated_command.empty()) updated["command"] = d.updated_command;
  if (!d.updated_path.empty()) {
    const auto tool = payload.find("tool_name");
    const char* field =
        tool != payload.end() && tool->is_string() ? path_field(tool->get<std::string>()) : nullptr;
    if (!field) field = updated.contains("notebook_path") ? "notebook_path" : "file_path";
    updated[field] = d.updated_path;
  }
  return updated;
}

// An asked tool other than the shell toggle is one the gate does not sandbox: say what it
// does outside the boundary, or how to report a tool agent-boundary does not know.
std::string ask_suffix(const std::string& payload, const Decision& d) {
  if (d.verdict != Decision::Verdict::ask) return "";
  const std::optional<Json> p = try_parse_object(payload);
  if (!p) return "";
  const auto tool = p->find("tool_name");
  if (tool == p->end() || !tool->is_string()) return "";
  const std::string name = tool->get<std::string>();
  if (name == "Bash" || name == "Monitor") return "";
  std::string note = " ";
  note.append(ask_note(name));
  return note;
}

}  // namespace

// Never throws for a decision: a rewrite that cannot be expressed becomes a deny.
std::string ClaudeHarness::encode_decision(const std::string& payload, const Decision& decision,
                                           int& exit_code) const {
  exit_code = 0;
  if (decision.verdict == Decision::Verdict::no_opinion) return "";
  Json out =
      output(verdict_name(decision.verdict), decision.reason + ask_suffix(payload, decision));
  if (decision.updated_command.empty() && decision.updated_path.empty()) return dump(out);

  if (!valid_utf8(decision.updated_command) || !valid_utf8(decision.updated_path))
    return dump(output("deny",
                       "[gate] the rewritten tool input is not valid UTF-8 and cannot be sent "
                       "to Claude Code; tool call blocked"));
  const std::optional<Json> p = try_parse_object(payload);
  if (!p)
    return dump(output("deny",
                       "[gate] cannot rewrite the tool input: the hook payload is not a JSON "
                       "object; tool call blocked"));
  out["hookSpecificOutput"]["updatedInput"] = updated_input(*p, decision);
  return dump(out);
}

}  // namespace agent_boundary::claude
