// stampshim: an LD_PRELOAD library that tells, for any proxy between bench/churn/backend.mjs and a
// client, how late each content event is when the proxy reads it and when the proxy's write of it
// returns, measured from the backend's own stamp ("tg_sent_ns":"<CLOCK_MONOTONIC ns>" in the
// event). It wraps libc's recv, recvfrom, read, send, sendto, write and writev; a buffer that
// holds one or more stamps adds each one's lateness to a histogram. The same library goes into
// nginx and the JVM alike (Netty's native transport calls the same libc functions), so the two
// proxies are split into the same stages by the same clock at the cost of a memmem per call.
//
//   STAMPSHIM_FILE=/tmp/x.hist LD_PRELOAD=bench/stampshim/stampshim.so nginx ...
//
// The histograms live in STAMPSHIM_FILE (mmap'd, shared by every process of the proxy, counters
// updated atomically): 2 x BUCKETS little-endian uint64, 1 µs buckets, the last one "or more";
// row 0 = read, row 1 = written. Copy the file before and after a window and subtract
// (bench/stampshim/stages.py). Build: cc -O2 -shared -fPIC -o stampshim.so stampshim.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BUCKETS 20000
static const char KEY[] = "\"tg_sent_ns\":\"";
static uint64_t *hist = (uint64_t *) 0;
static int ready = 0;

static ssize_t (*real_recv)(int, void *, size_t, int);
static ssize_t (*real_recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_send)(int, const void *, size_t, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);

__attribute__((constructor)) static void init(void) {
  real_recv = dlsym(RTLD_NEXT, "recv");
  real_recvfrom = dlsym(RTLD_NEXT, "recvfrom");
  real_read = dlsym(RTLD_NEXT, "read");
  real_send = dlsym(RTLD_NEXT, "send");
  real_sendto = dlsym(RTLD_NEXT, "sendto");
  real_write = dlsym(RTLD_NEXT, "write");
  real_writev = dlsym(RTLD_NEXT, "writev");
  const char *path = getenv("STAMPSHIM_FILE");
  if (path == NULL) return;
  int fd = open(path, O_RDWR | O_CREAT, 0644);
  if (fd < 0) return;
  size_t size = 2 * BUCKETS * sizeof(uint64_t);
  if (ftruncate(fd, size) != 0) { close(fd); return; }
  void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return;
  hist = m;
  ready = 1;
}

static void note(int row, const char *buf, size_t len) {
  if (!ready || len < sizeof(KEY)) return;
  uint64_t now = 0;  // read once, at the first stamp: a call without one costs only the memmem
  const char *p = buf, *end = buf + len;
  while (p < end) {
    const char *k = memmem(p, (size_t) (end - p), KEY, sizeof(KEY) - 1);
    if (k == NULL) return;
    if (now == 0) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      now = (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
    }
    const char *d = k + sizeof(KEY) - 1;
    uint64_t stamp = 0;
    int digits = 0;
    while (d < end && *d >= '0' && *d <= '9') { stamp = stamp * 10 + (uint64_t) (*d - '0'); d++; digits++; }
    if (d < end && *d == '"' && digits > 0 && stamp <= now) {
      uint64_t us = (now - stamp) / 1000;
      if (us >= BUCKETS) us = BUCKETS - 1;
      __atomic_fetch_add(&hist[row * BUCKETS + us], 1, __ATOMIC_RELAXED);
    }
    p = d;
  }
}

ssize_t recv(int fd, void *buf, size_t n, int flags) {
  ssize_t r = real_recv(fd, buf, n, flags);
  if (r > 0) note(0, buf, (size_t) r);
  return r;
}

ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *a, socklen_t *l) {
  ssize_t r = real_recvfrom(fd, buf, n, flags, a, l);
  if (r > 0) note(0, buf, (size_t) r);
  return r;
}

ssize_t read(int fd, void *buf, size_t n) {
  ssize_t r = real_read(fd, buf, n);
  if (r > 0) note(0, buf, (size_t) r);
  return r;
}

ssize_t send(int fd, const void *buf, size_t n, int flags) {
  ssize_t r = real_send(fd, buf, n, flags);
  if (r > 0) note(1, buf, (size_t) r);
  return r;
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *a, socklen_t l) {
  ssize_t r = real_sendto(fd, buf, n, flags, a, l);
  if (r > 0) note(1, buf, (size_t) r);
  return r;
}

ssize_t write(int fd, const void *buf, size_t n) {
  ssize_t r = real_write(fd, buf, n);
  if (r > 0) note(1, buf, (size_t) r);
  return r;
}

ssize_t writev(int fd, const struct iovec *iov, int count) {
  ssize_t r = real_writev(fd, iov, count);
  if (r > 0) {
    size_t left = (size_t) r;
    for (int i = 0; i < count && left > 0; i++) {
      size_t len = iov[i].iov_len < left ? iov[i].iov_len : left;
      note(1, iov[i].iov_base, len);
      left -= len;
    }
  }
  return r;
}
