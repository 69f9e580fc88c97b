#include "launcher.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "agent_boundary/error.hpp"
#include "credentials/credentials.hpp"
#include "credentials/kubeconfig.hpp"
#include "freeze/tracked_launch.hpp"
#include "paths.hpp"
#include "plugin_loader.hpp"
#include "policy_json.hpp"
#include "secure_file.hpp"
#include "session.hpp"
#include "side_doors.hpp"

extern char** environ;
namespace fs = std::filesystem;

namespace agent_boundary {
namespace {

// Variables that would point tools inside the boundary at credentials the boundary keeps
// out of reach (the session supplies its own where the profile asks for them).
bool dropped_from_child(std::string_view entry) {
  for (std::string_view name : {"AWS_PROFILE=", "AWS_DEFAULT_PROFILE=", "KUBECONFIG="})
    if (entry.starts_with(name)) return true;
  return false;
}

// How long a new command waits for an in-process file tool to finish (freeze.hpp).
constexpr int kTrackedStartWaitMs = 20000;

volatile sig_atomic_t g_child = 0;

extern "C" void forward_to_child(int sig) {
  if (g_child > 0) ::kill(g_child, sig);
}

}  // namespace

LaunchPlan plan_launch(const LaunchRequest& req, const PluginHost& host) {
  if (req.argv.empty()) throw UsageError("no command to run", {}, "pass the command after --");
  if (req.session_dir.empty() || req.session_dir[0] != '/')
    throw UsageError("--session-dir must be an absolute path", req.session_dir);
  const BoundaryConfig cfg = read_boundary(req.session_dir);
  // The pinned policy must still be whole: a damaged session is refused, not half-used.
  const std::string policy_file = req.session_dir + "/" + kPolicyFile;
  const auto policy_text = read_file(policy_file, 16 << 20);
  if (!policy_text)
    throw SessionError("no complete session at " + req.session_dir, req.session_dir,
                       "run `agent-boundary --session-dir " + req.session_dir + " reload`");
  const ResolvedPolicy policy = policy_from_json(*policy_text, policy_file);
  // Every file pinned at creation must still be there: a missing protect.json, rendering or
  // policy would run the command with a weaker boundary than the one reviewed.
  require_pinned_files(req.session_dir, cfg);
  // The plugin loads from the directory pinned at creation, and only if it is still the
  // directory this binary was installed with.
  const std::string trusted = installed_plugin_dir();
  if (resolve_existing_prefix(cfg.plugin_dir) != resolve_existing_prefix(trusted))
    throw SessionError(
        "the session was created by another agent-boundary installation (" + cfg.plugin_dir + ")",
        req.session_dir, "run `agent-boundary reload` with this installation");
  const auto backend = load_backend(cfg.backend_plugin, trusted, host);

  LaunchPlan plan;
  // A missing plan is refused, never read as "nothing to bind".
  const std::string protect_file = req.session_dir + "/" + protect::kProtectFile;
  const auto protect_text = read_file(protect_file, 1 << 20);
#ifdef AB_MUTANT_PINNED_FILES  // mutant (tests/mutation only): a missing plan binds nothing
  if (protect_text) plan.protection = protect::from_json(*protect_text, protect_file);
#else
  if (!protect_text)
    throw SessionError("the session's " + std::string(protect::kProtectFile) + " is missing",
                       protect_file,
                       "run `agent-boundary --session-dir " + req.session_dir + " reload`");
  plan.protection = protect::from_json(*protect_text, protect_file);
#endif
  plan.session_dir = req.session_dir;
  // Only the gate's own probe runs untracked: it is ours, short-lived, and runs while the
  // session's processes are held stopped for the very tool it answers (freeze.hpp).
  plan.tracked = !(req.argv.size() == 3 && req.argv[0] == cfg.helper_dir + "/probe");
  plan.cwd = req.cwd.empty() ? cfg.workdir : absolute_normal(req.cwd, cfg.workdir);
  // A command must start where the boundary lets it look; nono would silently start it in
  // `/` instead.
  const std::string real_cwd = resolve_existing_prefix(plan.cwd);
  const bool cwd_granted =
      std::any_of(policy.grants.begin(), policy.grants.end(), [&](const Grant& g) {
        return g.kind == PathKind::directory && g.access != Access::write &&
               path_within(real_cwd, resolve_existing_prefix(g.path));
      });
  if (!cwd_granted)
    throw SessionError(
        "the working directory " + plan.cwd + " is outside the boundary", plan.cwd,
        "run the command from the workdir " + cfg.workdir + " or a granted directory");
  for (char** e = environ; *e; ++e)
    if (!dropped_from_child(*e)) plan.env.emplace_back(*e);
  // What the launcher sets, by name, for backends whose command does not inherit our env.
  std::vector<std::string> set_names;
  const auto set = [&](const std::string& k, const std::string& v) {
    std::erase_if(plan.env, [&](const std::string& s) { return s.starts_with(k + "="); });
    plan.env.push_back(k + "=" + v);
    if (std::find(set_names.begin(), set_names.end(), k) == set_names.end()) set_names.push_back(k);
  };
  // Host sockets and the caller's secrets stay outside (issue 14); what follows is set after.
  // The variables the profile lets through pass by name like the ones set here.
  for (auto& name : close_side_doors(cfg, *backend, plan)) set_names.push_back(std::move(name));
  // Credentials (no file is read for a session without them) never stop a command:
  // whatever goes wrong is a note on stderr.
  // The hook's probe runs through the launcher only for the mounts: no credential export.
  const char* skip = ::getenv("AGENT_BOUNDARY_SKIP_CREDENTIALS");
  std::erase_if(plan.env, [](const std::string& s) {
    return s.starts_with("AGENT_BOUNDARY_SKIP_CREDENTIALS=");
  });
  if (credentials::wants_credentials(cfg) && !(skip && std::string_view(skip) == "1")) {
    try {
      credentials::Injection injected =
          credentials::prepare_injection(req.session_dir, cfg, plan.env);
      for (const auto& [k, v] : injected.env) set(k, v);
      plan.notes = std::move(injected.notes);
    } catch (const std::exception& e) {
      plan.notes.push_back(std::string("no credentials injected: ") + e.what());
    }
  }
  const std::string kubeconfig = req.session_dir + "/" + credentials::kKubeconfigFile;
  struct stat st {};
  if (::stat(kubeconfig.c_str(), &st) == 0) set("KUBECONFIG", kubeconfig);
  // The profile's own `env:` is the reviewed word: it wins over an injected value.
  for (const auto& [k, v] : cfg.env) set(k, v);

  WrapRequest wrap{SessionView{req.session_dir, cfg.workdir, cfg.backend_executable}, plan.cwd,
                   req.argv, set_names};
  plan.argv = backend->wrap(wrap);
  if (plan.argv.empty() || plan.argv[0].empty() || plan.argv[0][0] != '/')
    throw BackendError("backend `" + cfg.backend + "` returned no absolute command to run");
  spdlog::debug("exec {} (in {})", plan.argv[0], plan.cwd);
  return plan;
}

void exec_plan(const LaunchPlan& plan) {
  for (const auto& note : plan.notes) {
    const std::string line = "agent-boundary: " + note + "\n";
    (void)!::write(2, line.data(), line.size());
  }
  std::vector<char*> argv, envp;
#ifdef AB_MUTANT_CREDENTIALS_ARGV
  // Mutant (tests/mutation only, never installed): a shell that keeps the injected secrets
  // in its own argv for as long as the command runs.
  std::vector<std::string> leaky = {"/bin/sh", "-c", "shift 2; \"$@\"; exit $?", "sh", "-", "-"};
  for (const auto& e : plan.env) {
    if (e.starts_with("AWS_SECRET_ACCESS_KEY=")) leaky[4] = e;
    if (e.starts_with("GH_TOKEN=")) leaky[5] = e;
  }
  leaky.insert(leaky.end(), plan.argv.begin(), plan.argv.end());
  for (const auto& a : leaky) argv.push_back(const_cast<char*>(a.c_str()));
#else
  for (const auto& a : plan.argv) argv.push_back(const_cast<char*>(a.c_str()));
#endif
  argv.push_back(nullptr);
  for (const auto& e : plan.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  // The binds come before the chdir, so a cwd below a bound directory is on the new mount.
  if (!plan.protection.empty()) {
    if (!protect::apply(plan.protection, plan.session_dir)) {
      const std::string line =
          "agent-boundary: DEGRADED: no user namespaces here; paths inside writable "
          "directories are not protected (the profile accepts this)\n";
      (void)!::write(2, line.data(), line.size());
    }
    // An inherited descriptor on a protected file would be a writable alias.
    ::close_range(3, ~0U, 0);
  }
  if (plan.tracked) freeze::enter_tracked(plan.session_dir, kTrackedStartWaitMs);
  if (::chdir(plan.cwd.c_str()) != 0)
    throw SystemError("cannot enter " + plan.cwd + ": " + std::strerror(errno), plan.cwd);
  ::execve(argv[0], argv.data(), envp.data());
  throw SystemError("cannot run " + plan.argv[0] + ": " + std::strerror(errno), plan.argv[0],
                    "reinstall it, then run `agent-boundary reload`");
}

int run_plan(const LaunchPlan& plan) {
  const pid_t pid = ::fork();
  if (pid < 0) throw SystemError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    try {
      exec_plan(plan);
    } catch (const Error& e) {
      const std::string msg = render_error(e);
      (void)!::write(2, msg.data(), msg.size());
    }
    ::_exit(126);
  }
  // The child shares our terminal, so ^C reaches it directly; we ignore it and wait. A
  // SIGTERM or SIGHUP aimed at us is passed on, so the caller can clean up afterwards.
  g_child = pid;
  struct sigaction ign {
  }, fwd{}, old_int{}, old_quit{}, old_term{}, old_hup{};
  ign.sa_handler = SIG_IGN;
  fwd.sa_handler = forward_to_child;
  sigemptyset(&fwd.sa_mask);
  sigaction(SIGINT, &ign, &old_int);
  sigaction(SIGQUIT, &ign, &old_quit);
  sigaction(SIGTERM, &fwd, &old_term);
  sigaction(SIGHUP, &fwd, &old_hup);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
  g_child = 0;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace agent_boundary
