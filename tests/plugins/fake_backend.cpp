// backend-fake.so: the well-formed test plugin; every Backend method answers
// deterministically (see trivial_backend.hpp).
#include "agent_boundary/plugin.hpp"
#include "trivial_backend.hpp"

namespace {

class FakeBackend final : public ab_test::TrivialBackend {
 public:
  using TrivialBackend::TrivialBackend;
};

}  // namespace

AB_BACKEND_PLUGIN(FakeBackend, "fake", "1.2.3");
