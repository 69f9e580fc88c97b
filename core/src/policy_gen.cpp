#include "policy_gen.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "agent_boundary/error.hpp"
#include "git_dir.hpp"
#include "glob.hpp"
#include "paths.hpp"
#include "symlink_chain.hpp"

namespace agent_boundary {
namespace {

enum class Existence { absent, file, directory };

Existence existence(const std::string& p) {  // follows symlinks, like an open would
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return Existence::absent;
  return S_ISDIR(st.st_mode) ? Existence::directory : Existence::file;
}

class Builder {
 public:
  Builder(const Profile& profile, const GenerationContext& context)
      : profile_(profile), context_(context), vars_(path_vars(context.workdir)) {
    out_.policy.profile_name = profile.name;
    out_.policy.workdir = context.workdir;
    out_.policy.self_edit = profile.self_edit;
  }

  GenerationResult build() {
    add_entries(profile_.allow, Access::readwrite, "allow");
    add_entries(profile_.read, Access::read, "read");
    add_entries(profile_.write, Access::write, "write");
    for (const auto& entry : profile_.deny) add_deny(entry);
    for (const auto& spec : profile_.resolve_symlinks) add_symlink_chain(spec);
    if (profile_.git_common_dir) add_git_common_dir();
    for (const auto& p : context_.protected_paths) {
      const bool installation =
          std::find(context_.installation_paths.begin(), context_.installation_paths.end(), p) !=
          context_.installation_paths.end();
      if (installation) continue;
      if (!profile_.self_edit) {
        add_deny_path(p, "self-protection");
      } else if (!context_.state_root.empty() && p == context_.state_root) {
        add_grant(p + "/sessions", Access::readwrite, "self_edit", false, PathKind::directory);
        add_deny_path(p + "/runtimes", "self-protection");
        add_deny_path(p + "/bin", "self-protection");
      } else {
        // Protected paths are directories (the session dir may not exist yet).
        add_grant(p, Access::readwrite, "self_edit", false, PathKind::directory);
      }
    }
    for (const auto& p : context_.readable_protected) add_grant(p, Access::read, "session", true);
    for (const auto& g : context_.extra_grants)
      add_grant(g.path, g.access, g.origin.c_str(), g.bypass_builtin_denies, g.kind);
    for (const auto& [k, v] : profile_.env) out_.policy.env[k] = expand_vars(v, vars_);
    out_.policy.backend_options = profile_.backend_options;
    out_.policy.backend_options["nono"] = profile_.nono_json;
    return std::move(out_);
  }

 private:
  // A glob is a glob because of the profile's own characters, never because of what a
  // variable expanded to: variable values are escaped in patterns.
  std::string expand(const PathEntry& entry, bool as_pattern = false) const {
    try {
      return expand_path(entry.raw, vars_, as_pattern);
    } catch (const ProfileError& e) {
      throw ProfileError(e.message(), entry.pos.str(), e.fix());
    }
  }
  static bool is_pattern(const PathEntry& entry) { return has_glob(entry.raw); }

  void add_entries(const std::vector<PathEntry>& entries, Access access, const char* origin) {
    for (const auto& entry : entries) {
      if (is_pattern(entry)) {
        const GlobResult hits = expand_glob(expand(entry, true));
        if (hits.truncated)
          out_.warnings.push_back(entry.pos.str() + ": glob `" + entry.raw +
                                  "` matched too much and was cut short; narrow the pattern");
        if (hits.matches.empty())
          out_.warnings.push_back(entry.pos.str() + ": glob `" + entry.raw +
                                  "` matched nothing; no grant made");
        for (const auto& hit : hits.matches) add_grant(hit, access, origin, false);
        continue;
      }
      const std::string path = expand(entry);
      if (existence(path) == Existence::absent) {
        // A sandbox cannot grant a path that does not exist yet (Landlock binds rules to
        // inodes), and a grant that looks present but does nothing is worse than none.
        out_.warnings.push_back(entry.pos.str() + ": `" + path +
                                "` does not exist; no grant made (create it, then run "
                                "`agent-boundary reload`)");
        continue;
      }
      add_grant(path, access, origin, false);
    }
  }

  void add_deny(const PathEntry& entry) {
    if (!is_pattern(entry)) return add_deny_path(expand(entry), "profile");
    const GlobResult hits = expand_glob(expand(entry, true));
    if (hits.truncated)
      out_.warnings.push_back(entry.pos.str() + ": deny glob `" + entry.raw +
                              "` matched too much and was cut short; narrow the pattern");
    for (const auto& hit : hits.matches) add_deny_path(hit, "profile");
  }

  void add_symlink_chain(const SymlinkSpec& spec) {
    const std::string path = expand(spec.path);
    const auto chain = symlink_chain(path);
    if (chain.empty())
      out_.warnings.push_back(spec.path.pos.str() + ": `" + path +
                              "` does not exist; nothing to resolve");
    for (const auto& hop : chain)
      add_grant(hop, spec.access, "resolve_symlinks", spec.bypass_protection);
  }

  void add_git_common_dir() {
    // Git refuses to run when a config file it reads exists but cannot be opened.
    if (existence("/etc/gitconfig") == Existence::file)
      add_grant("/etc/gitconfig", Access::read, "git", false);
    const auto layout = find_git_layout(context_.workdir);
    if (!layout) return;
    // git add/commit must lock refs and write objects in the common dir, so it is granted
    // read+write; its hooks/ and config are the subject of separate protection.
    add_grant(layout->common_dir, Access::readwrite, "git", false);
    if (layout->git_dir != layout->common_dir && !path_within(layout->git_dir, layout->common_dir))
      add_grant(layout->git_dir, Access::readwrite, "git", false);
    // Hooks that link outside the common dir (a parent checkout's tree) must stay
    // runnable but not writable: read-only grants for every hop outside it.
    const std::string hooks = layout->common_dir + "/hooks";
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(hooks.c_str()), ::closedir);
    if (!d) return;
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d.get())) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    for (const auto& name : names)
      for (const auto& hop : symlink_chain(hooks + "/" + name))
        if (!path_within(hop, layout->common_dir)) add_grant(hop, Access::read, "git", false);
  }

  void add_grant(const std::string& path, Access access, const char* origin, bool bypass,
                 std::optional<PathKind> known_kind = std::nullopt) {
    const PathKind kind = known_kind                                ? *known_kind
                          : existence(path) == Existence::directory ? PathKind::directory
                                                                    : PathKind::file;
    if (!seen_grants_.insert({path, access, kind}).second) return;
    out_.policy.grants.push_back(Grant{path, access, kind, bypass, origin});
  }

  void add_deny_path(const std::string& path, const char* origin) {
    if (!seen_denies_.insert(path).second) return;
    out_.policy.denies.push_back(Deny{path, origin});
  }

  const Profile& profile_;
  const GenerationContext& context_;
  PathVars vars_;
  GenerationResult out_;
  std::set<std::tuple<std::string, Access, PathKind>> seen_grants_;
  std::set<std::string> seen_denies_;
};

}  // namespace

GenerationResult generate_policy(const Profile& profile, const GenerationContext& context) {
  return Builder(profile, context).build();
}

}  // namespace agent_boundary
