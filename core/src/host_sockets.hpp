// Host Unix sockets (issue 14). Landlock (ABI 7, kernel 6.18) does not govern connect() on a
// pathname socket, so a sandboxed command could talk to any service listening on one: the
// ssh-agent, gpg-agent, the D-Bus session bus, the docker/podman API, an IDE. The launcher
// hides every socket bound on the host when a command starts (protect: an empty read-only
// file is bound over it in the command's mount namespace), except those the profile's
// `allow_host_sockets` names by path or by the variable that holds the path.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent_boundary::host_sockets {

// The socket a variable's value points at ("/p", "unix:/p", "unix://p", "unix:path=/p,guid=..",
// gpg's "/p:pid:1", tmux's "/p,pid,idx"): the first candidate that is a socket here, else the
// plain path form (possibly absent), else empty.
std::string socket_path_of(std::string_view value);

// True when `path` is a socket (lstat) on this machine.
bool is_socket(const std::string& path);

// The allowed sockets at launch: profile entries are absolute paths or variable names
// (looked up in `env`, "K=V" entries). Only existing sockets are returned.
std::vector<std::string> allowed_sockets(const std::vector<std::string>& entries,
                                         const std::vector<std::string>& env);

// True when `path` names one of `allowed` (same inode).
bool is_allowed(const std::string& path, const std::vector<std::string>& allowed);

// Pathname sockets bound in this network namespace (/proc/net/unix) that exist here as
// sockets and are not allowed: the ones a command must not reach.
std::vector<std::string> sockets_to_hide(const std::vector<std::string>& allowed);

}  // namespace agent_boundary::host_sockets
