// Profiles: the reviewed YAML that describes one boundary. Read strictly (unknown keys,
// wrong types, duplicate keys, anchors and second documents are errors, each with its
// file:line:column and a fix), never on the hook path.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent_boundary/policy.hpp"

namespace agent_boundary {

struct SourcePos {
  std::string file;
  int line = 0;             // 1-based; 0 = whole file
  int column = 0;           // 1-based
  std::string str() const;  // "file:line:col", or "file"
};

struct PathEntry {
  std::string raw;  // as written, before expansion
  SourcePos pos;
};

struct SymlinkSpec {
  PathEntry path;
  Access access = Access::read;
  bool bypass_protection = false;
};

struct Profile {
  std::string file;  // absolute path of the YAML file
  std::string name;
  std::string description;
  bool self_edit = false;
  bool git_common_dir = true;
  // Linux: run commands even where the kernel cannot give the launcher the namespaces that
  // protect denies inside writable directories (status then shows them DEGRADED).
  bool accept_unprotected_denies = false;
  // Linux: leave the git dir's hooks and config (resp. `.claude/`) writable inside writable
  // grants. The cost is in the name: sandboxed code can then plant code that runs outside.
  bool allow_git_hook_escape = false;
  bool allow_agent_settings_escape = false;
  std::optional<std::string> aws_profile;  // aws.profile
  bool kube_eks = false;
  bool kube_orbstack = false;
  std::optional<bool> github_push;  // github.push; nullopt when `github` is absent/null
  std::vector<PathEntry> allow, read, write, deny;
  std::vector<SymlinkSpec> resolve_symlinks;
  std::vector<std::pair<std::string, std::string>> env;  // file order
  // Secret-looking variables of the caller's environment that still reach the command.
  std::vector<PathEntry> keep_secret_env;
  // Host sockets the command may connect to: absolute paths, or names of the variables
  // holding their paths (`SSH_AUTH_SOCK`). The cost: whatever that service does for the
  // user (an ssh-agent signs as the user), the command can ask it to do.
  std::vector<PathEntry> allow_host_sockets;
  std::string nono_json = "{}";  // the `nono:` block as JSON text (strict scalar typing)
  // `backend_options:` blocks by backend name, as JSON text; only that backend reads one.
  std::map<std::string, std::string> backend_options;
  std::optional<std::string> backend;  // `backend:` names the default backend plugin
};

struct Diagnostic {
  SourcePos pos;
  std::string message;      // what is wrong, e.g. "unknown key `alow`"
  std::string fix;          // what to do, e.g. "did you mean `allow`?"
  std::string str() const;  // "pos: message; fix"
};

struct ParseResult {
  std::optional<Profile> profile;  // set only when diagnostics is empty
  std::vector<Diagnostic> diagnostics;
};

// Parse and validate one profile file; never throws (every problem is a diagnostic).
ParseResult parse_profile_file(const std::string& path);
// Same, from text (tests, stdin); `display_name` is used in positions.
ParseResult parse_profile_text(const std::string& text, const std::string& display_name);

// parse_profile_file, throwing ProfileError listing every diagnostic.
Profile load_profile_file(const std::string& path);

// `<dir>/<name>.yaml`, else `<dir>/<name>.yml`; throws ProfileError naming the known
// profiles when neither exists, or when `name` is not a plain name.
std::string find_profile(const std::string& dir, const std::string& name);
// Sorted names of *.yaml and *.yml files in `dir` (empty when the dir is absent).
std::vector<std::string> list_profiles(const std::string& dir);

// JSON Schema (draft 2020-12) of the profile format, for editors.
std::string profile_json_schema();

}  // namespace agent_boundary
