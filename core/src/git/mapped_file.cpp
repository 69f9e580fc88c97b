#include "git/mapped_file.hpp"

#include <signal.h>
#include <sys/mman.h>

#include <cerrno>
#include <csetjmp>
#include <cstring>
#include <string>

#include "agent_boundary/error.hpp"

namespace agent_boundary::git {
namespace {

// The read in progress on this thread (SIGBUS is delivered to the thread that faulted).
struct ActiveRead {
  sigjmp_buf jump;
  const unsigned char* begin;
  const unsigned char* end;
};
thread_local ActiveRead* t_active = nullptr;

void on_sigbus(int sig, siginfo_t* info, void*) {
  ActiveRead* active = t_active;
  const auto* at = static_cast<const unsigned char*>(info->si_addr);
  if (active && at >= active->begin && at < active->end) siglongjmp(active->jump, 1);
  // Not a fault of ours: die of it as the process would have without this handler.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

MappedFile::MappedFile(int fd, std::size_t size, const char* file) : size_(size) {
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED)
    throw SystemError(std::string("cannot map ") + file + ": " + std::strerror(errno), file,
                      "check that the file system supports mmap");
  data_ = static_cast<const unsigned char*>(p);
  ::madvise(p, size, MADV_SEQUENTIAL);
}

MappedFile::~MappedFile() { ::munmap(const_cast<unsigned char*>(data_), size_); }

bool MappedFile::read(void (*fn)(void*, const unsigned char*, std::size_t), void* arg) const {
  // Put back the caller's handler, mask and read however this one ends: returning, the
  // longjmp (which lands in this frame) or an exception from `fn` (bad_alloc).
  struct Restore {
    struct sigaction handler {};
    sigset_t mask{};
    ActiveRead* outer = t_active;
    ~Restore() {
      t_active = outer;
      ::pthread_sigmask(SIG_SETMASK, &mask, nullptr);
      ::sigaction(SIGBUS, &handler, nullptr);
    }
  } restore;
  struct sigaction ours {};
  ours.sa_sigaction = on_sigbus;
  ours.sa_flags = SA_SIGINFO;
  sigemptyset(&ours.sa_mask);
  ::sigaction(SIGBUS, &ours, &restore.handler);
  // A blocked synchronous SIGBUS kills the process: make sure ours can run.
  sigset_t bus;
  sigemptyset(&bus);
  sigaddset(&bus, SIGBUS);
  ::pthread_sigmask(SIG_UNBLOCK, &bus, &restore.mask);

  ActiveRead active;
  active.begin = data_;
  active.end = data_ + size_;
  if (sigsetjmp(active.jump, 1) != 0) return false;
  t_active = &active;
  fn(arg, data_, size_);
  return true;
}

}  // namespace agent_boundary::git
