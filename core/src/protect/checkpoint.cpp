#include "protect/checkpoint.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "agent_boundary/error.hpp"
#include "git/git_config.hpp"
#include "git/git_locations.hpp"
#include "paths.hpp"
#include "protect/held_list.hpp"
#include "protect/nested_walk.hpp"
#include "secure_file.hpp"

namespace agent_boundary::protect {
namespace {

constexpr int kMaxDepth = 4;           // gitlinks inside gitlinks
constexpr std::size_t kMaxDirs = 512;  // git dirs inspected per checkpoint
constexpr const char* kConfigs[] = {"config", "config.worktree"};

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

bool within_any(const std::string& p, const std::vector<std::string>& dirs) {
  return std::any_of(dirs.begin(), dirs.end(),
                     [&](const std::string& d) { return path_within(p, d); });
}

// The directory `path` as an fd, only when what was opened lies in a writable grant (the
// sandbox cannot have planted anything elsewhere, and we must not touch anything else).
// The final component is opened without following a symlink, then re-checked by fd.
Fd open_writable_dir(const std::string& path, const std::vector<std::string>& writable) {
  const std::string real = resolve_existing_prefix(path);
  if (!within_any(real, writable)) return Fd();
  Fd fd(::open(real.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.ok()) return Fd();
  char buf[4096];
  const std::string link = "/proc/self/fd/" + std::to_string(fd.get());
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return Fd();
  buf[n] = 0;
  if (!within_any(buf, writable)) return Fd();
  return Fd(::dup(fd.get()));
}

std::string identity(const struct stat& st) {
  return std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

// Rename `name` in `dir` aside without replacing anything; the new name or empty.
std::string move_aside(int dir, const std::string& name, const char* suffix) {
  for (int i = 1; i < 100; ++i) {
    std::string to = name + suffix;
    if (i > 1) to.append("-").append(std::to_string(i));
    if (::renameat2(dir, name.c_str(), dir, to.c_str(), RENAME_NOREPLACE) == 0) return to;
    if (errno != EEXIST) return {};
  }
  return {};
}

std::optional<std::string> read_at(int dir, const char* name, struct stat& st, bool& not_regular) {
  not_regular = false;
  Fd fd(::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd.ok()) {
    if (errno == ENOENT) return std::nullopt;
    not_regular = true;  // a symlink (ELOOP), FIFO, ...
    return std::nullopt;
  }
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 20)) {
    not_regular = true;
    return std::nullopt;
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

bool write_at(int dir, const char* name, const std::string& text, const struct stat& like) {
  const std::string tmp = std::string(".") + name + ".agent-boundary-tmp";
  ::unlinkat(dir, tmp.c_str(), 0);
  Fd fd(::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 like.st_mode & 0666));
  if (!fd.ok()) return false;
  bool ok = ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (::geteuid() == 0) ok = ok && ::fchown(fd.get(), like.st_uid, like.st_gid) == 0;
  if (ok && ::renameat(dir, tmp.c_str(), dir, name) == 0) return true;
  ::unlinkat(dir, tmp.c_str(), 0);
  return false;
}

// The gitlinks of each index, kept in the session dir between checkpoints: an index whose
// identity (inode, size, mtime, ctime) is unchanged is not parsed again. Only indexes whose
// ctime was at least kSettled old when parsed are kept, so a later write, which sets the
// ctime to the (coarse-grained) current time, always changes the identity.
class IndexCache {
 public:
  explicit IndexCache(std::string file) : file_(std::move(file)) {
    try {
      if (const auto text = read_file(file_, 4 << 20)) {
        const auto j = nlohmann::json::parse(*text);
        for (const auto& [index, e] : j.items())
          entries_[index] = {e.at("id").get<std::string>(),
                             e.at("gitlinks").get<std::vector<std::string>>()};
      }
    } catch (const std::exception&) {
      entries_.clear();  // a damaged cache is only a slower checkpoint
    }
  }
  std::vector<std::string> gitlinks(const std::string& git_dir, std::size_t hash_len) {
    const std::string index = git_dir + "/index";
    struct stat st {};
    if (::stat(index.c_str(), &st) != 0) return git::index_gitlinks(git_dir, hash_len);
    const std::string id = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
                           std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) +
                           "." + std::to_string(st.st_mtim.tv_nsec) + ":" +
                           std::to_string(st.st_ctim.tv_sec) + "." +
                           std::to_string(st.st_ctim.tv_nsec);
    if (const auto it = entries_.find(index); it != entries_.end() && it->second.id == id)
      return it->second.gitlinks;
    bool split = false;
    auto links = git::index_gitlinks(git_dir, hash_len, &split);
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    if (!split && now.tv_sec - st.st_ctim.tv_sec >= kSettled) {
      entries_[index] = {id, links};
      dirty_ = true;
    }
    return links;
  }
  void save() {
    if (!dirty_) return;
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [index, e] : entries_) j[index] = {{"id", e.id}, {"gitlinks", e.gitlinks}};
    try {
      write_file_atomic(file_, j.dump() + "\n");
    } catch (const std::exception&) {
      // Not kept: the next checkpoint parses again.
    }
  }

