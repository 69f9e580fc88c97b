// Where a repository keeps what host git executes or obeys, beyond `.git/hooks` and
// `.git/config`: read from the config files and the index, never by running git.
#pragma once

#include <string>
#include <vector>

#include "git_dir.hpp"

namespace agent_boundary::git {

struct ConfigLocations {
  std::vector<std::string> hooks_dirs;        // every core.hooksPath value seen, absolute
  std::vector<std::string> include_files;     // include.path / includeIf.*.path, absolute
  std::vector<std::string> worktree_configs;  // config.worktree files git reads (or would)
  bool worktree_config = false;               // extensions.worktreeConfig is on
};

// From the system, global and repository config files (and what they include).
ConfigLocations config_locations(const GitLayout& layout, const std::string& home);

// The SHA length of the repository's objects (20, or 32 with extensions.objectFormat).
std::size_t hash_len(const std::string& common_dir);

// Every git dir below `<common>/modules` (a submodule named `a/b` lives in modules/a/b;
// nested submodules in modules/x/modules/y), outer first.
std::vector<std::string> module_git_dirs(const std::string& common_dir);

// The gitlinks of the index of `git_dir` (and of its shared index when split), sorted.
// `split`: set when a shared index was read. Throws like read_gitlinks.
std::vector<std::string> index_gitlinks(const std::string& git_dir, std::size_t hash_len,
                                        bool* split = nullptr);

// The `.git` (directory or gitdir file) of each gitlink `rels` below `top`, when present.
std::vector<std::string> dot_gits(const std::string& top, const std::vector<std::string>& rels);

// Both: the `.git` of each gitlink in the index of `git_dir`, whose work tree is `top`.
std::vector<std::string> gitlink_dot_gits(const std::string& git_dir, const std::string& top,
                                          std::size_t hash_len);

// The git dir a `.git` entry leads to (a directory, or the target of a `gitdir:` file),
// lexically resolved; empty when it is neither.
std::string git_dir_of(const std::string& dot_git);

}  // namespace agent_boundary::git
