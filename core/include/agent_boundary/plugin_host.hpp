// Services core offers to plugins at creation (Falco's init input): plugins need no logger
// or install-layout knowledge of their own.
#pragma once

#include <string>

#include "agent_boundary/export.hpp"

namespace agent_boundary {

class AB_API PluginHost {
 public:
  virtual ~PluginHost();
  // Absolute path of a helper program installed with agent-boundary (e.g. "probe").
  virtual std::string helper_path(const std::string& name) const = 0;
  // Debug-level diagnostics; quiet unless the user asked for -v.
  virtual void debug(const std::string& message) const = 0;
};

}  // namespace agent_boundary
