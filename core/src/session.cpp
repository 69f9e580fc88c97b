#include "session.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "agent_boundary/error.hpp"
#include "agent_boundary/host_path.hpp"
#include "agent_boundary/process.hpp"
#include "credentials/aws.hpp"
#include "credentials/credentials.hpp"
#include "credentials/github.hpp"
#include "credentials/kubeconfig.hpp"
#include "credentials/tool_paths.hpp"
#include "paths.hpp"
#include "plugin_loader.hpp"
#include "policy_gen.hpp"
#include "policy_json.hpp"
#include "protect/checkpoint.hpp"
#include "protect/held_state.hpp"
#include "protect/protect.hpp"
#include "secure_file.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using ordered_json = nlohmann::ordered_json;

namespace agent_boundary {
namespace {

constexpr int kSelfTestTimeoutMs = 15000;

std::string recreate_fix(const std::string& dir) {
  return "remove " + dir + " and create the session again (`agent-boundary session create " + dir +
         "`, or restart the agent session)";
}

Enforcement enforcement_from(const std::string& s) {
  if (s == "enforced") return Enforcement::enforced;
  if (s == "weaker") return Enforcement::weaker;
  if (s == "unenforced") return Enforcement::unenforced;
  throw std::invalid_argument("unknown enforcement `" + s + "`");
}

std::string random_suffix() {
  static std::mt19937_64 rng{std::random_device{}()};
  char buf[24];
  std::snprintf(buf, sizeof buf, "%012llx",
                static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
  return buf;
}

// Trusted executables must not be replaceable from inside the boundary.
void check_not_sandbox_writable(const std::string& what, const std::string& path,
                                const ResolvedPolicy& policy) {
  const std::string real = resolve_existing_prefix(path);
  for (const auto& g : policy.grants) {
    if (g.access == Access::read) continue;
    const std::string granted = resolve_existing_prefix(g.path);
    if (path_within(real, granted) || path_within(path, g.path))
      throw SessionError(
          what + " " + path + " lies in " + g.path + ", which the boundary lets the sandbox write",
          g.path,
          "install it outside every writable grant (e.g. under /usr/local) or "
          "narrow the grant");
  }
}

// What agent-boundary and its backend run or load later, by directory: a sandbox that can
// create or replace a file in one of them runs its code outside the boundary next time.
struct CodeDir {
  std::string what;  // e.g. "the plugin directory"
  std::string dir;   // resolved
};

std::vector<CodeDir> code_dirs(const Installation& install, const BackendExecutable& exe,
                               const std::string& aws_cli, const std::string& gh_cli,
                               const std::vector<std::string>& extra_installation) {
  std::vector<CodeDir> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& what, const std::string& dir) {
    if (dir.empty()) return;
    const std::string real = resolve_existing_prefix(dir);
    if (seen.insert(real).second) out.push_back({what, real});
  };
  add("agent-boundary", parent_dir(install.self_exe));
  add("the plugin directory", install.plugin_dir);
  add("the helper directory", install.helper_dir);
  add("the backend executable", parent_dir(exe.path));
  for (const auto& [name, path] : exe.tools) add("the backend's " + name, parent_dir(path));
  if (!aws_cli.empty()) add("the AWS CLI", parent_dir(aws_cli));
  if (!gh_cli.empty()) add("gh", parent_dir(gh_cli));
  for (const auto& p : extra_installation) add("the harness plugin", p);
  return out;
}

// Reading installed code is harmless; writing it is not. check_not_sandbox_writable above
// names the profile grant that would allow it; this asks the enforcement itself, which
// also applies the backend's own grants (nono's /tmp group, ...): the probe creates (and
// removes) a fresh file in each directory from inside the new boundary.
void check_code_dirs_unwritable(const Backend& backend, const SessionView& view,
                                const std::vector<CodeDir>& dirs) {
  for (const auto& d : dirs) {
    const std::string target = d.dir + "/.agent-boundary-write-check-" + random_suffix();
    const ProbeResult r =
        backend.probe({view, view.workdir, target, Access::write, kSelfTestTimeoutMs});
    if (r.verdict == ProbeResult::Verdict::denied) continue;
    if (r.verdict == ProbeResult::Verdict::allowed)
      throw SessionError(
          d.what + " (" + d.dir +
              ") is writable inside this boundary: sandboxed code could replace what "
              "agent-boundary runs outside it",
          d.dir,
          "install agent-boundary and the backend where no sandbox may write (`scripts/install.sh` "
          "puts them in /usr/local as root, ~/.local otherwise; never under /tmp), or narrow the "
          "profile grant that covers " +
              d.dir);
    throw BackendError("cannot check that " + d.what + " (" + d.dir +
                           ") is unwritable inside this boundary: " + r.detail,
                       d.dir, "check the warnings above and that the backend runs on this machine");
  }
}

void self_test(const Backend& backend, const SessionView& view) {
  std::string truth = "/usr/bin/true";
  if (::access(truth.c_str(), X_OK) != 0) truth = "/bin/true";
  WrapRequest req{view, view.workdir, {truth}, {}};
  const std::vector<std::string> argv = backend.wrap(req);
  ProcessOptions opts;
  opts.argv = argv;
  opts.cwd = view.workdir;
  opts.timeout_ms = kSelfTestTimeoutMs;
  const ProcessResult r = run_process(opts);
  if (r.ok()) return;
  std::string why = r.timed_out ? "timed out" : first_line(r.err.empty() ? r.out : r.err, 400);
  if (why.empty()) why = "exit code " + std::to_string(r.exit_code);
  throw BackendError("the backend could not run a command inside this boundary: " + why,
                     view.executable.path,
                     "check the warnings above, the profile's grants, and that the kernel "
                     "supports the backend (e.g. Landlock for nono)");
}

std::vector<std::string> protected_paths_for(const SessionRequest& req,
                                             const Installation& install) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& p) {
    if (!p.empty() && seen.insert(p).second) out.push_back(p);
  };
  add(req.session_dir);
  add(req.profiles_dir);
  add(resolve_existing_prefix(install.plugin_dir));
  add(state_root());
  for (const auto& p : req.extra_protected) add(resolve_existing_prefix(p));
  for (const auto& p : req.extra_installation) add(resolve_existing_prefix(p));
  return out;
}

