#include "credentials/env_file.hpp"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <future>
#include <memory>

#include "agent_boundary/error.hpp"
#include "agent_boundary/process.hpp"
#include "secure_file.hpp"

namespace agent_boundary::credentials {
namespace {

constexpr double kClockSlack = 60;  // timestamps this far in the future are still believed
constexpr std::size_t kMaxEnvFile = 64 << 10;

bool plain_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_-./=:@%+,").find(c) != std::string_view::npos;
}

bool valid_name(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

std::optional<double> to_number(const std::string& s) {
  if (s.empty() || s.size() > 40) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Leftovers of a writer that died between creating its temp file and renaming it.
void remove_stale_temps(const std::string& dir, const std::string& file) {
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return;
  const std::string prefix = file + ".";
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d.get())) {
    const std::string name = e->d_name;
    if (name.starts_with(prefix) && name.ends_with(".tmp")) stale.push_back(name);
  }
  for (const auto& name : stale) ::unlink((dir + "/" + name).c_str());
}

Loaded from_cache(const std::optional<EnvFile>& file, const Assessment& a) {
  Loaded l;
  l.expires_at = a.expires_at;
  if (a.usable && file) l.vars = file->vars;
  if (a.state == Freshness::failed) (a.usable ? l.refresh_error : l.error) = a.error;
  return l;
}

}  // namespace

const std::string* EnvFile::get(const std::string& key) const {
  for (const auto& [k, v] : meta)
    if (k == key) return &v;
  return nullptr;
}

std::optional<double> EnvFile::number(const std::string& key) const {
  const std::string* v = get(key);
  return v ? to_number(*v) : std::nullopt;
}

void EnvFile::set(const std::string& key, const std::string& value) {
  for (auto& [k, v] : meta)
    if (k == key) {
      v = one_line(value);
      return;
    }
  meta.emplace_back(key, one_line(value));
}

void EnvFile::erase(const std::string& key) {
  std::erase_if(meta, [&](const auto& kv) { return kv.first == key; });
}

std::string render_env_file(const std::string& title, const EnvFile& file) {
  std::string out = "# " + one_line(title) + "\n";
  for (const auto& [k, v] : file.meta) out += "# " + one_line(k) + "=" + one_line(v) + "\n";
  for (const auto& [k, v] : file.vars) out += "export " + k + "=" + shell_quote(v) + "\n";
  return out;
}

