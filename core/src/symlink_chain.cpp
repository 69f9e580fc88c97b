#include "symlink_chain.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <set>

#include "paths.hpp"

namespace fs = std::filesystem;

namespace agent_boundary {
namespace {

bool is_symlink(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

bool exists_following(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

std::string read_link(const std::string& p) {
  std::string buf(4096, '\0');
  const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size());
  if (n <= 0) return {};
  buf.resize(static_cast<std::size_t>(n));
  return buf;
}

}  // namespace

std::vector<std::string> symlink_chain(const std::string& path, std::size_t max_hops) {
  std::vector<std::string> chain;
  std::set<std::string> seen;
  std::deque<std::string> todo{absolute_normal(path, "/")};
  while (!todo.empty() && chain.size() < max_hops) {
    const std::string cur = todo.front();
    todo.pop_front();
    if (!seen.insert(cur).second) continue;
    const bool link = is_symlink(cur);
    if (!link && !exists_following(cur)) continue;
    chain.push_back(cur);
    if (link) {
      const std::string target = read_link(cur);
      if (!target.empty())
        todo.push_back(absolute_normal(target, fs::path(cur).parent_path().string()));
    }
    for (fs::path anc = fs::path(cur).parent_path(); anc != anc.root_path();
         anc = anc.parent_path()) {
      if (is_symlink(anc.string())) todo.push_back(anc.string());
    }
  }
  return chain;
}

}  // namespace agent_boundary