// Write `files` into `dir` through a sibling staging dir: the self-test runs against the
// staged files, then each file is renamed into place with boundary.json last.
void commit_files(const std::string& dir, const std::vector<RenderedFile>& files,
                  const std::function<void(const std::string& staged_dir)>& verify) {
  const fs::path target(dir);
  make_private_dirs(target.parent_path().string());
  const std::string staging =
      (target.parent_path() / ("." + target.filename().string() + ".new-" + random_suffix()))
          .string();
  if (::mkdir(staging.c_str(), 0700) != 0)
    throw SystemError("cannot create " + staging + ": " + std::strerror(errno), staging);
  try {
    for (const auto& f : files) write_file_atomic(staging + "/" + f.name, f.content);
    verify(staging);
    std::error_code ec;
    if (!fs::exists(target, ec)) {
      if (::rename(staging.c_str(), dir.c_str()) == 0) return;
      if (errno != EEXIST && errno != ENOTEMPTY)
        throw SystemError("cannot create " + dir + ": " + std::strerror(errno), dir);
    }
    if (!fs::is_directory(target, ec))
      throw SessionError("session path exists and is not a directory", dir,
                         "choose another --session-dir");
    for (const auto& f : files) {
      if (f.name == kBoundaryFile) continue;
      fs::rename(staging + "/" + f.name, dir + "/" + f.name);
    }
    fs::rename(staging + "/" + kBoundaryFile, dir + "/" + kBoundaryFile);
    remove_tree(staging);
  } catch (...) {
    remove_tree(staging);
    throw;
  }
}

}  // namespace

