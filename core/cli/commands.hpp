// The agent-boundary command line: one function per command, sharing the global options.
// Commands throw agent_boundary::Error; main() renders it once and picks the exit code.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plugin_loader.hpp"
#include "session.hpp"

namespace agent_boundary::cli {

struct Globals {
  std::string session_dir;  // --session-dir / AGENT_BOUNDARY_SESSION_DIR, absolute or empty
  std::string backend;      // --backend / AGENT_BOUNDARY_BACKEND, or empty
  bool verbose = false;
};

// Shared by the commands: the install this binary belongs to, its plugin host.
struct Context {
  Globals globals;
  DefaultPluginHost host;
  Installation install;
  explicit Context(Globals g);
  // The selected session dir, or UsageError naming --session-dir.
  std::string require_session() const;
};

// Session commands (session_commands.cpp)
int cmd_status(const Context& ctx, bool json);
int cmd_set_state(const Context& ctx, const std::string& state);
int cmd_use(const Context& ctx, const std::string& profile);
int cmd_reload(const Context& ctx);
int cmd_list(const Context& ctx);
int cmd_session_create(const Context& ctx, const std::string& dir, const std::string& profile,
                       const std::string& workdir);

// Running commands (run_commands.cpp)
int cmd_session_stop(const Context& ctx, const std::string& dir);
int cmd_run(const Context& ctx, const std::vector<std::string>& argv);
int cmd_checkpoint(const Context& ctx);
int cmd_exec(const Context& ctx, const std::string& cwd, const std::vector<std::string>& argv);
// `run --harness NAME -- CMD...`: whole-agent mode (whole_agent.hpp).
int cmd_run_harness(const Context& ctx, const std::string& harness,
                    const std::vector<std::string>& argv);

// Profiles and plugins (profile_commands.cpp)
int cmd_validate(const Context& ctx, const std::vector<std::string>& targets);
int cmd_schema();
int cmd_plugins(const Context& ctx);

// compare (compare_commands.cpp): the compare corpus through the named backends (default:
// every installed backend plugin); exit 1 when a backend differs from the profile's intent
// without declaring it.
int cmd_compare(const Context& ctx, const std::vector<std::string>& backends, bool json, int runs);

// Harness entry points (harness_commands.cpp): `<name> hook EVENT`, `<name> statusline JSON`.
int cmd_harness(const Context& ctx, const std::string& name, const std::vector<std::string>& args);
// The installed plugin file of harness `name` (it may not exist).
std::string harness_plugin_file(const std::string& name);

// The profiles dir to use for a new session: the configured one, or the installed starter
// profiles when the configured dir has no `default` and `default` is asked for.
std::string profiles_dir_for(const std::string& profile);
// Print generation warnings as "agent-boundary: warning: ...".
void print_warnings(const std::vector<std::string>& warnings);

}  // namespace agent_boundary::cli
