// Finding the programs a backend pins at session creation. One search order for every
// plugin: a backend never resolves a program later, through a PATH or a directory the agent
// may write by then; what these find is pinned by absolute path (BackendExecutable) and core
// refuses it when it lies in a sandbox-writable directory.
#pragma once

#include <string>
#include <vector>

#include "agent_boundary/export.hpp"

namespace agent_boundary {

// Where to look for `name`, in order: beside agent-boundary's own binary (the installer
// puts the tools it installs there), /usr/local/bin, /usr/bin, then PATH's absolute
// entries. Callers put an explicit choice (a hint, an AGENT_BOUNDARY_* variable) first.
AB_API std::vector<std::string> executable_search(const std::string& name);

// A regular file this process may execute (symlinks followed).
AB_API bool is_executable_file(const std::string& path);

// The first executable file of `candidates`, resolved; empty when none is.
AB_API std::string first_executable(const std::vector<std::string>& candidates);

// Dotted versions compared field by field as numbers (a missing field is 0): <0, 0, >0.
AB_API int compare_versions(const std::string& a, const std::string& b);

}  // namespace agent_boundary
