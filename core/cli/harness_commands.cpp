// `agent-boundary <harness> hook <event>` and `agent-boundary <harness> statusline JSON`:
// the entry points a harness calls on every tool use. They choose their own exit codes:
// every error becomes a deny (or exit 2, which harnesses treat as "block"), and a watchdog
// ends the process with exit 2 before the harness's own hook timeout could let the tool run.
#include <signal.h>
#include <unistd.h>

#include <iostream>
#include <iterator>

#include "agent_boundary/error.hpp"
#include "commands.hpp"
#include "freeze/freeze.hpp"
#include "hook_engine.hpp"
#include "paths.hpp"
#include "session_start.hpp"

namespace agent_boundary::cli {
namespace {

constexpr unsigned kHookDeadlineSeconds = 20;  // the plugin's hook timeout is 30 s
constexpr std::size_t kMaxPayload = 8 << 20;

extern "C" void on_deadline(int) {
  static const char msg[] =
      "[gate] agent-boundary hook deadline exceeded, failing closed: tool call blocked\n";
  (void)!::write(2, msg, sizeof msg - 1);
  ::_exit(2);
}

void arm_watchdog() {
  struct sigaction sa {};
  sa.sa_handler = on_deadline;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, nullptr);
  ::alarm(kHookDeadlineSeconds);
}

std::string read_stdin_limited() {
  std::string data;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(0, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw SystemError("cannot read the hook payload from stdin");
    }
    if (n == 0) break;
    data.append(buf, static_cast<std::size_t>(n));
    if (data.size() > kMaxPayload)
      throw UsageError("hook payload larger than " + std::to_string(kMaxPayload) + " bytes");
  }
  return data;
}

HookContext hook_context(const Context& ctx) {
  HookContext h;
  h.state_root = state_root();
  h.self_exe = ctx.install.self_exe;
  const PluginHost* host = &ctx.host;
  h.backend_for = [host](const BoundaryConfig& c) {
    return load_backend(c.backend_plugin, installed_plugin_dir(), *host);
  };
  return h;
}

int tool_use_hook(const Context& ctx, const Harness& harness, const std::string& payload) {
  Decision decision;
  try {
    decision = decide_tool_call(harness.parse_tool_call(payload), hook_context(ctx));
  } catch (const Error& e) {
    decision.verdict = Decision::Verdict::deny;
    decision.reason = "[gate] cannot read the hook payload, failing closed: " + e.message();
  }
  int exit_code = 2;
  const std::string out = harness.encode_decision(payload, decision, exit_code);
  std::cout << out << std::flush;
  return exit_code;
}

int session_start_hook(const Context& ctx, const Harness& harness, const std::string& payload) {
  SessionStartEvent event;
  try {
    event = harness.parse_session_start(payload);
  } catch (const Error& e) {
    std::cerr << "[agent-boundary] cannot read the SessionStart payload: " << e.message()
              << "; not generating a policy\n";
    return 0;
  }
  const SessionStartReport report =
      start_session(event, harness.protected_paths(), ctx.install, hook_context(ctx));
  std::cerr << harness.finish_session_start(report) << std::flush;
  return 0;
}

int session_end_hook(const Context& ctx, const Harness& harness, const std::string& payload) {
  std::string note;
  try {
    note = end_session(harness.parse_session_start(payload).session_id, ctx.install,
                       hook_context(ctx));
  } catch (const Error& e) {
    note = e.message();
  }
  if (!note.empty()) std::cerr << "[agent-boundary] session end: " << note << "\n";
  return 0;  // nothing is decided at session end: a failure is only worth a note
}

// After an in-process file tool (tool_done) or at the end of a turn: let the session's
// sandboxed processes run again (freeze.hpp). Nothing is decided here, and a blocking exit
// would make the harness keep going (Stop), so a failure is a note with exit 1.
int release_hook(const Harness& harness, const std::string& payload, bool all) {
  try {
    const std::string dir =
        session_dir_for_id(state_root(), harness.parse_session_start(payload).session_id);
    if (dir.empty() || !session_complete(dir)) return 0;
    if (all)
      freeze::release_all(dir);
    else
      freeze::release(dir);
    return 0;
  } catch (const Error& e) {
    std::cerr << "[agent-boundary] cannot release the session's processes: " << e.message() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "[agent-boundary] cannot release the session's processes: " << e.what() << "\n";
  }
  return 1;
}

}  // namespace

std::string harness_plugin_file(const std::string& name) {
  return plugin_file(installed_plugin_dir(), PluginKind::harness, name);
}

int cmd_harness(const Context& ctx, const std::string& name, const std::vector<std::string>& args) {
  const bool hook = args.size() == 2 && args[0] == "hook";
  if (hook) arm_watchdog();
  try {
    const auto harness = load_harness(harness_plugin_file(name), installed_plugin_dir(), ctx.host);
    if (args.size() == 2 && args[0] == "statusline") {
      std::cout << harness->statusline(args[1], &lookup_session_status) << std::flush;
      return 0;
    }
    if (!hook) {
      std::cerr << "usage: agent-boundary " << name << " hook EVENT | " << name
                << " statusline JSON\n";
      return 2;
    }
    const std::string payload = read_stdin_limited();
    switch (harness->event_kind(args[1])) {
      case Harness::Event::tool_use:
        return tool_use_hook(ctx, *harness, payload);
      case Harness::Event::session_start:
        return session_start_hook(ctx, *harness, payload);
      case Harness::Event::session_end:
        return session_end_hook(ctx, *harness, payload);
      case Harness::Event::tool_done:
        return release_hook(*harness, payload, false);
      case Harness::Event::turn_end:
        return release_hook(*harness, payload, true);
      case Harness::Event::unknown:
        break;
    }
    std::cerr << "[gate] unknown hook event `" << args[1] << "`, failing closed\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "[gate] agent-boundary hook failed, failing closed: " << e.message() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "[gate] agent-boundary hook failed, failing closed: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace agent_boundary::cli
