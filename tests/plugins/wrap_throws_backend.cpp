// backend-wrap_throws.so: loads fine, then fails inside its methods: wrap() throws a
// plugin-local exception, preflight() a core BackendError with a fix, probe() a
// non-standard exception. The loader's guard must turn each into a core BackendError.
#include <stdexcept>

#include "agent_boundary/error.hpp"
#include "agent_boundary/plugin.hpp"
#include "trivial_backend.hpp"

namespace {

class WrapFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class WrapThrowsBackend final : public ab_test::TrivialBackend {
 public:
  using TrivialBackend::TrivialBackend;

  std::vector<std::string> wrap(const agent_boundary::WrapRequest& request) const override {
    throw WrapFailure("cannot wrap `" + (request.argv.empty() ? "" : request.argv[0]) +
                      "`: fake sandbox is broken");
  }

  void preflight(const agent_boundary::BackendExecutable&) const override {
    throw agent_boundary::BackendError("fake kernel feature missing", "/proc/fake",
                                       "enable the fake feature");
  }

  agent_boundary::ProbeResult probe(const agent_boundary::ProbeRequest&) const override {
    throw 42;
  }
};

}  // namespace

AB_BACKEND_PLUGIN(WrapThrowsBackend, "wrap_throws", "0.0.1");
