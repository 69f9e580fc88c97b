// Reading Claude's JSON payloads: size and nesting limits, typed field access, and the
// errors a malformed payload raises.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace agent_boundary::claude {

using Json = nlohmann::json;

inline constexpr std::size_t kMaxPayloadBytes = 4u * 1024 * 1024;
inline constexpr int kMaxNesting = 256;

// Throws UsageError "<what>: <problem>".
[[noreturn]] void malformed(const std::string& what, const std::string& problem);

// `text` as one JSON object (at most kMaxPayloadBytes, nested at most kMaxNesting deep);
// throws UsageError naming `what` otherwise.
Json parse_object(const std::string& text, const std::string& what);
// The same without errors: nullopt for anything but a JSON object within the limits.
std::optional<Json> try_parse_object(const std::string& text);

// obj[key] as a string: "" when absent or null; throws when it has another type or holds a
// NUL byte (which C calls would silently cut).
std::string string_field(const Json& obj, const char* key, const std::string& what);

// The payload's `cwd`: an absolute path, or the process's working directory when absent.
std::string cwd_field(const Json& obj, const std::string& what);

// The process's working directory; throws SystemError when it cannot be read.
std::string process_cwd();

// True when `s` is well-formed UTF-8 (JSON cannot carry anything else unchanged).
bool valid_utf8(const std::string& s);

}  // namespace agent_boundary::claude
