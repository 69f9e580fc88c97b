#include "policy_gen.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "agent_boundary/error.hpp"
#include "test_world.hpp"

namespace agent_boundary {
namespace {

using ::testing::Contains;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::TestWorld;

PathEntry entry(const std::string& raw) { return PathEntry{raw, SourcePos{"p.yaml", 3, 5}}; }

Profile base_profile() {
  Profile p;
  p.file = "/profiles/p.yaml";
  p.name = "p";
  p.description = "d";
  p.git_common_dir = false;
  return p;
}

auto grant(const std::string& path, Access a, PathKind k) {
  return ::testing::AllOf(Field(&Grant::path, path), Field(&Grant::access, a),
                          Field(&Grant::kind, k));
}

GenerationContext at(const std::string& workdir) {
  GenerationContext ctx;
  ctx.workdir = workdir;
  return ctx;
}

class PolicyGen : public ::testing::Test {
 protected:
  void SetUp() override { ::setenv("HOME", w.dir("home").c_str(), 1); }
  TestWorld w;
};

TEST_F(PolicyGen, LiteralGrantsAreClassifiedByWhatExists) {
  Profile p = base_profile();
  w.dir("work");
  w.file("home/.cache/f");
  p.allow = {entry("$WORKDIR"), entry("~/.cache/f")};
  p.read = {entry("$HOME/missing")};
  const auto r = generate_policy(p, at(w.path("work")));
  EXPECT_THAT(r.policy.grants,
              Contains(grant(w.path("work"), Access::readwrite, PathKind::directory)));
  EXPECT_THAT(r.policy.grants,
              Contains(grant(w.path("home/.cache/f"), Access::readwrite, PathKind::file)));
  // An absent grant is dropped with a warning naming the profile position.
  EXPECT_THAT(r.policy.grants, Not(Contains(Field(&Grant::path, w.path("home/missing")))));
  EXPECT_THAT(r.warnings, Contains(HasSubstr("p.yaml:3:5")));
}

TEST_F(PolicyGen, GlobHitsBecomeFileOrDirectoryGrants) {
  Profile p = base_profile();
  w.file("home/.cache/pkg/a/lib/x");
  w.file("home/.cache/pkg/b/lib");
  p.read = {entry("$HOME/.cache/pkg/*/lib"), entry("$HOME/none/*")};
  const auto r = generate_policy(p, at(w.dir("work")));
  EXPECT_THAT(r.policy.grants,
              Contains(grant(w.path("home/.cache/pkg/a/lib"), Access::read, PathKind::directory)));
  EXPECT_THAT(r.policy.grants,
              Contains(grant(w.path("home/.cache/pkg/b/lib"), Access::read, PathKind::file)));
  EXPECT_THAT(r.warnings, Contains(HasSubstr("matched nothing")));
}

TEST_F(PolicyGen, SymlinkChainsGrantEveryHop) {
  Profile p = base_profile();
  w.file("store/dot/gitconfig");
  w.symlink("home/dot", w.path("store/dot"));
  w.symlink("home/.gitconfig", "dot/gitconfig");
  p.resolve_symlinks = {SymlinkSpec{entry("~/.gitconfig"), Access::read, true}};
  const auto r = generate_policy(p, at(w.dir("work")));
  for (const char* hop : {"home/.gitconfig", "home/dot/gitconfig", "store/dot"})
    EXPECT_THAT(r.policy.grants, Contains(Field(&Grant::path, w.path(hop)))) << hop;
  for (const auto& g : r.policy.grants) EXPECT_TRUE(g.bypass_builtin_denies) << g.path;
}

TEST_F(PolicyGen, SelfProtectionDeniesOrGrantsWithSelfEdit) {
  Profile p = base_profile();
  p.deny = {entry("$WORKDIR/.claude/settings.json")};
  GenerationContext ctx;
  ctx.workdir = w.dir("work");
  ctx.protected_paths = {w.path("state"), w.path("profiles"), w.path("plugins")};
  ctx.installation_paths = {w.path("plugins")};
  ctx.state_root = w.path("state");
  auto r = generate_policy(p, ctx);
  for (const char* denied : {"state", "profiles", "work/.claude/settings.json"})
    EXPECT_THAT(r.policy.denies, Contains(Field(&Deny::path, w.path(denied)))) << denied;
  EXPECT_THAT(r.policy.denies, Contains(Field(&Deny::origin, "self-protection")));
  // The installation is neither denied (reading code is harmless, and a system grant such as
  // /usr/local/lib may cover it) nor granted; session creation checks it is unwritable.
  EXPECT_THAT(r.policy.denies, Not(Contains(Field(&Deny::path, w.path("plugins")))));
  EXPECT_THAT(r.policy.grants, Not(Contains(Field(&Grant::path, w.path("plugins")))));
  // self_edit opens the policy (profiles, sessions) but never what hooks execute.
  p.self_edit = true;
  r = generate_policy(p, ctx);
  EXPECT_THAT(r.policy.grants,
              Contains(grant(w.path("profiles"), Access::readwrite, PathKind::directory)));
  EXPECT_THAT(r.policy.grants,
              Contains(grant(w.path("state/sessions"), Access::readwrite, PathKind::directory)));
  EXPECT_THAT(r.policy.grants, Not(Contains(Field(&Grant::path, w.path("state")))));
  for (const char* denied : {"state/runtimes", "state/bin"})
    EXPECT_THAT(r.policy.denies, Contains(Field(&Deny::path, w.path(denied)))) << denied;
  EXPECT_THAT(r.policy.grants, Not(Contains(Field(&Grant::path, w.path("plugins")))));
}

TEST_F(PolicyGen, PositionsReachExpansionErrors) {
  Profile p = base_profile();
  p.allow = {entry("$NOPE/x")};
  EXPECT_THAT(
      [&] { generate_policy(p, at(w.dir("work"))); },
      ::testing::Throws<ProfileError>(::testing::Property(&ProfileError::where, "p.yaml:3:5")));
}

TEST_F(PolicyGen, DeterministicOutput) {
  Profile p = base_profile();
  for (int i = 0; i < 5; ++i) w.file("home/n/f" + std::to_string(i) + ".txt");
  p.read = {entry("$HOME/n/*.txt")};
  const auto a = generate_policy(p, at(w.dir("work")));
  const auto b = generate_policy(p, at(w.dir("work")));
  ASSERT_EQ(a.policy.grants.size(), b.policy.grants.size());
  for (std::size_t i = 0; i < a.policy.grants.size(); ++i)
    EXPECT_EQ(a.policy.grants[i].path, b.policy.grants[i].path);
}

}  // namespace
}  // namespace agent_boundary
