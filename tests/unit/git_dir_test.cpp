#include "git_dir.hpp"

#include <gtest/gtest.h>

#include "agent_boundary/process.hpp"
#include "test_world.hpp"

namespace agent_boundary {
namespace {

using testing::run_git;
using testing::TestWorld;

TEST(GitLayout, PlainRepoFromASubdirectory) {
  TestWorld w;
  const std::string repo = w.dir("repo");
  run_git(repo, {"init", "-q"});
  const std::string sub = w.dir("repo/src/deep");
  const auto layout = find_git_layout(sub);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->top, repo);
  EXPECT_EQ(layout->git_dir, repo + "/.git");
  EXPECT_EQ(layout->common_dir, repo + "/.git");
  EXPECT_FALSE(layout->linked_worktree);
}

TEST(GitLayout, LinkedWorktreeFindsTheRealCommonDir) {
  TestWorld w;
  const std::string repo = w.dir("main");
  run_git(repo, {"init", "-q"});
  w.file("main/f", "x");
  run_git(repo, {"add", "f"});
  run_git(repo, {"commit", "-qm", "one"});
  run_git(repo, {"worktree", "add", "-q", w.path("wt"), "-b", "feature"});
  const auto layout = find_git_layout(w.path("wt"));
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->top, w.path("wt"));
  EXPECT_EQ(layout->git_dir, repo + "/.git/worktrees/wt");
  EXPECT_EQ(layout->common_dir, repo + "/.git");
  EXPECT_TRUE(layout->linked_worktree);
}

TEST(GitLayout, NotARepository) {
  TestWorld w;
  EXPECT_FALSE(find_git_layout(w.dir("plain")));
  w.file("fake/.git", "not a gitdir line\n");
  EXPECT_FALSE(find_git_layout(w.path("fake")));
}

}  // namespace
}  // namespace agent_boundary
