// A Backend whose every method answers trivially and deterministically. The test plugins
// derive from it and break one thing each; it is header-only so every plugin carries its
// own (hidden) copy, as a real plugin would.
#pragma once

#include <string>
#include <vector>

#include "agent_boundary/backend.hpp"
#include "agent_boundary/plugin_host.hpp"

namespace ab_test {

class TrivialBackend : public agent_boundary::Backend {
 public:
  explicit TrivialBackend(const agent_boundary::PluginHost& host) : host_(host) {}

  agent_boundary::BackendExecutable locate(const std::string& hint) const override {
    return {hint.empty() ? host_.helper_path("fake-sandbox") : hint, "1.0.0", {}};
  }

  void preflight(const agent_boundary::BackendExecutable&) const override {}

  std::vector<agent_boundary::DenyState> deny_state(
      const agent_boundary::ResolvedPolicy& policy,
      const agent_boundary::BackendExecutable&) const override {
    std::vector<agent_boundary::DenyState> out;
    for (const auto& d : policy.denies)
      out.push_back({d.path, d.origin, agent_boundary::Enforcement::enforced, ""});
    return out;
  }

  // A test double: it claims to hold paths itself so core's launcher adds no namespaces.
  bool holds_paths() const override { return true; }

  std::vector<agent_boundary::RenderedFile> render(
      const agent_boundary::ResolvedPolicy& policy,
      const agent_boundary::SessionView& session) const override {
    std::string content = "profile=" + policy.profile_name + "\nworkdir=" + session.workdir + "\n";
    for (const auto& g : policy.grants)
      content += std::string("grant ") + agent_boundary::to_string(g.access) + " " + g.path + "\n";
    return {{"fake-policy.txt", content}};
  }

  std::vector<std::string> wrap(const agent_boundary::WrapRequest& request) const override {
    std::vector<std::string> out = {request.session.executable.path, "--cwd", request.cwd, "--"};
    out.insert(out.end(), request.argv.begin(), request.argv.end());
    return out;
  }

  agent_boundary::ProbeResult probe(const agent_boundary::ProbeRequest& request) const override {
    const std::string& root = request.session.workdir;
    const bool inside = request.path == root || request.path.starts_with(root + "/");
    agent_boundary::ProbeResult r;
    r.verdict = inside ? agent_boundary::ProbeResult::Verdict::allowed
                       : agent_boundary::ProbeResult::Verdict::denied;
    r.detail = inside ? "" : "EACCES";
    return r;
  }

  void start(const agent_boundary::SessionView&) const override {}
  void stop(const agent_boundary::SessionView&) const override {}

 protected:
  const agent_boundary::PluginHost& host_;
};

}  // namespace ab_test

// A hand-written descriptor for a TrivialBackend, for the plugins that must lie about one
// field (ABI version, kind, toolchain) where the AB_BACKEND_PLUGIN macro would tell the truth.
#define AB_TEST_TRIVIAL_DESCRIPTOR(abi_major, abi_minor, kind, name, toolchain)                \
  namespace {                                                                                  \
  void* ab_test_create(void* host) {                                                           \
    return static_cast<agent_boundary::Backend*>(                                              \
        new ab_test::TrivialBackend(*static_cast<const agent_boundary::PluginHost*>(host)));   \
  }                                                                                            \
  void ab_test_destroy(void* object) { delete static_cast<agent_boundary::Backend*>(object); } \
  }                                                                                            \
  extern "C" __attribute__((visibility("default")))                                            \
  const ab_plugin_descriptor ab_plugin_entry_v1 = {sizeof(ab_plugin_descriptor),               \
                                                   abi_major,                                  \
                                                   abi_minor,                                  \
                                                   kind,                                       \
                                                   name,                                       \
                                                   "0.0.1",                                    \
                                                   toolchain,                                  \
                                                   ab_test_create,                             \
                                                   ab_test_destroy}
