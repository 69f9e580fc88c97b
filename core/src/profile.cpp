// The strict profile reader. yaml-cpp's parser feeds events into a small tree of our own
// (so duplicate keys, tags, quoting and positions survive, and aliases are never expanded);
// the checker then walks that tree once and collects every problem as a Diagnostic.
#include "profile.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>

#include "agent_boundary/error.hpp"
#include "env_policy.hpp"
#include "paths.hpp"

namespace fs = std::filesystem;

namespace agent_boundary {
namespace {

// The one list of top-level keys the reader accepts (the schema test checks against it).
constexpr std::array<std::string_view, 21> kTopKeys = {"name",
                                                       "description",
                                                       "self_edit",
                                                       "git_common_dir",
                                                       "aws",
                                                       "kube",
                                                       "github",
                                                       "allow",
                                                       "read",
                                                       "write",
                                                       "deny",
                                                       "resolve_symlinks",
                                                       "env",
                                                       "nono",
                                                       "backend_options",
                                                       "backend",
                                                       "accept_unprotected_denies",
                                                       "allow_git_hook_escape",
                                                       "allow_agent_settings_escape",
                                                       "allow_host_sockets",
                                                       "keep_secret_env"};
constexpr std::array<std::string_view, 1> kAwsKeys = {"profile"};
constexpr std::array<std::string_view, 2> kKubeKeys = {"eks", "orbstack"};
constexpr std::array<std::string_view, 1> kGithubKeys = {"push"};
constexpr std::array<std::string_view, 3> kSymlinkKeys = {"path", "access", "bypass_protection"};

constexpr std::size_t kMaxProfileBytes = 1024 * 1024;
constexpr int kMaxNonoDepth = 64;

// ---------------------------------------------------------------------------------------
// A YAML tree that keeps what yaml-cpp's Node hides or loses.

enum class Kind { null, scalar, sequence, mapping, alias };

struct YNode {
  Kind kind = Kind::null;
  std::string tag;    // "?" plain, "!" quoted (non-specific); anything else is explicit
  std::string value;  // scalar text
  YAML::Mark mark;
  std::vector<std::size_t> kids;  // sequence items; mapping: key, value, key, value, ...
};

struct Pos {
  int line = 0;
  int column = 0;
};

Pos to_pos(const YAML::Mark& m) {
  return Pos{m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
}

class Context {
 public:
  Context(std::string file, const std::string& text) : file_(std::move(file)), text_(text) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < text_.size(); ++i)
      if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }

  void add(Pos p, std::string message, std::string fix) {
    Diagnostic d;
    d.pos.file = file_;
    d.pos.line = p.line;
    d.pos.column = p.line > 0 ? p.column : 0;
    d.message = std::move(message);
    d.fix = std::move(fix);
    diags_.push_back(std::move(d));
  }
  void add(const YAML::Mark& m, std::string message, std::string fix) {
    add(to_pos(m), std::move(message), std::move(fix));
  }

  std::vector<Diagnostic>& diags() { return diags_; }
  const std::string& text() const { return text_; }
  const std::string& file() const { return file_; }

  // 1-based position of a byte offset in the text.
  Pos pos_of_offset(std::size_t off) const {
    off = std::min(off, text_.size());
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), off) - 1;
    return Pos{static_cast<int>(it - line_starts_.begin()) + 1, static_cast<int>(off - *it) + 1};
  }

 private:
  std::string file_;
  const std::string& text_;
  std::vector<std::size_t> line_starts_;
  std::vector<Diagnostic> diags_;
};

const std::string kNoAnchorsFix =
    "write the value out in full; profiles do not use anchors, aliases or merge keys";

