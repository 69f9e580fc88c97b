// Finding srt, its Node interpreter and the helpers it runs, and checking the kernel.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "agent_boundary/error.hpp"
#include "agent_boundary/executables.hpp"
#include "agent_boundary/host_path.hpp"
#include "agent_boundary/process.hpp"
#include "srt_backend.hpp"

namespace agent_boundary::srt {
namespace {

std::string install_fix() {
  return std::string("install srt ") + kMinimumVersion + " or newer (`npm install -g " +
         kPackageName + "@" + kMinimumVersion +
         "`, or scripts/install.sh), or set AGENT_BOUNDARY_SRT to the absolute path of its `srt`";
}

// The first executable `name` in `dirs`, then in core's search order; resolved, or empty.
std::string find_program(const std::string& name, const std::vector<std::string>& dirs) {
  std::vector<std::string> candidates;
  for (const auto& d : dirs) candidates.push_back(d + "/" + name);
  for (auto& c : executable_search(name)) candidates.push_back(std::move(c));
  return first_executable(candidates);
}

// srt's package root: the directory above its JS entry holding srt's package.json.
std::string package_root(const std::string& cli, std::string& version) {
  for (std::string dir = parent_dir(cli); dir != "/"; dir = parent_dir(dir)) {
    std::ifstream in(dir + "/package.json");
    if (!in) continue;
    try {
      const auto pkg = nlohmann::json::parse(in);
      if (pkg.value("name", "") != kPackageName) continue;
      version = pkg.value("version", "");
      return dir;
    } catch (const std::exception&) {
      continue;
    }
  }
  return {};
}

const char* vendor_arch() {
#if defined(__x86_64__)
  return "x64";
#elif defined(__aarch64__)
  return "arm64";
#else
  return nullptr;
#endif
}

}  // namespace

BackendExecutable find_srt(const std::string& hint) {
  // An explicit choice is the only candidate; otherwise core's search order. Creation time
  // only: the result is pinned.
  std::vector<std::string> candidates;
  if (!hint.empty())
    candidates.push_back(hint);
  else if (const char* env = std::getenv("AGENT_BOUNDARY_SRT"); env && *env)
    candidates.push_back(env);
  else
    candidates = executable_search("srt");
  for (const auto& c : candidates) {
    if (c.empty() || c[0] != '/')
      throw BackendError("the srt path `" + c + "` is not absolute", c, install_fix());
    if (!is_executable_file(c)) {
      if (candidates.size() == 1)
        throw BackendError("srt is not an executable file at " + c, c, install_fix());
      continue;
    }
    BackendExecutable exe;
    const std::string cli = resolve_path(c);
    std::string package_version;
    const std::string package = package_root(cli, package_version);
    if (package.empty())
      throw BackendError(c + " is not srt: no package.json of " + kPackageName + " above " + cli, c,
                         install_fix());
    // `srt` is a `#!/usr/bin/env node` script: its interpreter is pinned now, so no later
    // command asks a PATH the agent may write. npm puts node beside the `srt` link.
    const std::string node = find_program("node", {parent_dir(c)});
    if (node.empty())
      throw BackendError("Node.js (`node`), which runs srt, was not found", c,
                         "install Node.js (`apt-get install nodejs`) beside srt or on PATH");
    ProcessOptions opts;
    opts.argv = {node, cli, "--version"};
    opts.timeout_ms = 15000;
    const ProcessResult r = run_process(opts);
    const std::string version = first_line(r.out);
    if (!r.ok() || version.empty() || version != package_version)
      throw BackendError(
          "`" + node + " " + cli + " --version` did not identify srt (" +
              (r.timed_out ? std::string("timed out") : first_line(r.err + r.out, 300)) + ")",
          cli, install_fix());
    if (compare_versions(version, kMinimumVersion) < 0)
      throw BackendError(
          "srt " + version + " is too old; agent-boundary needs " + kMinimumVersion + " or newer",
          cli, install_fix());
    exe.path = cli;
    exe.version = version;
    exe.tools[tool::kNode] = node;
    exe.tools[tool::kCli] = cli;
    exe.tools[tool::kPackage] = package;
    const std::vector<std::string> system = {"/usr/bin", "/bin", "/usr/sbin", "/sbin",
                                             "/usr/local/bin"};
    // Helpers srt runs on the host (bwrap, socat, rg) or we run (sh, and stat inside the
    // boundary for the probe). A missing one is preflight's to report.
    for (const char* name : {tool::kBwrap, tool::kSocat, tool::kRipgrep})
      if (auto p = find_program(name, system); !p.empty()) exe.tools[name] = p;
    for (const char* sh : {"/bin/sh", "/usr/bin/sh"})
      if (is_executable_file(sh)) {
        exe.tools[tool::kShell] = sh;
        break;
      }
    for (const char* st : {"/usr/bin/stat", "/bin/stat"})
      if (is_executable_file(st)) {
        exe.tools[tool::kStat] = st;
        break;
      }
    if (const char* arch = vendor_arch()) {
      const std::string seccomp = package + "/vendor/seccomp/" + arch + "/apply-seccomp";
      if (is_executable_file(seccomp)) exe.tools[tool::kSeccomp] = seccomp;
    }
    return exe;
  }
  throw BackendError(
      "srt was not found (looked beside agent-boundary, in /usr/local/bin, "
      "/usr/bin and on PATH)",
      {}, install_fix());
}

std::string namespaces_problem(const std::string& bwrap) {
  // The namespaces srt asks bubblewrap for on every command.
  std::string truth = "/usr/bin/true";
  if (::access(truth.c_str(), X_OK) != 0) truth = "/bin/true";
  ProcessOptions opts;
  opts.argv = {bwrap,
               "--new-session",
               "--die-with-parent",
               "--unshare-user",
               "--unshare-pid",
               "--unshare-net",
               "--ro-bind",
               "/",
               "/",
               "--dev",
               "/dev",
               "--proc",
               "/proc",
               "--",
               truth};
  opts.timeout_ms = 10000;
  const ProcessResult r = run_process(opts);
  if (r.ok()) return {};
  if (r.timed_out) return "bwrap timed out";
  const std::string why = first_line(r.err + r.out, 300);
  return why.empty() ? "bwrap exited " + std::to_string(r.exit_code) : why;
}

}  // namespace agent_boundary::srt
