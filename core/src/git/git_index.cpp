#include "git/git_index.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "agent_boundary/error.hpp"

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

// The whole file through read(2): a mapping could fault if the sandbox truncates it.
std::string slurp(const std::string& file, bool& missing) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) {
      missing = true;
      return {};
    }
    bad(file, std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    bad(file, "not a regular file");
  }
  std::string buf;
  buf.resize(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < buf.size()) {
    const ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  buf.resize(got);
  return buf;
}

}  // namespace

IndexGitlinks read_gitlinks(const std::string& file, std::size_t hash_len) {
  IndexGitlinks out;
  bool missing = false;
  const std::string buf = slurp(file, missing);
  if (missing) return out;
  const auto* p = reinterpret_cast<const unsigned char*>(buf.data());
  const std::size_t size = buf.size();
  if (size < 12 + hash_len || std::memcmp(p, "DIRC", 4) != 0) bad(file, "no index signature");
  const std::uint32_t version = be32(p + 4);
  if (version < 2 || version > 4) bad(file, "index version " + std::to_string(version));
  const std::uint32_t count = be32(p + 8);
  const std::size_t end = size - hash_len;      // the trailing checksum
  const std::size_t fixed = 40 + hash_len + 2;  // stat data, hash, flags
  std::size_t off = 12;
  std::string prev;  // v4: names are stored relative to the previous one
  for (std::uint32_t n = 0; n < count; ++n) {
    if (off + fixed > end) bad(file, "truncated entry");
    const unsigned char* e = p + off;
    const std::uint32_t mode = be32(e + 24);
    const std::uint16_t flags = be16(e + 40 + hash_len);
    std::size_t name_at = off + fixed;
    if (flags & 0x4000) {
      if (version < 3) bad(file, "extended flags in a version 2 index");
      name_at += 2;
    }
    const bool gitlink = (mode & kTypeMask) == kGitlink;
    if (version == 4) {
      // varint: how many bytes to drop from the previous name, then the NUL-ended rest.
      std::size_t strip = 0;
      std::size_t i = name_at;
      if (i >= end) bad(file, "truncated name");
      unsigned char c = p[i++];
      strip = c & 0x7f;
      while (c & 0x80) {
        if (i >= end || strip > (SIZE_MAX >> 8)) bad(file, "bad name prefix");
        c = p[i++];
        strip = ((strip + 1) << 7) | (c & 0x7f);
      }
      const void* nul = std::memchr(p + i, 0, end - i);
      if (!nul) bad(file, "unterminated name");
      const std::size_t len = static_cast<const unsigned char*>(nul) - (p + i);
      if (strip > prev.size()) bad(file, "bad name prefix");
      prev.resize(prev.size() - strip);
      prev.append(reinterpret_cast<const char*>(p + i), len);
      if (gitlink) out.paths.push_back(prev);
      off = i + len + 1;
    } else {
      std::size_t len = flags & 0x0fff;
      if (len == 0x0fff) {
        const void* nul = std::memchr(p + name_at, 0, end - name_at);
        if (!nul) bad(file, "unterminated name");
        len = static_cast<const unsigned char*>(nul) - (p + name_at);
      }
      if (name_at + len >= end) bad(file, "truncated name");
      if (gitlink) out.paths.emplace_back(reinterpret_cast<const char*>(p + name_at), len);
      // Entries are padded with 1-8 NULs to a multiple of 8 bytes.
      off += ((name_at - off + len + 8) & ~std::size_t(7));
    }
  }
  // Extensions: only `link` (split index) matters, for the shared part's entries.
  while (off + 8 <= end) {
    const std::uint32_t ext_size = be32(p + off + 4);
    if (std::memcmp(p + off, "link", 4) == 0 && ext_size >= hash_len) {
      static const char* hex = "0123456789abcdef";
      std::string name = "sharedindex.";
      for (std::size_t i = 0; i < hash_len; ++i) {
        name += hex[p[off + 8 + i] >> 4];
        name += hex[p[off + 8 + i] & 15];
      }
      out.shared_index = name;
    }
    if (ext_size > end - off - 8) break;
    off += 8 + ext_size;
  }
  return out;
}

}  // namespace agent_boundary::git
