// Out-of-line key functions: the vtables and type_info of the plugin interfaces live in
// core, exported once, so every plugin binds to the same ones.
#include "agent_boundary/backend.hpp"
#include "agent_boundary/harness.hpp"
#include "agent_boundary/plugin_host.hpp"
#include "agent_boundary/policy.hpp"

namespace agent_boundary {

Backend::~Backend() = default;
Harness::~Harness() = default;
WholeAgentFootprint Harness::whole_agent_footprint(const std::string&, const std::string&,
                                                   unsigned) const {
  return {};
}
PluginHost::~PluginHost() = default;

const char* to_string(Access a) {
  switch (a) {
    case Access::read:
      return "read";
    case Access::write:
      return "write";
    case Access::readwrite:
      return "readwrite";
  }
  return "?";
}

const char* to_string(PathKind k) { return k == PathKind::file ? "file" : "directory"; }

const char* to_string(Enforcement e) {
  switch (e) {
    case Enforcement::enforced:
      return "enforced";
    case Enforcement::weaker:
      return "weaker";
    case Enforcement::unenforced:
      return "unenforced";
  }
  return "?";
}

}  // namespace agent_boundary
