// Running helper processes (a backend's probe, `nono --version`, credential exporters)
// without a shell, with an explicit environment and a hard deadline: a child that hangs
// is killed with its whole process group and reported as timed out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent_boundary/export.hpp"

namespace agent_boundary {

struct ProcessOptions {
  std::vector<std::string> argv;                // argv[0] must be an absolute path
  std::optional<std::vector<std::string>> env;  // "K=V" entries; nullopt inherits ours
  std::string cwd;                              // empty: ours
  std::string input;                            // written to stdin, then closed
  int timeout_ms = 10000;
  std::size_t max_output = 1 << 20;  // per stream; the rest is discarded
};

struct ProcessResult {
  int exit_code = -1;  // valid when !signaled && !timed_out
  int signal = 0;      // terminating signal, 0 if none
  bool timed_out = false;
  std::string out;
  std::string err;
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
};

// Throws SystemError when the process cannot be started at all.
AB_API ProcessResult run_process(const ProcessOptions& options);

// Quote one word for POSIX sh so that it is passed through unchanged.
AB_API std::string shell_quote(const std::string& word);

// The first line of `text`, trimmed, at most `limit` characters (for messages).
AB_API std::string first_line(const std::string& text, std::size_t limit = 200);

}  // namespace agent_boundary
