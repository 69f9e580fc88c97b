#include "protect/protect.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "agent_boundary/error.hpp"
#include "agent_boundary/process.hpp"
#include "protect/nested_walk.hpp"
#include "secure_file.hpp"
#include "test_world.hpp"

namespace agent_boundary::protect {
namespace {

using testing::run_git;
using testing::TestWorld;

ResolvedPolicy policy_with(const std::string& writable, std::vector<Deny> denies = {}) {
  ResolvedPolicy p;
  p.grants.push_back({writable, Access::readwrite, PathKind::directory, false, "allow"});
  p.grants.push_back({"/usr", Access::read, PathKind::directory, false, "read"});
  p.denies = std::move(denies);
  return p;
}

std::vector<std::string> paths(const ProtectPlan& plan, bool pin) {
  std::vector<std::string> out;
  for (const auto& m : plan.mounts)
    if (m.pin == pin) out.push_back(m.path);
  return out;
}

// The key of the group holding `path` in `plan` (a non-pin mount), or "(not held)".
std::string held_key(const ProtectPlan& plan, const std::string& path) {
  for (const auto& m : plan.mounts)
    if (m.path == path && !m.pin) return m.key;
  return "(not held)";
}

// The groups issue 4 held (git, agent settings), without submodules and tool configs.
const PlanOptions kGitAndSettings{true, true, false, false, {}};

std::vector<std::string> placeholder_paths(const ProtectPlan& plan) {
  std::vector<std::string> out;
  for (const auto& p : plan.placeholders) out.push_back(p.path);
  return out;
}

// Whole-agent mode: a harness's settings and code dirs inside its writable state dir are
// held like the project's .claude (absent dirs created, absent files given placeholders).
TEST(ProtectPlan, HarnessHeldPathsInsideItsWritableState) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  const std::string cfg = w.dir("home/.claude");
  w.file("home/.claude/settings.json", "{\"a\": 1}");
  const auto policy = policy_with(wd);
  ResolvedPolicy p = policy;
  p.grants.push_back({cfg, Access::readwrite, PathKind::directory, false, "harness"});
  PlanOptions o;
  o.held = {{cfg + "/settings.json", PathKind::file, "{}\n"},
            {cfg + "/hooks", PathKind::directory, {}},
            {cfg + "/absent.json", PathKind::file, "{}\n"},
            {w.path("elsewhere/x"), PathKind::directory, {}}};
  const ProtectPlan plan = compute_plan(p, wd, writable_dirs(p), o);
  EXPECT_THAT(paths(plan, false), ::testing::IsSupersetOf({cfg + "/settings.json", cfg + "/hooks",
                                                           cfg + "/absent.json"}));
  // Outside every writable grant nothing needs holding.
  EXPECT_THAT(paths(plan, false), ::testing::Not(::testing::Contains(w.path("elsewhere/x"))));
  EXPECT_THAT(plan.dirs_to_create, ::testing::Contains(cfg + "/hooks"));
  EXPECT_THAT(placeholder_paths(plan), ::testing::ElementsAre(cfg + "/absent.json"));
}

TEST(ProtectPlan, WritableGrantsAreTheNonReadDirectories) {
  TestWorld w;
  const auto p = policy_with(w.dir("wd"));
  EXPECT_EQ(writable_dirs(p), std::vector<std::string>{w.path("wd")});
}

TEST(ProtectPlan, PlainRepoProtectsHooksConfigCommondirAndSettings) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  run_git(wd, {"init", "-q"});
  const auto policy = policy_with(wd);
  const ProtectPlan plan = compute_plan(policy, wd, writable_dirs(policy), kGitAndSettings);
  EXPECT_THAT(paths(plan, false),
              ::testing::UnorderedElementsAre(wd + "/.git/hooks", wd + "/.git/config",
                                              wd + "/.git/commondir", wd + "/.claude"));
  EXPECT_THAT(paths(plan, true), ::testing::UnorderedElementsAre(wd + "/.git"));
  EXPECT_THAT(placeholder_paths(plan), ::testing::UnorderedElementsAre(wd + "/.git/commondir"));
  EXPECT_EQ(plan.dirs_to_create, std::vector<std::string>{wd + "/.claude"});
  // Outer paths first: every pin comes before the paths below it.
  for (std::size_t i = 0; i < plan.mounts.size(); ++i)
    for (std::size_t j = i + 1; j < plan.mounts.size(); ++j)
      EXPECT_FALSE(plan.mounts[i].path.starts_with(plan.mounts[j].path + "/"));
}

