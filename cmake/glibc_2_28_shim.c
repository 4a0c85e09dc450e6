/* Lets a library built against a newer glibc (Debian 12: 2.36) load on glibc 2.28, the floor of
 * the manylinux_2_28 wheel tag (cmake/SpiralManylinux.cmake links it, with libstdc++ static, into
 * libspiraltorch.so and the Python module).
 *
 * The linker binds an unversioned reference to the newest version of a symbol. Each definition
 * below is hidden, so the references of the library's own objects and of the static libstdc++
 * resolve to it at link time, and it calls:
 *  - the symbol's 2.28-era version, where glibc kept one under an older version (math functions
 *    given new versions in 2.29/2.35, pthread/dl functions moved into libc in 2.34), or
 *  - an equivalent built from 2.28 functions, where the symbol is newer than 2.28.
 * Which symbols: `objdump -T` of the unshimmed library, every version above GLIBC_2.28;
 * the test command's `auditwheel show` fails the build when a new one appears. */

#define _POSIX_C_SOURCE 200809L  /* clockid_t, clock_gettime */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define HIDDEN __attribute__((visibility("hidden")))

/* OLD(f, version, symbol): references to f are references to symbol@version.
 * FORWARD_TO defines NAME (hidden) as a call of TARGET@VERSION; FORWARD is NAME@VERSION itself. */
