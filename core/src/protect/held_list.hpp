// What the boundary holds inside a writable checkout, by group, and the profile key that
// opens each group. The one table of held paths: the protection plan (mounts, or the
// backend's own read-only binds through ResolvedPolicy::held), the Claude gate's reasons,
// `status` and the checkpoint all read it from here.
//
// Harness-specific entries (`.claude`, `.codex`, `.gemini`, ...) live here too for now: a
// harness plugin cannot supply paths without a plugin ABI change (a new virtual in
// Harness). When `.claude` moves into the Claude plugin, its entry moves with it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent_boundary::protect {

enum class HeldGroup {
  git,             // the repository's hooks, config and where they point
  agent_settings,  // $WORKDIR/.claude
  submodules,      // submodules' and nested repositories' git dirs
  tool_config,     // IDE, agent and shell configs that tools run on the host
};

struct HeldGroupInfo {
  HeldGroup group;
  const char* key;   // the profile key that opens the group
  const char* what;  // for status and reasons
  const char* cost;  // what opening it costs
};

const HeldGroupInfo& info(HeldGroup g);
const std::vector<HeldGroupInfo>& all_groups();
// nullptr when `key` names no group.
const HeldGroupInfo* group_by_key(std::string_view key);

// A config file or directory of the checkout that a tool on the host executes or obeys.
// At the root, directories are held whole (created empty when absent: git does not see
// empty directories); files are held when present and moved aside by the checkpoint when
// they appear during the session. Below the root (nested_walk.hpp) what exists at session
// creation is held, and what appears later is moved aside by the checkpoint after commands.
struct ToolConfig {
  const char* path;  // relative to the workdir
  bool dir;
  const char* read_by;
};
// Core's, not the harness plugins': it holds the files of every tool that may run on this
// machine later, agents without an installed plugin included.
const std::vector<ToolConfig>& tool_configs();

}  // namespace agent_boundary::protect
