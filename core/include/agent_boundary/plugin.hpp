// For plugin authors: one macro defines the exported descriptor of a plugin.
//
//   class MyBackend : public agent_boundary::Backend { public: explicit MyBackend(const
//   PluginHost&); ... }; AB_BACKEND_PLUGIN(MyBackend, "mine", "0.1.0")
//
// The descriptor is the plugin's only exported symbol (everything else stays hidden).
#pragma once

#include "agent_boundary/backend.hpp"
#include "agent_boundary/harness.hpp"
#include "agent_boundary/plugin_abi.h"
#include "agent_boundary/plugin_host.hpp"

#define AB_DEFINE_PLUGIN_(Interface, Class, kind_value, plugin_name, plugin_version) \
  extern "C" __attribute__((visibility("default")))                                  \
  const ab_plugin_descriptor ab_plugin_entry_v1 = {                                  \
      sizeof(ab_plugin_descriptor),                                                  \
      AB_PLUGIN_ABI_MAJOR,                                                           \
      AB_PLUGIN_ABI_MINOR,                                                           \
      kind_value,                                                                    \
      plugin_name,                                                                   \
      plugin_version,                                                                \
      AB_TOOLCHAIN_FINGERPRINT,                                                      \
      [](void* host) -> void* {                                                      \
        return static_cast<Interface*>(                                              \
            new Class(*static_cast<const ::agent_boundary::PluginHost*>(host)));     \
      },                                                                             \
      [](void* object) { delete static_cast<Interface*>(object); },                  \
  }

#define AB_BACKEND_PLUGIN(Class, name, version) \
  AB_DEFINE_PLUGIN_(::agent_boundary::Backend, Class, AB_PLUGIN_KIND_BACKEND, name, version)
#define AB_HARNESS_PLUGIN(Class, name, version) \
  AB_DEFINE_PLUGIN_(::agent_boundary::Harness, Class, AB_PLUGIN_KIND_HARNESS, name, version)
