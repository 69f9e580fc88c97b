// Denies inside writable grants on Linux (issue 4). Landlock only grants, so a path inside
// a writable directory cannot be denied by the backend. The launcher instead enters a
// mount namespace (and a user namespace when not root), bind-mounts the protected paths
// read-only and pins every directory between the writable grant and each of them (a
// local mount point cannot be renamed or removed), then execs the backend, whose Landlock
// forbids any later mount change. The plan is computed once, at session creation, and
// pinned in the session dir as protect.json.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "agent_boundary/harness.hpp"
#include "agent_boundary/policy.hpp"

namespace agent_boundary::protect {

inline constexpr const char* kProtectFile = "protect.json";
inline constexpr const char* kMaskFile = "mask";  // empty; bound over denied files

struct MountOp {
  std::string path;
  bool pin = false;   // true: recursive rw self-bind; false: read-only self-bind
  bool mask = false;  // a profile deny: hidden under an empty read-only file or directory
  std::string key;    // the profile key of the held group (held_list.hpp); empty for a deny
};

// A held file that did not exist at session creation: nothing to bind, so the
// checkpoint moves it aside when it appears and the gate refuses to write it.
struct Watched {
  std::string path;
  std::string key;
};

struct Placeholder {
  std::string path;
  std::string content;
};

struct ProtectPlan {
  std::vector<MountOp> mounts;            // outer paths first
  std::vector<Placeholder> placeholders;  // created at session creation, then protected
  std::vector<std::string> dirs_to_create;
  std::vector<std::string> covered_denies;  // profile denies the plan enforces
  std::vector<Watched> watched;             // absent held files (not in protect.json)
  std::vector<std::string> notes;           // held paths left out, and why (warnings)
  // Tool configs and agent settings found below the root, held or not (not in protect.json):
  // the checkpoint's baseline (HeldState::nested_baseline).
  std::vector<std::string> nested_present;
  bool accept_unprotected = false;  // profile: accept_unprotected_denies
  // A PID namespace with its own /proc: the command sees only its own processes there, so
  // the policy can grant /proc (its /proc/self, `ps`) without exposing any other process.
  bool private_proc = false;
  bool empty() const { return mounts.empty() && !private_proc; }
};

// The writable directory grants of a policy (realpath'd), plus any extra ones.
std::vector<std::string> writable_dirs(const ResolvedPolicy& policy);

// Pure computation (no file is created): the paths to protect and pin inside `writable`.
struct PlanOptions {
  bool git = true;             // false: profile `allow_git_hook_escape`
  bool agent_settings = true;  // false: profile `allow_agent_settings_escape`
  bool submodules = true;      // false: profile `allow_submodule_escape`
  bool tool_config = true;     // false: profile `allow_tool_config_escape`
  std::string home;            // for `~` in git config values; empty: home_dir()
  // Installed code (resolved) that later hooks run: held read-only, not hidden, when a
  // writable grant holds it (e.g. the Claude plugin read in place from the checkout the
  // agent works in). Its self-protection deny is then covered.
  std::vector<std::string> installation = {};
  // Whole-agent mode: the harness's settings, hooks, plugins... held read-only inside its
  // writable state (absent directories created, absent files given their placeholder).
  std::vector<HarnessPath> held = {};
};
ProtectPlan compute_plan(const ResolvedPolicy& policy, const std::string& workdir,
                         const std::vector<std::string>& writable, const PlanOptions& options = {});

// Creates the absent directories and placeholders, then refuses (SessionError) protected
// paths that are symlinks or regular files with more than one link.
void prepare(const ProtectPlan& plan);

// The plan's protected paths (not the pins) for a backend that holds them itself, outer
// paths first. Call after prepare(): kinds are read from disk.
std::vector<HeldPath> held_paths(const ProtectPlan& plan);

// How the plan enforces a deny of `path` (for deny_state), empty when it does not.
std::string coverage(const ProtectPlan& plan, const std::string& path);
// True when `path` is hidden by a mask (the probe, seeing an empty file, cannot tell).
bool masked(const ProtectPlan& plan, const std::string& path);

std::string to_json(const ProtectPlan& plan);
ProtectPlan from_json(const std::string& text, const std::string& where);

// True when this process may create the namespaces the launcher needs (tested in a child).
bool namespaces_available(std::string& why);

// In-process, just before the exec: unshare, rslave, binds, lock layer. Throws SystemError
// (with what to enable) when the kernel refuses and the plan does not accept that; returns
// false when it ran unprotected because the plan accepts it.
// `own_pid_namespace`: the caller already runs in a new PID namespace of its own (the
// launcher's tracked commands), so a private /proc is mounted for it instead of a new one.
bool apply(const ProtectPlan& plan, const std::string& session_dir, bool own_pid_namespace = false);

}  // namespace agent_boundary::protect
