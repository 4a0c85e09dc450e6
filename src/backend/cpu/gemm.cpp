#include <cblas.h>

#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"

namespace st::cpu {

namespace {

// Integer matmul has no BLAS; a plain i-k-j loop keeps the inner loop contiguous.
template <typename T>
void naive_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const T* a, int64_t lda,
                const T* b, int64_t ldb, double beta, T* c, int64_t ldc) {
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

}  // namespace

void gemm(Dtype dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
          int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b, double beta, void* c, int64_t ldc,
          int64_t stride_c, int64_t batch) {
  const auto TA = ta ? CblasTrans : CblasNoTrans;
  const auto TB = tb ? CblasTrans : CblasNoTrans;
  if (dtype == Dtype::Float32) {
    const float* A = static_cast<const float*>(a);
    const float* B = static_cast<const float*>(b);
    float* C = static_cast<float*>(c);
    for (int64_t i = 0; i < batch; ++i) {
      scipy_cblas_sgemm(CblasRowMajor, TA, TB, m, n, k, static_cast<float>(alpha), A + i * stride_a, lda,
                  B + i * stride_b, ldb, static_cast<float>(beta), C + i * stride_c, ldc);
    }
  } else if (dtype == Dtype::Float64) {
    const double* A = static_cast<const double*>(a);
    const double* B = static_cast<const double*>(b);
    double* C = static_cast<double*>(c);
    for (int64_t i = 0; i < batch; ++i) {
      scipy_cblas_dgemm(CblasRowMajor, TA, TB, m, n, k, alpha, A + i * stride_a, lda, B + i * stride_b, ldb, beta,
                  C + i * stride_c, ldc);
    }
  } else {
    ST_DISPATCH_ARITH(dtype, [&] {
      naive_batched<scalar_t>(ta, tb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, batch);
    });
  }
}

}  // namespace st::cpu
