/* An LD_PRELOAD library for test_side_doors.py: every process that loads it appends its
 * executable's path to the file MARKER (compiled in), so the test sees who loaded it. */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void mark(void) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 2);
  if (n < 0) n = 0;
  exe[n++] = '\n';
  int fd = open(MARKER, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd >= 0) {
    (void)!write(fd, exe, (size_t)n);
    close(fd);
  }
}
