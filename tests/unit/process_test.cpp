#include "agent_boundary/process.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent_boundary/error.hpp"

namespace agent_boundary {
namespace {

using ::testing::HasSubstr;

TEST(RunProcess, CapturesOutputExitCodeAndInput) {
  ProcessOptions o;
  o.argv = {"/bin/sh", "-c", "cat; echo err >&2; exit 3"};
  o.input = "hello";
  const auto r = run_process(o);
  EXPECT_EQ(r.out, "hello");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
}

TEST(RunProcess, DeadlineKillsTheWholeProcessGroup) {
  ProcessOptions o;
  // The grandchild keeps stdout open; the deadline must still end the call.
  o.argv = {"/bin/sh", "-c", "sleep 30 & sleep 30"};
  o.timeout_ms = 200;
  const auto r = run_process(o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
}

TEST(RunProcess, ExplicitEnvironmentAndCwd) {
  ProcessOptions o;
  o.argv = {"/bin/sh", "-c", "echo \"$ONLY:$HOME:$(pwd)\""};
  o.env = std::vector<std::string>{"ONLY=yes"};
  o.cwd = "/";
  EXPECT_EQ(run_process(o).out, "yes::/\n");
}

TEST(RunProcess, RefusesRelativeExecutables) {
  ProcessOptions o;
  o.argv = {"sh", "-c", "true"};
  EXPECT_THAT([&] { run_process(o); },
              ::testing::ThrowsMessage<SystemError>(HasSubstr("absolute")));
}

TEST(ShellQuote, RoundTripsThroughSh) {
  for (const std::string word : {"plain", "", "a b", "it's", "$(id)", "`x`", "a\nb", "\\"}) {
    ProcessOptions o;
    o.argv = {"/bin/sh", "-c", "printf %s " + shell_quote(word)};
    EXPECT_EQ(run_process(o).out, word);
  }
}

TEST(FirstLine, TrimsAndLimits) {
  EXPECT_EQ(first_line("\n  one\ntwo"), "one");
  EXPECT_EQ(first_line("abcdef", 3), "abc...");
  EXPECT_EQ(first_line(""), "");
}

}  // namespace
}  // namespace agent_boundary
