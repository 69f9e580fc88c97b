// Unit tests of the strict profile reader (core/src/profile.cpp) and its JSON Schema.
#include "profile.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "agent_boundary/error.hpp"

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

namespace agent_boundary {
namespace {

const std::string kHead = "name: t\ndescription: d\n";

ParseResult parse(const std::string& text) { return parse_profile_text(text, "p.yaml"); }

std::string dump(const ParseResult& r) {
  std::string out;
  for (const auto& d : r.diagnostics) out += d.str() + "\n";
  return out;
}

// Parses `text`, expects it to fail, and returns the only diagnostic.
Diagnostic only_error(const std::string& text) {
  ParseResult r = parse(text);
  EXPECT_FALSE(r.profile.has_value());
  EXPECT_EQ(r.diagnostics.size(), 1u) << dump(r);
  if (r.diagnostics.empty()) return Diagnostic{};
  return r.diagnostics.front();
}

Profile ok(const std::string& text) {
  ParseResult r = parse(text);
  EXPECT_TRUE(r.profile.has_value()) << dump(r);
  EXPECT_THAT(r.diagnostics, IsEmpty());
  return r.profile.value_or(Profile{});
}

MATCHER_P2(At, line, column,
           "is at " + ::testing::PrintToString(line) + ":" + ::testing::PrintToString(column)) {
  *result_listener << "is " << arg.str();
  return arg.pos.line == line && arg.pos.column == column;
}

// A unique scratch dir under /var/tmp, removed at the end of each test.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = "/var/tmp/agent-boundary-profile-test-XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& rel, const std::string& text) {
    const fs::path p = fs::path(dir_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string dir_;
};

// ---------------------------------------------------------------------------------------
// Valid profiles.

TEST(ProfileParse, FullProfileSetsEveryField) {
  const std::string text = R"(# comment
name: full
description: "Every key"
self_edit: true
git_common_dir: false
aws:
  profile: MyOrg/ReadOnly
kube: {eks: true, orbstack: true}
github:
  push: true
allow: [$WORKDIR, $HOME/.cache/uv]
read:
  - ~/.config/gh/config.yml
  - ${XDG_CONFIG_HOME}/git
write: [$TMPDIR/out]
deny:
  - $WORKDIR/.claude/settings.json
resolve_symlinks:
  - $HOME/.gitconfig
  - {path: $HOME/.zshrc, access: allow, bypass_protection: true}
  - path: /etc/x
    access: write
  - {path: /etc/y, access: read}
env:
  NETRC: /dev/null
  COUNT: "1"
  _flag: 'yes'
nono:
  extends: default
backend: nono
)";
  const Profile p = ok(text);
  EXPECT_EQ(p.file, "p.yaml");
  EXPECT_EQ(p.name, "full");
  EXPECT_EQ(p.description, "Every key");
  EXPECT_TRUE(p.self_edit);
  EXPECT_FALSE(p.git_common_dir);
  EXPECT_EQ(p.aws_profile, std::optional<std::string>("MyOrg/ReadOnly"));
  EXPECT_TRUE(p.kube_eks);
  EXPECT_TRUE(p.kube_orbstack);
  EXPECT_EQ(p.github_push, std::optional<bool>(true));

  ASSERT_EQ(p.allow.size(), 2u);
  EXPECT_EQ(p.allow[0].raw, "$WORKDIR");
  EXPECT_EQ(p.allow[0].pos.file, "p.yaml");
  EXPECT_EQ(p.allow[0].pos.line, 11);
  EXPECT_EQ(p.allow[0].pos.column, 9);
  EXPECT_EQ(p.allow[1].raw, "$HOME/.cache/uv");
  EXPECT_EQ(p.allow[1].pos.column, 19);
  ASSERT_EQ(p.read.size(), 2u);
  EXPECT_EQ(p.read[0].raw, "~/.config/gh/config.yml");
  EXPECT_EQ(p.read[0].pos.line, 13);
  EXPECT_EQ(p.read[0].pos.column, 5);
  EXPECT_EQ(p.read[1].raw, "${XDG_CONFIG_HOME}/git");
  ASSERT_EQ(p.write.size(), 1u);
  EXPECT_EQ(p.write[0].raw, "$TMPDIR/out");
  ASSERT_EQ(p.deny.size(), 1u);
  EXPECT_EQ(p.deny[0].raw, "$WORKDIR/.claude/settings.json");
  EXPECT_EQ(p.deny[0].pos.line, 17);

  ASSERT_EQ(p.resolve_symlinks.size(), 4u);
  EXPECT_EQ(p.resolve_symlinks[0].path.raw, "$HOME/.gitconfig");
  EXPECT_EQ(p.resolve_symlinks[0].access, Access::read);
  EXPECT_FALSE(p.resolve_symlinks[0].bypass_protection);
  EXPECT_EQ(p.resolve_symlinks[1].path.raw, "$HOME/.zshrc");
  EXPECT_EQ(p.resolve_symlinks[1].path.pos.line, 20);
  EXPECT_EQ(p.resolve_symlinks[1].path.pos.column, 12);
  EXPECT_EQ(p.resolve_symlinks[1].access, Access::readwrite);
  EXPECT_TRUE(p.resolve_symlinks[1].bypass_protection);
  EXPECT_EQ(p.resolve_symlinks[2].path.raw, "/etc/x");
  EXPECT_EQ(p.resolve_symlinks[2].access, Access::write);
  EXPECT_FALSE(p.resolve_symlinks[2].bypass_protection);
  EXPECT_EQ(p.resolve_symlinks[3].access, Access::read);

