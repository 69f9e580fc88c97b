#include "agent_boundary/host_path.hpp"

#include <cstdlib>

namespace agent_boundary {

bool path_within(const std::string& path, const std::string& dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string resolve_path(const std::string& path) {
  std::string head = path, tail;
  while (head.size() > 1) {
    if (char* r = ::realpath(head.c_str(), nullptr)) {
      std::string out = r;
      std::free(r);
      return tail.empty() ? out : (out == "/" ? "" : out) + tail;
    }
    const auto slash = head.find_last_of('/');
    if (slash == std::string::npos) return path;
    tail = head.substr(slash) + tail;
    head = slash == 0 ? "/" : head.substr(0, slash);
  }
  return path;
}

}  // namespace agent_boundary
