// The smallest useful backend: runs commands unconfined and says so. Built out of tree by
// tests/out_of_tree/run.sh against an installed agent-boundary.
#include <string>
#include <vector>

#include "agent_boundary/error.hpp"
#include "agent_boundary/plugin.hpp"

namespace {

class ToyBackend final : public agent_boundary::Backend {
 public:
  explicit ToyBackend(const agent_boundary::PluginHost& host) : host_(host) {}

  agent_boundary::BackendExecutable locate(const std::string& hint) const override {
    host_.debug("toy: locate");
    return {hint.empty() ? "/usr/bin/env" : hint, "0.0.1", {}};
  }

  void preflight(const agent_boundary::BackendExecutable& exe) const override {
    if (exe.path.empty() || exe.path[0] != '/')
      throw agent_boundary::BackendError("toy needs an absolute executable path");
  }

  std::vector<agent_boundary::DenyState> deny_state(
      const agent_boundary::ResolvedPolicy& policy,
      const agent_boundary::BackendExecutable&) const override {
    std::vector<agent_boundary::DenyState> out;
    for (const auto& d : policy.denies)
      out.push_back({d.path, d.origin, agent_boundary::Enforcement::unenforced,
                     "the toy backend enforces nothing"});
    return out;
  }

  // Nothing is held by the toy itself: core's launcher holds what it can.
  bool holds_paths() const override { return false; }

  std::vector<agent_boundary::RenderedFile> render(
      const agent_boundary::ResolvedPolicy& policy,
      const agent_boundary::SessionView&) const override {
    return {{"toy.txt", "profile " + policy.profile_name + "\n"}};
  }

  std::vector<std::string> wrap(const agent_boundary::WrapRequest& request) const override {
    std::vector<std::string> argv = {request.session.executable.path, "--"};
    argv.insert(argv.end(), request.argv.begin(), request.argv.end());
    return argv;
  }

  agent_boundary::ProbeResult probe(const agent_boundary::ProbeRequest&) const override {
    return {agent_boundary::ProbeResult::Verdict::inconclusive, "the toy backend cannot probe"};
  }

  void start(const agent_boundary::SessionView&) const override {}
  void stop(const agent_boundary::SessionView&) const override {}

 private:
  const agent_boundary::PluginHost& host_;
};

}  // namespace

AB_BACKEND_PLUGIN(ToyBackend, "toy", "0.0.1");
