#include "agent_boundary/error.hpp"

namespace agent_boundary {

Error::Error(std::string message, std::string where, std::string fix)
    : std::runtime_error(message),
      message_(std::move(message)),
      where_(std::move(where)),
      fix_(std::move(fix)) {}
Error::~Error() = default;
const char* Error::kind() const noexcept { return "error"; }

#define AB_DEFINE_ERROR(Name, kind_name) \
  Name::~Name() = default;               \
  const char* Name::kind() const noexcept { return kind_name; }

AB_DEFINE_ERROR(ProfileError, "profile")
AB_DEFINE_ERROR(SessionError, "session")
AB_DEFINE_ERROR(BackendError, "backend")
AB_DEFINE_ERROR(PluginError, "plugin")
AB_DEFINE_ERROR(UsageError, "usage")
AB_DEFINE_ERROR(SystemError, "system")

std::string render_error(const Error& e) {
  std::string out = "agent-boundary: ";
  if (!e.where().empty()) out += e.where() + ": ";
  out += e.message();
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (!e.fix().empty()) out += "  fix: " + e.fix() + "\n";
  return out;
}

}  // namespace agent_boundary