TEST(ProtectPlan, GrantCoveringTheWorkdirsParentPinsTheWorkdir) {
  TestWorld w;
  const std::string wd = w.dir("a/wd");
  const auto policy = policy_with(w.path("a"));
  const ProtectPlan plan = compute_plan(policy, wd, writable_dirs(policy), kGitAndSettings);
  EXPECT_THAT(paths(plan, true), ::testing::UnorderedElementsAre(wd));
  EXPECT_THAT(paths(plan, false), ::testing::UnorderedElementsAre(wd + "/.claude"));
}

TEST(ProtectPlan, NothingOutsideWritableGrants) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  run_git(wd, {"init", "-q"});
  const auto policy = policy_with(w.dir("elsewhere"));
  const ProtectPlan plan = compute_plan(policy, wd, writable_dirs(policy));
  EXPECT_TRUE(plan.empty());
}

TEST(ProtectPlan, ProfileDenyInsideAGrantIsCoveredWithAPlaceholder) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  w.dir("wd/secrets");
  const auto policy = policy_with(wd, {{wd + "/secrets/key", "profile"},
                                       {wd + "/.claude/settings.json", "profile"},
                                       {wd + "/absent/dir/x", "profile"},
                                       {"/etc/shadow", "profile"}});
  const ProtectPlan plan = compute_plan(policy, wd, writable_dirs(policy));
  EXPECT_EQ(plan.covered_denies,
            (std::vector<std::string>{wd + "/secrets/key", wd + "/.claude/settings.json"}));
  EXPECT_THAT(placeholder_paths(plan), ::testing::Contains(wd + "/secrets/key"));
  EXPECT_THAT(paths(plan, true), ::testing::Contains(wd + "/secrets"));
}

// A Claude plugin read in place from the checkout the agent works in (developing
// agent-boundary with agent-boundary): held read-only and readable, never masked.
TEST(ProtectPlan, InstalledCodeInsideAGrantIsHeldReadOnly) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  const std::string plugin = w.dir("wd/claude-plugin");
  const std::string market = w.dir("wd/.claude-plugin");
  const std::string outside = w.dir("installed/plugins");
  const auto policy = policy_with(wd, {{plugin, "self-protection"},
                                       {market, "self-protection"},
                                       {outside, "self-protection"},
                                       {w.path("state"), "self-protection"}});
  PlanOptions options;
  options.installation = {plugin, market, outside};
  const ProtectPlan plan = compute_plan(policy, wd, writable_dirs(policy), options);
  EXPECT_EQ(plan.covered_denies, (std::vector<std::string>{plugin, market}));
  EXPECT_THAT(paths(plan, false), ::testing::IsSupersetOf({plugin, market}));
  for (const auto& m : plan.mounts) EXPECT_FALSE(m.mask) << m.path;
  EXPECT_THAT(coverage(plan, plugin), ::testing::HasSubstr("reads allowed"));
  // Without the option (a session made outside the harness), nothing is held.
  EXPECT_TRUE(compute_plan(policy, wd, writable_dirs(policy)).covered_denies.empty());
}

TEST(ProtectPlan, LinkedWorktreeProtectsTheAdminFiles) {
  TestWorld w;
  const std::string repo = w.dir("main");
  run_git(repo, {"init", "-q"});
  w.file("main/f", "x");
  run_git(repo, {"add", "f"});
  run_git(repo, {"commit", "-qm", "m"});
  run_git(repo, {"worktree", "add", "-q", w.path("wt")});
  ResolvedPolicy policy = policy_with(w.path("wt"));
  policy.grants.push_back({repo + "/.git", Access::readwrite, PathKind::directory, false, "git"});
  const ProtectPlan plan = compute_plan(policy, w.path("wt"), writable_dirs(policy));
  EXPECT_THAT(paths(plan, false),
              ::testing::IsSupersetOf({repo + "/.git/hooks", repo + "/.git/config",
                                       repo + "/.git/commondir", w.path("wt") + "/.git",
                                       repo + "/.git/worktrees/wt/commondir",
                                       repo + "/.git/worktrees/wt/gitdir"}));
  EXPECT_THAT(paths(plan, true),
              ::testing::IsSupersetOf({repo + "/.git/worktrees", repo + "/.git/worktrees/wt"}));
}