Installation Installation::current(const PluginHost& host) {
  Installation i;
  i.self_exe = self_executable();
  i.plugin_dir = installed_plugin_dir();
  i.helper_dir = installed_helper_dir();
  const std::string trusted = i.plugin_dir;
  i.load_backend = [trusted, &host](const std::string& file) {
    return agent_boundary::load_backend(file, trusted, host);
  };
  return i;
}

std::string boundary_to_json(const BoundaryConfig& c) {
  ordered_json j;
  j["format"] = 1;
  j["profile"] = c.profile;
  j["profile_file"] = c.profile_file;
  j["state"] = c.state;
  j["self_edit"] = c.self_edit;
  j["workdir"] = c.workdir;
  j["profiles_dir"] = c.profiles_dir;
  j["protected_paths"] = c.protected_paths;
  j["installation_paths"] = c.installation_paths;
  if (c.aws_profile) j["aws_profile"] = *c.aws_profile;
  if (c.github_push) j["github"] = {{"push", *c.github_push}};
  if (!c.aws_cli.empty() || !c.gh_cli.empty()) {
    j["tools"] = ordered_json::object();
    if (!c.aws_cli.empty()) j["tools"]["aws"] = c.aws_cli;
    if (!c.gh_cli.empty()) j["tools"]["gh"] = c.gh_cli;
  }
  j["env"] = ordered_json::object();
  for (const auto& [k, v] : c.env) j["env"][k] = v;
  if (!c.keep_secret_env.empty()) j["keep_secret_env"] = c.keep_secret_env;
  if (!c.allow_host_sockets.empty()) j["allow_host_sockets"] = c.allow_host_sockets;
  j["backend"] = {{"name", c.backend},
                  {"plugin", c.backend_plugin},
                  {"executable", c.backend_executable.path},
                  {"version", c.backend_executable.version}};
  if (!c.backend_executable.tools.empty()) j["backend"]["tools"] = c.backend_executable.tools;
  j["plugin_dir"] = c.plugin_dir;
  j["helper_dir"] = c.helper_dir;
  j["agent_boundary"] = c.agent_boundary;
  j["warnings"] = c.warnings;
  j["deny_state"] = ordered_json::array();
  for (const auto& d : c.deny_state)
    j["deny_state"].push_back({{"path", d.path},
                               {"origin", d.origin},
                               {"enforcement", to_string(d.enforcement)},
                               {"reason", d.reason}});
  j["pinned_files"] = c.pinned_files;
  return j.dump(2) + "\n";
}

bool session_complete(const std::string& dir) {
  struct stat st {};
  return ::stat((dir + "/" + kBoundaryFile).c_str(), &st) == 0 &&
         ::stat((dir + "/" + kPolicyFile).c_str(), &st) == 0;
}

std::vector<std::string> damaged_pinned_files(const std::string& dir, const BoundaryConfig& c) {
  std::vector<std::string> out;
#ifdef AB_MUTANT_PINNED_FILES
  return out;  // mutant (tests/mutation only, never installed): nothing is ever missing
#endif
  if (c.pinned_files.empty()) {
    out.push_back("the list of pinned files (the session predates it)");
    return out;
  }
  for (const auto& name : c.pinned_files) {
    const std::string path = dir + "/" + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      out.push_back(name + " (" + std::strerror(errno) + ")");
      continue;
    }
    if (!S_ISREG(st.st_mode)) {
      out.push_back(name + " (not a regular file)");
      continue;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
      out.push_back(name + " (" + std::strerror(errno) + ")");
      continue;
    }
    ::close(fd);
  }
  return out;
}

