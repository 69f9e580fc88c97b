#include "symlink_chain.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_world.hpp"

namespace agent_boundary {
namespace {

using ::testing::ElementsAre;
using testing::TestWorld;
using ::testing::UnorderedElementsAre;

TEST(SymlinkChain, PlainFileIsItself) {
  TestWorld w;
  EXPECT_THAT(symlink_chain(w.file("f")), ElementsAre(w.path("f")));
}

TEST(SymlinkChain, DotfileManagerChainEveryHop) {
  TestWorld w;
  // ~/.gitconfig -> dotfiles/gitconfig, where ~/dotfiles -> store/dotfiles (a dir link).
  w.file("store/dotfiles/gitconfig");
  w.symlink("home/dotfiles", w.path("store/dotfiles"));
  w.symlink("home/.gitconfig", "dotfiles/gitconfig");
  EXPECT_THAT(symlink_chain(w.path("home/.gitconfig")),
              UnorderedElementsAre(w.path("home/.gitconfig"), w.path("home/dotfiles/gitconfig"),
                                   w.path("home/dotfiles"), w.path("store/dotfiles")));
}

TEST(SymlinkChain, LoopsTerminateAndDanglingLinksAreKept) {
  TestWorld w;
  w.symlink("a", w.path("b"));
  w.symlink("b", w.path("a"));
  EXPECT_THAT(symlink_chain(w.path("a")), UnorderedElementsAre(w.path("a"), w.path("b")));
  w.symlink("dangling", w.path("missing"));
  EXPECT_THAT(symlink_chain(w.path("dangling")), ElementsAre(w.path("dangling")));
  EXPECT_TRUE(symlink_chain(w.path("absent")).empty());
}

}  // namespace
}  // namespace agent_boundary
