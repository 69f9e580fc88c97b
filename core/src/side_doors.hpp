// The launcher's one call into the side-door policy (issue 14): the caller's secret-looking
// variables and host-socket variables leave the child's environment, and for a backend
// that does not build its own mount view, every host socket not allowed is hidden by the
// launcher's mount namespace.
#pragma once

#include "agent_boundary/backend.hpp"
#include "launcher.hpp"
#include "session.hpp"

namespace agent_boundary {

// Returns the names of the caller's variables the profile lets through (kept secrets,
// allowed socket variables) that are present, for backends that pass variables by name.
std::vector<std::string> close_side_doors(const BoundaryConfig& config, const Backend& backend,
                                          LaunchPlan& plan);

}  // namespace agent_boundary
