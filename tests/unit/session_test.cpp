// Session writing against a mock Backend: what is pinned, what is refused, and that nothing
// is half-written when something fails.
#include "session.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "agent_boundary/error.hpp"
#include "mock_install.hpp"
#include "policy_json.hpp"
#include "secure_file.hpp"
#include "test_world.hpp"

namespace fs = std::filesystem;

namespace agent_boundary {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Invoke;
using testing::MockBackend;
using ::testing::NiceMock;
using ::testing::Return;
using testing::TestWorld;

using SessionTest = testing::MockInstallTest;

mode_t mode_of(const std::string& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_mode & 07777;
}

TEST_F(SessionTest, PinsEverythingPrivately) {
  const auto out = write_session(request(), install);
  const std::string dir = w.path("state/sessions/s1");
  EXPECT_EQ(loaded_plugin, w.path("lib/plugins/backend-nono.so"));
  EXPECT_EQ(mode_of(dir), 0700u);
  for (const char* f : {"boundary.json", "policy.json", "fake-backend.json"})
    EXPECT_EQ(mode_of(dir + "/" + f), 0600u) << f;
  const BoundaryConfig c = read_boundary(dir);
  EXPECT_EQ(c.profile, "default");
  EXPECT_EQ(c.state, "on");
  EXPECT_EQ(c.backend, "nono");
  EXPECT_EQ(c.backend_executable.path, w.path("bin/nono-fake"));
  EXPECT_EQ(c.agent_boundary, w.path("bin/agent-boundary"));
  // Self-protection is pinned whatever created the session.
  EXPECT_THAT(c.protected_paths, ::testing::IsSupersetOf({dir, w.path("profiles"),
                                                          w.path("lib/plugins"), w.path("state")}));
  EXPECT_EQ(describe(c), "profile default state on");
  // No staging dirs left beside it.
  for (const auto& e : fs::directory_iterator(w.path("state/sessions")))
    EXPECT_EQ(e.path().filename(), "s1");
}

TEST_F(SessionTest, FailedSelfTestLeavesNothingBehind) {
  EXPECT_CALL(backend, wrap(_)).WillOnce(Return(std::vector<std::string>{"/bin/false"}));
  EXPECT_THAT([&] { write_session(request(), install); },
              ::testing::ThrowsMessage<BackendError>(HasSubstr("could not run a command")));
  EXPECT_FALSE(fs::exists(w.path("state/sessions/s1")));
  EXPECT_TRUE(fs::is_empty(w.path("state/sessions")));
}

// A backend that holds paths itself (srt, a container) gets them in the policy, already
// present on disk, and the launcher gets no mount plan; one that cannot (nono) gets a plan.
TEST_F(SessionTest, HeldPathsGoToAHoldingBackendAndTheLauncherOtherwise) {
  w.file("profiles/default.yaml",
         "name: default\ndescription: d\ngit_common_dir: false\nallow: [$WORKDIR]\n"
         "deny: [$WORKDIR/secret.env]\n");
  w.file("work/secret.env", "TOKEN=x\n");
  ResolvedPolicy rendered;
  ON_CALL(backend, holds_paths()).WillByDefault(Return(true));
  EXPECT_CALL(backend, render(_, _)).WillOnce(Invoke([&](const ResolvedPolicy& p, auto&) {
    rendered = p;
    return std::vector<RenderedFile>{{"fake-backend.json", "{}\n"}};
  }));
  write_session(request(), install);
  const std::string dir = w.path("state/sessions/s1");
  const auto held = [&](const std::string& path) {
    return std::find_if(rendered.held.begin(), rendered.held.end(),
                        [&](const HeldPath& h) { return h.path == path; });
  };
  ASSERT_NE(held(w.path("work/.claude")), rendered.held.end());
  EXPECT_EQ(held(w.path("work/.claude"))->hold, HeldPath::Hold::read_only);
  EXPECT_EQ(held(w.path("work/.claude"))->kind, PathKind::directory);
  EXPECT_TRUE(fs::is_directory(w.path("work/.claude")));  // created, so it can be bound
  ASSERT_NE(held(w.path("work/secret.env")), rendered.held.end());
  EXPECT_EQ(held(w.path("work/secret.env"))->hold, HeldPath::Hold::hidden);
  EXPECT_EQ(held(w.path("work/secret.env"))->kind, PathKind::file);
  // Pinned with the policy, and nothing for the launcher to bind.
  const ResolvedPolicy pinned = policy_from_json(*read_file(dir + "/policy.json"), "p");
  EXPECT_EQ(pinned.held.size(), rendered.held.size());
  EXPECT_EQ(pinned.held.back().path, rendered.held.back().path);
  EXPECT_EQ(pinned.held.back().hold, rendered.held.back().hold);
  EXPECT_THAT(*read_file(dir + "/protect.json"), HasSubstr("\"mounts\": []"));

  ON_CALL(backend, holds_paths()).WillByDefault(Return(false));
  EXPECT_CALL(backend, render(_, _)).WillOnce(Invoke([&](const ResolvedPolicy& p, auto&) {
    rendered = p;
    return std::vector<RenderedFile>{{"fake-backend.json", "{}\n"}};
  }));
  write_session(request("s2"), install);
  EXPECT_TRUE(rendered.held.empty());
  EXPECT_THAT(*read_file(w.path("state/sessions/s2/protect.json")),
              HasSubstr(w.path("work/secret.env")));
}

TEST_F(SessionTest, StartRunsOnTheStagedDirBeforeTheSelfTest) {
  ::testing::InSequence order;
  std::string started;
  EXPECT_CALL(backend, start(_)).WillOnce(Invoke([&](const SessionView& v) {
    started = v.session_dir;
  }));
  EXPECT_CALL(backend, wrap(_)).WillOnce(Invoke([&](const WrapRequest& r) {
    EXPECT_EQ(r.session.session_dir, started);
    return std::vector<std::string>{"/bin/true"};
  }));
  EXPECT_CALL(backend, stop(_)).Times(0);
  write_session(request(), install);
  EXPECT_THAT(started, HasSubstr(w.path("state/sessions/.s1.new-")));
}

TEST_F(SessionTest, AFailedSelfTestStopsWhatStartStarted) {
  std::string started, stopped;
  EXPECT_CALL(backend, start(_)).WillOnce(Invoke([&](const SessionView& v) {
    started = v.session_dir;
  }));
  EXPECT_CALL(backend, wrap(_)).WillOnce(Return(std::vector<std::string>{"/bin/false"}));
  EXPECT_CALL(backend, stop(_)).WillOnce(Invoke([&](const SessionView& v) {
    stopped = v.session_dir;
  }));
  EXPECT_THROW(write_session(request(), install), BackendError);
  EXPECT_EQ(stopped, started);
  EXPECT_TRUE(fs::is_empty(w.path("state/sessions")));
}

TEST_F(SessionTest, BackendToolsArePinnedAbsoluteAndNeverSandboxWritable) {
  EXPECT_CALL(backend, locate(_))
      .WillOnce(Return(BackendExecutable{w.path("bin/nono-fake"), "9.9", {{"node", "/bin/sh"}}}));
  write_session(request(), install);
  EXPECT_EQ(read_boundary(w.path("state/sessions/s1")).backend_executable.tools,
            (std::map<std::string, std::string>{{"node", "/bin/sh"}}));

  EXPECT_CALL(backend, locate(_))
      .WillOnce(Return(BackendExecutable{w.path("bin/nono-fake"), "9.9", {{"node", "node"}}}));
  EXPECT_THAT([&] { write_session(request("s2"), install); },
              ::testing::ThrowsMessage<BackendError>(HasSubstr("absolute")));
  EXPECT_CALL(backend, locate(_))
      .WillOnce(Return(BackendExecutable{
          w.path("bin/nono-fake"), "9.9", {{"node", w.file("work/node_modules/.bin/node")}}}));
  EXPECT_THAT([&] { write_session(request("s3"), install); },
              ::testing::ThrowsMessage<SessionError>(HasSubstr("lets the sandbox write")));
}

TEST_F(SessionTest, StopSessionReachesThePinnedBackendAndNeverThrows) {
  write_session(request(), install);
  const std::string dir = w.path("state/sessions/s1");
  std::string stopped;
  EXPECT_CALL(backend, stop(_)).WillOnce(Invoke([&](const SessionView& v) {
    stopped = v.session_dir;
  }));
  EXPECT_EQ(stop_session(dir, install), "");
  EXPECT_EQ(stopped, dir);
  EXPECT_CALL(backend, stop(_)).WillOnce(::testing::Throw(BackendError("engine gone")));
  EXPECT_THAT(stop_session(dir, install), HasSubstr("engine gone"));
  // Nothing to stop for a dir that holds no session.
  EXPECT_EQ(stop_session(w.dir("state/sessions/empty"), install), "");
}

TEST_F(SessionTest, UnenforceableSelfProtectionIsRefused) {
  EXPECT_CALL(backend, deny_state(_, _)).WillOnce(Invoke([](const ResolvedPolicy& p, auto&) {
    std::vector<DenyState> out;
    for (const auto& d : p.denies) out.push_back({d.path, d.origin, Enforcement::unenforced, "no"});
    return out;
  }));
  EXPECT_THAT([&] { write_session(request(), install); },
              ::testing::ThrowsMessage<SessionError>(HasSubstr("cannot deny")));
  EXPECT_FALSE(fs::exists(w.path("state/sessions/s1")));
}

// The backend's own grants (nono's /tmp group) are not in the policy: the enforcement
// itself is asked whether each directory of installed code is writable inside.
TEST_F(SessionTest, InstalledCodeTheSandboxCanWriteIsRefused) {
  std::vector<std::string> probed;
  EXPECT_CALL(backend, probe(_)).WillRepeatedly(Invoke([&](const ProbeRequest& r) {
    probed.push_back(r.path);
    EXPECT_EQ(r.access, Access::write);
    const bool plugins = r.path.rfind(w.path("lib/plugins") + "/", 0) == 0;
    return ProbeResult{plugins ? ProbeResult::Verdict::allowed : ProbeResult::Verdict::denied, {}};
  }));
  EXPECT_THAT([&] { write_session(request(), install); },
              ::testing::ThrowsMessage<SessionError>(::testing::AllOf(
                  HasSubstr("the plugin directory"), HasSubstr("writable inside"))));
  EXPECT_FALSE(fs::exists(w.path("state/sessions/s1")));
  // Each directory once, through a fresh name in it (nothing existing is opened).
  EXPECT_THAT(probed, ::testing::Contains(
                          ::testing::StartsWith(w.path("bin") + "/.agent-boundary-write-check-")));

  // A probe that cannot answer fails closed, naming the directory.
  ::testing::Mock::VerifyAndClearExpectations(&backend);
  EXPECT_CALL(backend, probe(_))
      .WillRepeatedly(Return(ProbeResult{ProbeResult::Verdict::inconclusive, "probe crashed"}));
  EXPECT_THAT([&] { write_session(request(), install); },
              ::testing::ThrowsMessage<BackendError>(HasSubstr("probe crashed")));
  EXPECT_FALSE(fs::exists(w.path("state/sessions/s1")));
}

TEST_F(SessionTest, TrustedExecutableInAWritableGrantIsRefused) {
  EXPECT_CALL(backend, locate(_))
      .WillOnce(Return(BackendExecutable{w.file("work/.venv/bin/nono"), "9.9", {}}));
  EXPECT_THAT([&] { write_session(request(), install); },
              ::testing::ThrowsMessage<SessionError>(HasSubstr("lets the sandbox write")));
}

TEST_F(SessionTest, BackendErrorsPropagateTyped) {
  EXPECT_CALL(backend, preflight(_)).WillOnce(::testing::Throw(BackendError("no Landlock")));
  EXPECT_THROW(write_session(request(), install), BackendError);
}

TEST_F(SessionTest, OnOffChangeOnlyTheState) {
  write_session(request(), install);
  const std::string dir = w.path("state/sessions/s1");
  const auto policy_before = *read_file(dir + "/policy.json");
  EXPECT_EQ(set_session_state(dir, "off").state, "off");
  EXPECT_EQ(read_boundary(dir).state, "off");
  EXPECT_EQ(*read_file(dir + "/policy.json"), policy_before);
  EXPECT_THROW(set_session_state(dir, "banana"), UsageError);
}

TEST_F(SessionTest, PinnedUntilRegenerated) {
  write_session(request(), install);
  const std::string dir = w.path("state/sessions/s1");
  set_session_state(dir, "off");
  w.file("home/extra/f");
  w.file("profiles/default.yaml",
         "name: default\ndescription: d\ngit_common_dir: false\nallow: [$WORKDIR]\n"
         "read: [$HOME/extra]\n");
  EXPECT_THAT(*read_file(dir + "/policy.json"), ::testing::Not(HasSubstr("extra")));
  const auto out = regenerate_session(dir, std::nullopt, install);
  EXPECT_THAT(*read_file(dir + "/policy.json"), HasSubstr(w.path("home/extra")));
  EXPECT_EQ(out.config.state, "off");  // reload keeps the state
  regenerate_session(dir, "other", install);
  EXPECT_EQ(read_boundary(dir).profile, "other");
}

TEST_F(SessionTest, EveryPinnedFileIsListedAndAMissingOneRefusesTheSession) {
  write_session(request(), install);
  const std::string dir = w.path("state/sessions/s1");
  const BoundaryConfig c = read_boundary(dir);
  EXPECT_THAT(c.pinned_files, ::testing::UnorderedElementsAre("fake-backend.json", "protect.json",
                                                              "mask", "held.json", "policy.json"));
  EXPECT_THAT(damaged_pinned_files(dir, c), ::testing::IsEmpty());
  EXPECT_NO_THROW(require_pinned_files(dir, c));
  // The list survives a state change.
  EXPECT_EQ(set_session_state(dir, "off").pinned_files, c.pinned_files);
  for (const char* name : {"protect.json", "fake-backend.json", "mask"}) {
    const std::string f = dir + "/" + name;
    const auto text = *read_file(f);
    ASSERT_EQ(::unlink(f.c_str()), 0);
    EXPECT_THAT(damaged_pinned_files(dir, c), ::testing::ElementsAre(HasSubstr(name)));
    EXPECT_THAT([&] { require_pinned_files(dir, c); },
                ::testing::ThrowsMessage<SessionError>(HasSubstr(name)));
    ASSERT_EQ(::mkdir(f.c_str(), 0700), 0);  // present, but no readable file
    EXPECT_THAT(damaged_pinned_files(dir, c), ::testing::ElementsAre(HasSubstr("not a regular")));
    ASSERT_EQ(::rmdir(f.c_str()), 0);
    write_file_atomic(f, text);
  }
  // A session from before the list: refused, with the reason.
  BoundaryConfig old = c;
  old.pinned_files.clear();
  EXPECT_THAT(damaged_pinned_files(dir, old), ::testing::ElementsAre(HasSubstr("predates")));
}

TEST_F(SessionTest, CorruptOrMissingBoundaryIsATypedError) {
  const std::string dir = w.dir("state/sessions/bad");
  EXPECT_THAT([&] { read_boundary(dir); },
              ::testing::ThrowsMessage<SessionError>(HasSubstr("no complete session")));
  for (const char* text : {"", "{", "[]", "{\"format\": 1}"}) {
    write_file_atomic(dir + "/boundary.json", text);
    EXPECT_THAT([&] { read_boundary(dir); },
                ::testing::ThrowsMessage<SessionError>(HasSubstr("corrupt boundary.json")))
        << text;
  }
  write_session(request("ok"), install);
  auto text = *read_file(w.path("state/sessions/ok/boundary.json"));
  text.replace(text.find("\"state\": \"on\""), 13, "\"state\": \"banana\"");
  write_file_atomic(dir + "/boundary.json", text);
  EXPECT_THAT([&] { read_boundary(dir); },
              ::testing::ThrowsMessage<SessionError>(HasSubstr("state")));
}

TEST_F(SessionTest, ProfileErrorsAreTyped) {
  SessionRequest r = request();
  r.profile_name = "missing";
  EXPECT_THAT([&] { write_session(r, install); },
              ::testing::ThrowsMessage<ProfileError>(HasSubstr("unknown profile 'missing'")));
  w.file("profiles/broken.yaml", "name: x\ndescription: d\nalow: []\n");
  r.profile_name = "broken";
  EXPECT_THAT([&] { write_session(r, install); },
              ::testing::ThrowsMessage<ProfileError>(HasSubstr("broken.yaml:3:1")));
}

}  // namespace
}  // namespace agent_boundary
