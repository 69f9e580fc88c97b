// status, on, off, use, reload, list, session create.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "agent_boundary/error.hpp"
#include "commands.hpp"
#include "credentials/credentials.hpp"
#include "credentials/env_file.hpp"
#include "hook_engine.hpp"
#include "paths.hpp"
#include "plugin_loader.hpp"
#include "policy_json.hpp"
#include "protect/held_list.hpp"
#include "protect/held_state.hpp"
#include "secure_file.hpp"

namespace fs = std::filesystem;

namespace agent_boundary::cli {

Context::Context(Globals g)
    : globals(std::move(g)),
      host(installed_helper_dir(), globals.verbose),
      install(Installation::current(host)) {}

std::string Context::require_session() const {
  if (!globals.session_dir.empty()) return globals.session_dir;
  // Run from inside a harness session (e.g. a shell of the agent's): the session the
  // installed harness plugins say is current.
  for (const auto& info : list_plugins(install.plugin_dir)) {
    if (info.kind != PluginKind::harness || !info.error.empty()) continue;
    const auto harness = load_harness(info.file, install.plugin_dir, host);
    const std::string dir = session_dir_for_id(state_root(), harness->ambient_session_id());
    if (!dir.empty()) return dir;
  }
  throw UsageError("no session selected", {},
                   "pass --session-dir /absolute/path (or set AGENT_BOUNDARY_SESSION_DIR)");
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::cerr << "agent-boundary: warning: " << w << "\n";
}

std::string profiles_dir_for(const std::string& profile) {
  const std::string configured = profiles_dir();
  if (profile != "default" || !list_profiles(configured).empty()) return configured;
  // No profiles of the user's own yet: the starter profile installed with agent-boundary.
  return fs::path(installed_helper_dir()).parent_path().parent_path().string() +
         "/share/agent-boundary/profiles";
}

namespace {

// Lines describing anything the backend enforces weaker than the profile asks.
std::vector<std::string> degraded_lines(const BoundaryConfig& c) {
  std::vector<std::string> out;
  for (const auto& d : c.deny_state)
    if (d.enforcement != Enforcement::enforced)
      out.push_back("DEGRADED: deny " + d.path + " is " + to_string(d.enforcement) + " (" +
                    d.reason + ")");
  return out;
}

void print_outcome(const BoundaryConfig& c, const std::vector<std::string>& warnings) {
  std::cout << describe(c) << "\n";
  print_warnings(warnings);
}

// What the session holds inside its writable checkout, one line per group: held (with how
// many paths, and the key that opens it) or open (with what that costs).
std::vector<std::string> held_lines(const protect::HeldState& h) {
  std::vector<std::string> out;
  for (const auto& g : protect::all_groups()) {
    if (std::find(h.open_keys.begin(), h.open_keys.end(), g.key) != h.open_keys.end()) {
      out.push_back(std::string("OPEN: ") + g.what + " (`" + g.key + ": true`): " + g.cost);
      continue;
    }
    std::size_t held = 0, watched = 0;
    for (const auto& e : h.held)
      if (e.key == g.key) ++(e.present ? held : watched);
    if (held + watched == 0) continue;
    out.push_back(std::string("held: ") + g.what + ": " + std::to_string(held) + " path(s)" +
                  (watched ? ", " + std::to_string(watched) + " absent file(s) watched" : "") +
                  " (`" + g.key + ": true` opens it)");
  }
  return out;
}

nlohmann::ordered_json held_json(const protect::HeldState& h) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& g : protect::all_groups()) {
    nlohmann::ordered_json paths = nlohmann::ordered_json::array();
    nlohmann::ordered_json watched = nlohmann::ordered_json::array();
    for (const auto& e : h.held)
      if (e.key == g.key) (e.present ? paths : watched).push_back(e.path);
    const bool open = std::find(h.open_keys.begin(), h.open_keys.end(), g.key) != h.open_keys.end();
    out.push_back({{"key", g.key},
                   {"what", g.what},
                   {"held", !open},
                   {"paths", paths},
                   {"watched", watched}});
  }
  return out;
}

}  // namespace

