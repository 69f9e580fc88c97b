#include "git/git_config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace agent_boundary::git {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; }
bool section_char(char c) { return key_char(c) || c == '.'; }

// Parses `[section]`, `[section "sub"]` or the legacy `[section.sub]` at `i`; returns the
// position after `]`, or npos when the header is malformed.
std::size_t parse_header(const std::string& l, std::size_t i, ConfigLine& out) {
  ++i;  // '['
  std::size_t b = i;
  while (i < l.size() && section_char(l[i])) ++i;
  if (i == b) return std::string::npos;
  std::string name = l.substr(b, i - b);
  if (i < l.size() && l[i] == ']') {
    const auto dot = name.find('.');
    out.section = lower(name.substr(0, dot));
    if (dot != std::string::npos) out.subsection = lower(name.substr(dot + 1));
    return i + 1;
  }
  if (name.find('.') != std::string::npos) return std::string::npos;
  if (i >= l.size() || l[i] != ' ') return std::string::npos;
  while (i < l.size() && l[i] == ' ') ++i;
  if (i >= l.size() || l[i] != '"') return std::string::npos;
  ++i;
  std::string sub;
  for (; i < l.size() && l[i] != '"'; ++i) {
    if (l[i] == '\\') {
      if (++i >= l.size()) return std::string::npos;
    }
    sub += l[i];
  }
  if (i >= l.size() || i + 1 >= l.size() || l[i + 1] != ']') return std::string::npos;
  out.section = lower(name);
  out.subsection = sub;
  return i + 2;
}

// Parses `key [= value]` from `i`; false when malformed.
bool parse_entry(const std::string& l, std::size_t i, ConfigLine& out) {
  if (i >= l.size() || !std::isalpha(static_cast<unsigned char>(l[i]))) return false;
  const std::size_t b = i;
  while (i < l.size() && key_char(l[i])) ++i;
  out.key = lower(l.substr(b, i - b));
  while (i < l.size() && is_space(l[i])) ++i;
  if (i >= l.size() || l[i] == '#' || l[i] == ';') return true;  // boolean true
  if (l[i] != '=') return false;
  ++i;
  while (i < l.size() && is_space(l[i])) ++i;
  std::string v;
  bool quoted = false;
  std::size_t trailing_space = 0;
  for (; i < l.size(); ++i) {
    const char c = l[i];
    if (!quoted && (c == '#' || c == ';')) break;
    if (c == '"') {
      quoted = !quoted;
      trailing_space = 0;
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= l.size()) {
        out.continued = true;
        break;
      }
      const char n = l[++i];
      v += n == 'n' ? '\n' : n == 't' ? '\t' : n == 'b' ? '\b' : n;
      trailing_space = 0;
      continue;
    }
    if (!quoted && is_space(c)) {
      ++trailing_space;
    } else {
      trailing_space = 0;
    }
    v += c;
  }
  if (quoted) return false;
  v.resize(v.size() - std::min(trailing_space, v.size()));
  out.value = v;
  return true;
}

// Entries (section.key, any subsection) a nested repository's config may keep.
constexpr std::array<std::string_view, 47> kHarmless = {"core.repositoryformatversion",
                                                        "core.filemode",
                                                        "core.bare",
                                                        "core.logallrefupdates",
                                                        "core.worktree",
                                                        "core.ignorecase",
                                                        "core.precomposeunicode",
                                                        "core.symlinks",
                                                        "core.autocrlf",
                                                        "core.eol",
                                                        "core.safecrlf",
                                                        "core.quotepath",
                                                        "core.compression",
                                                        "core.bigfilethreshold",
                                                        "core.sparsecheckout",
                                                        "core.sparsecheckoutcone",
                                                        "core.untrackedcache",
                                                        "core.checkstat",
                                                        "core.trustctime",
                                                        "core.preloadindex",
                                                        "core.abbrev",
                                                        "core.splitindex",
                                                        "core.longpaths",
                                                        "core.protecthfs",
                                                        "core.protectntfs",
                                                        "remote.url",
                                                        "remote.pushurl",
                                                        "remote.fetch",
                                                        "remote.push",
                                                        "remote.tagopt",
                                                        "remote.prune",
                                                        "remote.mirror",
                                                        "branch.remote",
                                                        "branch.merge",
                                                        "branch.rebase",
                                                        "branch.pushremote",
                                                        "branch.description",
                                                        "submodule.url",
                                                        "submodule.active",
                                                        "submodule.branch",
                                                        "submodule.ignore",
                                                        "user.name",
                                                        "user.email",
                                                        "extensions.objectformat",
                                                        "extensions.worktreeconfig",
                                                        "extensions.refstorage",
                                                        "init.defaultbranch"};

}  // namespace

