// `agent-boundary compare`: the verdict logic (ok / declared / FAIL), the report, and the
// runner's probe scenarios against a MockBackend (real world, real session, mock enforcement).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "agent_boundary/error.hpp"
#include "compare/corpus.hpp"
#include "compare/report.hpp"
#include "compare/runner.hpp"
#include "compare/verdict.hpp"
#include "compare/world.hpp"
#include "mock_install.hpp"

namespace agent_boundary::compare {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::Not;
using ::testing::Return;

DenyState deny(const std::string& path, Enforcement e, const std::string& reason = {}) {
  return DenyState{path, "profile", e, reason};
}

std::size_t index_of(const std::string& id) {
  const auto& c = corpus();
  for (std::size_t i = 0; i < c.size(); ++i)
    if (c[i].id == id) return i;
  ADD_FAILURE() << "no scenario " << id;
  return 0;
}

// -- judge ---------------------------------------------------------------------------------

TEST(CompareJudge, SameAsIntentIsOk) {
  EXPECT_EQ(judge(Verdict::allowed, Verdict::allowed, "/w/a", {}).outcome, Outcome::ok);
  EXPECT_EQ(judge(Verdict::denied, Verdict::denied, "/w/a", {}).outcome, Outcome::ok);
  EXPECT_EQ(judge(Verdict::denied, Verdict::denied, "/w/a", {}).why, "");
}

TEST(CompareJudge, AllowedDenialIsDeclaredOnlyByAWeakerOrUnenforcedDeny) {
  const std::string target = "/var/tmp/nowhere-compare/wt/private.txt";
  const Judgement weaker = judge(Verdict::denied, Verdict::allowed, target,
                                 {deny(target, Enforcement::weaker, "only at start")});
  EXPECT_EQ(weaker.outcome, Outcome::declared);
  EXPECT_THAT(weaker.why, HasSubstr("weaker: only at start"));
  EXPECT_EQ(judge(Verdict::denied, Verdict::allowed, target,
                  {deny(target, Enforcement::unenforced, "no way")})
                .outcome,
            Outcome::declared);
  // A deny of a parent directory covers the path.
  EXPECT_EQ(judge(Verdict::denied, Verdict::allowed, target,
                  {deny("/var/tmp/nowhere-compare/wt", Enforcement::unenforced)})
                .outcome,
            Outcome::declared);
}

TEST(CompareJudge, EverythingElseFails) {
  const std::string target = "/var/tmp/nowhere-compare/wt/private.txt";
  // Enforced, or about another path: nothing is declared.
  EXPECT_EQ(judge(Verdict::denied, Verdict::allowed, target, {deny(target, Enforcement::enforced)})
                .outcome,
            Outcome::fail);
  EXPECT_EQ(judge(Verdict::denied, Verdict::allowed, target,
                  {deny("/var/tmp/nowhere-compare/wt/other.txt", Enforcement::unenforced)})
                .outcome,
            Outcome::fail);
  EXPECT_EQ(
      judge(Verdict::denied, Verdict::allowed, "", {deny("/", Enforcement::unenforced)}).outcome,
      Outcome::fail);
  // A grant that does not work is never excused by a deny-state.
  const Judgement j =
      judge(Verdict::allowed, Verdict::denied, target, {deny(target, Enforcement::unenforced)});
  EXPECT_EQ(j.outcome, Outcome::fail);
  EXPECT_EQ(j.why, "intended allowed, observed denied");
  // No answer is a failure either way.
  EXPECT_EQ(judge(Verdict::denied, Verdict::error, target, {deny(target, Enforcement::unenforced)})
                .outcome,
            Outcome::fail);
}

// -- the corpus ------------------------------------------------------------------------------

TEST(CompareCorpus, IdsAreUniqueAndIntentsAreAnswers) {
  std::set<std::string> ids;
  for (const auto& s : corpus()) {
    EXPECT_TRUE(ids.insert(s.id).second) << s.id;
    EXPECT_NE(s.intent, Verdict::error) << s.id;
    if (s.kind == ScenarioKind::probe) {
      EXPECT_FALSE(s.target.empty()) << s.id;
    } else {
      EXPECT_FALSE(s.script.empty()) << s.id;
    }
    if (s.check == Check::output_has) {
      EXPECT_FALSE(s.expect.empty()) << s.id;
    }
  }
  for (const char* id : {"read-home-ssh-key", "create-denied-absent-leaf", "read-symlink-chain",
                         "read-symlink-chain-to-denied", "git-add-commit", "write-git-hook",
                         "append-git-config", "write-agent-settings", "aws-credentials-in-env",
                         "probe-read-home-ssh-key", "probe-write-denied-workdir-file"})
    EXPECT_TRUE(ids.count(id)) << id;
}

// -- the report ------------------------------------------------------------------------------

BackendResult all_ok(const std::string& name) {
  BackendResult b;
  b.name = name;
  b.version = "1.2.3";
  for (const auto& s : corpus()) b.cells.push_back({s.intent, Outcome::ok, {}});
  b.timing = Timing{11, 1.04, 16.26, 17.5, {}};
  return b;
}

TEST(CompareReport, AllOkPasses) {
  Report r{11, {all_ok("alpha")}};
  EXPECT_TRUE(passed(r));
  const std::string text = render_text(r);
  EXPECT_THAT(text, HasSubstr("alpha 1.2.3"));
  EXPECT_THAT(text, HasSubstr("median of 11 runs"));
  EXPECT_THAT(text, HasSubstr("alpha 1.2.3  1.0           16.3     15.2      17.5"));
  EXPECT_THAT(text, HasSubstr("result: PASS (" + std::to_string(corpus().size()) + " ok"));
  EXPECT_THAT(text, Not(HasSubstr("not ok:")));
  const auto j = nlohmann::json::parse(render_json(r));
  EXPECT_TRUE(j["passed"].get<bool>());
  EXPECT_EQ(j["scenarios"].size(), corpus().size());
  EXPECT_EQ(j["backends"][0]["results"].size(), corpus().size());
  EXPECT_EQ(j["backends"][0]["timing"]["overhead_ms"].get<double>(), 15.2);
  EXPECT_TRUE(j["backends"][0]["error"].is_null());
}

TEST(CompareReport, FailAndDeclaredAreListedAndFailFails) {
  BackendResult beta = all_ok("beta");
  const std::size_t hook = index_of("write-git-hook");
  const std::size_t priv = index_of("read-denied-workdir-file");
  beta.cells[hook] = {Verdict::allowed, Outcome::fail, "intended denied, observed allowed"};
  beta.cells[priv] = {Verdict::allowed, Outcome::declared, "deny-state declares it weaker"};
  Report r{11, {all_ok("alpha"), beta}};
  EXPECT_FALSE(passed(r));
  const std::string text = render_text(r);
  EXPECT_THAT(text, HasSubstr("beta write-git-hook: FAIL: intended denied, observed allowed"));
  EXPECT_THAT(text, HasSubstr("beta read-denied-workdir-file: declared: deny-state"));
  EXPECT_THAT(text, HasSubstr("result: FAIL"));
  const auto j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j["tally"]["fail"], 1);
  EXPECT_EQ(j["tally"]["declared"], 1);
  EXPECT_EQ(j["backends"][1]["results"]["write-git-hook"]["outcome"], "FAIL");
  EXPECT_EQ(j["backends"][1]["results"]["write-git-hook"]["observed"], "allowed");

