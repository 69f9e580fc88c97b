#include "compare/verdict.hpp"

#include "paths.hpp"

namespace agent_boundary::compare {

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::ok:
      return "ok";
    case Outcome::declared:
      return "declared";
    case Outcome::fail:
      return "FAIL";
  }
  return "?";
}

Judgement judge(Verdict intent, Verdict observed, const std::string& target,
                const std::vector<DenyState>& deny_state) {
  if (observed == intent) return {Outcome::ok, {}};
  const std::string expected =
      std::string("intended ") + to_string(intent) + ", observed " + to_string(observed);
  if (intent == Verdict::denied && observed == Verdict::allowed && !target.empty()) {
    const std::string real = resolve_existing_prefix(target);
    for (const auto& d : deny_state) {
      if (d.enforcement == Enforcement::enforced) continue;
      if (!path_within(target, d.path) && !path_within(real, resolve_existing_prefix(d.path)))
        continue;
      return {Outcome::declared, expected + "; deny-state declares " + d.path + " " +
                                     to_string(d.enforcement) +
                                     (d.reason.empty() ? "" : ": " + d.reason)};
    }
  }
  return {Outcome::fail, expected};
}

}  // namespace agent_boundary::compare
