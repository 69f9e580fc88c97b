// backend-wrong_kind.so: a harness descriptor in a file named like a backend. Written by
// hand so it does not depend on the Harness interface; the loader must refuse it before
// calling the factory (which, if called, would hand out a Backend anyway).
#include "agent_boundary/plugin_abi.h"
#include "trivial_backend.hpp"

namespace {

void* create(void* host) {
  return static_cast<agent_boundary::Backend*>(
      new ab_test::TrivialBackend(*static_cast<const agent_boundary::PluginHost*>(host)));
}
void destroy(void* object) { delete static_cast<agent_boundary::Backend*>(object); }

}  // namespace

extern "C" __attribute__((visibility("default"))) const ab_plugin_descriptor ab_plugin_entry_v1 = {
    sizeof(ab_plugin_descriptor),
    AB_PLUGIN_ABI_MAJOR,
    AB_PLUGIN_ABI_MINOR,
    AB_PLUGIN_KIND_HARNESS,
    "wrong_kind",
    "0.0.1",
    AB_TOOLCHAIN_FINGERPRINT,
    create,
    destroy,
};
