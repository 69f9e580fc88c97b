#include "env_policy.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

#include "host_sockets.hpp"

extern char** environ;

namespace agent_boundary::env_policy {
namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string_view name_of(std::string_view entry) { return entry.substr(0, entry.find('=')); }

bool listed(std::string_view name, const std::vector<std::string>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

bool is_loader_variable(std::string_view name) {
  // glibc's own list of variables it ignores for setuid programs, plus GLIBC_TUNABLES.
  static constexpr std::array<std::string_view, 11> kNames = {
      "GCONV_PATH",   "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES",      "LOCALDOMAIN", "LOCPATH",
      "MALLOC_TRACE", "NIS_PATH",    "NLSPATH",        "RESOLV_HOST_CONF", "RES_OPTIONS"};
  return name.starts_with("LD_") || std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

bool is_secret_name(std::string_view raw) {
  const std::string name = upper(raw);
  if (name.starts_with("AWS_") || name.ends_with("_KEY") || name.ends_with("_TOKEN") ||
      name == "TOKEN" || name.ends_with("_PAT"))
    return true;
  for (std::string_view part : {"SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "APIKEY", "API_KEY",
                                "PRIVATE_KEY", "ACCESS_KEY", "AUTH_TOKEN", "_TOKEN_"})
    if (name.find(part) != std::string::npos) return true;
  return false;
}

bool is_socket_variable(std::string_view name) {
  static constexpr std::array<std::string_view, 17> kNames = {"SSH_AUTH_SOCK",
                                                              "SSH_AGENT_PID",
                                                              "GPG_AGENT_INFO",
                                                              "DBUS_SESSION_BUS_ADDRESS",
                                                              "DBUS_SYSTEM_BUS_ADDRESS",
                                                              "DOCKER_HOST",
                                                              "CONTAINER_HOST",
                                                              "PODMAN_HOST",
                                                              "WAYLAND_DISPLAY",
                                                              "PULSE_SERVER",
                                                              "SWAYSOCK",
                                                              "I3SOCK",
                                                              "TMUX",
                                                              "NVIM",
                                                              "NVIM_LISTEN_ADDRESS",
                                                              "VSCODE_IPC_HOOK_CLI",
                                                              "VSCODE_GIT_IPC_HANDLE"};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

void scrub(std::vector<std::string>& env, const Scrub& policy) {
  std::erase_if(env, [&](const std::string& entry) {
    const std::string_view name = name_of(entry);
#ifndef AB_MUTANT_LOADER_ENV  // mutant (tests/mutation only): loader variables pass
    if (is_loader_variable(name)) return true;
#endif
#ifndef AB_MUTANT_ENV_SECRETS  // mutant (tests/mutation only): secrets pass
    if (is_secret_name(name) && !listed(name, policy.keep_secret_env)) return true;
#endif
#ifdef AB_MUTANT_HOST_SOCKETS  // mutant (tests/mutation only): socket variables pass
    return false;
#endif
    if (listed(name, policy.allowed_socket_variables)) return false;
    const std::string_view value =
        entry.size() > name.size() ? std::string_view(entry).substr(name.size() + 1) : "";
    const std::string socket = host_sockets::socket_path_of(value);
    const bool names_socket = host_sockets::is_socket(socket);
    if (names_socket && host_sockets::is_allowed(socket, policy.allowed_sockets)) return false;
    return names_socket || is_socket_variable(name);
  });
}

void reexec_without_loader_variables(char** argv) {
#ifdef AB_MUTANT_LOADER_ENV
  return;  // mutant (tests/mutation only)
#endif
  std::vector<char*> kept;
  bool dropped = false;
  for (char** e = environ; e && *e; ++e) {
    if (is_loader_variable(name_of(*e)))
      dropped = true;
    else
      kept.push_back(*e);
  }
  if (!dropped) return;
  kept.push_back(nullptr);
  ::execve("/proc/self/exe", argv, kept.data());
  static constexpr char kMsg[] =
      "agent-boundary: cannot restart without the dynamic loader's variables (LD_*); unset "
      "them, or mount /proc\n";
  (void)!::write(2, kMsg, sizeof kMsg - 1);
  ::_exit(126);
}

}  // namespace agent_boundary::env_policy
