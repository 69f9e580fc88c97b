// `agent-boundary compare`: judging one observation against the profile's intent. A backend
// that does not do what the profile intends fails the comparison, unless the session's
// pinned deny-state declared that limitation (the deny of that path is `weaker` or
// `unenforced`, so `status` already shows it DEGRADED).
#pragma once

#include <string>
#include <vector>

#include "agent_boundary/policy.hpp"
#include "compare/corpus.hpp"

namespace agent_boundary::compare {

enum class Outcome { ok, declared, fail };
const char* to_string(Outcome o);

struct Judgement {
  Outcome outcome = Outcome::fail;
  std::string why;  // empty for ok
};

// `target` is the scenario's expanded path (empty: none); `deny_state` the session's.
// Only a denied intent observed as allowed can be declared: a missing grant, a wrong
// denial and an error are never excused.
Judgement judge(Verdict intent, Verdict observed, const std::string& target,
                const std::vector<DenyState>& deny_state);

}  // namespace agent_boundary::compare
