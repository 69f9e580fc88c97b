// Credential injection: the env-file format and its cache rules, the exporters' parsing,
// the refresh protocol (lock, atomic 0600 writes, failures), tool pinning, and the session
// kubeconfig built from fixtures.
#include "credentials/credentials.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "agent_boundary/error.hpp"
#include "credentials/aws.hpp"
#include "credentials/env_file.hpp"
#include "credentials/github.hpp"
#include "credentials/kubeconfig.hpp"
#include "credentials/tool_paths.hpp"
#include "hook_engine.hpp"
#include "mock_install.hpp"
#include "policy_json.hpp"
#include "secure_file.hpp"
#include "test_world.hpp"

namespace fs = std::filesystem;

namespace agent_boundary::credentials {
namespace {

using agent_boundary::testing::TestWorld;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

constexpr double kNow = 1800000000.0;

mode_t mode_of(const std::string& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Set an environment variable for one test, restoring it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string script(const TestWorld& w, const std::string& rel, const std::string& body) {
  const std::string p = w.file(rel, "#!/bin/sh\n" + body);
  ::chmod(p.c_str(), 0755);
  return p;
}

ProcessResult exited(int code, const std::string& out, const std::string& err = {}) {
  ProcessResult r;
  r.exit_code = code;
  r.out = out;
  r.err = err;
  return r;
}

// -- env-file format -------------------------------------------------------------------------

TEST(EnvFile, RoundTripsEveryValueThroughShellQuoting) {
  EnvFile f;
  f.set("profile", "MyOrg/ReadOnly");
  f.set("exported_at", format_time(kNow));
  f.vars = {{"A", "plain"},
            {"B", ""},
            {"C", "it's \"quoted\" $(not run) `nor this` ; | & *"},
            {"D", "!/usr/bin/gh auth git-credential"},
            {"E", "a=b=c"}};
  const std::string text = render_env_file("agent-boundary test — do not edit", f);
  EXPECT_THAT(text, HasSubstr("# agent-boundary test — do not edit\n# profile=MyOrg/ReadOnly\n"));
  EXPECT_THAT(text, HasSubstr("export B=''\n"));
  EXPECT_THAT(text, HasSubstr("export D='!/usr/bin/gh auth git-credential'\n"));
  const auto back = parse_env_file(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->vars, f.vars);
  EXPECT_EQ(*back->get("profile"), "MyOrg/ReadOnly");
  EXPECT_DOUBLE_EQ(*back->number("exported_at"), kNow);
}

TEST(EnvFile, TheReferenceFormatParses) {
  const auto f = parse_env_file(
      "# agent-boundary AWS credentials — do not edit\n# profile=p\n# expires_at=1800000300.5\n"
      "export AWS_ACCESS_KEY_ID=AKIA\nexport AWS_SESSION_TOKEN='tok'\\''en'\n\n");
  ASSERT_TRUE(f);
  EXPECT_THAT(f->vars,
              ElementsAre(Pair("AWS_ACCESS_KEY_ID", "AKIA"), Pair("AWS_SESSION_TOKEN", "tok'en")));
  EXPECT_DOUBLE_EQ(*f->number("expires_at"), 1800000300.5);
  EXPECT_EQ(f->get("failed_at"), nullptr);
}

TEST(EnvFile, AnythingAShellWouldExpandIsRejected) {
  for (const char* bad : {"$(id)", "`id`", "a b", "'open", "x;y", "${HOME}", "a\\"})
    EXPECT_FALSE(shell_unquote(bad)) << bad;
  EXPECT_FALSE(parse_env_file("export A=$(id)\n"));
  EXPECT_FALSE(parse_env_file("A=1\n"));
  EXPECT_FALSE(parse_env_file("export 1A=x\n"));
  EXPECT_FALSE(parse_env_file("export A\n"));
  EXPECT_EQ(*shell_unquote("'a b'\\''c'"), "a b'c");
}

TEST(EnvFile, MetadataIsOneLineAndSecretsAreRedacted) {
  EXPECT_EQ(one_line("  first\nsecond\r\t "), "first second");
  EXPECT_EQ(one_line(std::string(400, 'x')).size(), 303u);
  EXPECT_EQ(redact("denied for KEY-1234 and KEY-1234", {{"K", "KEY-1234"}, {"S", "abc"}}),
            "denied for [redacted] and [redacted]");
  EnvFile f;
  f.set("error", "line one\nline two");
  EXPECT_EQ(*f.get("error"), "line one line two");
}

// -- cache rules -----------------------------------------------------------------------------

EnvFile success(double exported_at, std::optional<double> expires_at, const std::string& p = "p") {
  ExportResult r;
  r.ok = true;
  r.vars = {{"AWS_ACCESS_KEY_ID", "AKIA"}, {"AWS_SECRET_ACCESS_KEY", "SECRET-VALUE"}};
  r.expires_at = expires_at;
  return success_record(aws_kind(p), r, exported_at);
}

TEST(CacheRules, MissingCorruptOrAnotherProfileMeansExport) {
  const CredentialKind k = aws_kind("p");
  EXPECT_EQ(assess(std::nullopt, k, kNow).state, Freshness::missing);
  EXPECT_TRUE(assess(std::nullopt, k, kNow).export_needed());
  EXPECT_EQ(assess(success(kNow, std::nullopt, "other"), k, kNow).state, Freshness::missing);
  EnvFile no_time = success(kNow, std::nullopt);
  no_time.erase("exported_at");
  EXPECT_EQ(assess(no_time, k, kNow).state, Freshness::missing);
  EnvFile no_vars = success(kNow, std::nullopt);
  no_vars.vars.clear();
  EXPECT_EQ(assess(no_vars, k, kNow).state, Freshness::missing);
}

TEST(CacheRules, RefreshedFiveMinutesBeforeExpiration) {
  const CredentialKind k = aws_kind("p");
  const EnvFile f = success(kNow - 100, kNow + 3600);
  EXPECT_EQ(assess(f, k, kNow).state, Freshness::fresh);
  EXPECT_EQ(assess(f, k, kNow + 3600 - 301).state, Freshness::fresh);
  const Assessment due = assess(f, k, kNow + 3600 - 299);
  EXPECT_EQ(due.state, Freshness::stale);
  EXPECT_TRUE(due.usable);  // still valid: kept if the refresh fails
  const Assessment expired = assess(f, k, kNow + 3600);
  EXPECT_EQ(expired.state, Freshness::stale);
  EXPECT_FALSE(expired.usable);
}

TEST(CacheRules, WithoutExpirationAwsAndGithubAreReExportedHourly) {
  EXPECT_EQ(assess(success(kNow, std::nullopt), aws_kind("p"), kNow + 3599).state,
            Freshness::fresh);
  EXPECT_EQ(assess(success(kNow, std::nullopt), aws_kind("p"), kNow + 3600).state,
            Freshness::stale);
  ExportResult gh;
  gh.ok = true;
  gh.vars = github_vars("gho_x", "/usr/bin/gh");
  const EnvFile g = success_record(github_kind(), gh, kNow);
  EXPECT_EQ(*g.get("host"), "github.com");
  EXPECT_EQ(assess(g, github_kind(), kNow + 3599).state, Freshness::fresh);
  EXPECT_EQ(assess(g, github_kind(), kNow + 3601).state, Freshness::stale);
}

TEST(CacheRules, FailuresAreCachedForFiveMinutes) {
  const CredentialKind k = aws_kind("p");
  const EnvFile f = failure_record(k, "Token has expired", kNow);
  const Assessment a = assess(f, k, kNow + 299);
  EXPECT_EQ(a.state, Freshness::failed);
  EXPECT_FALSE(a.usable);
  EXPECT_FALSE(a.export_needed());
  EXPECT_EQ(a.error, "Token has expired");
  EXPECT_TRUE(assess(f, k, kNow + 300).export_needed());
  // A failure of another profile says nothing about this one.
  EXPECT_TRUE(assess(f, aws_kind("q"), kNow + 1).export_needed());
  // A failure time far in the future (the clock went back) does not block forever.
  EXPECT_TRUE(assess(f, k, kNow - 3600).export_needed());
}

TEST(CacheRules, AFailedRefreshKeepsValidCredentialsAndIsNotRetriedAtOnce) {
  const CredentialKind k = aws_kind("p");
  const EnvFile old = success(kNow - 3000, kNow + 200);
  const EnvFile kept = refresh_failed_record(old, "sso expired", kNow);
  EXPECT_EQ(kept.vars, old.vars);
  const Assessment a = assess(kept, k, kNow + 10);
  EXPECT_EQ(a.state, Freshness::failed);
  EXPECT_TRUE(a.usable);
  EXPECT_EQ(a.error, "sso expired");
  EXPECT_TRUE(assess(kept, k, kNow + 150).usable);
  // Expired: nothing to inject, export again.
  const Assessment gone = assess(kept, k, kNow + 200);
  EXPECT_FALSE(gone.usable);
  EXPECT_TRUE(gone.export_needed());
}

// -- AWS -------------------------------------------------------------------------------------

// The exporters' argv is fixed (profile name only). That no secret is in any argv while a
// command runs is checked on live processes, in test_credentials.py (protects
// "credentials-argv").
TEST(Aws, ExportArgvIsFixed) {
  EXPECT_THAT(aws_export_argv("/usr/bin/aws", "p"),
              ElementsAre("/usr/bin/aws", "configure", "export-credentials", "--profile", "p"));
  EXPECT_THAT(aws_region_argv("/usr/bin/aws", "p"),
              ElementsAre("/usr/bin/aws", "configure", "get", "region", "--profile", "p"));
}

TEST(Aws, ParsesExportCredentialsAndRegion) {
  const auto r = parse_aws_export(
      exited(0, R"({"Version":1,"AccessKeyId":"AKIA1","SecretAccessKey":"S1","SessionToken":"T1",)"
                R"("Expiration":"2027-01-15T08:00:00+00:00"})"),
      exited(0, "eu-west-1\n"), 15000);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_THAT(
      r.vars,
      ElementsAre(Pair("AWS_ACCESS_KEY_ID", "AKIA1"), Pair("AWS_SECRET_ACCESS_KEY", "S1"),
                  Pair("AWS_SESSION_TOKEN", "T1"), Pair("AWS_REGION", "eu-west-1"),
                  Pair("AWS_DEFAULT_REGION", "eu-west-1"), Pair("AWS_CONFIG_FILE", "/dev/null"),
                  Pair("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")));
  EXPECT_DOUBLE_EQ(*r.expires_at, 1800000000.0);
}

TEST(Aws, StaticKeysWithoutRegionOrToken) {
  const auto r = parse_aws_export(exited(0, R"({"AccessKeyId":"A","SecretAccessKey":"S"})"),
                                  exited(1, ""), 15000);
  ASSERT_TRUE(r.ok);
  EXPECT_FALSE(r.expires_at);
  EXPECT_THAT(r.vars,
              ElementsAre(Pair("AWS_ACCESS_KEY_ID", "A"), Pair("AWS_SECRET_ACCESS_KEY", "S"),
                          Pair("AWS_CONFIG_FILE", "/dev/null"),
                          Pair("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")));
  // A region that is not one is not injected.
  const auto junk = parse_aws_export(exited(0, R"({"AccessKeyId":"A","SecretAccessKey":"S"})"),
                                     exited(0, "$(id) eu\n"), 15000);
  for (const auto& [k, v] : junk.vars) EXPECT_NE(k, "AWS_REGION");
}

TEST(Aws, FailuresSayWhyWithoutTheOutput) {
  EXPECT_EQ(
      parse_aws_export(exited(255, "", "\nThe SSO session has expired\nmore\n"), {}, 15000).error,
      "The SSO session has expired");
  EXPECT_EQ(parse_aws_export(exited(3, ""), {}, 15000).error,
            "aws configure export-credentials exited 3");
  ProcessResult slow;
  slow.timed_out = true;
  const auto t = parse_aws_export(slow, {}, 15000);
  EXPECT_TRUE(t.timed_out);
  EXPECT_EQ(t.error, "aws configure export-credentials timed out after 15 s");
  const auto garbage = parse_aws_export(exited(0, "SECRET-IN-GARBAGE {"), {}, 15000);
  EXPECT_EQ(garbage.error, "unparseable export-credentials output");
  EXPECT_EQ(parse_aws_export(exited(0, R"({"AccessKeyId":"A"})"), {}, 15000).error,
            "export-credentials output missing key material");
  EXPECT_EQ(parse_aws_export(exited(0, "[1]"), {}, 15000).error,
            "export-credentials output missing key material");
  EXPECT_THAT(
      parse_aws_export(exited(0, R"({"AccessKeyId":"A","SecretAccessKey":"S\nx"})"), {}, 15000)
          .error,
      HasSubstr("control characters"));
  EXPECT_THAT(
      parse_aws_export(
          exited(0, R"({"AccessKeyId":"A","SecretAccessKey":"S","Expiration":"soon"})"), {}, 15000)
          .error,
      HasSubstr("unreadable Expiration"));
}

TEST(Aws, Iso8601) {
  EXPECT_DOUBLE_EQ(*parse_iso8601("2027-01-15T08:00:00Z"), 1800000000.0);
  EXPECT_DOUBLE_EQ(*parse_iso8601("2027-01-15T08:00:00+00:00"), 1800000000.0);
  EXPECT_DOUBLE_EQ(*parse_iso8601("2027-01-15T09:30:00+01:30"), 1800000000.0);
  EXPECT_DOUBLE_EQ(*parse_iso8601("2027-01-15T03:00:00-0500"), 1800000000.0);
  EXPECT_DOUBLE_EQ(*parse_iso8601("2027-01-15T08:00:00.250Z"), 1800000000.25);
  for (const char* bad : {"", "2027-01-15", "2027-01-15T08:00:00", "2027-13-15T08:00:00Z",
                          "2027-01-15T08:00:00Zjunk", "tomorrow"})
    EXPECT_FALSE(parse_iso8601(bad)) << bad;
}

TEST(Aws, FailureNoteCarriesTheHint) {
  EXPECT_EQ(aws_failure_note("boom"), "no AWS creds: boom — try `aws sso login`");
  EXPECT_EQ(github_failure_note("boom"), "no GitHub token: boom — try `gh auth login`");
}

// -- GitHub ----------------------------------------------------------------------------------

TEST(Github, TokenBecomesTokenAndGitCredentialHelper) {
  EXPECT_THAT(gh_token_argv("/usr/bin/gh"),
              ElementsAre("/usr/bin/gh", "auth", "token", "--hostname", "github.com"));
  const auto r = parse_gh_token(exited(0, "gho_abc123\n"), "/usr/bin/gh", 15000);
  ASSERT_TRUE(r.ok);
  EXPECT_FALSE(r.expires_at);
  EXPECT_THAT(
      r.vars,
      ElementsAre(Pair("GH_TOKEN", "gho_abc123"), Pair("GITHUB_TOKEN", "gho_abc123"),
                  Pair("GIT_CONFIG_COUNT", "2"), Pair("GIT_CONFIG_KEY_0", "credential.helper"),
                  Pair("GIT_CONFIG_VALUE_0", ""), Pair("GIT_CONFIG_KEY_1", "credential.helper"),
                  Pair("GIT_CONFIG_VALUE_1", "!/usr/bin/gh auth git-credential")));
  EXPECT_EQ(github_vars("t", "/opt/my tools/gh").back().second,
            "!'/opt/my tools/gh' auth git-credential");
}

TEST(Github, Failures) {
  EXPECT_EQ(parse_gh_token(exited(1, "", "no oauth token\n"), "/g", 15000).error, "no oauth token");
  EXPECT_EQ(parse_gh_token(exited(4, ""), "/g", 15000).error, "gh auth token exited 4");
  EXPECT_EQ(parse_gh_token(exited(0, "\n"), "/g", 15000).error, "gh auth token printed nothing");
  EXPECT_EQ(parse_gh_token(exited(0, "two words\n"), "/g", 15000).error,
            "gh auth token printed something that is not a token");
}

// -- the refresh protocol --------------------------------------------------------------------

struct CountingExporter {
  std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0);
  ExportResult result;
  int sleep_ms = 0;
  std::function<ExportResult(int)> fn() const {
    auto c = calls;
    auto r = result;
    const int s = sleep_ms;
    return [c, r, s](int) {
      ++*c;
      if (s) std::this_thread::sleep_for(std::chrono::milliseconds(s));
      return r;
    };
  }
};

ExportResult ok_export(const std::string& key, std::optional<double> expires_at = std::nullopt) {
  ExportResult r;
  r.ok = true;
  r.vars = {{"AWS_ACCESS_KEY_ID", key}, {"AWS_SECRET_ACCESS_KEY", "SECRET-" + key}};
  r.expires_at = expires_at;
  return r;
}

ExportResult failed_export(const std::string& error) {
  ExportResult r;
  r.error = error;
  return r;
}

TEST(Refresh, ExportsOnceThenServesTheCachePrivately) {
  TestWorld w;
  const std::string dir = w.dir("s");
  CountingExporter e;
  e.result = ok_export("AKIA1", now_seconds() + 3600);
  const mode_t old_umask = ::umask(0);  // even with a permissive umask
  const auto first = load_or_refresh(dir, {{aws_kind("p"), e.fn()}});
  ::umask(old_umask);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(first[0].exported_now);
  EXPECT_EQ(first[0].vars, e.result.vars);
  EXPECT_EQ(mode_of(dir + "/aws-credentials.env"), 0600u);
  EXPECT_EQ(mode_of(dir + "/credentials.lock"), 0600u);
  EXPECT_THAT(entries(dir), ElementsAre("aws-credentials.env", "credentials.lock"));
  const auto second = load_or_refresh(dir, {{aws_kind("p"), e.fn()}});
  EXPECT_FALSE(second[0].exported_now);
  EXPECT_EQ(second[0].vars, e.result.vars);
  EXPECT_EQ(*e.calls, 1);
}

TEST(Refresh, AFailureIsCachedAndReportedWithoutSecrets) {
  TestWorld w;
  const std::string dir = w.dir("s");
  CountingExporter e;
  e.result = failed_export("The SSO session has expired");
  const auto first = load_or_refresh(dir, {{aws_kind("p"), e.fn()}});
  EXPECT_TRUE(first[0].vars.empty());
  EXPECT_EQ(first[0].error, "The SSO session has expired");
  const auto text = *read_file(dir + "/aws-credentials.env");
  EXPECT_THAT(text, HasSubstr("# failed_at="));
  EXPECT_THAT(text, HasSubstr("# error=The SSO session has expired\n"));
  EXPECT_THAT(text, Not(HasSubstr("export ")));
  const auto again = load_or_refresh(dir, {{aws_kind("p"), e.fn()}});
  EXPECT_EQ(again[0].error, "The SSO session has expired");
  EXPECT_EQ(*e.calls, 1);
}

TEST(Refresh, AFailedRefreshKeepsTheStillValidFile) {
  TestWorld w;
  const std::string dir = w.dir("s");
  // Valid for 100 s more: due for a refresh (margin 300 s), still usable.
  const EnvFile old = success(now_seconds() - 3000, now_seconds() + 100);
  write_file_atomic(dir + "/aws-credentials.env", render_env_file("t", old));
  CountingExporter e;
  e.result = failed_export("refresh broke for SECRET-VALUE");
  const auto r = load_or_refresh(dir, {{aws_kind("p"), e.fn()}});
  EXPECT_EQ(r[0].vars, old.vars);
  EXPECT_EQ(r[0].refresh_error, "refresh broke for [redacted]");
  EXPECT_TRUE(r[0].error.empty());
  const auto kept = parse_env_file(*read_file(dir + "/aws-credentials.env"));
  EXPECT_EQ(kept->vars, old.vars);
  EXPECT_TRUE(kept->get("refresh_failed_at"));
  // Not retried within the failure TTL.
  const auto again = load_or_refresh(dir, {{aws_kind("p"), e.fn()}});
  EXPECT_EQ(again[0].vars, old.vars);
  EXPECT_EQ(*e.calls, 1);
}

TEST(Refresh, AFailureReplacesExpiredCredentials) {
  TestWorld w;
  const std::string dir = w.dir("s");
  write_file_atomic(dir + "/aws-credentials.env",
                    render_env_file("t", success(now_seconds() - 4000, now_seconds() - 10)));
  CountingExporter e;
  e.result = failed_export("expired");
  const auto r = load_or_refresh(dir, {{aws_kind("p"), e.fn()}});
  EXPECT_TRUE(r[0].vars.empty());
  EXPECT_EQ(r[0].error, "expired");
  EXPECT_THAT(*read_file(dir + "/aws-credentials.env"), Not(HasSubstr("SECRET")));
}

TEST(Refresh, RefreshesNearExpiry) {
  TestWorld w;
  const std::string dir = w.dir("s");
  CountingExporter near;
  near.result = ok_export("AKIA-NEAR", now_seconds() + 200);  // inside the 300 s margin
  load_or_refresh(dir, {{aws_kind("p"), near.fn()}});
  load_or_refresh(dir, {{aws_kind("p"), near.fn()}});
  EXPECT_EQ(*near.calls, 2);
}

TEST(Refresh, ACrashedWritersTempFileIsCleanedUpUnderTheLock) {
  TestWorld w;
  const std::string dir = w.dir("s");
  w.file("s/aws-credentials.env.4242.0123456789abcdef.tmp", "export A=half");
  CountingExporter e;
  e.result = ok_export("AKIA2");
  load_or_refresh(dir, {{aws_kind("p"), e.fn()}});
  EXPECT_THAT(entries(dir), ElementsAre("aws-credentials.env", "credentials.lock"));
}

TEST(Refresh, ConcurrentLaunchesExportOnce) {
  TestWorld w;
  const std::string dir = w.dir("s");
  CountingExporter e;
  e.result = ok_export("AKIA3");
  e.sleep_ms = 300;
  std::vector<std::future<std::vector<Loaded>>> runs;
  for (int i = 0; i < 4; ++i)
    runs.push_back(std::async(std::launch::async, [&] {
      return load_or_refresh(dir, {{aws_kind("p"), e.fn()}});
    }));
  for (auto& r : runs) EXPECT_EQ(r.get()[0].vars, e.result.vars);
  EXPECT_EQ(*e.calls, 1);
}

TEST(Refresh, AHeldLockEndsTheWaitWithinTheBudget) {
  TestWorld w;
  const std::string dir = w.dir("s");
  FileLock held = FileLock::acquire(dir + "/credentials.lock", 1000);
  ASSERT_TRUE(held.held());
  CountingExporter e;
  e.result = ok_export("AKIA4");
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = load_or_refresh(dir, {{aws_kind("p"), e.fn()}}, 300);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(*e.calls, 0);
  EXPECT_THAT(r[0].error, HasSubstr("still exporting"));
  EXPECT_FALSE(fs::exists(dir + "/aws-credentials.env"));  // nothing cached
}

TEST(Refresh, SeveralKindsExportConcurrently) {
  TestWorld w;
  const std::string dir = w.dir("s");
  CountingExporter a, g;
  a.result = ok_export("AKIA5");
  a.sleep_ms = 400;
  g.result.ok = true;
  g.result.vars = github_vars("gho_5", "/usr/bin/gh");
  g.sleep_ms = 400;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = load_or_refresh(dir, {{aws_kind("p"), a.fn()}, {github_kind(), g.fn()}});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(750));
  EXPECT_EQ(r[0].vars, a.result.vars);
  EXPECT_EQ(r[1].vars, g.result.vars);
  EXPECT_EQ(mode_of(dir + "/github-credentials.env"), 0600u);
}

// -- the facade: launcher, hook, status ------------------------------------------------------

TEST(Injection, RealExportersThroughPinnedScripts) {
  TestWorld w;
  const std::string dir = w.dir("s");
  BoundaryConfig c;
  c.aws_profile = "p";
  c.github_push = true;
  c.aws_cli = script(w, "bin/aws",
                     "case \"$2\" in\n"
                     "  export-credentials) echo '{\"AccessKeyId\":\"AKIA6\","
                     "\"SecretAccessKey\":\"SECRET-6\"}' ;;\n"
                     "  get) echo us-east-2 ;;\n"
                     "esac\n");
  c.gh_cli = script(w, "bin/gh", "echo gho_SIX\n");
  // The user's git already has two config entries: ours come after them.
  const Injection inj =
      prepare_injection(dir, c, {"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=a.b", "PATH=/bin"});
  EXPECT_TRUE(inj.notes.empty()) << inj.notes[0];
  std::map<std::string, std::string> env(inj.env.begin(), inj.env.end());
  EXPECT_EQ(env["AWS_ACCESS_KEY_ID"], "AKIA6");
  EXPECT_EQ(env["AWS_REGION"], "us-east-2");
  EXPECT_EQ(env["GH_TOKEN"], "gho_SIX");
  EXPECT_EQ(env["GIT_CONFIG_COUNT"], "4");
  EXPECT_EQ(env["GIT_CONFIG_KEY_2"], "credential.helper");
  EXPECT_EQ(env["GIT_CONFIG_VALUE_2"], "");
  EXPECT_EQ(env["GIT_CONFIG_VALUE_3"], "!" + c.gh_cli + " auth git-credential");
  EXPECT_EQ(env.count("GIT_CONFIG_KEY_0"), 0u);

  // The hook and status see the state, never a value.
  const auto notes = injection_notes(dir, c, now_seconds());
  EXPECT_THAT(notes,
              ElementsAre("AWS credentials of profile `p` injected", "GitHub token injected"));
  const std::string status = credential_status(dir, c, now_seconds()).dump();
  EXPECT_THAT(status, HasSubstr("\"state\":\"valid\""));
  for (const char* secret : {"AKIA6", "SECRET-6", "gho_SIX"}) {
    EXPECT_THAT(status, Not(HasSubstr(secret)));
    for (const auto& n : notes) EXPECT_THAT(n, Not(HasSubstr(secret)));
  }
}

TEST(Injection, FailuresBecomeNotesAndMissingToolsAreExplained) {
  TestWorld w;
  const std::string dir = w.dir("s");
  BoundaryConfig c;
  c.aws_profile = "p";
  c.github_push = true;
  c.aws_cli = script(w, "bin/aws", "echo 'Error loading SSO Token: expired' >&2; exit 255\n");
  const Injection inj = prepare_injection(dir, c, {});
  EXPECT_TRUE(inj.env.empty());
  EXPECT_THAT(inj.notes,
              ElementsAre("no AWS creds: Error loading SSO Token: expired — try `aws sso login`",
                          HasSubstr("no GitHub token: gh was not found")));
  EXPECT_THAT(injection_notes(dir, c, now_seconds())[0],
              "no AWS creds: Error loading SSO Token: expired — try `aws sso login`");
  EXPECT_THAT(credential_status_lines(dir, c, now_seconds())[0],
              HasSubstr("credentials: AWS profile p failed (Error loading SSO Token: expired)"));
  EXPECT_FALSE(wants_credentials(BoundaryConfig{}));
  BoundaryConfig no_push;
  no_push.github_push = false;
  EXPECT_FALSE(wants_credentials(no_push));
}

TEST(Injection, RemovedWhenNoLongerRequested) {
  TestWorld w;
  const std::string dir = w.dir("s");
  write_file_atomic(dir + "/aws-credentials.env", render_env_file("t", success(kNow, kNow + 1)));
  write_file_atomic(dir + "/github-credentials.env", "# host=github.com\n");
  BoundaryConfig c;
  c.aws_profile = "p";
  remove_unrequested(dir, c);
  EXPECT_TRUE(fs::exists(dir + "/aws-credentials.env"));
  EXPECT_FALSE(fs::exists(dir + "/github-credentials.env"));
  c.aws_profile = "another";
  remove_unrequested(dir, c);
  EXPECT_FALSE(fs::exists(dir + "/aws-credentials.env"));
}

// -- tool pinning ----------------------------------------------------------------------------

TEST(Tools, CandidatesAreSystemDirsThenAbsolutePathEntries) {
  ScopedEnv path("PATH", "relative/bin:/opt/x/bin/:/usr/bin::/opt/y");
  EXPECT_THAT(tool_candidates("gh"),
              ElementsAre("/usr/bin/gh", "/usr/local/bin/gh", "/opt/x/bin/gh", "/opt/y/gh"));
}

TEST(Tools, OverridesAreCheckedAndAwsMustBeVersion2) {
  TestWorld w;
  const std::string v1 = script(w, "v1/aws", "echo 'aws-cli/1.22.34 Python/3.11' >&2\n");
  const std::string v2 = script(w, "v2/aws", "echo 'aws-cli/2.9.19 Python/3.11.2 Linux'\n");
  EXPECT_FALSE(reports_aws_cli_v2(v1));
  EXPECT_TRUE(reports_aws_cli_v2(v2));
  std::string problem;
  {
    ScopedEnv o(kAwsOverride, v2);
    EXPECT_EQ(find_aws_cli(problem), v2);
  }
  {
    ScopedEnv o(kAwsOverride, v1);
    EXPECT_THROW(find_aws_cli(problem), SessionError);
  }
  {
    ScopedEnv o(kGhOverride, "relative/gh");
    EXPECT_THROW(find_gh_cli(problem), SessionError);
  }
  {
    // Without an override: a v1 first on PATH is skipped for a v2 later on.
    ScopedEnv o(kAwsOverride, std::nullopt);
    ScopedEnv path("PATH", w.path("v1") + ":" + w.path("v2"));
    std::string expected = v2;  // unless the system directories, searched first, have one
    for (const char* sys : {"/usr/local/bin/aws", "/usr/bin/aws"})
      if (::access(sys, X_OK) == 0 && reports_aws_cli_v2(sys)) expected = sys;
    EXPECT_EQ(find_aws_cli(problem), expected);
  }
  {
    ScopedEnv o(kGhOverride, std::nullopt);
    ScopedEnv path("PATH", w.path("nothing-here"));
    const std::string found = find_gh_cli(problem);
    if (found.empty()) {
      EXPECT_THAT(problem, HasSubstr("no GitHub CLI (gh) was found"));
    } else {
      EXPECT_TRUE(found == "/usr/bin/gh" || found == "/usr/local/bin/gh") << found;
    }
  }
}

// -- kubeconfig --------------------------------------------------------------------------------

const char* kAwsConfig = R"([default]
region = us-east-1

[profile sso-direct]
sso_account_id = 111111111111
sso_role_name = ReadOnly

[sso-session corp]
sso_start_url = https://corp.awsapps.com/start
sso_account_id = 222222222222

[profile via-session]
sso_session = corp
sso_role_name = Dev

[profile base]
sso_session = corp
sso_account_id = 111111111111

[profile role]
role_arn = arn:aws:iam::222222222222:role/Deploy
source_profile = base

[profile chained]
source_profile = role

[profile  "spaced name" ]
aws_account_id = 333333333333

[profile loop-a]
source_profile = loop-b
[profile loop-b]
source_profile = loop-a

[profile static]
credential_process = /opt/creds
)";

