#include "hook_engine.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "agent_boundary/error.hpp"
#include "agent_boundary/probe.hpp"
#include "agent_boundary/process.hpp"
#include "credentials/credentials.hpp"
#include "credentials/env_file.hpp"
#include "freeze/freeze.hpp"
#include "paths.hpp"
#include "policy_json.hpp"
#include "protect/checkpoint.hpp"
#include "protect/held_list.hpp"
#include "protect/held_state.hpp"
#include "protect/protect.hpp"
#include "secure_file.hpp"

extern char** environ;
namespace fs = std::filesystem;

namespace agent_boundary {
namespace {

constexpr const char* kBash = "/bin/bash";

Decision make(Decision::Verdict v, std::string reason) {
  Decision d;
  d.verdict = v;
  d.reason = std::move(reason);
  return d;
}
Decision deny(std::string reason) { return make(Decision::Verdict::deny, std::move(reason)); }

// With a protection plan the probe must see the same read-only binds as the commands, so
// it runs through the pinned launcher instead of the backend alone.
// nullopt: an empty plan; a missing or corrupt plan is a plan the launcher refuses.
std::optional<protect::ProtectPlan> protection_of(const std::string& dir) {
  const std::string file = dir + "/" + protect::kProtectFile;
  try {
    const auto text = read_file(file, 1 << 20);
    if (!text) throw SessionError("missing " + file);
    auto plan = protect::from_json(*text, file);
    if (plan.empty()) return std::nullopt;
    return plan;
  } catch (const Error&) {
    protect::ProtectPlan bad;
    bad.mounts.push_back({"/", false, true, {}});  // the probe then fails, and the call is denied
    return bad;
  }
}

ProbeResult launcher_probe(const BoundaryConfig& c, const std::string& dir,
                           const ProbeRequest& req) {
  ProcessOptions opts;
  opts.argv = {c.agent_boundary, "exec", "--session-dir",         dir,      "--cwd",
               req.cwd,          "--",   c.helper_dir + "/probe", req.path, to_string(req.access)};
  opts.cwd = req.cwd;
  opts.timeout_ms = req.timeout_ms;
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  env.emplace_back("AGENT_BOUNDARY_SKIP_CREDENTIALS=1");
  opts.env = std::move(env);
  return parse_probe_output(run_process(opts), req.timeout_ms);
}

bool valid_session_id(const std::string& id) {
  if (id.size() < 8 || id.size() > 64) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

// Split text made only of plain words and single-quoted segments ('\'' escapes), separated
// by single spaces: exactly what shell_quote() produces. Anything else: nullopt.
std::optional<std::vector<std::string>> split_quoted(const std::string& s) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ' ') {
      if (!in_word) return std::nullopt;
      words.push_back(cur);
      cur.clear();
      in_word = false;
    } else if (c == '\'') {
      const auto end = s.find('\'', i + 1);
      if (end == std::string::npos) return std::nullopt;
      cur += s.substr(i + 1, end - i - 1);
      i = end;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 >= s.size() || s[i + 1] != '\'') return std::nullopt;
      cur += '\'';
      ++i;
      in_word = true;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (!in_word) return std::nullopt;
  words.push_back(cur);
  return words;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// The reference's toggle grammar, `agent-boundary(\s+[a-z][a-z0-9-]*){0,2}` on the trimmed
// command: the bare word and at most two lowercase words (no dots, slashes, `$`, quotes).
bool is_toggle(const std::string& cmd) {
  static const std::string word = "agent-boundary";
  if (!cmd.starts_with(word)) return false;
  std::size_t i = word.size();
  for (int n = 0; i < cmd.size(); ++n) {
    if (n == 2 || !std::isspace(static_cast<unsigned char>(cmd[i]))) return false;
    while (i < cmd.size() && std::isspace(static_cast<unsigned char>(cmd[i]))) ++i;
    if (i == cmd.size() || cmd[i] < 'a' || cmd[i] > 'z') return false;
    while (i < cmd.size() &&
           ((cmd[i] >= 'a' && cmd[i] <= 'z') || (cmd[i] >= '0' && cmd[i] <= '9') || cmd[i] == '-'))
      ++i;
  }
  return true;
}

std::vector<std::string> words_of(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

struct LoadedSession {
  std::string dir;
  std::optional<BoundaryConfig> config;  // nullopt when missing or corrupt
  std::string error;                     // why config is missing
};

LoadedSession load_session(const ToolCall& call, const HookContext& ctx) {
  LoadedSession s;
  s.dir = session_dir_for_id(ctx.state_root, call.session_id);
  if (s.dir.empty()) return s;
  try {
    if (session_complete(s.dir))
      s.config = read_boundary(s.dir);
    else
      s.error = "no policy for this session (" + s.dir + ")";
  } catch (const Error& e) {
    s.error = e.message();
  }
  return s;
}

std::string no_policy_reason(const LoadedSession& s) {
  if (!s.dir.empty())
    if (const auto why = read_file(start_error_file(s.dir), 4096))
      return "[gate] the session start could not create this session's boundary: " + *why +
             ". Every tool call stays blocked: fix that, then start or resume the session "
             "again (`reload` cannot help).";
  return "[gate] " + s.error +
         ". Run `agent-boundary reload`, or restart the session to generate one.";
}

// A session without a boundary (its start failed, or its files are gone) blocks every call:
// the harness would otherwise run the tool unsandboxed.
Decision refuse_without_policy(const LoadedSession& s) {
#ifdef AB_MUTANT_FAIL_CLOSED
  // mutant (tests/mutation only, never installed): no policy, no opinion (the tool runs)
  return make(Decision::Verdict::no_opinion, "");
#endif
  return deny(no_policy_reason(s));
}

Decision decide_shell(const ToolCall& call, const HookContext& ctx, const LoadedSession& s) {
  const std::string cmd = trim(call.command);
  if (is_toggle(cmd)) {
    if (s.dir.empty()) return deny("[gate] invalid session id");
    const std::string bin = s.config ? s.config->agent_boundary : ctx.self_exe;
    std::string rewritten = shell_quote(bin) + " --session-dir " + shell_quote(s.dir);
    const auto words = words_of(cmd);
    // Appended piecewise: no temporary string per word (GCC 12's -O3 also misreads
    // `" " + std::string&&` as an overlapping memcpy, a false -Wrestrict).
    for (std::size_t i = 1; i < words.size(); ++i)
      rewritten.append(" ").append(shell_quote(words[i]));
    Decision d = make(Decision::Verdict::ask,
                      "[gate] sandbox mode change for this session: " +
                          (words.size() > 1 ? cmd.substr(cmd.find(words[1])) : "(show current)"));
    d.updated_command = rewritten;
    return d;
  }
  if (cmd.empty()) return deny("[gate] " + call.tool_name + ": empty command");
  if (s.dir.empty()) return deny("[gate] invalid session id");
  if (!s.config) return refuse_without_policy(s);
  const BoundaryConfig& c = *s.config;
  if (is_wrapped_command(call.command, c.agent_boundary, s.dir))
    return make(Decision::Verdict::allow, "[gate] already sandboxed with " + c.backend);
#ifdef AB_MUTANT_SHELL_WRAPPED
  // mutant (tests/mutation only, never installed): the command runs as the agent wrote it
  return make(Decision::Verdict::allow, "[gate] mutant: not wrapped");
#endif
  // Which credentials the launcher will inject, or why not (from the caches' metadata
  // only: the hook never exports and never shows a value).
  std::string notes;
  try {
    if (credentials::wants_credentials(c))
      for (const auto& n : credentials::injection_notes(s.dir, c, credentials::now_seconds()))
        notes += (notes.empty() ? " (" : "; ") + n;
  } catch (const std::exception&) {
    notes.clear();  // a note is never a reason to refuse the command
  }
  if (!notes.empty()) notes += ")";
  Decision d = make(Decision::Verdict::allow,
                    "[gate] " + call.tool_name + " sandboxed with " + c.backend + notes);
  d.updated_command = wrapped_command(c.agent_boundary, s.dir, call.cwd, call.command);
  return d;
}

// The session's sandboxed processes held stopped from before the path is resolved until the
// in-process tool has run (freeze.hpp): released here unless the call is allowed, else by
// the harness's tool_done / turn_end hook.
class ToolHold {
 public:
  ToolHold(std::string dir, int timeout_ms) : dir_(std::move(dir)) {
#ifdef AB_MUTANT_FILE_TOOL_RACE
    (void)timeout_ms;
    kept_ = true;  // mutant (tests/mutation only, never installed): nothing is held
    return;
#endif
    freeze::hold(dir_, timeout_ms);
  }
  ToolHold(const ToolHold&) = delete;
  ToolHold& operator=(const ToolHold&) = delete;
  ~ToolHold() {
    if (kept_) return;
    try {
      freeze::release(dir_);
    } catch (...) {  // the turn's end releases it; the decision stands
    }
  }
  void keep() { kept_ = true; }

 private:
  std::string dir_;
  bool kept_ = false;
};

Decision decide_path(const ToolCall& call, const HookContext& ctx, const LoadedSession& s) {
  const bool search = call.tool_class == ToolClass::search;
  if (call.path.empty() && !search) return deny("[gate] " + call.tool_name + ": no path declared");
  if (s.dir.empty()) return deny("[gate] invalid session id");
  if (!s.config) return refuse_without_policy(s);
  const BoundaryConfig& c = *s.config;
  // From here until the tool has run, no sandboxed process of the session runs: nothing can
  // swap a component of the path between this resolution, the probe and the tool's open.
  ToolHold hold(s.dir, ctx.probe_timeout_ms);
  const std::string asked = call.path.empty() ? call.cwd : call.path;
  const std::string lexical = absolute_normal(asked, call.cwd);
  const std::string canonical = resolve_existing_prefix(lexical);
  const Access access = search ? Access::read : call.access;
  const std::string label = "[gate] " + call.tool_name + " " + asked;
#ifdef AB_MUTANT_FILE_GATE
  // mutant (tests/mutation only, never installed): every path allowed, nothing asked
  hold.keep();
  return make(Decision::Verdict::allow, label + ": mutant: not probed");
#endif

  // Kept even though the policy denies these too, so the protection does not depend on
  // the policy's contents; self_edit opens the policy, never the code hooks run.
  if (access != Access::read) {
    const auto& paths = c.self_edit ? c.installation_paths : c.protected_paths;
    for (const auto& p : paths) {
      if (path_within(canonical, resolve_existing_prefix(p)))
        return deny(label + ": refusing to let the sandbox rewrite its own policy (" + p + ")");
    }
  }
  // In-process tools run in the agent's own process: /proc there is the agent's (its
  // environment, its memory), not the sandbox's private one.
  if (path_within(canonical, "/proc"))
    return deny(label +
                ": /proc is not the sandbox's here (the tool runs in the agent's own "
                "process); read it with a command instead");
  const auto policy_text = read_file(s.dir + "/" + kPolicyFile, 16 << 20);
  if (!policy_text) return deny(no_policy_reason(s));
  (void)policy_from_json(*policy_text, s.dir + "/" + kPolicyFile);  // a damaged policy denies
  if (const auto damaged = damaged_pinned_files(s.dir, c); !damaged.empty())
    return deny(label + ": the session's pinned " + damaged.front() +
                " is missing or unreadable; run `agent-boundary --session-dir " + s.dir +
                " reload`");
#ifndef AB_MUTANT_MOUNT_PROTECTION  // mutant (tests/mutation only): held paths not refused
  // Held paths (git config and hooks, submodules, agent and tool configs) are refused by
  // name, with the key that would open them, before the probe (which refuses them too).
  if (access != Access::read) {
    const protect::HeldState held = protect::read_held_state(s.dir);
    if (const auto* h = protect::held_entry_for(held, canonical)) {
      const auto* group = protect::group_by_key(h->key);
      return deny(label + ": held by agent-boundary (" + (group ? group->what : h->key) + ": " +
                  h->path + "); code there runs outside the boundary. To allow it, set `" + h->key +
                  ": true` in the profile" +
                  (group ? std::string(" (cost: ") + group->cost + ")" : std::string()));
    }
  }
#endif

  const auto backend = ctx.backend_for(c);
  ProbeRequest req{SessionView{s.dir, c.workdir, c.backend_executable}, call.cwd, canonical, access,
                   ctx.probe_timeout_ms};
  // Write probes of absent targets create and remove parent dirs: one at a time per
  // session, so parallel tool calls neither see each other's dirs nor leave them behind.
  FileLock lock;
  if (access != Access::read) {
    lock = FileLock::acquire(s.dir + "/probe.lock", ctx.probe_timeout_ms);
    if (!lock.held()) return deny(label + ": another probe of this session did not finish in time");
  }
  const auto protection = protection_of(s.dir);
  // A masked deny reads as an empty file inside; the tool itself runs outside and would
  // see the real content.
  if (protection && protect::masked(*protection, canonical))
    return deny(label + ": denied by the profile (hidden inside the boundary)");
  const ProbeResult r = protection && ctx.probe_through_launcher ? launcher_probe(c, s.dir, req)
                                                                 : backend->probe(req);
  if (r.verdict != ProbeResult::Verdict::allowed)
    return deny(label + ": blocked by sandbox policy (" +
                (r.detail.empty() ? std::string("denied") : r.detail) + ")");
  Decision d = make(Decision::Verdict::allow,
                    "[gate] " + call.tool_name + " allowed by sandbox probe (" + canonical + ")");
  if (!search && canonical != call.path) d.updated_path = canonical;
  hold.keep();
  return d;
}

Decision decide_by_class(const ToolCall& call, const HookContext& ctx, const LoadedSession& s) {
  switch (call.tool_class) {
    case ToolClass::safe:
      return make(Decision::Verdict::allow, "ok");
    case ToolClass::unknown:
      return make(Decision::Verdict::ask,
                  "[gate] '" + call.tool_name +
                      "' is not sandboxed by this hook. Approve only if it cannot read secrets "
                      "outside " +
                      call.cwd + ".");
    case ToolClass::shell:
      return decide_shell(call, ctx, s);
    case ToolClass::path:
    case ToolClass::search:
      return decide_path(call, ctx, s);
  }
  return deny("[gate] unknown tool class");
}

// The harness runs inside a whole-agent boundary: every command and every in-process open
// is already held by the kernel, so the hook only keeps its asking tier and the toggle out.
Decision decide_inside(const ToolCall& call, const std::string& dir) {
  const std::string where = "[gate] inside the whole-agent boundary (" + dir + "): ";
  switch (call.tool_class) {
    case ToolClass::shell:
      if (is_toggle(trim(call.command)))
        return deny(where + "its boundary is switched from outside, not by the agent");
      return make(Decision::Verdict::allow, where + call.tool_name + " runs as is");
    case ToolClass::path:
    case ToolClass::search:
      return make(Decision::Verdict::allow, where + "the kernel decides " + call.tool_name);
    case ToolClass::safe:
      return make(Decision::Verdict::allow, "ok");
    case ToolClass::unknown:
      break;
  }
  return make(Decision::Verdict::ask, where + "'" + call.tool_name +
                                          "' is not a tool the boundary knows; approve only if "
                                          "you trust what it reaches outside this machine");
}

}  // namespace

std::string session_dir_for_id(const std::string& state_root, const std::string& id) {
  return valid_session_id(id) ? state_root + "/sessions/" + id : std::string();
}

std::string start_error_file(const std::string& session_dir) {
  const fs::path p(session_dir);
  std::string name = ".";
  name.append(p.filename().string()).append(".start-error");
  return (p.parent_path() / name).string();
}

std::string wrapped_command(const std::string& bin, const std::string& dir, const std::string& cwd,
                            const std::string& command) {
  return shell_quote(bin) + " exec --session-dir " + shell_quote(dir) + " --cwd " +
         shell_quote(cwd) + " -- " + kBash + " -c " + shell_quote(command);
}

bool is_wrapped_command(const std::string& command, const std::string& bin,
                        const std::string& dir) {
  const auto w = split_quoted(command);
  if (!w || w->size() != 10) return false;
  const auto& v = *w;
  if (v[0] != bin || v[1] != "exec" || v[2] != "--session-dir" || v[3] != dir || v[4] != "--cwd" ||
      v[6] != "--" || v[7] != kBash || v[8] != "-c")
    return false;
  return wrapped_command(bin, dir, v[5], v[9]) == command;
}

Decision decide_tool_call(const ToolCall& call, const HookContext& ctx) {
  try {
    if (!ctx.inside_session.empty()) return decide_inside(call, ctx.inside_session);
    const LoadedSession s = load_session(call, ctx);
    // The toggle stays reachable when the boundary is off, through the pinned binary (a
    // silent hook would leave `agent-boundary on` to whatever PATH finds).
    const bool toggle = call.tool_class == ToolClass::shell && is_toggle(trim(call.command));
    // Only a valid session whose state is exactly `off` disables: a missing, corrupt or
    // unknown state enforces.
    if (!toggle && s.config && s.config->state == "off")
      return make(Decision::Verdict::no_opinion, "");
    // Before any tool runs: neutralise what earlier commands (or their background
    // processes) planted for host tools. An index we cannot read fails closed.
    std::string planted;
    if (s.config) {
      try {
        for (const auto& a : protect::checkpoint_session(s.dir))
          planted += (planted.empty() ? " [checkpoint] " : "; ") + a;
      } catch (const Error& e) {
        return deny("[checkpoint] " + e.message() + " (" + e.fix() +
                    "); until then no tool runs, since host git could run what is planted there");
      }
    }
    Decision d = decide_by_class(call, ctx, s);
    if (!planted.empty()) d.reason += planted;
    return d;
  } catch (const Error& e) {
    return deny("[gate] hook internal error, failing closed: " + e.message());
  } catch (const std::exception& e) {
    return deny(std::string("[gate] hook internal error, failing closed: ") + e.what());
  } catch (...) {
    return deny("[gate] hook internal error, failing closed");
  }
}

}  // namespace agent_boundary
