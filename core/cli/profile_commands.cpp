// validate, schema, plugins.
#include <iostream>

#include "agent_boundary/error.hpp"
#include "commands.hpp"
#include "paths.hpp"
#include "profile.hpp"

namespace agent_boundary::cli {

int cmd_validate(const Context&, const std::vector<std::string>& targets) {
  std::vector<std::string> files;
  // Without profiles of the user's own, `default` is the installed starter (as for
  // `session create`), so that is what gets checked.
  const std::string dir = profiles_dir_for("default");
  if (targets.empty()) {
    for (const auto& name : list_profiles(dir)) files.push_back(find_profile(dir, name));
    if (files.empty())
      throw ProfileError("no profiles to validate", dir,
                         "pass a profile name or file, or create profiles in " + dir);
  }
  for (const auto& t : targets) {
    const bool is_path =
        t.find('/') != std::string::npos || t.ends_with(".yaml") || t.ends_with(".yml");
    files.push_back(is_path ? t : find_profile(profiles_dir_for(t), t));
  }
  int failed = 0;
  for (const auto& f : files) {
    const ParseResult r = parse_profile_file(f);
    if (r.diagnostics.empty()) {
      std::cout << "ok " << f << "\n";
      continue;
    }
    ++failed;
    for (const auto& d : r.diagnostics) std::cerr << d.str() << "\n";
  }
  return failed ? 1 : 0;
}

int cmd_schema() {
  std::cout << profile_json_schema();
  return 0;
}

int cmd_plugins(const Context& ctx) {
  const auto infos = list_plugins(ctx.install.plugin_dir);
  std::cout << "plugin dir: " << ctx.install.plugin_dir << "\n";
  if (infos.empty()) std::cout << "(no plugins installed)\n";
  int broken = 0;
  for (const auto& p : infos) {
    std::cout << (p.kind == PluginKind::backend ? "backend " : "harness ") << p.name;
    if (p.error.empty()) {
      std::cout << " " << p.version << " (ABI " << p.abi << ") " << p.file << "\n";
    } else {
      ++broken;
      std::cout << " REFUSED " << p.file << ": " << p.error << "\n";
    }
  }
  return broken ? 1 : 0;
}

}  // namespace agent_boundary::cli