TEST(Kubeconfig, AccountLookupFollowsRolesSessionsAndSourceProfiles) {
  EXPECT_EQ(aws_account_id(kAwsConfig, "sso-direct"), "111111111111");
  EXPECT_EQ(aws_account_id(kAwsConfig, "via-session"), "222222222222");
  EXPECT_EQ(aws_account_id(kAwsConfig, "role"), "222222222222");  // the role's account
  EXPECT_EQ(aws_account_id(kAwsConfig, "chained"), "222222222222");
  EXPECT_EQ(aws_account_id(kAwsConfig, "spaced name"), "333333333333");
  EXPECT_FALSE(aws_account_id(kAwsConfig, "loop-a"));
  EXPECT_FALSE(aws_account_id(kAwsConfig, "static"));
  EXPECT_FALSE(aws_account_id(kAwsConfig, "default"));
  EXPECT_FALSE(aws_account_id(kAwsConfig, "absent"));
}

const char* kSourceKubeconfig = R"(apiVersion: v1
kind: Config
clusters:
- name: arn:aws:eks:eu-west-1:111111111111:cluster/prod
  cluster:
    server: https://prod.example.invalid
    certificate-authority-data: Q0EtT05F
- name: arn:aws:eks:us-east-2:222222222222:cluster/dev
  cluster:
    server: https://dev.example.invalid
    insecure-skip-tls-verify: true
