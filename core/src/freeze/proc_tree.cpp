#include "freeze/proc_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

namespace agent_boundary::freeze {
namespace {

std::optional<std::string> slurp(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[1024];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

struct Stat {
  char state = '?';
  pid_t ppid = 0;
};

// `pid (comm) S ppid ...`; comm may itself hold ')' and spaces, so parse after the last ')'.
std::optional<Stat> read_stat(const std::string& path) {
  const auto text = slurp(path);
  if (!text) return std::nullopt;
  const auto close = text->rfind(')');
  if (close == std::string::npos || close + 4 > text->size()) return std::nullopt;
  Stat s;
  s.state = (*text)[close + 2];
  s.ppid = static_cast<pid_t>(std::strtol(text->c_str() + close + 4, nullptr, 10));
  return s;
}

std::vector<pid_t> numeric_entries(const std::string& dir) {
  std::vector<pid_t> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long v = std::strtol(e->d_name, &end, 10);
    if (end && *end == '\0' && v > 0) out.push_back(static_cast<pid_t>(v));
  }
  ::closedir(d);
  return out;
}

// A thread that will not run user code again before it is continued. A parent blocked in
// vfork() sleeps uninterruptibly until its (stopped) child execs: it cannot act either.
bool thread_stopped(const std::string& task_dir) {
  const auto s = read_stat(task_dir + "/stat");
  if (!s) return true;  // gone
  switch (s->state) {
    case 'T':
    case 't':
    case 'Z':
    case 'X':
    case 'x':
      return true;
    case 'D': {
      const auto wchan = slurp(task_dir + "/wchan");
      return wchan && (wchan->find("vfork") != std::string::npos || *wchan == "kernel_clone");
    }
    default:
      return false;
  }
}

bool process_stopped(pid_t pid) {
  const std::string base = "/proc/" + std::to_string(pid);
  const auto tids = numeric_entries(base + "/task");
  if (tids.empty()) return !read_stat(base + "/stat").has_value();  // gone (or unreadable)
  for (const pid_t tid : tids)
    if (!thread_stopped(base + "/task/" + std::to_string(tid))) return false;
  return true;
}

struct Member {
  pid_t pid;
  pid_t ppid;
};

// Never ourselves nor an ancestor of ours: when the harness itself runs inside a tracked
// command (whole-agent mode), stopping it would stop the hook that has to continue it.
std::vector<Member> members_below(const std::vector<pid_t>& roots) {
  std::multimap<pid_t, pid_t> children;
  std::map<pid_t, pid_t> parent;
  for (const pid_t pid : numeric_entries("/proc"))
    if (const auto s = read_stat("/proc/" + std::to_string(pid) + "/stat")) {
      children.emplace(s->ppid, pid);
      parent[pid] = s->ppid;
    }
  std::set<pid_t> spared;
  for (pid_t p = ::getpid(); p > 1 && spared.insert(p).second;) {
    const auto it = parent.find(p);
    p = it == parent.end() ? 0 : it->second;
  }
  std::set<pid_t> seen(roots.begin(), roots.end());
  std::vector<Member> out;
  std::vector<pid_t> todo(roots.begin(), roots.end());
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    const auto [b, e] = children.equal_range(p);
    for (auto it = b; it != e; ++it)
      if (seen.insert(it->second).second) {
        if (!spared.contains(it->second)) out.push_back({it->second, p});
        todo.push_back(it->second);
      }
  }
  return out;
}

// Stop `m` only if it is still the child of the same parent: the pidfd pins the process,
// so a pid that died and was reused by an unrelated process since the scan is left alone.
void stop_member(const Member& m) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, m.pid, 0));
  if (fd < 0) return;  // gone
  const auto s = read_stat("/proc/" + std::to_string(m.pid) + "/stat");
  if (s && s->ppid == m.ppid) ::syscall(SYS_pidfd_send_signal, fd, SIGSTOP, nullptr, 0);
  ::close(fd);
}

}  // namespace

std::vector<pid_t> descendants_of(const std::vector<pid_t>& roots) {
  std::vector<pid_t> out;
  for (const auto& m : members_below(roots)) out.push_back(m.pid);
  return out;
}

bool stop_tree(const std::vector<pid_t>& roots, std::chrono::steady_clock::time_point deadline) {
  if (roots.empty()) return true;
  std::vector<Member> scan = members_below(roots);
  for (;;) {
    // A process whose SIGSTOP is still pending, or one forked since the last scan, is
    // signalled (again) and the scan repeats. Done when every process of a scan was seen
    // stopped and a later scan finds no process that was not in it: a child forked before
    // its parent stopped is in that later scan, and a stopped process cannot fork.
    bool settled = true;
    for (const Member& m : scan) {
      if (process_stopped(m.pid)) continue;
      settled = false;
      stop_member(m);
    }
    std::vector<Member> next = members_below(roots);
    if (settled) {
      std::set<pid_t> known;
      for (const Member& m : scan) known.insert(m.pid);
      bool fresh = false;
      for (const Member& m : next) fresh = fresh || !known.contains(m.pid);
      if (!fresh) return true;
    }
    scan = std::move(next);
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (!settled) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void continue_tree(const std::vector<pid_t>& roots) {
  for (const pid_t pid : descendants_of(roots)) ::kill(pid, SIGCONT);
}

}  // namespace agent_boundary::freeze
