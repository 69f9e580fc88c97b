// Unit tests of the srt backend's pure parts: srt-settings.json, deny states, the wrapped
// argv and the probe's verdict. The integration tests (tests/integration/test_srt_backend.py)
// run the same against the real srt.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "agent_boundary/error.hpp"
#include "agent_boundary/process.hpp"
#include "srt_backend.hpp"

namespace agent_boundary::srt {
namespace {

using nlohmann::json;

ResolvedPolicy base_policy() {
  ResolvedPolicy p;
  p.profile_name = "test";
  p.workdir = "/w/wt";
  p.grants = {
      {"/w/wt", Access::readwrite, PathKind::directory, false, "allow"},
      {"/w/repo/.git", Access::readwrite, PathKind::directory, false, "git"},
      {"/h/.gitconfig", Access::read, PathKind::file, false, "resolve_symlinks"},
  };
  p.denies = {{"/w/wt/.claude/settings.json", "profile"},
              {"/h/.local/state/ab", "self-protection"}};
  p.held = {
      {"/w/repo/.git/hooks", PathKind::directory, HeldPath::Hold::read_only},
      {"/w/repo/.git/config", PathKind::file, HeldPath::Hold::read_only},
      {"/w/wt/.claude", PathKind::directory, HeldPath::Hold::read_only},
      {"/w/wt/.claude/settings.json", PathKind::file, HeldPath::Hold::hidden},
  };
  return p;
}

SettingsInputs base_inputs() {
  SettingsInputs in;
  in.bwrap = "/usr/bin/bwrap";
  in.socat = "/usr/bin/socat";
  in.ripgrep = "/usr/bin/rg";
  in.apply_seccomp = "/pkg/vendor/seccomp/x64/apply-seccomp";
  in.package_dir = "/pkg";
  in.probe_helper = "/ab/libexec/agent-boundary/probe";
  in.host_secrets = {};  // the machine's own list is tested below
  return in;
}

json settings(const ResolvedPolicy& p, const SettingsInputs& in = base_inputs()) {
  return json::parse(render_settings(p, in));
}

std::vector<json> list(const json& s, const char* key) {
  return s.at("filesystem").at(key).get<std::vector<json>>();
}

bool has(const std::vector<json>& v, const std::string& path) {
  for (const auto& e : v)
    if ((e.is_string() && e == path) || (e.is_object() && e.at("path") == path)) return true;
  return false;
}

TEST(SrtSettings, ReadsAreAnAllowListWithTheSystemSrtAndTheProbe) {
  const json s = settings(base_policy());
  const auto deny_read = list(s, "denyRead");
  ASSERT_FALSE(deny_read.empty());
  EXPECT_EQ(deny_read.front(), "/");
  const auto allow_read = list(s, "allowRead");
  for (const char* p : {"/w/wt", "/w/repo/.git", "/h/.gitconfig", "/usr", "/bin", "/lib", "/lib64",
                        "/etc", "/pkg", "/ab/libexec/agent-boundary/probe"})
    EXPECT_TRUE(has(allow_read, p)) << p;
  const auto allow_write = list(s, "allowWrite");
  EXPECT_EQ(allow_write, (std::vector<json>{"/w/wt", "/w/repo/.git", "/tmp"}));
  EXPECT_TRUE(has(allow_read, "/tmp"));
}

TEST(SrtSettings, DeniesAreHiddenAndReadOnly) {
  ResolvedPolicy p = base_policy();
  p.denies.push_back({"/w/wt/build/.env", "profile"});
  const json s = settings(p);
  for (const char* d : {"/w/wt/build/.env", "/h/.local/state/ab"}) {
    EXPECT_TRUE(has(list(s, "denyRead"), d)) << d;
    EXPECT_TRUE(has(list(s, "denyWrite"), d)) << d;
  }
}

TEST(SrtSettings, APathBelowAWriteDeniedDirectoryIsOnlyHidden) {
  // .claude is held read-only: srt would otherwise make a host placeholder for an absent
  // settings.json in it (or fail to start when .claude comes first).
  const json s = settings(base_policy());
  EXPECT_TRUE(has(list(s, "denyRead"), "/w/wt/.claude/settings.json"));
  EXPECT_FALSE(has(list(s, "denyWrite"), "/w/wt/.claude/settings.json"));
  EXPECT_TRUE(has(list(s, "denyWrite"), "/w/wt/.claude"));
  ResolvedPolicy p = base_policy();
  p.denies.push_back({"/h/.local/state/ab/sessions/s1", "self-protection"});
  EXPECT_FALSE(has(list(settings(p), "denyWrite"), "/h/.local/state/ab/sessions/s1"));
  EXPECT_TRUE(has(list(settings(p), "denyRead"), "/h/.local/state/ab/sessions/s1"));
}

TEST(SrtSettings, HeldPathsAreRenderedByTheirHold) {
  const json s = settings(base_policy());
  for (const char* p : {"/w/repo/.git/hooks", "/w/repo/.git/config", "/w/wt/.claude"}) {
    EXPECT_TRUE(has(list(s, "denyWrite"), p)) << p;
    EXPECT_FALSE(has(list(s, "denyRead"), p)) << p << " is read-only, not hidden";
  }
  ResolvedPolicy p = base_policy();
  p.denies.clear();
  p.held = {{"/w/wt/.env", PathKind::file, HeldPath::Hold::hidden}};
  const json h = settings(p);
  EXPECT_TRUE(has(list(h, "denyRead"), "/w/wt/.env"));
  EXPECT_TRUE(has(list(h, "denyWrite"), "/w/wt/.env"));
}

TEST(SrtSettings, EntriesAreUniqueAndInPolicyOrder) {
  const json s = settings(base_policy());
  const auto deny_write = list(s, "denyWrite");
  EXPECT_EQ(deny_write, (std::vector<json>{"/h/.local/state/ab", "/w/repo/.git/hooks",
                                           "/w/repo/.git/config", "/w/wt/.claude"}));
  const auto deny_read = list(s, "denyRead");
  EXPECT_EQ(deny_read,
            (std::vector<json>{"/", "/w/wt/.claude/settings.json", "/h/.local/state/ab"}));
}

TEST(SrtSettings, GlobCharactersAreWrittenAsLiteralPaths) {
  ResolvedPolicy p = base_policy();
  p.grants.push_back({"/w/[draft]*?", Access::read, PathKind::directory, false, "read"});
  p.denies.push_back({"/w/wt/secret*", "profile"});
  const json s = settings(p);
  const json literal_grant = {{"path", "/w/[draft]*?"}, {"literal", true}};
  const json literal_deny = {{"path", "/w/wt/secret*"}, {"literal", true}};
  EXPECT_NE(std::find(list(s, "allowRead").begin(), list(s, "allowRead").end(), literal_grant),
            list(s, "allowRead").end());
  const auto deny_read = list(s, "denyRead");
  EXPECT_NE(std::find(deny_read.begin(), deny_read.end(), literal_deny), deny_read.end());
  // A plain path stays a plain string.
  EXPECT_TRUE(list(s, "allowRead").front().is_string());
}

TEST(SrtSettings, AGrantOfExactlyADeniedPathIsLeftOut) {
  // srt would let allowRead of the very same path win over its denyRead.
  ResolvedPolicy p = base_policy();
  p.grants.push_back({"/h/.local/state/ab", Access::readwrite, PathKind::directory, false, "x"});
  p.denies.push_back({"/etc", "profile"});
  const json s = settings(p);
  EXPECT_FALSE(has(list(s, "allowRead"), "/h/.local/state/ab"));
  EXPECT_FALSE(has(list(s, "allowWrite"), "/h/.local/state/ab"));
  EXPECT_FALSE(has(list(s, "allowRead"), "/etc"));
  EXPECT_TRUE(has(list(s, "denyRead"), "/etc"));
}

TEST(SrtSettings, AGrantResolvingToADeniedPathIsLeftOut) {
  ResolvedPolicy p = base_policy();
  p.grants.push_back({"/h/link", Access::read, PathKind::directory, false, "read"});
  SettingsInputs in = base_inputs();
  in.resolve = [](const std::string& x) {
    return x == "/h/link" ? std::string("/h/.local/state/ab") : x;
  };
  EXPECT_FALSE(has(list(settings(p, in), "allowRead"), "/h/link"));
  EXPECT_TRUE(has(list(settings(p), "allowRead"), "/h/link"));
}

TEST(SrtSettings, AGrantInsideADenyStaysACarveOut) {
  ResolvedPolicy p = base_policy();
  p.grants.push_back(
      {"/h/.local/state/ab/sessions/s/kubeconfig", Access::read, PathKind::file, true, "session"});
  EXPECT_TRUE(has(list(settings(p), "allowRead"), "/h/.local/state/ab/sessions/s/kubeconfig"));
}

TEST(SrtSettings, WriteOnlyGrantsGoToAllowWriteOnly) {
  ResolvedPolicy p = base_policy();
  p.grants.push_back({"/w/out", Access::write, PathKind::directory, false, "write"});
  const json s = settings(p);
  EXPECT_TRUE(has(list(s, "allowWrite"), "/w/out"));
  EXPECT_FALSE(has(list(s, "allowRead"), "/w/out"));
}

TEST(SrtSettings, NetworkIsClosedAndHelpersArePinned) {
  const json s = settings(base_policy());
  EXPECT_EQ(s.at("network"),
            json({{"allowedDomains", json::array()}, {"deniedDomains", json::array()}}));
  EXPECT_EQ(s.at("bwrapPath"), "/usr/bin/bwrap");
  EXPECT_EQ(s.at("socatPath"), "/usr/bin/socat");
  EXPECT_EQ(s.at("ripgrep"), json({{"command", "/usr/bin/rg"}}));
  EXPECT_EQ(s.at("seccomp"), json({{"applyPath", "/pkg/vendor/seccomp/x64/apply-seccomp"}}));
  EXPECT_EQ(s.at("mandatoryDenySearchDepth"), 1);
}

TEST(SrtSettings, TheProfileMayOpenDomains) {
  ResolvedPolicy p = base_policy();
  p.backend_options["nono"] = R"({"extends": "default"})";
  p.backend_options["srt"] = R"({"network": {"allowedDomains": ["github.com", "*.npmjs.org"]}})";
  const json s = settings(p);
  EXPECT_EQ(s.at("network").at("allowedDomains"), json({"github.com", "*.npmjs.org"}));
  EXPECT_EQ(s.at("network").at("deniedDomains"), json::array());
}

TEST(SrtSettings, TheProfileCannotWidenTheFilesystemOrRepinHelpers) {
  for (const char* block :
       {R"({"filesystem": {"allowWrite": ["/"]}})", R"({"bwrapPath": "/w/wt/bwrap"})",
        R"({"network": ["x"]})", R"(["network"])"}) {
    ResolvedPolicy p = base_policy();
    p.backend_options["srt"] = block;
    EXPECT_THROW(render_settings(p, base_inputs()), BackendError) << block;
  }
}

TEST(SrtSettings, UnpinnedHelpersAreLeftOut) {
  SettingsInputs in;
  const json s = settings(base_policy(), in);
  for (const char* k : {"bwrapPath", "socatPath", "ripgrep", "seccomp"})
    EXPECT_FALSE(s.contains(k)) << k;
}

TEST(SrtSettings, OutputIsDeterministic) {
  EXPECT_EQ(render_settings(base_policy(), base_inputs()),
            render_settings(base_policy(), base_inputs()));
  const std::string text = render_settings(base_policy(), base_inputs());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.rfind("{\n  \"network\"", 0), 0u) << text;
}

TEST(SrtDenyState, DeniesAreEnforced) {
  const auto states = deny_states(base_policy(), base_inputs());
  ASSERT_EQ(states.size(), 2u);
  for (const auto& s : states) {
    EXPECT_EQ(s.enforcement, Enforcement::enforced) << s.path;
    EXPECT_TRUE(s.reason.empty());
  }
  EXPECT_EQ(states[0].origin, "profile");
  EXPECT_EQ(states[1].origin, "self-protection");
}

TEST(SrtDenyState, ADenyAroundWhatSrtMustReadIsWeaker) {
  ResolvedPolicy p = base_policy();
  p.denies = {{"/ab", "profile"}, {"/usr/local", "profile"}, {"/usr", "profile"}};
  SettingsInputs in = base_inputs();
  in.package_dir = "/usr/local/lib/node_modules/@anthropic-ai/sandbox-runtime";
  const auto states = deny_states(p, in);
  ASSERT_EQ(states.size(), 3u);
  EXPECT_EQ(states[0].enforcement, Enforcement::weaker);
  EXPECT_NE(states[0].reason.find("/ab/libexec/agent-boundary/probe"), std::string::npos);
  EXPECT_EQ(states[1].enforcement, Enforcement::weaker);
  EXPECT_NE(states[1].reason.find("sandbox-runtime"), std::string::npos);
  // A deny of exactly a system dir drops that dir from allowRead instead.
  EXPECT_EQ(states[2].enforcement, Enforcement::weaker);  // the package dir is inside /usr
}

BackendExecutable exe() {
  BackendExecutable e;
  e.path = "/pkg/dist/cli.js";
  e.tools = {{tool::kShell, "/bin/sh"}, {tool::kNode, "/usr/bin/node"}, {tool::kCli, e.path}};
  return e;
}

TEST(SrtWrap, RunsSrtFromTheSessionDirWithItsSettings) {
  const auto argv = wrap_argv(exe(), "/s/sess", "/w/wt", {"true"});
  ASSERT_EQ(argv.size(), 11u);
  EXPECT_EQ(argv[0], "/bin/sh");
  EXPECT_EQ(argv[1], "-c");
  EXPECT_EQ(argv[4], "/s/sess");
  EXPECT_EQ(argv[5], "/usr/bin/node");
  EXPECT_EQ(argv[6], "/pkg/dist/cli.js");
  EXPECT_EQ(argv[7], "-s");
  EXPECT_EQ(argv[8], "/s/sess/srt-settings.json");
  EXPECT_EQ(argv[9], "-c");
}

// Runs the host script and the inner script the way srt would (the latter through bash),
// with `echo` standing in for node+srt: what reaches the command must be exactly `args`.
TEST(SrtWrap, InnerScriptPassesArgumentsVerbatimAndRestoresPath) {
  const std::vector<std::string> args = {"a b", "it's", "$HOME", "",     "-c",        "!x", "*",
                                         "--",  "`id`", "\"q\"", "a\\b", "new\nline", "=ls"};
  std::vector<std::string> cmd = {"/usr/bin/printf", "[%s]"};
  cmd.insert(cmd.end(), args.begin(), args.end());
  const auto argv = wrap_argv(exe(), "/", "/tmp", cmd);
  ProcessOptions opts;
  // The host script with bash standing in for node+srt: it runs the inner script.
  opts.argv = {argv[0], argv[1], argv[2], argv[3], argv[4], "/bin/bash", "-c", argv[10]};
  opts.env = std::vector<std::string>{"PATH=/caller/bin:/usr/bin:/bin", "HOME=/nowhere"};
  const ProcessResult r = run_process(opts);
  ASSERT_TRUE(r.ok()) << r.err;
  std::string expected;
  for (const auto& a : args) expected += "[" + a + "]";
  EXPECT_EQ(r.out, expected);

  opts.argv = {argv[0],
               argv[1],
               argv[2],
               argv[3],
               argv[4],
               "/bin/bash",
               "-c",
               wrap_argv(exe(), "/", "/tmp",
                         {"/bin/sh", "-c", "echo \"$PATH|$(pwd)|${AB_SRT_PATH-unset}\""})[10]};
  const ProcessResult p = run_process(opts);
  ASSERT_TRUE(p.ok()) << p.err;
  EXPECT_EQ(p.out, "/caller/bin:/usr/bin:/bin|/tmp|unset\n");
}

TEST(SrtWrap, TheHostScriptGivesSrtASystemPath) {
  const auto argv = wrap_argv(exe(), "/", "/tmp", {"true"});
  ProcessOptions opts;
  opts.argv = {argv[0], argv[1],   argv[2], argv[3],
               argv[4], "/bin/sh", "-c",    "echo \"$PATH|$(pwd)|$AB_SRT_PATH\""};
  opts.env = std::vector<std::string>{"PATH=/caller/bin:/usr/bin"};
  const ProcessResult r = run_process(opts);
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, "/usr/bin:/bin|/|/caller/bin:/usr/bin\n");
}

