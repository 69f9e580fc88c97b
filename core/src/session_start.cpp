#include "session_start.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <tuple>

#include "agent_boundary/error.hpp"
#include "credentials/kubeconfig.hpp"
#include "git_dir.hpp"
#include "paths.hpp"
#include "policy_gen.hpp"
#include "protect/checkpoint.hpp"
#include "secure_file.hpp"

namespace fs = std::filesystem;

namespace agent_boundary {
namespace {

time_t mtime_of(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? st.st_mtime : 0;
}

bool access_covers(Access have, Access want) { return have == Access::readwrite || have == want; }

// Is `narrow` (the project's choice) within `wide` (the user's default)? Both are
// resolved against the same machine and workdir, so grants compare as paths.
std::string why_wider(const Profile& narrow_profile, const GenerationResult& narrow,
                      const Profile& wide_profile, const GenerationResult& wide) {
  if (narrow_profile.self_edit && !wide_profile.self_edit) return "it sets self_edit";
  if (narrow_profile.nono_json != wide_profile.nono_json) return "its `nono:` block differs";
  if (narrow_profile.backend_options != wide_profile.backend_options)
    return "its `backend_options:` differ";
  if (narrow_profile.backend != wide_profile.backend) return "it names another backend";
  for (const auto& [n, w, key] :
       {std::tuple{narrow_profile.allow_git_hook_escape, wide_profile.allow_git_hook_escape,
                   "allow_git_hook_escape"},
        std::tuple{narrow_profile.allow_agent_settings_escape,
                   wide_profile.allow_agent_settings_escape, "allow_agent_settings_escape"},
        std::tuple{narrow_profile.allow_submodule_escape, wide_profile.allow_submodule_escape,
                   "allow_submodule_escape"},
        std::tuple{narrow_profile.allow_tool_config_escape, wide_profile.allow_tool_config_escape,
                   "allow_tool_config_escape"}})
    if (n && !w) return std::string("it sets ") + key;
  if (narrow_profile.aws_profile && narrow_profile.aws_profile != wide_profile.aws_profile)
    return "it asks for other AWS credentials";
  if (narrow_profile.github_push.value_or(false) && !wide_profile.github_push.value_or(false))
    return "it asks for a GitHub token";
  if ((narrow_profile.kube_eks && !wide_profile.kube_eks) ||
      (narrow_profile.kube_orbstack && !wide_profile.kube_orbstack))
    return "it asks for kube credentials";
  const auto raw_subset = [](const std::vector<PathEntry>& a, const std::vector<PathEntry>& b) {
    return std::all_of(a.begin(), a.end(), [&](const PathEntry& x) {
      return std::any_of(b.begin(), b.end(), [&](const PathEntry& y) { return x.raw == y.raw; });
    });
  };
  if (!raw_subset(narrow_profile.keep_secret_env, wide_profile.keep_secret_env))
    return "it keeps secret variables that `default` removes";
  if (!raw_subset(narrow_profile.allow_host_sockets, wide_profile.allow_host_sockets))
    return "it allows host sockets that `default` hides";
  for (const auto& g : narrow.policy.grants) {
    bool covered = false;
    for (const auto& d : wide.policy.grants)
      covered = covered || (path_within(g.path, d.path) && access_covers(d.access, g.access));
    if (!covered) return "it grants " + g.path;
  }
  for (const auto& d : wide.policy.denies) {
    bool kept = false;
    for (const auto& n : narrow.policy.denies) kept = kept || path_within(d.path, n.path);
    if (!kept) return "it drops the deny of " + d.path;
  }
  return {};
}

}  // namespace

void prune_sessions(const std::string& sessions_dir, const std::string& keep, long idle_seconds,
                    const Installation& install) {
  const time_t cutoff = std::time(nullptr) - idle_seconds;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(sessions_dir, ec)) {
    const std::string dir = e.path().string();
    const std::string name = e.path().filename().string();
    if (name.starts_with(".") && name.ends_with(".start-error") && e.is_regular_file(ec)) {
      const time_t t = mtime_of(dir);
      if (t != 0 && t < cutoff) fs::remove(e.path(), ec);
      continue;
    }
    if (dir == keep || !e.is_directory(ec)) continue;
    time_t newest = mtime_of(dir);
    std::error_code ec2;
    for (const auto& child : fs::directory_iterator(dir, ec2))
      newest = std::max(newest, mtime_of(child.path().string()));
    if (newest == 0 || newest >= cutoff) continue;
    const std::string problem = stop_session(dir, install);
    if (!problem.empty()) spdlog::debug("pruning {}: {}", dir, problem);
    remove_tree(dir);
  }
}

