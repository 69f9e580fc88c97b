// The nono backend: Landlock (Linux) or Seatbelt (macOS) through the `nono` CLI's direct
// mode (`nono wrap`: apply the sandbox, then exec; no supervisor process stays behind).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent_boundary/backend.hpp"
#include "agent_boundary/plugin_host.hpp"

namespace agent_boundary::nono {

// The oldest nono this backend was tested with: the profile keys, `wrap` flags and the
// `profile show --format manifest` output it relies on.
inline constexpr const char* kMinimumVersion = "0.80.0";
inline constexpr const char* kProfileFile = "nono-profile.json";

class NonoBackend final : public Backend {
 public:
  explicit NonoBackend(const PluginHost& host);

  BackendExecutable locate(const std::string& hint) const override;
  void preflight(const BackendExecutable& exe) const override;
  std::vector<DenyState> deny_state(const ResolvedPolicy& policy,
                                    const BackendExecutable& exe) const override;
  // Landlock only grants: the launcher's mount namespace holds paths inside grants.
  bool holds_paths() const override { return false; }
  std::vector<RenderedFile> render(const ResolvedPolicy& policy,
                                   const SessionView& session) const override;
  std::vector<std::string> wrap(const WrapRequest& request) const override;
  ProbeResult probe(const ProbeRequest& request) const override;
  // `nono wrap` execs the command: nothing runs between commands.
  void start(const SessionView&) const override {}
  void stop(const SessionView&) const override {}

 private:
  // deny_state and render both need nono's view of the same policy at session creation:
  // ask nono once per distinct profile text.
  const std::vector<std::string>& granted_dirs(const std::string& exe,
                                               const std::string& profile) const;

  const PluginHost& host_;
  mutable std::map<std::string, std::vector<std::string>> granted_dirs_cache_;
};

// nono_executable.cpp
BackendExecutable find_nono(const std::string& hint);
// Landlock ABI version of the running kernel, or a negative errno.
int landlock_abi();

// nono_profile.cpp
// The nono profile JSON for `policy` with `denies` (already filtered to the enforceable
// ones) and extra read-only file grants (our probe helper).
std::string render_nono_profile(const ResolvedPolicy& policy, const std::vector<Deny>& denies,
                                const std::vector<std::string>& extra_read_files);
// Directories nono grants for a profile (its own groups included), from
// `nono profile show --format manifest`.
std::vector<std::string> granted_directories(const std::string& nono_exe,
                                             const std::string& profile_json);

}  // namespace agent_boundary::nono
