#include "protect/protect.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <nlohmann/json.hpp>

#include "agent_boundary/error.hpp"
#include "agent_boundary/host_path.hpp"
#include "git/git_locations.hpp"
#include "git_dir.hpp"
#include "paths.hpp"
#include "protect/held_list.hpp"
#include "protect/nested_walk.hpp"
#include "secure_file.hpp"
#include "userns.hpp"

namespace agent_boundary::protect {
namespace {

using json = nlohmann::json;

bool exists(const std::string& p, struct stat& st) { return ::lstat(p.c_str(), &st) == 0; }

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::size_t depth(const std::string& p) { return std::count(p.begin(), p.end(), '/'); }

// The outermost writable grant holding `path`, or empty.
std::string outermost(const std::string& path, const std::vector<std::string>& writable) {
  std::string best;
  for (const auto& w : writable)
    if (path_within(path, w) && (best.empty() || w.size() < best.size())) best = w;
  return best;
}

struct Builder {
  const std::vector<std::string>& writable;
  ProtectPlan plan;
  std::string key;  // the held group being added

  void add_mount(const std::string& path, bool pin) {
    for (auto& m : plan.mounts)
      if (m.path == path) {
        if (m.pin && !pin) m.key = key;
        m.pin = m.pin && pin;  // protection wins over a pin
        return;
      }
    plan.mounts.push_back({path, pin, false, pin ? std::string() : key});
  }
  // Like protect(), for paths the project may legitimately have made a symlink or hard
  // link: those cannot be held (prepare() would refuse the session), so they are left
  // out with a note. An absent file is watched instead (when `watch`).
  void hold(const std::string& path, bool dir, bool watch, const char* placeholder = nullptr) {
    if (outermost(path, writable).empty()) return;
    struct stat st {};
    if (!exists(path, st)) {
      if (!dir && !placeholder) {
        if (watch) plan.watched.push_back({path, key});
        return;
      }
    } else if (S_ISLNK(st.st_mode)) {
      plan.notes.push_back(path +
                           " is not held (a symlink; replace it with its target to hold it)");
      return;
    } else if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
      plan.notes.push_back(path + " is not held (it has hard links)");
      return;
    } else if (S_ISDIR(st.st_mode) && has_linked_file(path)) {
      plan.notes.push_back(path + " is not held (a file in it has hard links)");
      return;
    }
    protect(path, placeholder, dir);
  }
  static bool has_linked_file(const std::string& dir) {
    DIR* d = ::opendir(dir.c_str());
    if (!d) return false;
    bool linked = false;
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      struct stat st {};
      if (::lstat((dir + "/" + e->d_name).c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
          st.st_nlink > 1)
        linked = true;
    }
    ::closedir(d);
    return linked;
  }
  // Pin every directory strictly below the outermost writable grant down to `dir`.
  void pin_chain(const std::string& top, const std::string& dir) {
    for (std::string d = dir; d.size() > top.size() && path_within(d, top); d = parent_dir(d))
      add_mount(d, true);
  }
  // Protect `path` (read-only) if a writable grant holds it. `placeholder`: content to
  // create when absent (nullptr: leave absent paths alone).
  bool protect(const std::string& path, const char* placeholder, bool dir = false) {
    const std::string top = outermost(path, writable);
    if (top.empty() || path == top) return false;
    struct stat st {};
    if (!exists(path, st)) {
      if (dir) {
        if (!is_dir(parent_dir(path)) && !planned_dir(parent_dir(path))) return false;
        plan.dirs_to_create.push_back(path);
      } else {
        if (!placeholder) return false;
        if (!is_dir(parent_dir(path)) && !planned_dir(parent_dir(path))) return false;
        plan.placeholders.push_back({path, placeholder});
      }
    }
    pin_chain(top, parent_dir(path));
    add_mount(path, false);
    return true;
  }
  bool planned_dir(const std::string& d) const {
    return std::find(plan.dirs_to_create.begin(), plan.dirs_to_create.end(), d) !=
           plan.dirs_to_create.end();
  }
};

// What exists below the root at creation (nested_walk.hpp), held in its group like the
// root's. Absent entries there are not created: every subdirectory would get an empty
// `.vscode`; the checkpoint moves aside those that appear (checkpoint.hpp). A nested
// repository's hooks directory is the exception (created when absent, as `git init`
// would): a hook planted there runs at the user's next `git commit` in it.
void hold_nested(Builder& b, const std::string& workdir, const PlanOptions& options) {
  for (const auto& n :
       nested_configs(workdir, options.tool_config, options.agent_settings, options.submodules)) {
    b.key = info(n.group).key;
    if (n.group != HeldGroup::submodules) {
      b.plan.nested_present.push_back(n.path);
      b.hold(n.path, n.dir, false);
      continue;
    }
    const std::string g = git::git_dir_of(n.path);
    if (g.empty()) continue;
    b.hold(g + "/config", false, false);
    b.hold(g + "/hooks", true, false);
    b.hold(g + "/config.worktree", false, false);
  }
}

}  // namespace

