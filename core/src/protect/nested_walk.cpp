#include "protect/nested_walk.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace agent_boundary::protect {
namespace {

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

bool is_real_dir(const std::string& parent, const dirent& e) {
  if (e.d_type == DT_DIR) return true;
  if (e.d_type != DT_UNKNOWN) return false;  // DT_LNK included: links are not followed
  struct stat st {};
  return ::lstat((parent + "/" + e.d_name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The names are looked up in each directory (one lstat each); only directories that have
// directories to descend into are read whole. The deepest level is never read: a directory
// of 1,000 files two levels down costs ~20 lstats, not 1,000 entries.
void walk(const std::string& dir, int level, int levels, const std::vector<std::string>& names,
          std::vector<NestedEntry>& out) {
  if (level > 0)
    for (const auto& n : names) {
      struct stat st {};
      if (::lstat((dir + "/" + n).c_str(), &st) == 0) out.push_back({dir, n});
    }
  if (level >= levels) return;
  std::unique_ptr<DIR, DirCloser> d(::opendir(dir.c_str()));
  if (!d) return;
  std::vector<std::string> below;
  while (const dirent* e = ::readdir(d.get())) {
    const char* n = e->d_name;
    if (std::strcmp(n, ".") == 0 || std::strcmp(n, "..") == 0 || std::strcmp(n, ".git") == 0 ||
        std::strcmp(n, "node_modules") == 0)
      continue;
    if (is_real_dir(dir, *e)) below.emplace_back(n);
  }
  d.reset();
  std::sort(below.begin(), below.end());  // a stable order for the plan and its tests
  for (const auto& b : below) walk(dir + "/" + b, level + 1, levels, names, out);
}

}  // namespace

std::vector<NestedEntry> find_nested(const std::string& root, const std::vector<std::string>& names,
                                     int levels) {
  std::vector<NestedEntry> out;
  walk(root, 0, levels, names, out);
  std::stable_sort(out.begin(), out.end(), [](const NestedEntry& x, const NestedEntry& y) {
    return x.dir != y.dir ? x.dir < y.dir : x.name < y.name;
  });
  return out;
}

std::vector<NestedConfig> nested_configs(const std::string& root, bool tool_config,
                                         bool agent_settings, bool repositories) {
  const auto first = [](const std::string& rel) { return rel.substr(0, rel.find('/')); };
  std::vector<std::string> names;
  if (tool_config)
    for (const auto& t : tool_configs()) names.push_back(first(t.path));
  if (agent_settings) names.emplace_back(".claude");
  if (repositories) names.emplace_back(".git");
  std::vector<NestedConfig> out;
  if (names.empty()) return out;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const auto& e : find_nested(root, names)) {
    const std::string at = e.dir + "/" + e.name;
    if (e.name == ".git") {
      out.push_back({at, HeldGroup::submodules, false});
    } else if (e.name == ".claude") {
      out.push_back({at, HeldGroup::agent_settings, true});
    } else {
      for (const auto& t : tool_configs()) {
        struct stat st {};
        const std::string p = e.dir + "/" + t.path;
        if (first(t.path) == e.name && ::lstat(p.c_str(), &st) == 0)
          out.push_back({p, HeldGroup::tool_config, t.dir});
      }
    }
  }
  return out;
}

}  // namespace agent_boundary::protect
