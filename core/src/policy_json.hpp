// policy.json: the pinned, backend-neutral resolved policy of a session.
#pragma once

#include <string>

#include "agent_boundary/policy.hpp"

namespace agent_boundary {

// Deterministic JSON text (2-space indent, trailing newline).
std::string policy_to_json(const ResolvedPolicy& policy);
// Throws SessionError (where = `origin`) when the text is not a valid policy.
ResolvedPolicy policy_from_json(const std::string& text, const std::string& origin);

}  // namespace agent_boundary
