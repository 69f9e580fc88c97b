// Loading backend and harness plugins. Only from the installed plugin directory (found
// from our own executable, never from PATH, the cwd or an environment variable), only
// regular files that nobody but root or us can write (checked before dlopen), resolved
// eagerly (RTLD_NOW: a missing symbol is a load error, not a crash later), and only with a
// matching ABI, checked from the descriptor before any plugin function is called. (The
// plugin's static initialisers do run at dlopen: the file checks are what guard them.)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent_boundary/backend.hpp"
#include "agent_boundary/harness.hpp"
#include "agent_boundary/plugin_host.hpp"

namespace agent_boundary {

// Absolute path of the running agent-boundary executable (from /proc/self/exe).
std::string self_executable();
// <prefix>/lib/agent-boundary/plugins and <prefix>/libexec/agent-boundary, where <prefix>
// is two levels above self_executable().
std::string installed_plugin_dir();
std::string installed_helper_dir();

enum class PluginKind : std::uint32_t { backend = 1, harness = 2 };

struct PluginInfo {
  std::string file;
  PluginKind kind = PluginKind::backend;
  std::string name;
  std::string version;
  std::string abi;    // "1.0"
  std::string error;  // empty when the plugin would load
};

// `<dir>/<kind>-<name>.so`; throws PluginError for a name that is not a plain identifier.
std::string plugin_file(const std::string& dir, PluginKind kind, const std::string& name);

// Every *.so in `dir`, inspected (ABI, name) but not instantiated.
std::vector<PluginInfo> list_plugins(const std::string& dir);

// The host services handed to plugins.
class DefaultPluginHost : public PluginHost {
 public:
  explicit DefaultPluginHost(std::string helper_dir, bool verbose = false);
  std::string helper_path(const std::string& name) const override;
  void debug(const std::string& message) const override;

 private:
  std::string helper_dir_;
  bool verbose_;
};

// Load and instantiate. `trusted_dir` is the directory the file must be in. Every call
// into the returned object translates plugin exceptions into core errors while the
// library is still mapped; the library stays mapped until the process exits.
std::shared_ptr<Backend> load_backend(const std::string& file, const std::string& trusted_dir,
                                      const PluginHost& host);
std::shared_ptr<Harness> load_harness(const std::string& file, const std::string& trusted_dir,
                                      const PluginHost& host);

}  // namespace agent_boundary
