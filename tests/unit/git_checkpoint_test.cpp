// The git config parser and sanitiser, the index's gitlink reader and the checkpoint that
// neutralises what a sandbox planted in nested git dirs (issue 12).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <thread>

#include "agent_boundary/error.hpp"
#include "git/git_config.hpp"
#include "git/git_index.hpp"
#include "git/mapped_file.hpp"
#include "protect/checkpoint.hpp"
#include "protect/held_state.hpp"
#include "protect/protect.hpp"
#include "secure_file.hpp"
#include "test_world.hpp"

namespace agent_boundary {
namespace {

using ::testing::HasSubstr;
using testing::run_git;
using testing::TestWorld;

std::string sanitise(const std::string& text, std::vector<std::string>* removed = nullptr) {
  std::vector<std::string> r;
  const std::string out = git::sanitise_config(text, r);
  if (removed) *removed = r;
  return out;
}

TEST(GitConfig, ParsesSectionsSubsectionsAndValues) {
  const auto lines = git::parse_config(
      "[core]\n\tHooksPath = \".husky\" # c\n[includeIf \"gitdir:~/x/\"]\n  path = a.cfg\n");
  EXPECT_EQ(git::values_of(lines, "core.hookspath"), std::vector<std::string>{".husky"});
  EXPECT_EQ(git::values_of(lines, "includeif.*.path"), std::vector<std::string>{"a.cfg"});
}

TEST(GitConfig, SanitiserKeepsHarmlessKeys) {
  const std::string ok =
      "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ../../../sub\n"
      "[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/*:refs/*\n"
      "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n";
  std::vector<std::string> removed;
  EXPECT_EQ(sanitise(ok, &removed), ok);
  EXPECT_TRUE(removed.empty());
}

TEST(GitConfig, SanitiserNeutralisesEveryWayToRunAProgram) {
  for (const std::string evil : {"[core]\n\tfsmonitor = touch /tmp/m\n",
                                 "[core]\n\thooksPath = /tmp/h\n",
                                 "[core]\n\tsshCommand = x\n",
                                 "[core]\n\tpager = x\n",
                                 "[core]\n\teditor = x\n",
                                 "[diff]\n\texternal = x\n",
                                 "[filter \"lfs\"]\n\tclean = x\n",
                                 "[alias]\n\tst = !x\n",
                                 "[alias]\n\tst = -c core.fsmonitor=x status\n",
                                 "[credential]\n\thelper = !x\n",
                                 "[include]\n\tpath = ../evil\n",
                                 "[includeIf \"gitdir:/\"]\n\tpath = ../evil\n",
                                 "[CORE]\n\tFSMONITOR = x\n",
                                 "[core \"x\"]\n\tfsmonitor = x\n",
                                 "[core] fsmonitor = x\n",
                                 "[core]\n\tpager = a \\\nfsmonitor = x\n",
                                 "[remote \"o\"]\n\turl = ext::sh -c x\n",
                                 "fsmonitor = x\n",
                                 "[core.x]\n\tfsmonitor = x\n",
                                 "\xef\xbb\xbf[core]\n\tfsmonitor=x\n"}) {
    std::vector<std::string> removed;
    const std::string out = sanitise(evil, &removed);
    EXPECT_FALSE(removed.empty()) << evil;
    for (const auto& l : git::parse_config(out))
      EXPECT_TRUE(l.kind != git::ConfigLine::Kind::entry || git::harmless_entry(l))
          << evil << " -> " << out;
  }
}

TEST(GitConfig, AHeaderWithAKeyOnItsLineTakesTheFollowingKeysWithIt) {
  // After the odd header goes, `y` belongs to [core] for git: it is judged there again.
  const std::string out = sanitise("[core]\n\tbare = false\n[alias] x = !a\n\ty = !b\n");
  EXPECT_THAT(out, HasSubstr("# agent-boundary neutralised: [alias] x = !a"));
  EXPECT_THAT(out, HasSubstr("# agent-boundary neutralised: \ty = !b"));
}

TEST(GitIndex, FindsGitlinksInEveryIndexVersion) {
  for (const char* version : {"2", "3", "4"}) {
    TestWorld w;
    const std::string wd = w.dir("wd");
    run_git(wd, {"init", "-q"});
    run_git(wd, {"config", "index.version", version});
    w.file("wd/a.txt");
    w.file("wd/dir/b.txt");
    const std::string sub = w.dir("wd/dir/sub");
    run_git(sub, {"init", "-q"});
    w.file("wd/dir/sub/c.txt");
    run_git(sub, {"add", "c.txt"});
    run_git(sub, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"});
    run_git(wd, {"add", "-A"});
    run_git(wd, {"update-index", "--index-version", version});
    const auto links = git::read_gitlinks(wd + "/.git/index");
    EXPECT_EQ(links.paths, std::vector<std::string>{"dir/sub"}) << "index version " << version;
  }
}

TEST(GitIndex, MissingIndexHasNoGitlinksAndGarbageIsAnError) {
  TestWorld w;
  EXPECT_TRUE(git::read_gitlinks(w.path("none")).paths.empty());
  EXPECT_THROW(git::read_gitlinks(w.file("bad", "not an index at all, certainly")), Error);
}

TEST(MappedFile, AReadOfPagesTheFileLostReturnsFalseInsteadOfKillingTheProcess) {
  TestWorld w;
  const std::string f = w.file("big", std::string(1 << 16, 'x'));
  const int fd = ::open(f.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  git::MappedFile map(fd, 1 << 16, f.c_str());
  const auto sum_all = [](void* arg, const unsigned char* d, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) *static_cast<std::size_t*>(arg) += d[i];
  };
  struct sigaction before {};  // SIG_DFL, or a sanitizer's handler
  ::sigaction(SIGBUS, nullptr, &before);
  std::size_t sum = 0;
  EXPECT_TRUE(map.read(sum_all, &sum));
  EXPECT_EQ(sum, std::size_t(1 << 16) * 'x');
  ASSERT_EQ(::ftruncate(fd, 100), 0);  // what a sandbox can do to the index mid-read
  ::close(fd);
  EXPECT_FALSE(map.read(sum_all, &sum));
  // The guard is gone after the read: the process's own SIGBUS disposition is back.
  struct sigaction now {};
  ::sigaction(SIGBUS, nullptr, &now);
  EXPECT_EQ(now.sa_handler, before.sa_handler);
}

// A sandboxed process truncating and restoring the index while the checkpoint reads it:
// every read either sees the gitlink or refuses; none crashes the hook.
TEST(GitIndex, AnIndexTruncatedWhileReadIsReadAgainOrRefusedNeverACrash) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  run_git(wd, {"init", "-q"});
  for (int i = 0; i < 3000; ++i) w.file("wd/f" + std::to_string(i));
  const std::string sub = w.dir("wd/sub");
  run_git(sub, {"init", "-q"});
  run_git(sub, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m",
                "c"});
  run_git(wd, {"add", "-A"});
  const std::string index = wd + "/.git/index";
  std::ifstream in(index, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GT(bytes.size(), 100000u);
  std::atomic<bool> done{false};
  std::thread truncator([&] {
    const int fd = ::open(index.c_str(), O_RDWR | O_CLOEXEC);
    while (fd >= 0 && !done) {
      if (::ftruncate(fd, 4096) != 0 ||
          ::pwrite(fd, bytes.data(), bytes.size(), 0) != ssize_t(bytes.size()))
        break;
      ::usleep(300);  // whole for a while, so some reads see it so
    }
    if (fd >= 0) ::close(fd);
  });
  int seen = 0, refused = 0;
  for (int i = 0; i < 300; ++i) {
    try {
      const auto links = git::read_gitlinks(index);
      EXPECT_EQ(links.paths, std::vector<std::string>{"sub"});
      ++seen;
    } catch (const Error&) {
      ++refused;
    }
  }
  done = true;
  truncator.join();
  EXPECT_EQ(seen + refused, 300);
  EXPECT_GT(seen, 0);
}

TEST(Checkpoint, NeutralisesANestedRepositoryAddedAsAGitlink) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  run_git(wd, {"init", "-q"});
  protect::HeldState s;
  s.writable = {wd};
  s.top = s.git_dir = wd;
  s.git_dir = s.common_dir = wd + "/.git";
  const std::string sub = w.dir("wd/sub");
  run_git(sub, {"init", "-q"});
  w.file("wd/sub/f");
  run_git(sub, {"add", "f"});
  run_git(sub, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"});
  run_git(sub, {"config", "core.fsmonitor", "touch marker"});
  w.file("wd/sub/.git/hooks/post-checkout", "#!/bin/sh\n");
  ::chmod((sub + "/.git/hooks/post-checkout").c_str(), 0755);
  run_git(wd, {"add", "sub"});
  const auto actions = protect::checkpoint(s);
  ASSERT_EQ(actions.size(), 2u);
  EXPECT_THAT(actions[0], HasSubstr("core.fsmonitor"));
  EXPECT_THAT(actions[1], HasSubstr("disabled the hook"));
  EXPECT_THAT(*read_file(sub + "/.git/config"), HasSubstr("# agent-boundary neutralised"));
  EXPECT_TRUE(protect::checkpoint(s).empty());  // nothing left to do
}

TEST(Checkpoint, LeavesGitDirsOutsideTheWritableGrantsAlone) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  run_git(wd, {"init", "-q"});
  const std::string other = w.dir("other");
  run_git(other, {"init", "-q"});
  run_git(other, {"config", "core.pager", "less"});
  protect::HeldState s;
  s.writable = {wd};
  s.top = wd;
  s.git_dir = s.common_dir = wd + "/.git";
  w.dir("wd/.git/modules");
  ASSERT_EQ(::symlink(other.c_str(), (wd + "/.git/modules/x").c_str()), 0);
  EXPECT_TRUE(protect::checkpoint(s).empty());
  EXPECT_THAT(*read_file(other + "/.git/config"), ::testing::Not(HasSubstr("neutralised")));
}

TEST(Checkpoint, MovesAsideAWatchedFileThatAppeared) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  protect::HeldState s;
  s.writable = {wd};
  s.held.push_back({wd + "/.mcp.json", "allow_tool_config_escape", false});
  EXPECT_TRUE(protect::checkpoint(s).empty());
  w.file("wd/.mcp.json", "{}");
  const auto actions = protect::checkpoint(s);
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_THAT(actions[0], HasSubstr("allow_tool_config_escape"));
  struct stat st {};
  EXPECT_NE(::lstat((wd + "/.mcp.json").c_str(), &st), 0);
  EXPECT_EQ(::lstat((wd + "/.mcp.json.agent-boundary-moved").c_str(), &st), 0);
}

