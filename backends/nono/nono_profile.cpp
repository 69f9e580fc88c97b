// Rendering a resolved policy as a nono profile, and reading back which directories nono
// will grant for it (its own deny groups and system groups included).
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "agent_boundary/error.hpp"
#include "agent_boundary/process.hpp"
#include "nono_backend.hpp"

using ordered_json = nlohmann::ordered_json;

namespace agent_boundary::nono {
namespace {

const char* key_for(const Grant& g) {
  const bool dir = g.kind == PathKind::directory;
  switch (g.access) {
    case Access::read:
      return dir ? "read" : "read_file";
    case Access::write:
      return dir ? "write" : "write_file";
    case Access::readwrite:
      return dir ? "allow" : "allow_file";
  }
  return "read";
}

void append_unique(ordered_json& list, const ordered_json& value) {
  for (const auto& v : list)
    if (v == value) return;
  list.push_back(value);
}

}  // namespace

std::string render_nono_profile(const ResolvedPolicy& policy, const std::vector<Deny>& denies,
                                const std::vector<std::string>& extra_read_files) {
  ordered_json out;
  out["meta"] = {{"name", "agent-boundary-" + policy.profile_name}};
  ordered_json extra_fs = ordered_json::object();
  if (auto it = policy.backend_options.find("nono"); it != policy.backend_options.end()) {
    const ordered_json block = ordered_json::parse(it->second);
    if (!block.is_object()) throw BackendError("the profile's `nono:` block is not a mapping");
    for (const auto& [k, v] : block.items()) {
      if (k == "filesystem")
        extra_fs = v;
      else
        out[k] = v;
    }
  }
  ordered_json fs = ordered_json::object();
  for (const char* k : {"allow", "read", "write", "allow_file", "read_file", "write_file", "deny",
                        "bypass_protection"})
    fs[k] = ordered_json::array();
  for (const auto& g : policy.grants) {
    append_unique(fs[key_for(g)], g.path);
    if (g.bypass_builtin_denies) append_unique(fs["bypass_protection"], g.path);
  }
  for (const auto& f : extra_read_files) append_unique(fs["read_file"], f);
  for (const auto& d : denies) append_unique(fs["deny"], d.path);
  if (!extra_fs.is_object())
    throw BackendError("`nono.filesystem` in the profile is not a mapping");
  for (const auto& [k, v] : extra_fs.items()) {
    if (!v.is_array()) throw BackendError("`nono.filesystem." + k + "` must be a list");
    if (!fs.contains(k)) fs[k] = ordered_json::array();
    for (const auto& item : v) append_unique(fs[k], item);
  }
  for (auto it = fs.begin(); it != fs.end();) {
    if (it->is_array() && it->empty())
      it = fs.erase(it);
    else
      ++it;
  }
  out["filesystem"] = fs;
  return out.dump(2) + "\n";
}

std::vector<std::string> granted_directories(const std::string& nono_exe,
                                             const std::string& profile_json) {
  char tmpl[] = "/tmp/agent-boundary-nono-XXXXXX.json";
  const int fd = ::mkstemps(tmpl, 5);
  if (fd < 0) throw BackendError("cannot create a temporary nono profile");
  const bool written = ::write(fd, profile_json.data(), profile_json.size()) ==
                       static_cast<ssize_t>(profile_json.size());
  ::close(fd);
  ProcessOptions opts;
  opts.argv = {nono_exe, "profile", "show", tmpl, "--format", "manifest"};
  opts.timeout_ms = 10000;
  ProcessResult r;
  try {
    r = written ? run_process(opts) : ProcessResult{};
  } catch (...) {
    ::unlink(tmpl);
    throw;
  }
  ::unlink(tmpl);
  if (!r.ok())
    throw BackendError("nono rejected the generated profile: " + first_line(r.err + r.out, 400),
                       nono_exe, "check the profile's `nono:` block");
  std::vector<std::string> dirs;
  try {
    const auto manifest = nlohmann::json::parse(r.out);
    for (const auto& g : manifest.at("filesystem").at("grants"))
      if (g.value("type", "") == "directory") dirs.push_back(g.at("path").get<std::string>());
  } catch (const std::exception& e) {
    throw BackendError(std::string("cannot read nono's manifest: ") + e.what(), nono_exe);
  }
  return dirs;
}

}  // namespace agent_boundary::nono
