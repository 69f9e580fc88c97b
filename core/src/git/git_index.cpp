#include "git/git_index.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "agent_boundary/error.hpp"
#include "git/mapped_file.hpp"

namespace agent_boundary::git {
namespace {

constexpr std::uint32_t kGitlink = 0160000;
constexpr std::uint32_t kTypeMask = 0170000;

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) |
         std::uint32_t(p[3]);
}
std::uint16_t be16(const unsigned char* p) { return std::uint16_t((p[0] << 8) | p[1]); }

[[noreturn]] void bad(const std::string& file, const std::string& why) {
  throw SystemError("cannot read the git index " + file + ": " + why, file,
                    "run `git status` on the host to let git rewrite it, or remove it");
}

constexpr std::size_t kMaxName = 1 << 16;

// What one pass over the mapped index builds. Plain data: the pass runs under
// MappedFile::read, which leaves it by a longjmp if the sandbox truncates the file.
struct Scan {
  std::size_t hash_len = 20;
  std::vector<std::string>* paths = nullptr;
  const char* error = nullptr;  // static text: why the index is not understood
  std::uint32_t version = 0;
  bool linked = false;  // a `link` extension: a split index
  unsigned char link_hash[32] = {};
  std::size_t name_len = 0;  // version 4: the previous name, names are stored against it
  char name[kMaxName] = {};
};

// The whole index in one pass, bounds-checked against `size`; gitlink names are copied
// into `s.name` before they become strings, so no allocation reads the mapping.
void scan_index(void* arg, const unsigned char* d, std::size_t size) {
  Scan& s = *static_cast<Scan*>(arg);
  if (size < 12 || std::memcmp(d, "DIRC", 4) != 0) {
    s.error = "no index signature";
    return;
  }
  s.version = be32(d + 4);
  if (s.version < 2 || s.version > 4) {
    s.error = "an index version other than 2, 3 or 4";
    return;
  }
  const std::uint32_t count = be32(d + 8);
  const std::size_t fixed = 40 + s.hash_len + 2;  // stat data, hash, flags
  std::size_t pos = 12;                           // invariant: pos <= size
  for (std::uint32_t n = 0; n < count; ++n) {
    if (size - pos < fixed + 2) {
      s.error = "truncated";
      return;
    }
    const unsigned char* e = d + pos;
    __builtin_prefetch(e + 2048);
    const bool gitlink = (be32(e + 24) & kTypeMask) == kGitlink;
    const std::uint16_t flags = be16(e + 40 + s.hash_len);
    std::size_t head = fixed;
    if (flags & 0x4000) {
      if (s.version < 3) {
        s.error = "extended flags in a version 2 index";
        return;
      }
      head += 2;
    }
    if (s.version == 4) {
      // varint: how many bytes to drop from the previous name, then the NUL-ended rest.
      std::size_t p = pos + head;
      if (p >= size) {
        s.error = "truncated";
        return;
      }
      unsigned char c = d[p++];
      std::size_t strip = c & 0x7f;
      while (c & 0x80) {
        if (strip > (SIZE_MAX >> 8) || p >= size) {
          s.error = "bad name prefix";
          return;
        }
        c = d[p++];
        strip = ((strip + 1) << 7) | (c & 0x7f);
      }
      const void* nul = strip <= s.name_len ? std::memchr(d + p, 0, size - p) : nullptr;
      const std::size_t len = nul ? static_cast<const unsigned char*>(nul) - (d + p) : 0;
      const std::size_t keep = s.name_len - strip;
      if (!nul || keep + len > kMaxName) {
        s.error = "bad name";
        return;
      }
      std::memcpy(s.name + keep, d + p, len);
      s.name_len = keep + len;
      if (gitlink) s.paths->emplace_back(s.name, s.name_len);
      pos = p + len + 1;
      continue;
    }
    std::size_t len = flags & 0x0fff;
    if (len == 0x0fff) {  // a long name: its length is where its NUL is
      const void* nul = size - pos > head ? std::memchr(e + head, 0, size - pos - head) : nullptr;
      if (!nul) {
        s.error = "a name without an end";
        return;
      }
      len = static_cast<const unsigned char*>(nul) - (e + head);
    }
    const std::size_t entry = (head + len + 8) & ~std::size_t(7);  // padded with 1-8 NULs
    if (size - pos < entry || len > kMaxName) {
      s.error = "truncated";
      return;
    }
    if (gitlink) {
      std::memcpy(s.name, e + head, len);
      s.paths->emplace_back(s.name, len);
    }
    pos += entry;
  }
  // Extensions: only `link` (split index) matters, for the shared part's entries. The
  // trailing checksum looks like a short extension and ends the loop.
  while (size - pos >= 8 + s.hash_len + 1) {
    const unsigned char* x = d + pos;
    const std::uint32_t ext_size = be32(x + 4);
    if (std::memcmp(x, "link", 4) == 0 && ext_size >= s.hash_len) {
      std::memcpy(s.link_hash, x + 8, s.hash_len);
      s.linked = true;
    }
    pos += 8;
    if (size - pos < ext_size) break;
    pos += ext_size;
  }
}

}  // namespace

IndexGitlinks read_gitlinks(const std::string& file, std::size_t hash_len) {
  IndexGitlinks out;
  if (hash_len != 20 && hash_len != 32) bad(file, "a hash length other than 20 or 32");
  auto scan = std::make_unique<Scan>();
  scan->hash_len = hash_len;
  // A sandbox that truncates the index while we read it faults the mapping: read again
  // (the file it leaves is what git will read). One that keeps doing so gets a refusal.
  for (int attempt = 0; attempt < 3; ++attempt) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
      if (errno == ENOENT) return out;
      bad(file, std::strerror(errno));
    }
    struct stat st {};
    const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (!regular || st.st_size < 12 || st.st_size > (off_t(1) << 30)) {
      ::close(fd);
      // git's own limit is far below 1 GB: a larger file is a sparse decoy.
      bad(file, !regular          ? "not a regular file"
                : st.st_size < 12 ? "truncated"
                                  : "larger than 1 GB");
    }
    std::unique_ptr<MappedFile> map;
    try {
      map = std::make_unique<MappedFile>(fd, static_cast<std::size_t>(st.st_size), file.c_str());
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    out.paths.clear();
    scan->paths = &out.paths;
    scan->error = nullptr;
    scan->linked = false;
    scan->name_len = 0;
    if (!map->read(scan_index, scan.get())) continue;
    if (scan->error) bad(file, scan->error);
    if (scan->linked) {
      static const char* hex = "0123456789abcdef";
      out.shared_index = "sharedindex.";
      for (std::size_t i = 0; i < hash_len; ++i) {
        out.shared_index += hex[scan->link_hash[i] >> 4];
        out.shared_index += hex[scan->link_hash[i] & 15];
      }
    }
    return out;
  }
  bad(file, "it kept changing while it was read");
}

}  // namespace agent_boundary::git