void require_pinned_files(const std::string& dir, const BoundaryConfig& c) {
  const auto damaged = damaged_pinned_files(dir, c);
  if (damaged.empty()) return;
  std::string list;
  for (const auto& d : damaged) list += (list.empty() ? "" : ", ") + d;
  throw SessionError("the session's pinned files are missing or unreadable: " + list +
                         "; commands are refused rather than run with a weaker boundary",
                     dir, "run `agent-boundary --session-dir " + dir + " reload`");
}

BoundaryConfig read_boundary(const std::string& dir) {
  const std::string file = dir + "/" + kBoundaryFile;
  std::optional<std::string> text;
  try {
    text = read_file(file, 1 << 20);
  } catch (const Error& e) {
    throw SessionError("cannot read the session: " + e.message(), file, recreate_fix(dir));
  }
  if (!text)
    throw SessionError("no complete session at " + dir, dir,
                       "create one with `agent-boundary session create " + dir + "`");
  try {
    const json j = json::parse(*text);
    if (j.at("format").get<int>() != 1) throw std::invalid_argument("unsupported format");
    BoundaryConfig c;
    c.profile = j.at("profile").get<std::string>();
    c.profile_file = j.at("profile_file").get<std::string>();
    c.state = j.at("state").get<std::string>();
    c.self_edit = j.at("self_edit").get<bool>();
    c.workdir = j.at("workdir").get<std::string>();
    c.profiles_dir = j.at("profiles_dir").get<std::string>();
    c.protected_paths = j.at("protected_paths").get<std::vector<std::string>>();
    c.installation_paths = j.at("installation_paths").get<std::vector<std::string>>();
    if (j.contains("aws_profile")) c.aws_profile = j.at("aws_profile").get<std::string>();
    if (j.contains("github")) c.github_push = j.at("github").at("push").get<bool>();
    if (j.contains("tools")) {
      const json& t = j.at("tools");
      if (t.contains("aws")) c.aws_cli = t.at("aws").get<std::string>();
      if (t.contains("gh")) c.gh_cli = t.at("gh").get<std::string>();
      for (const std::string* p : {&c.aws_cli, &c.gh_cli})
        if (!p->empty() && (*p)[0] != '/')
          throw std::invalid_argument("a pinned tool is not absolute");
    }
    for (const auto& [k, v] : j.at("env").items()) c.env[k] = v.get<std::string>();
    if (j.contains("keep_secret_env"))
      c.keep_secret_env = j.at("keep_secret_env").get<std::vector<std::string>>();
    if (j.contains("allow_host_sockets"))
      c.allow_host_sockets = j.at("allow_host_sockets").get<std::vector<std::string>>();
    const json& b = j.at("backend");
    c.backend = b.at("name").get<std::string>();
    c.backend_plugin = b.at("plugin").get<std::string>();
    c.backend_executable.path = b.at("executable").get<std::string>();
    c.backend_executable.version = b.at("version").get<std::string>();
    if (b.contains("tools"))
      for (const auto& [k, v] : b.at("tools").items()) {
        c.backend_executable.tools[k] = v.get<std::string>();
        if (c.backend_executable.tools[k].empty() || c.backend_executable.tools[k][0] != '/')
          throw std::invalid_argument("the backend's pinned tool `" + k + "` is not absolute");
      }
    c.plugin_dir = j.at("plugin_dir").get<std::string>();
    c.helper_dir = j.at("helper_dir").get<std::string>();
    c.agent_boundary = j.at("agent_boundary").get<std::string>();
    c.warnings = j.at("warnings").get<std::vector<std::string>>();
    for (const auto& d : j.at("deny_state"))
      c.deny_state.push_back(DenyState{d.at("path").get<std::string>(),
                                       d.at("origin").get<std::string>(),
                                       enforcement_from(d.at("enforcement").get<std::string>()),
                                       d.at("reason").get<std::string>()});
    if (j.contains("pinned_files"))
      for (const auto& f : j.at("pinned_files")) {
        c.pinned_files.push_back(f.get<std::string>());
        const std::string& name = c.pinned_files.back();
        if (name.empty() || name.find('/') != std::string::npos || name[0] == '.')
          throw std::invalid_argument("a pinned file name is not a plain name");
      }
    if (c.state != "on" && c.state != "off")
      throw std::invalid_argument("state must be \"on\" or \"off\"");
    for (const std::string* p : {&c.workdir, &c.backend_plugin, &c.backend_executable.path,
                                 &c.agent_boundary, &c.plugin_dir})
      if (p->empty() || (*p)[0] != '/')
        throw std::invalid_argument("a pinned path is not absolute");
    return c;
  } catch (const std::exception& e) {
    throw SessionError(std::string("corrupt boundary.json: ") + e.what(), file, recreate_fix(dir));
  }
}

