// Generation-time glob expansion for profile grants. Walks only below the literal prefix
// of a pattern (never the whole filesystem), never follows a symlinked directory while
// descending `**`, and stops at fixed limits so a careless pattern cannot stall a session.
#pragma once

#include <string>
#include <vector>

namespace agent_boundary {

// True when `pattern` contains an unescaped `*`, `?` or `[` (a backslash escapes one).
bool has_glob(const std::string& pattern);

struct GlobResult {
  std::vector<std::string> matches;  // absolute, sorted, unique
  bool truncated = false;            // a limit was hit; `matches` is incomplete
};

// Expand an absolute pattern. Components match with fnmatch(3) semantics (a leading dot
// is matched by `*`, a backslash makes the next character literal); a component `**`
// matches zero or more directories.
GlobResult expand_glob(const std::string& pattern, std::size_t max_matches = 10000,
                       std::size_t max_visits = 200000);

}  // namespace agent_boundary
