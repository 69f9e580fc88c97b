/* An LD_PRELOAD library for test_side_doors.py: every process that loads it appends
 * "<its executable>\t<its parent's executable>\n" to the file MARKER (compiled in), so the
 * test sees who loaded it. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static size_t exe_of(const char *link, char *out, size_t size) {
  ssize_t n = readlink(link, out, size);
  return n < 0 ? 0 : (size_t)n;
}

__attribute__((constructor)) static void mark(void) {
  char line[2 * PATH_MAX + 2], parent[64];
  size_t n = exe_of("/proc/self/exe", line, PATH_MAX);
  line[n++] = '\t';
  snprintf(parent, sizeof parent, "/proc/%d/exe", (int)getppid());
  n += exe_of(parent, line + n, PATH_MAX);
  line[n++] = '\n';
  int fd = open(MARKER, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd >= 0) {
    (void)!write(fd, line, n);
    close(fd);
  }
}
