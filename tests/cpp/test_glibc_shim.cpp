// cmake/glibc_2_28_shim.c, linked into this program as into the wheel's libraries when
// SPIRALTORCH_MANYLINUX is on: each replacement answers as the glibc function it stands for.
#include <gtest/gtest.h>

#ifdef SPIRALTORCH_TEST_GLIBC_SHIM
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <pthread.h>
#include <set>
#include <string>
#include <sys/stat.h>
#include <time.h>

extern "C" {
uint32_t arc4random(void);
long __isoc23_strtol(const char*, char**, int);
unsigned long long __isoc23_strtoull(const char*, char**, int);
int __isoc23_sscanf(const char*, const char*, ...);
int pthread_mutex_clocklock(pthread_mutex_t*, clockid_t, const struct timespec*);
}

namespace {

// Where the definition a call reaches lives: the shim's are in this program, not in libc/libm.
std::string defining_object(const void* symbol) {
  Dl_info info{};
  return dladdr(symbol, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "";
}

timespec after(clockid_t clock, std::chrono::milliseconds delay) {
  timespec now{};
  clock_gettime(clock, &now);
  const int64_t ns = int64_t(now.tv_sec) * 1'000'000'000 + now.tv_nsec + int64_t(delay.count()) * 1'000'000;
  return timespec{time_t(ns / 1'000'000'000), long(ns % 1'000'000'000)};
}

}  // namespace

TEST(GlibcShim, MathCallsReachTheShimAndMatchLibm) {
  double (*const shim_exp)(double) = &exp;
  EXPECT_EQ(defining_object(reinterpret_cast<const void*>(shim_exp)).find("libm"), std::string::npos);
  volatile double x = 0.7;  // volatile: a call, not a constant folded by the compiler
  EXPECT_DOUBLE_EQ(exp(x), 2.0137527074704766);
  EXPECT_DOUBLE_EQ(log(x), -0.35667494393873245);
  EXPECT_DOUBLE_EQ(log2(x), -0.5145731728297583);
  EXPECT_DOUBLE_EQ(pow(x, 3.5), 0.28697438910118783);
  EXPECT_DOUBLE_EQ(hypot(x, 2.4), 2.5);
}

TEST(GlibcShim, StatFamilyDescribesAFile) {
  const auto path = std::filesystem::temp_directory_path() / "spiraltorch_glibc_shim_stat.bin";
  std::ofstream(path, std::ios::binary) << std::string(1234, 'x');
  struct stat by_path{};
  struct stat by_link{};
  struct stat by_fd{};
  ASSERT_EQ(stat(path.c_str(), &by_path), 0);
  ASSERT_EQ(lstat(path.c_str(), &by_link), 0);
  FILE* file = std::fopen(path.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(fstat(fileno(file), &by_fd), 0);
  std::fclose(file);
  EXPECT_EQ(by_path.st_size, 1234);
  EXPECT_EQ(by_link.st_size, 1234);
  EXPECT_EQ(by_fd.st_size, 1234);
  EXPECT_EQ(by_path.st_ino, by_fd.st_ino);
  EXPECT_TRUE(S_ISREG(by_path.st_mode));
  EXPECT_EQ(std::filesystem::file_size(path), 1234u);  // libstdc++'s own stat calls
  struct stat missing{};
  EXPECT_EQ(stat("/nonexistent/spiraltorch", &missing), -1);
  EXPECT_EQ(errno, ENOENT);
  std::filesystem::remove(path);
}

TEST(GlibcShim, ClockWaitsTimeOutOnTheSteadyClock) {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
  ASSERT_EQ(pthread_mutex_lock(&mutex), 0);
  const auto start = std::chrono::steady_clock::now();
  const timespec deadline = after(CLOCK_MONOTONIC, std::chrono::milliseconds(60));
  EXPECT_EQ(pthread_cond_clockwait(&cond, &mutex, CLOCK_MONOTONIC, &deadline), ETIMEDOUT);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(55));
  EXPECT_LT(waited, std::chrono::seconds(5));
  const timespec past = after(CLOCK_MONOTONIC, std::chrono::milliseconds(0));
  EXPECT_EQ(pthread_cond_clockwait(&cond, &mutex, CLOCK_MONOTONIC, &past), ETIMEDOUT);
  ASSERT_EQ(pthread_mutex_unlock(&mutex), 0);

  // A held mutex: clocklock gives up at the deadline; a free one is taken at once.
  pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
  ASSERT_EQ(pthread_mutex_lock(&held), 0);
  pthread_t other{};
  ASSERT_EQ(pthread_create(&other, nullptr,
                           [](void* m) -> void* {
    const timespec soon = after(CLOCK_MONOTONIC, std::chrono::milliseconds(30));
    return reinterpret_cast<void*>(
        intptr_t(pthread_mutex_clocklock(static_cast<pthread_mutex_t*>(m), CLOCK_MONOTONIC, &soon)));
  }, &held),
            0);
  void* result = nullptr;
  ASSERT_EQ(pthread_join(other, &result), 0);
  EXPECT_EQ(intptr_t(result), ETIMEDOUT);
  ASSERT_EQ(pthread_mutex_unlock(&held), 0);
  const timespec soon = after(CLOCK_MONOTONIC, std::chrono::milliseconds(30));
  EXPECT_EQ(pthread_mutex_clocklock(&held, CLOCK_MONOTONIC, &soon), 0);
  ASSERT_EQ(pthread_mutex_unlock(&held), 0);
}

TEST(GlibcShim, RandomWordsDiffer) {
  std::set<uint32_t> words;
  for (int i = 0; i < 64; ++i) {
    words.insert(arc4random());
  }
  EXPECT_GT(words.size(), 60u);  // 64 draws of 32 bits: a repeat has probability ~5e-7
}

TEST(GlibcShim, C23ParsersReadAsTheC99Ones) {
  char* end = nullptr;
  EXPECT_EQ(__isoc23_strtol("  -0x1f tail", &end, 0), -31);
  EXPECT_STREQ(end, " tail");
  EXPECT_EQ(__isoc23_strtoull("18446744073709551615", nullptr, 10), 18446744073709551615ull);
  int a = 0;
  double b = 0;
  EXPECT_EQ(__isoc23_sscanf("12 2.5", "%d %lf", &a, &b), 2);
  EXPECT_EQ(a, 12);
  EXPECT_DOUBLE_EQ(b, 2.5);
}

TEST(GlibcShim, DynamicLoadingStillWorks) {
  void* handle = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto* cosine = reinterpret_cast<double (*)(double)>(dlsym(handle, "cos"));
  ASSERT_NE(cosine, nullptr);
  EXPECT_DOUBLE_EQ(cosine(0.0), 1.0);
  EXPECT_EQ(dlsym(handle, "no_such_symbol_here"), nullptr);
  EXPECT_NE(dlerror(), nullptr);
  dlclose(handle);
}

#else

TEST(GlibcShim, NotLinked) { GTEST_SKIP() << "built without SPIRALTORCH_MANYLINUX: the shim is not in this program"; }

#endif
