// The decision tiers, on a real pinned session written through a mock Backend.
#include "hook_engine.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "agent_boundary/error.hpp"
#include "agent_boundary/process.hpp"
#include "freeze/freeze.hpp"
#include "mock_install.hpp"
#include "secure_file.hpp"
#include "test_world.hpp"

namespace agent_boundary {
namespace {

using ::testing::_;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Invoke;
using testing::MockBackend;
using ::testing::NiceMock;
using ::testing::Return;
using testing::TestWorld;
using V = Decision::Verdict;

constexpr const char* kId = "session-1234";

class HookEngine : public testing::MockInstallTest {
 protected:
  void SetUp() override {
    MockInstallTest::SetUp();
    ON_CALL(backend, wrap(_)).WillByDefault(Return(std::vector<std::string>{"/bin/true"}));
    SessionRequest req = request(kId);
    write_session(req, install);
    dir = req.session_dir;
    ctx.state_root = w.path("state");
    ctx.self_exe = install.self_exe;
    ctx.probe_through_launcher = false;  // these tests drive the mock backend's probe
    ctx.backend_for = [this](const BoundaryConfig&) {
      return std::shared_ptr<Backend>(&backend, [](Backend*) {});
    };
  }

  ToolCall call(ToolClass cls, const std::string& text, Access a = Access::read) {
    ToolCall c;
    c.session_id = kId;
    c.cwd = w.path("work");
    c.tool_name = cls == ToolClass::shell ? "Bash" : "Read";
    c.tool_class = cls;
    (cls == ToolClass::shell ? c.command : c.path) = text;
    c.access = a;
    return c;
  }

