// The directories below a checkout's root that the held list reaches. Tools obey their
// configs below the root too (direnv walks up from the shell's directory, an editor opens a
// subproject, a user runs git in a clone kept inside the workdir), so what exists there at
// session creation is held like the root's. Bounded: srt scans to the same depth.
#pragma once

#include <string>
#include <vector>

#include "protect/held_list.hpp"

namespace agent_boundary::protect {

// Directories one and two levels below the root: a file held in one lies at most three
// path components down, srt's default `mandatoryDenySearchDepth`.
inline constexpr int kNestedLevels = 2;

// An entry found below the root whose name is on the held list.
struct NestedEntry {
  std::string dir;   // the directory holding it (absolute, below the root)
  std::string name;  // its name in `dir` (a first path component: `.vscode`, `.git`, ...)
};

// Every entry named in `names` inside the directories 1..`levels` below `root`, in walk
// order. Symbolic links are not followed, and `.git` and `node_modules` are not entered
// (a nested repository's own files are not tool configs; srt skips node_modules too).
// Unreadable directories are skipped (as root, none is).
std::vector<NestedEntry> find_nested(const std::string& root, const std::vector<std::string>& names,
                                     int levels = kNestedLevels);

// A held-list entry that exists below the root: a tool config (`app/.vscode`,
// `app/web/.github/hooks`, `app/.envrc`), an agent settings dir (`app/.claude`), or a
// repository's `.git` (directory or gitdir file).
struct NestedConfig {
  std::string path;
  HeldGroup group;
  bool dir;  // held as a directory (tool config dirs, `.claude`)
};
// Those of the groups asked for, in path order (one walk: find_nested).
std::vector<NestedConfig> nested_configs(const std::string& root, bool tool_config,
                                         bool agent_settings, bool repositories);

}  // namespace agent_boundary::protect
