#include "credentials/aws.hpp"

#include <algorithm>
#include <ctime>
#include <future>
#include <nlohmann/json.hpp>

namespace agent_boundary::credentials {
namespace {

bool digits(const std::string& s, std::size_t pos, std::size_t n) {
  if (pos + n > s.size()) return false;
  for (std::size_t i = pos; i < pos + n; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

int number_at(const std::string& s, std::size_t pos, std::size_t n) {
  return std::stoi(s.substr(pos, n));
}

// Why a process failed, in one line: its first stderr line, else how it ended.
std::string process_failure(const ProcessResult& r, const std::string& what, int timeout_ms) {
  if (r.timed_out) return what + " timed out after " + std::to_string(timeout_ms / 1000) + " s";
  if (r.signal) return what + " was killed by signal " + std::to_string(r.signal);
  const std::string line = first_line(r.err, 300);
  return line.empty() ? what + " exited " + std::to_string(r.exit_code) : line;
}

bool plausible_region(const std::string& r) {
  if (r.empty() || r.size() > 40) return false;
  for (char c : r)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

ProcessResult run_exporter(const std::vector<std::string>& argv, int timeout_ms) {
  ProcessOptions opts;
  opts.argv = argv;  // the user's environment (nullopt env): the real ~/.aws, outside
  opts.timeout_ms = timeout_ms;
  opts.max_output = 256 << 10;
  try {
    return run_process(opts);
  } catch (const std::exception& e) {
    ProcessResult r;
    r.exit_code = 127;
    r.err = e.what();
    return r;
  }
}

}  // namespace

CredentialKind aws_kind(const std::string& profile) {
  CredentialKind k;
  k.name = "AWS";
  k.file = kAwsFile;
  k.title = "agent-boundary AWS credentials \xe2\x80\x94 do not edit";
  k.owner_key = "profile";
  k.owner = profile;
  k.refresh_margin = kAwsRefreshMargin;
  k.max_age = kAwsMaxAge;
  k.failure_ttl = kAwsFailureTtl;
  return k;
}

std::vector<std::string> aws_export_argv(const std::string& aws, const std::string& profile) {
  return {aws, "configure", "export-credentials", "--profile", profile};
}

std::vector<std::string> aws_region_argv(const std::string& aws, const std::string& profile) {
  return {aws, "configure", "get", "region", "--profile", profile};
}

std::optional<double> parse_iso8601(const std::string& s) {
  // YYYY-MM-DDTHH:MM:SS
  if (s.size() < 19 || !digits(s, 0, 4) || s[4] != '-' || !digits(s, 5, 2) || s[7] != '-' ||
      !digits(s, 8, 2) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(s, 11, 2) ||
      s[13] != ':' || !digits(s, 14, 2) || s[16] != ':' || !digits(s, 17, 2))
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = number_at(s, 0, 4) - 1900;
  tm.tm_mon = number_at(s, 5, 2) - 1;
  tm.tm_mday = number_at(s, 8, 2);
  tm.tm_hour = number_at(s, 11, 2);
  tm.tm_min = number_at(s, 14, 2);
  tm.tm_sec = number_at(s, 17, 2);
  if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
      tm.tm_sec > 60)
    return std::nullopt;
  std::size_t i = 19;
  double fraction = 0;
  if (i < s.size() && s[i] == '.') {
    std::size_t j = i + 1;
    double scale = 0.1;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9') {
      fraction += (s[j] - '0') * scale;
      scale /= 10;
      ++j;
    }
    if (j == i + 1) return std::nullopt;
    i = j;
  }
  long offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    const int sign = s[i] == '-' ? -1 : 1;
    if (!digits(s, i + 1, 2)) return std::nullopt;
    const int hh = number_at(s, i + 1, 2);
    std::size_t j = i + 3;
    if (j < s.size() && s[j] == ':') ++j;
    if (!digits(s, j, 2)) return std::nullopt;
    const int mm = number_at(s, j, 2);
    if (hh > 23 || mm > 59) return std::nullopt;
    offset = sign * (hh * 3600L + mm * 60L);
    i = j + 2;
  } else {
    return std::nullopt;  // a time without a zone is ambiguous
  }
  if (i != s.size()) return std::nullopt;
  const std::time_t t = ::timegm(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<double>(t) - static_cast<double>(offset) + fraction;
}

ExportResult parse_aws_export(const ProcessResult& creds, const ProcessResult& region,
                              int timeout_ms) {
  ExportResult r;
  if (!creds.ok()) {
    r.timed_out = creds.timed_out;
    r.error = process_failure(creds, "aws configure export-credentials", timeout_ms);
    return r;
  }
  // Never quote the output in an error: it holds the secret.
  const auto j = nlohmann::json::parse(creds.out, nullptr, false);
  if (j.is_discarded()) {
    r.error = "unparseable export-credentials output";
    return r;
  }
  const auto text = [&](const char* key) -> std::string {
    if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return {};
    return j[key].get<std::string>();
  };
  const std::string key_id = text("AccessKeyId"), secret = text("SecretAccessKey");
  if (key_id.empty() || secret.empty()) {
    r.error = "export-credentials output missing key material";
    return r;
  }
  const std::string token = text("SessionToken"), expiration = text("Expiration");
  for (const std::string* v : {&key_id, &secret, &token}) {
    if (std::any_of(v->begin(), v->end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
      r.error = "export-credentials output has control characters in its key material";
      return r;
    }
  }
  if (!expiration.empty()) {
    r.expires_at = parse_iso8601(expiration);
    if (!r.expires_at) {
      r.error =
          "export-credentials printed an unreadable Expiration `" + one_line(expiration, 60) + "`";
      return r;
    }
  }
  r.vars = {{"AWS_ACCESS_KEY_ID", key_id}, {"AWS_SECRET_ACCESS_KEY", secret}};
  if (!token.empty()) r.vars.emplace_back("AWS_SESSION_TOKEN", token);
  // The region lookup is best effort: its failure only means no region is injected.
  const std::string reg = region.ok() ? first_line(region.out, 60) : std::string();
  if (plausible_region(reg)) {
    r.vars.emplace_back("AWS_REGION", reg);
    r.vars.emplace_back("AWS_DEFAULT_REGION", reg);
  }
  r.vars.emplace_back("AWS_CONFIG_FILE", "/dev/null");
  r.vars.emplace_back("AWS_SHARED_CREDENTIALS_FILE", "/dev/null");
  r.ok = true;
  return r;
}

ExportResult export_aws(const std::string& aws, const std::string& profile, int timeout_ms) {
  auto region =
      std::async(std::launch::async, run_exporter, aws_region_argv(aws, profile), timeout_ms);
  const ProcessResult creds = run_exporter(aws_export_argv(aws, profile), timeout_ms);
  return parse_aws_export(creds, region.get(), timeout_ms);
}

std::string aws_failure_note(const std::string& error) {
  return "no AWS creds: " + error + " \xe2\x80\x94 try `aws sso login`";
}

}  // namespace agent_boundary::credentials
