// backend-toolchain.so: says it was built against another C++ library generation; the
// loader must refuse it by its fingerprint, naming both.
#include "agent_boundary/plugin_abi.h"
#include "trivial_backend.hpp"

AB_TEST_TRIVIAL_DESCRIPTOR(AB_PLUGIN_ABI_MAJOR, AB_PLUGIN_ABI_MINOR, AB_PLUGIN_KIND_BACKEND,
                           "toolchain", "libstdc++7-cxx11abi0");