- name: arn:aws:eks:us-east-2:222222222222:cluster/dev2
  cluster: {server: "https://dev2.example.invalid"}
- name: orbstack
  cluster:
    server: https://127.0.0.1:26443
    certificate-authority-data: T1JC
- name: not-a-map
contexts:
- name: orbstack
  context: {cluster: orbstack, user: orbstack, namespace: '0123'}
- name: prod
  context: {cluster: "arn:aws:eks:eu-west-1:111111111111:cluster/prod", user: prod-user}
users:
- name: orbstack
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
- name: prod-user
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: aws
      args: [--profile, sso-direct, eks, get-token, --cluster-name, prod]
current-context: prod
)";

KubeconfigRequest kube_request(bool eks, bool orbstack, const std::string& profile) {
  KubeconfigRequest r;
  r.eks = eks;
  r.orbstack = orbstack;
  r.aws_profile = profile;
  r.aws_command = "/usr/bin/aws";
  r.source_path = "/home/u/.kube/config";
  r.source_text = kSourceKubeconfig;
  r.aws_config_path = "/home/u/.aws/config";
  r.aws_config_text = kAwsConfig;
  return r;
}

TEST(Kubeconfig, TheOneEksClusterOfTheAccountWithAProfileFreeExecUser) {
  const auto r = build_kubeconfig(kube_request(true, false, "sso-direct"));
  ASSERT_TRUE(r.yaml);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  const YAML::Node k = YAML::Load(*r.yaml);
  EXPECT_EQ(k["apiVersion"].as<std::string>(), "v1");
  EXPECT_EQ(k["kind"].as<std::string>(), "Config");
  ASSERT_EQ(k["clusters"].size(), 1u);
  EXPECT_EQ(k["clusters"][0]["name"].as<std::string>(),
            "arn:aws:eks:eu-west-1:111111111111:cluster/prod");
  EXPECT_EQ(k["clusters"][0]["cluster"]["certificate-authority-data"].as<std::string>(),
            "Q0EtT05F");
  EXPECT_EQ(k["contexts"][0]["name"].as<std::string>(), "agent-boundary-prod");
  EXPECT_EQ(k["contexts"][0]["context"]["user"].as<std::string>(), "agent-boundary-aws");
  EXPECT_EQ(k["current-context"].as<std::string>(), "agent-boundary-prod");
  ASSERT_EQ(k["users"].size(), 1u);  // the source's own users are not copied
  const YAML::Node exec = k["users"][0]["user"]["exec"];
  EXPECT_EQ(exec["command"].as<std::string>(), "/usr/bin/aws");
  EXPECT_EQ(exec["interactiveMode"].as<std::string>(), "Never");
  EXPECT_EQ(exec["args"].as<std::vector<std::string>>(),
            (std::vector<std::string>{"--region", "eu-west-1", "eks", "get-token", "--cluster-name",
                                      "prod", "--output", "json"}));
  EXPECT_THAT(*r.yaml, Not(HasSubstr("--profile")));
  EXPECT_THAT(*r.yaml, Not(HasSubstr("orbstack")));
}

