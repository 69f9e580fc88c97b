#include "paths.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "agent_boundary/error.hpp"

namespace agent_boundary {
namespace {

using ::testing::HasSubstr;

PathVars vars() {
  PathVars v;
  v.home = "/h";
  v.workdir = "/w";
  v.extra = {{"TMPDIR", "/t"}, {"XDG_CONFIG_HOME", "/h/.config"}};
  return v;
}

TEST(ExpandPath, TildeHomeWorkdirAndBraces) {
  EXPECT_EQ(expand_path("~", vars()), "/h");
  EXPECT_EQ(expand_path("~/.ssh", vars()), "/h/.ssh");
  EXPECT_EQ(expand_path("$HOME/.cache/uv", vars()), "/h/.cache/uv");
  EXPECT_EQ(expand_path("${WORKDIR}/src/", vars()), "/w/src");
  EXPECT_EQ(expand_path("$XDG_CONFIG_HOME/git", vars()), "/h/.config/git");
  EXPECT_EQ(expand_path("/a/./b/../c", vars()), "/a/c");
  EXPECT_EQ(expand_path("$TMPDIR/*.log", vars()), "/t/*.log");
}

TEST(ExpandPath, RefusesWhatItCannotMakeAbsolute) {
  EXPECT_THAT([] { expand_path("relative/x", vars()); },
              ::testing::ThrowsMessage<ProfileError>(HasSubstr("not an absolute path")));
  EXPECT_THAT([] { expand_path("$NOPE/x", vars()); },
              ::testing::ThrowsMessage<ProfileError>(HasSubstr("unknown variable `$NOPE`")));
  EXPECT_THAT([] { expand_path("~bob/x", vars()); },
              ::testing::ThrowsMessage<ProfileError>(HasSubstr("`~user`")));
  EXPECT_THAT([] { expand_path("${HOME", vars()); },
              ::testing::ThrowsMessage<ProfileError>(HasSubstr("unterminated")));
  PathVars no_workdir = vars();
  no_workdir.workdir.clear();
  EXPECT_THAT([&] { expand_path("$WORKDIR/x", no_workdir); },
              ::testing::ThrowsMessage<ProfileError>(HasSubstr("$WORKDIR")));
}

TEST(PathWithin, ComponentWise) {
  EXPECT_TRUE(path_within("/a/b", "/a"));
  EXPECT_TRUE(path_within("/a", "/a"));
  EXPECT_FALSE(path_within("/ab", "/a"));
  EXPECT_TRUE(path_within("/x", "/"));
}

TEST(Roots, EnvironmentOverridesAndXdg) {
  ::setenv("HOME", "/var/tmp/nohome-ab", 1);
  ::setenv("AGENT_BOUNDARY_STATE_DIR", "/var/tmp/nostate-ab/s", 1);
  EXPECT_EQ(state_root(), "/var/tmp/nostate-ab/s");
  ::unsetenv("AGENT_BOUNDARY_STATE_DIR");
  ::setenv("XDG_STATE_HOME", "/var/tmp/xdg-ab", 1);
  EXPECT_EQ(state_root(), "/var/tmp/xdg-ab/agent-boundary");
  ::unsetenv("XDG_STATE_HOME");
  EXPECT_EQ(state_root(), "/var/tmp/nohome-ab/.local/state/agent-boundary");
  ::setenv("AGENT_BOUNDARY_PROFILES_DIR", "", 1);  // empty counts as unset
  ::setenv("XDG_CONFIG_HOME", "/var/tmp/cfg-ab", 1);
  EXPECT_EQ(profiles_dir(), "/var/tmp/cfg-ab/agent-boundary/profiles");
  ::setenv("AGENT_BOUNDARY_PROFILES_DIR", "~/p", 1);
  EXPECT_EQ(profiles_dir(), "/var/tmp/nohome-ab/p");
  ::unsetenv("AGENT_BOUNDARY_PROFILES_DIR");
  ::unsetenv("XDG_CONFIG_HOME");
}

}  // namespace
}  // namespace agent_boundary
