// The devcontainer backend: the agent's commands run in one container per session that
// sees only the workdir and the granted paths (bind-mounted at their host paths, read-only
// or read-write as granted), started at session creation and reused by every command
// (`podman exec` / `docker exec`), so a command does not pay a container start.
//
// The image is the project's devcontainer.json `image` (read through the Dev Containers CLI,
// which never builds or runs anything here) or a configurable base image. Paths core holds
// inside writable grants (git hooks and config, agent settings, profile denies) are mounted
// over the grants: read-only binds, or empty read-only mounts for hidden ones.
//
// Network: profiles have no network key, and nono's default is an open network; the
// container gets the engine's default bridge network (outbound open) to match. Differences:
// the host's loopback services and abstract Unix sockets are NOT reachable from the bridge
// (nono leaves both reachable), and nono's domain filtering (`nono.network.allow_domain`
// and friends, a proxy) has no equivalent here and is refused rather than opened. A
// `nono.network.block: true` in the profile, or `network: none`, gives loopback only.
//
// Grants: a bind mount cannot be write-only, so a `write:` grant is mounted read-write.
// Paths absent at session start are not mounted (a container's mounts are fixed at start).
//
// Split in three: pure rendering (devcontainer_spec.cpp, devcontainer_config.cpp: unit
// tested without an engine), the engine (devcontainer_engine.cpp: processes, locks), and
// the Backend methods (devcontainer_backend.cpp).
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent_boundary/backend.hpp"
#include "agent_boundary/plugin_host.hpp"