SessionOutcome write_session(const SessionRequest& req, const Installation& install) {
  if (req.state != "on" && req.state != "off")
    throw UsageError("state must be `on` or `off`, not `" + req.state + "`");
  if (req.session_dir.empty() || req.session_dir[0] != '/')
    throw UsageError("the session dir must be absolute", req.session_dir);

  struct stat wd {};
  if (::stat(req.workdir.c_str(), &wd) != 0 || !S_ISDIR(wd.st_mode))
    throw SessionError("the workdir " + req.workdir + " does not exist (any more)", req.workdir,
                       "create it again, or create a new session for another workdir");
  const std::string profile_file = find_profile(req.profiles_dir, req.profile_name);
  const Profile profile = load_profile_file(profile_file);
  const std::string backend_name = !req.backend.empty() ? req.backend
                                   : profile.backend    ? *profile.backend
                                                        : "nono";
  const std::string plugin = plugin_file(install.plugin_dir, PluginKind::backend, backend_name);
  const std::shared_ptr<Backend> backend = install.load_backend(plugin);
  const BackendExecutable exe = backend->locate("");
  spdlog::debug("backend {} at {} (version {})", backend_name, exe.path, exe.version);
  backend->preflight(exe);

  // Credential tools are pinned now, by absolute path; only those the profile asks for.
  std::vector<std::string> credential_warnings;
  std::string aws_cli, gh_cli;
  if (profile.aws_profile) {
    std::string problem;
    aws_cli = credentials::find_aws_cli(problem);
    if (aws_cli.empty())
      credential_warnings.push_back("aws.profile: " + problem + "; no AWS credentials");
  }
  if (profile.github_push.value_or(false)) {
    std::string problem;
    gh_cli = credentials::find_gh_cli(problem);
    if (gh_cli.empty())
      credential_warnings.push_back("github.push: " + problem + "; no GitHub token");
  }
  const std::string session_root = state_root();
  const credentials::KubeconfigResult kube =
      credentials::session_kubeconfig(profile, aws_cli, session_root);
  const std::string kubeconfig = req.session_dir + "/" + credentials::kKubeconfigFile;

  GenerationContext ctx;
  ctx.workdir = req.workdir;
  ctx.protected_paths = protected_paths_for(req, install);
  // The installation is never granted, even with self_edit (a writable plugin or binary
  // would run the agent's code outside the boundary on the next hook), nor denied: reading
  // it is harmless, and a backend may not be able to deny it inside a system grant such as
  // /usr/local/lib. That no sandbox can write it is checked below.
  ctx.installation_paths = {resolve_existing_prefix(install.plugin_dir)};
  for (const auto& p : req.extra_installation)
    ctx.installation_paths.push_back(resolve_existing_prefix(p));
  ctx.state_root = session_root;
  // The session kubeconfig is readable inside, although the session dir is denied (and
  // exempt from the backend's own kubeconfig denies).
  if (kube.yaml) ctx.readable_protected.push_back(kubeconfig);
  if (req.whole_agent && profile.self_edit)
    throw SessionError("profile `" + req.profile_name +
                           "` has self_edit, which whole-agent mode refuses: the agent could "
                           "rewrite the boundary it runs in",
                       profile_file, "use a profile without self_edit");
  ctx.extra_grants = req.extra_grants;
  GenerationResult gen = generate_policy(profile, ctx);
  ResolvedPolicy& policy = gen.policy;
  for (const auto& w : credential_warnings) gen.warnings.push_back(w);
  for (const auto& w : kube.warnings) gen.warnings.push_back("kube: " + w);

  check_not_sandbox_writable("the backend executable", exe.path, policy);
  for (const auto& [name, path] : exe.tools) {
    if (path.empty() || path[0] != '/')
      throw BackendError("the backend pinned `" + name + "` without an absolute path", path);
    check_not_sandbox_writable("the backend's " + name, path, policy);
  }
  check_not_sandbox_writable("agent-boundary", install.self_exe, policy);
  check_not_sandbox_writable("the plugin directory", install.plugin_dir, policy);
  check_not_sandbox_writable("the helper directory", install.helper_dir, policy);
#ifndef __linux__
  // Linux holds a harness plugin read-only where a writable grant covers it (the Claude
  // plugin read in place from the checkout the agent works in: protect's `installation`);
  // the write probe after the self-test still refuses one the sandbox could change.
  for (const auto& p : req.extra_installation)
    check_not_sandbox_writable("the harness plugin", p, policy);
#endif
  // The exporters run outside the boundary with the user's credentials.
  if (!aws_cli.empty()) check_not_sandbox_writable("the AWS CLI", aws_cli, policy);
  if (!gh_cli.empty()) check_not_sandbox_writable("gh", gh_cli, policy);

  // Linux: paths inside writable directories the boundary holds anyway (git hooks and
  // config, agent settings, profile denies). A backend that holds them itself gets the list
  // in the policy; for one that cannot, the launcher's read-only binds hold them.
  protect::ProtectPlan protection;
  protect::HeldState held;  // what is held, by group, and the checkpoint's inputs
  bool protection_live = false;
  const bool backend_holds = backend->holds_paths();
#ifdef __linux__
  const protect::PlanOptions hold_options{.git = !profile.allow_git_hook_escape,
                                          .agent_settings = !profile.allow_agent_settings_escape,
                                          .submodules = !profile.allow_submodule_escape,
                                          .tool_config = !profile.allow_tool_config_escape,
                                          .home = {},
                                          .installation = ctx.installation_paths,
                                          .held = req.extra_held};
  const std::vector<std::string> writable = protect::writable_dirs(policy);
  protection = protect::compute_plan(policy, req.workdir, writable, hold_options);
  protection.accept_unprotected = profile.accept_unprotected_denies;
  for (const auto& n : protection.notes) gen.warnings.push_back(n);
  if (!protection.empty()) protect::prepare(protection);
  held = protect::make_held_state(protection, writable, req.workdir, hold_options);
  if (backend_holds && !protection.empty()) {
    policy.held = protect::held_paths(protection);
    protection = {};
  }
  if (!protection.empty()) {
    std::string why;
    protection_live = protect::namespaces_available(why);
    if (!protection_live && !profile.accept_unprotected_denies)
      throw SessionError(
          "git hooks and config, agent settings and denies inside writable directories cannot "
          "be protected: " +
              why,
          req.workdir,
          "enable user namespaces (`sysctl kernel.unprivileged_userns_clone=1`, "
          "`sysctl user.max_user_namespaces=15000`, or on Ubuntu "
          "`sysctl kernel.apparmor_restrict_unprivileged_userns=0`), or accept the weaker "
          "boundary with `accept_unprotected_denies: true` in the profile");
    if (!protection_live)
      gen.warnings.push_back("protection of paths inside writable directories is OFF (" + why +
                             "; the profile accepts it)");
  }
  // The command's own processes in /proc (runtimes, build tools and `ps` read /proc/self),
  // and nobody else's: granted only where the launcher gives it a PID namespace and a /proc
  // of its own. Other processes' /proc entries (their environment) stay out of reach.
  if (!backend_holds) {
    std::string why;
    if (protection_live || (protection.empty() && protect::namespaces_available(why))) {
      protection.private_proc = true;
      policy.grants.push_back({"/proc", Access::read, PathKind::directory, false, "private-proc"});
    }
  }
#endif

  BoundaryConfig config;
  config.deny_state = backend->deny_state(policy, exe);
  if (protection_live)
    for (auto& d : config.deny_state) {
      if (d.enforcement != Enforcement::unenforced ||
          std::find(protection.covered_denies.begin(), protection.covered_denies.end(), d.path) ==
              protection.covered_denies.end())
        continue;
      d.enforcement = Enforcement::enforced;
      d.reason = protect::coverage(protection, d.path);
    }
  for (const auto& d : config.deny_state) {
    if (d.enforcement == Enforcement::enforced) continue;
    if (d.origin == "self-protection" && d.enforcement == Enforcement::unenforced)
      throw SessionError("the backend `" + backend_name + "` cannot deny " + d.path +
                             " to the sandbox: " + d.reason,
                         d.path,
                         "agent-boundary's own state must stay out of reach; narrow the grant "
                         "that covers it, or use a session dir outside every grant");
    gen.warnings.push_back("deny of " + d.path + " is " + to_string(d.enforcement) + " with " +
                           backend_name + ": " + d.reason);
  }

  config.profile = req.profile_name;
  config.profile_file = profile_file;
  config.state = req.state;
  config.self_edit = profile.self_edit;
  config.workdir = req.workdir;
  config.profiles_dir = req.profiles_dir;
  config.protected_paths = ctx.protected_paths;
  config.installation_paths = ctx.installation_paths;
  config.aws_profile = profile.aws_profile;
  config.github_push = profile.github_push;
  config.aws_cli = aws_cli;
  config.gh_cli = gh_cli;
  config.env = policy.env;
  for (const auto& name : profile.keep_secret_env) config.keep_secret_env.push_back(name.raw);
  // A socket entry is a variable name (looked up at each launch) or a path, expanded once.
  const PathVars socket_vars = path_vars(req.workdir);
  for (const auto& entry : profile.allow_host_sockets) {
    if (entry.raw.find('/') == std::string::npos && entry.raw[0] != '~' && entry.raw[0] != '$') {
      config.allow_host_sockets.push_back(entry.raw);
      continue;
    }
    try {
      config.allow_host_sockets.push_back(expand_path(entry.raw, socket_vars));
    } catch (const ProfileError& e) {
      throw ProfileError(e.message(), entry.pos.str(), e.fix());
    }
  }
  config.backend = backend_name;
  config.backend_plugin = plugin;
  config.plugin_dir = install.plugin_dir;
  config.helper_dir = install.helper_dir;
  config.backend_executable = exe;
  config.agent_boundary = install.self_exe;
  config.warnings = gen.warnings;

  SessionView view{req.session_dir, req.workdir, exe};
  std::vector<RenderedFile> files = backend->render(policy, view);
  for (const auto& f : files)
    if (f.name.empty() || f.name.find('/') != std::string::npos || f.name == kBoundaryFile ||
        f.name == kPolicyFile || f.name[0] == '.' || f.name == credentials::kKubeconfigFile ||
        f.name == credentials::kAwsFile || f.name == credentials::kGithubFile ||
        f.name == credentials::kLockFile || f.name == protect::kProtectFile ||
        f.name == protect::kMaskFile || f.name == protect::kHeldFile ||
        f.name == protect::kIndexCacheFile)
      throw BackendError("backend rendered an invalid file name `" + f.name + "`");
  if (kube.yaml) files.push_back({credentials::kKubeconfigFile, *kube.yaml});
  files.push_back({protect::kProtectFile, protect::to_json(protection)});
  files.push_back({protect::kMaskFile, ""});
  files.push_back({protect::kHeldFile, protect::to_json(held)});
  files.push_back({kPolicyFile, policy_to_json(policy)});
  for (const auto& f : files) config.pinned_files.push_back(f.name);
  files.push_back({kBoundaryFile, boundary_to_json(config)});

  spdlog::debug("policy: {} grants, {} denies", policy.grants.size(), policy.denies.size());
  commit_files(req.session_dir, files, [&](const std::string& staged) {
    SessionView staged_view = view;
    staged_view.session_dir = staged;
    backend->start(staged_view);
    try {
      self_test(*backend, staged_view);
#ifndef AB_MUTANT_INSTALLED_CODE_UNWRITABLE
      std::vector<CodeDir> dirs = code_dirs(install, exe, aws_cli, gh_cli, req.extra_installation);
      // A directory the launcher's read-only binds hold (the Claude plugin read in place from
      // the checkout) is held for every command and probe, which go through the launcher;
      // the backend's bare probe here cannot see those binds.
      if (protection_live)
        std::erase_if(dirs, [&](const CodeDir& d) {
          return std::any_of(
              protection.mounts.begin(), protection.mounts.end(),
              [&](const protect::MountOp& m) { return !m.pin && !m.mask && m.path == d.dir; });
        });
      check_code_dirs_unwritable(*backend, staged_view, dirs);
#endif
    } catch (...) {
      try {
        backend->stop(staged_view);  // a session that does not land keeps nothing running
      } catch (const std::exception& e) {
        spdlog::warn("{}", e.what());
      }
      throw;
    }
  });
  // What the new profile no longer asks for goes: no secret outlives its request.
  if (!kube.yaml) ::unlink(kubeconfig.c_str());
  credentials::remove_unrequested(req.session_dir, config);
  return {config, gen.warnings};
}

