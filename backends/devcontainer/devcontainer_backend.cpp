#include "devcontainer_backend.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "agent_boundary/error.hpp"
#include "agent_boundary/plugin.hpp"
#include "agent_boundary/probe.hpp"
#include "agent_boundary/process.hpp"

namespace agent_boundary::devcontainer {
namespace {

const char* real_getenv(const char* name) { return std::getenv(name); }

std::optional<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (s.str().size() > (4u << 20)) return std::nullopt;
  return s.str();
}

}  // namespace

DevcontainerBackend::DevcontainerBackend(const PluginHost& host) : host_(host) {}

Spec DevcontainerBackend::read_spec(const std::string& session_dir) const {
  const std::string file = session_dir + "/" + kSpecFile;
  const auto text = read_small_file(file);
  if (!text)
    throw SessionError("the session has no devcontainer spec", file,
                       "run `agent-boundary --session-dir " + session_dir + " reload`");
  return spec_from_json(*text, file);
}

BackendExecutable DevcontainerBackend::locate(const std::string& hint) const {
  return find_engine(hint, real_getenv);
}

void DevcontainerBackend::preflight(const BackendExecutable& exe) const {
  // The image is checked when the session is rendered: it may come from the project's
  // devcontainer.json, which only render reads.
  check_engine(exe, read_options(ResolvedPolicy{}, engine_kind_of(exe), real_getenv));
  host_.debug("container engine " + exe.version + " at " + exe.path);
}

std::vector<DenyState> DevcontainerBackend::deny_state(const ResolvedPolicy& policy,
                                                       const BackendExecutable&) const {
  return plan_mounts(policy, {}, host_.helper_path("probe"), host_stat()).denies;
}

std::vector<RenderedFile> DevcontainerBackend::render(const ResolvedPolicy& policy,
                                                      const SessionView& session) const {
  const EngineKind kind = engine_kind_of(session.executable);
  const Options options = read_options(policy, kind, real_getenv);
  MountPlan plan =
      plan_mounts(policy, session.session_dir, host_.helper_path("probe"), host_stat());
  Spec spec;
  spec.session_dir = session.session_dir;
  spec.engine = session.executable.path;
  spec.engine_kind = kind;
  spec.engine_args = options.engine_args;
  spec.image = options.image;
  spec.image_origin = "options";
  spec.network = options.network;
  spec.ulimits = options.ulimits;
  spec.mounts = std::move(plan.mounts);
  if (options.project_config) {
    if (const auto file = find_project_config(session.workdir)) {
      const ProjectConfig project = read_project_config(session.executable, session.workdir, *file);
      spec.image = project.image;
      spec.image_origin = project.file;
      spec.env = project.env;
      spec.container_user = project.container_user;
      spec.exec_user = project.remote_user.empty() ? project.container_user : project.remote_user;
      spec.ignored_keys = project.ignored;
      host_.debug("image " + spec.image + " from " + project.file);
      if (!project.ignored.empty()) {
        std::string keys;
        for (const auto& k : project.ignored) keys += (keys.empty() ? "" : ", ") + k;
        host_.debug("devcontainer.json keys read and not applied: " + keys);
      }
    }
  }
  check_image(spec);
  return {
      {kSpecFile, spec_to_json(spec)}, {kEmptyFile, ""}, {kFreezeFile, freeze_commands_json(spec)}};
}

void DevcontainerBackend::start(const SessionView& session) const {
  const Spec spec = read_spec(session.session_dir);
  start_container(spec, session.session_dir);
  host_.debug("started container " + spec.name + " (image " + spec.image + ")");
}

void DevcontainerBackend::stop(const SessionView& session) const {
  std::optional<Spec> spec;
  try {
    spec = read_spec(session.session_dir);
  } catch (const Error&) {
    // No readable spec: remove whatever carries the session's label.
  }
  if (spec && spec->session_dir != session.session_dir) {
    remove_detached(*spec, false);  // a staged rendering that did not land: its container only
    return;
  }
  if (spec) {
    remove_detached(*spec, true);
    return;
  }
  if (session.executable.path.empty()) return;
  const EngineKind kind = engine_kind_of(session.executable);
  remove_session_detached(session.executable, default_engine_args(kind), session.session_dir);
}

std::vector<std::string> DevcontainerBackend::wrap(const WrapRequest& request) const {
  Spec spec = read_spec(request.session.session_dir);
  spec.engine = request.session.executable.path;  // the pinned engine
  // The container may be gone (session end, `session stop`, a reboot, a resumed session):
  // start it again, once, before the command.
  if (!container_alive(spec)) {
    host_.debug("container " + spec.name + " is not running; starting it");
    start_container(spec, request.session.session_dir);
  }
  const bool tty = ::isatty(0) == 1 && ::isatty(1) == 1;
  return exec_argv(spec, request.cwd.empty() ? request.session.workdir : request.cwd,
                   request.env_names, request.argv, tty);
}

ProbeResult DevcontainerBackend::probe(const ProbeRequest& request) const {
  const Spec spec = read_spec(request.session.session_dir);
  // The container has its own /etc, /root, /tmp...: a path the boundary does not mount is
  // a different file inside, so the answer is about the host's and is asked of the spec.
  if (const std::string why = probe_precheck(spec, request.path); !why.empty())
    return {ProbeResult::Verdict::denied, why};
  WrapRequest w{request.session,
                request.session.workdir,
                {host_.helper_path("probe"), request.path, to_string(request.access)},
                {}};
  ProcessOptions opts;
  opts.argv = wrap(w);
  opts.timeout_ms = request.timeout_ms;
  return parse_probe_output(run_process(opts), request.timeout_ms);
}

}  // namespace agent_boundary::devcontainer

AB_BACKEND_PLUGIN(agent_boundary::devcontainer::DevcontainerBackend, "devcontainer", "0.1.0");
