#include "credentials/github.hpp"

namespace agent_boundary::credentials {

CredentialKind github_kind() {
  CredentialKind k;
  k.name = "GitHub";
  k.file = kGithubFile;
  k.title = "agent-boundary GitHub credentials \xe2\x80\x94 do not edit";
  k.owner_key = "host";
  k.owner = kGithubHost;
  k.refresh_margin = 0;
  k.max_age = kGithubMaxAge;
  k.failure_ttl = kGithubFailureTtl;
  return k;
}

std::vector<std::string> gh_token_argv(const std::string& gh) {
  return {gh, "auth", "token", "--hostname", kGithubHost};
}

Vars github_vars(const std::string& token, const std::string& gh) {
  return {{"GH_TOKEN", token},
          {"GITHUB_TOKEN", token},
          {"GIT_CONFIG_COUNT", "2"},
          {"GIT_CONFIG_KEY_0", "credential.helper"},
          // Empty: clears the helper list git inherited from the user's configuration.
          {"GIT_CONFIG_VALUE_0", ""},
          {"GIT_CONFIG_KEY_1", "credential.helper"},
          // The pinned gh by absolute path, never whatever `gh` PATH finds inside.
          // Built by append: `"!" + std::string` trips GCC 12's false -Wrestrict at -O3
          // (PR 105329).
          {"GIT_CONFIG_VALUE_1",
           std::string("!").append(shell_quote(gh)).append(" auth git-credential")}};
}

ExportResult parse_gh_token(const ProcessResult& p, const std::string& gh, int timeout_ms) {
  ExportResult r;
  if (p.timed_out) {
    r.timed_out = true;
    r.error = "gh auth token timed out after " + std::to_string(timeout_ms / 1000) + " s";
    return r;
  }
  if (!p.ok()) {
    r.error = p.signal ? "gh auth token was killed by signal " + std::to_string(p.signal)
                       : first_line(p.err, 300);
    if (r.error.empty()) r.error = "gh auth token exited " + std::to_string(p.exit_code);
    return r;
  }
  std::string token = p.out;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' '))
    token.pop_back();
  if (token.empty()) {
    r.error = "gh auth token printed nothing";
    return r;
  }
  for (char c : token) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) == 0x7f) {
      r.error = "gh auth token printed something that is not a token";  // never quoted
      return r;
    }
  }
  r.vars = github_vars(token, gh);
  r.ok = true;
  return r;
}

ExportResult export_github(const std::string& gh, int timeout_ms) {
  ProcessOptions opts;
  opts.argv = gh_token_argv(gh);  // the user's environment: gh's real config, outside
  opts.timeout_ms = timeout_ms;
  opts.max_output = 64 << 10;
  ProcessResult p;
  try {
    p = run_process(opts);
  } catch (const std::exception& e) {
    p.exit_code = 127;
    p.err = e.what();
  }
  return parse_gh_token(p, gh, timeout_ms);
}

std::string github_failure_note(const std::string& error) {
  return "no GitHub token: " + error + " \xe2\x80\x94 try `gh auth login`";
}

}  // namespace agent_boundary::credentials
