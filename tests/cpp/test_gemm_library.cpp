// The CPU GEMM's library choice (backend/cpu/gemm_library.h) and Intel MKL through it
// (backend/cpu/mkl_runtime.h): every library gives the products a plain float64 loop gives,
// for transposes, alpha/beta, leading dimensions and batches with a shared operand.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/gemm_library.h"
#include "backend/cpu/mkl_runtime.h"
#include "backend/cpu/conv_onednn.h"
#include "spiraltorch/error.h"

using namespace st;

namespace {

// Restores the switch a test changed.
struct BackendGuard {
  std::string saved = backend::cpu::gemm_backend();
  ~BackendGuard() { backend::cpu::set_gemm_backend(saved); }
};

template <typename T>
std::vector<T> random_vec(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> d;
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(gen));
  return v;
}

// C[b] = alpha op(A[b]) op(B[b]) + beta C[b] in float64, with the backend entry's layout.
template <typename T>
std::vector<double> reference(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const std::vector<T>& a,
                              int64_t lda, int64_t sa, const std::vector<T>& b, int64_t ldb, int64_t sb, double beta,
                              const std::vector<T>& c0, int64_t ldc, int64_t sc, int64_t batch) {
  std::vector<double> c(c0.begin(), c0.end());
  for (int64_t q = 0; q < batch; ++q) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double av = ta ? a[q * sa + p * lda + i] : a[q * sa + i * lda + p];
          const double bv = tb ? b[q * sb + j * ldb + p] : b[q * sb + p * ldb + j];
          acc += av * bv;
        }
        double& out = c[q * sc + i * ldc + j];
        out = alpha * acc + beta * out;
      }
    }
  }
  return c;
}

template <typename T>
void check_library(const std::string& library, Dtype dtype, double tol) {
  BackendGuard guard;
  backend::cpu::set_gemm_backend(library);
  struct Case {
    bool ta, tb;
    int64_t m, n, k, batch;
    double alpha, beta;
    bool shared_b;
  };
  const std::vector<Case> cases = {
      {false, false, 7, 9, 5, 1, 1.0, 0.0, false},     {true, false, 130, 70, 96, 1, 0.5, 0.0, false},
      {false, true, 64, 129, 80, 3, 1.0, 1.0, false},  {true, true, 33, 17, 200, 2, -2.0, 0.25, false},
      {false, false, 128, 128, 64, 4, 1.0, 0.0, true},  // broadcast weight: B's batch stride 0
  };
  for (const Case& cs : cases) {
    const int64_t lda = (cs.ta ? cs.m : cs.k) + 3, ldb = (cs.tb ? cs.k : cs.n) + 1, ldc = cs.n + 2;
    const int64_t sa = lda * (cs.ta ? cs.k : cs.m), sb = cs.shared_b ? 0 : ldb * (cs.tb ? cs.n : cs.k);
    const int64_t sc = ldc * cs.m;
    const auto a = random_vec<T>(sa * cs.batch, 1);
    const auto b = random_vec<T>(cs.shared_b ? ldb * (cs.tb ? cs.n : cs.k) : sb * cs.batch, 2);
    auto c = random_vec<T>(sc * cs.batch, 3);
    const auto want =
        reference<T>(cs.ta, cs.tb, cs.m, cs.n, cs.k, cs.alpha, a, lda, sa, b, ldb, sb, cs.beta, c, ldc, sc, cs.batch);
    backend::cpu_backend().gemm(dtype, cs.ta, cs.tb, cs.m, cs.n, cs.k, cs.alpha, a.data(), lda, sa, b.data(), ldb, sb,
                                cs.beta, c.data(), ldc, sc, cs.batch);
    for (int64_t q = 0; q < cs.batch; ++q) {
      for (int64_t i = 0; i < cs.m; ++i) {
        for (int64_t j = 0; j < cs.n; ++j) {
          const int64_t at = q * sc + i * ldc + j;
          ASSERT_NEAR(c[at], want[at], tol * std::sqrt(static_cast<double>(cs.k)))
              << library << " m=" << cs.m << " n=" << cs.n << " k=" << cs.k << " batch " << q << " (" << i << ", " << j
              << ")";
        }
      }
    }
    // The padding between rows of C is never written.
    for (int64_t q = 0; q < cs.batch; ++q) {
      for (int64_t i = 0; i < cs.m; ++i) {
        for (int64_t j = cs.n; j < ldc; ++j) EXPECT_EQ(c[q * sc + i * ldc + j], want[q * sc + i * ldc + j]);
      }
    }
  }
}

}  // namespace

