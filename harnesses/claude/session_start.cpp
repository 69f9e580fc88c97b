// SessionStart: Claude's payload in; core's report out as stderr lines and as exports in
// Claude's CLAUDE_ENV_FILE (sourced before every later Bash command).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent_boundary/process.hpp"
#include "claude_harness.hpp"
#include "payload.hpp"

namespace agent_boundary::claude {
namespace {

const std::string kWhat = "Claude SessionStart payload";
const std::string kPrefix = "[agent-boundary] ";

// Each line of `text` prefixed, so a multi-line note stays attributable.
void add_lines(std::string& out, const std::string& text) {
  const std::size_t size = text.find_last_not_of('\n') + 1;  // npos + 1 == 0
  std::size_t start = 0;
  while (start < size) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos || end > size) end = size;
    out += kPrefix + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
}

// The directory to put on PATH: agent_boundary_bin itself when it is a directory, else the
// directory holding it.
std::string bin_dir(const std::string& bin) {
  struct stat st {};
  if (::stat(bin.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return bin;
  const auto slash = bin.find_last_of('/');
  if (slash == std::string::npos) return {};
  return slash == 0 ? "/" : bin.substr(0, slash);
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Appends `text` to `file` (created 0600 when absent); returns the error, or "".
std::string append_to(const std::string& file, std::string text) {
  const int fd =
      ::open(file.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
  if (fd < 0) return std::strerror(errno);
  std::string error;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    error = "not a regular file";
  } else {
    // Never glue our first export onto an unterminated last line.
    char last = '\n';
    if (st.st_size > 0 && ::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
      text.insert(0, "\n");
    if (!write_all(fd, text)) error = std::strerror(errno);
  }
  ::close(fd);
  return error;
}

}  // namespace

SessionStartEvent ClaudeHarness::parse_session_start(const std::string& payload) const {
  const Json p = parse_object(payload, kWhat);
  SessionStartEvent event;
  event.session_id = string_field(p, "session_id", kWhat);
  event.cwd = cwd_field(p, kWhat);
  event.source = string_field(p, "source", kWhat);
  return event;
}

std::string ClaudeHarness::finish_session_start(const SessionStartReport& report) const {
  std::string out;
  if (!report.status_line.empty()) add_lines(out, report.status_line);
  for (const std::string& note : report.notes) add_lines(out, note);
  if (!report.session_dir.empty() && !report.enforcement_verified)
    add_lines(out,
              "WARNING: enforcement self-test FAILED: a denied path was reachable (or the check "
              "could not run); commands are NOT sandboxed");

  const char* env_file = std::getenv("CLAUDE_ENV_FILE");
  if (!env_file || !*env_file || report.session_dir.empty()) return out;
  std::string exports;
  if (!report.agent_boundary_bin.empty()) {
    const std::string dir = bin_dir(report.agent_boundary_bin);
    if (dir.empty() || dir[0] != '/' || dir.find(':') != std::string::npos)
      add_lines(out, "WARNING: cannot put " + report.agent_boundary_bin +
                         " on PATH (not an absolute path without ':')");
    else
      exports += "export PATH=" + shell_quote(dir) + ":\"$PATH\"\n";
  }
  if (!report.kubeconfig.empty()) {
    // KUBECONFIG is a ':'-separated list too.
    if (report.kubeconfig[0] != '/' || report.kubeconfig.find(':') != std::string::npos)
      add_lines(out, "WARNING: cannot export KUBECONFIG=" + report.kubeconfig +
                         " (not an absolute path without ':')");
    else
      exports += "export KUBECONFIG=" + shell_quote(report.kubeconfig) + "\n";
  }
  if (exports.empty()) return out;
  const std::string error = append_to(env_file, exports);
  if (error.empty())
    host_.debug(std::string("exported PATH/KUBECONFIG through ") + env_file);
  else
    add_lines(out, std::string("WARNING: could not write CLAUDE_ENV_FILE ") + env_file + ": " +
                       error + "; PATH and KUBECONFIG are not exported to Bash commands");
  return out;
}

}  // namespace agent_boundary::claude
