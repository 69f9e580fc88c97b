/* no_landlock: run a command with Landlock made unavailable, as on a kernel without it.
 *
 *   no_landlock CMD [ARGS...]
 *
 * Installs a seccomp filter (after PR_SET_NO_NEW_PRIVS, so no privilege is needed) that
 * makes landlock_create_ruleset, landlock_add_rule and landlock_restrict_self fail with
 * ENOSYS, then execv()s CMD. Every other syscall is allowed. The filter is inherited by
 * all children, so nothing below CMD can use Landlock either. Used by the integration
 * tests to check agent-boundary's "Landlock unavailable" diagnosis.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

#if defined(__x86_64__)
#define AUDIT_ARCH_CURRENT AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define AUDIT_ARCH_CURRENT AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define AUDIT_ARCH_CURRENT AUDIT_ARCH_I386
#elif defined(__riscv) && __riscv_xlen == 64
#define AUDIT_ARCH_CURRENT AUDIT_ARCH_RISCV64
#else
#error "no_landlock: unsupported architecture"
#endif

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CMD [ARGS...]\n", argv[0]);
    return 2;
  }
  struct sock_filter filter[] = {
      /* A foreign architecture's syscall numbers mean something else: kill. */
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_CURRENT, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_landlock_create_ruleset, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_landlock_add_rule, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_landlock_restrict_self, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
  };
  struct sock_fprog prog = {
      .len = (unsigned short)(sizeof filter / sizeof filter[0]),
      .filter = filter,
  };
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    perror("no_landlock: prctl(PR_SET_NO_NEW_PRIVS)");
    return 125;
  }
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    perror("no_landlock: prctl(PR_SET_SECCOMP)");
    return 125;
  }
  execv(argv[1], argv + 1);
  fprintf(stderr, "no_landlock: cannot run %s: %s\n", argv[1], strerror(errno));
  return 127;
}
