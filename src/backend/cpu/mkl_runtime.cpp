#include "backend/cpu/mkl_runtime.h"

#include <dlfcn.h>
#include <omp.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include "core/shared_library.h"
#include "spiraltorch/error.h"

#ifndef SPIRALTORCH_MKL_LIBRARY_DIR_HINT
#define SPIRALTORCH_MKL_LIBRARY_DIR_HINT ""
#endif
#ifndef SPIRALTORCH_MKL_STATIC_REASON
#define SPIRALTORCH_MKL_STATIC_REASON ""
#endif

#ifdef SPIRALTORCH_MKL_STATIC
// MKL's own entry points, linked from its static archives (LP64 interface, GNU OpenMP threading
// layer, both chosen at link time); the CBLAS enumerations pass as int.
extern "C" {
void cblas_sgemm(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
void cblas_sgemm_batch_strided(int, int, int, int, int, int, float, const float*, int, int, const float*, int, int,
                               float, float*, int, int, int);
void cblas_dgemm_batch_strided(int, int, int, int, int, int, double, const double*, int, int, const double*, int, int,
                               double, double*, int, int, int);
int MKL_Set_Num_Threads_Local(int);
void MKL_Get_Version_String(char*, int);
}
#endif

namespace st::backend::cpu::mkl {
namespace {

// CBLAS enumerators as MKL (and every CBLAS) numbers them; passed as int through the C ABI.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
// mkl_service.h: MKL_THREADING_GNU, MKL_INTERFACE_LP64 (32-bit MKL_INT).
constexpr int kThreadingGnu = 3, kInterfaceLp64 = 0;

// MKL_INT is int under the LP64 interface: strides and the batch size too.
using SgemmStrided = void (*)(int, int, int, int, int, int, float, const float*, int, int, const float*, int, int,
                              float, float*, int, int, int);
using DgemmStrided = void (*)(int, int, int, int, int, int, double, const double*, int, int, const double*, int, int,
                              double, double*, int, int, int);
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Dgemm = void (*)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                       int);

struct Library {
  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
  SgemmStrided sgemm_strided = nullptr;
  DgemmStrided dgemm_strided = nullptr;
  int (*set_num_threads_local)(int) = nullptr;
  bool linked = false;  // MKL's static archives linked into this library, not libmkl_rt
  std::string path, version, reason;
};

const char* named_library() {
  const char* env = std::getenv("SPIRALTORCH_MKL_LIBRARY");
  return env && *env ? env : nullptr;
}

std::vector<std::string> candidates() {
  // An explicit file is the only candidate: a user who names one (or a bad one, to keep MKL out)
  // gets that or nothing.
  if (const char* env = named_library()) return {env};
  std::vector<std::string> out;
  std::vector<std::filesystem::path> dirs;
  // The installed module lives in <prefix>/lib/pythonX.Y/site-packages/spiraltorch/, and pip puts the
  // mkl wheel's libraries in <prefix>/lib/.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&candidates), &info) && info.dli_fname) {
    dirs.push_back(std::filesystem::path(info.dli_fname).parent_path().parent_path().parent_path().parent_path());
  }
  if (*SPIRALTORCH_MKL_LIBRARY_DIR_HINT) dirs.emplace_back(SPIRALTORCH_MKL_LIBRARY_DIR_HINT);
  for (const auto& d : dirs) {
    for (const char* name : {"libmkl_rt.so.3", "libmkl_rt.so.2"}) out.push_back((d / name).string());
  }
  out.emplace_back("libmkl_rt.so.3");
  out.emplace_back("libmkl_rt.so.2");
  return out;
}

// "Intel(R) oneAPI Math Kernel Library Version 2026.2-Product Build 20260915 ..." -> "2026.2"
std::string version_of(void (*get_version)(char*, int)) {
  char text[256] = {};
  get_version(text, static_cast<int>(sizeof text) - 1);
  const std::string full(text);
  const size_t at = full.find("Version ");
  return at == std::string::npos ? full : full.substr(at + 8, full.find_first_of("- ", at + 8) - (at + 8));
}

const Library& library() {
  static std::once_flag once;
  static Library lib;
  std::call_once(once, [] {
#ifdef SPIRALTORCH_MKL_STATIC
    // The linked copy unless the user names a file to load instead (or a missing one, to keep MKL out).
    if (!named_library()) {
      lib.sgemm = cblas_sgemm;
      lib.dgemm = cblas_dgemm;
      lib.sgemm_strided = cblas_sgemm_batch_strided;
      lib.dgemm_strided = cblas_dgemm_batch_strided;
      lib.set_num_threads_local = MKL_Set_Num_Threads_Local;
      lib.linked = true;
      lib.version = version_of(MKL_Get_Version_String);
      return;
    }
#endif
    // MKL's GNU threading layer calls GOMP_* from the process's libgomp, which this library
    // loaded as its own dependency (not in the global scope when Python loaded the module
    // with RTLD_LOCAL): promote it so MKL's layer resolves to the same OpenMP runtime.
    dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    const detail::OpenedLibrary opened = detail::open_first(candidates());
    void* const handle = opened.handle;
    if (!handle) {
      lib.reason =
          std::string(*SPIRALTORCH_MKL_STATIC_REASON ? "not linked: " SPIRALTORCH_MKL_STATIC_REASON "; " : "") +
          "libmkl_rt could not be loaded (pip install mkl, or set SPIRALTORCH_MKL_LIBRARY)" +
          (opened.tried.empty() ? std::string() : "; tried:" + opened.tried);
      return;
    }
    lib.path = opened.path;
    auto sym = [&](const char* name) {
      void* p = dlsym(handle, name);
      if (!p && lib.reason.empty()) lib.reason = "libmkl_rt at " + lib.path + " lacks the symbol " + name;
      return p;
    };
    auto set_threading = reinterpret_cast<int (*)(int)>(sym("MKL_Set_Threading_Layer"));
    auto set_interface = reinterpret_cast<int (*)(int)>(sym("MKL_Set_Interface_Layer"));
    auto get_version = reinterpret_cast<void (*)(char*, int)>(sym("MKL_Get_Version_String"));
    lib.sgemm = reinterpret_cast<Sgemm>(sym("cblas_sgemm"));
    lib.dgemm = reinterpret_cast<Dgemm>(sym("cblas_dgemm"));
    lib.sgemm_strided = reinterpret_cast<SgemmStrided>(sym("cblas_sgemm_batch_strided"));
    lib.dgemm_strided = reinterpret_cast<DgemmStrided>(sym("cblas_dgemm_batch_strided"));
    lib.set_num_threads_local = reinterpret_cast<int (*)(int)>(sym("MKL_Set_Num_Threads_Local"));
    if (!lib.reason.empty()) return;
    // Both layers must be chosen before MKL's first computation. A user's MKL_THREADING_LAYER wins.
    set_interface(kInterfaceLp64);
    const char* layer = std::getenv("MKL_THREADING_LAYER");
    if (layer == nullptr || *layer == '\0') set_threading(kThreadingGnu);
    lib.version = version_of(get_version);
  });
  return lib;
}

int checked_int(int64_t v, const char* what, int64_t m, int64_t n, int64_t k) {
  if (v < 0 || v > INT_MAX) {
    throw ValueError("gemm (MKL, 32-bit indices): " + std::string(what) + " = " + std::to_string(v) +
                     " exceeds 2^31-1 (m=" + std::to_string(m) + ", n=" + std::to_string(n) +
                     ", k=" + std::to_string(k) + ")");
  }
  return static_cast<int>(v);
}

}  // namespace