TEST(Kubeconfig, ZeroOrTwoMatchesAreWarnings) {
  const auto two = build_kubeconfig(kube_request(true, false, "role"));
  EXPECT_FALSE(two.yaml);
  EXPECT_THAT(two.warnings,
              ElementsAre("aws profile 'role' maps to 2 EKS clusters in /home/u/.kube/config; no "
                          "EKS cluster"));
  const auto none = build_kubeconfig(kube_request(true, false, "spaced name"));
  EXPECT_THAT(none.warnings, ElementsAre(HasSubstr("maps to 0 EKS clusters")));
  const auto no_account = build_kubeconfig(kube_request(true, false, "static"));
  EXPECT_THAT(no_account.warnings,
              ElementsAre("could not find an account ID for aws profile 'static' in "
                          "/home/u/.aws/config; no EKS cluster"));
}

TEST(Kubeconfig, OrbstackIsCopiedVerbatimAndIndependentOfEks) {
  const auto r = build_kubeconfig(kube_request(true, true, "role"));  // EKS: 2 matches
  ASSERT_TRUE(r.yaml);
  EXPECT_EQ(r.warnings.size(), 1u);
  const YAML::Node k = YAML::Load(*r.yaml);
  ASSERT_EQ(k["clusters"].size(), 1u);
  EXPECT_EQ(k["clusters"][0]["name"].as<std::string>(), "orbstack");
  EXPECT_EQ(k["users"][0]["user"]["client-key-data"].as<std::string>(), "S0VZ");
  EXPECT_EQ(k["current-context"].as<std::string>(), "orbstack");
  // A quoted scalar stays a string ('0123' is not the number 123).
  EXPECT_THAT(*r.yaml, HasSubstr("namespace: \"0123\""));

  const auto both = build_kubeconfig(kube_request(true, true, "sso-direct"));
  const YAML::Node b = YAML::Load(*both.yaml);
  EXPECT_EQ(b["clusters"].size(), 2u);
  EXPECT_EQ(b["contexts"].size(), 2u);
  EXPECT_EQ(b["users"].size(), 2u);
  EXPECT_EQ(b["current-context"].as<std::string>(), "agent-boundary-prod");
  EXPECT_EQ(b["clusters"][0]["cluster"]["certificate-authority-data"].as<std::string>(),
            "Q0EtT05F");
}

