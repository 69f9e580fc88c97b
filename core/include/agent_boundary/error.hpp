// Typed errors. Every failure a user can cause or fix is one of these; the CLI renders
// them once, at the edge, as "agent-boundary: <where>: <message>" plus a "fix:" line.
#pragma once

#include <stdexcept>
#include <string>

#include "agent_boundary/export.hpp"

namespace agent_boundary {

class AB_API Error : public std::runtime_error {
 public:
  // where: "file:line:col", a path, or empty. fix: what the user should do, or empty.
  Error(std::string message, std::string where = {}, std::string fix = {});
  ~Error() override;

  const std::string& message() const { return message_; }
  const std::string& where() const { return where_; }
  const std::string& fix() const { return fix_; }
  // Stable category name, used in --json output and tests ("profile", "session", ...).
  virtual const char* kind() const noexcept;

 private:
  std::string message_;
  std::string where_;
  std::string fix_;
};

#define AB_DECLARE_ERROR(Name, kind_name)       \
  class AB_API Name : public Error {            \
   public:                                      \
    using Error::Error;                         \
    ~Name() override;                           \
    const char* kind() const noexcept override; \
  }

AB_DECLARE_ERROR(ProfileError, "profile");  // a profile file is missing, malformed or invalid
AB_DECLARE_ERROR(SessionError, "session");  // a session dir is missing, incomplete or corrupt
AB_DECLARE_ERROR(BackendError, "backend");  // a backend executable or kernel feature is missing
AB_DECLARE_ERROR(PluginError, "plugin");    // a plugin could not be loaded or refused itself
AB_DECLARE_ERROR(UsageError, "usage");      // the command line is wrong
AB_DECLARE_ERROR(SystemError, "system");    // an OS call failed unexpectedly

#undef AB_DECLARE_ERROR

// "agent-boundary: <where>: <message>\n  fix: <fix>\n" (where/fix omitted when empty).
AB_API std::string render_error(const Error& e);

}  // namespace agent_boundary
