#include "credentials/credentials.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "credentials/aws.hpp"
#include "credentials/env_file.hpp"
#include "credentials/github.hpp"
#include "secure_file.hpp"

namespace agent_boundary::credentials {
namespace {

constexpr const char* kDash = " \xe2\x80\x94 ";
constexpr int kMaxGitConfigCount = 1000;

bool wants_github(const BoundaryConfig& c) { return c.github_push.value_or(false); }

std::string no_aws_cli_note() {
  return std::string("no AWS creds: no AWS CLI v2 was found when this session was created") +
         kDash + "install it, then run `agent-boundary reload`";
}

std::string no_gh_note() {
  return std::string("no GitHub token: gh was not found when this session was created") + kDash +
         "install it, then run `agent-boundary reload`";
}

std::string aws_refresh_note(const std::string& error, const std::optional<double>& until) {
  std::string s = "AWS credentials refresh failed: " + error + kDash + "try `aws sso login`";
  if (until) s += " (the current ones are used until " + human_time(*until) + ")";
  return s;
}

std::string github_refresh_note(const std::string& error) {
  return "GitHub token refresh failed: " + error + kDash + "try `gh auth login`";
}

// GIT_CONFIG_COUNT already in the child's environment (entries 0..n-1 are the user's).
int existing_git_config_count(const std::vector<std::string>& env) {
  for (const auto& e : env) {
    if (!e.starts_with("GIT_CONFIG_COUNT=")) continue;
    const std::string v = e.substr(17);
    int n = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || p != v.data() + v.size() || n < 0 || n > kMaxGitConfigCount) return 0;
    return n;
  }
  return 0;
}

std::optional<int> index_after(const std::string& key, const std::string& prefix) {
  if (!key.starts_with(prefix)) return std::nullopt;
  int i = 0;
  const char* b = key.data() + prefix.size();
  const char* e = key.data() + key.size();
  const auto [p, ec] = std::from_chars(b, e, i);
  if (ec != std::errc() || p != e || b == e || i < 0) return std::nullopt;
  return i;
}

// Shift our GIT_CONFIG_KEY_i / GIT_CONFIG_VALUE_i after the `offset` entries the child's
// environment already has, so ours come last (an empty helper resets the list before).
Vars renumber_git_config(const Vars& vars, int offset) {
  if (offset == 0) return vars;
  Vars out;
  int count = 0;
  for (const auto& [k, v] : vars) {
    if (k == "GIT_CONFIG_COUNT") continue;
    bool renamed = false;
    for (const std::string prefix : {"GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"}) {
      if (const auto i = index_after(k, prefix)) {
        out.emplace_back(prefix + std::to_string(*i + offset), v);
        count = std::max(count, *i + 1);
        renamed = true;
        break;
      }
    }
    if (!renamed) out.emplace_back(k, v);
  }
  out.emplace_back("GIT_CONFIG_COUNT", std::to_string(offset + count));
  return out;
}

struct Cached {
  std::optional<EnvFile> file;
  Assessment state;
};

Cached cached(const std::string& dir, const CredentialKind& kind, double now) {
  Cached c;
  c.file = read_env_file(dir, kind);
  c.state = assess(c.file, kind, now);
  if (c.file) c.state.error = redact(c.state.error, c.file->vars);
  return c;
}

const char* state_name(const Assessment& a) {
  switch (a.state) {
    case Freshness::fresh:
      return "valid";
    case Freshness::failed:
      return a.usable ? "refresh-failed" : "failed";
    case Freshness::stale:
      return a.usable ? "due" : "expired";
    case Freshness::missing:
      break;
  }
  return "not-exported";
}

}  // namespace

bool wants_credentials(const BoundaryConfig& c) {
  return c.aws_profile.has_value() || wants_github(c);
}

Injection prepare_injection(const std::string& dir, const BoundaryConfig& c,
                            const std::vector<std::string>& child_env) {
  Injection inj;
  std::vector<Source> sources;
  std::vector<bool> is_aws;
  std::vector<std::string> aws_notes, github_notes;  // printed in this order
  if (c.aws_profile) {
    if (c.aws_cli.empty()) {
      aws_notes.push_back(no_aws_cli_note());
    } else {
      const std::string aws = c.aws_cli, profile = *c.aws_profile;
      sources.push_back(
          {aws_kind(profile), [aws, profile](int t) { return export_aws(aws, profile, t); }});
      is_aws.push_back(true);
    }
  }
  if (wants_github(c)) {
    if (c.gh_cli.empty()) {
      github_notes.push_back(no_gh_note());
    } else {
      const std::string gh = c.gh_cli;
      sources.push_back({github_kind(), [gh](int t) { return export_github(gh, t); }});
      is_aws.push_back(false);
    }
  }
  const std::vector<Loaded> loaded =
      sources.empty() ? std::vector<Loaded>{} : load_or_refresh(dir, sources);
  for (std::size_t i = 0; i < loaded.size(); ++i) {
    const Loaded& l = loaded[i];
    const bool aws = is_aws[i];
    std::vector<std::string>& notes = aws ? aws_notes : github_notes;
    Vars vars = l.vars;
    if (!aws) vars = renumber_git_config(vars, existing_git_config_count(child_env));
    for (auto& kv : vars) inj.env.push_back(std::move(kv));
    if (!l.error.empty())
      notes.push_back(aws ? aws_failure_note(l.error) : github_failure_note(l.error));
    if (!l.refresh_error.empty())
      notes.push_back(aws ? aws_refresh_note(l.refresh_error, l.expires_at)
                          : github_refresh_note(l.refresh_error));
    if (!l.warning.empty()) notes.push_back(l.warning);
  }
  inj.notes = std::move(aws_notes);
  inj.notes.insert(inj.notes.end(), github_notes.begin(), github_notes.end());
  return inj;
}