TEST(ProtectPlan, PrepareCreatesPlaceholdersAndRefusesLinks) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  run_git(wd, {"init", "-q"});
  const auto policy = policy_with(wd);
  ProtectPlan plan = compute_plan(policy, wd, writable_dirs(policy));
  prepare(plan);
  EXPECT_EQ(read_file(wd + "/.git/commondir").value_or(""), ".\n");
  struct stat st {};
  EXPECT_EQ(::stat((wd + "/.claude").c_str(), &st), 0);

  ASSERT_EQ(::link((wd + "/.git/config").c_str(), (wd + "/cfg").c_str()), 0);
  EXPECT_THROW(prepare(plan), SessionError);
  ::unlink((wd + "/cfg").c_str());
  w.symlink("wd/.claude/settings.json", "../x.json");
  ProtectPlan deny_plan = plan;
  deny_plan.mounts.push_back({wd + "/.claude/settings.json", false, false, {}});
  EXPECT_THROW(prepare(deny_plan), SessionError);
}

TEST(ProtectPlan, CoverageSaysHowADenyIsHeld) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  w.file("wd/secret", "s");
  const auto policy = policy_with(wd, {{wd + "/secret", "profile"}});
  const ProtectPlan plan = compute_plan(policy, wd, writable_dirs(policy));
  EXPECT_TRUE(masked(plan, wd + "/secret"));
  EXPECT_FALSE(masked(plan, wd + "/.claude/settings.json"));
  EXPECT_THAT(coverage(plan, wd + "/secret"), ::testing::HasSubstr("hidden under an empty"));
  EXPECT_THAT(coverage(plan, wd + "/.claude/settings.json"),
              ::testing::HasSubstr("is bound read-only"));
  EXPECT_EQ(coverage(plan, wd + "/other"), "");
}

TEST(ProtectPlan, HoldsProjectHookLocationsSubmodulesAndToolConfigs) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  run_git(wd, {"init", "-q"});
  run_git(wd, {"config", "core.hooksPath", ".husky"});
  run_git(wd, {"config", "include.path", "../project.gitconfig"});
  run_git(wd, {"config", "extensions.worktreeConfig", "true"});
  w.file("wd/.git/modules/lib/HEAD", "ref: refs/heads/main\n");
  w.file("wd/.git/modules/lib/config", "[core]\n");
  w.file("wd/.mcp.json", "{}");
  w.file("wd/shared.json", "{}");
  w.symlink("wd/opencode.json", "shared.json");
  const auto policy = policy_with(wd);
  const ProtectPlan plan = compute_plan(policy, wd, writable_dirs(policy));
  const auto key_of = [&](const std::string& p) { return held_key(plan, p); };
  EXPECT_EQ(key_of(wd + "/.husky"), "allow_git_hook_escape");
  EXPECT_EQ(key_of(wd + "/project.gitconfig"), "allow_git_hook_escape");
  EXPECT_EQ(key_of(wd + "/.git/config.worktree"), "allow_git_hook_escape");
  EXPECT_EQ(key_of(wd + "/.git/modules/lib/config"), "allow_submodule_escape");
  EXPECT_EQ(key_of(wd + "/.git/modules/lib/hooks"), "allow_submodule_escape");
  EXPECT_EQ(key_of(wd + "/.vscode"), "allow_tool_config_escape");
  EXPECT_EQ(key_of(wd + "/.github/hooks"), "allow_tool_config_escape");
  EXPECT_EQ(key_of(wd + "/.mcp.json"), "allow_tool_config_escape");
  EXPECT_EQ(key_of(wd + "/opencode.json"), "(not held)");  // a symlink: a note instead
  EXPECT_THAT(plan.notes, ::testing::Contains(::testing::HasSubstr("opencode.json")));
  EXPECT_THAT(placeholder_paths(plan),
              ::testing::IsSupersetOf({wd + "/project.gitconfig", wd + "/.git/config.worktree"}));
  bool envrc_watched = false;
  for (const auto& x : plan.watched) envrc_watched = envrc_watched || x.path == wd + "/.envrc";
  EXPECT_TRUE(envrc_watched);
  const ProtectPlan none =
      compute_plan(policy, wd, writable_dirs(policy), {false, false, false, false, {}});
  EXPECT_TRUE(none.empty());
}