SessionOutcome regenerate_session(const std::string& dir, const std::optional<std::string>& profile,
                                  const Installation& install) {
  const BoundaryConfig old = read_boundary(dir);
  SessionRequest req;
  req.session_dir = dir;
  req.profile_name = profile ? *profile : old.profile;
  req.profiles_dir = old.profiles_dir;
  req.workdir = old.workdir;
  req.backend = old.backend;
  req.state = old.state;
  // Protections pinned at creation stay (a harness may have added its plugin root).
  for (const auto& p : old.protected_paths) {
    const bool installation =
        std::find(old.installation_paths.begin(), old.installation_paths.end(), p) !=
        old.installation_paths.end();
    (installation ? req.extra_installation : req.extra_protected).push_back(p);
  }
  return write_session(req, install);
}

std::string stop_session(const std::string& dir, const Installation& install) {
  try {
    if (!session_complete(dir)) return {};
    const BoundaryConfig c = read_boundary(dir);
    if (resolve_existing_prefix(c.plugin_dir) != resolve_existing_prefix(install.plugin_dir))
      return "the session " + dir + " belongs to another installation (" + c.plugin_dir + ")";
    install.load_backend(c.backend_plugin)->stop(SessionView{dir, c.workdir, c.backend_executable});
    return {};
  } catch (const Error& e) {
    return e.message();
  } catch (const std::exception& e) {
    return e.what();
  }
}

BoundaryConfig set_session_state(const std::string& dir, const std::string& state) {
  if (state != "on" && state != "off") throw UsageError("state must be `on` or `off`");
  BoundaryConfig c = read_boundary(dir);
#ifdef AB_MUTANT_TOGGLE_STATE  // mutant (tests/mutation only): `on` is not written back
  if (state == "on") return c;
#endif
  c.state = state;
  write_file_atomic(dir + "/" + kBoundaryFile, boundary_to_json(c));
  return c;
}

std::string describe(const BoundaryConfig& c) {
  std::string s = "profile " + c.profile + " state " + c.state;
  if (c.self_edit) s += " SELF-EDIT (soft boundary: the agent can switch or disable it)";
  return s;
}

}  // namespace agent_boundary