// Builds YNodes from parser events. Anchors and aliases are reported, never expanded.
class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(std::vector<YNode>& nodes, Context& ctx) : nodes_(nodes), ctx_(ctx) {}

  std::optional<std::size_t> root() const { return root_; }
  int documents() const { return documents_; }
  const YAML::Mark& second_document_mark() const { return second_mark_; }
  // Only count documents and stop recording (after the first one).
  void stop_recording() { recording_ = false; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    ++documents_;
    if (documents_ == 2) second_mark_ = mark;
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override {
    add(Kind::null, mark, "", "");
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (!recording_) return;
    auto it = anchor_names_.find(anchor);
    const std::string name = it != anchor_names_.end() ? " (`*" + it->second + "`)" : "";
    ctx_.add(mark, "YAML aliases are not supported" + name, kNoAnchorsFix);
    add(Kind::alias, mark, "", "");
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t /*anchor*/,
                const std::string& value) override {
    add(Kind::scalar, mark, tag, value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t /*anchor*/,
                       YAML::EmitterStyle::value /*style*/) override {
    stack_.push_back(add(Kind::sequence, mark, tag, ""));
  }
  void OnSequenceEnd() override {
    if (!stack_.empty()) stack_.pop_back();
  }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {
    stack_.push_back(add(Kind::mapping, mark, tag, ""));
  }
  void OnMapEnd() override {
    if (!stack_.empty()) stack_.pop_back();
  }
  void OnAnchor(const YAML::Mark& mark, const std::string& anchor_name) override {
    if (!recording_) return;
    anchor_names_[++anchor_count_] = anchor_name;
    ctx_.add(mark, "YAML anchors are not supported (`&" + anchor_name + "`)", kNoAnchorsFix);
  }

 private:
  std::size_t add(Kind kind, const YAML::Mark& mark, const std::string& tag,
                  const std::string& value) {
    if (!recording_) return 0;
    YNode n;
    n.kind = kind;
    n.tag = tag;
    n.value = value;
    n.mark = mark;
    const std::size_t id = nodes_.size();
    nodes_.push_back(std::move(n));
    if (!stack_.empty()) {
      nodes_[stack_.back()].kids.push_back(id);
    } else if (!root_) {
      root_ = id;
    }
    return id;
  }

  std::vector<YNode>& nodes_;
  Context& ctx_;
  std::vector<std::size_t> stack_;
  std::optional<std::size_t> root_;
  std::map<YAML::anchor_t, std::string> anchor_names_;
  YAML::anchor_t anchor_count_ = 0;
  int documents_ = 0;
  YAML::Mark second_mark_;
  bool recording_ = true;
};

// ---------------------------------------------------------------------------------------
// Small helpers.

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

template <std::size_t N>
std::string join_keys(const std::array<std::string_view, N>& keys) {
  std::string out;
  for (const auto& k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

template <std::size_t N>
std::string suggest_key(const std::string& key, const std::array<std::string_view, N>& keys) {
  const std::string lk = lower(key);
  std::size_t best = 3;
  std::string_view best_key;
  for (const auto& k : keys) {
    const std::size_t d = edit_distance(lk, k);
    if (d < best && d < k.size()) {
      best = d;
      best_key = k;
    }
  }
  if (!best_key.empty()) return "did you mean `" + std::string(best_key) + "`?";
  return "valid keys here: " + join_keys(keys);
}

bool is_plain(const YNode& n) { return n.kind == Kind::scalar && n.tag == "?"; }
bool has_explicit_tag(const YNode& n) {
  return n.kind != Kind::null && n.kind != Kind::alias && n.tag != "?" && n.tag != "!" &&
         !n.tag.empty();
}
std::string show_tag(const std::string& tag) {
  const std::string_view core = "tag:yaml.org,2002:";
  if (tag.rfind(core, 0) == 0) return "!!" + tag.substr(core.size());
  return tag;
}

// Plain scalars YAML 1.1 readers (and yaml-cpp's as<bool>) treat as booleans.
bool is_bool_word(const std::string& s) {
  static const std::set<std::string> words = {"true", "false", "yes", "no", "on", "off"};
  return words.count(lower(s)) > 0;
}

// Plain scalars a YAML reader would type as a number.
bool looks_like_number(const std::string& s) {
  static const std::regex re(
      R"(^[-+]?([0-9][0-9_]*|0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|[0-9][0-9_]*\.[0-9_]*([eE][-+]?[0-9]+)?|\.[0-9][0-9_]*([eE][-+]?[0-9]+)?|[0-9][0-9_]*[eE][-+]?[0-9]+|\.(inf|Inf|INF))$|^\.(nan|NaN|NAN)$)");
  return std::regex_match(s, re);
}

const char* describe_kind(const YNode& n) {
  switch (n.kind) {
    case Kind::null:
      return "null";
    case Kind::scalar:
      return "a string";
    case Kind::sequence:
      return "a list";
    case Kind::mapping:
      return "a mapping";
    case Kind::alias:
      return "an alias";
  }
  return "something else";
}

// A value and the position to report when it is wrong. For null values the parser's mark
// points at the next token, so the caller supplies a better one (the key, or the `-`).
struct Slot {
  std::size_t node;
  Pos pos;
};

struct Entry {
  std::string key;
  Pos key_pos;
  Slot value;
};

// ---------------------------------------------------------------------------------------
// The checker.

class Checker {
 public:
  Checker(Context& ctx, const std::vector<YNode>& nodes) : ctx_(ctx), nodes_(nodes) {}

  std::optional<Profile> check(std::size_t root);

 private:
  const YNode& node(const Slot& s) const { return nodes_[s.node]; }
  void add(Pos p, std::string msg, std::string fix) { ctx_.add(p, std::move(msg), std::move(fix)); }

  // True when the node is unusable for reasons already reported (alias) or reported now
  // (explicit tag).
  bool refused(const Slot& s) {
    const YNode& n = node(s);
    if (n.kind == Kind::alias) return true;
    if (has_explicit_tag(n)) {
      add(s.pos, "YAML tags are not supported (`" + show_tag(n.tag) + "`)",
          "remove the tag; quote a value to make it a string");
      return true;
    }
    return false;
  }

  // An empty value's mark is the next token, often on a later line: report at the key then.
  Slot value_slot(std::size_t value_node, Pos key_pos) const {
    const YNode& v = nodes_[value_node];
    const Pos p = to_pos(v.mark);
    if (v.kind == Kind::null && (p.line != key_pos.line || p.column <= key_pos.column))
      return Slot{value_node, key_pos};
    return Slot{value_node, p};
  }

  // Position for an item of a sequence; an empty item (`-` alone) reports at its `-`.
  Slot item_slot(std::size_t item) const {
    const YNode& n = nodes_[item];
    Pos p = to_pos(n.mark);
    if (n.kind != Kind::null) return Slot{item, p};
    const std::string& text = ctx_.text();
    if (n.mark.pos < 0 || static_cast<std::size_t>(n.mark.pos) > text.size()) return Slot{item, p};
    const auto off = static_cast<std::size_t>(n.mark.pos);
    const Pos check = ctx_.pos_of_offset(off);
    if (check.line != p.line || check.column != p.column) return Slot{item, p};
    const std::string_view rest = std::string_view(text).substr(off);
    if (rest.starts_with("~") || rest.starts_with("null") || rest.starts_with("Null") ||
        rest.starts_with("NULL"))
      return Slot{item, p};
    // Walk back over blank and comment-only text to the `-` that opened this item.
    std::size_t end = off;
    while (true) {
      const std::size_t nl = end == 0 ? std::string::npos : text.rfind('\n', end - 1);
      const std::size_t start = nl == std::string::npos ? 0 : nl + 1;
      std::string_view seg = std::string_view(text).substr(start, end - start);
      for (std::size_t h = 0; h < seg.size(); ++h) {
        if (seg[h] == '#' && (h == 0 || seg[h - 1] == ' ' || seg[h - 1] == '\t')) {
          seg = seg.substr(0, h);
          break;
        }
      }
      while (!seg.empty() && std::isspace(static_cast<unsigned char>(seg.back())))
        seg.remove_suffix(1);
      if (!seg.empty()) {
        if (seg.back() == '-') return Slot{item, ctx_.pos_of_offset(start + seg.size() - 1)};
        return Slot{item, p};
      }
      if (start == 0) return Slot{item, p};
      end = start - 1;
    }
  }

  // The entries of a mapping, with duplicate, merge and (when `known` is given) unknown
  // keys reported and dropped.
  template <std::size_t N>
  std::vector<Entry> entries(const Slot& map, const std::array<std::string_view, N>* known,
                             const std::string& where);

  std::optional<std::string> string_value(const Slot& s, bool reject_numbers = false);
  std::optional<bool> bool_value(const Slot& s);
  void path_list(const Entry& e, std::vector<PathEntry>& out);
  std::optional<PathEntry> path_value(const Slot& s);
  void symlink_list(const Entry& e, std::vector<SymlinkSpec>& out);
  void env_map(const Entry& e, std::vector<std::pair<std::string, std::string>>& out);
  void name_list(const Entry& e, bool paths_too, std::vector<PathEntry>& out);
  std::optional<nlohmann::json> to_json(const Slot& s, int depth);
  bool expect_mapping(const Entry& e, bool null_ok, const std::string& example);

  Context& ctx_;
  const std::vector<YNode>& nodes_;
};

template <std::size_t N>
std::vector<Entry> Checker::entries(const Slot& map, const std::array<std::string_view, N>* known,
                                    const std::string& where) {
  std::vector<Entry> out;
  std::map<std::string, Pos> seen;
  const YNode& m = node(map);
  for (std::size_t i = 0; i + 1 < m.kids.size(); i += 2) {
    const YNode& k = nodes_[m.kids[i]];
    const Pos kp = to_pos(k.mark);
    if (k.kind == Kind::alias) continue;
    if (has_explicit_tag(k)) {
      add(kp, "YAML tags are not supported (`" + show_tag(k.tag) + "`)", "remove the tag");
      continue;
    }
    if (k.kind == Kind::null) {
      add(kp, "empty mapping key", "write `key: value`");
      continue;
    }
    if (k.kind != Kind::scalar) {
      add(kp, std::string("mapping keys must be strings, got ") + describe_kind(k),
          "write `key: value`");
      continue;
    }
    if (is_plain(k) && k.value == "<<") {
      add(kp, "YAML merge keys (`<<`) are not supported", kNoAnchorsFix);
      continue;
    }
    if (auto it = seen.find(k.value); it != seen.end()) {
      add(kp, "duplicate key `" + k.value + "`",
          "it is already set at line " + std::to_string(it->second.line) + "; keep one");
      continue;
    }
    seen.emplace(k.value, kp);
    if (known && std::find(known->begin(), known->end(), k.value) == known->end()) {
      if (where.empty() && k.value == "aws_profile") {
        add(kp, "unknown key `aws_profile` (the old flat form)", "use `aws: {profile: NAME}`");
      } else {
        add(kp, "unknown key `" + k.value + "`" + (where.empty() ? "" : " in `" + where + "`"),
            suggest_key(k.value, *known));
      }
      continue;
    }
    out.push_back(Entry{k.value, kp, value_slot(m.kids[i + 1], kp)});
  }
  return out;
}

std::optional<std::string> Checker::string_value(const Slot& s, bool reject_numbers) {
  if (refused(s)) return std::nullopt;
  const YNode& n = node(s);
  if (n.kind == Kind::null) {
    add(s.pos, "expected a string, got null", "write a value, or \"\" for an empty string");
    return std::nullopt;
  }
  if (n.kind != Kind::scalar) {
    add(s.pos, std::string("expected a string, got ") + describe_kind(n), "write a plain string");
    return std::nullopt;
  }
  if (is_plain(n) && is_bool_word(n.value)) {
    add(s.pos, "expected a string, got the YAML boolean `" + n.value + "`",
        "quote it: \"" + n.value + "\"");
    return std::nullopt;
  }
  if (reject_numbers && is_plain(n) && looks_like_number(n.value)) {
    add(s.pos, "expected a string, got the number `" + n.value + "`",
        "quote it: \"" + n.value + "\"");
    return std::nullopt;
  }
  return n.value;
}

std::optional<bool> Checker::bool_value(const Slot& s) {
  if (refused(s)) return std::nullopt;
  const YNode& n = node(s);
  if (is_plain(n) && (n.value == "true" || n.value == "false")) return n.value == "true";
  if (n.kind == Kind::scalar && !is_plain(n)) {
    add(s.pos, "expected true or false, got the string \"" + n.value + "\"",
        "remove the quotes: write true or false");
  } else if (n.kind == Kind::scalar) {
    add(s.pos, "expected true or false, got `" + n.value + "`", "write true or false");
  } else {
    add(s.pos, std::string("expected true or false, got ") + describe_kind(n),
        "write true or false");
  }
  return std::nullopt;
}

bool Checker::expect_mapping(const Entry& e, bool null_ok, const std::string& example) {
  if (refused(e.value)) return false;
  const YNode& n = node(e.value);
  if (n.kind == Kind::mapping) return true;
  if (n.kind == Kind::null && null_ok) return false;
  add(e.value.pos,
      "`" + e.key + "`: expected a mapping" + (null_ok ? " or null" : "") + ", got " +
          describe_kind(n),
      "write it as `" + e.key + ": " + example + "`" + (null_ok ? " or remove it" : ""));
  return false;
}

std::optional<PathEntry> Checker::path_value(const Slot& s) {
  if (refused(s)) return std::nullopt;
  const YNode& n = node(s);
  if (n.kind == Kind::null) {
    add(s.pos, "expected a path, got null", "write a path such as $WORKDIR/build, or remove it");
    return std::nullopt;
  }
  if (n.kind != Kind::scalar) {
    add(s.pos, std::string("expected a path, got ") + describe_kind(n),
        "write one path per list item");
    return std::nullopt;
  }
  auto raw = string_value(s);
  if (!raw) return std::nullopt;
  if (raw->empty()) {
    add(s.pos, "empty path", "write a path such as $WORKDIR/build, or remove the entry");
    return std::nullopt;
  }
  PathVars vars;
  vars.home = "/HOME";
  vars.workdir = "/WORKDIR";
  vars.extra = {{"TMPDIR", "/TMPDIR"},
                {"UID", "1000"},
                {"XDG_CONFIG_HOME", "/XDG_CONFIG_HOME"},
                {"XDG_DATA_HOME", "/XDG_DATA_HOME"},
                {"XDG_STATE_HOME", "/XDG_STATE_HOME"},
                {"XDG_CACHE_HOME", "/XDG_CACHE_HOME"}};
  try {
    (void)expand_path(*raw, vars);
  } catch (const ProfileError& err) {
    add(s.pos, err.message(), err.fix());
    return std::nullopt;
  } catch (const std::exception& err) {
    add(s.pos, std::string("invalid path: ") + err.what(), "write an absolute path");
    return std::nullopt;
  }
  PathEntry p;
  p.raw = *raw;
  p.pos.file = ctx_.file();
  p.pos.line = s.pos.line;
  p.pos.column = s.pos.column;
  return p;
}

void Checker::path_list(const Entry& e, std::vector<PathEntry>& out) {
  if (refused(e.value)) return;
  const YNode& n = node(e.value);
  if (n.kind != Kind::sequence) {
    add(e.value.pos, "`" + e.key + "`: expected a list of paths, got " + describe_kind(n),
        "write `" + e.key + ": [PATH, ...]`, or `" + e.key + ": []` for none");
    return;
  }
  for (std::size_t item : n.kids) {
    if (auto p = path_value(item_slot(item))) out.push_back(std::move(*p));
  }
}

void Checker::symlink_list(const Entry& e, std::vector<SymlinkSpec>& out) {
  if (refused(e.value)) return;
  const YNode& n = node(e.value);
  if (n.kind != Kind::sequence) {
    add(e.value.pos, std::string("`resolve_symlinks`: expected a list, got ") + describe_kind(n),
        "write a list of paths or `{path: PATH, access: read}` items, or `[]` for none");
    return;
  }
  for (std::size_t item : n.kids) {
    const Slot s = item_slot(item);
    const YNode& it = node(s);
    if (it.kind != Kind::mapping) {
      if (auto p = path_value(s)) {
        SymlinkSpec spec;
        spec.path = std::move(*p);
        out.push_back(std::move(spec));
      }
      continue;
    }
    if (refused(s)) continue;
    SymlinkSpec spec;
    bool ok = true;
    bool have_path = false;
    for (const Entry& f : entries(s, &kSymlinkKeys, "resolve_symlinks")) {
      if (f.key == "path") {
        have_path = true;
        if (auto p = path_value(f.value)) {
          spec.path = std::move(*p);
        } else {
          ok = false;
        }
      } else if (f.key == "access") {
        auto a = string_value(f.value);
        if (!a) {
          ok = false;
        } else if (*a == "allow") {
          spec.access = Access::readwrite;
        } else if (*a == "read") {
          spec.access = Access::read;
        } else if (*a == "write") {
          spec.access = Access::write;
        } else {
          add(f.value.pos, "invalid access `" + *a + "`", "use allow, read or write");
          ok = false;
        }
      } else if (f.key == "bypass_protection") {
        if (auto b = bool_value(f.value)) {
          spec.bypass_protection = *b;
        } else {
          ok = false;
        }
      }
    }
    if (!have_path) {
      add(s.pos, "missing required key `path` in a `resolve_symlinks` item", "add `path: PATH`");
      ok = false;
    }
    if (ok) out.push_back(std::move(spec));
  }
}

// A list of environment variable names (`keep_secret_env`), or of names and paths
// (`allow_host_sockets`: a socket by path, or by the variable that holds its path).
void Checker::name_list(const Entry& e, bool paths_too, std::vector<PathEntry>& out) {
  if (refused(e.value)) return;
  const YNode& n = node(e.value);
  const std::string what = paths_too ? "variable names or paths" : "variable names";
  if (n.kind != Kind::sequence) {
    add(e.value.pos, "`" + e.key + "`: expected a list of " + what + ", got " + describe_kind(n),
        "write `" + e.key + ": [" + (paths_too ? "SSH_AUTH_SOCK" : "NAME") + ", ...]`, or `" +
            e.key + ": []` for none");
    return;
  }
  static const std::regex name_re("^[A-Za-z_][A-Za-z0-9_]*$");
  for (std::size_t item : n.kids) {
    const Slot s = item_slot(item);
    if (node(s).kind == Kind::scalar && std::regex_match(node(s).value, name_re)) {
      if (auto v = string_value(s)) {
        PathEntry p;
        p.raw = *v;
        p.pos.file = ctx_.file();
        p.pos.line = s.pos.line;
        p.pos.column = s.pos.column;
        out.push_back(std::move(p));
      }
    } else if (paths_too) {
      if (auto p = path_value(s)) out.push_back(std::move(*p));
    } else {
      add(s.pos, "`" + e.key + "`: expected a variable name",
          "use letters, digits and _, not starting with a digit");
    }
  }
}

void Checker::env_map(const Entry& e, std::vector<std::pair<std::string, std::string>>& out) {
  if (!expect_mapping(e, false, "{NAME: value}")) return;
  static const std::regex name_re("^[A-Za-z_][A-Za-z0-9_]*$");
  for (const Entry& v : entries<1>(e.value, nullptr, "env")) {
    bool ok = true;
    if (!std::regex_match(v.key, name_re)) {
      add(v.key_pos, "invalid environment variable name `" + v.key + "`",
          "use letters, digits and _, not starting with a digit");
      ok = false;
    }
    if (ok && env_policy::is_loader_variable(v.key)) {
      add(v.key_pos, "`" + v.key + "` configures the dynamic loader",
          "remove it: the backend starts with the profile's `env:`, outside the boundary");
      ok = false;
    }
    auto val = string_value(v.value, /*reject_numbers=*/true);
    if (ok && val) out.emplace_back(v.key, *val);
  }
}

std::optional<nlohmann::json> Checker::to_json(const Slot& s, int depth) {
  if (refused(s)) return std::nullopt;
  const YNode& n = node(s);
  if (depth > kMaxNonoDepth) {
    add(s.pos, "`nono` is nested more than " + std::to_string(kMaxNonoDepth) + " levels deep",
        "flatten the block");
    return std::nullopt;
  }
  switch (n.kind) {
    case Kind::null:
      return nlohmann::json(nullptr);
    case Kind::alias:
      return std::nullopt;
    case Kind::scalar: {
      if (!is_plain(n)) return nlohmann::json(n.value);
      const std::string& v = n.value;
      if (v == "true") return nlohmann::json(true);
      if (v == "false") return nlohmann::json(false);
      static const std::regex int_re("^[-+]?[0-9]+$");
      static const std::regex dec_re(
          R"(^[-+]?(([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)$)");
      if (std::regex_match(v, int_re)) {
        const std::size_t sign = (v[0] == '-' || v[0] == '+') ? 1 : 0;
        if (v.size() - sign > 1 && v[sign] == '0') {
          add(s.pos, "ambiguous number `" + v + "` (leading zero)",
              "drop the leading zero, or quote it to make it a string");
          return std::nullopt;
        }
        const char* b = v.data() + (v[0] == '+' ? 1 : 0);
        const char* end = v.data() + v.size();
        std::int64_t i = 0;
        if (auto r = std::from_chars(b, end, i); r.ec == std::errc() && r.ptr == end)
          return nlohmann::json(i);
        std::uint64_t u = 0;
        if (v[0] != '-') {
          if (auto r = std::from_chars(b, end, u); r.ec == std::errc() && r.ptr == end)
            return nlohmann::json(u);
        }
        add(s.pos, "integer `" + v + "` is out of range", "quote it to make it a string");
        return std::nullopt;
      }
      if (std::regex_match(v, dec_re)) {
        const char* b = v.data() + (v[0] == '+' ? 1 : 0);
        const char* end = v.data() + v.size();
        double d = 0;
        if (auto r = std::from_chars(b, end, d);
            r.ec == std::errc() && r.ptr == end && std::isfinite(d))
          return nlohmann::json(d);
        add(s.pos, "number `" + v + "` is out of range", "quote it to make it a string");
        return std::nullopt;
      }
      return nlohmann::json(v);
    }
    case Kind::sequence: {
      auto arr = nlohmann::json::array();
      bool ok = true;
      for (std::size_t item : n.kids) {
        auto j = to_json(item_slot(item), depth + 1);
        if (j) {
          arr.push_back(std::move(*j));
        } else {
          ok = false;
        }
      }
      if (!ok) return std::nullopt;
      return arr;
    }
    case Kind::mapping: {
      auto obj = nlohmann::json::object();
      bool ok = true;
      const std::size_t before = ctx_.diags().size();
      for (const Entry& e : entries<1>(s, nullptr, "nono")) {
        auto j = to_json(e.value, depth + 1);
        if (j) {
          obj[e.key] = std::move(*j);
        } else {
          ok = false;
        }
      }
      if (!ok || ctx_.diags().size() != before) return std::nullopt;
      return obj;
    }
  }
  return std::nullopt;
}

std::optional<Profile> Checker::check(std::size_t root) {
  const YNode& r = nodes_[root];
  const Slot rs{root, to_pos(r.mark)};
  if (r.kind == Kind::null) {
    add(Pos{}, "the profile is empty", "write at least `name:` and `description:`");
    return std::nullopt;
  }
  if (refused(rs)) return std::nullopt;
  if (r.kind != Kind::mapping) {
    add(rs.pos,
        std::string("the top level of a profile must be a mapping, got ") + describe_kind(r),
        "write `key: value` lines, starting with `name:` and `description:`");
    return std::nullopt;
  }

  Profile p;
  p.file = ctx_.file();
  bool have_name = false, have_description = false, aws_given = false;
  std::optional<Pos> eks_pos;
  for (const Entry& e : entries(rs, &kTopKeys, "")) {
    const std::string& k = e.key;
    if (k == "name") {
      have_name = true;
      if (auto v = string_value(e.value)) {
        if (v->empty()) {
          add(e.value.pos, "`name` is empty", "write a short name, e.g. `name: default`");
        } else {
          p.name = *v;
        }
      }
    } else if (k == "description") {
      have_description = true;
      if (auto v = string_value(e.value)) p.description = *v;
    } else if (k == "self_edit") {
      if (auto v = bool_value(e.value)) p.self_edit = *v;
    } else if (k == "git_common_dir") {
      if (auto v = bool_value(e.value)) p.git_common_dir = *v;
    } else if (k == "accept_unprotected_denies") {
      if (auto v = bool_value(e.value)) p.accept_unprotected_denies = *v;
    } else if (k == "allow_git_hook_escape") {
      if (auto v = bool_value(e.value)) p.allow_git_hook_escape = *v;
    } else if (k == "allow_agent_settings_escape") {
      if (auto v = bool_value(e.value)) p.allow_agent_settings_escape = *v;
    } else if (k == "aws") {
      aws_given = node(e.value).kind != Kind::null;
      if (!expect_mapping(e, true, "{profile: NAME}")) continue;
      bool have_profile = false;
      for (const Entry& f : entries(e.value, &kAwsKeys, "aws")) {
        have_profile = true;
        if (auto v = string_value(f.value)) {
          if (v->empty()) {
            add(f.value.pos, "`aws.profile` is empty", "name an AWS profile from ~/.aws/config");
          } else {
            p.aws_profile = *v;
          }
        }
      }
      if (!have_profile)
        add(e.value.pos, "missing required key `profile` in `aws`", "write `aws: {profile: NAME}`");
    } else if (k == "kube") {
      if (!expect_mapping(e, false, "{eks: false, orbstack: false}")) continue;
      for (const Entry& f : entries(e.value, &kKubeKeys, "kube")) {
        auto v = bool_value(f.value);
        if (!v) continue;
        if (f.key == "eks") {
          p.kube_eks = *v;
          if (*v) eks_pos = f.key_pos;
        } else {
          p.kube_orbstack = *v;
        }
      }
    } else if (k == "github") {
      if (!expect_mapping(e, true, "{push: true}")) continue;
      p.github_push = false;
      for (const Entry& f : entries(e.value, &kGithubKeys, "github")) {
        if (auto v = bool_value(f.value)) p.github_push = *v;
      }
    } else if (k == "allow") {
      path_list(e, p.allow);
    } else if (k == "read") {
      path_list(e, p.read);
    } else if (k == "write") {
      path_list(e, p.write);
    } else if (k == "deny") {
      path_list(e, p.deny);
    } else if (k == "resolve_symlinks") {
      symlink_list(e, p.resolve_symlinks);
    } else if (k == "env") {
      env_map(e, p.env);
    } else if (k == "keep_secret_env") {
      name_list(e, false, p.keep_secret_env);
    } else if (k == "allow_host_sockets") {
      name_list(e, true, p.allow_host_sockets);
    } else if (k == "nono") {
      if (!expect_mapping(e, false, "{extends: default}")) continue;
      if (auto j = to_json(e.value, 1)) p.nono_json = j->dump();
    } else if (k == "backend_options") {
      if (!expect_mapping(e, true, "{devcontainer: {image: NAME}}")) continue;
      for (const Entry& b : entries<1>(e.value, nullptr, "backend_options")) {
        static const std::regex name_re("^[a-z][a-z0-9_-]{0,31}$");
        if (!std::regex_match(b.key, name_re)) {
          add(b.key_pos, "invalid backend name `" + b.key + "` in `backend_options`",
              "key each block by a backend plugin's name (e.g. `devcontainer:`)");
          continue;
        }
        if (!expect_mapping(b, false, "{KEY: value}")) continue;
        if (auto j = to_json(b.value, 1)) p.backend_options[b.key] = j->dump();
      }
    } else if (k == "backend") {
      if (auto v = string_value(e.value)) {
        static const std::regex re("^[a-z][a-z0-9_-]{0,31}$");
        if (std::regex_match(*v, re)) {
          p.backend = *v;
        } else {
          add(e.value.pos, "invalid backend name `" + *v + "`",
              "name a backend plugin: lowercase letters, digits, _ or -, starting with a "
              "letter, at most 32 characters (e.g. `backend: nono`)");
        }
      }
    }
  }
  // `backend_options: {nono: ...}` is the long spelling of `nono:`: one place holds it.
  if (const auto it = p.backend_options.find("nono"); it != p.backend_options.end()) {
    if (p.nono_json != "{}")
      add(rs.pos, "nono's options are given twice (`nono:` and `backend_options: {nono: ...}`)",
          "keep one of them");
    else
      p.nono_json = it->second;
    p.backend_options.erase(it);
  }
  if (!have_name)
    add(rs.pos, "missing required key `name`", "add `name: NAME` (e.g. the file's name)");
  if (!have_description)
    add(rs.pos, "missing required key `description`",
        "add `description: ...` saying what this boundary is for");
  if (eks_pos && !aws_given)
    add(*eks_pos, "kube.eks requires aws.profile",
        "add `aws: {profile: NAME}`, or set `kube.eks: false`");
  return p;
}

std::string syntax_fix(const std::string& msg, const std::string& text) {
  bool tab_indent = false;
  bool at_line_start = true;
  for (char c : text) {
    if (c == '\n') {
      at_line_start = true;
    } else if (at_line_start && c == '\t') {
      tab_indent = true;
      break;
    } else if (c != ' ') {
      at_line_start = false;
    }
  }
  if (tab_indent) return "indent with spaces, not tabs: YAML does not allow tabs in indentation";
  if (msg.find("illegal map value") != std::string::npos)
    return "check the indentation and that each `key: value` has a space after the colon; "
           "tabs are not allowed in indentation";
  return "fix the YAML syntax near this position";
}

ParseResult parse_impl(const std::string& text, const std::string& display_name) {
  ParseResult result;
  Context ctx(display_name, text);
  std::vector<YNode> nodes;
  TreeBuilder builder(nodes, ctx);
  bool syntax_ok = true;
  if (text.size() > kMaxProfileBytes) {
    ctx.add(Pos{}, "the profile is larger than 1 MiB (" + std::to_string(text.size()) + " bytes)",
            "profiles are small; check that this is the right file");
    result.diagnostics = std::move(ctx.diags());
    return result;
  }
  std::istringstream in(text);
  YAML::Parser parser(in);
  try {
    parser.HandleNextDocument(builder);
  } catch (const YAML::Exception& e) {
    syntax_ok = false;
    ctx.add(e.mark, "not valid YAML: " + e.msg, syntax_fix(e.msg, text));
  }
  if (syntax_ok) {
    builder.stop_recording();
    try {
      parser.HandleNextDocument(builder);
    } catch (const YAML::Exception& e) {
      if (builder.documents() < 2) {
        syntax_ok = false;
        ctx.add(e.mark, "not valid YAML: " + e.msg, syntax_fix(e.msg, text));
      }
    }
    if (builder.documents() >= 2)
      ctx.add(builder.second_document_mark(), "more than one YAML document",
              "a profile is one document: remove the `---` and what follows it");
  }
  if (syntax_ok) {
    if (!builder.root()) {
      ctx.add(Pos{}, "the profile is empty", "write at least `name:` and `description:`");
    } else {
      Checker checker(ctx, nodes);
      auto profile = checker.check(*builder.root());
      if (ctx.diags().empty()) result.profile = std::move(profile);
    }
  }
  result.diagnostics = std::move(ctx.diags());
  std::stable_sort(result.diagnostics.begin(), result.diagnostics.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     if (a.pos.line != b.pos.line) return a.pos.line < b.pos.line;
                     return a.pos.column < b.pos.column;
                   });
  if (!result.diagnostics.empty()) result.profile.reset();
  return result;
}

bool valid_profile_name(const std::string& name) {
  static const std::regex re("^[A-Za-z0-9][A-Za-z0-9._-]*$");
  return std::regex_match(name, re) && name.find("..") == std::string::npos;
}

Diagnostic file_diag(const std::string& file, std::string message, std::string fix) {
  Diagnostic d;
  d.pos.file = file;
  d.message = std::move(message);
  d.fix = std::move(fix);
  return d;
}

}  // namespace

std::string SourcePos::str() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string Diagnostic::str() const {
  std::string out = pos.str() + ": " + message;
  if (!fix.empty()) out += "; " + fix;
  return out;
}

ParseResult parse_profile_text(const std::string& text, const std::string& display_name) {
  try {
    return parse_impl(text, display_name);
  } catch (const std::exception& e) {
    ParseResult r;
    r.diagnostics.push_back(file_diag(display_name,
                                      std::string("cannot read the profile: ") + e.what(),
                                      "report this as a bug, with the file"));
    return r;
  }
}

ParseResult parse_profile_file(const std::string& path) {
  ParseResult r;
  try {
    if (path.empty()) {
      r.diagnostics.push_back(file_diag(path, "no profile file given", "name a .yaml file"));
      return r;
    }
    std::error_code ec;
    fs::path abs = fs::absolute(fs::path(path), ec);
    const std::string file = ec ? path : abs.lexically_normal().string();
    const fs::file_status st = fs::status(file, ec);
    if (ec || !fs::exists(st)) {
      r.diagnostics.push_back(file_diag(file,
                                        ec && ec != std::errc::no_such_file_or_directory
                                            ? "cannot read the profile: " + ec.message()
                                            : std::string("profile file not found"),
                                        "check the path, or create the profile there"));
      return r;
    }
    if (!fs::is_regular_file(st)) {
      r.diagnostics.push_back(
          file_diag(file, "not a regular file", "point at a profile .yaml file"));
      return r;
    }
    const auto size = fs::file_size(file, ec);
    if (!ec && size > kMaxProfileBytes) {
      r.diagnostics.push_back(
          file_diag(file, "the profile is larger than 1 MiB (" + std::to_string(size) + " bytes)",
                    "profiles are small; check that this is the right file"));
      return r;
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      const int err = errno;
      r.diagnostics.push_back(
          file_diag(file, std::string("cannot read the profile: ") + std::strerror(err),
                    "check the file's permissions"));
      return r;
    }
    std::string text;
    if (!ec) text.reserve(static_cast<std::size_t>(size));
    char buf[8192];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      text.append(buf, static_cast<std::size_t>(in.gcount()));
      if (text.size() > kMaxProfileBytes) break;
    }
    if (in.bad()) {
      r.diagnostics.push_back(
          file_diag(file, "cannot read the profile", "check the file's permissions"));
      return r;
    }
    r = parse_profile_text(text, file);
    if (r.profile) r.profile->file = file;
    return r;
  } catch (const std::exception& e) {
    ParseResult bad;
    bad.diagnostics.push_back(file_diag(path, std::string("cannot read the profile: ") + e.what(),
                                        "check the path and the file's permissions"));
    return bad;
  }
}