// Below the root, what exists at creation is held in its group down to srt's depth: tool
// configs, agent settings, and nested repositories' config and hooks (a repository kept
// inside the workdir, tracked or not). Deeper, absent, or behind a symlink: not held.
TEST(ProtectPlan, HoldsWhatExistsBelowTheRootDownToTwoLevels) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  w.file("wd/app/.vscode/tasks.json", "{}");
  w.file("wd/app/web/.envrc", "use nix\n");
  w.file("wd/app/web/.github/hooks/hooks.json", "{}");
  w.file("wd/app/web/deep/.envrc", "too deep\n");
  w.file("wd/app/.claude/settings.json", "{}");
  w.file("wd/app/node_modules/pkg/.mcp.json", "{}");
  w.file("wd/outside/.mcp.json", "{}");
  w.symlink("wd/linked", "outside");
  const std::string clone = w.dir("wd/tools/clone");
  run_git(clone, {"init", "-q"});
  std::filesystem::remove_all(clone + "/.git/hooks");  // absent: held all the same
  const auto policy = policy_with(wd);
  const ProtectPlan plan = compute_plan(policy, wd, writable_dirs(policy));
  const std::vector<std::pair<std::string, std::string>> held = {
      {"app/.vscode", "allow_tool_config_escape"},
      {"app/web/.envrc", "allow_tool_config_escape"},
      {"app/web/.github/hooks", "allow_tool_config_escape"},
      {"app/.claude", "allow_agent_settings_escape"},
      {"outside/.mcp.json", "allow_tool_config_escape"},
      {"tools/clone/.git/config", "allow_submodule_escape"},
      {"tools/clone/.git/hooks", "allow_submodule_escape"},
      {"app/web/deep/.envrc", "(not held)"},             // three levels down
      {"app/node_modules/pkg/.mcp.json", "(not held)"},  // not entered
      {"linked/.mcp.json", "(not held)"},                // a symlink: not followed
      {"app/.idea", "(not held)"},                       // absent
  };
  for (const auto& [rel, key] : held) EXPECT_EQ(held_key(plan, wd + "/" + rel), key) << rel;
  EXPECT_THAT(plan.dirs_to_create, ::testing::Contains(clone + "/.git/hooks"));
  // Absent entries below the root are neither created nor watched.
  EXPECT_THAT(plan.dirs_to_create, ::testing::Not(::testing::Contains(wd + "/app/.idea")));
  for (const auto& x : plan.watched) EXPECT_EQ(x.path.rfind(wd + "/app/", 0), std::string::npos);
  // The groups' keys open the nested entries too.
  EXPECT_TRUE(
      compute_plan(policy, wd, writable_dirs(policy), {true, false, false, false, {}}).empty());
}

TEST(NestedWalk, FindsNamedEntriesOnlyBelowTheRootAndWithinTheLevels) {
  TestWorld w;
  const std::string root = w.dir("r");
  for (const char* rel :
       {"r/.envrc", "r/a/.envrc", "r/a/b/.envrc", "r/a/b/c/.envrc", "r/.git/x/.envrc"})
    w.file(rel);
  const auto found = find_nested(root, {".envrc"});
  std::vector<std::string> dirs;
  for (const auto& e : found) dirs.push_back(e.dir);
  EXPECT_THAT(dirs, ::testing::ElementsAre(root + "/a", root + "/a/b"));
  EXPECT_THAT(find_nested(root, {".envrc"}, 3), ::testing::SizeIs(3));
  EXPECT_THAT(find_nested(root + "/missing", {".envrc"}), ::testing::IsEmpty());
}

TEST(ProtectPlan, JsonRoundTrip) {
  ProtectPlan plan;
  plan.mounts = {{"/w/.git", true, false, {}}, {"/w/.git/config", false, false, {}}};
  plan.covered_denies = {"/w/x"};
  plan.accept_unprotected = true;
  const ProtectPlan back = from_json(to_json(plan), "t");
  ASSERT_EQ(back.mounts.size(), 2u);
  EXPECT_TRUE(back.mounts[0].pin);
  EXPECT_EQ(back.mounts[1].path, "/w/.git/config");
  EXPECT_TRUE(back.accept_unprotected);
  EXPECT_EQ(back.covered_denies, plan.covered_denies);
  EXPECT_THROW(from_json("{\"version\": 1}", "t"), SessionError);
  EXPECT_THROW(
      from_json(
          R"({"version":1,"accept_unprotected_denies":false,"mounts":[{"path":"rel","kind":"pin"}],"placeholders":[],"covered_denies":[]})",
          "t"),
      SessionError);
}

}  // namespace
}  // namespace agent_boundary::protect
