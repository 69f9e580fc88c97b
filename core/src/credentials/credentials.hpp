// What a session injects into the processes it launches (AWS, GitHub), and what it says
// about it, without ever showing a secret. The launcher is the one place credentials reach
// a process: its environment, never argv and never shell text. The hook and `status` only
// read the caches' metadata; they never export.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "session.hpp"

namespace agent_boundary::credentials {

// True when the session asks for an injected credential (the launcher's fast path skips
// everything else, without a file read).
bool wants_credentials(const BoundaryConfig& config);

struct Injection {
  std::vector<std::pair<std::string, std::string>> env;  // set in the child, in order
  std::vector<std::string> notes;                        // for stderr; no secrets
};

// Load the cached credentials, exporting them (outside the boundary, within the launch
// budget) when missing or due. `child_env` is the environment the child gets otherwise
// ("K=V"), used to number GIT_CONFIG_* after entries it already has.
Injection prepare_injection(const std::string& session_dir, const BoundaryConfig& config,
                            const std::vector<std::string>& child_env);

// One phrase per requested credential for a hook's reason, from the caches only: what
// will be injected, or why not.
std::vector<std::string> injection_notes(const std::string& session_dir,
                                         const BoundaryConfig& config, double now);

// For `status`: per credential what is requested, the pinned tool and the cache's state
// (times and the last error), never a value.
nlohmann::ordered_json credential_status(const std::string& session_dir,
                                         const BoundaryConfig& config, double now);
std::vector<std::string> credential_status_lines(const std::string& session_dir,
                                                 const BoundaryConfig& config, double now);

// After a session is (re)generated: delete cached credentials it no longer asks for (or
// of another AWS profile), so no secret outlives the request.
void remove_unrequested(const std::string& session_dir, const BoundaryConfig& config);

}  // namespace agent_boundary::credentials
