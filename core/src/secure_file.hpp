// The one owner of how agent-boundary writes files: atomically (temp file + rename, so a
// reader sees the old or the new content, never a torn one) and private from the first
// byte (created 0600 with O_EXCL; never chmod'ed after writing). Directories are 0700.
#pragma once

#include <optional>
#include <string>

namespace agent_boundary {

// Replace `path` with `content`. The temp file lives beside it and is removed on failure.
void write_file_atomic(const std::string& path, const std::string& content);

// Create `path` and any missing parents with mode 0700. Existing dirs are left as they are.
void make_private_dirs(const std::string& path);

// The content of `path`, or nullopt when it does not exist. Throws SystemError for other
// failures and when the file exceeds `max_bytes`.
std::optional<std::string> read_file(const std::string& path, std::size_t max_bytes = 8 << 20);

// Remove a directory tree; errors are ignored (best-effort cleanup).
void remove_tree(const std::string& path);

// An exclusive flock on `path` (created 0600 if missing), released when destroyed or when
// the process dies. Used to serialise writers of one file across processes.
class FileLock {
 public:
  FileLock() = default;
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();
  bool held() const { return fd_ >= 0; }

  // Wait up to `timeout_ms` for the lock: a lock that is not held means the wait timed out.
  // Throws SystemError when the lock file cannot be opened.
  static FileLock acquire(const std::string& path, int timeout_ms);

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace agent_boundary
