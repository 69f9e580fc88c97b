// The srt backend: Anthropic's sandbox-runtime (npm `@anthropic-ai/sandbox-runtime`), which
// runs each command in bubblewrap on Linux (read-only binds and tmpfs masks inside the
// writable trees, an empty network namespace whose only way out is srt's filtering proxy).
// srt is a Node script; it is run per command as `node cli.js -s srt-settings.json -c ...`
// with the interpreter and every helper pinned by absolute path at session creation.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent_boundary/backend.hpp"
#include "agent_boundary/plugin_host.hpp"
#include "agent_boundary/process.hpp"

namespace agent_boundary::srt {

// The oldest srt this backend was tested with: the settings keys (literal path entries,
// bwrapPath/socatPath/ripgrep/seccomp pins, mandatoryDenySearchDepth) and the `-s`/`-c` CLI.
inline constexpr const char* kMinimumVersion = "0.0.83";
inline constexpr const char* kSettingsFile = "srt-settings.json";
inline constexpr const char* kPackageName = "@anthropic-ai/sandbox-runtime";

// Keys of BackendExecutable::tools.
namespace tool {
inline constexpr const char* kNode = "node";  // the interpreter of srt's `#!/usr/bin/env node`
inline constexpr const char* kCli = "cli";    // srt's JS entry (realpath of the `srt` link)
inline constexpr const char* kPackage = "package";  // srt's package root (its code and helpers)
inline constexpr const char* kShell = "sh";         // /bin/sh: the host-side launcher script
inline constexpr const char* kStat = "stat";        // coreutils stat, run inside by the probe
inline constexpr const char* kBwrap = "bwrap";
inline constexpr const char* kSocat = "socat";
inline constexpr const char* kRipgrep = "rg";
inline constexpr const char* kSeccomp = "apply-seccomp";  // srt's vendored seccomp helper
}  // namespace tool

class SrtBackend final : public Backend {
 public:
  explicit SrtBackend(const PluginHost& host);

  BackendExecutable locate(const std::string& hint) const override;
  void preflight(const BackendExecutable& exe) const override;
  std::vector<DenyState> deny_state(const ResolvedPolicy& policy,
                                    const BackendExecutable& exe) const override;
  // srt enforces denies inside writable trees itself (read-only binds, tmpfs masks).
  bool holds_paths() const override { return true; }
  std::vector<RenderedFile> render(const ResolvedPolicy& policy,
                                   const SessionView& session) const override;
  std::vector<std::string> wrap(const WrapRequest& request) const override;
  ProbeResult probe(const ProbeRequest& request) const override;
  // srt runs per command: nothing stays behind between commands.
  void start(const SessionView&) const override {}
  void stop(const SessionView&) const override {}

 private:
  const PluginHost& host_;
};

// --- srt_settings.cpp: pure functions (unit-tested) -------------------------------------

// What the settings need besides the policy: the pinned helpers and the paths srt itself
// must read inside the boundary.
struct SettingsInputs {
  std::string bwrap, socat, ripgrep, apply_seccomp;  // absolute, or empty: not pinned
  std::string package_dir;                           // srt's package root (read inside)
  std::string probe_helper;                          // agent-boundary's probe (read inside)
  std::vector<std::string> system_dirs = default_system_dirs();
  // Shared scratch space, read and written like nono's /tmp grant (srt cannot grant write
  // without read: nono's /tmp is write-only).
  std::vector<std::string> temp_dirs = {"/tmp"};
  // Resolves symlinks of a path (for comparing grants with denies); identity when empty.
  std::function<std::string(const std::string&)> resolve;

  // Root-only host secrets inside the system dirs (/etc/shadow, sudoers, ssh host keys):
  // hidden, since srt run as root could otherwise read them.
  std::vector<std::string> host_secrets = default_host_secrets();

  static std::vector<std::string> default_system_dirs();
  static std::vector<std::string> default_host_secrets();  // those present on this machine
};

// srt-settings.json for `policy` (deterministic for the same input).
std::string render_settings(const ResolvedPolicy& policy, const SettingsInputs& in);
// How srt enforces each deny of `policy` with these settings.
std::vector<DenyState> deny_states(const ResolvedPolicy& policy, const SettingsInputs& in);

// The argv of one wrapped command: a host-side /bin/sh that moves srt out of the command's
// directory and out of the command's PATH, then node running srt with `-c <inner>`, where
// the inner script restores PATH, enters `cwd` and execs `argv` unchanged.
std::vector<std::string> wrap_argv(const BackendExecutable& exe, const std::string& session_dir,
                                   const std::string& cwd, const std::vector<std::string>& argv);

// The probe's verdict once the host's view is known. `host_id` is "dev:ino" of `reference`
// seen from the host (the probed path, or its deepest existing ancestor); the run's second
// output line is the same seen from inside. Different means srt masks it: denied.
ProbeResult reconcile_probe(const ProcessResult& run, int timeout_ms, const std::string& path,
                            bool target_on_host, const std::string& reference,
                            const std::string& host_id);

// --- srt_executable.cpp ----------------------------------------------------------------

// Finds srt (hint, AGENT_BOUNDARY_SRT, else core's executable_search), its Node interpreter
// and helpers, and checks its version.
BackendExecutable find_srt(const std::string& hint);
// Empty when bubblewrap can create the namespaces srt uses, else why not.
std::string namespaces_problem(const std::string& bwrap);

}  // namespace agent_boundary::srt
