#include "payload.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "agent_boundary/error.hpp"

namespace agent_boundary::claude {
namespace {

// nlohmann parses iteratively but dumps recursively: bound the depth before parsing.
bool nesting_within(const std::string& text, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

}  // namespace

void malformed(const std::string& what, const std::string& problem) {
  throw UsageError(what + ": " + problem, {},
                   "the hook reads the JSON payload Claude Code writes on stdin; run it from "
                   "Claude Code's hooks");
}

Json parse_object(const std::string& text, const std::string& what) {
  if (text.size() > kMaxPayloadBytes)
    malformed(what, "payload is " + std::to_string(text.size()) + " bytes, more than the " +
                        std::to_string(kMaxPayloadBytes) + " accepted");
  if (!nesting_within(text, kMaxNesting))
    malformed(what, "JSON nested deeper than " + std::to_string(kMaxNesting) + " levels");
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    malformed(what, std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) malformed(what, std::string("expected a JSON object, got ") + j.type_name());
  return j;
}

std::optional<Json> try_parse_object(const std::string& text) {
  if (text.size() > kMaxPayloadBytes || !nesting_within(text, kMaxNesting)) return std::nullopt;
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

std::string string_field(const Json& obj, const char* key, const std::string& what) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string())
    malformed(what, std::string("`") + key + "` must be a string, got " + it->type_name());
  std::string value = it->get<std::string>();
  if (value.find('\0') != std::string::npos)
    malformed(what, std::string("`") + key + "` contains a NUL byte");
  return value;
}

std::string cwd_field(const Json& obj, const std::string& what) {
  std::string cwd = string_field(obj, "cwd", what);
  if (cwd.empty()) return process_cwd();
  if (cwd[0] != '/') malformed(what, "`cwd` is not an absolute path: " + cwd);
  return cwd;
}

std::string process_cwd() {
  char buf[PATH_MAX];
  if (!::getcwd(buf, sizeof buf))
    throw SystemError(std::string("cannot read the working directory: ") + std::strerror(errno));
  return buf;
}

bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len;
    unsigned min;
    unsigned cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, min = 0x80, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, min = 0x800, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, min = 0x10000, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

}  // namespace agent_boundary::claude
