// A test fixture with an Installation whose backend is a MockBackend, a scratch world
// (HOME, state root, profiles), and a request for a session in it: session and hook tests
// run core's real session logic without any plugin.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include "mocks/mock_backend.hpp"
#include "session.hpp"
#include "test_world.hpp"

namespace agent_boundary::testing {

class MockInstallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    using ::testing::_;
    ::setenv("HOME", w.dir("home").c_str(), 1);
    ::setenv("AGENT_BOUNDARY_STATE_DIR", w.path("state").c_str(), 1);
    w.file("profiles/default.yaml",
           "name: default\ndescription: d\ngit_common_dir: false\nallow: [$WORKDIR]\n");
    w.file("profiles/other.yaml", "name: other\ndescription: d\ngit_common_dir: false\n");
    w.file("bin/nono-fake");
    install.self_exe = w.file("bin/agent-boundary");
    install.plugin_dir = w.dir("lib/plugins");
    install.helper_dir = w.dir("libexec");
    install.load_backend = [this](const std::string& file) {
      loaded_plugin = file;
      return std::shared_ptr<Backend>(&backend, [](Backend*) {});
    };
    ON_CALL(backend, locate(_))
        .WillByDefault(::testing::Return(BackendExecutable{w.path("bin/nono-fake"), "9.9", {}}));
    ON_CALL(backend, deny_state(_, _))
        .WillByDefault(::testing::Invoke([](const ResolvedPolicy& p, auto&) {
          std::vector<DenyState> out;
          for (const auto& d : p.denies)
            out.push_back({d.path, d.origin, Enforcement::enforced, {}});
          return out;
        }));
    ON_CALL(backend, render(_, _))
        .WillByDefault(::testing::Return(std::vector<RenderedFile>{{"fake-backend.json", "{}\n"}}));
    deny_write_checks();
    // The self-test runs `true` through wrap: prove the staged files exist at that moment.
    ON_CALL(backend, wrap(_)).WillByDefault(::testing::Invoke([](const WrapRequest& r) {
      return std::vector<std::string>{"/usr/bin/test", "-f",
                                      r.session.session_dir + "/fake-backend.json"};
    }));
  }

  // Session creation probes each directory of installed code for write from inside; the
  // mock's boundary keeps them unwritable. Call again after a broader ON_CALL for probe().
  void deny_write_checks() {
    ON_CALL(backend, probe(::testing::Field(&ProbeRequest::path,
                                            ::testing::HasSubstr("/.agent-boundary-write-check-"))))
        .WillByDefault(::testing::Return(ProbeResult{ProbeResult::Verdict::denied, "EACCES"}));
  }

  SessionRequest request(const std::string& name = "s1") {
    SessionRequest r;
    r.session_dir = w.path("state/sessions/" + name);
    r.profile_name = "default";
    r.profiles_dir = w.path("profiles");
    r.workdir = w.dir("work");
    return r;
  }

  TestWorld w;
  ::testing::NiceMock<MockBackend> backend;
  Installation install;
  std::string loaded_plugin;
};

}  // namespace agent_boundary::testing