std::string end_session(const std::string& session_id, const Installation& install,
                        const HookContext& hook) {
  const std::string dir = session_dir_for_id(hook.state_root, session_id);
  if (dir.empty()) return "no valid session id in the payload";
  // Last chance to neutralise what background processes planted after the last command.
  std::string note;
  try {
    for (const auto& a : protect::checkpoint_session(dir, protect::Reach::below_root))
      note += (note.empty() ? "" : "; ") + a;
  } catch (const Error& e) {
    note = "checkpoint: " + e.message();
  }
  const std::string stopped = stop_session(dir, install);
  if (!stopped.empty()) note += (note.empty() ? "" : "; ") + stopped;
  return note;
}

namespace {

// The project's profile request, read without trusting it: the file lives in the
// agent-writable workdir, so it must be a small regular file (not a symlink to a secret, a
// FIFO or a directory), and only a plain profile name is ever echoed back.
std::string read_project_profile_name(const std::string& file, std::string& note) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno != ENOENT)
      note = "ignoring " + file + " (" + std::strerror(errno) + "); using `default`";
    return {};
  }
  struct stat st {};
  char buf[128];
  ssize_t n = -1;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < 128)
    n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n < 0) {
    note = "ignoring " + file + ": not a small regular file; using `default`";
    return {};
  }
  std::string name(buf, static_cast<std::size_t>(n));
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  }) && name[0] != '.';
  if (!plain) {
    note = "ignoring " + file + ": it does not hold a plain profile name; using `default`";
    return {};
  }
  return name;
}

}  // namespace

std::string choose_profile(const std::string& workdir, const std::string& profiles_dir,
                           const Installation& install, std::string& note) {
  try {
    std::string root = workdir;
    if (const auto layout = find_git_layout(workdir)) root = layout->top;
    const std::string name = read_project_profile_name(root + "/" + kProjectProfileFile, note);
    if (name.empty() || name == "default") return "default";
    const Profile wide_profile = load_profile_file(find_profile(profiles_dir, "default"));
    const Profile narrow_profile = load_profile_file(find_profile(profiles_dir, name));
    GenerationContext ctx;
    ctx.workdir = workdir;
    ctx.protected_paths = {state_root()};
    ctx.installation_paths = {resolve_existing_prefix(install.plugin_dir)};
    ctx.state_root = state_root();
    const std::string why = why_wider(narrow_profile, generate_policy(narrow_profile, ctx),
                                      wide_profile, generate_policy(wide_profile, ctx));
    if (why.empty()) return name;
    note = "the project asks for profile `" + name + "`, which would widen the boundary (" + why +
           "); using `default`";
  } catch (const Error& e) {
    note = "the project's " + std::string(kProjectProfileFile) + " cannot be used (" + e.message() +
           "); using `default`";
  }
  return "default";
}

