#include "paths.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "agent_boundary/error.hpp"

namespace fs = std::filesystem;

namespace agent_boundary {
namespace {

const char* env_or_null(const char* name) { return std::getenv(name); }

// The value of an env var that is "set and non-empty", else nullptr.
const char* nonempty_env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

std::string xdg_dir(const char* var, const char* fallback_below_home) {
  // Like the reference: an XDG variable that is present wins even when empty (which
  // yields a cwd-relative path, made absolute here).
  if (const char* v = env_or_null(var)) return absolute_normal(v, fs::current_path().string());
  return home_dir() + "/" + fallback_below_home;
}

}  // namespace

std::string home_dir() {
  if (const char* h = nonempty_env("HOME")) return absolute_normal(h, "/");
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir && *pw->pw_dir)
    return absolute_normal(pw->pw_dir, "/");
  throw SystemError("cannot determine the home directory", {}, "set HOME");
}

std::string state_root() {
  if (const char* v = nonempty_env("AGENT_BOUNDARY_STATE_DIR"))
    return resolve_existing_prefix(expand_path(v, path_vars({})));
  return resolve_existing_prefix(xdg_dir("XDG_STATE_HOME", ".local/state") + "/agent-boundary");
}

std::string profiles_dir() {
  if (const char* v = nonempty_env("AGENT_BOUNDARY_PROFILES_DIR"))
    return resolve_existing_prefix(expand_path(v, path_vars({})));
  return resolve_existing_prefix(xdg_dir("XDG_CONFIG_HOME", ".config") +
                                 "/agent-boundary/profiles");
}

PathVars path_vars(const std::string& workdir) {
  PathVars vars;
  vars.home = home_dir();
  vars.workdir = workdir;
  const char* tmp = nonempty_env("TMPDIR");
  vars.extra["TMPDIR"] = tmp ? absolute_normal(tmp, "/") : "/tmp";
  vars.extra["UID"] = std::to_string(getuid());
  const std::pair<const char*, const char*> xdg[] = {{"XDG_CONFIG_HOME", ".config"},
                                                     {"XDG_DATA_HOME", ".local/share"},
                                                     {"XDG_STATE_HOME", ".local/state"},
                                                     {"XDG_CACHE_HOME", ".cache"}};
  for (const auto& [name, below] : xdg) {
    const char* v = nonempty_env(name);
    vars.extra[name] = v ? absolute_normal(v, "/") : vars.home + "/" + below;
  }
  return vars;
}

namespace {

std::string escaped(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Shared by expand_path and expand_vars. `strict`: unknown variables are errors.
std::string substitute(const std::string& raw, const PathVars& vars, bool strict, bool escape) {
  auto value = [&](const std::string& v) { return escape ? escaped(v) : v; };
  std::string out;
  std::size_t i = 0;
  if (raw == "~" || raw.starts_with("~/")) {
    out = value(vars.home);
    i = 1;
  } else if (strict && raw.starts_with("~")) {
    throw ProfileError("`~user` paths are not supported in `" + raw + "`", {},
                       "write the path with $HOME or an absolute path");
  }
  while (i < raw.size()) {
    const char c = raw[i];
    if (c != '$') {
      out += c;
      ++i;
      continue;
    }
    std::string name;
    std::size_t j = i + 1;
    if (j < raw.size() && raw[j] == '{') {
      const auto close = raw.find('}', j);
      if (close == std::string::npos) {
        if (!strict) {
          out += raw.substr(i);
          break;
        }
        throw ProfileError("unterminated `${` in `" + raw + "`", {}, "close it with `}`");
      }
      name = raw.substr(j + 1, close - j - 1);
      j = close + 1;
    } else {
      while (j < raw.size() && (std::isalnum(static_cast<unsigned char>(raw[j])) || raw[j] == '_'))
        name += raw[j++];
    }
    const std::string as_written = raw.substr(i, j - i);
    i = j;
    if (name == "HOME") {
      out += value(vars.home);
    } else if (name == "WORKDIR" && !vars.workdir.empty()) {
      out += value(vars.workdir);
    } else if (auto it = vars.extra.find(name); it != vars.extra.end()) {
      out += value(it->second);
    } else if (!strict) {
      out += as_written;
    } else if (name.empty()) {
      throw ProfileError("a lone `$` in `" + raw + "`", {}, "use $NAME or ${NAME}");
    } else if (name == "WORKDIR") {
      throw ProfileError("`$WORKDIR` is not known here (`" + raw + "`)", {},
                         "use $WORKDIR only in profile path fields");
    } else {
      throw ProfileError("unknown variable `$" + name + "` in `" + raw + "`", {},
                         "use one of $HOME, $WORKDIR, $TMPDIR, $UID, $XDG_CONFIG_HOME, "
                         "$XDG_DATA_HOME, $XDG_STATE_HOME, $XDG_CACHE_HOME, or an absolute path");
    }
  }
  return out;
}

}  // namespace

std::string expand_path(const std::string& raw, const PathVars& vars, bool escape_globs) {
  const std::string out = substitute(raw, vars, true, escape_globs);
  if (out.empty() || out[0] != '/')
    throw ProfileError("`" + raw + "` is not an absolute path", {},
                       "start it with /, ~, $HOME or $WORKDIR");
  return absolute_normal(out, "/");
}

std::string expand_vars(const std::string& raw, const PathVars& vars) {
  return substitute(raw, vars, false, false);
}

std::string absolute_normal(const std::string& path, const std::string& base) {
  fs::path p(path);
  if (p.is_relative()) p = fs::path(base) / p;
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string resolve_existing_prefix(const std::string& path) {
  fs::path p = fs::path(absolute_normal(path, fs::current_path().string()));
  fs::path existing = p;
  fs::path rest;
  std::error_code ec;
  while (!existing.empty() && !fs::exists(existing, ec)) {
    rest = existing.filename() / rest;
    existing = existing.parent_path();
    if (existing == existing.root_path()) break;
  }
  fs::path resolved = fs::canonical(existing, ec);
  if (ec) resolved = existing;
  return absolute_normal((resolved / rest).string(), "/");
}

}  // namespace agent_boundary