std::vector<std::string> writable_dirs(const ResolvedPolicy& policy) {
  std::vector<std::string> out;
  for (const auto& g : policy.grants)
    if (g.kind == PathKind::directory && g.access != Access::read)
      out.push_back(resolve_existing_prefix(g.path));
  return out;
}

ProtectPlan compute_plan(const ResolvedPolicy& policy, const std::string& workdir_in,
                         const std::vector<std::string>& writable, const PlanOptions& options_in) {
  PlanOptions options = options_in;
#ifdef AB_MUTANT_PLANTS
  options.submodules = options.tool_config = false;  // mutant (tests/mutation only)
  const bool project_git_locations = false;
#else
  const bool project_git_locations = true;
#endif
  Builder b{writable, {}, {}};
  const std::string workdir = resolve_existing_prefix(workdir_in);
  const auto git = options.git ? find_git_layout(workdir) : std::nullopt;
  if (git) {
    b.key = info(HeldGroup::git).key;
    const std::string& common = git->common_dir;
    b.protect(common + "/hooks", nullptr, true);
    b.protect(common + "/config", nullptr);
    b.protect(common + "/commondir", ".\n");
    if (git->linked_worktree) {
      b.protect(git->top + "/.git", nullptr);
    }
    // Every linked worktree's admin files: the sandbox can write the whole common dir.
    const std::string admin = common + "/worktrees";
    if (DIR* d = ::opendir(admin.c_str())) {
      std::vector<std::string> names;
      while (const dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
          names.emplace_back(e->d_name);
      ::closedir(d);
      std::sort(names.begin(), names.end());
      for (const auto& n : names) {
        if (!is_dir(admin + "/" + n)) continue;
        b.protect(admin + "/" + n + "/commondir", nullptr);
        b.protect(admin + "/" + n + "/gitdir", nullptr);
      }
    }
    // Where the project points git: its hooks path (created when absent, so a hook
    // cannot be added), included config files and config.worktree (empty placeholders:
    // git reads an empty config as no config).
    const std::string home = options.home.empty() ? home_dir() : options.home;
    const git::ConfigLocations where =
        project_git_locations ? git::config_locations(*git, home) : git::ConfigLocations{};
    for (const auto& d : where.hooks_dirs) b.hold(resolve_existing_prefix(d), true, false);
    for (const auto& f : where.include_files) b.hold(resolve_existing_prefix(f), false, false, "");
    for (const auto& f : where.worktree_configs)
      b.hold(f, false, false, where.worktree_config ? "" : nullptr);
  }
  // Agent settings decide which plugins and hooks run outside the boundary. The whole
  // directory is bound read-only (created when absent): a directory-level bind also covers
  // absent files and survives a host-side atomic save of a file in it.
  b.key = info(HeldGroup::agent_settings).key;
  if (options.agent_settings) b.protect(workdir + "/.claude", nullptr, true);
  // Submodules' git dirs, and the `.git` of every gitlink (its config is read by host git's
  // `git status`). Git dirs that appear later are the checkpoint's (checkpoint.hpp).
  const auto repo = find_git_layout(workdir);
  if (options.submodules && repo) {
    b.key = info(HeldGroup::submodules).key;
    b.hold(repo->top + "/.gitmodules", false, false);
    // A linked worktree keeps its submodules' git dirs in its own admin dir.
    std::vector<std::string> nested = git::module_git_dirs(repo->common_dir);
    if (repo->git_dir != repo->common_dir)
      for (const auto& m : git::module_git_dirs(repo->git_dir)) nested.push_back(m);
    try {
      for (const auto& dot_git :
           git::gitlink_dot_gits(repo->git_dir, repo->top, git::hash_len(repo->common_dir))) {
        struct stat st {};
        if (::lstat(dot_git.c_str(), &st) == 0 && S_ISREG(st.st_mode))
          b.hold(dot_git, false, false);
        else if (S_ISDIR(st.st_mode))
          nested.push_back(dot_git);
      }
    } catch (const Error& e) {
      b.plan.notes.push_back("gitlinks not held: " + e.message());
    }
    for (const auto& g : nested) {
      b.hold(g + "/config", false, false);
      b.hold(g + "/hooks", true, false);
      b.hold(g + "/config.worktree", false, false);
    }
  }
  if (options.tool_config) {
    b.key = info(HeldGroup::tool_config).key;
    for (const auto& t : tool_configs()) {
      const std::string p = workdir + "/" + t.path;
      // `.github/hooks` needs `.github` first; an absent parent is created (empty).
      const std::string parent = parent_dir(p);
      if (t.dir && parent != workdir && !is_dir(parent)) {
        if (!outermost(parent, b.writable).empty() && !b.planned_dir(parent))
          b.plan.dirs_to_create.push_back(parent);
      }
      b.hold(p, t.dir, true);
    }
  }
  hold_nested(b, workdir, options);
  b.key.clear();
  for (const auto& h : options.held)
    b.protect(h.path, h.placeholder.c_str(), h.kind == PathKind::directory);
  for (const auto& deny : policy.denies) {
    if (deny.origin != "profile") continue;
    const std::string real = resolve_existing_prefix(deny.path);
    if (outermost(real, b.writable).empty()) continue;
    const bool inside_protected =
        std::any_of(b.plan.mounts.begin(), b.plan.mounts.end(),
                    [&](const MountOp& m) { return !m.pin && path_within(real, m.path); });
    struct stat st {};
    const bool present = exists(real, st);
    if (inside_protected && !present) {
      b.plan.covered_denies.push_back(deny.path);  // creation is refused by the parent's bind
    } else if (b.protect(real, "")) {
      // A deny also hides the content: an existing path is masked (an absent one gets an
      // empty placeholder, which hides nothing).
      if (present)
        for (auto& m : b.plan.mounts)
          if (m.path == real) m.mask = true;
      b.plan.covered_denies.push_back(deny.path);
    } else if (inside_protected && present) {
      b.plan.mounts.push_back({real, false, true, {}});
      b.plan.covered_denies.push_back(deny.path);
    }
  }
  // Installed code inside a writable grant: readable (it is no secret) but never writable,
  // since a hook runs it outside the boundary later.
  for (const auto& path : options.installation) {
    const std::string real = resolve_existing_prefix(path);
    struct stat st {};
    if (!exists(real, st) || outermost(real, b.writable).empty()) continue;
    if (!b.protect(real, nullptr, S_ISDIR(st.st_mode))) continue;
    for (const auto& deny : policy.denies)  // a self-protection deny it stands for is covered
      if (deny.origin == "self-protection" && resolve_existing_prefix(deny.path) == real)
        b.plan.covered_denies.push_back(deny.path);
  }
  std::stable_sort(
      b.plan.mounts.begin(), b.plan.mounts.end(),
      [](const MountOp& x, const MountOp& y) { return depth(x.path) < depth(y.path); });
  return b.plan;
}

void prepare(const ProtectPlan& plan) {
  for (const auto& d : plan.dirs_to_create)
    if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST)
      throw SessionError("cannot create " + d + ": " + std::strerror(errno), d);
  for (const auto& p : plan.placeholders) {
    struct stat st {};
    if (exists(p.path, st)) continue;
    const int fd =
        ::open(p.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno != EEXIST)
      throw SessionError("cannot create the placeholder " + p.path + ": " + std::strerror(errno),
                         p.path);
    if (fd >= 0) {
      (void)!::write(fd, p.content.data(), p.content.size());
      ::close(fd);
    }
  }
  const auto check = [](const std::string& p) {
    struct stat st {};
    if (!exists(p, st)) return;
    if (S_ISLNK(st.st_mode))
      throw SessionError("the protected path " + p + " is a symlink", p,
                         "replace it with the file it points to (a read-only bind would land on "
                         "the target, and the link could be swapped)");
    if (S_ISREG(st.st_mode) && st.st_nlink > 1)
      throw SessionError("the protected file " + p + " has " + std::to_string(st.st_nlink) +
                             " hard links, which would stay writable aliases",
                         p, "copy it over itself (`cp --remove-destination`) to break the links");
  };
  for (const auto& m : plan.mounts) {
    check(m.path);
    if (m.pin || !is_dir(m.path)) continue;
    if (DIR* d = ::opendir(m.path.c_str())) {
      std::vector<std::string> names;
      while (const dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') names.push_back(m.path + "/" + e->d_name);
      ::closedir(d);
      for (const auto& n : names) {
        struct stat st {};
        if (exists(n, st) && S_ISREG(st.st_mode) && st.st_nlink > 1) check(n);
      }
    }
  }
}

std::vector<HeldPath> held_paths(const ProtectPlan& plan) {
  std::vector<HeldPath> out;
  for (const auto& m : plan.mounts) {
    if (m.pin) continue;
    out.push_back({m.path, is_dir(m.path) ? PathKind::directory : PathKind::file,
                   m.mask ? HeldPath::Hold::hidden : HeldPath::Hold::read_only});
  }
  return out;
}

std::string coverage(const ProtectPlan& plan, const std::string& path_in) {
  const std::string path = resolve_existing_prefix(path_in);
  const MountOp* best = nullptr;
  for (const auto& m : plan.mounts)
    if (!m.pin && path_within(path, m.path) && (!best || m.path.size() > best->path.size()))
      best = &m;
  if (!best) return {};
  const std::string base = "agent-boundary mount protection: ";
  if (best->path != path)
    return base + "the directory " + best->path +
           " is bound read-only (writes and creation refused, reads allowed)";
  struct stat st {};
  const bool dir = ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  if (dir && best->mask) return base + "hidden under an empty read-only directory";
  if (dir) return base + "the directory is bound read-only (writes refused, reads allowed)";
  return base +
         (best->mask ? "hidden under an empty read-only file" : "read-only empty placeholder") +
         " (file-level bind: a host-side replace of the file drops it for running commands)";
}

bool masked(const ProtectPlan& plan, const std::string& path) {
  return std::any_of(plan.mounts.begin(), plan.mounts.end(),
                     [&](const MountOp& m) { return m.mask && path_within(path, m.path); });
}

std::string to_json(const ProtectPlan& plan) {
  json j;
  j["version"] = 1;
  j["accept_unprotected_denies"] = plan.accept_unprotected;
  j["private_proc"] = plan.private_proc;
  j["mounts"] = json::array();
  for (const auto& m : plan.mounts)
    j["mounts"].push_back(
        {{"path", m.path}, {"kind", m.pin ? "pin" : (m.mask ? "mask" : "protect")}});
  j["placeholders"] = json::array();
  for (const auto& p : plan.placeholders) j["placeholders"].push_back(p.path);
  j["covered_denies"] = plan.covered_denies;
  return j.dump(2) + "\n";
}

ProtectPlan from_json(const std::string& text, const std::string& where) {
  ProtectPlan plan;
  try {
    const json j = json::parse(text);
    if (j.at("version").get<int>() != 1) throw std::runtime_error("unknown version");
    plan.accept_unprotected = j.at("accept_unprotected_denies").get<bool>();
    plan.private_proc = j.value("private_proc", false);
    for (const auto& m : j.at("mounts")) {
      const std::string path = m.at("path").get<std::string>();
      const std::string kind = m.at("kind").get<std::string>();
      if (path.empty() || path[0] != '/' || (kind != "pin" && kind != "protect" && kind != "mask"))
        throw std::runtime_error("bad mount entry");
      plan.mounts.push_back({path, kind == "pin", kind == "mask", {}});
    }
    for (const auto& p : j.at("placeholders"))
      plan.placeholders.push_back({p.get<std::string>(), {}});
    plan.covered_denies = j.at("covered_denies").get<std::vector<std::string>>();
  } catch (const std::exception& e) {
    throw SessionError(std::string("corrupt protection plan: ") + e.what(), where,
                       "run `agent-boundary reload`");
  }
  return plan;
}

namespace {

// 0 on success, else errno; `step` names what failed.
int enter_namespaces(bool root, const char*& step) {
  if (root) {
    step = "unshare(CLONE_NEWNS)";
    return ::unshare(CLONE_NEWNS) == 0 ? 0 : errno;
  }
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  // Already in a user namespace of our own (the tracked PID namespace's, freeze/): a mount
  // namespace there is enough, and must be owned by that user namespace so the private
  // /proc of that PID namespace can be mounted in it.
  if (::unshare(CLONE_NEWNS) == 0) return 0;
  step = "unshare(CLONE_NEWUSER|CLONE_NEWNS)";
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return errno;
  step = "writing the user namespace's id maps";
  if (!map_ids_to_self(uid, gid)) return errno ? errno : EPERM;
  return 0;
}

// Root's second user+mount namespace: every mount above becomes locked. 0 or errno.
int enter_lock_layer() {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return errno;
  // Only a self-map is allowed from inside: root keeps uid 0, other owners show as the
  // overflow id there.
  if (!map_ids_to_self(0, 0)) return errno ? errno : EPERM;
  return 0;
}

volatile sig_atomic_t g_forward_to = 0;

extern "C" void protect_forward_signal(int sig) {
  if (g_forward_to > 0) ::kill(g_forward_to, sig);
}

// Waits for `child` and exits with its status (128 + N for a signal), forwarding the
// termination signals to it and reaping every other process (PID 1 must).
[[noreturn]] void supervise(pid_t child) {
  g_forward_to = child;
  struct sigaction sa {};
  sa.sa_handler = protect_forward_signal;
  sigemptyset(&sa.sa_mask);
  for (const int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2})
    ::sigaction(sig, &sa, nullptr);
  for (;;) {
    int status = 0;
    const pid_t p = ::waitpid(-1, &status, 0);
    if (p < 0) {
      if (errno == EINTR) continue;
      ::_exit(127);
    }
    if (p != child) continue;
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
}

// A new PID namespace with its own /proc. Returns in the process that goes on to exec the
// command; the two processes above it (outside, and PID 1 inside) only wait and forward
// signals. Both die with their parent, so nothing outlives the command's launcher, and
// whatever the command leaves behind dies with PID 1.
void enter_private_proc(bool own_pid_namespace) {
  const auto fail = [](const char* what) {
    throw SystemError(
        std::string("cannot give the command its own /proc: ") + what + ": " + std::strerror(errno),
        "/proc", "report this kernel's behaviour");
  };
  if (own_pid_namespace) {
    if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
      fail("mount proc");
    return;
  }
  if (::unshare(CLONE_NEWPID) != 0) fail("unshare(CLONE_NEWPID)");
  const pid_t init = ::fork();
  if (init < 0) fail("fork");
  if (init > 0) supervise(init);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    fail("mount proc");
  const pid_t command = ::fork();
  if (command < 0) fail("fork");
  if (command > 0) supervise(command);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
}

unsigned long locked_flags(const std::string& path) {
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) != 0) return 0;
  unsigned long f = 0;
  if (vfs.f_flag & ST_NOSUID) f |= MS_NOSUID;
  if (vfs.f_flag & ST_NODEV) f |= MS_NODEV;
  if (vfs.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
  if (vfs.f_flag & ST_NOATIME) f |= MS_NOATIME;
  if (vfs.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (vfs.f_flag & ST_RELATIME) f |= MS_RELATIME;
  return f;
}

}  // namespace

bool namespaces_available(std::string& why) {
  const pid_t pid = ::fork();
  if (pid < 0) {
    why = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid == 0) {
    const char* step = "";
    const bool root = ::geteuid() == 0;
    int err = enter_namespaces(root, step);
    if (err == 0 && root) err = enter_lock_layer();
    ::_exit(err == 0 ? 0 : (err & 0x7f));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  why = std::string("cannot create ") +
        (::geteuid() == 0 ? "a mount namespace and the locking user namespace"
                          : "a user and mount namespace") +
        ": " + (WIFEXITED(status) ? std::strerror(WEXITSTATUS(status)) : "the check was killed");
  return false;
}

bool apply(const ProtectPlan& plan, const std::string& session_dir, bool own_pid_namespace) {
  if (plan.empty()) return true;
#ifdef AB_MUTANT_MOUNT_PROTECTION
  (void)session_dir;
  return true;  // mutant (tests/mutation only, never installed): reports binds it never made
#endif
  const bool root = ::geteuid() == 0;
  const char* step = "";
  const std::string fix =
      std::string(root ? "this kernel must allow mount and user namespaces (CONFIG_USER_NS, "
                         "`sysctl user.max_user_namespaces=15000`)"
                       : "enable unprivileged user namespaces "
                         "(`sysctl kernel.unprivileged_userns_clone=1`, "
                         "`sysctl user.max_user_namespaces=15000`, or on Ubuntu "
                         "`sysctl kernel.apparmor_restrict_unprivileged_userns=0`)") +
      ", or set `accept_unprotected_denies: true` in the profile to accept the weaker boundary";
  if (const int err = enter_namespaces(root, step); err != 0) {
    // Never without the private /proc the policy counts on (it grants /proc).
    if (plan.accept_unprotected && !plan.private_proc) return false;
    throw SystemError(std::string("cannot protect the denies inside writable directories: ") +
                          step + ": " + std::strerror(err),
                      {}, fix);
  }
  const auto fail = [&](const std::string& what, const std::string& path) {
    throw SystemError(what + " " + path + ": " + std::strerror(errno), path,
                      "run `agent-boundary reload`, or report this kernel's behaviour");
  };
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) fail("make-rslave", "/");
  for (const auto& m : plan.mounts) {
    struct stat st {};
    if (::lstat(m.path.c_str(), &st) != 0) continue;  // gone since creation: nothing to bind
    if (S_ISLNK(st.st_mode))
      throw SystemError("the protected path " + m.path + " became a symlink", m.path,
                        "replace the link by the real file, then run `agent-boundary reload`");
    if (m.pin) {
      if (::mount(m.path.c_str(), m.path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
        fail("cannot pin", m.path);
      continue;
    }
    if (S_ISREG(st.st_mode) && st.st_nlink > 1)
      throw SystemError("the protected file " + m.path + " gained a hard link", m.path,
                        "copy it over itself to break the link");
    if (m.mask && S_ISDIR(st.st_mode)) {
      if (::mount("none", m.path.c_str(), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "size=4k,mode=0555") != 0)
        fail("cannot mask", m.path);
      continue;
    }
    const std::string source = m.mask ? session_dir + "/" + kMaskFile : m.path;
    if (::mount(source.c_str(), m.path.c_str(), nullptr, MS_BIND, nullptr) != 0)
      fail("cannot bind", m.path);
    if (::mount(nullptr, m.path.c_str(), nullptr,
                MS_BIND | MS_REMOUNT | MS_RDONLY | locked_flags(m.path), nullptr) != 0)
      fail("cannot make read-only", m.path);
  }
  if (plan.private_proc) enter_private_proc(own_pid_namespace);
  if (root) {
    // The lock layer: in a nested user namespace every mount above becomes locked, so even
    // root with full capabilities inside cannot undo, clone or reconfigure them.
    if (const int err = enter_lock_layer(); err != 0) {
      if (plan.accept_unprotected) return false;
      throw SystemError(
          std::string("cannot lock the protecting mounts (user namespace): ") + std::strerror(err),
          {}, fix);
    }
  }
  return true;
}

}  // namespace agent_boundary::protect
