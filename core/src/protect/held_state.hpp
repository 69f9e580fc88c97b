// What a session holds inside its writable checkout, pinned at session creation as
// held.json whatever the backend (the nono launcher's mounts, srt's and devcontainer's own
// read-only binds): each held path with the profile key that would open it, the absent
// held files the checkpoint watches, and what the checkpoint needs to find nested git dirs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent_boundary/policy.hpp"
#include "protect/protect.hpp"

namespace agent_boundary::protect {

inline constexpr const char* kHeldFile = "held.json";

struct HeldEntry {
  std::string path;
  std::string key;
  bool present = true;  // false: watched (absent at creation)
};

struct HeldState {
  std::vector<HeldEntry> held;
  std::vector<std::string> open_keys;    // groups the profile opened
  std::vector<std::string> writable;     // resolved writable grants
  std::string top, git_dir, common_dir;  // the workdir's repository, empty when none
  std::size_t hash_len = 20;
  bool check_submodules = true;
  bool check_tool_config = true;
  bool check_agent_settings = true;
  // The checkout's root, and the tool configs and agent settings below it at creation
  // (sorted; nested_walk.hpp): the checkpoint moves aside those that appear later.
  std::string workdir;
  std::vector<std::string> nested_baseline;
  // Nested git dirs' config files and enabled hooks present at creation: the user's own,
  // left alone by the checkpoint while unchanged.
  std::map<std::string, std::string> baseline_configs;
  std::map<std::string, std::string> baseline_hooks;  // path -> identity (ino:size:mtime)
};

HeldState make_held_state(const ProtectPlan& plan, const std::vector<std::string>& writable,
                          const std::string& workdir, const PlanOptions& options);
std::string to_json(const HeldState& s);
HeldState held_from_json(const std::string& text, const std::string& where);
// nullopt-like: an empty state when the session has no held.json (older sessions).
HeldState read_held_state(const std::string& session_dir);

// The held entry covering `path` (the path itself or a directory above it), or nullptr.
const HeldEntry* held_entry_for(const HeldState& s, const std::string& path);

}  // namespace agent_boundary::protect
