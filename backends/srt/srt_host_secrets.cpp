// The root-only host files srt must hide although they lie in the system dirs it reads
// (issue 14: srt run as root showed the host's /etc/shadow). Read from this machine.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "srt_backend.hpp"

namespace agent_boundary::srt {

std::vector<std::string> SettingsInputs::default_host_secrets() {
  std::vector<std::string> out;
#ifdef AB_MUTANT_ROOT_SECRETS
  return out;  // mutant (tests/mutation only, never installed): nothing hidden
#endif
  struct stat st {};
  for (const char* p : {"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
                        "/etc/sudoers", "/etc/sudoers.d", "/etc/ssl/private"})
    if (::lstat(p, &st) == 0) out.emplace_back(p);
  if (DIR* d = ::opendir("/etc/ssh")) {
    while (const dirent* e = ::readdir(d)) {
      const std::string_view name = e->d_name;
      if (name.starts_with("ssh_host_") && name.ends_with("_key"))
        out.push_back("/etc/ssh/" + std::string(name));
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
  }
  return out;
}

}  // namespace agent_boundary::srt
