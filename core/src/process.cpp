#include "agent_boundary/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "agent_boundary/error.hpp"

extern char** environ;

namespace agent_boundary {
namespace {

long long now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

void make_pipe(Fd& r, Fd& w) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) throw SystemError(std::string("pipe: ") + std::strerror(errno));
  r.fd = p[0];
  w.fd = p[1];
}

// Ignore SIGPIPE while we feed a child's stdin; restored when the last concurrent
// run_process returns (threads may run several at once: the first saves the old action,
// the last restores it, so an ignored SIGPIPE never outlives them and leaks into a
// program we exec later).
class SigpipeIgnored {
 public:
  SigpipeIgnored() {
    std::lock_guard<std::mutex> lock(mutex());
    if (users()++ > 0) return;
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &saved());
  }
  ~SigpipeIgnored() {
    std::lock_guard<std::mutex> lock(mutex());
    if (--users() == 0) sigaction(SIGPIPE, &saved(), nullptr);
  }
  SigpipeIgnored(const SigpipeIgnored&) = delete;
  SigpipeIgnored& operator=(const SigpipeIgnored&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& users() {
    static int n = 0;
    return n;
  }
  static struct sigaction& saved() {
    static struct sigaction old {};
    return old;
  }
};

}  // namespace

ProcessResult run_process(const ProcessOptions& options) {
  if (options.argv.empty() || options.argv[0].empty() || options.argv[0][0] != '/')
    throw SystemError("run_process needs an absolute executable path");
  if (!options.cwd.empty() && ::access(options.cwd.c_str(), X_OK) != 0)
    throw SystemError("cannot enter " + options.cwd + ": " + std::strerror(errno), options.cwd);
  SigpipeIgnored sigpipe_guard;

  Fd in_r, in_w, out_r, out_w, err_r, err_w;
  make_pipe(in_r, in_w);
  make_pipe(out_r, out_w);
  make_pipe(err_r, err_w);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_r.fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.fd, 2);
  // Nothing of ours beyond stdio leaks into the child (no inherited descriptors).
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGQUIT);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  // Own process group, so a timeout kills everything the child started.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);

  std::vector<char*> argv;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (options.env) {
    for (const auto& e : *options.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
  }

  pid_t pid = -1;
  const int rc =
      posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), options.env ? envp.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    throw SystemError("cannot start " + options.argv[0] + ": " + std::strerror(rc),
                      options.argv[0]);
  in_r.reset();
  out_w.reset();
  err_w.reset();

  ProcessResult result;
  std::size_t written = 0;
  if (options.input.empty())
    in_w.reset();
  else
    fcntl(in_w.fd, F_SETFL, O_NONBLOCK);

  const long long deadline = now_ms() + options.timeout_ms;
  char buf[8192];
  while (out_r.fd >= 0 || err_r.fd >= 0) {
    const long long left = deadline - now_ms();
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    if (out_r.fd >= 0) fds[n++] = {out_r.fd, POLLIN, 0};
    if (err_r.fd >= 0) fds[n++] = {err_r.fd, POLLIN, 0};
    if (in_w.fd >= 0) fds[n++] = {in_w.fd, POLLOUT, 0};
    const int pr = poll(fds, n, static_cast<int>(left));
    if (pr < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (!fds[i].revents) continue;
      if (fds[i].fd == in_w.fd) {
        const ssize_t w =
            ::write(in_w.fd, options.input.data() + written, options.input.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR)
          in_w.reset();
        else if (written == options.input.size())
          in_w.reset();
        continue;
      }
      Fd& src = fds[i].fd == out_r.fd ? out_r : err_r;
      std::string& dst = fds[i].fd == out_r.fd ? result.out : result.err;
      const ssize_t r = ::read(src.fd, buf, sizeof buf);
      if (r > 0) {
        if (dst.size() < options.max_output)
          dst.append(buf, std::min<std::size_t>(static_cast<std::size_t>(r),
                                                options.max_output - dst.size()));
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        src.reset();
      }
    }
  }
  if (result.timed_out) kill(-pid, SIGKILL);
  in_w.reset();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                              "0123456789_-./=:@%+,") == std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string first_line(const std::string& text, std::size_t limit) {
  std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return {};
  std::size_t end = text.find('\n', start);
  std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.size() > limit) line = line.substr(0, limit) + "...";
  return line;
}

}  // namespace agent_boundary
