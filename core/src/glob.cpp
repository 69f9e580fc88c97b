#include "glob.hpp"

#include <dirent.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>

namespace agent_boundary {
namespace {

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : path) {
    if (c == '/') {
      if (!cur.empty()) parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  return parts;
}

std::string unescape(const std::string& part) {
  std::string out;
  for (std::size_t i = 0; i < part.size(); ++i) {
    if (part[i] == '\\' && i + 1 < part.size()) ++i;
    out += part[i];
  }
  return out;
}

std::string join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

bool exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

bool is_real_dir(const std::string& p) {  // a directory, not a symlink to one
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_dir_following(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

class Walker {
 public:
  Walker(std::vector<std::string> parts, std::size_t max_matches, std::size_t max_visits)
      : parts_(std::move(parts)), max_matches_(max_matches), max_visits_(max_visits) {}

  void walk(const std::string& dir, std::size_t i) {
    if (stopped()) return;
    if (i == parts_.size()) {
      if (out_.matches.size() >= max_matches_) {
        out_.truncated = true;
        return;
      }
      out_.matches.push_back(dir);
      return;
    }
    const std::string& part = parts_[i];
    if (part == "**") {
      walk(dir, i + 1);  // zero directories
      for (const auto& name : list(dir)) {
        const std::string child = join(dir, name);
        if (is_real_dir(child)) walk_double_star(child, i);
      }
      return;
    }
    if (!has_glob(part)) {
      const std::string child = join(dir, unescape(part));
      if (exists(child) && (i + 1 == parts_.size() || is_dir_following(child))) walk(child, i + 1);
      return;
    }
    for (const auto& name : list(dir)) {
      if (fnmatch(part.c_str(), name.c_str(), 0) != 0) continue;
      const std::string child = join(dir, name);
      if (i + 1 == parts_.size() || is_dir_following(child)) walk(child, i + 1);
    }
  }

  GlobResult take() {
    std::sort(out_.matches.begin(), out_.matches.end());
    out_.matches.erase(std::unique(out_.matches.begin(), out_.matches.end()), out_.matches.end());
    return std::move(out_);
  }

 private:
  // `dir` is inside a `**` at index i: it may end the `**` or descend further.
  void walk_double_star(const std::string& dir, std::size_t i) {
    ++depth_;
    if (!stopped() && depth_ <= 64) {
      walk(dir, i + 1);
      for (const auto& name : list(dir)) {
        const std::string child = join(dir, name);
        if (is_real_dir(child)) walk_double_star(child, i);
      }
    }
    --depth_;
  }

  std::vector<std::string> list(const std::string& dir) {
    std::vector<std::string> names;
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
    if (!d) return names;
    while (const dirent* e = ::readdir(d.get())) {
      if (++visits_ > max_visits_) {
        out_.truncated = true;
        break;
      }
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  bool stopped() const { return out_.truncated; }

  std::vector<std::string> parts_;
  std::size_t max_matches_;
  std::size_t max_visits_;
  std::size_t visits_ = 0;
  int depth_ = 0;
  GlobResult out_;
};

}  // namespace

bool has_glob(const std::string& pattern) {
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\')
      ++i;
    else if (pattern[i] == '*' || pattern[i] == '?' || pattern[i] == '[')
      return true;
  }
  return false;
}

GlobResult expand_glob(const std::string& pattern, std::size_t max_matches,
                       std::size_t max_visits) {
  std::vector<std::string> parts = split(pattern);
  // Start the walk at the literal prefix: the components before the first wildcard.
  std::string start = "/";
  std::size_t first = 0;
  while (first < parts.size() && !has_glob(parts[first]))
    start = join(start, unescape(parts[first++]));
  Walker walker({parts.begin() + static_cast<std::ptrdiff_t>(first), parts.end()}, max_matches,
                max_visits);
  if (first == parts.size()) {
    if (exists(start)) walker.walk(start, 0);
  } else if (is_dir_following(start)) {
    walker.walk(start, 0);
  }
  return walker.take();
}

}  // namespace agent_boundary
