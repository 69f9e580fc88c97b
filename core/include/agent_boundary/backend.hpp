// The Backend interface: how a sandbox technology (nono, srt, a container, ...) turns a
// resolved policy into enforcement. Implemented by backend plugins; core only ever talks
// to this interface and never includes a plugin header.
#pragma once

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

  // The backend's own files for this policy (deterministic for the same input).
  virtual std::vector<RenderedFile> render(const ResolvedPolicy& policy,
                                           const SessionView& session) const = 0;

  // The argv that runs `request.argv` inside the boundary; argv[0] is absolute.
  virtual std::vector<std::string> wrap(const WrapRequest& request) const = 0;

  // Ask the enforcement itself, from inside the boundary, whether `path` can be opened
  // for `access`. Never predicts; never leaves anything behind.
  virtual ProbeResult probe(const ProbeRequest& request) const = 0;
};

}  // namespace agent_boundary
