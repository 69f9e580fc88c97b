// `agent-boundary compare`: the corpus. One fixed list of scenarios, plain data, run
// unchanged through every backend: what a command inside the boundary and the harness
// gate's probe may and may not do in the scratch world (compare/world.hpp), and what the
// profile intends. Paths and values are written with the world's placeholders
// (`{wt}`, `{home}`, `{token}`, ...), expanded per world.
#pragma once

#include <string>
#include <vector>

#include "agent_boundary/policy.hpp"

namespace agent_boundary::compare {

// What a scenario intends, or what was observed. `error`: no answer (the command did not
// start, a tool is missing, a timeout); it is never an intent.
enum class Verdict { allowed, denied, error };
const char* to_string(Verdict v);

enum class ScenarioKind {
  command,  // a shell script through the launcher (`agent-boundary exec`), like a Bash call
  probe,    // a Read/Write tool call decided by the gate (the backend's probe inside)
};
const char* to_string(ScenarioKind k);

// How a command scenario's "allowed" is established (besides exit 0 and the done marker,
// which every command must reach).
enum class Check {
  exit_status,  // nothing more
  output_has,   // its stdout holds `expect`: the content was read, not an empty mask
  host_has,     // afterwards the host file `target` holds the token: the write landed
  host_commit,  // afterwards the worktree's HEAD (on the host) has the token as subject
};

struct Scenario {
  std::string id;       // stable, kebab-case: rows of the matrix, keys of --json
  std::string summary;  // one line for people
  ScenarioKind kind = ScenarioKind::command;
  Verdict intent = Verdict::denied;  // allowed or denied: what the profile says
  // The path the scenario is about (placeholders): the probe's path, the host file a write
  // check reads, the path whose deny-state may declare a limitation. Empty: none.
  std::string target;
  Access access = Access::read;  // probe: what the tool asks for
  // command: the body of a /bin/sh script, run in the workdir with $1 = target and
  // $2 = arg. It must exit 0 exactly when the operation succeeded.
  std::string script;
  std::string arg;
  std::string tool;  // a command the script needs inside (missing: `error`, not `denied`)
  Check check = Check::exit_status;
  std::string expect;  // output_has: the content (a placeholder)
};

// The corpus, in report order.
const std::vector<Scenario>& corpus();

}  // namespace agent_boundary::compare
