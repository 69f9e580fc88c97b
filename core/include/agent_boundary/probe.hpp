// The probe helper's answer, shared by every backend that runs it and by core: the helper
// (libexec/agent-boundary/probe) prints "allowed[|detail]" or "denied|ERRNO" on one line.
#pragma once

#include "agent_boundary/backend.hpp"
#include "agent_boundary/export.hpp"
#include "agent_boundary/process.hpp"

namespace agent_boundary {

// A timeout is `denied`; a failed, silent or unreadable run is `inconclusive` (both deny).
AB_API ProbeResult parse_probe_output(const ProcessResult& result, int timeout_ms);

}  // namespace agent_boundary
