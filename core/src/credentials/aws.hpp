// AWS: `aws configure export-credentials --profile P` and `aws configure get region
// --profile P`, run outside the boundary (by the launcher, before it execs the backend)
// with the user's environment, so the real ~/.aws and SSO cache are used there while the
// boundary keeps them denied. Injected: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AWS_REGION/AWS_DEFAULT_REGION, and AWS_CONFIG_FILE /
// AWS_SHARED_CREDENTIALS_FILE pointed at /dev/null (SDKs would otherwise try the denied
// ~/.aws). Re-exported 5 minutes before `Expiration` (hourly without one); a failure is
// cached for 5 minutes.
#pragma once

#include <optional>
#include <string>

#include "agent_boundary/process.hpp"
#include "credentials/env_file.hpp"

namespace agent_boundary::credentials {

inline constexpr const char* kAwsFile = "aws-credentials.env";
inline constexpr double kAwsRefreshMargin = 300;
inline constexpr double kAwsMaxAge = 3600;  // credentials without an Expiration
inline constexpr double kAwsFailureTtl = 300;

CredentialKind aws_kind(const std::string& profile);

// The argv of the two exporters: fixed words and the profile name, never a secret.
std::vector<std::string> aws_export_argv(const std::string& aws_cli, const std::string& profile);
std::vector<std::string> aws_region_argv(const std::string& aws_cli, const std::string& profile);

// Turn the two processes' results into the variables to inject (pure; tested directly).
ExportResult parse_aws_export(const ProcessResult& credentials, const ProcessResult& region,
                              int timeout_ms);

// Run both exporters concurrently, each within `timeout_ms`.
ExportResult export_aws(const std::string& aws_cli, const std::string& profile, int timeout_ms);

// "2026-01-02T03:04:05Z", "...+00:00", "...-07:00", with optional fractional seconds.
std::optional<double> parse_iso8601(const std::string& text);

// "no AWS creds: <error> — try `aws sso login`"
std::string aws_failure_note(const std::string& error);

}  // namespace agent_boundary::credentials
