#include "nono_backend.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent_boundary/error.hpp"
#include "agent_boundary/executables.hpp"
#include "agent_boundary/host_path.hpp"
#include "agent_boundary/plugin.hpp"
#include "agent_boundary/probe.hpp"
#include "agent_boundary/process.hpp"

namespace agent_boundary::nono {
namespace {}  // namespace

NonoBackend::NonoBackend(const PluginHost& host) : host_(host) {}

const std::vector<std::string>& NonoBackend::granted_dirs(const std::string& exe,
                                                          const std::string& profile) const {
  const std::string key = exe + '\n' + profile;
  auto it = granted_dirs_cache_.find(key);
  if (it == granted_dirs_cache_.end())
    it = granted_dirs_cache_.emplace(key, granted_directories(exe, profile)).first;
  return it->second;
}

BackendExecutable NonoBackend::locate(const std::string& hint) const { return find_nono(hint); }

void NonoBackend::preflight(const BackendExecutable&) const {
#ifdef __linux__
  const int abi = landlock_abi();
  if (abi < 1)
    throw BackendError(
        std::string("Landlock is not available on this kernel (") + std::strerror(-abi) + ")", {},
        "nono needs Linux 5.13+ with Landlock enabled: build the kernel with "
        "CONFIG_SECURITY_LANDLOCK=y and add `landlock` to the `lsm=` boot "
        "parameter; or choose another backend with --backend");
  host_.debug("Landlock ABI " + std::to_string(abi));
#endif
}

std::vector<DenyState> NonoBackend::deny_state(const ResolvedPolicy& policy,
                                               const BackendExecutable& exe) const {
  std::vector<DenyState> out;
#ifdef __linux__
  // Landlock only grants; it cannot carve a deny out of a granted directory, and nono
  // refuses to start with such a policy. Ask nono which directories it will grant
  // (including its own groups, such as /tmp) and mark every deny below one.
  const std::string base = render_nono_profile(policy, {}, {host_.helper_path("probe")});
  std::vector<std::pair<std::string, std::string>> dirs;
  for (const auto& d : granted_dirs(exe.path, base)) dirs.emplace_back(d, resolve_path(d));
  for (const auto& deny : policy.denies) {
    DenyState s{deny.path, deny.origin, Enforcement::enforced, {}};
    const std::string real = resolve_path(deny.path);
    for (const auto& [dir, real_dir] : dirs) {
      if (path_within(deny.path, dir) || path_within(real, real_dir)) {
        s.enforcement = Enforcement::unenforced;
        s.reason = "Landlock cannot deny a path inside the granted directory " + dir +
                   " (nono refuses such a policy on Linux, so the deny is left out)";
        break;
      }
    }
    out.push_back(s);
  }
#else
  for (const auto& deny : policy.denies)
    out.push_back({deny.path, deny.origin, Enforcement::enforced, {}});
#endif
  return out;
}

std::vector<RenderedFile> NonoBackend::render(const ResolvedPolicy& policy,
                                              const SessionView& session) const {
  std::vector<Deny> enforceable;
  const auto states = deny_state(policy, session.executable);
  for (std::size_t i = 0; i < policy.denies.size(); ++i)
    if (states[i].enforcement != Enforcement::unenforced) enforceable.push_back(policy.denies[i]);
  return {{kProfileFile, render_nono_profile(policy, enforceable, {host_.helper_path("probe")})}};
}

std::vector<std::string> NonoBackend::wrap(const WrapRequest& request) const {
  std::vector<std::string> argv = {
      request.session.executable.path, "wrap", "--silent", "--profile",
      request.session.session_dir + "/" + kProfileFile,
      // nono starts the command in --workdir; every path of
      // the profile is already expanded, so this is the cwd.
      "--workdir", request.cwd.empty() ? request.session.workdir : request.cwd, "--"};
  argv.insert(argv.end(), request.argv.begin(), request.argv.end());
  return argv;
}

ProbeResult NonoBackend::probe(const ProbeRequest& request) const {
  WrapRequest w{request.session,
                request.cwd,
                {host_.helper_path("probe"), request.path, to_string(request.access)},
                {}};
  ProcessOptions opts;
  opts.argv = wrap(w);
  opts.cwd = request.cwd;
  opts.timeout_ms = request.timeout_ms;
  return parse_probe_output(run_process(opts), request.timeout_ms);
}

}  // namespace agent_boundary::nono

AB_BACKEND_PLUGIN(agent_boundary::nono::NonoBackend, "nono", "0.1.0");
