#include "agent_boundary/executables.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <sstream>

namespace agent_boundary {
namespace {

std::string dir_of(const std::string& p) {
  const auto slash = p.find_last_of('/');
  return slash == 0 || slash == std::string::npos ? "/" : p.substr(0, slash);
}

}  // namespace

std::vector<std::string> executable_search(const std::string& name) {
  std::vector<std::string> out;
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) out.push_back(dir_of(std::string(self, static_cast<std::size_t>(n))) + "/" + name);
  for (const char* dir : {"/usr/local/bin", "/usr/bin"})
    out.push_back(std::string(dir) + "/" + name);
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');)
      if (!dir.empty() && dir[0] == '/') out.push_back(dir + "/" + name);
  }
  return out;
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string first_executable(const std::vector<std::string>& candidates) {
  for (const auto& c : candidates)
    if (!c.empty() && c[0] == '/' && is_executable_file(c)) return resolve_path(c);
  return {};
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

int compare_versions(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  for (int i = 0; i < 4; ++i) {
    long x = 0, y = 0;
    char dot = 0;
    sa >> x;
    sb >> y;
    if (x != y) return x < y ? -1 : 1;
    sa >> dot;
    sb >> dot;
  }
  return 0;
}

}  // namespace agent_boundary
