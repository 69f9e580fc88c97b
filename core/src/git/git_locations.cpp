#include "git/git_locations.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "git/git_config.hpp"
#include "git/git_index.hpp"
#include "paths.hpp"
#include "secure_file.hpp"

namespace agent_boundary::git {
namespace {

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool is_file(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string expand(const std::string& value, const std::string& base, const std::string& home) {
  if (value == "~") return home;
  if (value.starts_with("~/")) return absolute_normal(home + value.substr(1), "/");
  return absolute_normal(value, base);
}

bool truthy(const std::string& v) {
  std::string l;
  for (char c : v) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l.empty() || l == "true" || l == "yes" || l == "on" || l == "1";
}

struct Reader {
  const std::string& home;
  const std::string& top;
  ConfigLocations out;
  std::vector<std::string> seen;

  // `local`: a repository file, whose relative hooksPath is relative to the work tree.
  void read(const std::string& file, int depth) {
    if (depth > 8 || std::find(seen.begin(), seen.end(), file) != seen.end()) return;
    seen.push_back(file);
    std::optional<std::string> text;
    try {
      text = read_file(file, 1 << 20);
    } catch (const std::exception&) {
      return;
    }
    if (!text) return;
    const auto lines = parse_config(*text);
    for (const auto& v : values_of(lines, "core.hookspath"))
      if (!v.empty()) out.hooks_dirs.push_back(expand(v, top, home));
    for (const auto& v : values_of(lines, "extensions.worktreeconfig"))
      out.worktree_config = truthy(v);
    std::vector<std::string> includes = values_of(lines, "include.path");
    for (const auto& v : values_of(lines, "includeif.*.path")) includes.push_back(v);
    for (const auto& v : includes) {
      if (v.empty()) continue;
      const std::string f = expand(v, parent_dir(file), home);
      out.include_files.push_back(f);
      read(f, depth + 1);
    }
  }
};

void walk_modules(const std::string& dir, int depth, std::vector<std::string>& out) {
  // Never through a symlink: the sandbox could point `modules` at a huge tree.
  if (depth > 6 || !is_dir(dir)) return;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    const std::string p = dir + "/" + n;
    if (!is_dir(p)) continue;
    if (is_file(p + "/HEAD") || is_file(p + "/config")) {
      out.push_back(p);
      walk_modules(p + "/modules", depth + 1, out);
    } else {
      walk_modules(p, depth + 1, out);  // a submodule name with slashes
    }
  }
}

}  // namespace

ConfigLocations config_locations(const GitLayout& layout, const std::string& home) {
  Reader r{home, layout.top, {}, {}};
  r.read("/etc/gitconfig", 0);
  const char* xdg = ::getenv("XDG_CONFIG_HOME");
  r.read((xdg && *xdg ? std::string(xdg) : home + "/.config") + "/git/config", 0);
  r.read(home + "/.gitconfig", 0);
  r.read(layout.common_dir + "/config", 0);
  for (const std::string& d : {layout.common_dir, layout.git_dir}) {
    const std::string wt = d + "/config.worktree";
    if (std::find(r.out.worktree_configs.begin(), r.out.worktree_configs.end(), wt) ==
        r.out.worktree_configs.end())
      r.out.worktree_configs.push_back(wt);
  }
  if (r.out.worktree_config)
    for (const auto& wt : std::vector<std::string>(r.out.worktree_configs)) r.read(wt, 0);
  return r.out;
}

std::size_t hash_len(const std::string& common_dir) {
  try {
    if (const auto text = read_file(common_dir + "/config", 1 << 20))
      for (const auto& v : values_of(parse_config(*text), "extensions.objectformat"))
        if (v == "sha256") return 32;
  } catch (const std::exception&) {
  }
  return 20;
}

std::vector<std::string> module_git_dirs(const std::string& common_dir) {
  std::vector<std::string> out;
  walk_modules(common_dir + "/modules", 0, out);
  return out;
}

std::vector<std::string> index_gitlinks(const std::string& git_dir, std::size_t hash, bool* split) {
  IndexGitlinks links = read_gitlinks(git_dir + "/index", hash);
  if (split) *split = !links.shared_index.empty();
  if (!links.shared_index.empty()) {
    IndexGitlinks shared = read_gitlinks(git_dir + "/" + links.shared_index, hash);
    links.paths.insert(links.paths.end(), shared.paths.begin(), shared.paths.end());
  }
  std::sort(links.paths.begin(), links.paths.end());
  links.paths.erase(std::unique(links.paths.begin(), links.paths.end()), links.paths.end());
  return links.paths;
}

std::vector<std::string> dot_gits(const std::string& top, const std::vector<std::string>& rels) {
  std::vector<std::string> out;
  for (const auto& rel : rels) {
    if (rel.empty() || rel[0] == '/' || rel.find("..") != std::string::npos) continue;
    const std::string dot_git = top + "/" + rel + "/.git";
    struct stat st {};
    if (::lstat(dot_git.c_str(), &st) == 0) out.push_back(dot_git);
  }
  return out;
}

std::vector<std::string> gitlink_dot_gits(const std::string& git_dir, const std::string& top,
                                          std::size_t hash) {
  return dot_gits(top, index_gitlinks(git_dir, hash));
}

std::string git_dir_of(const std::string& dot_git) {
  struct stat st {};
  if (::lstat(dot_git.c_str(), &st) != 0) return {};
  if (S_ISDIR(st.st_mode)) return dot_git;
  if (!S_ISREG(st.st_mode)) return {};
  std::optional<std::string> text;
  try {
    text = read_file(dot_git, 4096);
  } catch (const std::exception&) {
    return {};
  }
  if (!text || !text->starts_with("gitdir:")) return {};
  std::string target = text->substr(7);
  while (!target.empty() && (target.back() == '\n' || target.back() == '\r')) target.pop_back();
  target.erase(0, target.find_first_not_of(' '));
  if (target.empty()) return {};
  return absolute_normal(target, parent_dir(dot_git));
}

}  // namespace agent_boundary::git
