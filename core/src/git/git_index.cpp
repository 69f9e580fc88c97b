#include "git/git_index.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

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

// The index, read forward through one small buffer: a fresh 10 MB buffer costs more in
// page faults than the parse, and a mapping could fault if the sandbox truncates the file.
class Stream {
 public:
  Stream(int fd, std::string file) : fd_(fd), file_(std::move(file)) {}
  ~Stream() { ::close(fd_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // The next `n` bytes (valid until the next call); throws when the file ends first.
  const unsigned char* need(std::size_t n) {
    if (end_ - pos_ < n) fill(n);
    return buf_.data() + pos_;
  }
  // Like need(), but returns nullptr at the end of the file instead of throwing.
  const unsigned char* want(std::size_t n) {
    if (end_ - pos_ < n) fill(n, false);
    return end_ - pos_ < n ? nullptr : buf_.data() + pos_;
  }
  void skip(std::size_t n) {
    if (end_ - pos_ >= n) {
      pos_ += n;
      return;
    }
    n -= end_ - pos_;
    pos_ = end_;
    while (n > 0) {
      const std::size_t step = std::min(n, kChunk);
      need(step);
      pos_ += step;
      n -= step;
    }
  }
  // The bytes up to the next NUL (consumed with it), appended to `out`.
  void append_until_nul(std::string& out) {
    for (;;) {
      const std::size_t avail = end_ - pos_;
      const unsigned char* p = buf_.data() + pos_;
      if (const void* nul = avail ? std::memchr(p, 0, avail) : nullptr) {
        const std::size_t len = static_cast<const unsigned char*>(nul) - p;
        out.append(reinterpret_cast<const char*>(p), len);
        pos_ += len + 1;
        return;
      }
      if (avail >= kMaxName) bad(file_, "a name without an end");
      fill(avail + 1);
    }
  }

 private:
  static constexpr std::size_t kChunk = 1 << 17;
  static constexpr std::size_t kMaxName = 1 << 16;
  void fill(std::size_t n, bool required = true) {
    if (pos_ > 0) {
      std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
      end_ -= pos_;
      pos_ = 0;
    }
    if (buf_.size() < std::max(n, kChunk)) buf_.resize(std::max(n, kChunk) * 2);
    while (end_ < n || end_ < kChunk) {
      const ssize_t r = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      end_ += static_cast<std::size_t>(r);
    }
    if (required && end_ < n) bad(file_, "truncated");
  }
  int fd_;
  std::string file_;
  std::vector<unsigned char> buf_;
  std::size_t pos_ = 0, end_ = 0;
};

}  // namespace

IndexGitlinks read_gitlinks(const std::string& file, std::size_t hash_len) {
  IndexGitlinks out;
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return out;
    bad(file, std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    bad(file, "not a regular file");
  }
  if (st.st_size > (off_t(1) << 30)) {  // git's own limit is far below; a sparse decoy
    ::close(fd);
    bad(file, "larger than 1 GB");
  }
  Stream in(fd, file);
  const unsigned char* h = in.need(12);
  if (std::memcmp(h, "DIRC", 4) != 0) bad(file, "no index signature");
  const std::uint32_t version = be32(h + 4);
  if (version < 2 || version > 4) bad(file, "index version " + std::to_string(version));
  const std::uint32_t count = be32(h + 8);
  in.skip(12);
  const std::size_t fixed = 40 + hash_len + 2;  // stat data, hash, flags
  std::string prev;                             // v4: names are stored relative to the previous one
  for (std::uint32_t n = 0; n < count; ++n) {
    const unsigned char* e = in.need(fixed + 2);
    const bool gitlink = (be32(e + 24) & kTypeMask) == kGitlink;
    const std::uint16_t flags = be16(e + 40 + hash_len);
    std::size_t head = fixed;
    if (flags & 0x4000) {
      if (version < 3) bad(file, "extended flags in a version 2 index");
      head += 2;
    }
    if (version == 4) {
      in.skip(head);
      // varint: how many bytes to drop from the previous name, then the NUL-ended rest.
      const unsigned char* v = in.need(1);
      unsigned char c = *v;
      in.skip(1);
      std::size_t strip = c & 0x7f;
      while (c & 0x80) {
        if (strip > (SIZE_MAX >> 8)) bad(file, "bad name prefix");
        c = *in.need(1);
        in.skip(1);
        strip = ((strip + 1) << 7) | (c & 0x7f);
      }
      if (strip > prev.size()) bad(file, "bad name prefix");
      prev.resize(prev.size() - strip);
      in.append_until_nul(prev);
      if (gitlink) out.paths.push_back(prev);
    } else {
      std::size_t len = flags & 0x0fff;
      if (len == 0x0fff) {
        in.skip(head);
        std::string name;
        in.append_until_nul(name);
        len = name.size();
        if (gitlink) out.paths.push_back(name);
        // Padding: 1-8 NULs in all, one of which append_until_nul() took.
        in.skip(((head + len + 8) & ~std::size_t(7)) - head - len - 1);
        continue;
      }
      const std::size_t size = (head + len + 8) & ~std::size_t(7);  // padded with 1-8 NULs
      const unsigned char* whole = in.need(size);
      if (gitlink) out.paths.emplace_back(reinterpret_cast<const char*>(whole + head), len);
      in.skip(size);
    }
  }
  // Extensions: only `link` (split index) matters, for the shared part's entries. The
  // trailing checksum looks like a short extension and ends the loop.
  while (const unsigned char* x = in.want(8 + hash_len + 1)) {
    const std::uint32_t ext_size = be32(x + 4);
    if (std::memcmp(x, "link", 4) == 0 && ext_size >= hash_len) {
      const unsigned char* sha = in.need(8 + hash_len) + 8;
      static const char* hex = "0123456789abcdef";
      std::string name = "sharedindex.";
      for (std::size_t i = 0; i < hash_len; ++i) {
        name += hex[sha[i] >> 4];
        name += hex[sha[i] & 15];
      }
      out.shared_index = name;
    }
    in.skip(8);
    if (!in.want(ext_size)) break;
    in.skip(ext_size);
  }
  return out;
}

}  // namespace agent_boundary::git
