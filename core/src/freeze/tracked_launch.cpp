#include "freeze/tracked_launch.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include "agent_boundary/error.hpp"
#include "freeze/freeze.hpp"
#include "freeze/registry.hpp"
#include "secure_file.hpp"
#include "userns.hpp"

namespace agent_boundary::freeze {
namespace {

volatile sig_atomic_t g_forward_to = 0;

extern "C" void forward_signal(int sig) {
  if (g_forward_to > 0) ::kill(g_forward_to, sig);
}

void on_signals(void (*handler)(int), std::initializer_list<int> sigs) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  for (const int s : sigs) ::sigaction(s, &sa, nullptr);
}

// A PID namespace needs CAP_SYS_ADMIN in the current user namespace: root has it, and so
// does a launcher already inside the protection's user namespace. Anyone else first enters
// a user namespace mapping their ids to themselves.
void unshare_pid_namespace() {
  if (::unshare(CLONE_NEWPID) == 0) return;
  const int first = errno;
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  if (first == EPERM && ::unshare(CLONE_NEWUSER) == 0 && map_ids_to_self(uid, gid) &&
      ::unshare(CLONE_NEWPID) == 0)
    return;
  throw SystemError(std::string("cannot give the command its own PID namespace (") +
                        std::strerror(errno ? errno : first) +
                        "), so an in-process file tool could not stop it",
                    {}, "enable unprivileged user namespaces (kernel.unprivileged_userns_clone=1)");
}

// Keep only `keep` (and stdio, pointed at /dev/null) open.
void close_all_but(std::vector<int> keep) {
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
    if (null > 2) ::close(null);
  }
  std::sort(keep.begin(), keep.end());
  unsigned from = 3;
  for (const int fd : keep) {
    if (static_cast<unsigned>(fd) > from) ::close_range(from, static_cast<unsigned>(fd) - 1, 0);
    from = static_cast<unsigned>(fd) + 1;
  }
  ::close_range(from, ~0U, 0);
}

// Init of the namespace. Signals from the launcher go to the command while it runs; its
// status goes back through `status_fd`; then every orphan is reaped until none is left.
// The namespace (every process in it) ends with us.
[[noreturn]] void reap(pid_t command, int status_fd, int entry_fd) {
  g_forward_to = command;
  on_signals(forward_signal, {SIGTERM, SIGHUP, SIGINT, SIGQUIT});
  // Out of the terminal's process group: ^C reaches the command, never the namespace.
  ::setsid();
  close_all_but({status_fd, entry_fd});
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nobody left
    }
    if (pid == command && status_fd >= 0) {
      g_forward_to = 0;
      (void)!::write(status_fd, &status, sizeof status);
      ::close(status_fd);
      status_fd = -1;
    }
  }
  ::_exit(0);
}

// The launcher's process: outlives the command, not the background processes it started.
[[noreturn]] void wait_for_command(pid_t reaper, int status_fd) {
  g_forward_to = reaper;
  on_signals(forward_signal, {SIGTERM, SIGHUP});
  on_signals(SIG_IGN, {SIGINT, SIGQUIT});  // the terminal sends them to the command itself
  int status = 0;
  std::size_t got = 0;
  while (got < sizeof status) {
    const ssize_t n =
        ::read(status_fd, reinterpret_cast<char*>(&status) + got, sizeof status - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got < sizeof status) ::_exit(128 + SIGKILL);  // the reaper was killed: so was everything
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    on_signals(SIG_DFL, {sig});
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);
  }
  ::_exit(1);
}

// Wait until no in-process tool is in flight; the returned lock keeps it so.
FileLock lock_when_idle(const std::string& dir, int wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    FileLock lock = lock_session(dir, wait_ms);
    if (in_flight_locked(dir) == 0) return lock;
    if (std::chrono::steady_clock::now() >= deadline)
      throw SessionError(
          "an in-process file tool of this session has held its sandboxed processes stopped "
          "for more than " +
              std::to_string(wait_ms / 1000) + " s, so no new command may start",
          dir, "let the tool finish; the harness's next prompt releases them");
    lock = FileLock();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

void enter_tracked(const std::string& session_dir, int wait_ms) {
  make_private_dirs(session_dir + "/" + kTrackDir);
  FileLock lock = lock_when_idle(session_dir, wait_ms);
  (void)live_reapers(session_dir);  // prunes the entries of reapers that are gone
  // A backend that stops its processes itself (freeze.json) runs them under a container
  // engine: its client must stay in the host's PID namespace (the engine records the pids
  // of what the client starts), and its processes are not ours to track.
  struct stat st {};
  if (::stat((session_dir + "/" + kBackendFreezeFile).c_str(), &st) == 0) return;
  const std::string pending = session_dir + "/" + kTrackDir + "/new-" + std::to_string(::getpid());
  const int entry =
      ::open(pending.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (entry < 0 || ::flock(entry, LOCK_EX) != 0)
    throw SystemError("cannot register the command in " + pending + ": " + std::strerror(errno),
                      pending);
  unshare_pid_namespace();
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0)
    throw SystemError(std::string("pipe: ") + std::strerror(errno));
  const pid_t reaper = ::fork();
  if (reaper < 0) throw SystemError(std::string("fork: ") + std::strerror(errno));
  if (reaper == 0) {
    ::close(status_pipe[0]);
    const pid_t command = ::fork();
    if (command < 0) ::_exit(126);
    if (command == 0) {  // the command: its descriptors close at exec (all CLOEXEC)
      ::close(status_pipe[1]);
      ::close(entry);
      return;
    }
    reap(command, status_pipe[1], entry);
  }
  // Named by the reaper's pid only once it exists, and before the lock is let go: a hold
  // either finds it or comes after the command could have started.
  const std::string named = session_dir + "/" + kTrackDir + "/" + std::to_string(reaper);
  if (::rename(pending.c_str(), named.c_str()) != 0) {
    ::kill(reaper, SIGKILL);  // an untracked command must not run
    ::_exit(126);
  }
  ::close(entry);
  ::close(status_pipe[1]);
  lock = FileLock();
  wait_for_command(reaper, status_pipe[0]);
}

}  // namespace agent_boundary::freeze
