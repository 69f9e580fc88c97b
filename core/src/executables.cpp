#include "agent_boundary/executables.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <sstream>

#include "agent_boundary/host_path.hpp"

namespace agent_boundary {

std::vector<std::string> executable_search(const std::string& name) {
  std::vector<std::string> out;
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) out.push_back(parent_dir(std::string(self, static_cast<std::size_t>(n))) + "/" + name);
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
