// run and exec: the two ways a user starts a process inside a boundary. Both go through
// the launcher.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>

#include "agent_boundary/error.hpp"
#include "commands.hpp"
#include "launcher.hpp"
#include "paths.hpp"
#include "protect/checkpoint.hpp"
#include "secure_file.hpp"
#include "whole_agent.hpp"

namespace fs = std::filesystem;

namespace agent_boundary::cli {
namespace {

// A throwaway session for `run` from a plain terminal, under the state root (a session dir
// in a sandbox-writable place such as /tmp could not be denied to the sandbox).
class ThrowawaySession {
 public:
  explicit ThrowawaySession(const Context& ctx, const char* prefix = "run-",
                            const WholeAgentSetup* whole_agent = nullptr)
      : install_(ctx.install) {
    std::mt19937_64 rng{std::random_device{}()};
    dir_ = state_root() + "/sessions/" + prefix + std::to_string(getpid()) + "-" +
           std::to_string(rng() % 1000000000ULL);
    SessionRequest req;
    if (whole_agent) {
      req.whole_agent = true;
      req.extra_grants = whole_agent->grants;
      req.extra_held = whole_agent->held;
    }
    req.session_dir = dir_;
    req.profile_name = "default";
    req.profiles_dir = profiles_dir_for("default");
    req.workdir = resolve_existing_prefix(fs::current_path().string());
    req.backend = ctx.globals.backend;
    const SessionOutcome o = write_session(req, ctx.install);
    print_warnings(o.warnings);
  }
  ~ThrowawaySession() {
    const std::string problem = stop_session(dir_, install_);
    if (!problem.empty()) std::cerr << "agent-boundary: " << problem << "\n";
    remove_tree(dir_);
  }
  ThrowawaySession(const ThrowawaySession&) = delete;
  ThrowawaySession& operator=(const ThrowawaySession&) = delete;
  const std::string& dir() const { return dir_; }

 private:
  const Installation& install_;
  std::string dir_;
};

// Runs the plan, then the checkpoint on the host side, once the sandboxed command has
// exited: what it planted for host tools (a nested repository's fsmonitor, a new tool
// config) is neutralised before anything on the host can run it. Background processes
// that outlive the command are caught by the next checkpoint (next command, next tool
// call, session end).
// Returns false when the checkpoint could not finish.
bool report_checkpoint(const std::string& session_dir) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    for (const auto& a : protect::checkpoint_session(session_dir, protect::Reach::below_root))
      std::cerr << "agent-boundary: checkpoint: " << a << "\n";
  } catch (const Error& e) {
    std::cerr << "agent-boundary: checkpoint: " << e.message() << " (" << e.fix() << ")\n";
    return false;
  }
  spdlog::debug("checkpoint: {} us", std::chrono::duration_cast<std::chrono::microseconds>(
                                         std::chrono::steady_clock::now() - t0)
                                         .count());
  return true;
}

int run_checkpointed(const LaunchPlan& plan) {
  const int rc = run_plan(plan);
  report_checkpoint(plan.session_dir);
  return rc;
}

}  // namespace

int cmd_run(const Context& ctx, const std::vector<std::string>& argv) {
  if (!ctx.globals.session_dir.empty()) {
    // Nothing to clean up afterwards: become the sandboxed command (its exit code is ours).
    LaunchRequest req{ctx.globals.session_dir, {}, argv};
    return run_checkpointed(plan_launch(req, ctx.host));
  }
  ThrowawaySession session(ctx);
  LaunchRequest req{session.dir(), resolve_existing_prefix(fs::current_path().string()), argv};
  return run_checkpointed(plan_launch(req, ctx.host));
}

int cmd_run_harness(const Context& ctx, const std::string& name,
                    const std::vector<std::string>& argv) {
  if (!ctx.globals.session_dir.empty())
    throw UsageError("whole-agent mode creates its own session", ctx.globals.session_dir,
                     "drop --session-dir (and AGENT_BOUNDARY_SESSION_DIR) with --harness");
  const auto harness = load_harness(harness_plugin_file(name), installed_plugin_dir(), ctx.host);
  const std::string workdir = resolve_existing_prefix(fs::current_path().string());
  const WholeAgentFootprint footprint =
      harness->whole_agent_footprint(home_dir(), workdir, ::getuid());
  const WholeAgentSetup setup = whole_agent_setup(name, footprint, state_root());
  for (const auto& note : setup.notes) spdlog::debug("{}", note);
  // Network: the session's backend applies the profile's setting (nono: open, as for
  // commands). The footprint's network_hosts join the profile's allow-list once it has one.
  ThrowawaySession session(ctx, kWholeAgentSessionPrefix, &setup);
  LaunchRequest req{session.dir(), workdir, argv, {{kInsideEnv, session.dir()}}};
  // The harness's own model key survives the secret scrub (env_policy), for it alone.
  for (const auto& var : footprint.keep_env)
    if (const char* value = std::getenv(var.c_str())) req.env[var] = value;
  return run_checkpointed(plan_launch(req, ctx.host));
}

int cmd_checkpoint(const Context& ctx) { return report_checkpoint(ctx.require_session()) ? 0 : 1; }

int cmd_exec(const Context& ctx, const std::string& cwd, const std::vector<std::string>& argv) {
  LaunchRequest req{ctx.require_session(), cwd, argv};
  return run_checkpointed(plan_launch(req, ctx.host));
}

}  // namespace agent_boundary::cli
