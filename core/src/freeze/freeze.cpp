#include "freeze/freeze.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "agent_boundary/error.hpp"
#include "agent_boundary/process.hpp"
#include "freeze/proc_tree.hpp"
#include "freeze/registry.hpp"
#include "secure_file.hpp"

namespace agent_boundary::freeze {
namespace {

int read_count(const std::string& dir) {
  const auto text = read_file(dir + "/" + kCountFile, 64);
  if (!text) return 0;
  const long n = std::strtol(text->c_str(), nullptr, 10);
  return n > 0 && n < 1'000'000 ? static_cast<int>(n) : 0;
}

// In place and without fsync, on purpose: every reader and writer holds the session's freeze
// lock, so nobody sees a torn count, and it means nothing after a reboot (the processes it
// counts for are gone). Two fsyncs per tool call would be most of the gate's added latency.
void write_count(const std::string& dir, int n) {
  const std::string file = dir + "/" + kCountFile;
  const std::string text = std::to_string(std::max(n, 0)) + "\n";
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  const bool ok = fd >= 0 && ::ftruncate(fd, 0) == 0 &&
                  ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!ok) throw SystemError("cannot write " + file + ": " + std::strerror(err), file);
}

// The backend's declared command ("stop" or "resume"); nullopt when it declares none.
std::optional<std::vector<std::string>> backend_command(const std::string& dir, const char* which) {
  const std::string file = dir + "/" + kBackendFreezeFile;
  const auto text = read_file(file, 1 << 20);
  if (!text) return std::nullopt;
  try {
    auto argv = nlohmann::json::parse(*text).at(which).get<std::vector<std::string>>();
    if (argv.empty() || argv[0].empty() || argv[0][0] != '/') throw std::invalid_argument("argv");
    return argv;
  } catch (const std::exception&) {
    throw SessionError("the backend's " + std::string(kBackendFreezeFile) + " is damaged", file,
                       "run `agent-boundary reload`");
  }
}

// Runs the backend's command; the reason it failed, or empty.
std::string run_backend(const std::string& dir, const char* which, int timeout_ms) {
  const auto argv = backend_command(dir, which);
  if (!argv) return {};
  ProcessOptions opts;
  opts.argv = *argv;
  opts.timeout_ms = timeout_ms;
  const ProcessResult r = run_process(opts);
  if (r.ok()) return {};
  return r.timed_out ? "timed out" : first_line(r.err.empty() ? r.out : r.err);
}

}  // namespace

FileLock lock_session(const std::string& dir, int timeout_ms) {
  FileLock lock = FileLock::acquire(dir + "/" + kLockFile, timeout_ms);
  if (!lock.held())
    throw SystemError(
        "another agent-boundary process held the session's freeze lock for more "
        "than " +
            std::to_string(timeout_ms / 1000) + " s",
        dir + "/" + kLockFile);
  return lock;
}

std::vector<pid_t> live_reapers(const std::string& dir) {
  std::vector<pid_t> out;
  const std::string tracked = dir + "/" + kTrackDir;
  DIR* d = ::opendir(tracked.c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = tracked + "/" + name;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    // A live reaper holds an exclusive lock on its entry; it is released by the kernel when
    // the reaper (and with it its whole PID namespace) is gone, so a stale entry can never
    // name a reused pid.
    if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
      ::unlink(path.c_str());
    } else if (errno == EWOULDBLOCK) {
      char* end = nullptr;
      const long pid = std::strtol(name.c_str(), &end, 10);
      if (end && *end == '\0' && pid > 0) out.push_back(static_cast<pid_t>(pid));
    }
    ::close(fd);
  }
  ::closedir(d);
  return out;
}

int in_flight_locked(const std::string& dir) { return read_count(dir); }

void hold(const std::string& session_dir, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  FileLock lock = lock_session(session_dir, timeout_ms);
  const int before = read_count(session_dir);
  write_count(session_dir, before + 1);
  const auto reapers = live_reapers(session_dir);
  std::string failed;
  if (!stop_tree(reapers, deadline))
    failed = "a sandboxed process of this session could not be stopped within " +
             std::to_string(timeout_ms) + " ms";
  else if (const std::string why = run_backend(session_dir, "stop", timeout_ms); !why.empty())
    failed = "the backend could not stop the session's processes (" + why + ")";
  if (failed.empty()) return;
  write_count(session_dir, before);
  if (before == 0) {
    (void)run_backend(session_dir, "resume", 10000);
    continue_tree(reapers);
  }
  throw SystemError(failed, session_dir, "retry the tool call");
}

namespace {
void resume_all(const std::string& dir) {
  const std::string why = run_backend(dir, "resume", 10000);
  continue_tree(live_reapers(dir));
  if (!why.empty())
    throw SystemError("the backend could not continue the session's processes (" + why + ")", dir);
}
}  // namespace

void release(const std::string& session_dir) {
  FileLock lock = lock_session(session_dir, 10000);
  const int n = read_count(session_dir) - 1;
  write_count(session_dir, n);
  if (n <= 0) resume_all(session_dir);
}

void release_all(const std::string& session_dir) {
  FileLock lock = lock_session(session_dir, 10000);
  write_count(session_dir, 0);
  resume_all(session_dir);
}

int in_flight(const std::string& session_dir) {
  FileLock lock = lock_session(session_dir, 10000);
  return read_count(session_dir);
}

}  // namespace agent_boundary::freeze
