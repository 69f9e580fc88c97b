// Sessions: a directory under the state root holding one pinned boundary.
//
//   boundary.json   what was pinned at creation: profile, state, workdir, protected paths,
//                   the backend plugin and executable and our own binary, by absolute path
//   policy.json     the resolved, backend-neutral policy
//   <backend files> the backend's rendering (e.g. nono-profile.json)
//   kubeconfig      only the clusters the profile asks for (credentials/kubeconfig.hpp)
//   aws-credentials.env, github-credentials.env, credentials.lock
//                   the launcher's credential caches (credentials/env_file.hpp)
//
// Only creation, `reload` and `use` generate; `on`/`off` change the state alone; the hook
// and the launcher only read.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent_boundary/backend.hpp"
#include "agent_boundary/plugin_host.hpp"
#include "profile.hpp"

namespace agent_boundary {

inline constexpr const char* kBoundaryFile = "boundary.json";
inline constexpr const char* kPolicyFile = "policy.json";

struct BoundaryConfig {
  std::string profile;  // the profile's name (file stem)
  std::string profile_file;
  std::string state = "on";  // "on" or "off"
  bool self_edit = false;
  std::string workdir;
  std::string profiles_dir;
  std::vector<std::string> protected_paths;
  std::vector<std::string> installation_paths;  // the subset never granted, even with self_edit
  std::optional<std::string> aws_profile;
  std::optional<bool> github_push;
  // The credential tools, pinned by absolute path when the profile asks for them (empty:
  // not asked for, or not found: the launcher then says so instead of exporting).
  std::string aws_cli;
  std::string gh_cli;
  std::map<std::string, std::string> env;       // set inside the boundary by the launcher
  std::vector<std::string> keep_secret_env;     // profile: secret-looking names kept
  std::vector<std::string> allow_host_sockets;  // profile: absolute paths or variable names
  std::string backend;                          // plugin name
  std::string backend_plugin;                   // absolute path of the .so
  std::string plugin_dir;                       // the trusted dir the plugins load from
  std::string helper_dir;
  BackendExecutable backend_executable;
  std::string agent_boundary;         // absolute path of our own binary
  std::vector<std::string> warnings;  // from generation and deny-state, for `status`
  std::vector<DenyState> deny_state;
  // Every file written at creation besides boundary.json (policy.json, protect.json, the
  // backend's rendering, the kubeconfig, ...): the launcher and the hook refuse the session
  // when one is missing or unreadable, since each one's absence would weaken the boundary.
  std::vector<std::string> pinned_files;
};

std::string boundary_to_json(const BoundaryConfig& config);
// Throws SessionError: missing ("no complete session"), unreadable or corrupt.
BoundaryConfig read_boundary(const std::string& session_dir);
// A session is complete when boundary.json and policy.json both exist.
bool session_complete(const std::string& session_dir);
// The pinned files of `config` that are missing or unreadable in `session_dir` (each with
// why); a session from before the list existed yields one entry saying so. Empty: whole.
std::vector<std::string> damaged_pinned_files(const std::string& session_dir,
                                              const BoundaryConfig& config);
// Throws SessionError (with the fix) when damaged_pinned_files() is not empty.
void require_pinned_files(const std::string& session_dir, const BoundaryConfig& config);

struct SessionRequest {
  std::string session_dir;   // absolute
  std::string profile_name;  // a name in profiles_dir
  std::string profiles_dir;  // absolute
  std::string workdir;       // absolute
  std::string backend;       // empty: the profile's `backend:`, else "nono"
  std::string state = "on";
  std::vector<std::string> extra_protected;
  // Code outside the boundary that hooks run (e.g. a harness's plugin root): denied even
  // with self_edit, like agent-boundary's own plugin dir.
  std::vector<std::string> extra_installation;
};

struct SessionOutcome {
  BoundaryConfig config;
  std::vector<std::string> warnings;
};

// Where this agent-boundary is installed, and how it loads a backend. Tests replace the
// loader to run session logic against a mock Backend.
struct Installation {
  std::string self_exe;
  std::string plugin_dir;
  std::string helper_dir;
  std::function<std::shared_ptr<Backend>(const std::string& plugin_file)> load_backend;
  static Installation current(const PluginHost& host);
};

// Generate and pin a session (new or existing dir). Nothing is half-written on failure: a
// new dir appears complete or not at all; an existing one keeps its old files. The backend
// runs `true` inside the new boundary before anything is committed (self-test).
SessionOutcome write_session(const SessionRequest& request, const Installation& install);

// Regenerate an existing session from its pinned profiles dir and workdir (`reload`), or
// with another profile (`use`). Keeps the state.
SessionOutcome regenerate_session(const std::string& session_dir,
                                  const std::optional<std::string>& profile,
                                  const Installation& install);

// Release what the session's backend keeps running (a container): at session end, prune
// and delete. Returns an error message, or empty; never throws (a session that is gone or
// damaged has nothing to stop).
std::string stop_session(const std::string& session_dir, const Installation& install);

// Change the state only (`on`/`off`); the pinned policy is untouched.
BoundaryConfig set_session_state(const std::string& session_dir, const std::string& state);

// "profile <p> state <s>[ SELF-EDIT ...]"
std::string describe(const BoundaryConfig& config);

}  // namespace agent_boundary