std::vector<std::string> injection_notes(const std::string& dir, const BoundaryConfig& c,
                                         double now) {
  std::vector<std::string> out;
  if (c.aws_profile) {
    const std::string who = "AWS credentials of profile `" + one_line(*c.aws_profile, 100) + "`";
    if (c.aws_cli.empty()) {
      out.push_back(no_aws_cli_note());
    } else {
      const Cached k = cached(dir, aws_kind(*c.aws_profile), now);
      const Assessment& a = k.state;
      if (a.state == Freshness::fresh)
        out.push_back(who + " injected" +
                      (a.expires_at ? " (valid until " + human_time(*a.expires_at) + ")" : ""));
      else if (a.state == Freshness::failed && a.usable)
        out.push_back(who + " injected; " + aws_refresh_note(a.error, a.expires_at));
      else if (a.state == Freshness::failed)
        out.push_back(aws_failure_note(a.error));
      else
        out.push_back(who + " exported at launch");
    }
  }
  if (wants_github(c)) {
    if (c.gh_cli.empty()) {
      out.push_back(no_gh_note());
    } else {
      const Cached k = cached(dir, github_kind(), now);
      const Assessment& a = k.state;
      if (a.state == Freshness::fresh)
        out.push_back("GitHub token injected");
      else if (a.state == Freshness::failed && a.usable)
        out.push_back("GitHub token injected; " + github_refresh_note(a.error));
      else if (a.state == Freshness::failed)
        out.push_back(github_failure_note(a.error));
      else
        out.push_back("GitHub token exported at launch");
    }
  }
  return out;
}

nlohmann::ordered_json credential_status(const std::string& dir, const BoundaryConfig& c,
                                         double now) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  const auto describe = [&](const CredentialKind& kind, const std::string& tool) {
    nlohmann::ordered_json e;
    e["tool"] = tool.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(tool);
    e["file"] = dir + "/" + kind.file;
    const Cached k = cached(dir, kind, now);
    e["state"] = tool.empty() ? "no-tool" : state_name(k.state);
    if (k.state.exported_at) e["exported_at"] = *k.state.exported_at;
    if (k.state.expires_at) e["expires_at"] = *k.state.expires_at;
    if (!k.state.error.empty()) e["error"] = k.state.error;
    return e;
  };
  if (c.aws_profile) {
    j["aws"] = describe(aws_kind(*c.aws_profile), c.aws_cli);
    j["aws"]["profile"] = *c.aws_profile;
  }
  if (wants_github(c)) j["github"] = describe(github_kind(), c.gh_cli);
  return j;
}

std::vector<std::string> credential_status_lines(const std::string& dir, const BoundaryConfig& c,
                                                 double now) {
  std::vector<std::string> out;
  const nlohmann::ordered_json j = credential_status(dir, c, now);
  for (const auto& [name, e] : j.items()) {
    std::string line = "credentials: " + std::string(name == "aws" ? "AWS" : "GitHub");
    // append, not `" " + std::string`: see GCC PR 105329 (a false -Wrestrict at -O3).
    if (e.contains("profile")) line.append(" profile ").append(e["profile"].get<std::string>());
    line.append(" ").append(e["state"].get<std::string>());
    if (e.contains("expires_at")) line += " until " + human_time(e["expires_at"].get<double>());
    if (e.contains("error")) line += " (" + e["error"].get<std::string>() + ")";
    out.push_back(line);
  }
  return out;
}

void remove_unrequested(const std::string& dir, const BoundaryConfig& c) {
  const std::string aws_file = dir + "/" + kAwsFile, gh_file = dir + "/" + kGithubFile;
  bool drop_aws = !c.aws_profile.has_value();
  if (!drop_aws) {
    const auto f = read_env_file(dir, aws_kind(*c.aws_profile));
    const std::string* owner = f ? f->get("profile") : nullptr;
    drop_aws = f && (!owner || *owner != one_line(*c.aws_profile));
  }
  const bool drop_gh = !wants_github(c);
  if (!drop_aws && !drop_gh) return;
  if (::access(aws_file.c_str(), F_OK) != 0 && ::access(gh_file.c_str(), F_OK) != 0) return;
  // Wait for a launch that is exporting right now, so it cannot write after we removed.
  FileLock lock;
  try {
    lock = FileLock::acquire(dir + "/" + kLockFile, kLaunchBudgetMs + 2000);
  } catch (const std::exception&) {
  }
  if (drop_aws) ::unlink(aws_file.c_str());
  if (drop_gh) ::unlink(gh_file.c_str());
}

}  // namespace agent_boundary::credentials
