// Policy generation: profile + workdir + this machine -> ResolvedPolicy. Runs at session
// creation and on `reload`/`use` only; the hook path reads the pinned result.
#pragma once

#include <string>
#include <vector>

#include "agent_boundary/policy.hpp"
#include "profile.hpp"

namespace agent_boundary {

struct GenerationContext {
  std::string workdir;  // absolute, symlinks resolved
  // Denied to the sandbox (granted read+write instead when the profile has self_edit):
  // the session dir, the profiles dir, the plugin dir and the whole state root.
  std::vector<std::string> protected_paths;
  // agent-boundary's own installation (plugin dir, a harness plugin's files): never granted,
  // self_edit or not, and not denied either (reading code is harmless; that no sandbox can
  // write it is checked at session creation).
  std::vector<std::string> installation_paths;
  // The state root (one of protected_paths). With self_edit only its sessions/ opens: the
  // runtimes/ and bin/ that hooks execute stay denied.
  std::string state_root;
  // Files inside protected dirs the sandbox must still read (e.g. a session kubeconfig).
  std::vector<std::string> readable_protected;
  // Grants beyond the profile's (whole-agent mode: the harness's own state, and the hook
  // runtime read-only). Existing paths only; the caller checked them.
  std::vector<Grant> extra_grants;
};

struct GenerationResult {
  ResolvedPolicy policy;
  std::vector<std::string> warnings;  // e.g. a grant that matched nothing
};

// Throws ProfileError (with the entry's position) for a path that cannot be expanded.
GenerationResult generate_policy(const Profile& profile, const GenerationContext& context);

}  // namespace agent_boundary
