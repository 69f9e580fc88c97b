// GitHub: `gh auth token --hostname github.com`, run outside the boundary (where gh reaches
// its keyring or hosts.yml). Injected: GH_TOKEN, GITHUB_TOKEN, and git configuration that
// clears the inherited credential helpers (e.g. osxkeychain, unreachable inside) and
// installs the pinned gh as the only one (`gh auth git-credential` reads GH_TOKEN).
// gh tokens carry no expiry: re-exported hourly (picks up re-logins and rotation); a
// failure is cached for 5 minutes. Only github.com.
#pragma once

#include <string>

#include "agent_boundary/process.hpp"
#include "credentials/env_file.hpp"

namespace agent_boundary::credentials {

inline constexpr const char* kGithubFile = "github-credentials.env";
inline constexpr const char* kGithubHost = "github.com";
inline constexpr double kGithubMaxAge = 3600;
inline constexpr double kGithubFailureTtl = 300;

CredentialKind github_kind();

std::vector<std::string> gh_token_argv(const std::string& gh_cli);

// The variables to inject for `token` (GIT_CONFIG_* numbered from 0; the launcher
// renumbers them after entries the user's environment already has).
Vars github_vars(const std::string& token, const std::string& gh_cli);

ExportResult parse_gh_token(const ProcessResult& result, const std::string& gh_cli, int timeout_ms);

ExportResult export_github(const std::string& gh_cli, int timeout_ms);

// "no GitHub token: <error> — try `gh auth login`"
std::string github_failure_note(const std::string& error);

}  // namespace agent_boundary::credentials