SessionStartReport start_session(const SessionStartEvent& event,
                                 const std::vector<std::string>& harness_protected,
                                 const Installation& install, const HookContext& hook) {
  SessionStartReport report;
  report.agent_boundary_bin = install.self_exe;
  const std::string dir = session_dir_for_id(hook.state_root, event.session_id);
  if (dir.empty()) {
    report.status_line = "no valid session id in the payload; not generating a policy";
    return report;
  }
  prune_sessions(hook.state_root + "/sessions", dir, kSessionIdleSeconds, install);
  try {
    BoundaryConfig config;
    if (session_complete(dir)) {
      config = read_boundary(dir);  // resume: pinned, untouched
      for (const auto& d : damaged_pinned_files(dir, config))
        report.notes.push_back("REFUSED: pinned file " + d +
                               " is missing or unreadable; commands are refused until "
                               "`agent-boundary reload`");
      for (const auto& d : config.deny_state)
        if (d.enforcement != Enforcement::enforced)
          report.notes.push_back("DEGRADED: deny " + d.path + " is " + to_string(d.enforcement) +
                                 " (" + d.reason + ")");
    } else {
      SessionRequest req;
      req.session_dir = dir;
      req.workdir = resolve_existing_prefix(event.cwd);
      req.backend = hook.backend;
      std::string note;
      const std::string configured = profiles_dir();
      req.profile_name = choose_profile(req.workdir, configured, install, note);
      if (!note.empty()) report.notes.push_back(note);
      req.profiles_dir = configured;
      if (list_profiles(configured).empty())
        req.profiles_dir = fs::path(install.helper_dir).parent_path().parent_path().string() +
                           "/share/agent-boundary/profiles";
#ifndef AB_MUTANT_PLUGIN_READ_ONLY  // mutant (tests/mutation only): harness files writable
      req.extra_installation = harness_protected;
#endif
      const SessionOutcome out = write_session(req, install);
      config = out.config;
      for (const auto& w : out.warnings) report.notes.push_back(w);
    }
    report.session_dir = dir;
    report.agent_boundary_bin = config.agent_boundary;
    report.status_line = describe(config);
    const std::string kubeconfig = dir + "/" + credentials::kKubeconfigFile;
    if (fs::exists(kubeconfig)) report.kubeconfig = kubeconfig;
    // Self-test: the session's own boundary.json must be unreadable from inside.
    if (!config.self_edit) {
      const auto backend = hook.backend_for(config);
      const ProbeResult r = backend->probe(
          ProbeRequest{SessionView{dir, config.workdir, config.backend_executable}, config.workdir,
                       dir + "/" + kBoundaryFile, Access::read, hook.probe_timeout_ms});
      report.enforcement_verified = r.verdict == ProbeResult::Verdict::denied;
      if (!report.enforcement_verified)
        report.notes.push_back("self-test: reading " + dir + "/" + kBoundaryFile +
                               " from inside the boundary was not denied (" + r.detail + ")");
    } else {
      report.notes.push_back("self-test skipped: self_edit lets the sandbox reach its own state");
    }
  } catch (const Error& e) {
    report.session_dir.clear();
    report.status_line = "could not generate a policy: " + e.message() +
                         (e.fix().empty() ? "" : " (" + e.fix() + ")");
  }
  // The reason stays beside the session for the tool calls it blocks; a later start that
  // succeeds clears it. Never a reason to fail the hook.
  try {
    const std::string error_file = start_error_file(dir);
    if (report.session_dir.empty()) {
      make_private_dirs(hook.state_root + "/sessions");
      write_file_atomic(error_file, report.status_line);
    } else {
      std::error_code ec;
      fs::remove(error_file, ec);
    }
  } catch (const std::exception& e) {
    spdlog::debug("cannot record the session start's outcome: {}", e.what());
  }
  return report;
}

SessionStatus lookup_session_status(const std::string& session_id) {
  SessionStatus s;
  try {
    const std::string dir = session_dir_for_id(state_root(), session_id);
    if (dir.empty() || !session_complete(dir)) return s;
    const BoundaryConfig c = read_boundary(dir);
    s.exists = true;
    s.profile = c.profile;
    s.state = c.state;
    s.self_edit = c.self_edit;
  } catch (...) {
    s.exists = false;
  }
  return s;
}

}  // namespace agent_boundary