#define OLD(name, version, symbol) __asm__(".symver " #name ", " symbol "@" version)
#define FORWARD_TO(ret, name, target, version, params, args) \
  extern ret old_##name params;                              \
  OLD(old_##name, version, #target);                         \
  HIDDEN ret name params { return old_##name args; }
#define FORWARD(ret, name, version, params, args) FORWARD_TO(ret, name, name, version, params, args)

/* libm: new implementations in 2.29 (exp, log, pow, log2) and 2.35 (hypot). */
FORWARD(double, exp, "GLIBC_2.2.5", (double x), (x))
FORWARD(double, log, "GLIBC_2.2.5", (double x), (x))
FORWARD(double, log2, "GLIBC_2.2.5", (double x), (x))
FORWARD(double, pow, "GLIBC_2.2.5", (double x, double y), (x, y))
FORWARD(double, hypot, "GLIBC_2.2.5", (double x, double y), (x, y))

/* libpthread and libdl merged into libc in 2.34; on 2.28 these versions live in libpthread.so.0
 * and libdl.so.2, which the shimmed library names as needed. Opaque pointers stand for the
 * pthread and dl types: only the calling convention matters here. */
typedef void* (*thread_start)(void*);
typedef void (*key_destructor)(void*);
FORWARD(int, pthread_create, "GLIBC_2.2.5", (void* t, const void* attr, thread_start f, void* arg), (t, attr, f, arg))
FORWARD(int, pthread_join, "GLIBC_2.2.5", (unsigned long t, void** ret), (t, ret))
FORWARD(int, pthread_detach, "GLIBC_2.2.5", (unsigned long t), (t))
FORWARD(int, pthread_once, "GLIBC_2.2.5", (int* once, void (*f)(void)), (once, f))
FORWARD(int, pthread_key_create, "GLIBC_2.2.5", (unsigned* key, key_destructor d), (key, d))
FORWARD(int, __pthread_key_create, "GLIBC_2.2.5", (unsigned* key, key_destructor d), (key, d))
FORWARD(int, pthread_key_delete, "GLIBC_2.2.5", (unsigned key), (key))
FORWARD(void*, pthread_getspecific, "GLIBC_2.2.5", (unsigned key), (key))
FORWARD(int, pthread_setspecific, "GLIBC_2.2.5", (unsigned key, const void* v), (key, v))
FORWARD(int, pthread_rwlock_rdlock, "GLIBC_2.2.5", (void* l), (l))
FORWARD(int, pthread_rwlock_wrlock, "GLIBC_2.2.5", (void* l), (l))
FORWARD(int, pthread_rwlock_unlock, "GLIBC_2.2.5", (void* l), (l))
FORWARD(int, pthread_setname_np, "GLIBC_2.12", (unsigned long t, const char* name), (t, name))
FORWARD(void*, dlopen, "GLIBC_2.2.5", (const char* file, int mode), (file, mode))
FORWARD(void*, dlsym, "GLIBC_2.2.5", (void* handle, const char* name), (handle, name))
FORWARD(char*, dlerror, "GLIBC_2.2.5", (void), ())
FORWARD(int, dlclose, "GLIBC_2.2.5", (void* handle), (handle))
FORWARD(int, dladdr, "GLIBC_2.2.5", (const void* addr, void* info), (addr, info))

/* stat and friends became symbols in 2.33; before, <sys/stat.h> called __xstat with the
 * structure version (1 on x86-64). */
enum { stat_version = 1 };
extern int old_xstat(int ver, const char* path, void* buf);
OLD(old_xstat, "GLIBC_2.2.5", "__xstat");
extern int old_lxstat(int ver, const char* path, void* buf);
OLD(old_lxstat, "GLIBC_2.2.5", "__lxstat");
extern int old_fxstat(int ver, int fd, void* buf);
OLD(old_fxstat, "GLIBC_2.2.5", "__fxstat");
extern int old_fxstat64(int ver, int fd, void* buf);
OLD(old_fxstat64, "GLIBC_2.2.5", "__fxstat64");
HIDDEN int stat(const char* path, void* buf) { return old_xstat(stat_version, path, buf); }
HIDDEN int lstat(const char* path, void* buf) { return old_lxstat(stat_version, path, buf); }
HIDDEN int fstat(int fd, void* buf) { return old_fxstat(stat_version, fd, buf); }
HIDDEN int fstat64(int fd, void* buf) { return old_fxstat64(stat_version, fd, buf); }

/* 2.32: libstdc++ skips atomic reference counts while this is nonzero; zero keeps them atomic,
 * which is always correct. */
HIDDEN char __libc_single_threaded = 0;

/* 2.30: the *clock* waits (std::condition_variable and std::timed_mutex on the steady clock).
 * Without them, the deadline moves to the realtime clock the 2.28 functions measure. */
static int realtime_deadline(clockid_t clock, const struct timespec* abstime, struct timespec* out) {
  struct timespec now_clock;
  struct timespec now_real;
  if (clock_gettime(clock, &now_clock) != 0 || clock_gettime(CLOCK_REALTIME, &now_real) != 0) {
    return EINVAL;
  }
  const int64_t billion = 1000000000;
  int64_t remaining = (int64_t)(abstime->tv_sec - now_clock.tv_sec) * billion + (abstime->tv_nsec - now_clock.tv_nsec);
  if (remaining < 0) {
    remaining = 0;
  }
  const int64_t deadline = (int64_t)now_real.tv_sec * billion + now_real.tv_nsec + remaining;
  out->tv_sec = (time_t)(deadline / billion);
  out->tv_nsec = (long)(deadline % billion);
  return 0;
}
extern int old_cond_timedwait(void* cond, void* mutex, const struct timespec* abstime);
OLD(old_cond_timedwait, "GLIBC_2.3.2", "pthread_cond_timedwait");
HIDDEN int pthread_cond_clockwait(void* cond, void* mutex, clockid_t clock, const struct timespec* abstime) {
  struct timespec deadline = *abstime;
  const int err = clock == CLOCK_REALTIME ? 0 : realtime_deadline(clock, abstime, &deadline);
  return err != 0 ? err : old_cond_timedwait(cond, mutex, &deadline);
}
extern int old_mutex_timedlock(void* mutex, const struct timespec* abstime);
OLD(old_mutex_timedlock, "GLIBC_2.2.5", "pthread_mutex_timedlock");
HIDDEN int pthread_mutex_clocklock(void* mutex, clockid_t clock, const struct timespec* abstime) {
  struct timespec deadline = *abstime;
  const int err = clock == CLOCK_REALTIME ? 0 : realtime_deadline(clock, abstime, &deadline);
  return err != 0 ? err : old_mutex_timedlock(mutex, &deadline);
}

/* 2.38 (GPU hosts build on glibc 2.39): in C++ (_GNU_SOURCE) the headers redirect the strtol family
 * and sscanf to C23 versions that also read a "0b" prefix. The 2.28 versions differ only there. */
FORWARD_TO(long, __isoc23_strtol, strtol, "GLIBC_2.2.5", (const char* s, char** end, int base), (s, end, base))
FORWARD_TO(unsigned long, __isoc23_strtoul, strtoul, "GLIBC_2.2.5", (const char* s, char** end, int base), (s, end, base))
FORWARD_TO(long long, __isoc23_strtoll, strtoll, "GLIBC_2.2.5", (const char* s, char** end, int base), (s, end, base))
FORWARD_TO(unsigned long long, __isoc23_strtoull, strtoull, "GLIBC_2.2.5", (const char* s, char** end, int base), (s, end, base))
extern int old_vsscanf(const char* s, const char* format, va_list args);
OLD(old_vsscanf, "GLIBC_2.7", "__isoc99_vsscanf");
HIDDEN int __isoc23_vsscanf(const char* s, const char* format, va_list args) { return old_vsscanf(s, format, args); }
HIDDEN int __isoc23_sscanf(const char* s, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int n = old_vsscanf(s, format, args);
  va_end(args);
  return n;
}

/* 2.36: std::random_device's default source. getrandom (2.25) gives the same kernel entropy. */
extern long old_getrandom(void* buf, size_t n, unsigned flags);
OLD(old_getrandom, "GLIBC_2.25", "getrandom");
HIDDEN uint32_t arc4random(void) {
  uint32_t value = 0;
  size_t got = 0;
  while (got < sizeof value) {
    const long n = old_getrandom((char*)&value + got, sizeof value - got, 0);
    if (n > 0) {
      got += (size_t)n;
    } else if (n < 0 && errno != EINTR) {
      break;
    }
  }
  return value;
}
