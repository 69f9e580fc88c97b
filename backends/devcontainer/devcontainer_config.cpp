// The project's devcontainer.json: the refusal rules (pure), and where it is looked up.
//
// The file lives in the workdir, so the agent can write it: it is input to judge, never
// trusted. It is read only through the Dev Containers CLI's `read-configuration` (JSONC,
// variable substitution), run with a clean environment so `${localEnv:...}` cannot copy a
// host secret into the container, and without `--include-features-configuration`, so
// nothing is fetched; `read-configuration` never runs `initializeCommand` or any lifecycle
// command, never builds and never starts a container. From the result only `image`,
// `containerEnv`/`remoteEnv` and `containerUser`/`remoteUser` are applied: they change what
// runs inside the container, not what of the host it sees. Every key that would widen the
// boundary, run something on the host, build an image from host files or publish ports is
// refused with the key's name and the fix; keys that only matter to an editor or to
// lifecycle steps inside the container are ignored (and listed in the spec); a key this
// list does not know is refused, so a future key cannot widen the boundary unnoticed.
#include <sys/stat.h>

#include <cctype>
#include <map>
#include <set>

#include "agent_boundary/error.hpp"
#include "devcontainer_backend.hpp"

namespace agent_boundary::devcontainer {
namespace {

// Why each refused key is refused.
const std::map<std::string, std::string>& refused_keys() {
  static const std::map<std::string, std::string> keys = {
      {"initializeCommand", "runs a command on the host before the container starts"},
      {"mounts", "mounts host paths beyond the profile's grants"},
      {"runArgs",
       "passes raw flags to the container engine (privileges, mounts, devices, host "
       "namespaces)"},
      {"privileged", "gives the container every capability and the host's devices"},
      {"capAdd",
       "adds Linux capabilities (CAP_SYS_ADMIN would let it unmount the paths the boundary "
       "holds)"},
      {"securityOpt", "changes the container's seccomp/AppArmor/SELinux confinement"},
      {"workspaceMount", "changes what of the host is mounted as the workspace"},
      {"workspaceFolder",
       "moves the workspace; agent-boundary mounts the workdir at its own host path"},
      {"build", "builds an image from a build context on the host"},
      {"dockerFile", "builds an image from a build context on the host"},
      {"context", "builds an image from a build context on the host"},
      {"dockerComposeFile",
       "starts services through Docker Compose, whose files can mount "
       "and publish anything"},
      {"service", "belongs to a Docker Compose setup"},
      {"runServices", "belongs to a Docker Compose setup"},
      {"appPort", "publishes container ports on the host"},
      {"features",
       "installs Dev Container Features, which builds a new image from code "
       "fetched from a registry"},
      {"overrideFeatureInstallOrder", "belongs to Dev Container Features"},
  };
  return keys;
}

// Read and deliberately not applied: editor settings, port forwarding done by an editor,
// lifecycle commands (they would run inside the container; agent-boundary does not run
// them), and options the backend sets itself (init, the keep-alive command).
const std::set<std::string>& ignored_keys() {
  static const std::set<std::string> keys = {"$schema",
                                             "name",
                                             "customizations",
                                             "forwardPorts",
                                             "portsAttributes",
                                             "otherPortsAttributes",
                                             "shutdownAction",
                                             "overrideCommand",
                                             "updateRemoteUserUID",
                                             "userEnvProbe",
                                             "waitFor",
                                             "hostRequirements",
                                             "init",
                                             "secrets",
                                             "onCreateCommand",
                                             "updateContentCommand",
                                             "postCreateCommand",
                                             "postStartCommand",
                                             "postAttachCommand",
                                             "configFilePath"};
  return keys;
}

bool empty_value(const nlohmann::json& v) {
  return v.is_null() || ((v.is_object() || v.is_array()) && v.empty());
}

std::string key_fix(const std::string& file, const std::string& key) {
  return "remove `" + key + "` from " + file +
         " (ask for host paths in the agent-boundary profile instead), or set "
         "AGENT_BOUNDARY_DEVCONTAINER_PROJECT_CONFIG=0 to use the configured base image";
}

bool plain_word(const std::string& s) {
  if (s.empty() || s[0] == '-') return false;
  for (unsigned char c : s)
    if (c <= ' ' || c == 0x7f) return false;
  return true;
}

void read_env(const nlohmann::json& v, const std::string& key, const std::string& file,
              std::map<std::string, std::string>& out) {
  if (v.is_null()) return;
  if (!v.is_object())
    throw SessionError("`" + key + "` in " + file + " is not a mapping of names to strings", file,
                       "write it as {\"NAME\": \"value\"}");
  for (const auto& [name, value] : v.items()) {
    if (value.is_null()) continue;  // the spec's way of unsetting a variable
    if (!value.is_string())
      throw SessionError("`" + key + "." + name + "` in " + file + " is not a string", file,
                         "quote the value");
    const std::string text = value.get<std::string>();
    bool name_ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (unsigned char c : name) name_ok = name_ok && (std::isalnum(c) || c == '_');
    if (!name_ok)
      throw SessionError("`" + key + "` in " + file + " names an invalid variable `" + name + "`",
                         file, "use letters, digits and _");
    // What read-configuration leaves unsubstituted is resolved inside a container by the
    // Dev Containers tooling (e.g. ${containerEnv:PATH}), which does not run here.
    if (text.find("${") != std::string::npos)
      throw SessionError("`" + key + "." + name + "` in " + file + " uses the substitution `" +
                             text + "`, which agent-boundary does not resolve",
                         file, "write the value out");
    out[name] = text;
  }
}

std::string read_user(const nlohmann::json& v, const std::string& key, const std::string& file) {
  if (v.is_null()) return {};
  if (!v.is_string() || !plain_word(v.get<std::string>()))
    throw SessionError("`" + key + "` in " + file + " is not a user name", file,
                       "give a user name or uid of the image");
  return v.get<std::string>();
}

}  // namespace

std::optional<std::string> find_project_config(const std::string& workdir) {
  for (const char* rel : {"/.devcontainer/devcontainer.json", "/.devcontainer.json"}) {
    struct stat st {};
    const std::string p = workdir + rel;
    if (::lstat(p.c_str(), &st) == 0) return p;
  }
  return std::nullopt;
}

ProjectConfig check_project_config(const nlohmann::json& configuration, const std::string& file) {
  if (!configuration.is_object())
    throw SessionError("the Dev Containers CLI returned no configuration for " + file, file);
  ProjectConfig out;
  out.file = file;
  std::vector<std::string> refused;
  std::string reasons;
  for (const auto& [key, value] : configuration.items()) {
    if (auto it = refused_keys().find(key); it != refused_keys().end()) {
      // An empty list or mapping asks for nothing (e.g. `"features": {}`).
      if (empty_value(value) || (key == "privileged" && value == false)) {
        out.ignored.push_back(key);
        continue;
      }
      refused.push_back(key);
      reasons += (reasons.empty() ? "" : "; ") + ("`" + key + "` " + it->second);
      continue;
    }
    if (key == "image") {
      if (!value.is_string() || !plain_word(value.get<std::string>()))
        throw SessionError("`image` in " + file + " is not an image name", file,
                           "name a local image, e.g. localhost/agent-boundary-base:bookworm");
      out.image = value.get<std::string>();
    } else if (key == "containerEnv" || key == "remoteEnv") {
      read_env(value, key, file, out.env);
    } else if (key == "containerUser") {
      out.container_user = read_user(value, key, file);
    } else if (key == "remoteUser") {
      out.remote_user = read_user(value, key, file);
    } else if (ignored_keys().count(key)) {
      if (key != "configFilePath") out.ignored.push_back(key);
    } else {
      refused.push_back(key);
      reasons += (reasons.empty() ? "" : "; ") +
                 ("`" + key + "` is not a key agent-boundary knows to be safe");
    }
  }
  if (!refused.empty()) {
    std::string names;
    for (const auto& k : refused) names += (names.empty() ? "`" : ", `") + k + "`";
    throw SessionError("the project's devcontainer.json sets " + names +
                           ", which the devcontainer backend refuses: " + reasons,
                       file, key_fix(file, refused.front()));
  }
  if (out.image.empty())
    throw SessionError("the project's devcontainer.json names no `image`", file,
                       "set `image` to a local image (agent-boundary neither builds nor pulls "
                       "one), or set AGENT_BOUNDARY_DEVCONTAINER_PROJECT_CONFIG=0");
  return out;
}

}  // namespace agent_boundary::devcontainer