  using Env = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(p.env, (Env{{"NETRC", "/dev/null"}, {"COUNT", "1"}, {"_flag", "yes"}}));
  EXPECT_EQ(nlohmann::json::parse(p.nono_json), nlohmann::json({{"extends", "default"}}));
  EXPECT_EQ(p.backend, std::optional<std::string>("nono"));
}

TEST(ProfileParse, Defaults) {
  const Profile p = ok(kHead);
  EXPECT_EQ(p.name, "t");
  EXPECT_EQ(p.description, "d");
  EXPECT_FALSE(p.self_edit);
  EXPECT_TRUE(p.git_common_dir);
  EXPECT_FALSE(p.aws_profile.has_value());
  EXPECT_FALSE(p.kube_eks);
  EXPECT_FALSE(p.kube_orbstack);
  EXPECT_FALSE(p.github_push.has_value());
  EXPECT_THAT(p.allow, IsEmpty());
  EXPECT_THAT(p.read, IsEmpty());
  EXPECT_THAT(p.write, IsEmpty());
  EXPECT_THAT(p.deny, IsEmpty());
  EXPECT_THAT(p.resolve_symlinks, IsEmpty());
  EXPECT_THAT(p.env, IsEmpty());
  EXPECT_EQ(p.nono_json, "{}");
  EXPECT_FALSE(p.backend.has_value());
}

TEST(ProfileParse, EmptyCollectionsAndNullables) {
  const Profile q = ok(kHead +
                       "aws: null\ngithub: ~\nkube: {}\nallow: []\nread: []\nwrite: []\n"
                       "deny: []\nresolve_symlinks: []\nenv: {}\nnono: {}\n");
  EXPECT_FALSE(q.aws_profile.has_value());
  EXPECT_FALSE(q.github_push.has_value());
  EXPECT_FALSE(q.kube_eks);
  EXPECT_EQ(q.nono_json, "{}");
}

TEST(ProfileParse, BackendOptionsAreFreeFormBlocksKeyedByBackend) {
  const Profile p = ok(kHead +
                       "backend_options:\n  devcontainer: {image: 'localhost/x:1', n: 2}\n"
                       "  srt: {}\n");
  EXPECT_EQ(nlohmann::json::parse(p.backend_options.at("devcontainer")),
            nlohmann::json({{"image", "localhost/x:1"}, {"n", 2}}));
  EXPECT_EQ(p.backend_options.at("srt"), "{}");
  // The long spelling of `nono:` lands where `nono:` does, and only once.
  const Profile q = ok(kHead + "backend_options: {nono: {extends: default}}\n");
  EXPECT_EQ(nlohmann::json::parse(q.nono_json), nlohmann::json({{"extends", "default"}}));
  EXPECT_EQ(q.backend_options.count("nono"), 0u);
  EXPECT_THAT(only_error(kHead + "nono: {a: 1}\nbackend_options: {nono: {a: 2}}\n").message,
              HasSubstr("given twice"));
  EXPECT_THAT(only_error(kHead + "backend_options: {Dev: {}}\n").message,
              HasSubstr("invalid backend name"));
  EXPECT_THAT(only_error(kHead + "backend_options: {srt: [1]}\n").message,
              HasSubstr("expected a mapping"));
}

TEST(ProfileParse, GithubForms) {
  EXPECT_FALSE(ok(kHead + "github:\n").github_push.has_value());
  EXPECT_EQ(ok(kHead + "github: {}\n").github_push, std::optional<bool>(false));
  EXPECT_EQ(ok(kHead + "github: {push: false}\n").github_push, std::optional<bool>(false));
  EXPECT_EQ(ok(kHead + "github: {push: true}\n").github_push, std::optional<bool>(true));
  const Diagnostic d = only_error(kHead + "github: true\n");
  EXPECT_THAT(d, At(3, 9));
  EXPECT_THAT(d.message, HasSubstr("expected a mapping or null"));
}

TEST(ProfileParse, StringsMayBeQuotedOrLookNumeric) {
  const Profile p = ok("name: '2024'\ndescription: 42\nbackend: \"x-1\"\n");
  EXPECT_EQ(p.name, "2024");
  EXPECT_EQ(p.description, "42");
  EXPECT_EQ(p.backend, std::optional<std::string>("x-1"));
  EXPECT_EQ(ok("name: \"yes\"\ndescription: ''\n").description, "");
}

// ---------------------------------------------------------------------------------------
// Keys.

TEST(ProfileErrors, UnknownKeySuggestsNearest) {
  const std::string text = kHead + "self_edit: false\n# a comment\n\nread: []\nalow:\n  - /x\n";
  const Diagnostic d = only_error(text);
  EXPECT_THAT(d, At(7, 1));
  EXPECT_EQ(d.message, "unknown key `alow`");
  EXPECT_EQ(d.fix, "did you mean `allow`?");
  EXPECT_EQ(d.str(), "p.yaml:7:1: unknown key `alow`; did you mean `allow`?");
}

TEST(ProfileErrors, UnknownKeyFarFromAnyListsValidKeys) {
  const Diagnostic d = only_error(kHead + "zzzzzzzz: 1\n");
  EXPECT_THAT(d, At(3, 1));
  EXPECT_THAT(d.fix, HasSubstr("name, description, self_edit, git_common_dir"));
  EXPECT_THAT(d.fix, HasSubstr("backend"));
}

TEST(ProfileErrors, UnknownNestedKeys) {
  Diagnostic d = only_error(kHead + "kube:\n  ekss: true\n");
  EXPECT_THAT(d, At(4, 3));
  EXPECT_THAT(d.message, HasSubstr("unknown key `ekss`"));
  EXPECT_EQ(d.fix, "did you mean `eks`?");
  ParseResult r = parse(kHead + "aws: {profil: x}\n");
  ASSERT_EQ(r.diagnostics.size(), 2u) << dump(r);
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("missing required key `profile`"));
  EXPECT_EQ(r.diagnostics[1].fix, "did you mean `profile`?");
  d = only_error(kHead + "github: {pull: true}\n");
  EXPECT_THAT(d.fix, HasSubstr("`push`"));
  d = only_error(kHead + "resolve_symlinks:\n  - {path: /x, acess: read}\n");
  EXPECT_THAT(d, At(4, 16));
  EXPECT_THAT(d.fix, HasSubstr("`access`"));
}