// The host script with `srt` replaced by `fake`: what the caller of the wrapped argv sees.
ProcessResult run_host_script(const std::vector<std::string>& fake, const std::string& input = "",
                              const std::string& before = "", const std::string& after = "") {
  const auto argv = wrap_argv(exe(), "/", "/", {"true"});
  ProcessOptions opts;
  opts.argv = {"/bin/bash", "-c",   before + "\"$@\"" + after, "harness", argv[0], argv[1], argv[2],
               argv[3],     argv[4]};
  opts.argv.insert(opts.argv.end(), fake.begin(), fake.end());
  opts.input = input;
  opts.timeout_ms = 20000;
  return run_process(opts);
}

TEST(SrtWrap, TheHostScriptPassesExitCodesAndStdin) {
  ProcessResult r = run_host_script({"/bin/sh", "-c", "exit 7"});
  EXPECT_EQ(r.exit_code, 7);
  r = run_host_script({"/bin/cat"}, "from stdin\n");
  EXPECT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, "from stdin\n");
}

TEST(SrtWrap, ASignalledRunIsNotReportedAsSuccess) {
  // A stand-in for srt, which exits 0 when its command dies of SIGTERM.
  const ProcessResult r =
      run_host_script({"/bin/sh", "-c", "trap 'echo got-term; exit 0' TERM; sleep 10 & wait"}, "",
                      "", " & p=$!; sleep 0.5; kill -TERM $p; wait $p; echo rc=$?");
  EXPECT_TRUE(r.ok()) << r.err;
  EXPECT_EQ(r.out, "got-term\nrc=143\n");
}

