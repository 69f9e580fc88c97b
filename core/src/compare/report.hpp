// `agent-boundary compare`: the results as a verdict matrix (scenario rows, backend
// columns) and a timing table, as text or JSON. Pure rendering: nothing here runs.
#pragma once

#include <string>
#include <vector>

#include "compare/runner.hpp"

namespace agent_boundary::compare {

struct Report {
  int runs = 0;                         // timing samples per median
  std::vector<BackendResult> backends;  // in the order they ran
};

struct Tally {
  int ok = 0, declared = 0, fail = 0;
  int backend_errors = 0;  // no session, or no timing
};
Tally tally(const Report& report);

// Passed: at least one backend, every backend made a session and was timed (when timing
// was asked for), and no cell is FAIL.
bool passed(const Report& report);

std::string render_text(const Report& report);
std::string render_json(const Report& report);  // one object, pretty-printed, "\n"-terminated

}  // namespace agent_boundary::compare
