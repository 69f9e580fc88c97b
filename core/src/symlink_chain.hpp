// Following a symlink chain hop by hop. Granting a link does not grant what it points to,
// and realpath() would hide the intermediate links a sandbox must let the open pass
// through, so every hop (and every symlinked ancestor of a hop) is listed.
#pragma once

#include <string>
#include <vector>

namespace agent_boundary {

// Every path that must be granted for `path` to be openable through its links, in
// discovery order: `path` itself, each link target, and each symlinked ancestor with its
// targets. Paths that neither exist nor are dangling links are skipped. Loop safe.
std::vector<std::string> symlink_chain(const std::string& path, std::size_t max_hops = 256);

}  // namespace agent_boundary