TEST(ProfileErrors, DuplicateKeyAtSecondOccurrence) {
  const Diagnostic d = only_error(kHead + "allow: [/a]\nread: []\nallow: [/b]\n");
  EXPECT_THAT(d, At(5, 1));
  EXPECT_EQ(d.message, "duplicate key `allow`");
  EXPECT_THAT(d.fix, HasSubstr("line 3"));
  EXPECT_THAT(only_error(kHead + "env:\n  A: x\n  A: y\n"), At(5, 3));
  EXPECT_THAT(only_error(kHead + "nono:\n  a: 1\n  a: 2\n"), At(5, 3));
}

TEST(ProfileErrors, MissingRequiredKeys) {
  ParseResult r = parse("self_edit: false\n");
  ASSERT_EQ(r.diagnostics.size(), 2u) << dump(r);
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("missing required key `name`"));
  EXPECT_THAT(r.diagnostics[1].message, HasSubstr("missing required key `description`"));
  EXPECT_THAT(r.diagnostics[0], At(1, 1));
}

TEST(ProfileErrors, MultipleErrorsReportedTogetherInOrder) {
  const std::string text =
      "name: t\n"              // 1
      "descripton: d\n"        // 2  unknown (and description missing)
      "self_edit: yes\n"       // 3
      "allow: [relative/x]\n"  // 4
      "env: {N: 1}\n"          // 5
      "kube: {eks: true}\n";   // 6
  ParseResult r = parse(text);
  EXPECT_FALSE(r.profile.has_value());
  ASSERT_EQ(r.diagnostics.size(), 6u) << dump(r);
  EXPECT_THAT(r.diagnostics[0], At(1, 1));
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("missing required key `description`"));
  EXPECT_THAT(r.diagnostics[1], At(2, 1));
  EXPECT_EQ(r.diagnostics[1].fix, "did you mean `description`?");
  EXPECT_THAT(r.diagnostics[2], At(3, 12));
  EXPECT_THAT(r.diagnostics[3], At(4, 9));
  EXPECT_THAT(r.diagnostics[3].message, HasSubstr("not an absolute path"));
  EXPECT_THAT(r.diagnostics[4], At(5, 10));
  EXPECT_THAT(r.diagnostics[5], At(6, 8));
  EXPECT_EQ(r.diagnostics[5].message, "kube.eks requires aws.profile");
}

// ---------------------------------------------------------------------------------------
// YAML features that are refused.

TEST(ProfileErrors, AnchorsAndAliasesRefused) {
  ParseResult r = parse(kHead + "allow: &a [/x]\nread: *a\n");
  EXPECT_FALSE(r.profile.has_value());
  ASSERT_EQ(r.diagnostics.size(), 2u) << dump(r);
  EXPECT_THAT(r.diagnostics[0], At(3, 8));
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("anchors are not supported (`&a`)"));
  EXPECT_THAT(r.diagnostics[1], At(4, 7));
  EXPECT_THAT(r.diagnostics[1].message, HasSubstr("aliases are not supported (`*a`)"));
  EXPECT_THAT(r.diagnostics[1].fix, HasSubstr("write the value out in full"));
}

TEST(ProfileErrors, MergeKeyRefused) {
  ParseResult r = parse(kHead + "kube: &k {eks: false}\nnono:\n  <<: *k\n");
  ASSERT_EQ(r.diagnostics.size(), 3u) << dump(r);
  EXPECT_THAT(r.diagnostics[1], At(5, 3));
  EXPECT_THAT(r.diagnostics[1].message, HasSubstr("merge keys"));
}

TEST(ProfileErrors, BillionLaughsIsRefusedQuickly) {
  std::string text = kHead + "nono:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 40; ++i)
    text += "  a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" +
            std::to_string(i - 1) + ", *a" + std::to_string(i - 1) + ", *a" +
            std::to_string(i - 1) + "]\n";
  ParseResult r = parse(text);
  EXPECT_FALSE(r.profile.has_value());
  EXPECT_EQ(r.diagnostics.size(), 40u + 39u * 3u);
}

TEST(ProfileErrors, SecondDocument) {
  ParseResult r = parse(kHead + "---\nname: u\n");
  ASSERT_EQ(r.diagnostics.size(), 1u) << dump(r);
  EXPECT_THAT(r.diagnostics[0], At(3, 1));
  EXPECT_EQ(r.diagnostics[0].message, "more than one YAML document");
  // Errors in the first document are still reported with it.
  r = parse("name: t\n---\n");
  ASSERT_EQ(r.diagnostics.size(), 2u) << dump(r);
  EXPECT_THAT(r.diagnostics[1], At(2, 1));
}

TEST(ProfileErrors, EmptyProfile) {
  for (const std::string text : {"", "# only a comment\n", "---\n", "~\n", "\n\n"}) {
    const Diagnostic d = only_error(text);
    EXPECT_EQ(d.message, "the profile is empty") << text;
    EXPECT_EQ(d.pos.line, 0);
    EXPECT_EQ(d.str(), "p.yaml: the profile is empty; " + d.fix);
  }
}

TEST(ProfileErrors, TopLevelMustBeAMapping) {
  Diagnostic d = only_error("- a\n- b\n");
  EXPECT_THAT(d, At(1, 1));
  EXPECT_THAT(d.message, HasSubstr("must be a mapping, got a list"));
  d = only_error("just text\n");
  EXPECT_THAT(d.message, HasSubstr("got a string"));
}

