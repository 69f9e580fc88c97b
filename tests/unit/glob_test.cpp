#include "glob.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_world.hpp"

namespace agent_boundary {
namespace {

using ::testing::ElementsAre;
using testing::TestWorld;

TEST(Glob, StarMatchesDotfilesAndOnlyOneLevel) {
  TestWorld w;
  w.file("pkg/a/lib/x");
  w.file("pkg/.b/lib/x");
  w.file("pkg/c/other/x");
  w.file("pkg/d");  // a file: cannot hold lib/
  const auto r = expand_glob(w.path("pkg/*/lib"));
  EXPECT_FALSE(r.truncated);
  EXPECT_THAT(r.matches, ElementsAre(w.path("pkg/.b/lib"), w.path("pkg/a/lib")));
}

TEST(Glob, FilePatternsAndCharacterClasses) {
  TestWorld w;
  w.file("notes/a.txt");
  w.file("notes/b.md");
  w.file("notes/c1.txt");
  EXPECT_THAT(expand_glob(w.path("notes/*.txt")).matches,
              ElementsAre(w.path("notes/a.txt"), w.path("notes/c1.txt")));
  EXPECT_THAT(expand_glob(w.path("notes/c[0-9].tx?")).matches, ElementsAre(w.path("notes/c1.txt")));
}

TEST(Glob, DoubleStarRecursesWithoutFollowingDirectoryLinks) {
  TestWorld w;
  w.file("t/a/b/c/target.json");
  w.file("t/target.json");
  w.symlink("t/loop", w.path("t"));  // would loop forever if followed
  const auto r = expand_glob(w.path("t/**/target.json"));
  EXPECT_FALSE(r.truncated);
  EXPECT_THAT(r.matches, ElementsAre(w.path("t/a/b/c/target.json"), w.path("t/target.json")));
}

TEST(Glob, WalksOnlyBelowTheLiteralPrefix) {
  TestWorld w;
  for (int i = 0; i < 50; ++i) w.file("big/d" + std::to_string(i) + "/f");
  w.file("small/x.conf");
  // The visit budget is smaller than `big` but large enough for `small`: only the
  // literal prefix `small/` may be listed.
  const auto r = expand_glob(w.path("small/*.conf"), 100, 10);
  EXPECT_FALSE(r.truncated);
  EXPECT_THAT(r.matches, ElementsAre(w.path("small/x.conf")));
}

TEST(Glob, LimitsAreReported) {
  TestWorld w;
  for (int i = 0; i < 20; ++i) w.file("many/f" + std::to_string(i));
  const auto r = expand_glob(w.path("many/*"), 5);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.matches.size(), 5u);
}

TEST(Glob, NoMatchAndMissingPrefix) {
  TestWorld w;
  EXPECT_TRUE(expand_glob(w.path("nothing/*")).matches.empty());
  EXPECT_TRUE(has_glob("/a/*"));
  EXPECT_TRUE(has_glob("/a/[b]"));
  EXPECT_FALSE(has_glob("/a/b"));
}

}  // namespace
}  // namespace agent_boundary
