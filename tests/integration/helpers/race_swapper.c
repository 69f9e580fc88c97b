/* The attacker of tests/integration/test_file_tool_race.py: runs inside the boundary (a
 * background process started by an earlier shell call) and tries to make the harness's
 * in-process file tool, which runs outside, open something else than what the gate probed.
 *
 *   race_swapper MODE KIND DIR NAME TARGET STOPFILE
 *
 * MODE  inotify: wait for any access in DIR (the gate's probe), then swap at once, keep the
 *                swap for a moment, undo it;
 *       blind:   swap and undo in a tight loop.
 * KIND  file: DIR/NAME is a regular file, swapped for a symlink to TARGET (atomic rename);
 *       dir:  DIR/NAME does not exist (the tool's target is DIR/NAME/<leaf>); a symlink
 *             DIR/NAME -> TARGET appears and goes.
 * Ends when STOPFILE exists. Static and libc-only, so it runs in any backend's image. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char link_tmp[4096], file_tmp[4096], victim[4096];
static const char *target, *stopfile, *kind;
static char content[4096];
static size_t content_len;

static void pause_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static void swap_in(void) {
  if (strcmp(kind, "file") == 0) {
    unlink(link_tmp);
    if (symlink(target, link_tmp) == 0) rename(link_tmp, victim);
  } else {
    unlink(link_tmp);
    if (symlink(target, link_tmp) == 0 && rename(link_tmp, victim) != 0) unlink(link_tmp);
  }
}

static void swap_out(void) {
  if (strcmp(kind, "file") == 0) {
    int fd = open(file_tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    if (write(fd, content, content_len) < 0) { /* nothing to do */ }
    close(fd);
    rename(file_tmp, victim);
  } else {
    struct stat st;
    if (lstat(victim, &st) == 0 && S_ISLNK(st.st_mode)) unlink(victim);
  }
}

static const char *watched;

/* The stop file appeared, or the test world is gone. */
static int stopped(void) { return access(stopfile, F_OK) == 0 || access(watched, F_OK) != 0; }

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: race_swapper inotify|blind file|dir DIR NAME TARGET STOPFILE\n");
    return 2;
  }
  const char *mode = argv[1], *dir = argv[3], *name = argv[4];
  kind = argv[2];
  target = argv[5];
  stopfile = argv[6];
  watched = dir;
  snprintf(victim, sizeof victim, "%s/%s", dir, name);
  snprintf(link_tmp, sizeof link_tmp, "%s/.race-link", dir);
  snprintf(file_tmp, sizeof file_tmp, "%s/.race-file", dir);
  if (strcmp(kind, "file") == 0) {
    int fd = open(victim, O_RDONLY);
    if (fd < 0) return perror("open victim"), 1;
    ssize_t n = read(fd, content, sizeof content);
    close(fd);
    if (n < 0) return 1;
    content_len = (size_t)n;
  }
  char ready[4096];
  snprintf(ready, sizeof ready, "%s/.race-ready", dir);
  if (strcmp(mode, "blind") == 0) {
    close(open(ready, O_WRONLY | O_CREAT, 0644));
    for (unsigned long i = 0;; ++i) {
      if ((i & 15) == 0 && stopped()) break;
      swap_in();
      pause_us(50 + (long)(i % 7) * 40);
      swap_out();
      pause_us(50 + (long)(i % 5) * 40);
    }
    swap_out();
    unlink(ready);
    return 0;
  }
  int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (in < 0) return perror("inotify_init1"), 1;
  if (inotify_add_watch(in, dir, IN_OPEN | IN_ACCESS | IN_CLOSE | IN_CREATE | IN_DELETE) < 0)
    return perror("inotify_add_watch"), 1;
  close(open(ready, O_WRONLY | O_CREAT, 0644));
  char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
  while (!stopped()) {
    struct pollfd p = {in, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    int trigger = 0;
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
      for (char *q = buf; q < buf + n;) {
        const struct inotify_event *e = (const struct inotify_event *)q;
        if (!(e->len && strncmp(e->name, ".race-", 6) == 0)) trigger = 1;
        q += sizeof *e + e->len;
      }
    if (!trigger) continue;
    swap_in();
    pause_us(20000);  /* long enough for the tool's open right after the gate's answer */
    swap_out();
    pause_us(2000);
    while (read(in, buf, sizeof buf) > 0) {
    }  /* our own swap's events, and whatever came meanwhile */
  }
  swap_out();
  unlink(ready);
  return 0;
}
