#include "protect/held_list.hpp"

namespace agent_boundary::protect {

const std::vector<HeldGroupInfo>& all_groups() {
  static const std::vector<HeldGroupInfo> groups = {
      {HeldGroup::git, "allow_git_hook_escape",
       "git hooks and config (.git/hooks, .git/config, core.hooksPath, included config files, "
       "config.worktree, worktree admin files)",
       "sandboxed code can plant a git hook or config that runs outside the boundary on the "
       "next host git command"},
      {HeldGroup::agent_settings, "allow_agent_settings_escape",
       "agent settings ($WORKDIR/.claude)",
       "sandboxed code can add agent hooks or plugins that run outside the boundary in the next "
       "agent session"},
      {HeldGroup::submodules, "allow_submodule_escape",
       "submodule and nested repository git dirs (.git/modules/*, gitlinks' .git, .gitmodules)",
       "sandboxed code can rewrite submodules' git config and hooks; the checkpoint still "
       "neutralises what would run on the host, but a process that outlives its command can "
       "plant between checkpoints"},
      {HeldGroup::tool_config, "allow_tool_config_escape",
       "IDE, agent and shell configs in the checkout (.mcp.json, .vscode, .idea, .envrc, "
       ".devcontainer, .codex, .gemini, .github/hooks, .opencode, opencode.json, .cursor, ...)",
       "sandboxed code can plant a task, MCP server, hook or shell rc that your editor, agent "
       "or shell runs outside the boundary"},
  };
  return groups;
}

const HeldGroupInfo& info(HeldGroup g) {
  for (const auto& i : all_groups())
    if (i.group == g) return i;
  return all_groups().front();
}

const HeldGroupInfo* group_by_key(std::string_view key) {
  for (const auto& i : all_groups())
    if (key == i.key) return &i;
  return nullptr;
}

const std::vector<ToolConfig>& tool_configs() {
  // At least srt's default list (.gitconfig, .gitmodules, shell rc files, .ripgreprc,
  // .mcp.json, .vscode, .idea, .claude/commands, .claude/agents, .git/hooks, .git/config:
  // the git and .claude entries are in their own groups), plus the harnesses'.
  static const std::vector<ToolConfig> list = {
      {".vscode", true, "VS Code (tasks.json runOn folderOpen, settings.json, launch.json)"},
      {".idea", true, "JetBrains IDEs (run configurations, startup tasks)"},
      {".devcontainer", true, "Dev Containers (initializeCommand runs on the host)"},
      {".codex", true, "Codex"},
      {".gemini", true, "Gemini CLI"},
      {".github/hooks", true, "GitHub Copilot agent hooks"},
      {".opencode", true, "opencode"},
      {".cursor", true, "Cursor"},
      {".mcp.json", false, "Claude Code (starts the project's MCP servers)"},
      {"opencode.json", false, "opencode"},
      {".envrc", false, "direnv"},
      {".gitconfig", false, "git (when the checkout is HOME)"},
      {".bashrc", false, "bash"},
      {".bash_profile", false, "bash"},
      {".profile", false, "sh"},
      {".zshrc", false, "zsh"},
      {".zprofile", false, "zsh"},
      {".ripgreprc", false, "ripgrep"},
  };
  return list;
}

}  // namespace agent_boundary::protect
