#pragma once

#include <sys/types.h>

namespace agent_boundary {

// The id maps of a user namespace the caller has just entered: one uid and one gid, each
// mapped to itself (setgroups denied first, as an unprivileged map requires). False, with
// errno set, when the kernel refuses. The launcher's namespaces (protect/, freeze/) use it.
bool map_ids_to_self(uid_t uid, gid_t gid);

}  // namespace agent_boundary
