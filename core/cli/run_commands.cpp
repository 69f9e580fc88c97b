// run and exec: the two ways a user starts a process inside a boundary. Both go through
// the launcher.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <random>

#include "agent_boundary/error.hpp"
#include "commands.hpp"
#include "launcher.hpp"
#include "paths.hpp"
#include "secure_file.hpp"

namespace fs = std::filesystem;

namespace agent_boundary::cli {
namespace {

// A throwaway session for `run` from a plain terminal, under the state root (a session dir
// in a sandbox-writable place such as /tmp could not be denied to the sandbox).
class ThrowawaySession {
 public:
  explicit ThrowawaySession(const Context& ctx) : install_(ctx.install) {
    std::mt19937_64 rng{std::random_device{}()};
    dir_ = state_root() + "/sessions/run-" + std::to_string(getpid()) + "-" +
           std::to_string(rng() % 1000000000ULL);
    SessionRequest req;
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

}  // namespace

int cmd_run(const Context& ctx, const std::vector<std::string>& argv) {
  if (!ctx.globals.session_dir.empty()) {
    // Nothing to clean up afterwards: become the sandboxed command (its exit code is ours).
    LaunchRequest req{ctx.globals.session_dir, {}, argv};
    exec_plan(plan_launch(req, ctx.host));
  }
  ThrowawaySession session(ctx);
  LaunchRequest req{session.dir(), resolve_existing_prefix(fs::current_path().string()), argv};
  return run_plan(plan_launch(req, ctx.host));
}

void cmd_exec(const Context& ctx, const std::string& cwd, const std::vector<std::string>& argv) {
  LaunchRequest req{ctx.require_session(), cwd, argv};
  exec_plan(plan_launch(req, ctx.host));
}

}  // namespace agent_boundary::cli
