// The processes below a set of roots, read from /proc, and stopping or continuing them.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <vector>

namespace agent_boundary::freeze {

// Every live process descending from `roots` (the roots themselves excluded), found by
// parent links in /proc.
std::vector<pid_t> descendants_of(const std::vector<pid_t>& roots);

// SIGSTOP every descendant of `roots` until a scan finds all of them (every thread) stopped
// and none new. False when that did not happen before `deadline`.
bool stop_tree(const std::vector<pid_t>& roots, std::chrono::steady_clock::time_point deadline);

// SIGCONT every descendant of `roots`.
void continue_tree(const std::vector<pid_t>& roots);

}  // namespace agent_boundary::freeze
