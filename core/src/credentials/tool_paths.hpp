// The credential tools (aws, gh) are pinned by absolute path in boundary.json when a
// session is created, never looked up through PATH at export time: PATH may start with a
// directory the sandbox can write (a checkout's .venv/bin). Looked for in
// $AGENT_BOUNDARY_AWS / $AGENT_BOUNDARY_GH, then /usr/bin, /usr/local/bin, then the
// absolute entries of PATH. The session refuses a tool in a sandbox-writable directory.
#pragma once

#include <string>
#include <vector>

namespace agent_boundary::credentials {

inline constexpr const char* kAwsOverride = "AGENT_BOUNDARY_AWS";
inline constexpr const char* kGhOverride = "AGENT_BOUNDARY_GH";

// /usr/bin/<name>, /usr/local/bin/<name>, then <dir>/<name> for each absolute PATH entry
// (duplicates removed, order kept).
std::vector<std::string> tool_candidates(const std::string& name);

// True when `path` runs and prints `aws-cli/2.` for --version (v1 lacks export-credentials).
bool reports_aws_cli_v2(const std::string& path);

// The tool's absolute path, or empty with `problem` saying why none was found. A set
// override that is unusable throws SessionError (the user named it explicitly).
std::string find_aws_cli(std::string& problem);
std::string find_gh_cli(std::string& problem);

}  // namespace agent_boundary::credentials