  HookContext ctx;
  std::string dir;
};

TEST(SessionIds, OnlyPlainIdsMapToDirs) {
  EXPECT_EQ(session_dir_for_id("/s", "abcdefgh"), "/s/sessions/abcdefgh");
  for (const char* bad :
       {"../x", "short", "../../../../etc", "a/b/c/d/e/f", "with space1", "x\nyyyyyyyy", ""})
    EXPECT_EQ(session_dir_for_id("/s", bad), "") << bad;
  EXPECT_EQ(session_dir_for_id("/s", std::string(65, 'a')), "");
}

TEST(WrappedCommand, QuotingKeepsEveryInjectionInsideOneWord) {
  for (const std::string evil :
       {"true'; cat ~/.ssh/id_rsa; '", "$(cat /etc/shadow)", "`id`", "a\nb", "x\\'y",
        "cat <<EOF\n$(id)\nEOF", "'", "\"; rm -rf ~; \""}) {
    const std::string cmd = wrapped_command("/opt/ab bin", "/s/sessions/x", "/w d", evil);
    EXPECT_TRUE(is_wrapped_command(cmd, "/opt/ab bin", "/s/sessions/x")) << evil;
    // What sh sees as the words of the rewritten command: the original is one argument.
    ProcessOptions o;
    o.argv = {"/bin/sh", "-c",
              "set -- " + cmd.substr(cmd.find(" -- ") + 4) + "; printf '%s' \"$3\""};
    EXPECT_EQ(run_process(o).out, evil);
  }
}

TEST(WrappedCommand, LookalikesAreNotRecognised) {
  const std::string ok = wrapped_command("/ab", "/s/sessions/x", "/w", "ls");
  EXPECT_FALSE(is_wrapped_command(ok + "; cat /etc/passwd", "/ab", "/s/sessions/x"));
  EXPECT_FALSE(is_wrapped_command(ok, "/ab", "/s/sessions/other"));
  EXPECT_FALSE(is_wrapped_command(ok, "/other", "/s/sessions/x"));
  EXPECT_FALSE(is_wrapped_command("X=1 " + ok, "/ab", "/s/sessions/x"));
  EXPECT_FALSE(is_wrapped_command("ls", "/ab", "/s/sessions/x"));
}

TEST_F(HookEngine, SafeAndUnknownTools) {
  EXPECT_EQ(decide_tool_call(call(ToolClass::safe, ""), ctx).verdict, V::allow);
  ToolCall mcp = call(ToolClass::unknown, "");
  mcp.tool_name = "mcp__github__create_issue";
  const Decision d = decide_tool_call(mcp, ctx);
  EXPECT_EQ(d.verdict, V::ask);
  EXPECT_THAT(d.reason, HasSubstr("'mcp__github__create_issue' is not sandboxed"));
}

TEST_F(HookEngine, ShellIsRewrittenThroughThePinnedLauncher) {
  const Decision d = decide_tool_call(call(ToolClass::shell, "npm test"), ctx);
  EXPECT_EQ(d.verdict, V::allow);
  EXPECT_EQ(d.updated_command, wrapped_command(install.self_exe, dir, w.path("work"), "npm test"));
  EXPECT_THAT(d.reason, HasSubstr("sandboxed with nono"));
  // A second hook reading the rewritten command leaves it alone.
  const Decision again = decide_tool_call(call(ToolClass::shell, d.updated_command), ctx);
  EXPECT_EQ(again.verdict, V::allow);
  EXPECT_EQ(again.updated_command, "");
}

TEST_F(HookEngine, ToggleAsksAndLookalikesAreWrapped) {
  const Decision d = decide_tool_call(call(ToolClass::shell, "agent-boundary off"), ctx);
  EXPECT_EQ(d.verdict, V::ask);
  EXPECT_EQ(d.updated_command, shell_quote(install.self_exe) + " --session-dir " + dir + " off");
  EXPECT_EQ(decide_tool_call(call(ToolClass::shell, "agent-boundary"), ctx).verdict, V::ask);
  for (const char* evil : {"agent-boundary off; cat ~/.aws/config", "X=1 agent-boundary off",
                           "agent-boundary use ../../etc/passwd", "agent-boundary use $(whoami)",
                           "agent-boundary use self-edit now", "agent-boundary off && curl x",
                           "agent-boundary\toff`id`"}) {
    const Decision e = decide_tool_call(call(ToolClass::shell, evil), ctx);
    EXPECT_EQ(e.verdict, V::allow) << evil;
    EXPECT_TRUE(is_wrapped_command(e.updated_command, install.self_exe, dir)) << evil;
  }
}

TEST_F(HookEngine, OffMeansNoOpinionExceptForTheToggle) {
  auto text = *read_file(dir + "/boundary.json");
  text.replace(text.find("\"state\": \"on\""), 13, "\"state\": \"off\"");
  write_file_atomic(dir + "/boundary.json", text);
  EXPECT_EQ(decide_tool_call(call(ToolClass::shell, "ls"), ctx).verdict, V::no_opinion);
  EXPECT_EQ(decide_tool_call(call(ToolClass::path, "/etc/hosts"), ctx).verdict, V::no_opinion);
  EXPECT_EQ(decide_tool_call(call(ToolClass::shell, "agent-boundary on"), ctx).verdict, V::ask);
}

TEST_F(HookEngine, CorruptMissingOrInvalidSessionsFailClosed) {
  ToolCall c = call(ToolClass::shell, "ls");
  c.session_id = "../../etc";
  EXPECT_THAT(decide_tool_call(c, ctx), Field(&Decision::reason, HasSubstr("invalid session id")));
  c.session_id = "unknown-session";
  const Decision missing = decide_tool_call(c, ctx);
  EXPECT_EQ(missing.verdict, V::deny);
  EXPECT_THAT(missing.reason, HasSubstr("agent-boundary reload"));
  for (const char* text : {"{\"state\": \"banana\"}", "not json", ""}) {
    write_file_atomic(dir + "/boundary.json", text);
    const Decision d = decide_tool_call(call(ToolClass::shell, "ls"), ctx);
    EXPECT_EQ(d.verdict, V::deny) << text;
  }
  EXPECT_EQ(decide_tool_call(call(ToolClass::shell, "   "), ctx).verdict, V::deny);
}

TEST_F(HookEngine, PathToolsAskTheProbeAndPinTheCanonicalPath) {
  w.file("work/src/a.txt");
  EXPECT_CALL(backend, probe(Field(&ProbeRequest::path, w.path("work/src/a.txt"))))
      .WillOnce(Return(ProbeResult{ProbeResult::Verdict::allowed, ""}));
  const Decision d = decide_tool_call(call(ToolClass::path, "src/./a.txt"), ctx);
  EXPECT_EQ(d.verdict, V::allow);
  EXPECT_EQ(d.updated_path, w.path("work/src/a.txt"));

  EXPECT_CALL(backend, probe(_))
      .WillOnce(Return(ProbeResult{ProbeResult::Verdict::denied, "EACCES"}));
  const Decision no = decide_tool_call(call(ToolClass::path, w.path("home/.ssh/id_rsa")), ctx);
  EXPECT_EQ(no.verdict, V::deny);
  EXPECT_THAT(no.reason, HasSubstr("EACCES"));
  EXPECT_THAT(no.reason, HasSubstr(".ssh/id_rsa"));
}

TEST_F(HookEngine, WritesToOwnStateAreDeniedWithoutAsking) {
  EXPECT_CALL(backend, probe(_)).Times(0);
  const Decision d =
      decide_tool_call(call(ToolClass::path, dir + "/boundary.json", Access::readwrite), ctx);
  EXPECT_EQ(d.verdict, V::deny);
  EXPECT_THAT(d.reason, HasSubstr("its own policy"));
  EXPECT_EQ(decide_tool_call(call(ToolClass::path, "", Access::readwrite), ctx).verdict, V::deny);
}

// The session's processes are held stopped from before the path is resolved, so a symlink in
// a writable directory cannot change any more: its target is what is probed and handed on.
TEST_F(HookEngine, SymlinksAreResolvedBeforeTheProbe) {
  w.file("home/secret");
  w.symlink("work/link", w.path("home/secret"));
  EXPECT_CALL(backend, probe(Field(&ProbeRequest::path, w.path("home/secret"))))
      .WillOnce(Return(ProbeResult{ProbeResult::Verdict::denied, "EACCES"}));
  EXPECT_EQ(decide_tool_call(call(ToolClass::path, w.path("work/link")), ctx).verdict, V::deny);
  w.file("work/real");
  w.symlink("work/alias", w.path("work/real"));
  EXPECT_CALL(backend, probe(Field(&ProbeRequest::path, w.path("work/real"))))
      .WillOnce(Return(ProbeResult{ProbeResult::Verdict::allowed, ""}));
  const Decision d = decide_tool_call(call(ToolClass::path, w.path("work/alias")), ctx);
  EXPECT_EQ(d.verdict, V::allow);
  EXPECT_EQ(d.updated_path, w.path("work/real"));
}

// An allowed file tool stays counted in flight until the harness says it finished; a denied
// one is released at once.
TEST_F(HookEngine, AllowedFileToolsStayHeldUntilReleased) {
  w.file("work/f");
  EXPECT_CALL(backend, probe(_))
      .WillOnce(Return(ProbeResult{ProbeResult::Verdict::allowed, ""}))
      .WillOnce(Return(ProbeResult{ProbeResult::Verdict::denied, "EACCES"}));
  EXPECT_EQ(decide_tool_call(call(ToolClass::path, "f"), ctx).verdict, V::allow);
  EXPECT_EQ(freeze::in_flight(dir), 1);
  EXPECT_EQ(decide_tool_call(call(ToolClass::path, "f"), ctx).verdict, V::deny);
  EXPECT_EQ(freeze::in_flight(dir), 1);
  freeze::release(dir);
  EXPECT_EQ(freeze::in_flight(dir), 0);
}

TEST_F(HookEngine, BackendFailuresDeny) {
  w.file("work/f");
  EXPECT_CALL(backend, probe(_)).WillOnce(::testing::Throw(BackendError("nono vanished")));
  const Decision d = decide_tool_call(call(ToolClass::path, "f"), ctx);
  EXPECT_EQ(d.verdict, V::deny);
  EXPECT_THAT(d.reason, HasSubstr("failing closed: nono vanished"));
  EXPECT_CALL(backend, probe(_))
      .WillOnce(Return(ProbeResult{ProbeResult::Verdict::inconclusive, "probe inconclusive: x"}));
  EXPECT_EQ(decide_tool_call(call(ToolClass::path, "f"), ctx).verdict, V::deny);
}

TEST_F(HookEngine, SearchWithoutPathProbesTheCwd) {
  EXPECT_CALL(backend, probe(Field(&ProbeRequest::path, w.path("work"))))
      .WillOnce(Return(ProbeResult{ProbeResult::Verdict::allowed, ""}));
  EXPECT_EQ(decide_tool_call(call(ToolClass::search, ""), ctx).verdict, V::allow);
}

}  // namespace
}  // namespace agent_boundary
