#include "srt_backend.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "agent_boundary/error.hpp"
#include "agent_boundary/executables.hpp"
#include "agent_boundary/host_path.hpp"
#include "agent_boundary/plugin.hpp"
#include "agent_boundary/probe.hpp"
#include "agent_boundary/process.hpp"

namespace agent_boundary::srt {
namespace {

std::string pinned(const BackendExecutable& exe, const char* name) {
  const auto it = exe.tools.find(name);
  return it == exe.tools.end() ? std::string() : it->second;
}

SettingsInputs inputs_for(const BackendExecutable& exe, const PluginHost& host) {
  SettingsInputs in;
  in.bwrap = pinned(exe, tool::kBwrap);
  in.socat = pinned(exe, tool::kSocat);
  in.ripgrep = pinned(exe, tool::kRipgrep);
  in.apply_seccomp = pinned(exe, tool::kSeccomp);
  in.package_dir = pinned(exe, tool::kPackage);
  in.probe_helper = host.helper_path("probe");
  in.resolve = resolve_path;
  return in;
}

// "dev:ino" of `path` without following a final symlink (what `stat -c %d:%i` prints).
std::string file_id(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

}  // namespace

SrtBackend::SrtBackend(const PluginHost& host) : host_(host) {}

BackendExecutable SrtBackend::locate(const std::string& hint) const { return find_srt(hint); }

void SrtBackend::preflight(const BackendExecutable& exe) const {
  std::string missing;
  for (const char* name : {tool::kNode, tool::kCli, tool::kShell, tool::kStat, tool::kBwrap,
                           tool::kSocat, tool::kRipgrep})
    if (pinned(exe, name).empty()) missing += std::string(missing.empty() ? "" : ", ") + name;
  if (!missing.empty())
    throw BackendError("srt needs programs this machine lacks: " + missing, exe.path,
                       "install them (Debian: `apt-get install bubblewrap socat ripgrep "
                       "nodejs coreutils`), then create the session again");
  if (pinned(exe, tool::kSeccomp).empty())
    host_.debug(
        "srt has no apply-seccomp helper for this architecture: it will not block "
        "Unix sockets inside the boundary");
  const std::string problem = namespaces_problem(pinned(exe, tool::kBwrap));
  if (!problem.empty())
    throw BackendError(
        "bubblewrap cannot create the namespaces srt runs commands in: " + problem,
        pinned(exe, tool::kBwrap),
        "enable unprivileged user namespaces (`sysctl kernel.unprivileged_userns_clone=1`, "
        "`sysctl user.max_user_namespaces=15000`, on Ubuntu "
        "`sysctl kernel.apparmor_restrict_unprivileged_userns=0`); as root, keep CAP_SETFCAP; "
        "or choose another backend with --backend");
}

std::vector<DenyState> SrtBackend::deny_state(const ResolvedPolicy& policy,
                                              const BackendExecutable& exe) const {
  return deny_states(policy, inputs_for(exe, host_));
}

std::vector<RenderedFile> SrtBackend::render(const ResolvedPolicy& policy,
                                             const SessionView& session) const {
  return {{kSettingsFile, render_settings(policy, inputs_for(session.executable, host_))}};
}

std::vector<std::string> SrtBackend::wrap(const WrapRequest& request) const {
  return wrap_argv(request.session.executable, request.session.session_dir,
                   request.cwd.empty() ? request.session.workdir : request.cwd, request.argv);
}

ProbeResult SrtBackend::probe(const ProbeRequest& request) const {
  // srt hides a denied directory under an empty (writable) tmpfs and a denied file under a
  // placeholder: inside, the probe would find "nothing there" and even create files that
  // never reach the host. So the path (or, when absent on the host, its deepest existing
  // ancestor) is compared by device and inode with what the command sees.
  std::string reference = request.path;
  struct stat st {};
  const bool on_host = ::lstat(request.path.c_str(), &st) == 0;
  if (!on_host) {
    do reference = parent_dir(reference);
    while (reference != "/" && ::lstat(reference.c_str(), &st) != 0);
  }
  const std::string host_id = file_id(reference);
  const std::string stat_bin = pinned(request.session.executable, tool::kStat);
  const std::string script = "\"$0\" \"$1\" \"$2\"; " + shell_quote(stat_bin) +
                             " -c %d:%i -- \"$3\" 2>/dev/null || echo missing";
  // The probe asks about an absolute path: it runs in `/`, which exists in every boundary.
  WrapRequest w{request.session,
                "/",
                {pinned(request.session.executable, tool::kShell), "-c", script,
                 host_.helper_path("probe"), request.path, to_string(request.access), reference},
                {}};
  ProcessOptions opts;
  opts.argv = wrap(w);
  opts.cwd = w.cwd;  // copied, not `= "/"`: GCC 12 -O3 misreads that as an overlapping memcpy
  opts.timeout_ms = request.timeout_ms;
  return reconcile_probe(run_process(opts), request.timeout_ms, request.path, on_host, reference,
                         host_id);
}

}  // namespace agent_boundary::srt

AB_BACKEND_PLUGIN(agent_boundary::srt::SrtBackend, "srt", "0.1.0");
