// The Claude Code harness: payload parsing and tool classification, decision encoding,
// SessionStart (CLAUDE_ENV_FILE), protected paths and the status line.
#include "claude_harness.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "agent_boundary/error.hpp"
#include "agent_boundary/harness.hpp"
#include "agent_boundary/plugin_host.hpp"

namespace agent_boundary::claude {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using ::testing::HasSubstr;

class FakeHost : public PluginHost {
 public:
  std::string helper_path(const std::string& name) const override { return "/nonexistent/" + name; }
  void debug(const std::string& message) const override { messages.push_back(message); }
  mutable std::vector<std::string> messages;
};

// Sets (or unsets, with nullopt) one environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value)
      ::setenv(name_.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// A scratch directory under /var/tmp (never /tmp: sandboxes grant it), removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/var/tmp/ab-claude-test-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    root_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path(const std::string& rel) const { return root_ + "/" + rel; }
  std::string dir(const std::string& rel) const {
    fs::create_directories(path(rel));
    return path(rel);
  }
  std::string file(const std::string& rel, const std::string& content) const {
    fs::create_directories(fs::path(path(rel)).parent_path());
    std::ofstream(path(rel), std::ios::binary) << content;
    return path(rel);
  }

 private:
  std::string root_;
};

std::string slurp(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ClaudeHarnessTest : public ::testing::Test {
 protected:
  ToolCall parse(const Json& payload) const { return harness.parse_tool_call(payload.dump()); }
  ToolCall parse_tool(const std::string& tool, const Json& input) const {
    return parse({{"session_id", "abc-123"},
                  {"cwd", "/home/u/proj"},
                  {"hook_event_name", "PreToolUse"},
                  {"tool_name", tool},
                  {"tool_input", input}});
  }

  FakeHost host;
  ClaudeHarness harness{host};
};

// ---- event kinds ---------------------------------------------------------------------

TEST_F(ClaudeHarnessTest, EventKinds) {
  EXPECT_EQ(harness.event_kind("SessionStart"), Harness::Event::session_start);
  EXPECT_EQ(harness.event_kind("PreToolUse"), Harness::Event::tool_use);
  EXPECT_EQ(harness.event_kind("SessionEnd"), Harness::Event::session_end);
  EXPECT_EQ(harness.event_kind("PostToolUse"), Harness::Event::tool_done);
  EXPECT_EQ(harness.event_kind("PostToolUseFailure"), Harness::Event::tool_done);
  EXPECT_EQ(harness.event_kind("Stop"), Harness::Event::turn_end);
  EXPECT_EQ(harness.event_kind("UserPromptSubmit"), Harness::Event::turn_end);
  for (const char* other : {"posttooluse", "pretooluse", "", "sessionend", "SubagentStop"})
    EXPECT_EQ(harness.event_kind(other), Harness::Event::unknown) << other;
}

// ---- classification ------------------------------------------------------------------

TEST_F(ClaudeHarnessTest, BashIsShell) {
  const ToolCall c = parse_tool(
      "Bash", {{"command", "npm test"}, {"description", "Run tests"}, {"timeout", 120000}});
  EXPECT_EQ(c.tool_class, ToolClass::shell);
  EXPECT_EQ(c.command, "npm test");
  EXPECT_EQ(c.tool_name, "Bash");
  EXPECT_EQ(c.session_id, "abc-123");
  EXPECT_EQ(c.cwd, "/home/u/proj");
}

TEST_F(ClaudeHarnessTest, BashEmptyCommandIsLeftToCore) {
  const ToolCall c = parse_tool("Bash", {{"command", ""}});
  EXPECT_EQ(c.tool_class, ToolClass::shell);
  EXPECT_EQ(c.command, "");
}

TEST_F(ClaudeHarnessTest, BashWithoutStringCommandThrows) {
  EXPECT_THROW(parse_tool("Bash", Json::object()), Error);
  EXPECT_THROW(parse_tool("Bash", {{"command", 42}}), Error);
  EXPECT_THROW(parse_tool("Bash", {{"command", Json::array({"ls"})}}), Error);
  EXPECT_THROW(parse_tool("Bash", {{"command", nullptr}}), Error);
  EXPECT_THROW(parse_tool("Bash", nullptr), Error);  // null input becomes {}
}

TEST_F(ClaudeHarnessTest, MonitorWithCommandIsShell) {
  const ToolCall c = parse_tool("Monitor", {{"command", "tail -f log"}, {"description", "watch"}});
  EXPECT_EQ(c.tool_class, ToolClass::shell);
  EXPECT_EQ(c.command, "tail -f log");
  EXPECT_EQ(parse_tool("Monitor", {{"ws", {{"url", "wss://x"}}}}).tool_class, ToolClass::unknown);
}

TEST_F(ClaudeHarnessTest, PowerShellIsUnknown) {
  EXPECT_EQ(parse_tool("PowerShell", {{"command", "dir"}}).tool_class, ToolClass::unknown);
}

TEST_F(ClaudeHarnessTest, ReadIsPathRead) {
  const ToolCall c = parse_tool("Read", {{"file_path", "/home/u/proj/a.txt"}, {"limit", 10}});
  EXPECT_EQ(c.tool_class, ToolClass::path);
  EXPECT_EQ(c.access, Access::read);
  EXPECT_EQ(c.path, "/home/u/proj/a.txt");
}

TEST_F(ClaudeHarnessTest, WritersArePathReadwrite) {
  for (const char* tool : {"Edit", "MultiEdit", "Write"}) {
    const ToolCall c = parse_tool(tool, {{"file_path", "rel/b.txt"}, {"content", "x"}});
    EXPECT_EQ(c.tool_class, ToolClass::path) << tool;
    EXPECT_EQ(c.access, Access::readwrite) << tool;
    EXPECT_EQ(c.path, "rel/b.txt") << tool;
  }
  const ToolCall nb =
      parse_tool("NotebookEdit", {{"notebook_path", "/p/n.ipynb"}, {"new_source", "1"}});
  EXPECT_EQ(nb.tool_class, ToolClass::path);
  EXPECT_EQ(nb.access, Access::readwrite);
  EXPECT_EQ(nb.path, "/p/n.ipynb");
}

TEST_F(ClaudeHarnessTest, PathToolWithoutPathHasEmptyPath) {
  for (const char* tool : {"Read", "Edit", "MultiEdit", "Write", "NotebookEdit"}) {
    const ToolCall c = parse_tool(tool, Json::object());
    EXPECT_EQ(c.tool_class, ToolClass::path) << tool;
    EXPECT_EQ(c.path, "") << tool;
  }
  // NotebookEdit reads notebook_path only.
  EXPECT_EQ(parse_tool("NotebookEdit", {{"file_path", "/x"}}).path, "");
  EXPECT_EQ(parse_tool("Read", nullptr).path, "");
}

TEST_F(ClaudeHarnessTest, NonStringPathThrows) {
  EXPECT_THROW(parse_tool("Read", {{"file_path", 7}}), Error);
  EXPECT_THROW(parse_tool("Grep", {{"path", Json::array()}}), Error);
  EXPECT_THROW(parse_tool("Write", {{"file_path", std::string("/a\0b", 4)}}), Error);
}

TEST_F(ClaudeHarnessTest, GrepAndGlobAreSearch) {
  for (const char* tool : {"Grep", "Glob"}) {
    const ToolCall with = parse_tool(tool, {{"pattern", "x"}, {"path", "/etc"}});
    EXPECT_EQ(with.tool_class, ToolClass::search) << tool;
    EXPECT_EQ(with.access, Access::read) << tool;
    EXPECT_EQ(with.path, "/etc") << tool;
    const ToolCall without = parse_tool(tool, {{"pattern", "x"}});
    EXPECT_EQ(without.tool_class, ToolClass::search) << tool;
    EXPECT_EQ(without.path, "") << tool;
  }
}

TEST_F(ClaudeHarnessTest, SafeTools) {
  for (const char* tool :
       {"EnterPlanMode",    "ExitPlanMode", "AskUserQuestion", "Agent",      "Task",
        "TaskCreate",       "TaskGet",      "TaskList",        "TaskOutput", "TaskStop",
        "TaskUpdate",       "TodoWrite",    "Skill",           "ToolSearch", "ReportFindings",
        "StructuredOutput", "BashOutput",   "KillShell",       "KillBash",   "WebFetch",
        "WebSearch"})
    EXPECT_EQ(parse_tool(tool, {{"x", 1}}).tool_class, ToolClass::safe) << tool;
}

TEST_F(ClaudeHarnessTest, EverythingElseIsUnknown) {
  for (const char* tool : {"mcp__github__get_file_contents", "mcp__plugin_x_srv__Read", "LSP",
                           "REPL", "CronCreate", "EnterWorktree", "bash", "read", "FutureTool"})
    EXPECT_EQ(parse_tool(tool, {{"file_path", "/x"}, {"command", "ls"}}).tool_class,
              ToolClass::unknown)
        << tool;
}

// ---- payload fields and malformed payloads -------------------------------------------

TEST_F(ClaudeHarnessTest, MissingCwdIsProcessCwd) {
  const ToolCall c = parse({{"session_id", "s"}, {"tool_name", "TodoWrite"}});
  EXPECT_EQ(c.cwd, fs::current_path().string());
  EXPECT_EQ(c.tool_class, ToolClass::safe);
}

TEST_F(ClaudeHarnessTest, MissingSessionIdIsEmpty) {
  EXPECT_EQ(parse({{"tool_name", "TodoWrite"}, {"cwd", "/"}}).session_id, "");
  // Validation is core's: odd strings pass through unchanged.
  EXPECT_EQ(parse({{"session_id", "../x"}, {"tool_name", "Read"}, {"cwd", "/"}}).session_id,
            "../x");
}

TEST_F(ClaudeHarnessTest, MalformedPayloadsThrow) {
  const auto throws = [&](const std::string& payload, const std::string& fragment) {
    try {
      harness.parse_tool_call(payload);
      ADD_FAILURE() << "no exception for " << payload.substr(0, 80);
    } catch (const Error& e) {
      EXPECT_THAT(e.message(), HasSubstr("Claude PreToolUse payload")) << payload.substr(0, 80);
      EXPECT_THAT(e.message(), HasSubstr(fragment)) << payload.substr(0, 80);
    }
  };
  throws("not json", "not valid JSON");
  throws("", "not valid JSON");
  throws("[1,2]", "expected a JSON object, got array");
  throws("\"Bash\"", "expected a JSON object, got string");
  throws(R"({"tool_input": {}})", "tool_name");
  throws(R"({"tool_name": ""})", "tool_name");
  throws(R"({"tool_name": 5})", "tool_name");
  throws(R"({"tool_name": "Bash", "tool_input": {"command": 1}})", "command");
  throws(R"({"tool_name": "Read", "tool_input": [1]})", "tool_input");
  throws(R"({"tool_name": "Read", "tool_input": "x"})", "tool_input");
  throws(R"({"tool_name": "Read", "session_id": 12})", "session_id");
  throws(R"({"tool_name": "Read", "cwd": 1})", "cwd");
  throws(R"({"tool_name": "Read", "cwd": "relative/dir"})", "cwd");
  throws(R"({"tool_name": "Read"} trailing)", "not valid JSON");
  throws(std::string(1000, '[') + std::string(1000, ']'), "nested deeper");
}

TEST_F(ClaudeHarnessTest, HugePayloadThrows) {
  Json p = {{"tool_name", "Bash"}, {"tool_input", {{"command", std::string(5 << 20, 'a')}}}};
  try {
    harness.parse_tool_call(p.dump());
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_THAT(e.message(), HasSubstr("more than the 4194304 accepted"));
  }
  // Just below the limit is fine.
  p["tool_input"]["command"] = std::string((4 << 20) - 100, 'a');
  EXPECT_EQ(harness.parse_tool_call(p.dump()).command.size(), (4u << 20) - 100);
}

// ---- encode_decision -----------------------------------------------------------------

const Json kBashPayload = {{"session_id", "abc"},
                           {"cwd", "/home/u/proj"},
                           {"tool_name", "Bash"},
                           {"tool_input",
                            {{"command", "npm test"},
                             {"description", "Run tests"},
                             {"timeout", 120000},
                             {"run_in_background", false}}}};

Json encode(const ClaudeHarness& h, const Json& payload, const Decision& d, int& exit_code) {
  const std::string out = h.encode_decision(payload.dump(), d, exit_code);
  return Json::parse(out);
}

TEST_F(ClaudeHarnessTest, NoOpinionIsSilent) {
  int exit_code = 7;
  Decision d{Decision::Verdict::no_opinion, "ignored", "also ignored", ""};
  EXPECT_EQ(harness.encode_decision(kBashPayload.dump(), d, exit_code), "");
  EXPECT_EQ(exit_code, 0);
}

TEST_F(ClaudeHarnessTest, PlainVerdicts) {
  const std::pair<Decision::Verdict, const char*> cases[] = {{Decision::Verdict::allow, "allow"},
                                                             {Decision::Verdict::ask, "ask"},
                                                             {Decision::Verdict::deny, "deny"}};
  for (const auto& [verdict, name] : cases) {
    int exit_code = 7;
    const Json out = encode(harness, kBashPayload, {verdict, "[gate] why", "", ""}, exit_code);
    EXPECT_EQ(exit_code, 0);
    const Json expected = {{"hookSpecificOutput",
                            {{"hookEventName", "PreToolUse"},
                             {"permissionDecision", name},
                             {"permissionDecisionReason", "[gate] why"}}}};
    EXPECT_EQ(out, expected) << name;
  }
}

TEST_F(ClaudeHarnessTest, RewrittenCommandKeepsEveryOtherField) {
  int exit_code = 7;
  const Json out =
      encode(harness, kBashPayload, {Decision::Verdict::allow, "wrapped", "ab run -- npm test", ""},
             exit_code);
  EXPECT_EQ(exit_code, 0);
  const Json expected_input = {{"command", "ab run -- npm test"},
                               {"description", "Run tests"},
                               {"timeout", 120000},
                               {"run_in_background", false}};
  EXPECT_EQ(out["hookSpecificOutput"]["updatedInput"], expected_input);
  EXPECT_EQ(out["hookSpecificOutput"]["permissionDecision"], "allow");
  EXPECT_EQ(out["hookSpecificOutput"]["permissionDecisionReason"], "wrapped");
}

TEST_F(ClaudeHarnessTest, AskWithRewrite) {
  int exit_code = 7;
  const Json out = encode(harness, kBashPayload,
                          {Decision::Verdict::ask, "toggle", "/usr/bin/ab off", ""}, exit_code);
  EXPECT_EQ(out["hookSpecificOutput"]["permissionDecision"], "ask");
  EXPECT_EQ(out["hookSpecificOutput"]["updatedInput"]["command"], "/usr/bin/ab off");
  EXPECT_EQ(out["hookSpecificOutput"]["updatedInput"]["timeout"], 120000);
}

TEST_F(ClaudeHarnessTest, RewrittenPathUsesTheToolsField) {
  int exit_code = 7;
  const Json read = {{"tool_name", "Read"},
                     {"tool_input", {{"file_path", "a.txt"}, {"offset", 5}, {"limit", 10}}}};
  Json out = encode(harness, read, {Decision::Verdict::allow, "ok", "", "/p/a.txt"}, exit_code);
  EXPECT_EQ(out["hookSpecificOutput"]["updatedInput"],
            Json({{"file_path", "/p/a.txt"}, {"offset", 5}, {"limit", 10}}));

  const Json nb = {
      {"tool_name", "NotebookEdit"},
      {"tool_input", {{"notebook_path", "n.ipynb"}, {"cell_id", "c1"}, {"new_source", "x=1"}}}};
  out = encode(harness, nb, {Decision::Verdict::allow, "ok", "", "/p/n.ipynb"}, exit_code);
  EXPECT_EQ(out["hookSpecificOutput"]["updatedInput"],
            Json({{"notebook_path", "/p/n.ipynb"}, {"cell_id", "c1"}, {"new_source", "x=1"}}));
  EXPECT_FALSE(out["hookSpecificOutput"]["updatedInput"].contains("file_path"));
}

TEST_F(ClaudeHarnessTest, NoUpdatedInputWithoutRewrite) {
  int exit_code = 7;
  const Json out =
      encode(harness, kBashPayload, {Decision::Verdict::allow, "ok", "", ""}, exit_code);
  EXPECT_FALSE(out["hookSpecificOutput"].contains("updatedInput"));
}

TEST_F(ClaudeHarnessTest, ReasonIsCapped) {
  int exit_code = 7;
  Json out = encode(harness, kBashPayload,
                    {Decision::Verdict::deny, std::string(20000, 'x'), "", ""}, exit_code);
  const std::string reason = out["hookSpecificOutput"]["permissionDecisionReason"];
  EXPECT_LE(reason.size(), 9000u);
  EXPECT_GT(reason.size(), 8900u);

  // Multi-byte characters are never cut in half (the output stays valid JSON/UTF-8).
  std::string wide;
  for (int i = 0; i < 5000; ++i) wide += "\xc3\xa9";  // U+00E9
  out = encode(harness, kBashPayload, {Decision::Verdict::deny, "x" + wide, "", ""}, exit_code);
  const std::string r2 = out["hookSpecificOutput"]["permissionDecisionReason"];
  EXPECT_LE(r2.size(), 9000u);
  EXPECT_EQ(r2.substr(r2.size() - 5), "\xc3\xa9...");

  // Short reasons are untouched.
  out = encode(harness, kBashPayload, {Decision::Verdict::deny, "short", "", ""}, exit_code);
  EXPECT_EQ(out["hookSpecificOutput"]["permissionDecisionReason"], "short");
}

TEST_F(ClaudeHarnessTest, InvalidUtf8InReasonIsReplaced) {
  int exit_code = 7;
  const std::string text = harness.encode_decision(
      kBashPayload.dump(), {Decision::Verdict::deny, "bad \xff byte", "", ""}, exit_code);
  const Json out = Json::parse(text);
  EXPECT_THAT(out["hookSpecificOutput"]["permissionDecisionReason"].get<std::string>(),
              HasSubstr("bad "));
}

TEST_F(ClaudeHarnessTest, UnencodableRewriteBecomesDeny) {
  int exit_code = 7;
  Json out = encode(harness, kBashPayload,
                    {Decision::Verdict::allow, "ok", "ab run -- cat \xff", ""}, exit_code);
  EXPECT_EQ(out["hookSpecificOutput"]["permissionDecision"], "deny");
  EXPECT_FALSE(out["hookSpecificOutput"].contains("updatedInput"));

  // A rewrite for a payload that is not an object cannot keep the original fields.
  const std::string text = harness.encode_decision(
      "[]", {Decision::Verdict::allow, "ok", "ab run -- ls", ""}, exit_code);
  out = Json::parse(text);
  EXPECT_EQ(out["hookSpecificOutput"]["permissionDecision"], "deny");
  EXPECT_EQ(exit_code, 0);
}

// ---- SessionStart --------------------------------------------------------------------

TEST_F(ClaudeHarnessTest, ParseSessionStart) {
  const SessionStartEvent e = harness.parse_session_start(
      R"({"session_id":"s-1","cwd":"/home/u/p","hook_event_name":"SessionStart",)"
      R"("source":"resume","model":"m"})");
  EXPECT_EQ(e.session_id, "s-1");
  EXPECT_EQ(e.cwd, "/home/u/p");
  EXPECT_EQ(e.source, "resume");

  const SessionStartEvent bare = harness.parse_session_start(R"({"session_id":"s-2"})");
  EXPECT_EQ(bare.cwd, fs::current_path().string());
  EXPECT_EQ(bare.source, "");
}

TEST_F(ClaudeHarnessTest, MalformedSessionStartThrows) {
  EXPECT_THROW(harness.parse_session_start("nope"), Error);
  EXPECT_THROW(harness.parse_session_start("[]"), Error);
  EXPECT_THROW(harness.parse_session_start(R"({"session_id": 3})"), Error);
  EXPECT_THROW(harness.parse_session_start(R"({"session_id": "s", "source": {}})"), Error);
  EXPECT_THROW(harness.parse_session_start(R"({"session_id": "s", "cwd": "x"})"), Error);
}

SessionStartReport make_report(const std::string& bin) {
  SessionStartReport r;
  r.session_dir = "/state/sessions/s-1";
  r.status_line = "profile default, state on";
  r.notes = {"deny of /x is weaker: only paths present at start"};
  r.agent_boundary_bin = bin;
  r.kubeconfig = "/state/sessions/s-1/kube config";
  r.enforcement_verified = true;
  return r;
}

TEST_F(ClaudeHarnessTest, FinishWritesEnvFile) {
  TempDir t;
  const std::string env_file = t.path("env/claude-env.sh");
  t.dir("env");
  ScopedEnv env("CLAUDE_ENV_FILE", env_file);
  const std::string out = harness.finish_session_start(make_report("/opt/ab/bin/agent-boundary"));
  EXPECT_EQ(out,
            "[agent-boundary] profile default, state on\n"
            "[agent-boundary] deny of /x is weaker: only paths present at start\n");
  EXPECT_EQ(slurp(env_file),
            "export PATH=/opt/ab/bin:\"$PATH\"\n"
            "export KUBECONFIG='/state/sessions/s-1/kube config'\n");
  struct stat st {};
  ASSERT_EQ(::stat(env_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(ClaudeHarnessTest, FinishAppendsAndQuotes) {
  TempDir t;
  const std::string env_file = t.file("env.sh", "export FOO=1");  // no trailing newline
  ::chmod(env_file.c_str(), 0640);
  const std::string bin_dir = t.dir("my bin's dir");
  ScopedEnv env("CLAUDE_ENV_FILE", env_file);
  SessionStartReport r = make_report(bin_dir + "/agent-boundary");
  r.kubeconfig.clear();
  harness.finish_session_start(r);
  // A directory is taken as it is.
  r.agent_boundary_bin = bin_dir;
  harness.finish_session_start(r);
  const std::string quoted = "'" + t.path("my bin'\\''s dir") + "'";
  EXPECT_EQ(slurp(env_file),
            "export FOO=1\n"
            "export PATH=" +
                quoted +
                ":\"$PATH\"\n"
                "export PATH=" +
                quoted + ":\"$PATH\"\n");
  struct stat st {};
  ASSERT_EQ(::stat(env_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);  // an existing file keeps its mode
}

TEST_F(ClaudeHarnessTest, FinishWarnsWhenEnforcementUnverified) {
  ScopedEnv env("CLAUDE_ENV_FILE", std::nullopt);
  SessionStartReport r = make_report("/opt/ab/bin/agent-boundary");
  r.notes.clear();
  r.enforcement_verified = false;
  const std::string out = harness.finish_session_start(r);
  EXPECT_THAT(out, HasSubstr("[agent-boundary] profile default, state on\n"));
  EXPECT_THAT(out, HasSubstr("[agent-boundary] WARNING: enforcement self-test FAILED: "));
  EXPECT_THAT(out, HasSubstr("commands are NOT sandboxed\n"));

  // No session: no self-test line.
  r.session_dir.clear();
  r.status_line = "could not generate a policy: bad profile";
  EXPECT_EQ(harness.finish_session_start(r),
            "[agent-boundary] could not generate a policy: bad profile\n");
}

TEST_F(ClaudeHarnessTest, FinishPrefixesEveryLineOfANote) {
  ScopedEnv env("CLAUDE_ENV_FILE", std::nullopt);
  SessionStartReport r = make_report("/opt/ab/bin/agent-boundary");
  r.notes = {"first\nsecond\n"};
  EXPECT_EQ(harness.finish_session_start(r),
            "[agent-boundary] profile default, state on\n"
            "[agent-boundary] first\n"
            "[agent-boundary] second\n");
}

TEST_F(ClaudeHarnessTest, FinishWritesNothingWithoutSessionOrEnvFile) {
  TempDir t;
  const std::string env_file = t.path("env.sh");
  {
    ScopedEnv env("CLAUDE_ENV_FILE", env_file);
    SessionStartReport r = make_report("/opt/ab/bin/agent-boundary");
    r.session_dir.clear();
    harness.finish_session_start(r);
    EXPECT_FALSE(fs::exists(env_file));
  }
  ScopedEnv env("CLAUDE_ENV_FILE", std::nullopt);
  EXPECT_EQ(harness.finish_session_start(make_report("/opt/ab/bin/agent-boundary")),
            "[agent-boundary] profile default, state on\n"
            "[agent-boundary] deny of /x is weaker: only paths present at start\n");
}

TEST_F(ClaudeHarnessTest, FinishRefusesColonsInPathLists) {
  TempDir t;
  const std::string env_file = t.path("env.sh");
  ScopedEnv env("CLAUDE_ENV_FILE", env_file);
  SessionStartReport r = make_report("/opt/a:b/agent-boundary");
  r.notes.clear();
  r.kubeconfig = "/state/k:ube";
  const std::string out = harness.finish_session_start(r);
  EXPECT_THAT(out, HasSubstr("WARNING: cannot put /opt/a:b/agent-boundary on PATH"));
  EXPECT_THAT(out, HasSubstr("WARNING: cannot export KUBECONFIG=/state/k:ube"));
  EXPECT_FALSE(fs::exists(env_file));
}

TEST_F(ClaudeHarnessTest, FinishReportsAnUnwritableEnvFile) {
  TempDir t;
  ScopedEnv env("CLAUDE_ENV_FILE", t.dir("a-directory"));
  const std::string out = harness.finish_session_start(make_report("/opt/ab/agent-boundary"));
  EXPECT_THAT(out, HasSubstr("[agent-boundary] WARNING: could not write CLAUDE_ENV_FILE"));
}

// ---- environment ---------------------------------------------------------------------

TEST_F(ClaudeHarnessTest, ProtectedPathsIsTheResolvedPluginRoot) {
  TempDir t;
  const std::string real = t.dir("plugins/cache/agent-boundary/0.1.0");
  fs::create_directory_symlink(real, t.path("link"));
  {
    ScopedEnv root("CLAUDE_PLUGIN_ROOT", t.path("link"));
    EXPECT_EQ(harness.protected_paths(), std::vector<std::string>{fs::canonical(real).string()});
  }
  {
    ScopedEnv root("CLAUDE_PLUGIN_ROOT", t.path("missing"));
    EXPECT_TRUE(harness.protected_paths().empty());
  }
  ScopedEnv root("CLAUDE_PLUGIN_ROOT", std::nullopt);
  EXPECT_TRUE(harness.protected_paths().empty());
}

TEST_F(ClaudeHarnessTest, AmbientSessionId) {
  {
    ScopedEnv id("CLAUDE_CODE_SESSION_ID", "sess-42");
    EXPECT_EQ(harness.ambient_session_id(), "sess-42");
  }
  ScopedEnv id("CLAUDE_CODE_SESSION_ID", std::nullopt);
  EXPECT_EQ(harness.ambient_session_id(), "");
}

// ---- status line ---------------------------------------------------------------------

const std::string kRedOff = "\x1b[31mboundary:off\x1b[0m";
const std::string kGreenDefault = "\x1b[32mboundary:default\x1b[0m";

std::vector<std::string>& lookups() {
  static std::vector<std::string> ids;
  return ids;
}
SessionStatus on_lookup(const std::string& id) {
  lookups().push_back(id);
  return {true, "default", "on", false};
}
SessionStatus off_lookup(const std::string& id) {
  lookups().push_back(id);
  return {true, "default", "off", false};
}
SessionStatus self_edit_lookup(const std::string&) { return {true, "monorepo", "on", true}; }
SessionStatus missing_lookup(const std::string&) { return {}; }
SessionStatus unknown_state_lookup(const std::string&) { return {true, "", "", false}; }

const char* kEnabled = R"({"enabledPlugins": {"agent-boundary@agent-boundary": true}})";
const char* kDisabled = R"({"enabledPlugins": {"agent-boundary@agent-boundary": false}})";
const char* kOther = R"({"enabledPlugins": {"other@market": true}, "model": "x"})";

class StatuslineTest : public ClaudeHarnessTest {
 protected:
  void SetUp() override { lookups().clear(); }

  std::string render(const std::string& cwd, SessionStatus (*lookup)(const std::string&)) const {
    const Json p = {{"session_id", "sess-1"}, {"cwd", cwd}, {"model", {{"id", "m"}}}};
    return harness.statusline(p.dump(), lookup);
  }

  TempDir t;
  std::string home = t.dir("home");
  ScopedEnv home_env{"HOME", home};
  ScopedEnv config_env{"CLAUDE_CONFIG_DIR", std::nullopt};
  std::string repo = t.dir("repo/.git");
  std::string sub = t.dir("repo/src/deep");
};

TEST_F(StatuslineTest, NobodyMentionsThePluginIsEmpty) {
  EXPECT_EQ(render(sub, on_lookup), "");
  t.file("home/.claude/settings.json", kOther);
  t.file("repo/.claude/settings.json", R"({"permissions": {}})");
  EXPECT_EQ(render(sub, on_lookup), "");
  EXPECT_TRUE(lookups().empty());
}

TEST_F(StatuslineTest, ColoursFollowTheSessionState) {
  t.file("home/.claude/settings.json", kEnabled);
  EXPECT_EQ(render(sub, on_lookup), kGreenDefault);
  EXPECT_EQ(lookups(), std::vector<std::string>{"sess-1"});
  EXPECT_EQ(render(sub, off_lookup), kRedOff);
  EXPECT_EQ(render(sub, self_edit_lookup), "\x1b[33mboundary:monorepo\x1b[0m");
  EXPECT_EQ(render(sub, missing_lookup), kRedOff);
  EXPECT_EQ(render(sub, nullptr), kRedOff);
  EXPECT_EQ(render(sub, unknown_state_lookup), "\x1b[32mboundary:?\x1b[0m");
}

TEST_F(StatuslineTest, DisabledIsRedWithoutALookup) {
  t.file("home/.claude/settings.json", kDisabled);
  EXPECT_EQ(render(sub, on_lookup), kRedOff);
  EXPECT_TRUE(lookups().empty());
}

TEST_F(StatuslineTest, FirstMentioningFileDecides) {
  t.file("home/.claude/settings.json", kEnabled);
  t.file("repo/.claude/settings.json", kDisabled);
  EXPECT_EQ(render(sub, on_lookup), kRedOff);
  t.file("repo/.claude/settings.local.json", kEnabled);
  EXPECT_EQ(render(sub, on_lookup), kGreenDefault);
  // A local file that does not mention the plugin (or is invalid) defers to the next one.
  t.file("repo/.claude/settings.local.json", kOther);
  EXPECT_EQ(render(sub, on_lookup), kRedOff);
  t.file("repo/.claude/settings.local.json", "{not json");
  EXPECT_EQ(render(sub, on_lookup), kRedOff);
  t.file("repo/.claude/settings.local.json", R"({"enabledPlugins": ["agent-boundary"]})");
  EXPECT_EQ(render(sub, on_lookup), kRedOff);
}

TEST_F(StatuslineTest, AnyTrueEntryEnables) {
  t.file("home/.claude/settings.json",
         R"({"enabledPlugins": {"agent-boundary@a": false, "agent-boundary@b": true}})");
  EXPECT_EQ(render(sub, on_lookup), kGreenDefault);
  // Only a boolean true enables.
  t.file("home/.claude/settings.json", R"({"enabledPlugins": {"agent-boundary@a": "true"}})");
  EXPECT_EQ(render(sub, on_lookup), kRedOff);
}

TEST_F(StatuslineTest, ClaudeConfigDirReplacesHome) {
  t.file("home/.claude/settings.json", kEnabled);
  t.file("config/settings.json", kDisabled);
  ScopedEnv config("CLAUDE_CONFIG_DIR", t.path("config"));
  EXPECT_EQ(render(sub, on_lookup), kRedOff);
  ScopedEnv empty_config("CLAUDE_CONFIG_DIR", "");
  EXPECT_EQ(render(sub, on_lookup), kGreenDefault);
}

TEST_F(StatuslineTest, LinkedWorktreeReadsTheMainCheckout) {
  // main checkout: t/main (with .git/worktrees/wt), linked worktree: t/wt.
  t.dir("main/.git/worktrees/wt");
  t.file("main/.git/worktrees/wt/commondir", "../..\n");
  t.file("main/.git/worktrees/wt/gitdir", t.path("wt/.git") + "\n");
  t.file("wt/.git", "gitdir: " + t.path("main/.git/worktrees/wt") + "\n");
  const std::string wt_sub = t.dir("wt/lib");
  EXPECT_EQ(render(wt_sub, on_lookup), "");
  t.file("main/.claude/settings.json", kEnabled);
  EXPECT_EQ(render(wt_sub, on_lookup), kGreenDefault);
  // The worktree's own local settings come before the main checkout's.
  t.file("wt/.claude/settings.local.json", kDisabled);
  EXPECT_EQ(render(wt_sub, on_lookup), kRedOff);
  // main's local settings come before the worktree's shared settings.
  fs::remove(t.path("wt/.claude/settings.local.json"));
  t.file("wt/.claude/settings.json", kDisabled);
  EXPECT_EQ(render(wt_sub, on_lookup), kRedOff);
  t.file("main/.claude/settings.local.json", kEnabled);
  EXPECT_EQ(render(t.path("wt"), on_lookup), kGreenDefault);
}

TEST_F(StatuslineTest, RelativeGitdirInWorktree) {
  t.dir("main/.git/worktrees/wt2");
  t.file("main/.git/worktrees/wt2/commondir", "../..");
  t.file("nested/wt2/.git", "gitdir: ../../main/.git/worktrees/wt2");
  t.file("main/.claude/settings.local.json", kEnabled);
  EXPECT_EQ(render(t.dir("nested/wt2/x"), on_lookup), kGreenDefault);
}

TEST_F(StatuslineTest, WorkspaceCurrentDirWins) {
  t.file("repo/.claude/settings.json", kEnabled);
  const Json p = {{"session_id", "s"},
                  {"cwd", t.dir("elsewhere")},
                  {"workspace", {{"current_dir", sub}, {"project_dir", sub}}}};
  EXPECT_EQ(harness.statusline(p.dump(), on_lookup), kGreenDefault);
  const Json only_ws = {{"session_id", "s"}, {"workspace", {{"current_dir", sub}}}};
  EXPECT_EQ(harness.statusline(only_ws.dump(), on_lookup), kGreenDefault);
}

TEST_F(StatuslineTest, NoCheckoutUsesCwdAsProject) {
  const std::string plain = t.dir("plain");
  t.file("plain/.claude/settings.json", kEnabled);
  EXPECT_EQ(render(plain, on_lookup), kGreenDefault);
}

TEST_F(StatuslineTest, BadPayloadsAreEmpty) {
  t.file("home/.claude/settings.json", kEnabled);
  EXPECT_EQ(harness.statusline("", on_lookup), "");
  EXPECT_EQ(harness.statusline("not json", on_lookup), "");
  EXPECT_EQ(harness.statusline("[]", on_lookup), "");
  EXPECT_EQ(harness.statusline(Json({{"session_id", 5}, {"cwd", sub}}).dump(), on_lookup), "");
  EXPECT_EQ(harness.statusline(Json({{"cwd", sub}}).dump(), on_lookup), "");
  EXPECT_EQ(harness.statusline(Json({{"session_id", "s"}, {"cwd", 1}}).dump(), on_lookup), "");
  EXPECT_EQ(harness.statusline(Json({{"session_id", "s"}}).dump(), on_lookup), "");
  EXPECT_EQ(harness.statusline(Json({{"session_id", "s"}, {"cwd", "rel"}}).dump(), on_lookup), "");
  EXPECT_TRUE(lookups().empty());
}

TEST_F(StatuslineTest, ProfileNamesCannotInjectEscapes) {
  t.file("home/.claude/settings.json", kEnabled);
  const auto evil = [](const std::string&) {
    return SessionStatus{true, "x\x1b]0;pwn\x07", "on", false};
  };
  EXPECT_EQ(render(sub, evil), "\x1b[32mboundary:x?]0;pwn?\x1b[0m");
}

}  // namespace
}  // namespace agent_boundary::claude