namespace agent_boundary::devcontainer {

inline constexpr const char* kSpecFile = "devcontainer-spec.json";
// Rendered empty: the source of the read-only binds that hide denied files.
inline constexpr const char* kEmptyFile = "devcontainer-empty";
inline constexpr const char* kDefaultImage = "localhost/agent-boundary-base:bookworm";
// Every container carries the final session dir in this label; start and stop find the
// session's containers by it.
inline constexpr const char* kSessionLabel = "agent-boundary.session";
inline constexpr const char* kNamePrefix = "agent-boundary-";

enum class EngineKind { podman, docker };
const char* to_string(EngineKind k);

// ---------------------------------------------------------------------------------------
// Configuration: the profile's `devcontainer:` block (policy.backend_options), else the
// environment, else defaults that work on Debian 12 as root.

struct Options {
  std::string image = kDefaultImage;
  // "default": the engine's default (bridge) network, outbound traffic allowed, like nono's
  // default; "none": loopback only (also chosen when the profile's nono block blocks the
  // network).
  std::string network = "default";
  // Global engine flags put before every subcommand. podman as root on a hybrid cgroup
  // layout: crun fails ("cgroups in hybrid mode not supported"), runc with cgroupfs works.
  std::vector<std::string> engine_args;
  std::vector<std::string> ulimits = {"nofile=1024:1024", "nproc=4096:4096"};
  bool project_config = true;  // honour the project's devcontainer.json
};

using GetEnv = std::function<const char*(const char*)>;
// Throws BackendError naming the key when the block or a variable is malformed.
Options read_options(const ResolvedPolicy& policy, EngineKind engine, const GetEnv& getenv);
std::vector<std::string> default_engine_args(EngineKind engine);

// ---------------------------------------------------------------------------------------
// Mount plan (pure: the filesystem is seen through a StatFn).

struct PathInfo {
  bool exists = false;
  bool dir = false;
  unsigned long links = 1;
  std::string real;  // realpath of the longest existing prefix, the rest appended
};
using StatFn = std::function<PathInfo(const std::string&)>;
StatFn host_stat();

struct Mount {
  enum class Kind { bind, tmpfs };
  Kind kind = Kind::bind;
  std::string source;  // bind only
  std::string target;  // the same path as on the host
  bool read_only = false;
  // grant, held, hide (an empty read-only mount over a deny), pin (a self-bind that keeps a
  // directory above a held path from being renamed), probe (the probe helper)
  std::string why;
};

struct MountPlan {
  std::vector<Mount> mounts;  // outer targets first
  std::vector<DenyState> denies;
};

// `session_dir` is the final session dir (sources under it are mapped to the staged dir at
// start); `probe_helper` is mounted read-only at its own path.
MountPlan plan_mounts(const ResolvedPolicy& policy, const std::string& session_dir,
                      const std::string& probe_helper, const StatFn& stat);

// ---------------------------------------------------------------------------------------
// The project's devcontainer.json (agent-writable: read, never trusted).

struct ProjectConfig {
  std::string file;  // absolute
  std::string image;
  std::map<std::string, std::string> env;  // containerEnv + remoteEnv
  std::string container_user;              // `podman run --user`
  std::string remote_user;                 // `podman exec --user`
  std::vector<std::string> ignored;        // keys read and deliberately not applied
};

// <workdir>/.devcontainer/devcontainer.json, else <workdir>/.devcontainer.json (the CLI's
// own lookup order), else nullopt.
std::optional<std::string> find_project_config(const std::string& workdir);
// The refusal rules, on the configuration the CLI printed. Throws SessionError naming the
// key and the fix for every key that would widen the boundary, run on the host or build.
ProjectConfig check_project_config(const nlohmann::json& configuration, const std::string& file);

// ---------------------------------------------------------------------------------------
// The spec: everything start needs, rendered at session creation.

struct Spec {
  std::string name;         // kNamePrefix + hash of the rest
  std::string session_dir;  // final
  std::string engine;
  EngineKind engine_kind = EngineKind::podman;
  std::vector<std::string> engine_args;
  std::string image;
  std::string image_origin;  // "options", or the devcontainer.json it came from
  std::string network;
  std::vector<std::string> ulimits;
  std::map<std::string, std::string> env;  // set at container start (not secrets)
  std::string container_user, exec_user;
  std::vector<Mount> mounts;
  std::vector<std::string> ignored_keys;
};

std::string spec_to_json(const Spec& spec);  // `name` is recomputed from the content
Spec spec_from_json(const std::string& text, const std::string& where);
std::string container_name(const Spec& spec);

// A path of the final session dir as it is at start time (the staged dir).
std::string map_to_staged(const std::string& path, const std::string& final_dir,
                          const std::string& staged_dir);

// `<engine> <args> run -d ...`: absent bind sources are left out (listed in `skipped`).
std::vector<std::string> run_argv(const Spec& spec, const std::string& staged_dir,
                                  const std::string& conmon_pidfile, const StatFn& stat,
                                  std::vector<std::string>* skipped = nullptr);
// `freeze.json` (see core's freeze.hpp): the container's processes are children of the
// engine, not of the launcher, so core cannot stop them itself. "stop" signals every process
// of the container but its init and waits until each is stopped; "resume" continues them.
inline constexpr const char* kFreezeFile = "freeze.json";
std::string freeze_commands_json(const Spec& spec);

// `<engine> <args> exec -i [-t] [--user U] --workdir CWD --env NAME... NAME ARGV...`
std::vector<std::string> exec_argv(const Spec& spec, const std::string& cwd,
                                   const std::vector<std::string>& env_names,
                                   const std::vector<std::string>& argv, bool tty);
// Why the probe must deny `path` without asking the container: hidden by a mount, or not
// mounted at all (the container's own file of that name is not the host's). Empty: ask.
std::string probe_precheck(const Spec& spec, const std::string& path);

// ---------------------------------------------------------------------------------------
// The engine (devcontainer_engine.cpp).

EngineKind engine_kind_of(const BackendExecutable& exe);
BackendExecutable find_engine(const std::string& hint, const GetEnv& getenv);
void check_engine(const BackendExecutable& exe, const Options& options);
void check_image(const Spec& spec);
ProjectConfig read_project_config(const BackendExecutable& exe, const std::string& workdir,
                                  const std::string& file);
// Directory of the conmon pid files and start locks (podman only).
std::string runtime_dir();
bool container_alive(const Spec& spec);
// Creates the container of `spec` (replacing one of the same name), then removes the
// session's other containers. Serialized per container name.
void start_container(const Spec& spec, const std::string& staged_dir);
// Removes containers without waiting: `name` alone, or every container of the session.
void remove_detached(const Spec& spec, bool whole_session);
void remove_session_detached(const BackendExecutable& exe,
                             const std::vector<std::string>& engine_args,
                             const std::string& session_dir);

// ---------------------------------------------------------------------------------------

class DevcontainerBackend final : public Backend {
 public:
  explicit DevcontainerBackend(const PluginHost& host);

  BackendExecutable locate(const std::string& hint) const override;
  void preflight(const BackendExecutable& exe) const override;
  std::vector<DenyState> deny_state(const ResolvedPolicy& policy,
                                    const BackendExecutable& exe) const override;
  // Mounts hold them: read-only binds and empty read-only mounts over the grants.
  bool holds_paths() const override { return true; }
  std::vector<RenderedFile> render(const ResolvedPolicy& policy,
                                   const SessionView& session) const override;
  std::vector<std::string> wrap(const WrapRequest& request) const override;
  ProbeResult probe(const ProbeRequest& request) const override;
  void start(const SessionView& session) const override;
  void stop(const SessionView& session) const override;

 private:
  Spec read_spec(const std::string& session_dir) const;
  const PluginHost& host_;
};

}  // namespace agent_boundary::devcontainer
