// The status line: one coloured token when the plugin is enabled for the session's
// checkout, nothing otherwise. Runs on every render, so it spawns nothing (no git, no jq):
// the checkout is found by walking up to `.git`, the settings are read directly.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "claude_harness.hpp"
#include "payload.hpp"

namespace agent_boundary::claude {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRed = "\x1b[31m";
constexpr const char* kYellow = "\x1b[33m";
constexpr const char* kGreen = "\x1b[32m";
constexpr const char* kReset = "\x1b[0m";
constexpr std::string_view kPluginPrefix = "agent-boundary";

std::optional<std::string> read_small_file(const fs::path& file, std::size_t limit) {
  // These files live in agent-writable trees: never block on a FIFO or a device, read only
  // regular files, in small chunks (the status line runs on every render).
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<std::size_t>(st.st_size) <= limit) {
    text.emplace();
    char buf[16384];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        text.reset();
        break;
      }
      if (n == 0) break;
      text->append(buf, static_cast<std::size_t>(n));
      if (text->size() > limit) {
        text.reset();
        break;
      }
    }
  }
  ::close(fd);
  return text;
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

fs::path normal(const fs::path& p) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : out;
}

struct Checkout {
  fs::path root;  // the working tree holding cwd
  fs::path main;  // the main working tree (differs from root in a linked worktree)
};

// `<dir>/.git` as a file ("gitdir: <path>") points at the real git dir.
fs::path git_dir_of(const fs::path& dir, const fs::path& dotgit, bool is_file) {
  if (!is_file) return dotgit;
  const auto text = read_small_file(dotgit, 4096);
  if (!text) return dotgit;
  const std::string line = trimmed(text->substr(0, text->find('\n')));
  const std::string key = "gitdir:";
  if (line.compare(0, key.size(), key) != 0) return dotgit;
  const fs::path target = trimmed(line.substr(key.size()));
  return target.is_absolute() ? target : dir / target;
}

// The main checkout is the parent of the common git dir (`commondir` in a worktree's git
// dir names it, relative to that git dir).
fs::path main_of(const fs::path& git_dir) {
  fs::path common = git_dir;
  if (const auto text = read_small_file(git_dir / "commondir", 4096)) {
    const fs::path c = trimmed(*text);
    if (!c.empty()) common = c.is_absolute() ? c : git_dir / c;
  }
  return normal(common).parent_path();
}

std::optional<Checkout> find_checkout(const std::string& cwd) {
  fs::path dir = fs::path(cwd).lexically_normal();
  if (!dir.has_filename() && dir != dir.root_path()) dir = dir.parent_path();
  for (;;) {
    const fs::path dotgit = dir / ".git";
    std::error_code ec;
    const fs::file_status st = fs::status(dotgit, ec);
    if (!ec && (fs::is_directory(st) || fs::is_regular_file(st)))
      return Checkout{dir, main_of(git_dir_of(dir, dotgit, fs::is_regular_file(st)))};
    if (dir == dir.root_path() || dir.empty()) return std::nullopt;
    dir = dir.parent_path();
  }
}

enum class Mention { none, enabled, disabled };

// What one settings file says about the plugin; unreadable or invalid files say nothing.
Mention mention_in(const fs::path& settings) {
  const auto text = read_small_file(settings, kMaxPayloadBytes);
  if (!text) return Mention::none;
  const auto j = try_parse_object(*text);
  if (!j) return Mention::none;
  const auto plugins = j->find("enabledPlugins");
  if (plugins == j->end() || !plugins->is_object()) return Mention::none;
  Mention m = Mention::none;
  for (const auto& [key, value] : plugins->items()) {
    if (std::string_view(key).substr(0, kPluginPrefix.size()) != kPluginPrefix) continue;
    if (value.is_boolean() && value.get<bool>()) return Mention::enabled;
    m = Mention::disabled;
  }
  return m;
}

// Claude's settings precedence, most specific first: local before shared, the worktree
// before the main checkout, the project before the user.
std::vector<fs::path> settings_files(const std::optional<Checkout>& checkout,
                                     const std::string& cwd) {
  const fs::path root = checkout ? checkout->root : fs::path(cwd);
  const fs::path main = checkout ? checkout->main : root;
  std::vector<fs::path> files;
  for (const char* name : {"settings.local.json", "settings.json"})
    for (const fs::path& dir : {root, main}) {
      const fs::path f = dir / ".claude" / name;
      if (files.empty() || files.back() != f) files.push_back(f);
    }
  const char* config = std::getenv("CLAUDE_CONFIG_DIR");
  const char* home = std::getenv("HOME");
  if (config && *config)
    files.push_back(fs::path(config) / "settings.json");
  else if (home && *home)
    files.push_back(fs::path(home) / ".claude" / "settings.json");
  return files;
}

std::optional<std::string> string_at(const Json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// The profile name goes to a terminal: no control characters.
std::string printable(const std::string& s) {
  std::string out = s.empty() ? "?" : s;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

std::string token(const char* colour, const std::string& text) {
  return std::string(colour) + "boundary:" + text + kReset;
}

}  // namespace

std::string ClaudeHarness::statusline(const std::string& payload,
                                      SessionStatus (*lookup)(const std::string&)) const {
  const auto p = try_parse_object(payload);
  if (!p) return "";
  const auto session_id = string_at(*p, "session_id");
  if (!session_id) return "";
  std::optional<std::string> cwd;
  if (const auto ws = p->find("workspace"); ws != p->end() && ws->is_object())
    cwd = string_at(*ws, "current_dir");
  if (!cwd) cwd = string_at(*p, "cwd");
  if (!cwd || cwd->empty() || (*cwd)[0] != '/') return "";

  // No settings file mentions the plugin: stay silent (status lines are shared across repos).
  const auto checkout = find_checkout(*cwd);
  bool mentioned = false, enabled = false;
  for (const fs::path& f : settings_files(checkout, *cwd)) {
    const Mention m = mention_in(f);
    if (m == Mention::none) continue;
    mentioned = true;
    enabled = m == Mention::enabled;
    break;
  }
  if (!mentioned) return "";
  if (!enabled) return token(kRed, "off");

  const SessionStatus s = lookup ? lookup(*session_id) : SessionStatus{};
  if (!s.exists || s.state == "off") return token(kRed, "off");
  return token(s.self_edit ? kYellow : kGreen, printable(s.profile));
}

}  // namespace agent_boundary::claude
