// A scratch directory tree for unit tests, under /var/tmp (never /tmp: sandboxes grant it),
// removed when the test ends.
#pragma once

#include <string>
#include <vector>

namespace agent_boundary::testing {

class TestWorld {
 public:
  TestWorld();
  ~TestWorld();
  TestWorld(const TestWorld&) = delete;
  TestWorld& operator=(const TestWorld&) = delete;

  const std::string& root() const { return root_; }
  std::string path(const std::string& rel) const { return root_ + "/" + rel; }
  // Create parents as needed.
  std::string dir(const std::string& rel) const;
  std::string file(const std::string& rel, const std::string& content = "x") const;
  std::string symlink(const std::string& rel, const std::string& target) const;

 private:
  std::string root_;
};

// Run /usr/bin/git in `cwd` with a fixed identity and default branch; a failure is
// reported as a test failure (with git's stderr).
void run_git(const std::string& cwd, std::vector<std::string> args);

}  // namespace agent_boundary::testing
