// What core exports for backends to find and place things on the host:
// agent_boundary/executables.hpp and agent_boundary/host_path.hpp.
#include "agent_boundary/executables.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "agent_boundary/host_path.hpp"
#include "test_world.hpp"

namespace agent_boundary {
namespace {

using testing::TestWorld;

TEST(CompareVersions, ComparesFieldsAsNumbers) {
  EXPECT_EQ(compare_versions("0.0.83", "0.0.83"), 0);
  EXPECT_LT(compare_versions("0.0.9", "0.0.83"), 0);
  EXPECT_GT(compare_versions("0.1.0", "0.0.83"), 0);
  EXPECT_GT(compare_versions("1.0", "0.0.83"), 0);
  EXPECT_EQ(compare_versions("1.0", "1.0.0"), 0);
  EXPECT_LT(compare_versions("0.80.0", "0.81.0"), 0);
}

TEST(ExecutableSearch, OwnDirFirstThenSystemThenAbsolutePathEntries) {
  const char* old = ::getenv("PATH");
  const std::string saved = old ? old : "";
  ::setenv("PATH", "relative/bin:/opt/x/bin::/usr/bin", 1);
  const auto c = executable_search("tool");
  ::setenv("PATH", saved.c_str(), 1);
  ASSERT_EQ(c.size(), 5u);
  EXPECT_TRUE(c[0].ends_with("/tool") && c[0][0] == '/');  // beside this test binary
  EXPECT_EQ(c[1], "/usr/local/bin/tool");
  EXPECT_EQ(c[2], "/usr/bin/tool");
  EXPECT_EQ(c[3], "/opt/x/bin/tool");  // a relative PATH entry is never a candidate
  EXPECT_EQ(c[4], "/usr/bin/tool");
}

TEST(ExecutableSearch, FirstExecutableIsResolvedAndSkipsWhatCannotRun) {
  TestWorld w;
  const std::string plain = w.file("a/tool", "data");
  const std::string runnable = w.file("b/tool", "#!/bin/sh\n");
  ::chmod(runnable.c_str(), 0755);
  const std::string link = w.path("c/tool");
  w.dir("c");
  ASSERT_EQ(::symlink(runnable.c_str(), link.c_str()), 0);
  EXPECT_EQ(first_executable({"relative/tool", plain, w.path("missing"), link}), runnable);
  EXPECT_EQ(first_executable({plain, w.dir("d")}), "");
  EXPECT_FALSE(is_executable_file(w.path("d")));
}

TEST(ResolvePath, ResolvesTheExistingPrefixAndKeepsTheRest) {
  TestWorld w;
  const std::string real = w.dir("real");
  ASSERT_EQ(::symlink(real.c_str(), w.path("alias").c_str()), 0);
  EXPECT_EQ(resolve_path(w.path("alias") + "/not/yet"), real + "/not/yet");
  EXPECT_EQ(resolve_path(w.path("alias")), real);
  EXPECT_EQ(resolve_path("/"), "/");
}

TEST(ParentDir, TopLevelAndRootHaveRootAsParent) {
  EXPECT_EQ(parent_dir("/a/b/c"), "/a/b");
  EXPECT_EQ(parent_dir("/a"), "/");
  EXPECT_EQ(parent_dir("/"), "/");
}

}  // namespace
}  // namespace agent_boundary
