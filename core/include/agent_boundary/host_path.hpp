// Path rules every part of agent-boundary shares (core and backend plugins alike): the one
// definition of "inside a directory" and of a path's parent, and the resolution of a path
// that may not exist yet. Paths are absolute and already normal.
#pragma once

#include <string>

#include "agent_boundary/export.hpp"

namespace agent_boundary {

// `path` is `dir` or below it, by whole components ("/a/bc" is not within "/a/b").
AB_API bool path_within(const std::string& path, const std::string& dir);

// The directory holding `path`; "/" for "/" and for a top-level entry.
AB_API std::string parent_dir(const std::string& path);

// realpath() of the longest existing prefix of `path`, the rest appended.
AB_API std::string resolve_path(const std::string& path);

}  // namespace agent_boundary