TEST(Kubeconfig, AMalformedOrMissingSourceIsAWarning) {
  auto r = kube_request(true, true, "sso-direct");
  r.source_text = "clusters: [unclosed\n";
  const auto bad = build_kubeconfig(r);
  EXPECT_FALSE(bad.yaml);
  EXPECT_THAT(bad.warnings, ElementsAre(HasSubstr("cannot read the source kubeconfig "
                                                  "/home/u/.kube/config (line")));
  r.source_text = "- just\n- a list\n";
  EXPECT_THAT(build_kubeconfig(r).warnings, ElementsAre(HasSubstr("not a mapping")));
  r.source_text = "clusters: 5\n";
  EXPECT_THAT(build_kubeconfig(r).warnings,
              ::testing::Contains(HasSubstr("`clusters` is not a list")));
  r.source_text = std::nullopt;
  EXPECT_THAT(build_kubeconfig(r).warnings,
              ElementsAre("no source kubeconfig at /home/u/.kube/config; no kube access"));
  r.source_text = "apiVersion: v1\nclusters: []\n";
  EXPECT_THAT(build_kubeconfig(r).warnings,
              ElementsAre(HasSubstr("maps to 0"), HasSubstr("no complete orbstack")));
  EXPECT_FALSE(build_kubeconfig(kube_request(false, false, "x")).yaml);
  EXPECT_TRUE(build_kubeconfig(kube_request(false, false, "x")).warnings.empty());
}

