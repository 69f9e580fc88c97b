#include "policy_json.hpp"

#include <nlohmann/json.hpp>

#include "agent_boundary/error.hpp"

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;

namespace agent_boundary {
namespace {

Access access_from(const std::string& s) {
  if (s == "read") return Access::read;
  if (s == "write") return Access::write;
  if (s == "readwrite") return Access::readwrite;
  throw std::invalid_argument("unknown access `" + s + "`");
}

PathKind kind_from(const std::string& s) {
  if (s == "file") return PathKind::file;
  if (s == "directory") return PathKind::directory;
  throw std::invalid_argument("unknown kind `" + s + "`");
}

}  // namespace

std::string policy_to_json(const ResolvedPolicy& p) {
  ordered_json j;
  j["format"] = 1;
  j["profile"] = p.profile_name;
  j["workdir"] = p.workdir;
  j["self_edit"] = p.self_edit;
  j["grants"] = ordered_json::array();
  for (const auto& g : p.grants)
    j["grants"].push_back({{"path", g.path},
                           {"access", to_string(g.access)},
                           {"kind", to_string(g.kind)},
                           {"origin", g.origin},
                           {"bypass_builtin_denies", g.bypass_builtin_denies}});
  j["denies"] = ordered_json::array();
  for (const auto& d : p.denies) j["denies"].push_back({{"path", d.path}, {"origin", d.origin}});
  j["held"] = ordered_json::array();
  for (const auto& h : p.held)
    j["held"].push_back({{"path", h.path},
                         {"kind", to_string(h.kind)},
                         {"hold", h.hold == HeldPath::Hold::hidden ? "hidden" : "read_only"}});
  j["env"] = ordered_json::object();
  for (const auto& [k, v] : p.env) j["env"][k] = v;
  j["backend_options"] = ordered_json::object();
  for (const auto& [k, v] : p.backend_options) j["backend_options"][k] = ordered_json::parse(v);
  return j.dump(2) + "\n";
}

ResolvedPolicy policy_from_json(const std::string& text, const std::string& origin) {
  try {
    const json j = json::parse(text);
    if (j.at("format").get<int>() != 1) throw std::invalid_argument("unsupported format");
    ResolvedPolicy p;
    p.profile_name = j.at("profile").get<std::string>();
    p.workdir = j.at("workdir").get<std::string>();
    p.self_edit = j.at("self_edit").get<bool>();
    for (const auto& g : j.at("grants"))
      p.grants.push_back(
          Grant{g.at("path").get<std::string>(), access_from(g.at("access").get<std::string>()),
                kind_from(g.at("kind").get<std::string>()),
                g.at("bypass_builtin_denies").get<bool>(), g.at("origin").get<std::string>()});
    for (const auto& d : j.at("denies"))
      p.denies.push_back(Deny{d.at("path").get<std::string>(), d.at("origin").get<std::string>()});
    // Sessions pinned before held paths existed have none: the launcher's plan holds them.
    if (j.contains("held"))
      for (const auto& h : j.at("held")) {
        const std::string hold = h.at("hold").get<std::string>();
        if (hold != "hidden" && hold != "read_only")
          throw std::invalid_argument("unknown hold `" + hold + "`");
        p.held.push_back(
            HeldPath{h.at("path").get<std::string>(), kind_from(h.at("kind").get<std::string>()),
                     hold == "hidden" ? HeldPath::Hold::hidden : HeldPath::Hold::read_only});
      }
    for (const auto& [k, v] : j.at("env").items()) p.env[k] = v.get<std::string>();
    for (const auto& [k, v] : j.at("backend_options").items()) p.backend_options[k] = v.dump();
    return p;
  } catch (const std::exception& e) {
    throw SessionError(std::string("corrupt policy: ") + e.what(), origin,
                       "run `agent-boundary reload` to regenerate it");
  }
}

}  // namespace agent_boundary
