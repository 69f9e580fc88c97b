// Pure parts of the srt backend: the settings file, the deny states, the wrapped argv and
// the probe's verdict. No file system access here except through SettingsInputs::resolve.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "agent_boundary/error.hpp"
#include "agent_boundary/host_path.hpp"
#include "agent_boundary/probe.hpp"
#include "srt_backend.hpp"

using ordered_json = nlohmann::ordered_json;

namespace agent_boundary::srt {
namespace {

// srt reads `*`, `?`, `[` and `]` in a plain string as a glob; a path holding one is
// written as `{path, literal: true}` so it names exactly that file.
ordered_json entry(const std::string& path) {
  if (path.find_first_of("*?[]") == std::string::npos) return path;
  return ordered_json{{"path", path}, {"literal", true}};
}

class PathList {
 public:
  void add(const std::string& path) {
    if (path.empty() || std::find(paths_.begin(), paths_.end(), path) != paths_.end()) return;
    paths_.push_back(path);
  }
  ordered_json json() const {
    ordered_json out = ordered_json::array();
    for (const auto& p : paths_) out.push_back(entry(p));
    return out;
  }

 private:
  std::vector<std::string> paths_;
};

struct Resolver {
  const SettingsInputs& in;
  std::string operator()(const std::string& p) const { return in.resolve ? in.resolve(p) : p; }
};

// Everything the sandbox loses outright: the policy's denies and the held paths it hides.
std::vector<std::string> hidden_paths(const ResolvedPolicy& policy) {
  std::vector<std::string> out;
  for (const auto& d : policy.denies) out.push_back(d.path);
  for (const auto& h : policy.held)
    if (h.hold == HeldPath::Hold::hidden) out.push_back(h.path);
  return out;
}

// srt lets allowRead win over a denyRead of the very same path (a deny *below* an allowed
// directory does win): a grant naming exactly a hidden path is left out, so the deny holds.
bool names_hidden_path(const std::string& grant, const std::vector<std::string>& hidden,
                       const Resolver& resolve) {
  const std::string real = resolve(grant);
  return std::any_of(hidden.begin(), hidden.end(),
                     [&](const std::string& h) { return h == grant || resolve(h) == real; });
}

// What srt must read inside besides the grants: the system, its own package (its seccomp
// helper runs inside; without it every command silently does nothing) and our probe.
std::vector<std::string> implicit_reads(const SettingsInputs& in) {
  std::vector<std::string> out = in.system_dirs;
  if (!in.package_dir.empty()) out.push_back(in.package_dir);
  if (!in.probe_helper.empty()) out.push_back(in.probe_helper);
  return out;
}

}  // namespace

std::vector<std::string> SettingsInputs::default_system_dirs() {
  return {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"};
}

std::string render_settings(const ResolvedPolicy& policy, const SettingsInputs& in) {
  const Resolver resolve{in};
  const std::vector<std::string> hidden = hidden_paths(policy);

  PathList deny_read, allow_read, allow_write, deny_write;
  // Reads are an allow-list: nothing is readable unless granted below.
  deny_read.add("/");
  for (const auto& g : policy.grants) {
    if (names_hidden_path(g.path, hidden, resolve)) continue;
    if (g.access != Access::write) allow_read.add(g.path);
    // srt cannot grant write without read: a write-only grant is readable too.
    if (g.access != Access::read) allow_write.add(g.path);
  }
  for (const auto& p : implicit_reads(in))
    if (!names_hidden_path(p, hidden, resolve)) allow_read.add(p);
  for (const auto& p : in.temp_dirs)
    if (!names_hidden_path(p, hidden, resolve)) {
      allow_read.add(p);
      allow_write.add(p);
    }
  // A path below another write-denied path is already read-only: srt would still plan a
  // placeholder for it when absent, created on the host in the held directory for the
  // whole run (and, listed after that directory, fail every command). So it is left out of
  // denyWrite; its denyRead still hides it, also once the host creates it.
  std::vector<std::string> write_denied;
  for (const auto& d : policy.denies) write_denied.push_back(d.path);
  for (const auto& h : policy.held) write_denied.push_back(h.path);
  const auto below_write_denied = [&](const std::string& p) {
    return std::any_of(write_denied.begin(), write_denied.end(),
                       [&](const std::string& d) { return d != p && path_within(p, d); });
  };
  for (const auto& p : in.host_secrets) deny_read.add(p);
  for (const auto& d : policy.denies) {
    deny_read.add(d.path);
    if (!below_write_denied(d.path)) deny_write.add(d.path);
  }
  for (const auto& h : policy.held) {
    if (h.hold == HeldPath::Hold::hidden) deny_read.add(h.path);
    if (!below_write_denied(h.path)) deny_write.add(h.path);
  }

  ordered_json out;
  // srt's CLI always isolates the network: the command gets an empty network namespace and
  // srt's proxy, which allows only `allowedDomains` (and refuses a bare "*"). So, unlike
  // nono, which leaves the network open, no egress is allowed unless the profile lists
  // domains in `backend_options: {srt: {network: {...}}}`.
  out["network"] = {{"allowedDomains", ordered_json::array()},
                    {"deniedDomains", ordered_json::array()}};
  if (const auto it = policy.backend_options.find("srt"); it != policy.backend_options.end()) {
    const ordered_json block = ordered_json::parse(it->second);
    if (!block.is_object())
      throw BackendError("the profile's `backend_options.srt` is not a mapping");
    for (const auto& [key, value] : block.items()) {
      // Only the network: filesystem keys or helper paths there would bypass the checks
      // core makes on grants and pinned programs.
      if (key != "network")
        throw BackendError(
            "`backend_options.srt." + key + "` is not supported", {},
            "srt takes only `network:` there (srt's own keys, e.g. "
            "`allowedDomains: [github.com]`); paths belong in allow/read/write/deny");
      if (!value.is_object())
        throw BackendError("`backend_options.srt.network` must be a mapping", {},
                           "write it as `network: {allowedDomains: [example.com]}`");
      for (const auto& [k, v] : value.items()) out["network"][k] = v;
    }
  }
  out["filesystem"] = {{"denyRead", deny_read.json()},
                       {"allowRead", allow_read.json()},
                       {"allowWrite", allow_write.json()},
                       {"denyWrite", deny_write.json()}};
  // Helpers by absolute path: srt would otherwise look them up on the caller's PATH.
  if (!in.bwrap.empty()) out["bwrapPath"] = in.bwrap;
  if (!in.socat.empty()) out["socatPath"] = in.socat;
  if (!in.ripgrep.empty()) out["ripgrep"] = {{"command", in.ripgrep}};
  if (!in.apply_seccomp.empty()) out["seccomp"] = {{"applyPath", in.apply_seccomp}};
  // srt scans its working directory (the session dir, see wrap_argv) for files to protect;
  // our held paths cover the workdir, so the scan is kept as shallow as srt allows.
  out["mandatoryDenySearchDepth"] = 1;
  return out.dump(2) + "\n";
}

std::vector<DenyState> deny_states(const ResolvedPolicy& policy, const SettingsInputs& in) {
  const Resolver resolve{in};
  const std::vector<std::string> implicit = implicit_reads(in);
  std::vector<DenyState> out;
  for (const auto& deny : policy.denies) {
    DenyState s{deny.path, deny.origin, Enforcement::enforced, {}};
    const std::string real = resolve(deny.path);
    for (const auto& p : implicit) {
      const std::string real_p = resolve(p);
      const bool inside = (path_within(p, deny.path) && p != deny.path) ||
                          (path_within(real_p, real) && real_p != real);
      if (!inside) continue;
      s.enforcement = Enforcement::weaker;
      s.reason = "srt keeps " + p + " readable inside it (srt or agent-boundary needs it to run)";
      break;
    }
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> wrap_argv(const BackendExecutable& exe, const std::string& session_dir,
                                   const std::string& cwd, const std::vector<std::string>& argv) {
  const auto pinned = [&](const char* name) {
    const auto it = exe.tools.find(name);
    return it == exe.tools.end() ? std::string() : it->second;
  };
  // On the host: srt resolves `which` and `bash` through PATH, and the caller's PATH may
  // hold directories the sandbox can write. srt gets a system PATH; the caller's is kept
  // aside and restored inside. srt also starts in the session dir: it would otherwise create
  // placeholder files (.bashrc, .mcp.json, ...) in the command's directory on the host for
  // the whole run, which `git add -A` inside then refuses, and with a read-only .claude there
  // bwrap fails to start at all.
  // srt exits 0 when its command dies of SIGTERM or SIGINT (bwrap dies, the command gets
  // SIGKILL): the script passes such a signal on and then exits 128+signal itself. srt runs
  // in the background of a non-interactive shell, so its stdin is handed over on fd 3.
  static const char* const kHost =
      "AB_SRT_PATH=$PATH; export AB_SRT_PATH; PATH=/usr/bin:/bin; export PATH\n"
      "cd \"$1\" || exit 125; shift; ab_sig=; ab_pid=\n"
      "ab_pass() { ab_sig=$2; [ -z \"$ab_pid\" ] || kill -\"$1\" \"$ab_pid\" 2>/dev/null; }\n"
      "trap 'ab_pass TERM 143' TERM; trap 'ab_pass INT 130' INT; trap 'ab_pass HUP 129' HUP\n"
      "exec 3<&0\n"
      "\"$@\" <&3 3<&- &\n"
      "ab_pid=$!; exec 3<&-\n"
      "[ -z \"$ab_sig\" ] || kill -TERM \"$ab_pid\" 2>/dev/null\n"
      "while :; do wait \"$ab_pid\"; ab_rc=$?; kill -0 \"$ab_pid\" 2>/dev/null || break; done\n"
      "[ -z \"$ab_sig\" ] || exit \"$ab_sig\"\n"
      "exit \"$ab_rc\"\n";
  std::string inner =
      "PATH=$AB_SRT_PATH; export PATH; unset AB_SRT_PATH; cd -- " + shell_quote(cwd) + " && exec";
  // append, not `" " + std::string`: GCC 12 at -O3 reports that as an overlapping memcpy
  // (a false -Wrestrict in libstdc++'s operator+(const char*, string&&), GCC PR 105329).
  for (const auto& a : argv) inner.append(" ").append(shell_quote(a));
  return {pinned(tool::kShell),
          "-c",
          kHost,
          "agent-boundary-srt",
          session_dir,
          pinned(tool::kNode),
          pinned(tool::kCli),
          "-s",
          session_dir + "/" + kSettingsFile,
          "-c",
          inner};
}

ProbeResult reconcile_probe(const ProcessResult& run, int timeout_ms, const std::string& path,
                            bool target_on_host, const std::string& reference,
                            const std::string& host_id) {
  ProbeResult r = parse_probe_output(run, timeout_ms);
  if (r.verdict == ProbeResult::Verdict::inconclusive || run.timed_out) return r;
  std::istringstream lines(run.out);
  std::string first, inside;
  std::getline(lines, first);
  std::getline(lines, inside);
  if (inside == host_id) return r;
  r.verdict = ProbeResult::Verdict::denied;
  if (target_on_host)
    r.detail = "hidden: " + path + " exists on the host but srt masks it inside the boundary";
  else
    r.detail = "hidden: " + reference + " is masked inside the boundary (srt's tmpfs or " +
               "placeholder), so nothing written below it would reach the host";
  return r;
}

}  // namespace agent_boundary::srt