TEST(ProfileErrors, SyntaxErrorAtParserMark) {
  Diagnostic d = only_error(kHead + "allow: [/x\n");
  EXPECT_THAT(d.message, HasSubstr("not valid YAML"));
  EXPECT_THAT(d.message, HasSubstr("end of sequence flow not found"));
  EXPECT_EQ(d.pos.line, 4);
  d = only_error("name: t\nkube:\n\teks: true\n");
  EXPECT_THAT(d, At(3, 5));
  EXPECT_THAT(d.message, HasSubstr("illegal map value"));
  EXPECT_THAT(d.fix, HasSubstr("tabs"));
}

TEST(ProfileErrors, ExplicitTagsRefused) {
  Diagnostic d = only_error(kHead + "backend: !!str nono\n");
  EXPECT_THAT(d, At(3, 10));
  EXPECT_THAT(d.message, HasSubstr("tags are not supported (`!!str`)"));
  d = only_error(kHead + "nono: {a: !custom x}\n");
  EXPECT_THAT(d.message, HasSubstr("`!custom`"));
}

// ---------------------------------------------------------------------------------------
// Types.

TEST(ProfileErrors, BooleansMustBePlainTrueOrFalse) {
  for (const std::string v : {"yes", "no", "on", "off", "True", "FALSE", "1", "y"}) {
    const Diagnostic d = only_error(kHead + "self_edit: " + v + "\n");
    EXPECT_THAT(d, At(3, 12)) << v;
    EXPECT_EQ(d.message, "expected true or false, got `" + v + "`");
    EXPECT_EQ(d.fix, "write true or false");
  }
  Diagnostic d = only_error(kHead + "git_common_dir: 'true'\n");
  EXPECT_THAT(d, At(3, 17));
  EXPECT_THAT(d.message, HasSubstr("got the string \"true\""));
  EXPECT_THAT(d.fix, HasSubstr("remove the quotes"));
  d = only_error(kHead + "self_edit:\n");
  EXPECT_THAT(d, At(3, 1));
  EXPECT_THAT(d.message, HasSubstr("got null"));
  d = only_error(kHead + "kube: {orbstack: [true]}\n");
  EXPECT_THAT(d.message, HasSubstr("got a list"));
}

TEST(ProfileErrors, StringFieldsRejectPlainBooleanWordsAndNull) {
  Diagnostic d = only_error("name: yes\ndescription: d\n");
  EXPECT_THAT(d, At(1, 7));
  EXPECT_THAT(d.message, HasSubstr("YAML boolean `yes`"));
  EXPECT_EQ(d.fix, "quote it: \"yes\"");
  d = only_error("name: t\ndescription: Off\n");
  EXPECT_THAT(d.fix, HasSubstr("\"Off\""));
  d = only_error("name: t\ndescription:\n");
  EXPECT_THAT(d, At(2, 1));
  EXPECT_EQ(d.message, "expected a string, got null");
  d = only_error("name: ~\ndescription: d\n");
  EXPECT_THAT(d, At(1, 7));
  d = only_error("name: ''\ndescription: d\n");
  EXPECT_THAT(d.message, HasSubstr("`name` is empty"));
  d = only_error("name: [a]\ndescription: d\n");
  EXPECT_THAT(d.message, HasSubstr("got a list"));
  d = only_error(kHead + "backend: true\n");
  EXPECT_THAT(d.fix, HasSubstr("quote it"));
}

TEST(ProfileErrors, EnvValuesAndNames) {
  Diagnostic d = only_error(kHead + "env:\n  N: 1\n");
  EXPECT_THAT(d, At(4, 6));
  EXPECT_THAT(d.message, HasSubstr("the number `1`"));
  EXPECT_THAT(d.fix, HasSubstr("quote it"));
  for (const std::string v : {"1.5", "-3", "0x1F", "1e3", ".inf"})
    EXPECT_THAT(only_error(kHead + "env: {N: " + v + "}\n").fix, HasSubstr("quote it")) << v;
  d = only_error(kHead + "env: {N: on}\n");
  EXPECT_THAT(d.message, HasSubstr("YAML boolean"));
  d = only_error(kHead + "env:\n  N:\n");
  EXPECT_THAT(d, At(4, 3));
  EXPECT_THAT(d.message, HasSubstr("got null"));
  d = only_error(kHead + "env:\n  1BAD: x\n");
  EXPECT_THAT(d, At(4, 3));
  EXPECT_THAT(d.message, HasSubstr("invalid environment variable name `1BAD`"));
  d = only_error(kHead + "env: [A]\n");
  EXPECT_THAT(d.message, HasSubstr("expected a mapping"));
  d = only_error(kHead + "env:\n");
  EXPECT_THAT(d.message, HasSubstr("got null"));
  EXPECT_EQ(ok(kHead + "env: {V: 'v 1.5', W: \"\", X: 1.2.3}\n").env.size(), 3u);
}

TEST(ProfileErrors, LegacyAwsProfile) {
  const Diagnostic d = only_error(kHead + "aws_profile: x\n");
  EXPECT_THAT(d, At(3, 1));
  EXPECT_THAT(d.message, HasSubstr("aws_profile"));
  EXPECT_EQ(d.fix, "use `aws: {profile: NAME}`");
}

TEST(ProfileErrors, AwsForms) {
  EXPECT_EQ(ok(kHead + "aws: {profile: p}\n").aws_profile, std::optional<std::string>("p"));
  Diagnostic d = only_error(kHead + "aws: {}\n");
  EXPECT_THAT(d, At(3, 6));
  EXPECT_THAT(d.message, HasSubstr("missing required key `profile`"));
  d = only_error(kHead + "aws:\n  profile: ''\n");
  EXPECT_THAT(d, At(4, 12));
  EXPECT_THAT(d.message, HasSubstr("empty"));
  d = only_error(kHead + "aws: myprofile\n");
  EXPECT_THAT(d.message, HasSubstr("expected a mapping or null, got a string"));
}

