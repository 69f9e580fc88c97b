/* Side-door probes for test_side_doors.py, built static so it runs on every backend
 * (the devcontainer image has no compiler nor Python).
 *   side_doors connect PATH   connect to a Unix socket, print what it answers (exit 0), or
 *                             "connect: <error>" (exit 1)
 *   side_doors local DIR      a server of its own in DIR plus a socketpair: "LOCAL-OK"
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int connect_to(const char *path) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    printf("connect: %s\n", strerror(errno));
    return -1;
  }
  return fd;
}

static int do_connect(const char *path) {
  int fd = connect_to(path);
  if (fd < 0) return 1;
  char buf[256];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  if (n < 0) n = 0;
  buf[n] = 0;
  printf("%s\n", buf);
  return 0;
}

static int do_local(const char *dir) {
  char path[108];
  snprintf(path, sizeof path, "%s/side-doors-local.sock", dir);
  unlink(path);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  int srv = socket(AF_UNIX, SOCK_STREAM, 0);
  if (srv < 0 || bind(srv, (struct sockaddr *)&a, sizeof a) != 0 || listen(srv, 1) != 0) {
    printf("server: %s\n", strerror(errno));
    return 1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    int c = accept(srv, NULL, NULL);
    (void)!write(c, "LOCAL", 5);
    _exit(0);
  }
  int fd = connect_to(path);
  char buf[16] = {0};
  if (fd < 0 || read(fd, buf, 5) != 5 || strcmp(buf, "LOCAL") != 0) return 1;
  waitpid(pid, NULL, 0);
  unlink(path);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
    printf("socketpair: %s\n", strerror(errno));
    return 1;
  }
  memset(buf, 0, sizeof buf);
  if (write(sv[0], "PAIR", 4) != 4 || read(sv[1], buf, 4) != 4 || strcmp(buf, "PAIR") != 0)
    return 1;
  printf("LOCAL-OK\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "connect") == 0) return do_connect(argv[2]);
  if (argc == 3 && strcmp(argv[1], "local") == 0) return do_local(argv[2]);
  fprintf(stderr, "usage: side_doors connect PATH | local DIR\n");
  return 2;
}
