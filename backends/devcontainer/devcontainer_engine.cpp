// The container engine: finding and checking podman or docker, reading a project's
// devcontainer.json through the Dev Containers CLI, and starting, checking and removing a
// session's container.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "agent_boundary/error.hpp"
#include "agent_boundary/executables.hpp"
#include "agent_boundary/host_path.hpp"
#include "agent_boundary/process.hpp"
#include "devcontainer_backend.hpp"

namespace agent_boundary::devcontainer {
namespace {

constexpr int kQuickTimeoutMs = 30000;
constexpr int kRunTimeoutMs = 120000;

std::string engine_fix() {
  return "install podman (Debian: apt-get install podman runc) or docker, or set "
         "AGENT_BOUNDARY_CONTAINER_ENGINE to the absolute path of one";
}

// "podman version 4.3.1" / "Docker version 28.2.2, build e6534b4" -> "podman 4.3.1".
std::string identify(const std::string& exe) {
  ProcessOptions opts;
  opts.argv = {exe, "--version"};
  opts.timeout_ms = kQuickTimeoutMs;
  const ProcessResult r = run_process(opts);
  const std::string line = first_line(r.out);
  if (!r.ok()) return {};
  for (const auto& [prefix, kind] :
       {std::pair<std::string, std::string>{"podman version ", "podman"},
        {"Docker version ", "docker"}}) {
    if (line.rfind(prefix, 0) == 0) {
      std::string v = line.substr(prefix.size());
      v = v.substr(0, v.find_first_of(", "));
      return kind + " " + v;
    }
  }
  return {};
}

// The Dev Containers CLI is a Node script: the script and its interpreter are pinned by
// absolute path, so `#!/usr/bin/env node` never searches a PATH the agent could write.
void find_cli(const GetEnv& getenv, std::map<std::string, std::string>& tools) {
  std::vector<std::string> clis, nodes;
  if (const char* v = getenv("AGENT_BOUNDARY_DEVCONTAINER_CLI"); v && *v)
    clis.push_back(v);
  else
    clis = executable_search("devcontainer");
  if (const char* v = getenv("AGENT_BOUNDARY_NODE"); v && *v)
    nodes.push_back(v);
  else
    nodes = executable_search("node");
  const std::string cli = first_executable(clis), node = first_executable(nodes);
  if (!cli.empty() && !node.empty()) {
    tools["node"] = node;
    tools["devcontainer-cli"] = cli;
  }
}

std::vector<std::string> engine_cmd(const Spec& spec, std::initializer_list<std::string> rest) {
  std::vector<std::string> a = {spec.engine};
  a.insert(a.end(), spec.engine_args.begin(), spec.engine_args.end());
  a.insert(a.end(), rest);
  return a;
}

// Our environment, with the sbin directories on PATH: podman's network helper (netavark)
// runs iptables by name, and fails with "netavark: No such file or directory" when the
// caller's PATH (a hook's, a test's) has no /usr/sbin.
std::vector<std::string> engine_env() {
  std::vector<std::string> env;
  std::string path;
  for (char** e = ::environ; *e; ++e) {
    std::string entry = *e;
    if (entry.rfind("PATH=", 0) == 0)
      path = entry.substr(5);
    else
      env.push_back(std::move(entry));
  }
  for (const char* dir :
       {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}) {
    if ((":" + path + ":").find(std::string(":") + dir + ":") == std::string::npos)
      path += (path.empty() ? "" : ":") + std::string(dir);
  }
  env.push_back("PATH=" + path);
  return env;
}

ProcessResult run(const std::vector<std::string>& argv, int timeout_ms) {
  ProcessOptions opts;
  opts.argv = argv;
  opts.env = engine_env();
  opts.timeout_ms = timeout_ms;
  return run_process(opts);
}

std::string why(const ProcessResult& r) {
  if (r.timed_out) return "timed out";
  std::string w = first_line(r.err.empty() ? r.out : r.err, 400);
  return w.empty() ? "exit code " + std::to_string(r.exit_code) : w;
}

std::string pidfile_of(const std::string& name) { return runtime_dir() + "/" + name + ".pid"; }

void make_runtime_dir() {
  const std::string dir = runtime_dir();
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw BackendError("cannot create " + dir + ": " + std::strerror(errno), dir);
}

// An exclusive lock per container name: two commands that find the container gone start it
// once; a start does not race a concurrent one.
class NameLock {
 public:
  explicit NameLock(const std::string& name) {
    make_runtime_dir();
    const std::string path = runtime_dir() + "/" + name + ".lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) throw BackendError("cannot open " + path + ": " + std::strerror(errno), path);
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~NameLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  NameLock(const NameLock&) = delete;
  NameLock& operator=(const NameLock&) = delete;

 private:
  int fd_ = -1;
};

// Runs argv in a grandchild in its own session, stdio on /dev/null, and returns at once:
// a session-end hook has about a second, and a harness that waits for the hook's output
// must not wait for the engine.
void spawn_detached(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> env_strings = engine_env();
  std::vector<char*> env;
  for (const auto& e : env_strings) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  const pid_t child = ::fork();
  if (child < 0) throw BackendError(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    ::setsid();
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      const int null = ::open("/dev/null", O_RDWR);
      if (null >= 0) {
        ::dup2(null, 0);
        ::dup2(null, 1);
        ::dup2(null, 2);
      }
      ::close_range(3, ~0U, 0);
      ::signal(SIGHUP, SIG_IGN);
      ::execve(args[0], args.data(), env.data());
      ::_exit(127);
    }
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
}

bool conmon_alive(const std::string& name) {
  std::ifstream in(pidfile_of(name));
  long pid = 0;
  if (!(in >> pid) || pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
  // conmon's argv holds `-n <name>`: a recycled pid does not.
  return all.find(std::string("\0-n\0", 4) + name + std::string("\0", 1)) != std::string::npos;
}

// The pid files and locks of containers that are gone (removed by hand, a deleted session,
// a reboot's leftovers under XDG_RUNTIME_DIR). A lock untouched for ten minutes belongs to
// no start in progress (a start takes seconds).
void prune_runtime_dir(const std::string& keep) {
  const std::string dir = runtime_dir();
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string file = e->d_name;
    if (file.size() > 5 && file.compare(file.size() - 5, 5, ".lock") == 0)
      names.push_back(file.substr(0, file.size() - 5));
  }
  ::closedir(d);
  const time_t cutoff = ::time(nullptr) - 600;
  for (const auto& name : names) {
    if (name == keep || name.rfind(kNamePrefix, 0) != 0) continue;
    struct stat st {};
    const std::string lock = dir + "/" + name + ".lock";
    if (::lstat(lock.c_str(), &st) != 0 || st.st_mtime > cutoff || conmon_alive(name)) continue;
    ::unlink(pidfile_of(name).c_str());
    ::unlink(lock.c_str());
  }
}

}  // namespace

EngineKind engine_kind_of(const BackendExecutable& exe) {
  return exe.version.rfind("docker", 0) == 0 ? EngineKind::docker : EngineKind::podman;
}

BackendExecutable find_engine(const std::string& hint, const GetEnv& getenv) {
  std::vector<std::string> candidates;
  bool explicit_choice = true;
  if (!hint.empty()) {
    candidates.push_back(hint);
  } else if (const char* env = getenv("AGENT_BOUNDARY_CONTAINER_ENGINE"); env && *env) {
    candidates.push_back(env);
  } else {
    // podman first: tests and the Debian packages use it; docker when only docker is there.
    explicit_choice = false;
    for (const char* name : {"podman", "docker"})
      for (const auto& c : executable_search(name)) candidates.push_back(c);
  }
  for (const auto& c : candidates) {
    if (c.empty() || c[0] != '/')
      throw BackendError("the container engine path `" + c + "` is not absolute", c, engine_fix());
    if (!is_executable_file(c)) {
      if (explicit_choice)
        throw BackendError("no container engine is executable at " + c, c, engine_fix());
      continue;
    }
    const std::string exe = resolve_path(c);
    const std::string version = identify(exe);
    if (version.empty()) {
      if (explicit_choice)
        throw BackendError("`" + exe + " --version` identified neither podman nor docker", exe,
                           engine_fix());
      continue;
    }
    BackendExecutable out{exe, version, {}};
    find_cli(getenv, out.tools);
    return out;
  }
  throw BackendError(
      "no container engine was found (looked for podman and docker in "
      "/usr/local/bin, /usr/bin and PATH)",
      {}, engine_fix());
}

void check_engine(const BackendExecutable& exe, const Options& options) {
  const EngineKind kind = engine_kind_of(exe);
  std::vector<std::string> argv = {exe.path};
  argv.insert(argv.end(), options.engine_args.begin(), options.engine_args.end());
  // podman validates the runtime and the cgroup manager on every command: `ps -q` (60 ms)
  // checks both, where `info` costs 400 ms. docker: the daemon must answer.
  if (kind == EngineKind::podman)
    argv.insert(argv.end(), {"ps", "-q"});
  else
    argv.insert(argv.end(), {"version", "--format", "{{.Server.Version}}"});
  const ProcessResult r = run(argv, kQuickTimeoutMs);
  if (!r.ok())
    throw BackendError(
        std::string(to_string(kind)) + " does not work here: " + why(r), exe.path,
        kind == EngineKind::podman
            ? "podman as root on Debian 12 needs `--runtime runc --cgroup-manager cgroupfs` "
              "(crun fails on a hybrid cgroup layout; apt-get install runc); set the global "
              "flags with AGENT_BOUNDARY_DEVCONTAINER_ENGINE_ARGS"
            : "start the docker daemon, or install podman");
  // The engine's default nofile limit can exceed this machine's hard limit; the explicit
  // limits must fit under ours, or every container start fails.
  for (const auto& u : options.ulimits) {
    const auto eq = u.find('=');
    const std::string name = u.substr(0, eq);
    int resource = -1;
    if (name == "nofile") resource = RLIMIT_NOFILE;
    if (name == "nproc") resource = RLIMIT_NPROC;
    if (resource < 0) continue;
    const std::string value = u.substr(eq + 1);
    const std::string hard_text =
        value.substr(value.find(':') == std::string::npos ? 0 : value.find(':') + 1);
    char* end = nullptr;
    const unsigned long long hard = std::strtoull(hard_text.c_str(), &end, 10);
    struct rlimit rl {};
    if (!end || *end != '\0' || ::getrlimit(resource, &rl) != 0) continue;
    if (rl.rlim_max != RLIM_INFINITY && hard > rl.rlim_max)
      throw BackendError("the container ulimit " + u + " exceeds this process's hard limit (" +
                             std::to_string(rl.rlim_max) + ")",
                         {},
                         "lower it with AGENT_BOUNDARY_DEVCONTAINER_ULIMITS (default "
                         "`nofile=1024:1024 nproc=4096:4096`)");
  }
}

void check_image(const Spec& spec) {
  const ProcessResult r = run(
      engine_cmd(spec, {"image", "inspect", "--format", "{{.Id}}", spec.image}), kQuickTimeoutMs);
  if (r.ok()) return;
  throw BackendError(
      "the image " + spec.image + " (from " + spec.image_origin + ") is not in " +
          to_string(spec.engine_kind) + "'s local storage; agent-boundary never pulls one",
      spec.image_origin == "options" ? std::string() : spec.image_origin,
      spec.image == kDefaultImage
          ? "build it with scripts/build-base-image.sh (no registry needed)"
          : "pull or build it first, or choose another with AGENT_BOUNDARY_DEVCONTAINER_IMAGE");
}

ProjectConfig read_project_config(const BackendExecutable& exe, const std::string& workdir,
                                  const std::string& file) {
  const auto node = exe.tools.find("node");
  const auto cli = exe.tools.find("devcontainer-cli");
  const std::string fix_off =
      "or set AGENT_BOUNDARY_DEVCONTAINER_PROJECT_CONFIG=0 to ignore it "
      "and use the configured base image";
  if (node == exe.tools.end() || cli == exe.tools.end())
    throw SessionError("the project has " + file +
                           ", but the Dev Containers CLI (or node) was not found when the "
                           "session was created",
                       file,
                       "install it (`npm install -g @devcontainers/cli@0.89.0`, or "
                       "scripts/install.sh) or set AGENT_BOUNDARY_DEVCONTAINER_CLI, " +
                           fix_off);
  // The file must be a regular file inside the workdir: a symlink to elsewhere would make
  // the host read (and partly copy into the container) a file the profile never granted.
  struct stat st {};
  const std::string real = resolve_path(file);
  if (::stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      !path_within(real, resolve_path(workdir)))
    throw SessionError(file + " is not a regular file inside the workdir", file,
                       "replace it with a plain file, " + fix_off);
  ProcessOptions opts;
  opts.argv = {node->second,
               cli->second,
               "read-configuration",
               "--workspace-folder",
               workdir,
               "--config",
               real,
               "--docker-path",
               exe.path,
               "--docker-compose-path",
               "/bin/false",
               "--mount-workspace-git-root",
               "false",
               "--log-level",
               "info"};
  // No ${localEnv:...} can reach a host secret: the CLI sees an empty environment.
  opts.env = std::vector<std::string>{"PATH=/usr/bin:/bin"};
  opts.cwd = "/";
  opts.timeout_ms = kQuickTimeoutMs;
  const ProcessResult r = run_process(opts);
  if (!r.ok())
    throw SessionError("the Dev Containers CLI could not read " + file + ": " + why(r), file,
                       "fix the file (`devcontainer read-configuration --workspace-folder " +
                           workdir + "` shows the error), " + fix_off);
  nlohmann::json out;
  try {
    out = nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    throw SessionError(
        std::string("the Dev Containers CLI printed no JSON for ") + file + ": " + e.what(), file,
        fix_off);
  }
  if (!out.is_object() || !out.contains("configuration"))
    throw SessionError("the Dev Containers CLI printed no configuration for " + file, file,
                       fix_off);
  return check_project_config(out["configuration"], file);
}

std::string runtime_dir() {
  if (::geteuid() == 0) return "/run/agent-boundary-devcontainer";
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && x[0] == '/')
    return std::string(x) + "/agent-boundary-devcontainer";
  return "/tmp/agent-boundary-devcontainer-" + std::to_string(::getuid());
}

bool container_alive(const Spec& spec) {
  // Only podman tells us where conmon (which lives exactly as long as the container) runs;
  // docker's container is assumed to run, and a stopped one fails the command visibly.
  return spec.engine_kind != EngineKind::podman || conmon_alive(spec.name);
}

void start_container(const Spec& spec, const std::string& staged_dir) {
  NameLock lock(spec.name);
  prune_runtime_dir(spec.name);
  const bool podman = spec.engine_kind == EngineKind::podman;
  // An earlier rendering of the same session may have left one of this name.
  run(podman ? engine_cmd(spec, {"rm", "-f", "-t", "0", "-i", spec.name})
             : engine_cmd(spec, {"rm", "-f", spec.name}),
      kQuickTimeoutMs);
  const std::string pidfile = podman ? pidfile_of(spec.name) : std::string();
  if (podman) ::unlink(pidfile.c_str());
  std::vector<std::string> skipped;
  const ProcessResult r =
      run(run_argv(spec, staged_dir, pidfile, host_stat(), &skipped), kRunTimeoutMs);
  if (!r.ok()) {
    // A failed start can leave a created, never-started container behind.
    run(podman ? engine_cmd(spec, {"rm", "-f", "-t", "0", "-i", spec.name})
               : engine_cmd(spec, {"rm", "-f", spec.name}),
        kQuickTimeoutMs);
    throw BackendError(
        "the session's container did not start: " + why(r), spec.engine,
        "check `" + spec.engine + " run` with the image " + spec.image +
            (podman ? "; podman as root on Debian 12 needs `--runtime runc --cgroup-manager "
                      "cgroupfs` and explicit ulimits (AGENT_BOUNDARY_DEVCONTAINER_ENGINE_ARGS, "
                      "AGENT_BOUNDARY_DEVCONTAINER_ULIMITS)"
                    : std::string()));
  }
  // The session's other containers (an earlier rendering) go; this one stays.
  const ProcessResult ps =
      run(engine_cmd(spec, {"ps", "-a", "--filter",
                            std::string("label=") + kSessionLabel + "=" + spec.session_dir,
                            "--format", "{{.Names}}"}),
          kQuickTimeoutMs);
  std::vector<std::string> others;
  std::istringstream names(ps.out);
  for (std::string n; std::getline(names, n);)
    if (!n.empty() && n != spec.name && n.rfind(kNamePrefix, 0) == 0) others.push_back(n);
  if (!others.empty()) {
    std::vector<std::string> rm =
        podman ? engine_cmd(spec, {"rm", "-f", "-t", "0", "-i"}) : engine_cmd(spec, {"rm", "-f"});
    rm.insert(rm.end(), others.begin(), others.end());
    run(rm, kQuickTimeoutMs);
    for (const auto& n : others) ::unlink(pidfile_of(n).c_str());
  }
}

void remove_detached(const Spec& spec, bool whole_session) {
  ::unlink(pidfile_of(spec.name).c_str());
  ::unlink((runtime_dir() + "/" + spec.name + ".lock").c_str());
  if (whole_session) {
    remove_session_detached(
        BackendExecutable{
            spec.engine, spec.engine_kind == EngineKind::docker ? "docker" : "podman", {}},
        spec.engine_args, spec.session_dir);
    return;
  }
  spawn_detached(spec.engine_kind == EngineKind::podman
                     ? engine_cmd(spec, {"rm", "-f", "-t", "0", "-i", spec.name})
                     : engine_cmd(spec, {"rm", "-f", spec.name}));
}

void remove_session_detached(const BackendExecutable& exe,
                             const std::vector<std::string>& engine_args,
                             const std::string& session_dir) {
  const std::string label = std::string("label=") + kSessionLabel + "=" + session_dir;
  if (engine_kind_of(exe) == EngineKind::podman) {
    std::vector<std::string> argv = {exe.path};
    argv.insert(argv.end(), engine_args.begin(), engine_args.end());
    argv.insert(argv.end(), {"rm", "-f", "-t", "0", "--filter", label});
    spawn_detached(argv);
    return;
  }
  // docker rm has no --filter: list, then remove (the values are arguments, never code).
  spawn_detached({"/bin/sh", "-c",
                  "ids=$(\"$0\" ps -aq --filter \"$1\") && [ -n \"$ids\" ] && \"$0\" rm -f $ids",
                  exe.path, label});
}

}  // namespace agent_boundary::devcontainer