TEST(Kubeconfig, SourceIsTheFirstKubeconfigEntryOutsideTheStateRoot) {
  TestWorld w;
  ScopedEnv home("HOME", w.dir("home"));
  {
    ScopedEnv kc("KUBECONFIG", std::nullopt);
    EXPECT_EQ(source_kubeconfig_path(w.path("state")), w.path("home/.kube/config"));
  }
  {
    ScopedEnv kc("KUBECONFIG",
                 w.path("state/sessions/s/kubeconfig") + "::" + w.path("a") + ":" + w.path("b"));
    EXPECT_EQ(source_kubeconfig_path(w.path("state")), w.path("a"));
  }
  {
    ScopedEnv cfg("AWS_CONFIG_FILE", std::nullopt);
    EXPECT_EQ(aws_config_path(), w.path("home/.aws/config"));
  }
}

// -- sessions: the kubeconfig and the pinned tools ---------------------------------------------

class CredentialSession : public agent_boundary::testing::MockInstallTest {
 protected:
  void SetUp() override {
    MockInstallTest::SetUp();
    w.file("home/.kube/config", kSourceKubeconfig);
    w.file("home/.aws/config", kAwsConfig);
  }
  ScopedEnv no_kubeconfig_{"KUBECONFIG", std::nullopt};
  ScopedEnv no_aws_config_{"AWS_CONFIG_FILE", std::nullopt};
};

