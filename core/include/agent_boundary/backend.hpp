// The Backend interface: how a sandbox technology (nono, srt, a container, ...) turns a
// resolved policy into enforcement. Implemented by backend plugins; core only ever talks
// to this interface and never includes a plugin header.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent_boundary/export.hpp"
#include "agent_boundary/policy.hpp"

namespace agent_boundary {

class PluginHost;

// The backend's executable, found and checked once at session creation and pinned in
// boundary.json; later commands use `path` and never search PATH again.
struct BackendExecutable {
  std::string path;     // absolute
  std::string version;  // as reported by the executable
  // Other executables the backend needs later, pinned with it by absolute path (srt is a
  // Node script: its interpreter is pinned too, so `#!/usr/bin/env node` never searches a
  // PATH the agent can write). Keyed by the backend's own names.
  std::map<std::string, std::string> tools;
};

// A session as a backend sees it at wrap/probe time: only pinned, already-resolved data.
struct SessionView {
  std::string session_dir;  // absolute
  std::string workdir;      // absolute
  BackendExecutable executable;
};

// One file of the backend's rendering, relative to the session dir. Core writes it
// atomically with mode 0600.
struct RenderedFile {
  std::string name;
  std::string content;
};

struct WrapRequest {
  SessionView session;
  std::string cwd;                // where the command runs (absolute)
  std::vector<std::string> argv;  // the command; argv[0] is resolved inside the boundary
  // Names of the variables the launcher sets for the command (credentials, the profile's
  // `env:`, KUBECONFIG). A backend whose command does not inherit its caller's environment
  // (a container) passes exactly these through, by name: values never enter argv.
  std::vector<std::string> env_names;
};

struct ProbeRequest {
  SessionView session;
  std::string cwd;
  std::string path;  // absolute
  Access access = Access::read;
  int timeout_ms = 3000;  // the probe is killed (and the answer is "denied") past this
};

struct ProbeResult {
  enum class Verdict { allowed, denied, inconclusive };
  Verdict verdict = Verdict::inconclusive;
  std::string detail;  // errno name, "target absent", or why the probe could not answer
};

class AB_API Backend {
 public:
  virtual ~Backend();

  // Find the backend's executable (or fail with BackendError naming the fix) and check
  // its version. `hint` is an explicit path the user configured, or empty.
  virtual BackendExecutable locate(const std::string& hint) const = 0;

  // Fail with BackendError when this machine lacks what the backend needs (kernel
  // features, helpers). Called at session creation.
  virtual void preflight(const BackendExecutable& exe) const = 0;

  // For each deny of the policy: whether this backend, run through `exe`, enforces it on
  // this platform. Called at session creation; the answer is pinned for `status`.
  virtual std::vector<DenyState> deny_state(const ResolvedPolicy& policy,
                                            const BackendExecutable& exe) const = 0;

  // True when the backend itself enforces `policy.held` (paths inside writable grants that
  // stay read-only or hidden: srt's read-only binds, a container's mounts). False when it
  // cannot (Landlock only grants): core's launcher then holds them with a mount namespace
  // around the backend on Linux.
  virtual bool holds_paths() const = 0;

  // The backend's own files for this policy (deterministic for the same input).
  virtual std::vector<RenderedFile> render(const ResolvedPolicy& policy,
                                           const SessionView& session) const = 0;

  // The argv that runs `request.argv` inside the boundary; argv[0] is absolute.
  virtual std::vector<std::string> wrap(const WrapRequest& request) const = 0;

  // Ask the enforcement itself, from inside the boundary, whether `path` can be opened
  // for `access`. Never predicts; never leaves anything behind.
  virtual ProbeResult probe(const ProbeRequest& request) const = 0;

  // Session lifecycle, for backends that keep something running per session (a
  // container). `start` is called at creation on the staged session dir, after render and
  // before the self-test, and must be idempotent; it replaces whatever an earlier
  // rendering of the same session left running. `stop` releases it when the session ends,
  // is pruned or deleted; it must return quickly (a harness gives session-end hooks ~1 s)
  // and succeed when nothing runs. No-ops for per-command backends.
  virtual void start(const SessionView& session) const = 0;
  virtual void stop(const SessionView& session) const = 0;
};

}  // namespace agent_boundary
