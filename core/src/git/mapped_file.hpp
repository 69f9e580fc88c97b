// A read-only mapping of a file the sandbox can write, read without a copy and without
// the risk a mapping brings: when the sandbox truncates the file while we read it, the
// kernel raises SIGBUS on the vanished pages, which would kill the hook (and a harness
// runs the tool when its hook crashes). `read` turns that fault into a `false` return.
#pragma once

#include <cstddef>

namespace agent_boundary::git {

class MappedFile {
 public:
  // Maps `fd` (a regular file of `size` bytes, size > 0); the fd may be closed afterwards.
  // Throws SystemError when the mapping fails.
  MappedFile(int fd, std::size_t size, const char* file);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Calls fn(arg, data, size) and returns true, or returns false when a read of the mapping
  // faulted (the file shrank). `fn` runs with SIGBUS caught and is left by a longjmp when it
  // faults, so every frame it makes must be trivially destructible at every load from
  // `data` and it must not throw: keep what it builds in `arg`, outside it, and copy bytes
  // out of the mapping into plain buffers before handing them to anything else.
  bool read(void (*fn)(void* arg, const unsigned char* data, std::size_t size), void* arg) const;

 private:
  const unsigned char* data_;
  std::size_t size_;
};

}  // namespace agent_boundary::git
