// The one owner of path conventions: where state and profiles live, and how a path field
// of a profile is expanded. Nothing else in agent-boundary expands `~` or `$VARS`.
#pragma once

#include <map>
#include <string>

// path_within, shared with the backend plugins.
#include "agent_boundary/host_path.hpp"

namespace agent_boundary {

// $AGENT_BOUNDARY_STATE_DIR (non-empty), else ${XDG_STATE_HOME:-~/.local/state}/agent-boundary.
// Absolute and lexically normal; symlinks are resolved for the part that exists.
std::string state_root();
// $AGENT_BOUNDARY_PROFILES_DIR (non-empty), else
// ${XDG_CONFIG_HOME:-~/.config}/agent-boundary/profiles.
std::string profiles_dir();
// $HOME, else the passwd entry. Throws SystemError when neither exists.
std::string home_dir();

// Variables a profile path may use. `$WORKDIR` is only known once a workdir is chosen.
struct PathVars {
  std::string home;
  std::string workdir;                       // empty: `$WORKDIR` is an error
  std::map<std::string, std::string> extra;  // TMPDIR, UID, XDG_* ... (see path_vars())
};
// HOME, WORKDIR and the XDG/TMPDIR/UID variables from the current environment.
PathVars path_vars(const std::string& workdir);

// Expand a profile path: a leading `~` or `~/`, `$NAME` and `${NAME}` for the variables in
// `vars`. The result must be absolute; it is lexically normalised (no `.`/`..`, no
// trailing `/`). Throws ProfileError (message only; the caller adds the position) for an
// unknown variable, `~user`, or a relative result.
// `escape_globs`: backslash-escape `*?[\` inside variable values, so a glob pattern only
// treats the profile's own characters as wildcards (a HOME named `ho[me]` stays literal).
std::string expand_path(const std::string& raw, const PathVars& vars, bool escape_globs = false);

// Expand `~`, `$NAME` and `${NAME}` in a value that need not be a path (profile `env:`).
// Unknown variables are left as written.
std::string expand_vars(const std::string& raw, const PathVars& vars);

// Lexically normal absolute form of `path` relative to `base` (no symlink resolution).
std::string absolute_normal(const std::string& path, const std::string& base);

// realpath() of the longest existing prefix, with the rest appended lexically.
std::string resolve_existing_prefix(const std::string& path);

}  // namespace agent_boundary