TEST(ProfileErrors, KubeEksRequiresAws) {
  Diagnostic d = only_error(kHead + "kube:\n  orbstack: true\n  eks: true\n");
  EXPECT_THAT(d, At(5, 3));
  EXPECT_EQ(d.message, "kube.eks requires aws.profile");
  EXPECT_THAT(only_error(kHead + "aws: null\nkube: {eks: true}\n").message,
              HasSubstr("kube.eks requires aws.profile"));
  const Profile p = ok(kHead + "kube: {eks: true}\naws: {profile: x}\n");
  EXPECT_TRUE(p.kube_eks);
  EXPECT_FALSE(ok(kHead + "kube: {eks: false}\n").kube_eks);
  EXPECT_THAT(only_error(kHead + "kube:\n").message, HasSubstr("expected a mapping, got null"));
}

TEST(ProfileErrors, BackendName) {
  const Diagnostic d = only_error(kHead + "backend: Nono\n");
  EXPECT_THAT(d, At(3, 10));
  EXPECT_THAT(d.message, HasSubstr("invalid backend name `Nono`"));
  EXPECT_FALSE(parse(kHead + "backend: " + std::string(33, 'a') + "\n").profile.has_value());
  EXPECT_TRUE(parse(kHead + "backend: " + std::string(32, 'a') + "\n").profile.has_value());
}

// ---------------------------------------------------------------------------------------
// Paths.

TEST(ProfilePaths, NullAndWrongShapes) {
  Diagnostic d = only_error(kHead + "allow:\n");
  EXPECT_THAT(d, At(3, 1));
  EXPECT_EQ(d.message, "`allow`: expected a list of paths, got null");
  d = only_error(kHead + "deny: /x\n");
  EXPECT_THAT(d.message, HasSubstr("expected a list of paths, got a string"));
  d = only_error(kHead + "read:\n  - /a\n  -\n  - /b\n");
  EXPECT_THAT(d, At(5, 3));
  EXPECT_EQ(d.message, "expected a path, got null");
  d = only_error(kHead + "read:\n  - /a\n  -   # nothing here\n\n  - /b\n");
  EXPECT_THAT(d, At(5, 3));
  d = only_error(kHead + "write: ['']\n");
  EXPECT_THAT(d, At(3, 9));
  EXPECT_EQ(d.message, "empty path");
  d = only_error(kHead + "write: [[/x]]\n");
  EXPECT_THAT(d.message, HasSubstr("got a list"));
  d = only_error(kHead + "allow: [no]\n");
  EXPECT_THAT(d.fix, HasSubstr("quote it"));
}

TEST(ProfilePaths, ExpansionErrorsBecomeDiagnostics) {
  Diagnostic d = only_error(kHead + "allow:\n  - $WORKDIR\n  - $NOPE/x\n");
  EXPECT_THAT(d, At(5, 5));
  EXPECT_THAT(d.message, HasSubstr("unknown variable `$NOPE`"));
  EXPECT_THAT(d.fix, HasSubstr("$HOME"));
  d = only_error(kHead + "read: [relative/dir]\n");
  EXPECT_THAT(d, At(3, 8));
  EXPECT_THAT(d.message, HasSubstr("is not an absolute path"));
  d = only_error(kHead + "deny: [~bob/x]\n");
  EXPECT_THAT(d.message, HasSubstr("~user"));
  d = only_error(kHead + "resolve_symlinks: [/ok, 'x/y']\n");
  EXPECT_THAT(d, At(3, 25));
  // Raw text is kept, unexpanded.
  EXPECT_EQ(ok(kHead + "allow: ['~/a/../b']\n").allow[0].raw, "~/a/../b");
}

TEST(ProfilePaths, ResolveSymlinksForms) {
  const Profile p = ok(kHead +
                       "resolve_symlinks:\n"
                       "  - /a\n"
                       "  - {path: /b}\n"
                       "  - {path: /c, access: allow}\n"
                       "  - {path: /d, access: \"write\", bypass_protection: false}\n"
                       "  - {path: /e, bypass_protection: true}\n");
  ASSERT_EQ(p.resolve_symlinks.size(), 5u);
  EXPECT_EQ(p.resolve_symlinks[0].access, Access::read);
  EXPECT_EQ(p.resolve_symlinks[1].access, Access::read);
  EXPECT_EQ(p.resolve_symlinks[2].access, Access::readwrite);
  EXPECT_EQ(p.resolve_symlinks[3].access, Access::write);
  EXPECT_TRUE(p.resolve_symlinks[4].bypass_protection);
  EXPECT_EQ(p.resolve_symlinks[4].path.raw, "/e");
  EXPECT_EQ(p.resolve_symlinks[4].path.pos.line, 8);

  Diagnostic d = only_error(kHead + "resolve_symlinks:\n  - access: read\n");
  EXPECT_THAT(d, At(4, 5));
  EXPECT_THAT(d.message, HasSubstr("missing required key `path`"));
  d = only_error(kHead + "resolve_symlinks:\n  - {path: /x, access: readwrite}\n");
  EXPECT_THAT(d, At(4, 24));
  EXPECT_THAT(d.fix, HasSubstr("allow, read or write"));
  d = only_error(kHead + "resolve_symlinks:\n  - {path: /x, bypass_protection: 'no'}\n");
  EXPECT_THAT(d.message, HasSubstr("expected true or false"));
  d = only_error(kHead + "resolve_symlinks: {path: /x}\n");
  EXPECT_THAT(d.message, HasSubstr("expected a list, got a mapping"));
}

// ---------------------------------------------------------------------------------------
// nono block.