TEST(SrtWrap, AnUnsetPathBecomesTheShellsDefault) {
  // /bin/sh gives an unset PATH its default as it starts, and that is what is kept.
  const auto argv = wrap_argv(exe(), "/", "/", {"/usr/bin/env"});
  ProcessOptions opts;
  opts.argv = {argv[0], argv[1], argv[2], argv[3], argv[4], "/bin/bash", "-c", argv[10]};
  opts.env = std::vector<std::string>{"HOME=/nowhere"};
  const ProcessResult r = run_process(opts);
  ASSERT_TRUE(r.ok()) << r.err;
  EXPECT_NE(r.out.find("PATH=/"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("AB_SRT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("HOME=/nowhere\n"), std::string::npos) << r.out;
}

ProcessResult ran(const std::string& out, int code = 0) {
  ProcessResult r;
  r.exit_code = code;
  r.out = out;
  return r;
}

TEST(SrtProbe, SameFileInsideKeepsTheProbesAnswer) {
  auto r = reconcile_probe(ran("allowed\n1:2\n"), 3000, "/w/a", true, "/w/a", "1:2");
  EXPECT_EQ(r.verdict, ProbeResult::Verdict::allowed);
  r = reconcile_probe(ran("denied|EROFS\n1:2\n"), 3000, "/w/a", true, "/w/a", "1:2");
  EXPECT_EQ(r.verdict, ProbeResult::Verdict::denied);
  EXPECT_EQ(r.detail, "EROFS");
  r = reconcile_probe(ran("allowed|target absent\n1:2\n"), 3000, "/w/new", false, "/w", "1:2");
  EXPECT_EQ(r.verdict, ProbeResult::Verdict::allowed);
  EXPECT_EQ(r.detail, "target absent");
}

TEST(SrtProbe, APathOnTheHostThatIsMissingInsideIsDenied) {
  const auto r = reconcile_probe(ran("allowed|target absent\nmissing\n"), 3000, "/w/secret/k", true,
                                 "/w/secret/k", "1:2");
  EXPECT_EQ(r.verdict, ProbeResult::Verdict::denied);
  EXPECT_NE(r.detail.find("masks it"), std::string::npos) << r.detail;
}

TEST(SrtProbe, AnAbsentPathBelowAMaskIsDenied) {
  // Inside, the masked directory is an empty tmpfs: creating a file there "works".
  const auto r = reconcile_probe(ran("allowed|target absent\n54:1\n"), 3000, "/w/secret/new", false,
                                 "/w/secret", "1:2");
  EXPECT_EQ(r.verdict, ProbeResult::Verdict::denied);
  EXPECT_NE(r.detail.find("/w/secret is masked"), std::string::npos) << r.detail;
}

TEST(SrtProbe, FailuresStayInconclusiveAndTimeoutsDenied) {
  EXPECT_EQ(reconcile_probe(ran("", 1), 3000, "/a", true, "/a", "1:2").verdict,
            ProbeResult::Verdict::inconclusive);
  EXPECT_EQ(reconcile_probe(ran("1:2\n"), 3000, "/a", true, "/a", "1:2").verdict,
            ProbeResult::Verdict::inconclusive);
  ProcessResult t;
  t.timed_out = true;
  EXPECT_EQ(reconcile_probe(t, 3000, "/a", true, "/a", "1:2").verdict,
            ProbeResult::Verdict::denied);
}

// srt run as root would show the host's /etc/shadow: root-only files inside the system dirs
// it reads are hidden.
TEST(SrtSettings, RootOnlyHostSecretsAreHidden) {
  SettingsInputs in = base_inputs();
  in.host_secrets = {"/etc/shadow", "/etc/ssh/ssh_host_ed25519_key"};
  const auto deny_read = list(settings(base_policy(), in), "denyRead");
  for (const char* p : {"/etc/shadow", "/etc/ssh/ssh_host_ed25519_key"})
    EXPECT_NE(std::find(deny_read.begin(), deny_read.end(), json(p)), deny_read.end()) << p;
  const auto found = SettingsInputs::default_host_secrets();
  if (::access("/etc/shadow", F_OK) == 0) {
    EXPECT_NE(std::find(found.begin(), found.end(), "/etc/shadow"), found.end());
  }
}

}  // namespace
}  // namespace agent_boundary::srt