Profile load_profile_file(const std::string& path) {
  ParseResult r = parse_profile_file(path);
  if (r.profile && r.diagnostics.empty()) return std::move(*r.profile);
  std::string where = path;
  if (!r.diagnostics.empty()) where = r.diagnostics.front().pos.file;
  std::string message;
  for (const Diagnostic& d : r.diagnostics) {
    if (!message.empty()) message += '\n';
    message += d.str();
  }
  if (message.empty()) message = "invalid profile";
  throw ProfileError(message, where);
}

std::string find_profile(const std::string& dir, const std::string& name) {
  if (!valid_profile_name(name))
    throw ProfileError("invalid profile name '" + name + "'", dir,
                       "use letters, digits, '.', '_' and '-', starting with a letter or digit "
                       "(no '/' or '..')");
  for (const char* ext : {".yaml", ".yml"}) {
    const fs::path p = fs::path(dir) / (name + ext);
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  std::string have;
  for (const std::string& n : list_profiles(dir)) have += (have.empty() ? "" : ", ") + n;
  if (have.empty()) have = "(none)";
  throw ProfileError("unknown profile '" + name + "'; have: " + have, dir,
                     "create " + (fs::path(dir) / (name + ".yaml")).string() +
                         ", or set AGENT_BOUNDARY_PROFILES_DIR to the directory that holds it "
                         "(profiles are read from " +
                         dir + ")");
}

std::vector<std::string> list_profiles(const std::string& dir) {
  std::set<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return {};
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::path& p = it->path();
    const std::string ext = p.extension().string();
    if (ext != ".yaml" && ext != ".yml") continue;
    std::error_code fec;
    if (!it->is_regular_file(fec)) continue;
    const std::string stem = p.stem().string();
    if (valid_profile_name(stem)) names.insert(stem);
  }
  return {names.begin(), names.end()};
}

}  // namespace agent_boundary