TEST(ProfileNono, StrictScalarTyping) {
  const Profile p = ok(kHead + R"(nono:
  extends: default
  t: true
  f: false
  qt: 'true'
  T: True
  n1: null
  n2: ~
  n3:
  i: 42
  neg: -7
  pos: +3
  zero: 0
  big: 18446744073709551615
  d: 1.5
  e: 2.5e3
  hex: 0x1F
  oct: 0o17
  qi: "42"
  yes_word: yes
  list: [1, a, {k: v}, [], ~]
  nested: {a: {b: {c: [true]}}}
  "quoted key": 1
  1: int key
)");
  const auto j = nlohmann::json::parse(p.nono_json);
  EXPECT_EQ(j["extends"], "default");
  EXPECT_EQ(j["t"], true);
  EXPECT_EQ(j["f"], false);
  EXPECT_EQ(j["qt"], "true");
  EXPECT_EQ(j["T"], "True");
  EXPECT_TRUE(j["n1"].is_null());
  EXPECT_TRUE(j["n2"].is_null());
  EXPECT_TRUE(j["n3"].is_null());
  EXPECT_TRUE(j["i"].is_number_integer());
  EXPECT_EQ(j["i"], 42);
  EXPECT_EQ(j["neg"], -7);
  EXPECT_EQ(j["pos"], 3);
  EXPECT_EQ(j["zero"], 0);
  EXPECT_EQ(j["big"].get<std::uint64_t>(), 18446744073709551615ull);
  EXPECT_TRUE(j["d"].is_number_float());
  EXPECT_DOUBLE_EQ(j["d"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["e"].get<double>(), 2500.0);
  EXPECT_EQ(j["hex"], "0x1F");
  EXPECT_EQ(j["oct"], "0o17");
  EXPECT_EQ(j["qi"], "42");
  EXPECT_EQ(j["yes_word"], "yes");
  EXPECT_EQ(j["list"], nlohmann::json::parse(R"([1, "a", {"k": "v"}, [], null])"));
  EXPECT_EQ(j["nested"]["a"]["b"]["c"][0], true);
  EXPECT_EQ(j["quoted key"], 1);
  EXPECT_EQ(j["1"], "int key");
  // Compact text with sorted keys.
  EXPECT_EQ(ok(kHead + "nono: {z: 1, a: [x]}\n").nono_json, R"({"a":["x"],"z":1})");
}

TEST(ProfileNono, Errors) {
  Diagnostic d = only_error(kHead + "nono:\n  mode: 0755\n");
  EXPECT_THAT(d, At(4, 9));
  EXPECT_THAT(d.message, HasSubstr("leading zero"));
  d = only_error(kHead + "nono: {n: 99999999999999999999999}\n");
  EXPECT_THAT(d.message, HasSubstr("out of range"));
  d = only_error(kHead + "nono: {n: 1e999}\n");
  EXPECT_THAT(d.message, HasSubstr("out of range"));
  d = only_error(kHead + "nono: [a]\n");
  EXPECT_THAT(d.message, HasSubstr("expected a mapping, got a list"));
  d = only_error(kHead + "nono:\n");
  EXPECT_THAT(d.message, HasSubstr("got null"));
  d = only_error(kHead + "nono: {[a]: 1}\n");
  EXPECT_THAT(d.message, HasSubstr("mapping keys must be strings"));

  std::string deep = "x";
  for (int i = 0; i < 70; ++i) deep = "[" + deep + "]";
  d = only_error(kHead + "nono: {a: " + deep + "}\n");
  EXPECT_THAT(d.message, HasSubstr("nested more than 64 levels"));
  std::string fine = "x";
  for (int i = 0; i < 60; ++i) fine = "[" + fine + "]";
  EXPECT_TRUE(parse(kHead + "nono: {a: " + fine + "}\n").profile.has_value());
}

// ---------------------------------------------------------------------------------------
// Robustness.

TEST(ProfileRobustness, NeverThrowsOnOddInput) {
  std::vector<std::string> inputs = {
      std::string("\0\0\0", 3),
      "\xef\xbb\xbfname: t\ndescription: d\n",
      "\xff\xfe\x00n",
      "name: t\r\ndescription: d\r\n",
      "{",
      "}",
      "[",
      "]: x",
      "? ",
      ": :",
      "name: 'unterminated",
      "name: \"\\xZZ\"",
      "!<tag:x> a",
      "%YAML 1.2\n---\nname: t\n",
      "%BOGUS\n--- a",
      "&a a",
      "*a",
      "name: *undefined",
      "- - - - - -",
      "a: b: c",
      "\t",
      "? [a, b]\n: c\n",
      "{a: 1, a: 1}",
      std::string(3000, '['),
      std::string(3000, '{'),
      std::string(3000, '-') + " x",
  };
  std::string nested_maps;
  for (int i = 0; i < 2500; ++i)
    nested_maps += std::string(static_cast<std::size_t>(i), ' ') + "a:\n";
  inputs.push_back(nested_maps);
  std::mt19937 rng(12345);
  const std::string alphabet = "ab:-[]{}&*!|>'\"#,?~ \n\t%@`0\\";
  for (int n = 0; n < 3000; ++n) {
    std::string s;
    const int len = static_cast<int>(rng() % 40);
    for (int i = 0; i < len; ++i) s += alphabet[rng() % alphabet.size()];
    inputs.push_back(s);
  }
  for (const auto& in : inputs) {
    ParseResult r;
    ASSERT_NO_THROW(r = parse(in)) << in;
    EXPECT_NE(r.profile.has_value(), !r.diagnostics.empty());
  }
}

TEST(ProfileRobustness, RejectsTextOverOneMiB) {
  const std::string big = kHead + "# " + std::string(1024 * 1024, 'x') + "\n";
  const Diagnostic d = only_error(big);
  EXPECT_THAT(d.message, HasSubstr("larger than 1 MiB"));
}

// ---------------------------------------------------------------------------------------
// Positions and rendering.

TEST(ProfileStrings, SourcePosAndDiagnostic) {
  EXPECT_EQ((SourcePos{"f.yaml", 3, 7}).str(), "f.yaml:3:7");
  EXPECT_EQ((SourcePos{"f.yaml", 0, 0}).str(), "f.yaml");
  EXPECT_EQ((Diagnostic{SourcePos{"f.yaml", 1, 2}, "bad", ""}).str(), "f.yaml:1:2: bad");
  EXPECT_EQ((Diagnostic{SourcePos{"f.yaml", 1, 2}, "bad", "fix it"}).str(),
            "f.yaml:1:2: bad; fix it");
  EXPECT_EQ((Diagnostic{SourcePos{"f.yaml", 0, 0}, "bad", "fix it"}).str(), "f.yaml: bad; fix it");
}

// ---------------------------------------------------------------------------------------
// Files and discovery.

using ProfileFiles = TempDirTest;

TEST_F(ProfileFiles, ParseFileSetsAbsolutePath) {
  const std::string path = write("p.yaml", kHead + "allow: [/x]\n");
  ParseResult r = parse_profile_file(path);
  ASSERT_TRUE(r.profile.has_value()) << dump(r);
  EXPECT_EQ(r.profile->file, path);
  EXPECT_EQ(r.profile->allow[0].pos.file, path);

  const fs::path old = fs::current_path();
  fs::current_path(dir_);
  r = parse_profile_file("./sub/../p.yaml");
  fs::current_path(old);
  ASSERT_TRUE(r.profile.has_value()) << dump(r);
  EXPECT_EQ(r.profile->file, path);
}

TEST_F(ProfileFiles, ParseFileErrors) {
  ParseResult r = parse_profile_file(dir_ + "/missing.yaml");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_EQ(r.diagnostics[0].pos.file, dir_ + "/missing.yaml");
  EXPECT_EQ(r.diagnostics[0].pos.line, 0);
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("not found"));
  EXPECT_THAT(r.diagnostics[0].fix, Not(IsEmpty()));

  r = parse_profile_file(dir_);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("not a regular file"));

  const std::string big = write("big.yaml", kHead + std::string(1024 * 1024 + 10, '#') + "\n");
  r = parse_profile_file(big);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  EXPECT_THAT(r.diagnostics[0].message, HasSubstr("larger than 1 MiB"));

  const std::string bad = write("bad.yaml", "name: t\nalow: []\n");
  r = parse_profile_file(bad);
  ASSERT_EQ(r.diagnostics.size(), 2u);
  EXPECT_EQ(r.diagnostics[1].str(), bad + ":2:1: unknown key `alow`; did you mean `allow`?");
}

