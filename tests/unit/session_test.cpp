// Session writing against a mock Backend: what is pinned, what is refused, and that nothing
// is half-written when something fails.
#include "session.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>

#include "agent_boundary/error.hpp"
#include "mock_install.hpp"
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

TEST_F(SessionTest, TrustedExecutableInAWritableGrantIsRefused) {
  EXPECT_CALL(backend, locate(_))
      .WillOnce(Return(BackendExecutable{w.file("work/.venv/bin/nono"), "9.9"}));
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
