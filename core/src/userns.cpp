#include "userns.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace agent_boundary {
namespace {

bool write_proc_file(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

}  // namespace

bool map_ids_to_self(uid_t uid, gid_t gid) {
  return write_proc_file("/proc/self/setgroups", "deny") &&
         write_proc_file("/proc/self/uid_map",
                         std::to_string(uid) + " " + std::to_string(uid) + " 1") &&
         write_proc_file("/proc/self/gid_map",
                         std::to_string(gid) + " " + std::to_string(gid) + " 1");
}

}  // namespace agent_boundary
