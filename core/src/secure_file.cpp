#include "secure_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "agent_boundary/error.hpp"

namespace fs = std::filesystem;

namespace agent_boundary {
namespace {

std::string errno_text(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

std::string temp_name_for(const std::string& path) {
  static std::mt19937_64 rng{std::random_device{}()};
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%d.%016llx.tmp", static_cast<int>(getpid()),
                static_cast<unsigned long long>(rng()));
  return path + suffix;
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = temp_name_for(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw SystemError(errno_text("cannot create", tmp), path);
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t w = ::write(fd, content.data() + done, content.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      const std::string msg = errno_text("cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      throw SystemError(msg, path);
    }
    done += static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string msg = errno_text("cannot flush", tmp);
    ::unlink(tmp.c_str());
    throw SystemError(msg, path);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string msg = errno_text("cannot replace", path);
    ::unlink(tmp.c_str());
    throw SystemError(msg, path);
  }
}

void make_private_dirs(const std::string& path) {
  fs::path p(path);
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path cur = p; !cur.empty() && !fs::exists(cur, ec); cur = cur.parent_path()) {
    missing.push_back(cur);
    if (cur == cur.root_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST)
      throw SystemError(errno_text("cannot create directory", it->string()), it->string());
  }
  if (!fs::is_directory(p, ec)) throw SystemError(path + " exists and is not a directory", path);
}

std::optional<std::string> read_file(const std::string& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw SystemError(errno_text("cannot open", path), path);
  }
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      const std::string msg = errno_text("cannot read", path);
      ::close(fd);
      throw SystemError(msg, path);
    }
    if (r == 0) break;
    out.append(buf, static_cast<std::size_t>(r));
    if (out.size() > max_bytes) {
      ::close(fd);
      throw SystemError(path + " is larger than " + std::to_string(max_bytes) + " bytes", path);
    }
  }
  ::close(fd);
  return out;
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

FileLock::FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the only descriptor releases the flock
}

FileLock FileLock::acquire(const std::string& path, int timeout_ms) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw SystemError(errno_text("cannot open the lock file", path), path);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return FileLock(fd);
    if (errno != EWOULDBLOCK && errno != EINTR) {
      const std::string msg = errno_text("cannot lock", path);
      ::close(fd);
      throw SystemError(msg, path);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
      return FileLock();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace agent_boundary