int cmd_status(const Context& ctx, bool json) {
  const std::string dir = ctx.require_session();
  if (!session_complete(dir)) {
    if (json) {
      std::cout << nlohmann::json{{"session_dir", dir}, {"complete", false}}.dump(2) << "\n";
      return 1;
    }
    if (fs::exists(dir + "/" + kBoundaryFile))
      std::cout << "no boundary for this session; run: agent-boundary --session-dir " << dir
                << " reload\n";
    else
      std::cout << "no boundary for this session; create one: agent-boundary session create " << dir
                << "\n";
    return 1;
  }
  const BoundaryConfig c = read_boundary(dir);
  const std::string policy_file = dir + "/" + kPolicyFile;
  policy_from_json(read_file(policy_file, 16 << 20).value_or(""), policy_file);
  // A damaged session is refused by the launcher and the hook; say so, and fail.
  const auto damaged = damaged_pinned_files(dir, c);
  if (json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(boundary_to_json(c));
    j["session_dir"] = dir;
    j["complete"] = damaged.empty();
    j["damaged_pinned_files"] = damaged;
    j["degraded"] = !degraded_lines(c).empty();
    j["held"] = held_json(protect::read_held_state(dir));
    // The caches' state and times only; never a credential value.
    if (credentials::wants_credentials(c))
      j["credentials"] = credentials::credential_status(dir, c, credentials::now_seconds());
    std::cout << j.dump(2) << "\n";
    return damaged.empty() ? 0 : 1;
  }
  std::cout << describe(c) << "\n";
  for (const auto& d : damaged)
    std::cout << "REFUSED: pinned file " << d
              << " is missing or unreadable; every command is refused until: agent-boundary "
                 "--session-dir "
              << dir << " reload\n";
  for (const auto& line : degraded_lines(c)) std::cout << line << "\n";
  for (const auto& line : held_lines(protect::read_held_state(dir))) std::cout << line << "\n";
  if (credentials::wants_credentials(c))
    for (const auto& line :
         credentials::credential_status_lines(dir, c, credentials::now_seconds()))
      std::cout << line << "\n";
  return damaged.empty() ? 0 : 1;
}

int cmd_set_state(const Context& ctx, const std::string& state) {
  const BoundaryConfig c = set_session_state(ctx.require_session(), state);
  std::cout << describe(c) << "\n";
  if (state == "off")
    std::cout << "boundary OFF - normal harness permissions apply (not 'allow all')\n";
  return 0;
}

int cmd_use(const Context& ctx, const std::string& profile) {
  const SessionOutcome o = regenerate_session(ctx.require_session(), profile, ctx.install);
  print_outcome(o.config, o.warnings);
  return 0;
}

int cmd_reload(const Context& ctx) {
  const SessionOutcome o = regenerate_session(ctx.require_session(), std::nullopt, ctx.install);
  print_outcome(o.config, o.warnings);
  return 0;
}

int cmd_list(const Context& ctx) {
  // The session's pinned profiles dir when one is selected (what `use` will read), else the
  // configured one.
  std::string dir = profiles_dir();
  if (!ctx.globals.session_dir.empty() && session_complete(ctx.globals.session_dir))
    dir = read_boundary(ctx.globals.session_dir).profiles_dir;
  const auto names = list_profiles(dir);
  // None of the user's own yet: new sessions use the installed starter `default`.
  const std::string starter = profiles_dir_for("default");
  if (names.empty() && starter != dir && !list_profiles(starter).empty())
    std::cout << "default (the installed starter " << find_profile(starter, "default")
              << "; copy it into " << dir << " to change it)\n";
  else if (names.empty())
    std::cout << "(none)\n";
  for (const auto& n : names) std::cout << n << "\n";
  return 0;
}

int cmd_session_create(const Context& ctx, const std::string& dir, const std::string& profile,
                       const std::string& workdir) {
  SessionRequest req;
  req.session_dir = resolve_existing_prefix(dir);
  req.profile_name = profile;
  req.profiles_dir = profiles_dir_for(profile);
  req.workdir = resolve_existing_prefix(workdir.empty() ? fs::current_path().string() : workdir);
  if (!fs::is_directory(req.workdir))
    throw UsageError("the workdir " + req.workdir + " is not a directory", req.workdir);
  req.backend = ctx.globals.backend;
  const SessionOutcome o = write_session(req, ctx.install);
  std::cout << req.session_dir << "\n";
  print_outcome(o.config, o.warnings);
  return 0;
}

int cmd_session_stop(const Context& ctx, const std::string& dir) {
  const std::string session = dir.empty() ? ctx.require_session() : resolve_existing_prefix(dir);
  const std::string problem = stop_session(session, ctx.install);
  if (!problem.empty())
    throw SessionError("cannot stop the session's backend: " + problem, session);
  return 0;
}

}  // namespace agent_boundary::cli
