#include "whole_agent.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "agent_boundary/error.hpp"
#include "paths.hpp"
#include "secure_file.hpp"

namespace agent_boundary {
namespace {

bool exists(const std::string& p, struct stat& st) { return ::stat(p.c_str(), &st) == 0; }

// Open for reading and report how the kernel answered: 0 when it opened.
int open_errno(const std::string& path, int extra_flags) {
  const int fd =
      ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | extra_flags);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

bool refused(int err) { return err == EACCES || err == EPERM; }

bool plain_name(const std::string& name) {
  if (name.empty() || name.size() > 80) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

}  // namespace

WholeAgentSetup whole_agent_setup(const std::string& harness_name, const WholeAgentFootprint& fp,
                                  const std::string& state_root) {
  if (fp.empty())
    throw UsageError("the harness `" + harness_name + "` does not support whole-agent mode", {},
                     "run it in hook mode, or run plain commands with `agent-boundary run`");
  WholeAgentSetup out;
  for (const auto& p : fp.writable) {
    if (p.path.empty() || p.path[0] != '/')
      throw UsageError("the harness `" + harness_name + "` named a relative path", p.path);
    struct stat st {};
    if (p.kind == PathKind::directory && !exists(p.path, st)) make_private_dirs(p.path);
    if (!exists(p.path, st)) {
      out.notes.push_back(p.path + " does not exist, so it is not granted");
      continue;
    }
    const PathKind kind = S_ISDIR(st.st_mode) ? PathKind::directory : PathKind::file;
    out.grants.push_back(
        Grant{resolve_existing_prefix(p.path), Access::readwrite, kind, false, "harness"});
  }
  for (const auto& p : fp.readable) {
    struct stat st {};
    if (p.path.empty() || p.path[0] != '/' || !exists(p.path, st)) continue;
    out.grants.push_back(Grant{resolve_existing_prefix(p.path), Access::read,
                               S_ISDIR(st.st_mode) ? PathKind::directory : PathKind::file, false,
                               "harness"});
  }
  // The hooks a harness runs inside exec the runtime copy under the state root (see
  // claude-plugin/bin/bootstrap); reading it is harmless, writing it stays denied.
  for (const char* sub : {"/runtimes", "/bin"}) {
    struct stat st {};
    const std::string p = state_root + sub;
    if (exists(p, st) && S_ISDIR(st.st_mode))
      out.grants.push_back(Grant{p, Access::read, PathKind::directory, false, "hook-runtime"});
  }
  for (auto h : fp.held) {
    if (h.path.empty() || h.path[0] != '/')
      throw UsageError("the harness `" + harness_name + "` named a relative path", h.path);
    h.path = resolve_existing_prefix(h.path);
    out.held.push_back(std::move(h));
  }
  return out;
}

std::string verified_inside(const std::string& state_root) {
  const char* marker = std::getenv(kInsideEnv);
  if (!marker || !*marker || state_root.empty()) return {};
#ifdef AB_MUTANT_WHOLE_AGENT_MARKER
  return marker;  // mutant (tests/mutation only, never installed): the marker trusted blindly
#endif
  const std::string sessions = state_root + "/sessions";
  const std::string dir = marker;
  if (!dir.starts_with(sessions + "/") || !plain_name(dir.substr(sessions.size() + 1))) return {};
  // Outside a boundary this creates what a fresh state root lacks, so the open below
  // succeeds; inside, both fail (the state root is denied) and the open answers.
  ::mkdir(state_root.c_str(), 0700);
  ::mkdir(sessions.c_str(), 0700);
  if (!refused(open_errno(sessions, O_DIRECTORY))) return {};
  if (!refused(open_errno(dir + "/boundary.json", 0))) return {};
  return dir;
}

}  // namespace agent_boundary
