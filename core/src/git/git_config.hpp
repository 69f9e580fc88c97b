// Reading git's config syntax without running git: the session reads where a project
// points its hooks and includes, and the checkpoint neutralises keys in nested git dirs.
// The parser is strict on purpose: a line it does not fully understand is reported as
// `odd`, and the sanitiser treats odd lines as dangerous (git may read them differently).
#pragma once

#include <string>
#include <vector>

namespace agent_boundary::git {

struct ConfigLine {
  enum class Kind { blank, header, entry, odd };
  Kind kind = Kind::blank;
  std::string section;     // lower-cased
  std::string subsection;  // as written (case-sensitive in git)
  std::string key;         // lower-cased; entries only
  std::string value;       // unquoted, escapes resolved; entries only
  bool continued = false;  // the value runs on over a trailing backslash
};

// One ConfigLine per physical line of `text`, in order.
std::vector<ConfigLine> parse_config(const std::string& text);

// `section.key` or `section.subsection.key` (section and key lower-cased).
std::string full_name(const ConfigLine& line);

// The values of every entry named `name` (lower-cased `section.key`, or with a
// subsection pattern "includeif.*.path" matching any subsection), in file order.
std::vector<std::string> values_of(const std::vector<ConfigLine>& lines, const std::string& name);

// True for an entry a nested repository's config may keep: it cannot make host git run
// a program (an allow-list; everything else is neutralised).
bool harmless_entry(const ConfigLine& line);

// `text` with every entry that is not harmless (and every odd line) commented out, until
// nothing changes; `removed` gets the names (or "unparsed line N") of what went.
std::string sanitise_config(const std::string& text, std::vector<std::string>& removed);

}  // namespace agent_boundary::git
