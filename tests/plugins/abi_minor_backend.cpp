// backend-abi_minor.so: claims the next minor plugin ABI; the loader must refuse it before
// calling any of its code.
#include "agent_boundary/plugin_abi.h"
#include "trivial_backend.hpp"

AB_TEST_TRIVIAL_DESCRIPTOR(AB_PLUGIN_ABI_MAJOR, AB_PLUGIN_ABI_MINOR + 1, AB_PLUGIN_KIND_BACKEND,
                           "abi_minor", AB_TOOLCHAIN_FINGERPRINT);
