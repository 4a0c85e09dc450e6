#include "backend/cpu/gemm_library.h"

#include <atomic>
#include <cstdlib>
#include <optional>

#include "backend/cpu/mkl_runtime.h"
#include "backend/cpu/conv_onednn.h"
#include "backend/cpu/matmul_onednn.h"
#include "spiraltorch/error.h"

namespace st::backend::cpu {
namespace {

enum Mode : int { kAuto = 0, kOpenBlas = 1, kOneDNN = 2, kMkl = 3 };
constexpr const char* kChoices = "'auto', 'openblas', 'onednn' or 'mkl'";

std::optional<Mode> parse(const std::string& s) {
  if (s == "auto") return kAuto;
  if (s == "openblas") return kOpenBlas;
  if (s == "onednn") return kOneDNN;
  if (s == "mkl") return kMkl;
  return std::nullopt;
}

// A forced library must be there: the error says which and why not.
void require(Mode m, const std::string& who) {
  if (m == kOneDNN && !backend::onednn::version()) {
    throw DeviceUnavailableError(who + "onednn, but oneDNN is not available: " + backend::onednn::unavailable_reason());
  }
  if (m == kMkl && !mkl::available()) {
    throw DeviceUnavailableError(who + "mkl, but MKL is not available: " + mkl::unavailable_reason());
  }
}

std::atomic<int> g_mode{-1};  // -1 until SPIRALTORCH_GEMM_BACKEND has been read

// Read by the first GEMM, so a bad value is reported there rather than at import time.
Mode mode() {
  const int m = g_mode.load(std::memory_order_relaxed);
  if (m >= 0) return static_cast<Mode>(m);
  Mode from_env = kAuto;
  if (const char* v = std::getenv("SPIRALTORCH_GEMM_BACKEND"); v && *v) {
    const std::optional<Mode> parsed = parse(v);
    if (!parsed) {
      throw ValueError(std::string("matmul: SPIRALTORCH_GEMM_BACKEND must be ") + kChoices + ", got '" + v + "'");
    }
    require(*parsed, "matmul: SPIRALTORCH_GEMM_BACKEND=");
    from_env = *parsed;
  }
  int expected = -1;
  g_mode.compare_exchange_strong(expected, from_env);
  return static_cast<Mode>(g_mode.load());
}

}  // namespace

const char* gemm_library_name(GemmLibrary lib) {
  switch (lib) {
    case GemmLibrary::OneDNN:
      return "onednn";
    case GemmLibrary::Mkl:
      return "mkl";
    default:
      return "openblas";
  }
}

bool cpu_is_intel() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_is("intel");
#else
  return false;
#endif
}

GemmLibrary f32_gemm_library(int64_t m, int64_t n, int64_t k, int64_t batch) {
  switch (mode()) {
    case kOpenBlas:
      return GemmLibrary::OpenBlas;
    case kOneDNN:
      return GemmLibrary::OneDNN;
    case kMkl:
      return GemmLibrary::Mkl;
    default:
      break;
  }
  const double work =
      static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
  if (work < kGemmSmallWork) return GemmLibrary::OpenBlas;
  static const bool intel_mkl = cpu_is_intel() && mkl::available();
  if (intel_mkl) return GemmLibrary::Mkl;
  static const bool onednn = backend::onednn::version().has_value();
  if (!onednn) return GemmLibrary::OpenBlas;
  static const bool amx = backend::onednn::effective_isa().find("amx") != std::string::npos;
  return amx && work >= kAmxOpenBlasMinWork ? GemmLibrary::OpenBlas : GemmLibrary::OneDNN;
}

GemmLibrary f64_gemm_library() { return mode() == kMkl ? GemmLibrary::Mkl : GemmLibrary::OpenBlas; }

std::string gemm_backend() {
  switch (mode()) {
    case kOpenBlas:
      return "openblas";
    case kOneDNN:
      return "onednn";
    case kMkl:
      return "mkl";
    default:
      return "auto";
  }
}

void set_gemm_backend(const std::string& name) {
  const std::optional<Mode> m = parse(name);
  if (!m) throw ValueError(std::string("set_gemm_backend: expected ") + kChoices + ", got '" + name + "'");
  require(*m, "set_gemm_backend: ");
  g_mode.store(*m);
}

}  // namespace st::backend::cpu
