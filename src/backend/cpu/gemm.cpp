#include <cblas.h>

#include <algorithm>

#include "backend/cpu/gemm_library.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/mkl_runtime.h"
#include "backend/cpu/matmul_onednn.h"

namespace st::backend::cpu {

namespace {

// Integer matmul has no BLAS; a plain i-k-j loop keeps the inner loop contiguous.
template <typename T>
void naive_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const T* a, int64_t lda, const T* b,
                int64_t ldb, double beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0 ? T(0) : static_cast<T>(beta * c[i * ldc + j]);
    for (int64_t p = 0; p < k; ++p) {
      const T av = static_cast<T>(alpha * (ta ? a[p * lda + i] : a[i * lda + p]));
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] += av * (tb ? b[j * ldb + p] : b[p * ldb + j]);
    }
  }
}

template <typename T>
void naive_batched(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
                   int64_t sa, const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc, int64_t sc,
                   int64_t batch) {
  const int threads = num_threads_for(batch * m * n * k);
#pragma omp parallel for num_threads(threads)
  for (int64_t i = 0; i < batch; ++i) {
    naive_gemm<T>(ta, tb, m, n, k, alpha, static_cast<const T*>(a) + i * sa, lda, static_cast<const T*>(b) + i * sb,
                  ldb, beta, static_cast<T*>(c) + i * sc, ldc);
  }
}

// OpenBLAS (pthreads build) keeps its own worker threads, which busy-wait after each
// call; next to the OpenMP pool used by every other kernel they fight for the same
// cores (on a small machine a gemm followed by an elementwise op could take an
// 8 ms scheduler slice). So OpenBLAS always runs single-threaded and large GEMMs are
// split over the OpenMP pool here instead: each thread computes a block of rows or
// columns of C with its own single-threaded BLAS call.
template <typename T, typename F>
void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* A, int64_t lda, int64_t sa, const T* B,
               int64_t ldb, int64_t sb, T* C, int64_t ldc, int64_t sc, int64_t batch, F call) {
  if (scipy_openblas_get_num_threads() != 1) scipy_openblas_set_num_threads(1);
  // ~2 MFLOP per thread at least; below that a single call is faster.
  constexpr int64_t kGemmGrain = int64_t{1} << 20;
  const int64_t flops = m * n * k;
  const int max_threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  int threads = static_cast<int>(std::min<int64_t>(max_threads, std::max<int64_t>(1, batch * flops / kGemmGrain)));
  if (threads <= 1) {
    for (int64_t i = 0; i < batch; ++i) call(m, n, k, A + i * sa, lda, B + i * sb, ldb, C + i * sc, ldc);
    return;
  }
  if (batch >= threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < batch; ++i) call(m, n, k, A + i * sa, lda, B + i * sb, ldb, C + i * sc, ldc);
    return;
  }
  // Split the larger of m and n into `threads` blocks (multiples of 16 keep the
  // micro-kernels whole); batches are walked in order.
  const bool split_m = m >= n;
  const int64_t extent = split_m ? m : n;
  const int64_t chunk = ((extent + threads - 1) / threads + 15) / 16 * 16;
  const int parts = static_cast<int>((extent + chunk - 1) / chunk);
  for (int64_t i = 0; i < batch; ++i) {
    const T* Ab = A + i * sa;
    const T* Bb = B + i * sb;
    T* Cb = C + i * sc;
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; ++p) {
      const int64_t b0 = p * chunk, len = std::min<int64_t>(extent, b0 + chunk) - b0;
      if (len <= 0) continue;
      if (split_m) {
        // Rows b0.. of op(A) and C.
        call(len, n, k, ta ? Ab + b0 : Ab + b0 * lda, lda, Bb, ldb, Cb + b0 * ldc, ldc);
      } else {
        // Columns b0.. of op(B) and C.
        call(m, len, k, Ab, lda, tb ? Bb + b0 * ldb : Bb + b0, ldb, Cb + b0, ldc);
      }
    }
  }
}

}  // namespace

void gemm(Dtype dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
          int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b, double beta, void* c, int64_t ldc,
          int64_t stride_c, int64_t batch) {
  const auto TA = ta ? CblasTrans : CblasNoTrans;
  const auto TB = tb ? CblasTrans : CblasNoTrans;
  if (dtype == Dtype::Float32) {
    // The library the measured rule picks (backend/cpu/gemm_library.h). MKL is a whole BLAS; oneDNN's
    // matmul takes plain products into a contiguous C, outside other parallel regions.
    const GemmLibrary lib = f32_gemm_library(m, n, k, batch);
    if (lib == GemmLibrary::Mkl) {
      mkl::gemm(false, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, batch);
      return;
    }
    const bool plain = alpha == 1.0 && beta == 0.0 && ldc == n && (batch == 1 || stride_c == m * n);
    if (lib == GemmLibrary::OneDNN && plain && !omp_in_parallel() &&
        backend::onednn::f32_matmul(ta, tb, m, n, k, a, lda, batch == 1 ? 0 : stride_a, b, ldb,
                                    batch == 1 ? 0 : stride_b, c, batch)) {
      return;
    }
    const float al = static_cast<float>(alpha), be = static_cast<float>(beta);
    blas_gemm<float>(
        ta, tb, m, n, k, static_cast<const float*>(a), lda, stride_a, static_cast<const float*>(b), ldb, stride_b,
        static_cast<float*>(c), ldc, stride_c, batch,
        [&](int64_t mm, int64_t nn, int64_t kk, const float* A, int64_t la, const float* B, int64_t lb, float* C,
            int64_t lc) { scipy_cblas_sgemm(CblasRowMajor, TA, TB, mm, nn, kk, al, A, la, B, lb, be, C, lc); });
  } else if (dtype == Dtype::Float64) {
    if (f64_gemm_library() == GemmLibrary::Mkl) {
      mkl::gemm(true, ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, batch);
      return;
    }
    blas_gemm<double>(
        ta, tb, m, n, k, static_cast<const double*>(a), lda, stride_a, static_cast<const double*>(b), ldb, stride_b,
        static_cast<double*>(c), ldc, stride_c, batch,
        [&](int64_t mm, int64_t nn, int64_t kk, const double* A, int64_t la, const double* B, int64_t lb, double* C,
            int64_t lc) { scipy_cblas_dgemm(CblasRowMajor, TA, TB, mm, nn, kk, alpha, A, la, B, lb, beta, C, lc); });
  } else {
    ST_DISPATCH_ARITH(dtype, [&] {
      naive_batched<scalar_t>(ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c,
                              batch);
    });
  }
}

}  // namespace st::backend::cpu
