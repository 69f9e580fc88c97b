#include "host_sockets.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace agent_boundary::host_sockets {
namespace {

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

bool is_socket(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

std::string socket_path_of(std::string_view value) {
  for (std::string_view prefix : {"unix:path=", "unix://", "unix:"})
    if (value.starts_with(prefix)) {
      value.remove_prefix(prefix.size());
      break;
    }
  if (!value.starts_with('/')) return {};
  // The whole value first, then cut at each separator a tool appends after the path.
  std::vector<std::string> candidates{std::string(value)};
  for (char sep : {',', ';', ':'})
    if (const auto at = value.find(sep); at != std::string_view::npos)
      candidates.emplace_back(value.substr(0, at));
  for (const auto& c : candidates)
    if (is_socket(c)) return c;
  return candidates.back();
}

std::vector<std::string> allowed_sockets(const std::vector<std::string>& entries,
                                         const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (const auto& entry : entries) {
    std::string path;
    if (entry.starts_with('/')) {
      path = entry;
    } else {
      for (const auto& kv : env)
        if (kv.size() > entry.size() && kv.starts_with(entry) && kv[entry.size()] == '=')
          path = socket_path_of(std::string_view(kv).substr(entry.size() + 1));
    }
    if (is_socket(path)) out.push_back(path);
  }
  return out;
}

bool is_allowed(const std::string& path, const std::vector<std::string>& allowed) {
  struct stat st {};
  if (allowed.empty() || ::lstat(path.c_str(), &st) != 0) return false;
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) {
    struct stat at {};
    return ::lstat(a.c_str(), &at) == 0 && same_inode(st, at);
  });
}

std::vector<std::string> sockets_to_hide(const std::vector<std::string>& allowed) {
  // "Num RefCount Protocol Flags Type St Inode Path": the path is what follows the seventh
  // field (it may hold spaces); abstract names start with '@', unbound sockets have none.
  // A name bound relative to a directory cannot be located and is skipped.
  std::ifstream in("/proc/net/unix");
  std::string line;
  std::getline(in, line);
  std::set<std::string> seen;
  std::vector<std::string> out;
  while (std::getline(in, line)) {
    std::size_t pos = 0;
    for (int field = 0; field < 7 && pos != std::string::npos; ++field) {
      pos = line.find_first_not_of(' ', pos);
      if (pos != std::string::npos) pos = line.find(' ', pos);
    }
    if (pos == std::string::npos) continue;
    pos = line.find_first_not_of(' ', pos);
    if (pos == std::string::npos || line[pos] != '/') continue;
    std::string path = line.substr(pos);
    if (!seen.insert(path).second) continue;
    if (is_socket(path) && !is_allowed(path, allowed)) out.push_back(std::move(path));
  }
  return out;
}

}  // namespace agent_boundary::host_sockets