TEST_F(CredentialSession, KubeconfigIsWrittenPrivatelyReadableInsideAndRemovedLater) {
  w.file("profiles/default.yaml",
         "name: default\ndescription: d\ngit_common_dir: false\nkube: {orbstack: true}\n");
  const SessionRequest req = request();
  const SessionOutcome o = write_session(req, install);
  const std::string kc = req.session_dir + "/kubeconfig";
  ASSERT_TRUE(fs::exists(kc));
  EXPECT_EQ(mode_of(kc), 0600u);
  EXPECT_THAT(*read_file(kc), HasSubstr("client-key-data: S0VZ"));
  const ResolvedPolicy p = policy_from_json(*read_file(req.session_dir + "/policy.json"), "p");
  bool granted = false;
  for (const auto& g : p.grants)
    granted = granted || (g.path == kc && g.access == Access::read && g.kind == PathKind::file &&
                          g.bypass_builtin_denies);
  EXPECT_TRUE(granted);

  w.file("profiles/default.yaml", "name: default\ndescription: d\ngit_common_dir: false\n");
  write_session(req, install);
  EXPECT_FALSE(fs::exists(kc));
  const ResolvedPolicy q = policy_from_json(*read_file(req.session_dir + "/policy.json"), "p");
  for (const auto& g : q.grants) EXPECT_NE(g.path, kc);
}

