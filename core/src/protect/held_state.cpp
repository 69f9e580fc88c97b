#include "protect/held_state.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "agent_boundary/error.hpp"
#include "git/git_locations.hpp"
#include "git_dir.hpp"
#include "paths.hpp"
#include "protect/checkpoint.hpp"
#include "protect/held_list.hpp"
#include "secure_file.hpp"

namespace agent_boundary::protect {

using json = nlohmann::json;

HeldState make_held_state(const ProtectPlan& plan, const std::vector<std::string>& writable,
                          const std::string& workdir, const PlanOptions& options) {
  HeldState s;
  for (const auto& m : plan.mounts)
    if (!m.pin && !m.key.empty()) s.held.push_back({m.path, m.key, true});
  for (const auto& w : plan.watched) s.held.push_back({w.path, w.key, false});
  if (!options.git) s.open_keys.push_back(info(HeldGroup::git).key);
  if (!options.agent_settings) s.open_keys.push_back(info(HeldGroup::agent_settings).key);
  if (!options.submodules) s.open_keys.push_back(info(HeldGroup::submodules).key);
  if (!options.tool_config) s.open_keys.push_back(info(HeldGroup::tool_config).key);
  s.writable = writable;
  // The checkpoint runs even when the submodule group is open: opening it lets commands
  // write submodules' git dirs (`git submodule update` rewrites their config), not plant
  // code that host git runs.
  s.check_submodules = true;
  s.check_tool_config = options.tool_config;
  s.check_agent_settings = options.agent_settings;
  s.workdir = resolve_existing_prefix(workdir);
  s.nested_baseline = plan.nested_present;  // found by compute_plan's walk
  std::sort(s.nested_baseline.begin(), s.nested_baseline.end());
  if (const auto git = find_git_layout(resolve_existing_prefix(workdir))) {
    s.top = git->top;
    s.git_dir = git->git_dir;
    s.common_dir = git->common_dir;
    s.hash_len = git::hash_len(git->common_dir);
  }
  if (s.check_submodules) record_baseline(s);
  return s;
}

std::string to_json(const HeldState& s) {
  json j;
  j["version"] = 1;
  j["held"] = json::array();
  for (const auto& h : s.held)
    j["held"].push_back({{"path", h.path}, {"key", h.key}, {"present", h.present}});
  j["open_keys"] = s.open_keys;
  j["writable"] = s.writable;
  j["repository"] = {{"top", s.top},
                     {"git_dir", s.git_dir},
                     {"common_dir", s.common_dir},
                     {"hash_len", s.hash_len}};
  j["checkpoint"] = {{"submodules", s.check_submodules},
                     {"tool_config", s.check_tool_config},
                     {"agent_settings", s.check_agent_settings}};
  j["workdir"] = s.workdir;
  j["nested_baseline"] = s.nested_baseline;
  j["baseline_configs"] = s.baseline_configs;
  j["baseline_hooks"] = s.baseline_hooks;
  return j.dump(2) + "\n";
}

HeldState held_from_json(const std::string& text, const std::string& where) {
  HeldState s;
  try {
    const json j = json::parse(text);
    if (j.at("version").get<int>() != 1) throw std::runtime_error("unknown version");
    for (const auto& h : j.at("held"))
      s.held.push_back({h.at("path").get<std::string>(), h.at("key").get<std::string>(),
                        h.at("present").get<bool>()});
    s.open_keys = j.at("open_keys").get<std::vector<std::string>>();
    s.writable = j.at("writable").get<std::vector<std::string>>();
    const json& r = j.at("repository");
    s.top = r.at("top").get<std::string>();
    s.git_dir = r.at("git_dir").get<std::string>();
    s.common_dir = r.at("common_dir").get<std::string>();
    s.hash_len = r.at("hash_len").get<std::size_t>();
    if (s.hash_len != 20 && s.hash_len != 32) throw std::runtime_error("bad hash length");
    s.check_submodules = j.at("checkpoint").at("submodules").get<bool>();
    s.check_tool_config = j.at("checkpoint").at("tool_config").get<bool>();
    // Sessions created before the checkpoint looked below the root have none of these
    // (nothing below the root is checked for them until `reload`).
    s.check_agent_settings = j.at("checkpoint").value("agent_settings", false);
    s.workdir = j.value("workdir", std::string());
    s.nested_baseline = j.value("nested_baseline", std::vector<std::string>());
    if (!std::is_sorted(s.nested_baseline.begin(), s.nested_baseline.end()))
      throw std::runtime_error("nested_baseline is not sorted");
    s.baseline_configs = j.at("baseline_configs").get<std::map<std::string, std::string>>();
    s.baseline_hooks = j.at("baseline_hooks").get<std::map<std::string, std::string>>();
    for (const std::string* p : {&s.top, &s.git_dir, &s.common_dir, &s.workdir})
      if (!p->empty() && (*p)[0] != '/') throw std::runtime_error("a path is not absolute");
  } catch (const std::exception& e) {
    throw SessionError(std::string("corrupt held-path list: ") + e.what(), where,
                       "run `agent-boundary reload`");
  }
  return s;
}

HeldState read_held_state(const std::string& session_dir) {
  const std::string file = session_dir + "/" + kHeldFile;
  const auto text = read_file(file, 16 << 20);
  if (!text) {
    HeldState none;
    none.check_submodules = none.check_tool_config = none.check_agent_settings = false;
    return none;
  }
  return held_from_json(*text, file);
}

const HeldEntry* held_entry_for(const HeldState& s, const std::string& path) {
  const HeldEntry* best = nullptr;
  for (const auto& h : s.held)
    if (path_within(path, h.path) && (!best || h.path.size() > best->path.size())) best = &h;
  return best;
}

}  // namespace agent_boundary::protect
