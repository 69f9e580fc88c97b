// backend-misnamed.so: a valid plugin whose descriptor calls it `othername`; the loader
// must not let a file stand in for another plugin.
#include "agent_boundary/plugin.hpp"
#include "trivial_backend.hpp"

namespace {

class OtherBackend final : public ab_test::TrivialBackend {
 public:
  using TrivialBackend::TrivialBackend;
};

}  // namespace

AB_BACKEND_PLUGIN(OtherBackend, "othername", "0.0.1");