  // Declared alone does not fail the run.
  beta.cells[hook] = {Verdict::denied, Outcome::ok, {}};
  EXPECT_TRUE(passed(Report{11, {beta}}));
}

TEST(CompareReport, ABackendWithoutSessionOrTimingFails) {
  BackendResult broken;
  broken.name = "gamma";
  broken.error = "no session: gamma is not installed";
  Report r{11, {all_ok("alpha"), broken}};
  EXPECT_FALSE(passed(r));
  const std::string text = render_text(r);
  EXPECT_THAT(text, HasSubstr("gamma: no session: gamma is not installed"));
  EXPECT_THAT(text, HasSubstr("backend errors"));
  const auto j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j["backends"][1]["error"], "no session: gamma is not installed");
  EXPECT_TRUE(j["backends"][1]["results"].empty());

  BackendResult slow = all_ok("delta");
  slow.timing->error = "the wrapped `true` failed";
  EXPECT_FALSE(passed(Report{11, {slow}}));
  EXPECT_FALSE(passed(Report{11, {}}));  // nothing compared is no pass
}

// -- the runner, against a mock backend -----------------------------------------------------

class CompareRunner : public testing::MockInstallTest {
 protected:
  void SetUp() override {
    MockInstallTest::SetUp();
    // The mock enforces what it holds itself (no launcher mounts) and declares the deny
    // of the workdir's private file unenforced.
    ON_CALL(backend, holds_paths()).WillByDefault(Return(true));
    ON_CALL(backend, deny_state(_, _))
        .WillByDefault(Invoke([](const ResolvedPolicy& p, const BackendExecutable&) {
          std::vector<DenyState> out;
          for (const auto& d : p.denies) {
            const bool weak = d.path.ends_with("/private.txt");
            out.push_back({d.path, d.origin, weak ? Enforcement::unenforced : Enforcement::enforced,
                           weak ? "the mock cannot hide files" : ""});
          }
          return out;
        }));
    options.commands = false;
    options.timing = false;
    options.probe_through_launcher = false;
    scratch = w.dir("scratch");
  }

