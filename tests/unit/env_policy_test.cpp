// The environment policy and the host-socket helpers (issue 14).
#include "env_policy.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "host_sockets.hpp"

namespace ab = agent_boundary;
namespace fs = std::filesystem;

namespace {

bool has(const std::vector<std::string>& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(),
                     [&](const std::string& e) { return e.starts_with(name + "="); });
}

// A bound socket in a fresh directory under the build tree (never /tmp).
struct BoundSocket {
  std::string path;
  int fd = -1;
  explicit BoundSocket(const std::string& name) {
    const fs::path dir = fs::current_path() / "env_policy_test";
    fs::create_directories(dir);
    path = (dir / name).string();
    ::unlink(path.c_str());
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path.copy(a.sun_path, sizeof a.sun_path - 1);
    fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd, 1), 0);
  }
  ~BoundSocket() {
    ::close(fd);
    ::unlink(path.c_str());
  }
};

}  // namespace

TEST(EnvPolicy, SecretNames) {
  for (const char* n :
       {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GH_TOKEN", "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "DB_PASSWORD", "client_secret",
        "GOOGLE_APPLICATION_CREDENTIALS", "NPM_AUTH_TOKEN", "MY_APIKEY", "VAULT_TOKEN"})
    EXPECT_TRUE(ab::env_policy::is_secret_name(n)) << n;
  for (const char* n : {"PATH", "HOME", "TERM", "LANG", "KEYBOARD", "TOKENIZERS_PARALLELISM",
                        "EDITOR", "GIT_CONFIG_COUNT"})
    EXPECT_FALSE(ab::env_policy::is_secret_name(n)) << n;
}

TEST(EnvPolicy, LoaderVariables) {
  for (const char* n :
       {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH", "GLIBC_TUNABLES"})
    EXPECT_TRUE(ab::env_policy::is_loader_variable(n)) << n;
  EXPECT_FALSE(ab::env_policy::is_loader_variable("OLD_PWD"));
}

TEST(EnvPolicy, ScrubKeepsWhatTheProfileNames) {
  std::vector<std::string> env = {"PATH=/usr/bin",       "ANTHROPIC_API_KEY=sk",
                                  "LD_PRELOAD=/x.so",    "DEPLOY_PASSWORD=pw",
                                  "SSH_AUTH_SOCK=/nope", "DBUS_SESSION_BUS_ADDRESS=unix:path=/x",
                                  "HARMLESS=1"};
  ab::env_policy::scrub(env, {{"DEPLOY_PASSWORD"}, {}, {}});
  EXPECT_TRUE(has(env, "PATH"));
  EXPECT_TRUE(has(env, "HARMLESS"));
  EXPECT_TRUE(has(env, "DEPLOY_PASSWORD"));
  EXPECT_FALSE(has(env, "ANTHROPIC_API_KEY"));
  EXPECT_FALSE(has(env, "LD_PRELOAD"));
  EXPECT_FALSE(has(env, "SSH_AUTH_SOCK"));
  EXPECT_FALSE(has(env, "DBUS_SESSION_BUS_ADDRESS"));
}

TEST(EnvPolicy, AVariableNamingAHostSocketIsDroppedUnlessAllowed) {
  BoundSocket s("svc.sock");
  std::vector<std::string> env = {"MY_IDE_IPC=" + s.path, "OTHER=unix:path=" + s.path + ",x=1"};
  auto copy = env;
  ab::env_policy::scrub(copy, {});
  EXPECT_TRUE(copy.empty());
  const auto allowed = ab::host_sockets::allowed_sockets({"MY_IDE_IPC"}, env);
  ASSERT_EQ(allowed, std::vector<std::string>{s.path});
  ab::env_policy::scrub(env, {{}, allowed, {"MY_IDE_IPC"}});
  EXPECT_EQ(env.size(), 2u);
}

TEST(HostSockets, SocketPathOfTheUsualForms) {
  BoundSocket s("agent.sock");
  EXPECT_EQ(ab::host_sockets::socket_path_of(s.path), s.path);
  EXPECT_EQ(ab::host_sockets::socket_path_of("unix://" + s.path), s.path);
  EXPECT_EQ(ab::host_sockets::socket_path_of("unix:path=" + s.path + ",guid=1"), s.path);
  EXPECT_EQ(ab::host_sockets::socket_path_of(s.path + ":123:1"), s.path);
  EXPECT_EQ(ab::host_sockets::socket_path_of("wayland-0"), "");
}

TEST(HostSockets, BoundSocketsAreHiddenUnlessAllowed) {
  BoundSocket a("a.sock"), b("b.sock");
  const auto hidden = ab::host_sockets::sockets_to_hide({b.path});
  EXPECT_NE(std::find(hidden.begin(), hidden.end(), a.path), hidden.end());
  EXPECT_EQ(std::find(hidden.begin(), hidden.end(), b.path), hidden.end());
}
