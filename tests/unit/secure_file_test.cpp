#include "secure_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>

#include "test_world.hpp"

namespace fs = std::filesystem;

namespace agent_boundary {
namespace {

using testing::TestWorld;

mode_t mode_of(const std::string& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_mode & 07777;
}

TEST(SecureFile, AtomicReplaceIsPrivateAndLeavesNoTemp) {
  TestWorld w;
  const mode_t old_umask = ::umask(0);  // even with a permissive umask
  const std::string f = w.path("secret.env");
  write_file_atomic(f, "one");
  write_file_atomic(f, "two");
  ::umask(old_umask);
  EXPECT_EQ(*read_file(f), "two");
  EXPECT_EQ(mode_of(f), 0600u);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(w.root())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(SecureFile, PrivateDirsAndMissingFiles) {
  TestWorld w;
  make_private_dirs(w.path("a/b/c"));
  EXPECT_EQ(mode_of(w.path("a")), 0700u);
  EXPECT_EQ(mode_of(w.path("a/b/c")), 0700u);
  EXPECT_FALSE(read_file(w.path("nope")));
  w.file("big", std::string(100, 'x'));
  EXPECT_THROW(read_file(w.path("big"), 10), std::exception);
}

TEST(SecureFile, DoesNotWriteThroughASymlinkedTemp) {
  TestWorld w;
  // The final name may be a symlink planted by someone else; rename replaces the link
  // itself and never writes into its target.
  const std::string target = w.file("target", "keep");
  w.symlink("out", target);
  write_file_atomic(w.path("out"), "new");
  EXPECT_EQ(*read_file(target), "keep");
  EXPECT_EQ(*read_file(w.path("out")), "new");
}

}  // namespace
}  // namespace agent_boundary
