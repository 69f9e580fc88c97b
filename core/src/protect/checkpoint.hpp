// The checkpoint: what the kernel cannot hold because the sandbox creates it later (a
// nested repository added as a gitlink, a new `.git/modules/<name>`, a held tool config
// file that did not exist) is neutralised outside the boundary before host tools can run
// it: after each wrapped command (the launcher, on the host side), before each tool call
// (the hook) and at session end.
//
// It reads the repository's index for gitlinks (never walking the tree, never running
// git), follows each gitlink's `.git` and every git dir under `.git/modules`, and in each
// git dir the sandbox could have written: comments out every config entry that is not on
// an allow-list of harmless keys (core.fsmonitor, hooksPath, pager, editor, sshCommand,
// filter.*, aliases, credential helpers, includes, ... all go), disables executable or
// symlinked hooks by renaming them, and follows `commondir`. Held tool config files that
// appeared are moved aside: at the root on every checkpoint; below the root (nested_walk.hpp)
// where the reach allows. Each action is one line for the caller to show.
#pragma once

#include <string>
#include <vector>

#include "protect/held_state.hpp"

namespace agent_boundary::protect {

inline constexpr const char* kIndexCacheFile = "checkpoint-cache.json";

// How far a checkpoint looks for tool configs and agent settings that appeared. `root`: the
// root's held files only (the hook before each tool call, inside its 2 ms budget).
// `below_root`: also the directories two levels below the root, a walk of them (after each
// wrapped command, at session end, `agent-boundary checkpoint`): what a command plants
// there is moved aside before the user's editor or shell can read it.
enum class Reach { root, below_root };

// Throws SystemError when an index cannot be read (the caller fails closed).
std::vector<std::string> checkpoint(const HeldState& state, Reach reach = Reach::root);
// The same, keeping the parsed indexes' gitlinks in `cache_file` between calls.
std::vector<std::string> checkpoint(const HeldState& state, const std::string& cache_file,
                                    Reach reach = Reach::root);

// For the session in `session_dir` (nothing for a session without held.json).
std::vector<std::string> checkpoint_session(const std::string& session_dir,
                                            Reach reach = Reach::root);

}  // namespace agent_boundary::protect

namespace agent_boundary::protect {
// At session creation: remember the nested git dirs' configs and enabled hooks as they are
// (the user's own), so the checkpoint leaves them alone while unchanged.
void record_baseline(HeldState& state);
}  // namespace agent_boundary::protect
