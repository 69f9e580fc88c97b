// Whole-agent mode: the harness itself (Claude Code, ...) runs inside a session's boundary,
// so its in-process file tools are held by the kernel like every command. The harness
// plugin names its own paths (Harness::whole_agent_footprint); this file turns them into
// session grants and held paths, and lets hooks running inside tell that they are inside.
#pragma once

#include <string>
#include <vector>

#include "agent_boundary/harness.hpp"
#include "agent_boundary/policy.hpp"

namespace agent_boundary {

// Set by the launcher for a whole-agent process: the absolute dir of its session. Never
// trusted alone (the agent can set variables): see verified_inside().
inline constexpr const char* kInsideEnv = "AGENT_BOUNDARY_INSIDE";
// Prefix of whole-agent session dirs under <state>/sessions.
inline constexpr const char* kWholeAgentSessionPrefix = "agent-";

struct WholeAgentSetup {
  std::vector<Grant> grants;       // the harness's state (read+write), the hook runtime (read)
  std::vector<HarnessPath> held;   // resolved
  std::vector<std::string> notes;  // e.g. a state file that does not exist, so is not granted
};

// Creates the harness's absent state directories (0700) and grants what exists; grants
// `<state>/runtimes` and `<state>/bin` read-only when present, so a harness's hooks can run
// the protected runtime copy from inside. Throws UsageError for an empty footprint.
WholeAgentSetup whole_agent_setup(const std::string& harness_name, const WholeAgentFootprint& fp,
                                  const std::string& state_root);

// The whole-agent session this process verifiably runs inside, or empty. Verified means,
// besides kInsideEnv naming `<state_root>/sessions/<name>`: this process can open neither
// that session's boundary.json nor the `<state_root>/sessions` directory (created first
// when absent), and the kernel said EACCES/EPERM to both. Outside every boundary the user
// can always open both; the sandbox can create or change neither (the state root is denied
// to every session), so a marker set outside, stale or forged, is ignored.
std::string verified_inside(const std::string& state_root);

}  // namespace agent_boundary
