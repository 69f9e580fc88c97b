// agent-boundary's probe: runs inside a boundary and asks the kernel whether one path can
// be opened for one access. Prints exactly one line and exits 0:
//   allowed | allowed|target absent | denied|<ERRNO> | error|<what>
// It never creates, truncates or changes an existing file; for an absent target it does
// what the tool would do (create the missing dirs and an exclusive new file) and undoes it,
// because asking about the parent would wrongly allow a denied leaf in an allowed dir.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

int answer(const char* verdict, const char* detail = nullptr) {
  if (detail)
    std::printf("%s|%s\n", verdict, detail);
  else
    std::printf("%s\n", verdict);
  return 0;
}

int denied(int err) {
  const char* name = strerrorname_np(err);
  return answer("denied", name ? name : "EUNKNOWN");
}

std::string parent_of(const std::string& p) {
  const auto slash = p.find_last_of('/');
  return slash == 0 ? "/" : p.substr(0, slash);
}

bool exists_nofollow(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

int probe_absent_read(const std::string& path) {
  std::string dir = parent_of(path);
  while (dir != "/" && !exists_nofollow(dir)) dir = parent_of(dir);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return denied(errno);
  ::closedir(d);
  return answer("allowed", "target absent");
}

// Other probes (parallel tool calls) may create or remove the same missing parents at the
// same time: an existing dir is fine (EEXIST), a vanished one is retried, and cleanup tries
// every dir that was missing at the start (rmdir only ever removes empty ones).
int probe_absent_write(const std::string& path) {
  std::vector<std::string> missing;
  for (std::string dir = parent_of(path); dir != "/" && !exists_nofollow(dir); dir = parent_of(dir))
    missing.push_back(dir);
  auto cleanup = [&] {
    for (const auto& dir : missing) ::rmdir(dir.c_str());  // deepest first
  };
  int err = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (attempt > 0) {
      const timespec pause{0, 500000};  // 0.5 ms: let the other probe finish its cleanup
      ::nanosleep(&pause, nullptr);
    }
    err = 0;
    for (auto it = missing.rbegin(); it != missing.rend() && !err; ++it)
      if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) err = errno;
    if (err == ENOENT) continue;  // a parent vanished under a concurrent cleanup
    if (err) break;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
      err = errno;
      if (err == ENOENT) continue;
      break;
    }
    ::close(fd);
    ::unlink(path.c_str());
    cleanup();
    return answer("allowed", "target absent");
  }
  cleanup();
  return denied(err);
}

#ifdef AB_MUTANT_PROBE
// Mutant only: whether an ancestor is the SessionStart hook, whose enforcement self-test is
// a protection of its own (the `self-test` mutant); this mutant leaves it alone.
bool under_session_start() {
  pid_t pid = ::getppid();
  for (int depth = 0; depth < 8 && pid > 1; ++depth) {
    const std::string proc = "/proc/" + std::to_string(pid);
    std::FILE* f = std::fopen((proc + "/cmdline").c_str(), "r");
    if (!f) return false;
    std::string cmd = " ";
    for (int c; (c = std::fgetc(f)) != EOF;) cmd += c ? static_cast<char>(c) : ' ';
    std::fclose(f);
    if (cmd.find(" hook SessionStart ") != std::string::npos) return true;
    f = std::fopen((proc + "/stat").c_str(), "r");
    if (!f) return false;
    std::string stat;
    for (int c; (c = std::fgetc(f)) != EOF;) stat += static_cast<char>(c);
    std::fclose(f);
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 4 >= stat.size()) return false;
    pid = static_cast<pid_t>(std::atoi(stat.c_str() + close + 4));  // ") S PPID"
  }
  return false;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || argv[1][0] != '/')
    return answer("error", "usage: probe /abs/path read|write|readwrite");
#ifdef AB_MUTANT_PROBE
  // mutant (tests/mutation only, never installed): asks nothing, except for session
  // creation's check that installed code is unwritable and the SessionStart self-test (so
  // the tests get a session and their own assertions meet the mutant, instead of all
  // failing at setup).
  if (std::string_view(argv[1]).find("/.agent-boundary-write-check-") == std::string_view::npos &&
      !under_session_start())
    return answer("allowed");
#endif
  const std::string path = argv[1];
  const std::string op = argv[2];
  int flags = O_CLOEXEC | O_NOCTTY | O_NONBLOCK;  // O_NONBLOCK: a FIFO must not hang us
  if (op == "read")
    flags |= O_RDONLY;
  else if (op == "write")
    flags |= O_WRONLY;
  else if (op == "readwrite")
    flags |= O_RDWR;
  else
    return answer("error", "unknown access");
  const int fd = ::open(path.c_str(), flags);
  if (fd >= 0) {
    ::close(fd);
    return answer("allowed");
  }
  if (errno != ENOENT) return denied(errno);
  return op == "read" ? probe_absent_read(path) : probe_absent_write(path);
}