// Below the root: what a command planted after creation is moved aside when the checkpoint
// reaches there (after a command, at session end); what was there at creation stays, and
// so do the non-held neighbours (`.github/workflows`). The hook's root-only reach leaves it.
TEST(Checkpoint, MovesAsideToolConfigsPlantedBelowTheRoot) {
  TestWorld w;
  const std::string wd = w.dir("wd");
  w.file("wd/app/.idea/workspace.xml", "<project/>");  // the user's own
  const std::string sub = w.dir("wd/sub");
  run_git(sub, {"init", "-q"});
  protect::PlanOptions options;
  ResolvedPolicy policy;
  policy.grants.push_back({wd, Access::readwrite, PathKind::directory, false, "allow"});
  const protect::ProtectPlan plan = protect::compute_plan(policy, wd, {wd}, options);
  const protect::HeldState s = protect::make_held_state(plan, {wd}, wd, options);
  EXPECT_THAT(s.nested_baseline, ::testing::ElementsAre(wd + "/app/.idea"));
  for (const char* rel : {"wd/app/.envrc", "wd/app/web/.vscode/tasks.json",
                          "wd/app/.github/hooks/x.json", "wd/app/.github/workflows/ci.yml",
                          "wd/app/web/.claude/settings.json", "wd/app/web/deep/.envrc"})
    w.file(rel);
  EXPECT_TRUE(protect::checkpoint(s, protect::Reach::root).empty());
  const auto actions = protect::checkpoint(s, protect::Reach::below_root);
  EXPECT_EQ(actions.size(), 4u) << ::testing::PrintToString(actions);
  struct stat st {};
  for (const char* moved :
       {"app/.envrc", "app/web/.vscode", "app/.github/hooks", "app/web/.claude"}) {
    EXPECT_NE(::lstat((wd + "/" + moved).c_str(), &st), 0) << moved;
    EXPECT_EQ(::lstat((wd + "/" + moved + ".agent-boundary-moved").c_str(), &st), 0) << moved;
  }
  for (const char* kept : {"app/.idea/workspace.xml", "app/.github/workflows/ci.yml",
                           "app/web/deep/.envrc", "sub/.git/config"})
    EXPECT_EQ(::lstat((wd + "/" + kept).c_str(), &st), 0) << kept;
  EXPECT_TRUE(protect::checkpoint(s, protect::Reach::below_root).empty());
}

}  // namespace
}  // namespace agent_boundary
