// The gitlinks (mode 160000 entries: submodules and added nested repositories) recorded in
// a git index, read straight from the file: no git process, no walk of the work tree. Host
// git enters every gitlink's work tree on `git status`, so these are the nested git dirs
// whose config the host will read.
#pragma once

#include <string>
#include <vector>

namespace agent_boundary::git {

struct IndexGitlinks {
  std::vector<std::string> paths;  // relative to the work tree, as stored
  std::string shared_index;        // split index: the file name of the shared part, or empty
};

// Index versions 2, 3 and 4; `hash_len` is 20 (SHA-1) or 32 (SHA-256). A missing index has
// no gitlinks. Throws SystemError for a file it cannot read or does not understand.
IndexGitlinks read_gitlinks(const std::string& index_file, std::size_t hash_len = 20);

}  // namespace agent_boundary::git
