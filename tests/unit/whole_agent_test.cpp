// verified_inside() outside any boundary: whatever the marker says, it is not trusted.
// (Inside, the kernel's refusal is exercised by tests/integration/test_whole_agent.py.)
#include "whole_agent.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "agent_boundary/error.hpp"
#include "test_world.hpp"

namespace agent_boundary {
namespace {

using testing::TestWorld;

class Marker {
 public:
  explicit Marker(const std::string& value) { ::setenv(kInsideEnv, value.c_str(), 1); }
  ~Marker() { ::unsetenv(kInsideEnv); }
};

TEST(VerifiedInside, AMarkerOutsideABoundaryIsIgnored) {
  TestWorld w;
  const std::string state = w.path("state");
  EXPECT_EQ(verified_inside(state), "");  // no marker
  w.file("state/sessions/agent-1-2/boundary.json", "{}");
  for (const std::string& marker :
       {state + "/sessions/agent-1-2", state + "/sessions/agent-9-9", state + "/sessions/../x",
        state + "/sessions/a/b", w.path("elsewhere/sessions/agent-1-2"), std::string("relative"),
        state + "/sessions/"}) {
    Marker m(marker);
    EXPECT_EQ(verified_inside(state), "") << marker;
  }
}

TEST(VerifiedInside, AFreshStateRootIsCreatedNotTakenForADenial) {
  TestWorld w;
  const std::string state = w.path("state");
  Marker m(state + "/sessions/agent-1-2");
  EXPECT_EQ(verified_inside(state), "");
}

TEST(WholeAgentSetup, EmptyFootprintIsRefusedAndAbsentStateDirsAreCreated) {
  TestWorld w;
  EXPECT_THROW(whole_agent_setup("x", {}, w.path("state")), UsageError);
  WholeAgentFootprint fp;
  fp.writable = {{w.path("home/.cfg"), PathKind::directory, {}},
                 {w.path("home/.cfg.json"), PathKind::file, {}}};
  fp.readable = {{w.path("home/absent"), PathKind::directory, {}}};
  w.dir("state/runtimes");
  const WholeAgentSetup s = whole_agent_setup("x", fp, w.path("state"));
  ASSERT_EQ(s.grants.size(), 2u);
  EXPECT_EQ(s.grants[0].path, w.path("home/.cfg"));
  EXPECT_EQ(s.grants[0].access, Access::readwrite);
  EXPECT_EQ(s.grants[1].path, w.path("state/runtimes"));
  EXPECT_EQ(s.grants[1].access, Access::read);
  EXPECT_EQ(s.notes.size(), 1u);  // the absent config file is not granted
}

}  // namespace
}  // namespace agent_boundary
