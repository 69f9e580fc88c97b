// Whole-agent mode for Claude Code: which of Claude's own paths are its writable state and
// which it would later run or load outside any boundary (so stay read-only inside).
// Measured with strace on 2.1.328: ~/.claude.json is replaced through a temp file beside
// it and locked with a `~/.claude.json.lock` directory; ~/.claude holds sessions,
// projects, backups and plugin state; /tmp/claude-<uid> is its temp dir.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "claude_harness.hpp"
#include "payload.hpp"

namespace agent_boundary::claude {
namespace {

// Plugins from directory marketplaces run in place, from the directory the user added:
// readable inside, or the plugin (ours included) would vanish there. The list is Claude's
// own, under the held plugins dir. `/`, HOME and its ancestors are never granted.
std::vector<std::string> marketplace_dirs(const std::string& config, const std::string& home) {
  std::ifstream in(config + "/plugins/known_marketplaces.json");
  std::ostringstream text;
  text << in.rdbuf();
  const auto doc = try_parse_object(text.str());
  std::vector<std::string> out;
  if (!doc) return out;
  for (const auto& [name, entry] : doc->items()) {
    if (!entry.is_object() || !entry.contains("installLocation")) continue;
    const Json& where = entry.at("installLocation");
    if (!where.is_string()) continue;
    const std::string dir = where.get<std::string>();
    const bool covers_home = home == dir || home.starts_with(dir.ends_with('/') ? dir : dir + "/");
    if (dir.size() > 1 && dir[0] == '/' && !covers_home) out.push_back(dir);
  }
  return out;
}

}  // namespace

WholeAgentFootprint ClaudeHarness::whole_agent_footprint(const std::string& home,
                                                         const std::string& workdir,
                                                         unsigned uid) const {
  const auto dir = [](std::string p) { return HarnessPath{std::move(p), PathKind::directory, {}}; };
  const auto file = [](std::string p, std::string placeholder = {}) {
    return HarnessPath{std::move(p), PathKind::file, std::move(placeholder)};
  };
  // CLAUDE_CONFIG_DIR moves ~/.claude (and the config file into it).
  std::string config = home + "/.claude";
  if (const char* c = std::getenv("CLAUDE_CONFIG_DIR"); c && *c == '/') config = c;

  WholeAgentFootprint fp;
  fp.writable = {dir(config),
                 file(home + "/.claude.json"),
                 file(home + "/.claude.json.lock"),
                 file(home + "/.claude.json.backup"),
                 file(home + "/.claude.lock"),
                 dir(home + "/.cache/claude"),
                 dir(home + "/.cache/claude-cli-nodejs"),
                 dir(home + "/.local/state/claude"),
                 dir("/tmp/claude-" + std::to_string(uid))};
  // The native installer's versions: read, never written (the next launch runs them).
  fp.readable = {dir(home + "/.local/share/claude"), file(home + "/.local/bin/claude")};
  for (auto& d : marketplace_dirs(config, home)) fp.readable.push_back(dir(std::move(d)));
  // Settings choose hooks, MCP servers, status-line commands and plugins; hooks, plugins,
  // commands, agents, skills and output styles are code or prompts Claude loads later, in
  // any mode. The project's .claude/ is the same for the project.
  fp.held = {file(config + "/settings.json", "{}\n"),
             dir(config + "/hooks"),
             dir(config + "/plugins"),
             dir(config + "/commands"),
             dir(config + "/agents"),
             dir(config + "/skills"),
             dir(config + "/output-styles"),
             dir(workdir + "/.claude")};
  // The model API (a custom ANTHROPIC_BASE_URL is the user's word, read when applied).
  fp.network_hosts = {"api.anthropic.com"};
  fp.keep_env = {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"};
  return fp;
}

}  // namespace agent_boundary::claude