TEST(GemmLibrary, OpenBlasMatchesFloat64Loop) {
  check_library<float>("openblas", Dtype::Float32, 2e-5);
  check_library<double>("openblas", Dtype::Float64, 1e-12);
}

TEST(GemmLibrary, MklMatchesFloat64Loop) {
  if (!backend::cpu::mkl::available())
    GTEST_SKIP() << "MKL is not installed: " << backend::cpu::mkl::unavailable_reason();
  EXPECT_FALSE(backend::cpu::mkl::version().empty());
  // Linked in (mkl-static at build time) or libmkl_rt loaded at run time.
  if (backend::cpu::mkl::linked_statically()) {
    EXPECT_TRUE(backend::cpu::mkl::library_path().empty());
  } else {
    EXPECT_NE(backend::cpu::mkl::library_path().find("libmkl_rt"), std::string::npos);
  }
  check_library<float>("mkl", Dtype::Float32, 2e-5);
  check_library<double>("mkl", Dtype::Float64, 1e-12);
  BackendGuard guard;
  backend::cpu::set_gemm_backend("mkl");
  EXPECT_EQ(backend::cpu::f32_gemm_library(8, 8, 8, 1), backend::cpu::GemmLibrary::Mkl);
  EXPECT_EQ(backend::cpu::f64_gemm_library(), backend::cpu::GemmLibrary::Mkl);
}

TEST(GemmLibrary, AutoRuleFollowsTheMeasuredSplit) {
  BackendGuard guard;
  backend::cpu::set_gemm_backend("auto");
  // Small products stay on OpenBLAS everywhere; float64 never leaves it under "auto".
  EXPECT_EQ(backend::cpu::f32_gemm_library(64, 64, 64, 1), backend::cpu::GemmLibrary::OpenBlas);
  EXPECT_EQ(backend::cpu::f64_gemm_library(), backend::cpu::GemmLibrary::OpenBlas);
  const backend::cpu::GemmLibrary mid = backend::cpu::f32_gemm_library(512, 512, 512, 1);
  if (backend::cpu::cpu_is_intel() && backend::cpu::mkl::available()) {
    EXPECT_EQ(mid, backend::cpu::GemmLibrary::Mkl);
  } else if (backend::onednn::version()) {
    EXPECT_EQ(mid, backend::cpu::GemmLibrary::OneDNN);  // MKL is never picked on other vendors
  } else {
    EXPECT_EQ(mid, backend::cpu::GemmLibrary::OpenBlas);
  }
}

TEST(GemmLibrary, BadOrMissingLibraryIsAClearError) {
  BackendGuard guard;
  try {
    backend::cpu::set_gemm_backend("cublas");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("set_gemm_backend"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'cublas'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'mkl'"), std::string::npos) << msg;
  }
  EXPECT_EQ(backend::cpu::gemm_backend(), guard.saved);  // a refused name changes nothing
  if (!backend::cpu::mkl::available()) {
    EXPECT_THROW(backend::cpu::set_gemm_backend("mkl"), DeviceUnavailableError);
    EXPECT_FALSE(backend::cpu::mkl::unavailable_reason().empty());
  }
  if (!backend::onednn::version()) EXPECT_THROW(backend::cpu::set_gemm_backend("onednn"), DeviceUnavailableError);
}
