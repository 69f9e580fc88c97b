// Credential env files: the cache of one exported credential in a session dir, and the
// protocol that refreshes it.
//
//   # agent-boundary AWS credentials — do not edit
//   # profile=MyOrg/ReadOnly
//   # exported_at=1767225600.000
//   # expires_at=1767229200.000
//   export AWS_ACCESS_KEY_ID=AKIA...
//
// A failure record has `# failed_at=` and `# error=` and no exports. A success record
// whose refresh failed while it was still valid keeps its exports and gains
// `# refresh_failed_at=` and `# error=`: a still-valid credential is never thrown away
// because a refresh failed. Values are shell-quoted (the reference's format), metadata
// values are single lines without secrets.
//
// Files are written only by the launcher (outside the boundary), 0600 from the first byte
// and atomically (write_file_atomic), under one flock per session (`credentials.lock`), so
// concurrent launches export once and a crashed export leaves the old file as it was.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace agent_boundary::credentials {

using Vars = std::vector<std::pair<std::string, std::string>>;

inline constexpr const char* kLockFile = "credentials.lock";
inline constexpr int kExportTimeoutMs = 15000;  // per exporter process
// Everything the launcher spends on credentials (waiting for another launch's export
// included) stays within this budget, well under a harness hook's deadline.
inline constexpr int kLaunchBudgetMs = 15000;

struct EnvFile {
  std::vector<std::pair<std::string, std::string>> meta;  // `# key=value`, in file order
  Vars vars;                                              // `export K=V`, values unquoted

  const std::string* get(const std::string& key) const;
  std::optional<double> number(const std::string& key) const;
  void set(const std::string& key, const std::string& value);
  void erase(const std::string& key);
};

// `title` is the first comment line (without "# ").
std::string render_env_file(const std::string& title, const EnvFile& file);
// nullopt when a line is neither a comment, blank, nor a well-formed `export K=V`.
std::optional<EnvFile> parse_env_file(const std::string& text);
// The inverse of shell_quote() (plain characters, '...' segments, backslash escapes);
// nullopt for anything a shell would expand or that is unterminated.
std::optional<std::string> shell_unquote(const std::string& word);
// A metadata-safe single line: control characters become spaces, at most `limit` chars.
std::string one_line(const std::string& text, std::size_t limit = 300);
// `text` with every secret value (of 4+ characters) in `secrets` replaced by [redacted].
std::string redact(std::string text, const Vars& secrets);
// "%.3f" seconds since the epoch, and back.
std::string format_time(double t);
// "2026-01-02 03:04 UTC" for messages.
std::string human_time(double t);
double now_seconds();

// What one kind of credential is called, where it is cached and how long it stays fresh.
struct CredentialKind {
  std::string name;           // "AWS"
  std::string file;           // "aws-credentials.env"
  std::string title;          // "agent-boundary AWS credentials — do not edit"
  std::string owner_key;      // "profile": the cache belongs to this value ...
  std::string owner;          // ... and is re-exported when it differs
  double refresh_margin = 0;  // re-export this long before expires_at
  double max_age = 0;         // without expires_at: re-export this long after exported_at
  double failure_ttl = 0;     // a failure is not retried for this long
};

enum class Freshness {
  missing,  // no usable file (absent, corrupt, another owner)
  fresh,    // valid and not due for a refresh
  stale,    // due for a refresh (its exports may still be valid: `usable`)
  failed,   // a failure (or a failed refresh) younger than failure_ttl: do not retry yet
};

struct Assessment {
  Freshness state = Freshness::missing;
  bool usable = false;  // the file holds credentials valid now (inject them)
  std::string error;    // the cached failure (failed), without secrets
  std::optional<double> exported_at, expires_at;
  bool export_needed() const { return state == Freshness::missing || state == Freshness::stale; }
};

Assessment assess(const std::optional<EnvFile>& file, const CredentialKind& kind, double now);

struct ExportResult {
  bool ok = false;
  Vars vars;
  std::optional<double> expires_at;
  std::string error;       // one line, no secrets
  bool timed_out = false;  // an exporter process ran out of time
};

EnvFile success_record(const CredentialKind& kind, const ExportResult& result, double now);
EnvFile failure_record(const CredentialKind& kind, const std::string& error, double now);
// `old` (still valid) with the failed refresh noted; its exports are kept.
EnvFile refresh_failed_record(const EnvFile& old, const std::string& error, double now);

// One credential for refresh(): its kind and how to export it (timeout in ms).
struct Source {
  CredentialKind kind;
  std::function<ExportResult(int timeout_ms)> exporter;
};

struct Loaded {
  Vars vars;                  // to inject (empty when there is nothing valid)
  std::string error;          // nothing to inject: why (no secrets)
  std::string refresh_error;  // injecting still-valid credentials whose refresh failed: why
  std::string warning;        // e.g. the cache could not be written
  std::optional<double> expires_at;
  bool exported_now = false;
};

// Read each source's cache in `session_dir`; when one is missing or due, take the session's
// lock (waiting within `budget_ms`), look again, and run the due exporters concurrently.
// Never throws for a failed export; write errors are reported in `error`.
std::vector<Loaded> load_or_refresh(const std::string& session_dir,
                                    const std::vector<Source>& sources,
                                    int budget_ms = kLaunchBudgetMs);

// The cache file of `kind` in `session_dir`, parsed (nullopt when absent or corrupt).
std::optional<EnvFile> read_env_file(const std::string& session_dir, const CredentialKind& kind);

}  // namespace agent_boundary::credentials
