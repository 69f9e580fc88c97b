// Pure rendering: options, the mount plan, the spec file, the engine argv. Nothing here runs
// a process; the filesystem is seen through a StatFn, so the unit tests need no engine.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

#include "agent_boundary/error.hpp"
#include "agent_boundary/host_path.hpp"
#include "devcontainer_backend.hpp"

using ordered_json = nlohmann::ordered_json;

namespace agent_boundary::devcontainer {
namespace {

std::size_t depth(const std::string& p) { return std::count(p.begin(), p.end(), '/'); }

// A mount of a higher rank replaces one of a lower rank at the same target: what hides
// beats what holds read-only, which beats a grant (read-write before read-only), which
// beats a pin.
int rank(const Mount& m) {
  if (m.why == "hide") return 5;
  if (m.why == "held") return 4;
  if (m.why == "grant" || m.why == "probe") return m.read_only ? 2 : 3;
  return 1;  // pin
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> string_list(const ordered_json& v, const std::string& key) {
  if (!v.is_array())
    throw BackendError("`devcontainer." + key + "` in the profile must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : v) {
    if (!item.is_string())
      throw BackendError("`devcontainer." + key + "` in the profile must be a list of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

void check_network(const std::string& value, const std::string& where) {
  if (value != "default" && value != "none")
    throw BackendError(where + " is `" + value + "`; use `default` or `none`", {},
                       "`default` is the engine's bridge network (outbound allowed, like nono's "
                       "default); `none` leaves only loopback");
}

void check_image_name(const std::string& image, const std::string& where) {
  const bool bad = image.empty() || image[0] == '-' ||
                   std::any_of(image.begin(), image.end(), [](unsigned char c) {
                     return c <= ' ' || c == 0x7f || c == '\'' || c == '"';
                   });
  if (bad) throw BackendError(where + " `" + image + "` is not an image name");
}

// The profile's nono block may block the network (`network: {block: true}`); the container
// follows. Domain filtering (nono's proxy) has no container equivalent here.
std::optional<std::string> network_from_nono(const ResolvedPolicy& policy) {
  const auto it = policy.backend_options.find("nono");
  if (it == policy.backend_options.end()) return std::nullopt;
  ordered_json block;
  try {
    block = ordered_json::parse(it->second);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!block.is_object() || !block.contains("network") || !block["network"].is_object())
    return std::nullopt;
  const ordered_json& net = block["network"];
  if (net.contains("block") && net["block"] == true) return "none";
  for (const char* key : {"allow_domain", "proxy_allow", "allow_proxy", "network_profile",
                          "deny_domain", "credentials", "custom_credentials", "upstream_proxy"}) {
    if (net.contains(key) && !net[key].is_null() && !(net[key].is_array() && net[key].empty()))
      throw BackendError(
          std::string("the profile's `nono.network.") + key +
              "` filters network traffic through nono's proxy, which the devcontainer backend "
              "cannot do",
          {},
          "choose the container's network explicitly: AGENT_BOUNDARY_DEVCONTAINER_NETWORK=none "
          "(loopback only) or =default (outbound open), or use the nono backend");
  }
  return std::nullopt;
}

void check_mount_path(const std::string& p) {
  if (p.empty() || p[0] != '/')
    throw BackendError("cannot mount `" + p + "` into the container: not an absolute path", p);
  if (p.find(',') != std::string::npos || p.find('\n') != std::string::npos)
    throw BackendError("cannot mount " + p +
                           " into the container: the engine's --mount syntax "
                           "does not allow `,` or newlines in paths",
                       p, "rename the path, or leave it out of the profile");
}

// Paths the container has its own of: the host's are never mounted over them.
bool engine_owned(const std::string& p) {
  for (const char* d : {"/proc", "/sys", "/dev"})
    if (path_within(p, d)) return true;
  return false;
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

ordered_json mount_to_json(const Mount& m) {
  ordered_json j;
  j["type"] = m.kind == Mount::Kind::bind ? "bind" : "tmpfs";
  if (m.kind == Mount::Kind::bind) j["source"] = m.source;
  j["target"] = m.target;
  j["read_only"] = m.read_only;
  j["why"] = m.why;
  return j;
}

ordered_json spec_body(const Spec& s) {
  ordered_json j;
  j["format"] = 1;
  j["session_dir"] = s.session_dir;
  j["engine"] = s.engine;
  j["engine_kind"] = to_string(s.engine_kind);
  j["engine_args"] = s.engine_args;
  j["image"] = s.image;
  j["image_origin"] = s.image_origin;
  j["network"] = s.network;
  j["ulimits"] = s.ulimits;
  j["env"] = ordered_json::object();
  for (const auto& [k, v] : s.env) j["env"][k] = v;
  j["container_user"] = s.container_user;
  j["exec_user"] = s.exec_user;
  j["mounts"] = ordered_json::array();
  for (const auto& m : s.mounts) j["mounts"].push_back(mount_to_json(m));
  j["ignored_keys"] = s.ignored_keys;
  return j;
}

bool valid_env_name(const std::string& n) {
  if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) return false;
  return std::all_of(n.begin(), n.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

}  // namespace

const char* to_string(EngineKind k) { return k == EngineKind::podman ? "podman" : "docker"; }

std::vector<std::string> default_engine_args(EngineKind engine) {
  if (engine == EngineKind::podman) return {"--runtime", "runc", "--cgroup-manager", "cgroupfs"};
  return {};
}

Options read_options(const ResolvedPolicy& policy, EngineKind engine, const GetEnv& getenv) {
  Options o;
  o.engine_args = default_engine_args(engine);
  const auto env = [&](const char* name) -> std::optional<std::string> {
    const char* v = getenv ? getenv(name) : nullptr;
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
  bool network_set = false;
  if (auto v = env("AGENT_BOUNDARY_DEVCONTAINER_IMAGE")) o.image = *v;
  if (auto v = env("AGENT_BOUNDARY_DEVCONTAINER_NETWORK")) {
    check_network(*v, "AGENT_BOUNDARY_DEVCONTAINER_NETWORK");
    o.network = *v;
    network_set = true;
  }
  if (auto v = env("AGENT_BOUNDARY_DEVCONTAINER_ENGINE_ARGS")) o.engine_args = split_words(*v);
  if (auto v = env("AGENT_BOUNDARY_DEVCONTAINER_ULIMITS")) o.ulimits = split_words(*v);
  if (auto v = env("AGENT_BOUNDARY_DEVCONTAINER_PROJECT_CONFIG")) {
    if (*v != "0" && *v != "1")
      throw BackendError("AGENT_BOUNDARY_DEVCONTAINER_PROJECT_CONFIG must be 0 or 1");
    o.project_config = *v == "1";
  }
  // The profile's own block (when the profile reader passes one) is the reviewed word.
  if (auto it = policy.backend_options.find("devcontainer"); it != policy.backend_options.end()) {
    ordered_json block;
    try {
      block = ordered_json::parse(it->second);
    } catch (const std::exception& e) {
      throw BackendError(std::string("the profile's `devcontainer:` block is not JSON: ") +
                         e.what());
    }
    if (!block.is_null() && !block.is_object())
      throw BackendError("the profile's `devcontainer:` block is not a mapping");
    if (block.is_object())
      for (const auto& [k, v] : block.items()) {
        if (k == "image") {
          if (!v.is_string()) throw BackendError("`devcontainer.image` must be a string");
          o.image = v.get<std::string>();
        } else if (k == "network") {
          if (!v.is_string()) throw BackendError("`devcontainer.network` must be a string");
          check_network(v.get<std::string>(), "`devcontainer.network`");
          o.network = v.get<std::string>();
          network_set = true;
        } else if (k == "engine_args") {
          o.engine_args = string_list(v, k);
        } else if (k == "ulimits") {
          o.ulimits = string_list(v, k);
        } else if (k == "project_config") {
          if (!v.is_boolean())
            throw BackendError("`devcontainer.project_config` must be true or false");
          o.project_config = v.get<bool>();
        } else {
          throw BackendError("unknown key `devcontainer." + k + "` in the profile", {},
                             "use image, network, engine_args, ulimits or project_config");
        }
      }
  }
  if (!network_set)
    if (auto n = network_from_nono(policy)) o.network = *n;
  check_image_name(o.image, "the base image");
  for (const auto& u : o.ulimits)
    if (u.empty() || u[0] == '-' || u.find('=') == std::string::npos)
      throw BackendError("the ulimit `" + u + "` is not NAME=SOFT:HARD");
  return o;
}

StatFn host_stat() {
  return [](const std::string& p) {
    PathInfo info;
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      info.exists = true;
      info.dir = S_ISDIR(st.st_mode);
      info.links = st.st_nlink;
    }
    std::string head = p, tail;
    while (!head.empty()) {
      if (char* r = ::realpath(head.c_str(), nullptr)) {
        std::string out = r;
        std::free(r);
        info.real = tail.empty() ? out : (out == "/" ? "" : out) + tail;
        return info;
      }
      if (head == "/") break;
      const auto slash = head.find_last_of('/');
      tail = head.substr(slash) + tail;
      head = slash == 0 ? "/" : head.substr(0, slash);
    }
    info.real = p;
    return info;
  };
}

MountPlan plan_mounts(const ResolvedPolicy& policy, const std::string& session_dir,
                      const std::string& probe_helper, const StatFn& stat) {
  std::vector<Mount> mounts;
  const auto add = [&](Mount m) {
    for (auto& existing : mounts)
      if (existing.target == m.target) {
        if (rank(m) > rank(existing)) existing = std::move(m);
        return;
      }
    mounts.push_back(std::move(m));
  };
  const std::string empty_file = session_dir + "/" + kEmptyFile;
  const auto hide = [&](const std::string& path, bool dir) {
    if (dir)
      add({Mount::Kind::tmpfs, {}, path, true, "hide"});
    else
      add({Mount::Kind::bind, empty_file, path, true, "hide"});
  };

  // Grants, at their spelled path and (when a symlink leads there) at their real path:
  // commands may use either. The real-path mount is the one held paths are measured
  // against; the spelled one gets copies of every mount inside it (below).
  std::vector<std::pair<std::string, std::string>> aliases;  // spelled -> real
  for (const auto& g : policy.grants) {
    if (g.path == "/")
      throw BackendError(
          "the profile grants `/`; the devcontainer backend cannot mount the "
          "host's root into a container",
          "/", "grant narrower paths");
    if (engine_owned(g.path)) continue;
    check_mount_path(g.path);
    // A bind mount cannot be write-only: a `write:` grant is mounted read-write.
    const bool ro = g.access == Access::read;
    const PathInfo info = stat(g.path);
    const std::string real = info.real.empty() ? g.path : info.real;
    if (real != g.path && !engine_owned(real)) {
      check_mount_path(real);
      add({Mount::Kind::bind, real, real, ro, "grant"});
      aliases.emplace_back(g.path, real);
    }
    add({Mount::Kind::bind, g.path, g.path, ro, "grant"});
  }
  for (const auto& h : policy.held) {
    check_mount_path(h.path);
    if (h.hold == HeldPath::Hold::hidden)
      hide(h.path, h.kind == PathKind::directory);
    else
      add({Mount::Kind::bind, h.path, h.path, true, "held"});
  }
  if (!probe_helper.empty()) {
    check_mount_path(probe_helper);
    add({Mount::Kind::bind, probe_helper, probe_helper, true, "probe"});
  }

  // The mount whose target holds `p` most closely.
  const auto covering = [&](const std::string& p) -> const Mount* {
    const Mount* best = nullptr;
    for (const auto& m : mounts)
      if (m.why != "pin" && path_within(p, m.target) &&
          (!best || m.target.size() > best->target.size()))
        best = &m;
    return best;
  };

  // Denies, outer paths first (a hidden directory covers the denies below it).
  std::vector<std::size_t> order(policy.denies.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return depth(policy.denies[a].path) < depth(policy.denies[b].path);
  });
  std::vector<DenyState> states(policy.denies.size());
  for (std::size_t i : order) {
    const Deny& d = policy.denies[i];
    DenyState& s = states[i];
    s.path = d.path;
    s.origin = d.origin;
    s.enforcement = Enforcement::enforced;
    const PathInfo info = stat(d.path);
    const std::string real = info.real.empty() ? d.path : info.real;
    const Mount* m = covering(real);
    if (!m) m = covering(d.path);
    if (!m || m->why == "hide") continue;  // not in the container at all, or already hidden
    if (info.exists) {
      check_mount_path(real);
      const bool has_links = !info.dir && info.links > 1;
      hide(real, info.dir);
      if (has_links) {
        s.enforcement = Enforcement::weaker;
        s.reason = "the file has " + std::to_string(info.links) +
                   " hard links; a link elsewhere inside the mounted grants stays readable";
      }
    } else if (!m->read_only) {
      s.enforcement = Enforcement::unenforced;
      s.reason = "absent at session start inside the read-write mount " + m->target +
                 ": the sandbox could create it there, and read what it creates";
    }
    // Absent inside a read-only mount: it cannot be created, so there is nothing to read.
  }

  // Pins: a directory between a writable mount and a held or hidden path could be renamed
  // away (taking the protection with it) and recreated without it; a mount point cannot be
  // renamed. Each pin keeps the access of the mount it lies in.
  std::vector<Mount> pins;
  for (const auto& m : mounts) {
    if (m.why != "held" && m.why != "hide") continue;
    std::string top;
    for (const auto& w : mounts)
      if (w.why == "grant" && !w.read_only && w.target != m.target &&
          path_within(m.target, w.target) && (top.empty() || w.target.size() < top.size()))
        top = w.target;
    if (top.empty()) continue;
    for (std::string d = parent_dir(m.target); d.size() > top.size() && path_within(d, top);
         d = parent_dir(d)) {
      const Mount* in = covering(d);
      if (!in || in->why == "hide" || !stat(d).exists) continue;
      pins.push_back({Mount::Kind::bind, d, d, in->read_only, "pin"});
    }
  }
  for (auto& p : pins) add(std::move(p));

  // The spelled path of a symlinked grant is a second view of the same directory: it gets
  // the same mounts inside it, or the held paths would be writable through it.
  for (const auto& [spelled, real] : aliases) {
    if (path_within(spelled, real) || path_within(real, spelled)) continue;
    std::vector<Mount> copies;
    for (const auto& m : mounts)
      if (m.target != real && path_within(m.target, real)) {
        Mount c = m;  // same source: the copy shows the same host file or hides the same way
        c.target = spelled + m.target.substr(real.size());
        copies.push_back(std::move(c));
      }
    for (auto& c : copies) add(std::move(c));
  }

  // Nothing is mounted inside a hidden directory (its empty mount is read-only).
  std::vector<std::string> hidden_dirs;
  for (const auto& m : mounts)
    if (m.why == "hide" && m.kind == Mount::Kind::tmpfs) hidden_dirs.push_back(m.target);
  std::erase_if(mounts, [&](const Mount& m) {
    return std::any_of(hidden_dirs.begin(), hidden_dirs.end(), [&](const std::string& h) {
      return m.target != h && path_within(m.target, h);
    });
  });

  std::stable_sort(mounts.begin(), mounts.end(), [](const Mount& a, const Mount& b) {
    if (depth(a.target) != depth(b.target)) return depth(a.target) < depth(b.target);
    return a.target < b.target;
  });
  return {std::move(mounts), std::move(states)};
}

std::string container_name(const Spec& spec) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(fnv1a(spec_body(spec).dump())));
  return std::string(kNamePrefix) + hex;
}

std::string spec_to_json(const Spec& spec) {
  const ordered_json body = spec_body(spec);
  ordered_json j;
  j["name"] = container_name(spec);
  for (const auto& [k, v] : body.items()) j[k] = v;
  return j.dump(2) + "\n";
}

Spec spec_from_json(const std::string& text, const std::string& where) {
  try {
    const ordered_json j = ordered_json::parse(text);
    if (j.at("format").get<int>() != 1) throw std::invalid_argument("unsupported format");
    Spec s;
    s.name = j.at("name").get<std::string>();
    s.session_dir = j.at("session_dir").get<std::string>();
    s.engine = j.at("engine").get<std::string>();
    const std::string kind = j.at("engine_kind").get<std::string>();
    if (kind != "podman" && kind != "docker") throw std::invalid_argument("unknown engine kind");
    s.engine_kind = kind == "podman" ? EngineKind::podman : EngineKind::docker;
    s.engine_args = j.at("engine_args").get<std::vector<std::string>>();
    s.image = j.at("image").get<std::string>();
    s.image_origin = j.at("image_origin").get<std::string>();
    s.network = j.at("network").get<std::string>();
    s.ulimits = j.at("ulimits").get<std::vector<std::string>>();
    for (const auto& [k, v] : j.at("env").items()) s.env[k] = v.get<std::string>();
    s.container_user = j.at("container_user").get<std::string>();
    s.exec_user = j.at("exec_user").get<std::string>();
    for (const auto& m : j.at("mounts")) {
      Mount x;
      const std::string type = m.at("type").get<std::string>();
      if (type != "bind" && type != "tmpfs") throw std::invalid_argument("unknown mount type");
      x.kind = type == "bind" ? Mount::Kind::bind : Mount::Kind::tmpfs;
      if (x.kind == Mount::Kind::bind) x.source = m.at("source").get<std::string>();
      x.target = m.at("target").get<std::string>();
      x.read_only = m.at("read_only").get<bool>();
      x.why = m.at("why").get<std::string>();
      s.mounts.push_back(std::move(x));
    }
    s.ignored_keys = j.at("ignored_keys").get<std::vector<std::string>>();
    if (s.name != container_name(s)) throw std::invalid_argument("the name does not match");
    if (s.engine.empty() || s.engine[0] != '/' || s.session_dir.empty() || s.session_dir[0] != '/')
      throw std::invalid_argument("a path is not absolute");
    return s;
  } catch (const std::exception& e) {
    throw SessionError(std::string("corrupt devcontainer spec: ") + e.what(), where,
                       "run `agent-boundary reload` to render it again");
  }
}

std::string map_to_staged(const std::string& path, const std::string& final_dir,
                          const std::string& staged_dir) {
  if (staged_dir.empty() || staged_dir == final_dir || !path_within(path, final_dir)) return path;
  return staged_dir + path.substr(final_dir.size());
}

std::vector<std::string> run_argv(const Spec& spec, const std::string& staged_dir,
                                  const std::string& conmon_pidfile, const StatFn& stat,
                                  std::vector<std::string>* skipped) {
  const bool podman = spec.engine_kind == EngineKind::podman;
  std::vector<std::string> a = {spec.engine};
  a.insert(a.end(), spec.engine_args.begin(), spec.engine_args.end());
  a.insert(a.end(), {"run", "-d", "--name", spec.name, "--label",
                     std::string(kSessionLabel) + "=" + spec.session_dir, "--init", "--pull",
                     "never", "--security-opt", "no-new-privileges"});
  for (const auto& u : spec.ulimits) a.insert(a.end(), {"--ulimit", u});
  if (spec.network == "none") a.insert(a.end(), {"--network", "none"});
  if (podman && !conmon_pidfile.empty()) a.insert(a.end(), {"--conmon-pidfile", conmon_pidfile});
  for (const auto& [k, v] : spec.env) a.insert(a.end(), {"--env", k + "=" + v});
  if (!spec.container_user.empty()) a.insert(a.end(), {"--user", spec.container_user});
  for (const auto& m : spec.mounts) {
    if (m.kind == Mount::Kind::tmpfs) {
      // podman copies what lies under the target into a new tmpfs unless told not to: that
      // would copy the very content the mount hides.
      if (podman)
        a.insert(a.end(), {"--mount", "type=tmpfs,destination=" + m.target +
                                          ",ro=true,tmpfs-mode=0755,notmpcopyup"});
      else
        a.insert(a.end(), {"--tmpfs", m.target + ":ro,mode=0755"});
      continue;
    }
    const std::string source = map_to_staged(m.source, spec.session_dir, staged_dir);
    if (!stat(source).exists) {
      if (skipped) skipped->push_back(m.target);
      continue;
    }
    a.insert(a.end(), {"--mount", "type=bind,source=" + source + ",destination=" + m.target +
                                      (m.read_only ? ",ro=true" : "")});
  }
  // Keep the container alive between commands; --init reaps and forwards signals.
  a.insert(a.end(), {"--entrypoint", "/bin/sh", spec.image, "-c", "while :; do sleep 3600; done"});
  return a;
}

std::vector<std::string> exec_argv(const Spec& spec, const std::string& cwd,
                                   const std::vector<std::string>& env_names,
                                   const std::vector<std::string>& argv, bool tty) {
  std::vector<std::string> a = {spec.engine};
  a.insert(a.end(), spec.engine_args.begin(), spec.engine_args.end());
  a.insert(a.end(), {"exec", "-i"});
  if (tty) a.push_back("-t");
  if (!spec.exec_user.empty()) a.insert(a.end(), {"--user", spec.exec_user});
  a.insert(a.end(), {"--workdir", cwd});
  // By name only: the engine takes each value from its own environment (the launcher's).
  for (const auto& n : env_names)
    if (valid_env_name(n)) a.insert(a.end(), {"--env", n});
  a.push_back(spec.name);
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

namespace {

// POSIX sh (the image's /bin/sh): SIGSTOP to everything but init and itself, then repeat
// until a pass over /proc finds every process stopped (T/t) or dead (Z/X).
// `--` before -1: dash (the image's /bin/sh) takes a bare -1 for an option, refuses it, and
// would leave everything running (stop) or stopped (resume).
constexpr const char* kStopScript = R"(kill -s STOP -- -1 2>/dev/null
n=0
while :; do
  busy=
  for f in /proc/[0-9]*/stat; do
    IFS= read -r l < "$f" 2>/dev/null || continue
    p=${l%% *}
    [ "$p" = 1 ] && continue
    [ "$p" = "$$" ] && continue
    s=${l##*) }; s=${s%% *}
    case $s in T|t|Z|X|x) ;; *) busy=1; kill -s STOP "$p" 2>/dev/null;; esac
  done
  [ -z "$busy" ] && exit 0
  n=$((n+1)); [ "$n" -lt 5000 ] || exit 1
done)";

// Every process, and each one again by pid: one that a signal to -1 missed stays stopped
// for good otherwise.
constexpr const char* kResumeScript = R"(kill -s CONT -- -1 2>/dev/null
for f in /proc/[0-9]*; do kill -s CONT "${f#/proc/}" 2>/dev/null; done
exit 0)";

std::vector<std::string> root_exec(const Spec& spec, const std::string& script) {
  std::vector<std::string> a = {spec.engine};
  a.insert(a.end(), spec.engine_args.begin(), spec.engine_args.end());
  a.insert(a.end(), {"exec", "--user", "0", container_name(spec), "/bin/sh", "-c", script});
  return a;
}

}  // namespace

std::string freeze_commands_json(const Spec& spec) {
  nlohmann::json j;
  j["stop"] = root_exec(spec, kStopScript);
  j["resume"] = root_exec(spec, kResumeScript);
  return j.dump(2) + "\n";
}

std::string probe_precheck(const Spec& spec, const std::string& path) {
  const Mount* best = nullptr;
  for (const auto& m : spec.mounts)
    if (path_within(path, m.target) && (!best || m.target.size() > best->target.size())) best = &m;
  if (!best)
    return "not mounted in the container (only the workdir and granted paths are; the "
           "container's own file of that name is not the host's)";
  if (best->why == "hide") return "hidden inside the boundary (denied by the profile)";
  return {};
}

}  // namespace agent_boundary::devcontainer