TEST_F(ProfileFiles, LoadThrowsListingEveryDiagnostic) {
  const std::string bad = write("bad.yaml", "name: t\nalow: []\nself_edit: yes\n");
  try {
    load_profile_file(bad);
    FAIL() << "no exception";
  } catch (const ProfileError& e) {
    EXPECT_EQ(e.where(), bad);
    EXPECT_EQ(e.message(), bad + ":1:1: missing required key `description`; " +
                               "add `description: ...` saying what this boundary is for\n" + bad +
                               ":2:1: unknown key `alow`; did you mean `allow`?\n" + bad +
                               ":3:12: expected true or false, got `yes`; write true or false");
  }
  EXPECT_THROW(load_profile_file(dir_ + "/none.yaml"), ProfileError);
  const std::string good = write("good.yaml", kHead);
  EXPECT_EQ(load_profile_file(good).name, "t");
}

TEST_F(ProfileFiles, FindProfile) {
  const std::string a = write("a.yaml", kHead);
  const std::string b = write("b.yml", kHead);
  write("c.yaml", kHead);
  write("c.yml", kHead);
  EXPECT_EQ(find_profile(dir_, "a"), a);
  EXPECT_EQ(find_profile(dir_, "b"), b);
  EXPECT_EQ(find_profile(dir_, "c"), dir_ + "/c.yaml");
  try {
    find_profile(dir_, "zzz");
    FAIL() << "no exception";
  } catch (const ProfileError& e) {
    EXPECT_EQ(e.message(), "unknown profile 'zzz'; have: a, b, c");
    EXPECT_EQ(e.where(), dir_);
    EXPECT_THAT(e.fix(), HasSubstr("AGENT_BOUNDARY_PROFILES_DIR"));
    EXPECT_THAT(e.fix(), HasSubstr(dir_));
  }
  try {
    find_profile(dir_ + "/empty", "x");
    FAIL() << "no exception";
  } catch (const ProfileError& e) {
    EXPECT_EQ(e.message(), "unknown profile 'x'; have: (none)");
  }
  for (const std::string bad : {"../x", "..", "a/b", "", ".hidden", "-x", "a..b", "a b", "/abs"}) {
    try {
      find_profile(dir_, bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const ProfileError& e) {
      EXPECT_THAT(e.message(), HasSubstr("invalid profile name")) << bad;
    }
  }
  EXPECT_EQ(find_profile(dir_ + "/", "a"), dir_ + "/a.yaml");
}

TEST_F(ProfileFiles, ListProfiles) {
  EXPECT_THAT(list_profiles(dir_ + "/absent"), IsEmpty());
  EXPECT_THAT(list_profiles(dir_), IsEmpty());
  write("zeta.yaml", kHead);
  write("alpha.yml", kHead);
  write("alpha.yaml", kHead);
  write("mid.dot.yaml", kHead);
  write("notes.txt", "x");
  write("README", "x");
  write("dir.yaml/inner.yaml", kHead);  // a directory named like a profile
  EXPECT_THAT(list_profiles(dir_), ElementsAre("alpha", "mid.dot", "zeta"));
}

// ---------------------------------------------------------------------------------------
// JSON Schema.

const std::vector<std::string> kExpectedKeys = {"name",
                                                "description",
                                                "self_edit",
                                                "git_common_dir",
                                                "aws",
                                                "kube",
                                                "github",
                                                "allow",
                                                "read",
                                                "write",
                                                "deny",
                                                "resolve_symlinks",
                                                "env",
                                                "nono",
                                                "backend_options",
                                                "backend",
                                                "accept_unprotected_denies",
                                                "allow_git_hook_escape",
                                                "allow_agent_settings_escape",
                                                "allow_host_sockets",
                                                "keep_secret_env"};

// A minimal valid value for each top-level key.
std::string sample_value(const std::string& key) {
  if (key == "name" || key == "description") return "x";
  if (key == "self_edit" || key == "git_common_dir" || key == "accept_unprotected_denies" ||
      key == "allow_git_hook_escape" || key == "allow_agent_settings_escape")
    return "true";
  if (key == "aws") return "{profile: p}";
  if (key == "kube") return "{eks: false, orbstack: true}";
  if (key == "github") return "{push: true}";
  if (key == "env") return "{A: b}";
  if (key == "keep_secret_env") return "[MY_TOKEN]";
  if (key == "allow_host_sockets") return "[SSH_AUTH_SOCK, /x]";
  if (key == "nono") return "{extends: default}";
  if (key == "backend") return "nono";
  if (key == "backend_options") return "{devcontainer: {image: x}}";
  return "[/x]";  // path lists and resolve_symlinks
}

TEST(ProfileSchema, IsValidJsonDescribingTheFormat) {
  const std::string text = profile_json_schema();
  nlohmann::json s;
  ASSERT_NO_THROW(s = nlohmann::json::parse(text));
  EXPECT_EQ(text.substr(0, 5), "{\n  \"");  // pretty, 2-space indent
  EXPECT_EQ(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(s["type"], "object");
  EXPECT_EQ(s["additionalProperties"], false);
  EXPECT_EQ(s["required"], nlohmann::json({"name", "description"}));
  std::set<std::string> keys;
  for (const auto& [k, v] : s["properties"].items()) keys.insert(k);
  EXPECT_EQ(keys, std::set<std::string>(kExpectedKeys.begin(), kExpectedKeys.end()));
}

TEST(ProfileSchema, EveryKeyInTheSchemaIsAcceptedByTheReader) {
  const auto s = nlohmann::json::parse(profile_json_schema());
  for (const auto& [k, v] : s["properties"].items()) {
    std::string text = "name: x\ndescription: x\n";
    if (k != "name" && k != "description") text += k + ": " + sample_value(k) + "\n";
    ParseResult r = parse(text);
    EXPECT_TRUE(r.profile.has_value()) << k << "\n" << dump(r);
  }
  // And a key the schema does not list is refused.
  EXPECT_FALSE(parse("name: x\ndescription: x\nextra: 1\n").profile.has_value());
}

TEST(ProfileSchema, ClosedObjectsAndDescriptionsEverywhere) {
  const auto s = nlohmann::json::parse(profile_json_schema());
  int objects = 0;
  std::function<void(const nlohmann::json&, const std::string&)> walk =
      [&](const nlohmann::json& node, const std::string& where) {
        if (!node.is_object()) return;
        const auto type = node.value("type", nlohmann::json());
        const bool is_object_schema =
            type == "object" ||
            (type.is_array() && std::find(type.begin(), type.end(), "object") != type.end());
        if (is_object_schema && where != "/properties/nono") {
          ++objects;
          EXPECT_EQ(node.value("additionalProperties", nlohmann::json(true)), false) << where;
        }
        if (node.contains("properties")) {
          for (const auto& [k, v] : node["properties"].items()) {
            EXPECT_TRUE(v.contains("description")) << where << "/properties/" << k;
            walk(v, where + "/properties/" + k);
          }
        }
        if (node.contains("items")) walk(node["items"], where + "/items");
        if (node.contains("anyOf")) {
          for (std::size_t i = 0; i < node["anyOf"].size(); ++i)
            walk(node["anyOf"][i], where + "/anyOf/" + std::to_string(i));
        }
        if (node.contains("patternProperties")) {
          for (const auto& [k, v] : node["patternProperties"].items()) {
            EXPECT_TRUE(v.contains("description")) << where << " " << k;
          }
        }
      };
  walk(s, "");
  EXPECT_GE(objects, 6);
  EXPECT_EQ(
      s["properties"]["resolve_symlinks"]["items"]["anyOf"][1]["properties"]["access"]["enum"],
      nlohmann::json({"allow", "read", "write"}));
  EXPECT_EQ(s["properties"]["backend"]["pattern"], "^[a-z][a-z0-9_-]{0,31}$");
}

}  // namespace
}  // namespace agent_boundary

TEST(Profile, SideDoorKeys) {
  const auto r = agent_boundary::parse_profile_text(
      "name: n\ndescription: d\nkeep_secret_env: [DEPLOY_TOKEN]\n"
      "allow_host_sockets: [SSH_AUTH_SOCK, ~/.gnupg/S.gpg-agent]\n",
      "p.yaml");
  ASSERT_TRUE(r.profile) << (r.diagnostics.empty() ? "" : r.diagnostics[0].str());
  ASSERT_EQ(r.profile->keep_secret_env.size(), 1u);
  EXPECT_EQ(r.profile->keep_secret_env[0].raw, "DEPLOY_TOKEN");
  ASSERT_EQ(r.profile->allow_host_sockets.size(), 2u);
  EXPECT_EQ(r.profile->allow_host_sockets[1].raw, "~/.gnupg/S.gpg-agent");
  const auto bad = agent_boundary::parse_profile_text(
      "name: n\ndescription: d\nkeep_secret_env: [not a name]\nenv: {LD_PRELOAD: /x.so}\n",
      "p.yaml");
  EXPECT_FALSE(bad.profile);
  EXPECT_EQ(bad.diagnostics.size(), 2u);
}
