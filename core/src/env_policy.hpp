// What of the caller's environment reaches a sandboxed command (issue 14). The harness's
// environment (model providers' keys, cloud and forge tokens, agent sockets) would otherwise
// reach every command; the profile's own `env:` and the credential injection are set after
// this scrub, so they still apply. The dynamic loader's variables never reach agent-boundary
// itself (main re-executes without them) nor the backend executable.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace agent_boundary::env_policy {

// LD_*, GCONV_PATH, GLIBC_TUNABLES, ...: variables that make the dynamic loader or libc load
// or configure code in every program started with them.
bool is_loader_variable(std::string_view name);

// A name that marks a secret: *_KEY, *_TOKEN, *SECRET*, *PASSWORD*, *PASSWD*, *CREDENTIAL*,
// *APIKEY*, AWS_* (compared in upper case).
bool is_secret_name(std::string_view name);

// A variable that names a host socket service (SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS,
// DOCKER_HOST, WAYLAND_DISPLAY, TMUX, ...).
bool is_socket_variable(std::string_view name);

struct Scrub {
  std::vector<std::string> keep_secret_env;           // profile: names kept although secret-looking
  std::vector<std::string> allowed_sockets;           // existing sockets the profile allows (paths)
  std::vector<std::string> allowed_socket_variables;  // profile: variable names
};

// Removes from `env` ("K=V") the loader variables, the secret-looking names not kept, and
// every variable that names a host socket (by name, or by a value that is a socket here)
// unless that socket is allowed.
void scrub(std::vector<std::string>& env, const Scrub& policy);

// First thing in main: when the environment holds loader variables, execute this program
// again (/proc/self/exe) without them, so nothing agent-boundary starts inherits them.
// Returns only when there is nothing to drop; exits 126 when the re-exec fails.
void reexec_without_loader_variables(char** argv);

}  // namespace agent_boundary::env_policy
