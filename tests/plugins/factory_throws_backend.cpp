// backend-factory_throws.so: the constructor throws an exception type that exists only in
// this plugin. The loader must copy its message while the library is mapped.
#include <stdexcept>

#include "agent_boundary/plugin.hpp"
#include "trivial_backend.hpp"

namespace {

class PluginLocalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ThrowingBackend final : public ab_test::TrivialBackend {
 public:
  explicit ThrowingBackend(const agent_boundary::PluginHost& host) : TrivialBackend(host) {
    throw PluginLocalError("fake backend refuses to start: no sandbox here");
  }
};

}  // namespace

AB_BACKEND_PLUGIN(ThrowingBackend, "factory_throws", "0.0.1");
