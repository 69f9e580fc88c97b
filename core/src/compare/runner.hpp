// `agent-boundary compare`: running the corpus through one backend. Each backend gets its
// own world and one session from the world's profile, created exactly as `session create`
// does (so the backend's `start` runs) and always stopped afterwards, also on errors.
// Commands go through the installed launcher (`agent-boundary exec`, the path every
// wrapped Bash command takes); probes through the gate (decide_tool_call), as a harness's
// Read and Write tools are decided.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compare/corpus.hpp"
#include "compare/verdict.hpp"
#include "session.hpp"

namespace agent_boundary::compare {

struct Cell {
  Verdict observed = Verdict::error;
  Outcome outcome = Outcome::fail;
  std::string detail;  // what was seen and, when not ok, why; never a secret
};

// Medians in milliseconds over `runs` samples each.
struct Timing {
  int runs = 0;
  double bare_true_ms = 0;     // /bin/bash -c true, no boundary
  double wrapped_true_ms = 0;  // the same through `agent-boundary exec`
  double probe_ms = 0;         // one Read decided by the gate (its probe included)
  std::string error;           // set when the measurements could not be taken
};

struct BackendResult {
  std::string name;
  std::string version;                // the backend executable's, as pinned
  std::string error;                  // no session: the cells are empty
  std::vector<std::string> warnings;  // the session's, and a failed stop
  std::vector<Cell> cells;            // one per corpus() scenario, in order
  std::optional<Timing> timing;
};

struct RunOptions {
  int runs = 11;
  bool commands = true;  // false: command scenarios are skipped (unit tests)
  bool timing = true;
  bool probe_through_launcher = true;  // false: the backend's probe alone (unit tests)
  int command_timeout_ms = 60000;
  std::function<bool()> interrupted;  // polled between steps; true aborts with an Error
  // One line per step for stderr; `detail` marks the per-scenario lines.
  std::function<void(const std::string& line, bool detail)> progress;
};

// Never throws for a backend's failure (that is the result's `error` or a failed cell);
// throws only when interrupted. `scratch` is the directory the world is built in.
BackendResult run_backend(const std::string& backend, const Installation& install,
                          const std::string& scratch, const RunOptions& options);

// The median of `samples` (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> samples);

}  // namespace agent_boundary::compare
