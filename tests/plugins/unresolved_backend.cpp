// backend-unresolved.so: a well-formed descriptor, but the factory calls a function no
// library defines. Built WITHOUT -z defs (see CMakeLists.txt), so only RTLD_NOW stands
// between it and a "symbol lookup error" exit at the first call.
#include "agent_boundary/plugin.hpp"
#include "trivial_backend.hpp"

extern "C" int ab_test_missing_function_xyz(int);

namespace {

class UnresolvedBackend final : public ab_test::TrivialBackend {
 public:
  explicit UnresolvedBackend(const agent_boundary::PluginHost& host)
      : TrivialBackend(host), value_(ab_test_missing_function_xyz(42)) {}
  int value() const { return value_; }

 private:
  int value_;
};

}  // namespace

AB_BACKEND_PLUGIN(UnresolvedBackend, "unresolved", "0.0.1");
