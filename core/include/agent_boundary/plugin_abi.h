/* The plugin ABI: one C descriptor per shared object, checked by the loader before any
 * plugin code runs (Falco's model). Bump AB_PLUGIN_ABI_MAJOR for any incompatible change
 * to this struct or to the C++ interfaces in backend.hpp / harness.hpp; bump the minor for
 * additions a newer core can offer to older plugins. The loader refuses a plugin whose
 * major differs or whose minor is newer than core's, naming both versions. */
#ifndef AGENT_BOUNDARY_PLUGIN_ABI_H
#define AGENT_BOUNDARY_PLUGIN_ABI_H

#include <stdint.h>

#define AB_PLUGIN_ABI_MAJOR 2u
#define AB_PLUGIN_ABI_MINOR 1u
#define AB_PLUGIN_ENTRY_SYMBOL "ab_plugin_entry_v1"

#define AB_PLUGIN_KIND_BACKEND 1u
#define AB_PLUGIN_KIND_HARNESS 2u

/* The C++ library generation the plugin was built against. Plugins and core exchange
 * std::string and std::vector, so both must agree on libstdc++'s ABI. */
#define AB_STRINGIFY2(x) #x
#define AB_STRINGIFY(x) AB_STRINGIFY2(x)
#define AB_TOOLCHAIN_FINGERPRINT \
  "libstdc++" AB_STRINGIFY(_GLIBCXX_RELEASE) "-cxx11abi" AB_STRINGIFY(_GLIBCXX_USE_CXX11_ABI)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ab_plugin_descriptor {
  uint32_t struct_size; /* sizeof(ab_plugin_descriptor) as the plugin saw it */
  uint32_t abi_major;
  uint32_t abi_minor;
  uint32_t kind;         /* AB_PLUGIN_KIND_* */
  const char* name;      /* "nono": selects the plugin (--backend nono) */
  const char* version;   /* the plugin's own version, informational */
  const char* toolchain; /* AB_TOOLCHAIN_FINGERPRINT */
  /* host: agent_boundary::PluginHost*. Returns a Backend* or Harness* (matching kind),
   * or throws; the loader translates exceptions while the library is still mapped. */
  void* (*create)(void* host);
  void (*destroy)(void* object);
} ab_plugin_descriptor;

#ifdef __cplusplus
}
#endif

#endif
