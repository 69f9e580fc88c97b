// Finding a repository's real git dirs without running git: the `.git` of the workdir or
// an ancestor, following a linked worktree's `gitdir:` file and `commondir`.
#pragma once

#include <optional>
#include <string>

namespace agent_boundary {

struct GitLayout {
  std::string top;         // the working tree root (dir holding `.git`)
  std::string git_dir;     // this worktree's git dir
  std::string common_dir;  // shared objects/refs/config/hooks (== git_dir unless linked)
  bool linked_worktree = false;
};

// nullopt when `workdir` is not inside a git working tree.
std::optional<GitLayout> find_git_layout(const std::string& workdir);

}  // namespace agent_boundary
