// backend-wrong_kind.so: a harness descriptor in a file named like a backend. Written by
// hand so it does not depend on the Harness interface; the loader must refuse it before
// calling the factory (which, if called, would hand out a Backend anyway).
#include "agent_boundary/plugin_abi.h"
#include "trivial_backend.hpp"

AB_TEST_TRIVIAL_DESCRIPTOR(AB_PLUGIN_ABI_MAJOR, AB_PLUGIN_ABI_MINOR, AB_PLUGIN_KIND_HARNESS,
                           "wrong_kind", AB_TOOLCHAIN_FINGERPRINT);