TEST_F(CredentialSession, AMalformedSourceKubeconfigWarnsAndTheSessionIsMade) {
  w.file("home/.kube/config", "clusters: [\n");
  w.file("profiles/default.yaml",
         "name: default\ndescription: d\ngit_common_dir: false\nkube: {orbstack: true}\n");
  const SessionOutcome o = write_session(request(), install);
  EXPECT_THAT(o.warnings,
              ::testing::Contains(HasSubstr("kube: cannot read the source kubeconfig")));
  EXPECT_FALSE(fs::exists(request().session_dir + "/kubeconfig"));
  EXPECT_TRUE(session_complete(request().session_dir));
}

TEST_F(CredentialSession, ToolsArePinnedOnlyWhenAskedAndNeverSandboxWritable) {
  const std::string gh = script(w, "tools/gh", "echo gho_x\n");
  ScopedEnv o(kGhOverride, gh);
  const SessionOutcome none = write_session(request("a"), install);
  EXPECT_TRUE(none.config.gh_cli.empty());
  EXPECT_THAT(*read_file(request("a").session_dir + "/boundary.json"), Not(HasSubstr("tools")));

  w.file("profiles/default.yaml",
         "name: default\ndescription: d\ngit_common_dir: false\ngithub: {push: true}\n");
  const SessionOutcome pinned = write_session(request("b"), install);
  EXPECT_EQ(pinned.config.gh_cli, gh);
  EXPECT_EQ(read_boundary(request("b").session_dir).gh_cli, gh);

  // A gh the sandbox could replace would run with the user's keyring outside: refused.
  const std::string planted = script(w, "work/.venv/bin/gh", "echo gho_x\n");
  ScopedEnv o2(kGhOverride, planted);
  w.file("profiles/default.yaml",
         "name: default\ndescription: d\ngit_common_dir: false\nallow: [$WORKDIR]\n"
         "github: {push: true}\n");
  try {
    write_session(request("c"), install);
    FAIL() << "a sandbox-writable gh was pinned";
  } catch (const SessionError& e) {
    EXPECT_THAT(e.message(), HasSubstr("gh " + planted + " lies in"));
  }
  EXPECT_FALSE(fs::exists(request("c").session_dir));
}

TEST_F(CredentialSession, TheHookSaysWhatIsInjectedOrWhyNotWithoutSecrets) {
  using ::testing::_;
  ON_CALL(backend, wrap(_)).WillByDefault(::testing::Return(std::vector<std::string>{"/bin/true"}));
  const std::string aws = script(w, "tools/aws", "echo aws-cli/2.0.0\n");
  ScopedEnv o(kAwsOverride, aws);
  w.file("profiles/default.yaml",
         "name: default\ndescription: d\ngit_common_dir: false\naws: {profile: sso-direct}\n");
  SessionRequest req = request("session-1234");
  write_session(req, install);
  HookContext ctx;
  ctx.state_root = w.path("state");
  ctx.self_exe = install.self_exe;
  ToolCall call;
  call.session_id = "session-1234";
  call.cwd = w.path("work");
  call.tool_name = "Bash";
  call.tool_class = ToolClass::shell;
  call.command = "aws s3 ls";
  Decision d = decide_tool_call(call, ctx);
  EXPECT_EQ(d.reason,
            "[gate] Bash sandboxed with nono (AWS credentials of profile `sso-direct` exported at "
            "launch)");
  write_file_atomic(
      req.session_dir + "/aws-credentials.env",
      render_env_file("t", failure_record(aws_kind("sso-direct"), "Token for SECRET-X expired",
                                          now_seconds())));
  d = decide_tool_call(call, ctx);
  EXPECT_EQ(d.reason,
            "[gate] Bash sandboxed with nono (no AWS creds: Token for SECRET-X expired — try `aws "
            "sso login`)");
  write_file_atomic(
      req.session_dir + "/aws-credentials.env",
      render_env_file("t", success(now_seconds(), now_seconds() + 3600, "sso-direct")));
  d = decide_tool_call(call, ctx);
  EXPECT_THAT(d.reason, HasSubstr("AWS credentials of profile `sso-direct` injected (valid until"));
  EXPECT_THAT(d.reason, Not(HasSubstr("SECRET-VALUE")));
  EXPECT_THAT(d.updated_command, Not(HasSubstr("SECRET")));
  EXPECT_THAT(d.updated_command, Not(HasSubstr("AKIA")));
}

}  // namespace
}  // namespace agent_boundary::credentials