  RunOptions options;
  std::string scratch;
};

TEST_F(CompareRunner, ProbesAreJudgedAgainstTheSessionsDenyState) {
  // A probe that allows everything: denies fail, except the one the deny-state declares.
  ON_CALL(backend, probe(_)).WillByDefault(Return(ProbeResult{ProbeResult::Verdict::allowed, {}}));
  deny_write_checks();  // the session itself must still be creatable
  EXPECT_CALL(backend, start(_)).Times(1);
  EXPECT_CALL(backend, stop(_)).Times(1);
  const BackendResult r = run_backend("mock", install, scratch, options);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.cells.size(), corpus().size());
  EXPECT_EQ(r.version, "9.9");
  const auto cell = [&](const std::string& id) { return r.cells[index_of(id)]; };
  EXPECT_EQ(cell("probe-read-workdir-file").outcome, Outcome::ok);
  EXPECT_EQ(cell("probe-read-denied-workdir-file").outcome, Outcome::declared);
  EXPECT_THAT(cell("probe-read-denied-workdir-file").detail,
              HasSubstr("unenforced: the mock cannot hide files"));
  EXPECT_EQ(cell("probe-read-home-ssh-key").outcome, Outcome::fail);
  EXPECT_EQ(cell("probe-read-home-ssh-key").observed, Verdict::allowed);
  // Held paths are refused by the gate by name (held.json), whatever the backend says.
  EXPECT_EQ(cell("probe-write-git-hook").outcome, Outcome::ok);
  // The gate resolves the link while the session's processes are held and probes its
  // target (~/.ssh/id_rsa), so an all-allowing backend fails this cell too.
  EXPECT_EQ(cell("probe-read-symlink-chain-to-denied").outcome, Outcome::fail);
  EXPECT_EQ(cell("read-workdir-file").detail, "not run");
  EXPECT_THAT(r.warnings, ::testing::Contains(HasSubstr("private.txt is unenforced")));
  // The world is the caller's scratch dir; no secret reaches a detail.
  for (const auto& c : r.cells) EXPECT_THAT(c.detail, Not(HasSubstr("AB-COMPARE-FAKE")));
  for (const auto& c : r.cells) EXPECT_THAT(c.detail, Not(HasSubstr(scratch)));
}

TEST_F(CompareRunner, AProbeThatDeniesWhatIsGrantedFails) {
  ON_CALL(backend, probe(_))
      .WillByDefault(Return(ProbeResult{ProbeResult::Verdict::denied, "EACCES"}));
  const BackendResult r = run_backend("mock", install, scratch, options);
  EXPECT_EQ(r.cells[index_of("probe-read-workdir-file")].outcome, Outcome::fail);
  EXPECT_EQ(r.cells[index_of("probe-read-home-ssh-key")].outcome, Outcome::ok);
}

TEST_F(CompareRunner, ABackendThatCannotMakeASessionIsAnError) {
  ON_CALL(backend, preflight(_))
      .WillByDefault(::testing::Throw(BackendError("mock kernel lacks everything")));
  const BackendResult r = run_backend("mock", install, scratch, options);
  EXPECT_THAT(r.error, HasSubstr("no session: mock kernel lacks everything"));
  EXPECT_TRUE(r.cells.empty());
  EXPECT_FALSE(passed(Report{11, {r}}));
}

TEST_F(CompareRunner, AnInterruptedRunStillStopsTheSession) {
  ON_CALL(backend, probe(_)).WillByDefault(Return(ProbeResult{ProbeResult::Verdict::denied, {}}));
  EXPECT_CALL(backend, stop(_)).Times(1);
  options.interrupted = [] { return true; };
  EXPECT_THROW(run_backend("mock", install, scratch, options), UsageError);
}

TEST(CompareWorld, ExpandsKnownPlaceholdersOnly) {
  testing::TestWorld w;
  World world(w.path("world"));
  EXPECT_EQ(world.expand("{wt}/x"), world.workdir() + "/x");
  EXPECT_EQ(world.expand("${HOME} ${1%/*} { a; }"), "${HOME} ${1%/*} { a; }");
  EXPECT_THROW(world.expand("{no-such-value}"), UsageError);
  EXPECT_NE(world.next_token(), world.next_token());
  EXPECT_TRUE(std::filesystem::is_regular_file(world.workdir() + "/.git"));
  EXPECT_EQ(world.head_subject(), "initial commit");
}

TEST(CompareMedian, OddEvenEmpty) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({}), 0);
}

}  // namespace
}  // namespace agent_boundary::compare