 private:
  static constexpr long kSettled = 2;  // seconds
  struct Entry {
    std::string id;
    std::vector<std::string> gitlinks;
  };
  std::string file_;
  std::map<std::string, Entry> entries_;
  bool dirty_ = false;
};

struct Checker {
  const HeldState& s;
  bool record = false;  // true: fill the baseline instead of acting
  HeldState* baseline = nullptr;
  IndexCache* cache = nullptr;
  std::vector<std::string> actions;
  std::set<std::string> seen;

  void config(int gdir, const std::string& gpath, const char* name) {
    const std::string path = gpath + "/" + name;
    struct stat st {};
    bool not_regular = false;
    const auto text = read_at(gdir, name, st, not_regular);
    if (record) {
      if (text) baseline->baseline_configs[path] = *text;
      return;
    }
    if (not_regular) {
      const std::string to = move_aside(gdir, name, ".agent-boundary-moved");
      actions.push_back(to.empty() ? "could not move aside " + path + " (not a regular file)"
                                   : "moved " + path + " aside to " + to + " (not a regular file)");
      return;
    }
    if (!text) return;
    const auto base = s.baseline_configs.find(path);
    if (base != s.baseline_configs.end() && base->second == *text) return;
    std::vector<std::string> removed;
    const std::string clean = git::sanitise_config(*text, removed);
    if (removed.empty()) return;
    std::string list;
    for (const auto& r : removed) list += (list.empty() ? "" : ", ") + r;
    if (write_at(gdir, name, clean, st))
      actions.push_back("neutralised " + list + " in " + path);
    else
      actions.push_back("could not neutralise " + list + " in " + path + ": " +
                        std::strerror(errno));
  }