std::vector<ConfigLine> parse_config(const std::string& text) {
  std::vector<ConfigLine> out;
  std::string section, subsection;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string l = text.substr(pos, nl - pos);
    ConfigLine line;
    std::size_t i = 0;
    while (i < l.size() && is_space(l[i])) ++i;
    if (i == l.size() || l[i] == '#' || l[i] == ';') {
      line.kind = ConfigLine::Kind::blank;
    } else if (l[i] == '[') {
      ConfigLine h;
      const std::size_t after = parse_header(l, i, h);
      std::size_t j = after;
      while (j != std::string::npos && j < l.size() && is_space(l[j])) ++j;
      if (after == std::string::npos ||
          (j < l.size() && l[j] != '#' && l[j] != ';')) {  // a key on the header line: odd
        line.kind = ConfigLine::Kind::odd;
      } else {
        line = h;
        line.kind = ConfigLine::Kind::header;
        section = h.section;
        subsection = h.subsection;
      }
    } else {
      line.section = section;
      line.subsection = subsection;
      line.kind = parse_entry(l, i, line) && !section.empty() ? ConfigLine::Kind::entry
                                                              : ConfigLine::Kind::odd;
    }
    out.push_back(line);
    if (nl == text.size()) break;
    pos = nl + 1;
  }
  return out;
}

std::string full_name(const ConfigLine& line) {
  if (line.subsection.empty()) return line.section + "." + line.key;
  return line.section + "." + line.subsection + "." + line.key;
}

std::vector<std::string> values_of(const std::vector<ConfigLine>& lines, const std::string& name) {
  const auto first = name.find('.');
  const auto last = name.rfind('.');
  const std::string section = name.substr(0, first);
  const std::string key = name.substr(last + 1);
  const bool any_sub = name.substr(first, last - first) == ".*";
  const std::string sub = first == last ? "" : name.substr(first + 1, last - first - 1);
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.kind == ConfigLine::Kind::entry && l.section == section && l.key == key &&
        (any_sub || l.subsection == sub))
      out.push_back(l.value);
  return out;
}

bool harmless_entry(const ConfigLine& line) {
  if (line.kind != ConfigLine::Kind::entry || line.continued) return false;
  const std::string name = line.section + "." + line.key;
  if (std::find(kHarmless.begin(), kHarmless.end(), name) == kHarmless.end()) return false;
  // Per-section subsection rules: core/user/extensions/init take none.
  const bool needs_sub =
      line.section == "remote" || line.section == "branch" || line.section == "submodule";
  if (needs_sub == line.subsection.empty()) return false;
  // A remote or submodule URL that names a transport helper runs it (`ext::`, `fd::`).
  if (line.key == "url" || line.key == "pushurl")
    if (line.value.find("::") != std::string::npos) return false;
  return true;
}

std::string sanitise_config(const std::string& text, std::vector<std::string>& removed) {
  std::string cur = text;
  for (int round = 0; round < 16; ++round) {
    const auto lines = parse_config(cur);
    std::string next;
    bool changed = false;
    std::size_t pos = 0;
    for (std::size_t n = 0; n < lines.size(); ++n) {
      auto nl = cur.find('\n', pos);
      const bool last = nl == std::string::npos;
      const std::string raw = cur.substr(pos, last ? std::string::npos : nl - pos);
      const auto& l = lines[n];
      const bool keep = l.kind == ConfigLine::Kind::blank || l.kind == ConfigLine::Kind::header ||
                        harmless_entry(l);
      if (keep) {
        next += raw;
      } else {
        removed.push_back(l.kind == ConfigLine::Kind::entry
                              ? full_name(l)
                              : "unparsed line " + std::to_string(n + 1));
        next += "# agent-boundary neutralised: ";
        for (char c : raw) next += c == '\r' ? ' ' : c;
        changed = true;
      }
      if (!last) next += '\n';
      pos = last ? cur.size() : nl + 1;
    }
    cur = next;
    if (!changed) break;
  }
  return cur;
}

}  // namespace agent_boundary::git
