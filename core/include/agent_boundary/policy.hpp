// The resolved policy: a profile after it met the machine (globs expanded, symlink chains
// followed, git common dir found, self-protection added). Plain data, backend neutral.
// Core generates it once per session and pins it as policy.json; backends render it into
// their own files and never see YAML.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent_boundary/export.hpp"

namespace agent_boundary {

enum class Access { read, write, readwrite };
enum class PathKind { file, directory };

AB_API const char* to_string(Access a);
AB_API const char* to_string(PathKind k);

struct Grant {
  std::string path;  // absolute, as the profile spelled it after expansion (not realpath'd)
  Access access = Access::read;
  PathKind kind = PathKind::directory;
  // Exempt this path from the backend's built-in credential denies (nono's deny groups):
  // the profile asked for it explicitly (resolve_symlinks[].bypass_protection).
  bool bypass_builtin_denies = false;
  std::string origin;  // "allow", "read", "write", "resolve_symlinks", "git", "self_edit", ...
};

struct Deny {
  std::string path;    // absolute
  std::string origin;  // "profile" or "self-protection"
};

// A path inside a writable grant that the boundary holds anyway. Computed by core at
// session creation (git hooks and config, agent settings, the profile's denies under
// writable grants), outer paths first; present on disk (core creates placeholders).
struct HeldPath {
  enum class Hold { read_only, hidden };
  std::string path;  // absolute, resolved
  PathKind kind = PathKind::file;
  Hold hold = Hold::read_only;  // hidden: a profile deny (reads and writes refused)
};

struct ResolvedPolicy {
  std::string profile_name;
  std::string workdir;
  bool self_edit = false;
  std::vector<Grant> grants;
  std::vector<Deny> denies;
  std::vector<HeldPath> held;              // Linux; empty where the backend's own denies cover this
  std::map<std::string, std::string> env;  // set inside the boundary
  // Raw per-backend options from the profile (e.g. the `nono:` block), as JSON text,
  // keyed by backend name. Only the named backend reads its entry.
  std::map<std::string, std::string> backend_options;
};

// How a backend enforces one deny of a policy on this platform.
enum class Enforcement {
  enforced,    // the kernel refuses every access
  weaker,      // enforced with a named gap (e.g. only paths present at start)
  unenforced,  // the backend cannot enforce it here; the path is reachable
};
AB_API const char* to_string(Enforcement e);

struct DenyState {
  std::string path;
  std::string origin;
  Enforcement enforcement = Enforcement::unenforced;
  std::string reason;  // why weaker/unenforced, empty when enforced
};

}  // namespace agent_boundary