std::optional<std::string> shell_unquote(const std::string& word) {
  std::string out;
  for (std::size_t i = 0; i < word.size(); ++i) {
    const char c = word[i];
    if (c == '\'') {
      const auto end = word.find('\'', i + 1);
      if (end == std::string::npos) return std::nullopt;
      out.append(word, i + 1, end - i - 1);
      i = end;
    } else if (c == '\\') {
      if (i + 1 >= word.size() || word[i + 1] == '\n') return std::nullopt;
      out += word[++i];
    } else if (plain_char(c)) {
      out += c;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<EnvFile> parse_env_file(const std::string& text) {
  EnvFile f;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    if (line[0] == '#') {
      const auto eq = line.find('=');
      if (line.starts_with("# ") && eq != std::string::npos)
        f.meta.emplace_back(line.substr(2, eq - 2), line.substr(eq + 1));
      continue;
    }
    if (!line.starts_with("export ")) return std::nullopt;
    const std::string assignment = line.substr(7);
    const auto eq = assignment.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const std::string name = assignment.substr(0, eq);
    const auto value = shell_unquote(assignment.substr(eq + 1));
    if (!valid_name(name) || !value) return std::nullopt;
    f.vars.emplace_back(name, *value);
  }
  return f;
}

std::string one_line(const std::string& text, std::size_t limit) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  const auto start = out.find_first_not_of(' ');
  out = start == std::string::npos ? std::string() : out.substr(start);
  if (out.size() > limit) out = out.substr(0, limit) + "...";
  return out;
}

std::string redact(std::string text, const Vars& secrets) {
  for (const auto& [k, v] : secrets) {
    if (v.size() < 4) continue;
    for (auto p = text.find(v); p != std::string::npos; p = text.find(v, p))
      text.replace(p, v.size(), "[redacted]");
  }
  return text;
}

std::string format_time(double t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", t);
  return buf;
}

std::string human_time(double t) {
  const std::time_t s = static_cast<std::time_t>(t);
  std::tm tm{};
  ::gmtime_r(&s, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

Assessment assess(const std::optional<EnvFile>& file, const CredentialKind& kind, double now) {
  Assessment a;
  if (!file) return a;
  const std::string* owner = file->get(kind.owner_key);
  if (!owner || *owner != one_line(kind.owner)) return a;
  const std::string* error = file->get("error");
  const std::string cached_error = error && !error->empty() ? *error : "export failed";
  if (const auto failed_at = file->number("failed_at")) {
    const double age = now - *failed_at;
    if (age >= -kClockSlack && age < kind.failure_ttl) {
      a.state = Freshness::failed;
      a.error = cached_error;
    }
    return a;
  }
  a.exported_at = file->number("exported_at");
  a.expires_at = file->number("expires_at");
  if (!a.exported_at || file->vars.empty() || *a.exported_at > now + kClockSlack) {
    a.expires_at.reset();
    return a;
  }
  a.usable = !a.expires_at || now < *a.expires_at;
  const double refresh_at =
      a.expires_at ? *a.expires_at - kind.refresh_margin : *a.exported_at + kind.max_age;
  if (now < refresh_at) {
    a.state = Freshness::fresh;
    return a;
  }
  const auto refresh_failed_at = file->number("refresh_failed_at");
  if (a.usable && refresh_failed_at && now - *refresh_failed_at >= -kClockSlack &&
      now - *refresh_failed_at < kind.failure_ttl) {
    a.state = Freshness::failed;
    a.error = cached_error;
    return a;
  }
  a.state = Freshness::stale;
  return a;
}

EnvFile success_record(const CredentialKind& kind, const ExportResult& result, double now) {
  EnvFile f;
  f.set(kind.owner_key, kind.owner);
  f.set("exported_at", format_time(now));
  if (result.expires_at) f.set("expires_at", format_time(*result.expires_at));
  f.vars = result.vars;
  return f;
}

EnvFile failure_record(const CredentialKind& kind, const std::string& error, double now) {
  EnvFile f;
  f.set(kind.owner_key, kind.owner);
  f.set("failed_at", format_time(now));
  f.set("error", error);
  return f;
}

EnvFile refresh_failed_record(const EnvFile& old, const std::string& error, double now) {
  EnvFile f = old;
  f.set("refresh_failed_at", format_time(now));
  f.set("error", error);
  return f;
}

std::optional<EnvFile> read_env_file(const std::string& session_dir, const CredentialKind& kind) {
  try {
    const auto text = read_file(session_dir + "/" + kind.file, kMaxEnvFile);
    if (!text || text->empty()) return std::nullopt;
    return parse_env_file(*text);
  } catch (const Error&) {
    return std::nullopt;  // unreadable: export again (and replace it)
  }
}

std::vector<Loaded> load_or_refresh(const std::string& dir, const std::vector<Source>& sources,
                                    int budget_ms) {
  const auto started = std::chrono::steady_clock::now();
  const std::size_t n = sources.size();
  std::vector<std::optional<EnvFile>> files(n);
  std::vector<Assessment> states(n);
  std::vector<Loaded> out(n);
  bool any_due = false;
  for (std::size_t i = 0; i < n; ++i) {
    files[i] = read_env_file(dir, sources[i].kind);
    states[i] = assess(files[i], sources[i].kind, now_seconds());
    out[i] = from_cache(files[i], states[i]);
    any_due = any_due || states[i].export_needed();
  }
  if (!any_due) return out;

  // Another launch may be exporting the same credentials: wait for it (within the budget)
  // and use what it wrote instead of exporting twice.
  FileLock lock;
  std::string lock_error;
  try {
    lock = FileLock::acquire(dir + "/" + kLockFile, budget_ms);
  } catch (const Error& e) {
    lock_error = e.message();
  }
  const auto elapsed_ms = [&] {
    return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - started)
                                .count());
  };
  const int timeout_ms = std::min(kExportTimeoutMs, budget_ms - elapsed_ms());
  if (!lock.held() || timeout_ms < 1000) {
    const std::string why = !lock_error.empty()
                                ? lock_error
                                : "another agent-boundary process is still exporting (waited " +
                                      std::to_string(elapsed_ms() / 1000) + " s)";
    for (std::size_t i = 0; i < n; ++i)
      if (states[i].export_needed() && out[i].vars.empty()) out[i].error = why;
    return out;
  }

  std::vector<std::size_t> due;
  for (std::size_t i = 0; i < n; ++i) {
    if (!states[i].export_needed()) continue;
    remove_stale_temps(dir, sources[i].kind.file);
    files[i] = read_env_file(dir, sources[i].kind);
    states[i] = assess(files[i], sources[i].kind, now_seconds());
    out[i] = from_cache(files[i], states[i]);
    if (states[i].export_needed()) due.push_back(i);
  }

  const auto run = [&](std::size_t i) {
    try {
      return sources[i].exporter(timeout_ms);
    } catch (const std::exception& e) {
      ExportResult failed;
      failed.error = one_line(e.what());
      return failed;
    }
  };
  std::vector<ExportResult> results(due.size());
  if (due.size() == 1) {
    results[0] = run(due[0]);
  } else {
    std::vector<std::future<ExportResult>> running;
    for (std::size_t i : due) running.push_back(std::async(std::launch::async, run, i));
    for (std::size_t k = 0; k < due.size(); ++k) results[k] = running[k].get();
  }

  const double now = now_seconds();
  for (std::size_t k = 0; k < due.size(); ++k) {
    const std::size_t i = due[k];
    const CredentialKind& kind = sources[i].kind;
    ExportResult& r = results[k];
    Loaded& l = out[i];
    std::optional<EnvFile> record;
    if (r.ok) {
      l = Loaded{};
      l.vars = r.vars;
      l.expires_at = r.expires_at;
      l.exported_now = true;
      record = success_record(kind, r, now);
    } else {
      const Vars old = files[i] ? files[i]->vars : Vars{};
      const std::string error = one_line(redact(r.error.empty() ? "export failed" : r.error, old));
      // A timeout of a cut-short budget says nothing about the source: not cached.
      const bool cacheable = !(r.timed_out && timeout_ms < kExportTimeoutMs);
      const Assessment& a = states[i];
      if (a.usable && a.expires_at && now < *a.expires_at) {
        l.refresh_error = error;  // keep the still-valid credentials
        if (cacheable) record = refresh_failed_record(*files[i], error, now);
      } else {
        l = Loaded{};
        l.error = error;
        if (cacheable) record = failure_record(kind, error, now);
      }
    }
    if (!record) continue;
    try {
      write_file_atomic(dir + "/" + kind.file, render_env_file(kind.title, *record));
    } catch (const Error& e) {
      l.warning = "could not cache the " + kind.name + " credentials: " + e.message();
    }
  }
  return out;
}

}  // namespace agent_boundary::credentials