bool available() { return library().reason.empty(); }
std::string version() { return available() ? library().version : std::string(); }
std::string library_path() { return available() ? library().path : std::string(); }
bool linked_statically() { return library().linked; }
std::string unavailable_reason() { return library().reason; }

void gemm(bool f64, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
          int64_t sa, const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc, int64_t sc,
          int64_t batch) {
  const Library& lib = library();
  if (!lib.reason.empty()) throw DeviceUnavailableError("gemm: MKL is not available: " + lib.reason);
  const int M = checked_int(m, "m", m, n, k), N = checked_int(n, "n", m, n, k), K = checked_int(k, "k", m, n, k);
  const int LA = checked_int(lda, "lda", m, n, k), LB = checked_int(ldb, "ldb", m, n, k);
  const int LC = checked_int(ldc, "ldc", m, n, k), B = checked_int(batch, "batch", m, n, k);
  // One strided-batch call when every operand advances; a shared operand (stride 0) walks the batch.
  const bool strided = B > 1 && sa > 0 && sb > 0 && sc > 0;
  const int SA = strided ? checked_int(sa, "stride_a", m, n, k) : 0;
  const int SB = strided ? checked_int(sb, "stride_b", m, n, k) : 0;
  const int SC = strided ? checked_int(sc, "stride_c", m, n, k) : 0;
  // Follows set_num_threads, and one thread inside an outer parallel region; MKL's setting is per
  // thread, so each thread remembers what it last asked for.
  thread_local int threads_set = 0;
  if (const int want = omp_in_parallel() ? 1 : omp_get_max_threads(); want != threads_set) {
    lib.set_num_threads_local(want);
    threads_set = want;
  }
  const int TA = ta ? kTrans : kNoTrans, TB = tb ? kTrans : kNoTrans;
  if (f64) {
    const auto* A = static_cast<const double*>(a);
    const auto* Bm = static_cast<const double*>(b);
    auto* C = static_cast<double*>(c);
    if (strided) {
      lib.dgemm_strided(kRowMajor, TA, TB, M, N, K, alpha, A, LA, SA, Bm, LB, SB, beta, C, LC, SC, B);
    } else {
      for (int64_t i = 0; i < batch; ++i) {
        lib.dgemm(kRowMajor, TA, TB, M, N, K, alpha, A + i * sa, LA, Bm + i * sb, LB, beta, C + i * sc, LC);
      }
    }
  } else {
    const auto* A = static_cast<const float*>(a);
    const auto* Bm = static_cast<const float*>(b);
    auto* C = static_cast<float*>(c);
    const auto al = static_cast<float>(alpha), be = static_cast<float>(beta);
    if (strided) {
      lib.sgemm_strided(kRowMajor, TA, TB, M, N, K, al, A, LA, SA, Bm, LB, SB, be, C, LC, SC, B);
    } else {
      for (int64_t i = 0; i < batch; ++i) {
        lib.sgemm(kRowMajor, TA, TB, M, N, K, al, A + i * sa, LA, Bm + i * sb, LB, be, C + i * sc, LC);
      }
    }
  }
}

}  // namespace st::backend::cpu::mkl
