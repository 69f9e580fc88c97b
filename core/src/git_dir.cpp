#include "git_dir.hpp"

#include <sys/stat.h>

#include <filesystem>

#include "paths.hpp"
#include "secure_file.hpp"

namespace fs = std::filesystem;

namespace agent_boundary {
namespace {

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// A directory git would accept as a git dir: it has HEAD and objects (or a commondir).
bool looks_like_git_dir(const std::string& d) {
  return is_file(d + "/HEAD") && (is_dir(d + "/objects") || is_file(d + "/commondir"));
}

}  // namespace

std::optional<GitLayout> find_git_layout(const std::string& workdir) {
  for (fs::path dir = fs::path(absolute_normal(workdir, "/"));; dir = dir.parent_path()) {
    const std::string dot_git = (dir / ".git").string();
    GitLayout layout;
    layout.top = dir.string();
    if (is_dir(dot_git)) {
      layout.git_dir = resolve_existing_prefix(dot_git);
    } else if (is_file(dot_git)) {
      const auto text = read_file(dot_git, 4096);
      const std::string line = text ? trim(*text) : std::string();
      if (!line.starts_with("gitdir:")) return std::nullopt;
      std::string target = line.substr(7);
      target.erase(0, target.find_first_not_of(' '));
      layout.git_dir = resolve_existing_prefix(absolute_normal(target, dir.string()));
    }
    if (!layout.git_dir.empty()) {
      if (!looks_like_git_dir(layout.git_dir)) return std::nullopt;
      layout.common_dir = layout.git_dir;
      if (const auto common = read_file(layout.git_dir + "/commondir", 4096)) {
        layout.common_dir = resolve_existing_prefix(absolute_normal(trim(*common), layout.git_dir));
        layout.linked_worktree = layout.common_dir != layout.git_dir;
      }
      return layout;
    }
    if (dir == dir.root_path()) return std::nullopt;
  }
}

}  // namespace agent_boundary
