// Finding and checking the nono executable, and the kernel's Landlock support.
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "agent_boundary/error.hpp"
#include "agent_boundary/executables.hpp"
#include "agent_boundary/host_path.hpp"
#include "agent_boundary/process.hpp"
#include "nono_backend.hpp"

namespace agent_boundary::nono {
namespace {

std::string install_fix() {
  return std::string("install nono ") + kMinimumVersion +
         " or newer (`cargo install nono-cli --version " + kMinimumVersion +
         " --locked --root /usr/local`), or set AGENT_BOUNDARY_NONO to its absolute path";
}

}  // namespace

BackendExecutable find_nono(const std::string& hint) {
  // An explicit choice is the only candidate; otherwise core's search order (beside our own
  // binary, where the installer puts nono, then the system dirs, then PATH). Creation time
  // only: the result is pinned.
  std::vector<std::string> candidates;
  if (!hint.empty())
    candidates.push_back(hint);
  else if (const char* env = std::getenv("AGENT_BOUNDARY_NONO"); env && *env)
    candidates.push_back(env);
  else
    candidates = executable_search("nono");
  for (const auto& c : candidates) {
    if (c.empty() || c[0] != '/')
      throw BackendError("the nono path `" + c + "` is not absolute", c, install_fix());
    if (!is_executable_file(c)) {
      if (!hint.empty() || candidates.size() == 1)
        throw BackendError("nono is not an executable file at " + c, c, install_fix());
      continue;
    }
    const std::string exe = resolve_path(c);
    ProcessOptions opts;
    opts.argv = {exe, "--version"};
    opts.timeout_ms = 10000;
    const ProcessResult r = run_process(opts);
    const std::string line = first_line(r.out);
    if (!r.ok() || !line.starts_with("nono "))
      throw BackendError("`" + exe + " --version` did not identify nono (" +
                             (r.timed_out ? std::string("timed out") : first_line(r.err + r.out)) +
                             ")",
                         exe, install_fix());
    const std::string version = line.substr(5);
    if (compare_versions(version, kMinimumVersion) < 0)
      throw BackendError(
          "nono " + version + " is too old; agent-boundary needs " + kMinimumVersion + " or newer",
          exe, install_fix());
    return {exe, version, {}};
  }
  throw BackendError("nono was not found (looked beside agent-boundary and on PATH)", {},
                     install_fix());
}

int landlock_abi() {
#ifdef __linux__
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1u /* VERSION */);
  return abi < 0 ? -errno : static_cast<int>(abi);
#else
  return -ENOSYS;
#endif
}

}  // namespace agent_boundary::nono
