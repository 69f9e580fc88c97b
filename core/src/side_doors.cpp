#include "side_doors.hpp"

#include <algorithm>

#include "env_policy.hpp"
#include "host_sockets.hpp"

namespace agent_boundary {

std::vector<std::string> close_side_doors(const BoundaryConfig& config, const Backend& backend,
                                          LaunchPlan& plan) {
  env_policy::Scrub scrub;
  scrub.keep_secret_env = config.keep_secret_env;
  for (const auto& entry : config.allow_host_sockets)
    if (!entry.starts_with('/')) scrub.allowed_socket_variables.push_back(entry);
  // Resolved against the caller's environment before the scrub removes the variables.
  scrub.allowed_sockets = host_sockets::allowed_sockets(config.allow_host_sockets, plan.env);
  env_policy::scrub(plan.env, scrub);
  std::vector<std::string> passed;
  for (const auto& entry : plan.env) {
    const std::string name = entry.substr(0, entry.find('='));
    if (std::find(scrub.keep_secret_env.begin(), scrub.keep_secret_env.end(), name) !=
            scrub.keep_secret_env.end() ||
        std::find(scrub.allowed_socket_variables.begin(), scrub.allowed_socket_variables.end(),
                  name) != scrub.allowed_socket_variables.end())
      passed.push_back(name);
  }
#ifdef __linux__
  // srt (bubblewrap) and devcontainer (a container) build the command's filesystem
  // themselves: host sockets are theirs to keep out. For the others (nono: Landlock does
  // not govern connect() on a pathname socket) the launcher's mount namespace hides them.
  if (backend.holds_paths()) return passed;
#ifdef AB_MUTANT_HOST_SOCKETS
  return passed;  // mutant (tests/mutation only): no socket is hidden
#endif
  for (auto& path : host_sockets::sockets_to_hide(scrub.allowed_sockets)) {
    const bool already = std::any_of(plan.protection.mounts.begin(), plan.protection.mounts.end(),
                                     [&](const protect::MountOp& m) { return m.path == path; });
    if (!already) plan.protection.mounts.push_back({std::move(path), false, true});
  }
#endif
  return passed;
}

}  // namespace agent_boundary