  void hooks(int gdir, const std::string& gpath) {
    const std::string path = gpath + "/hooks";
    Fd h(::openat(gdir, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!h.ok()) {
      struct stat st {};
      if (errno == ENOENT || record || ::fstatat(gdir, "hooks", &st, AT_SYMLINK_NOFOLLOW) != 0)
        return;
      if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
        const std::string to = move_aside(gdir, "hooks", ".agent-boundary-moved");
        actions.push_back(to.empty() ? "could not move aside " + path
                                     : "moved " + path + " aside to " + to);
      }
      return;
    }
    DIR* d = ::fdopendir(::dup(h.get()));
    if (!d) return;
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n == "." || n == ".." || n.ends_with(".sample") ||
          n.find(".agent-boundary-") != std::string::npos)
        continue;
      names.push_back(n);
    }
    ::closedir(d);
    for (const auto& n : names) {
      struct stat st {};
      if (::fstatat(h.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      const bool runnable = S_ISLNK(st.st_mode) || (S_ISREG(st.st_mode) && (st.st_mode & 0111));
      if (!runnable) continue;
      const std::string hook = path + "/" + n;
      if (record) {
        baseline->baseline_hooks[hook] = identity(st);
        continue;
      }
      const auto base = s.baseline_hooks.find(hook);
      if (base != s.baseline_hooks.end() && base->second == identity(st)) continue;
      const std::string to = move_aside(h.get(), n, ".agent-boundary-disabled");
      actions.push_back(to.empty() ? "could not disable the hook " + hook
                                   : "disabled the hook " + hook + " (renamed to " + to + ")");
    }
  }

  // One git dir; `work_tree` (may be empty) is where its own gitlinks live.
  void git_dir(const std::string& g, const std::string& work_tree, int depth) {
    if (seen.size() >= kMaxDirs) return;
    const std::string real = resolve_existing_prefix(g);
    if (!seen.insert(real).second) return;
    Fd fd = open_writable_dir(real, s.writable);
    if (!fd.ok()) return;
    for (const char* c : kConfigs) config(fd.get(), real, c);
    hooks(fd.get(), real);
    struct stat st {};
    bool not_regular = false;
    if (const auto common = read_at(fd.get(), "commondir", st, not_regular)) {
      std::string c = *common;
      while (!c.empty() && (c.back() == '\n' || c.back() == '\r')) c.pop_back();
      if (!c.empty() && c != ".") git_dir(absolute_normal(c, real), {}, depth + 1);
    }
    if (!work_tree.empty() && depth < kMaxDepth) gitlinks(real, work_tree, depth + 1);
  }

  void gitlinks(const std::string& g, const std::string& work_tree, int depth) {
    const std::vector<std::string> rels =
        cache ? cache->gitlinks(g, s.hash_len) : git::index_gitlinks(g, s.hash_len);
    for (const auto& dot_git : git::dot_gits(work_tree, rels)) {
      const std::string nested = git::git_dir_of(dot_git);
      if (nested.empty()) continue;
      const auto slash = dot_git.find_last_of('/');
      git_dir(nested, dot_git.substr(0, slash), depth);
    }
  }

  void repository() {
    if (s.git_dir.empty() || !s.check_submodules) return;
    // The repository's own git dirs are held (and the user's config is not ours to edit),
    // even when a gitlink points back at them.
    seen.insert(s.git_dir);
    seen.insert(s.common_dir);
    gitlinks(s.git_dir, s.top, 1);
    if (s.common_dir != s.git_dir) {
      // The main worktree's index: the common dir is the main checkout's `.git`.
      if (s.common_dir.ends_with("/.git"))
        gitlinks(s.common_dir, s.common_dir.substr(0, s.common_dir.size() - 5), 1);
    }
    // A linked worktree keeps its submodules' git dirs in its own admin dir.
    // Every worktree's: the sandbox can write the whole common dir.
    std::vector<std::string> admin = {s.common_dir, s.git_dir};
    if (DIR* d = ::opendir((s.common_dir + "/worktrees").c_str())) {
      while (const dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') admin.push_back(s.common_dir + "/worktrees/" + e->d_name);
      ::closedir(d);
    }
    for (const auto& a : admin)
      for (const auto& m : git::module_git_dirs(a)) git_dir(m, {}, kMaxDepth);
  }

  void move_held_aside(const std::string& path, const std::string& key) {
    const auto slash = path.find_last_of('/');
    Fd dir = open_writable_dir(path.substr(0, slash), s.writable);
    const std::string name = path.substr(slash + 1);
    const std::string to =
        dir.ok() ? move_aside(dir.get(), name, ".agent-boundary-moved") : std::string();
    actions.push_back(to.empty() ? "could not move aside " + path
                                 : "moved " + path + " aside to " + to + " (held; `" + key +
                                       ": true` opens it)");
  }

  void tool_files() {
    if (!s.check_tool_config || record) return;
    for (const auto& h : s.held) {
      if (h.present) continue;
      struct stat st {};
      if (::lstat(h.path.c_str(), &st) == 0) move_held_aside(h.path, h.key);
    }
  }

  // Below the root: tool configs and agent settings that were not there at creation.
  void nested_files() {
    if (record || s.workdir.empty()) return;
    for (const auto& n :
         nested_configs(s.workdir, s.check_tool_config, s.check_agent_settings, false)) {
      if (std::binary_search(s.nested_baseline.begin(), s.nested_baseline.end(), n.path) ||
          held_entry_for(s, n.path))
        continue;
      move_held_aside(n.path, info(n.group).key);
    }
  }
};

}  // namespace

std::vector<std::string> checkpoint(const HeldState& state, Reach reach) {
  return checkpoint(state, std::string(), reach);
}

std::vector<std::string> checkpoint(const HeldState& state, const std::string& cache_file,
                                    Reach reach) {
#ifdef AB_MUTANT_PLANTS
  return {};  // mutant (tests/mutation only, never installed)
#endif
  std::optional<IndexCache> cache;
  if (!cache_file.empty()) cache.emplace(cache_file);
  Checker c{state, false, nullptr, cache ? &*cache : nullptr, {}, {}};
  c.tool_files();
  if (reach == Reach::below_root) c.nested_files();
  c.repository();
  if (cache) cache->save();
  return c.actions;
}

void record_baseline(HeldState& state) {
  Checker c{state, true, &state, nullptr, {}, {}};
  try {
    c.repository();
  } catch (const Error&) {
    // An unreadable index at creation: no baseline; the checkpoint reports it later.
  }
}

std::vector<std::string> checkpoint_session(const std::string& session_dir, Reach reach) {
  return checkpoint(read_held_state(session_dir), session_dir + "/" + kIndexCacheFile, reach);
}

}  // namespace agent_boundary::protect
