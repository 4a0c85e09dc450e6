// GEMM through cuBLAS (cublasGemmStridedBatchedEx: float32 with optional TF32 tensor
// cores, float64, and float16/bfloat16 operands with float32 accumulation); integer
// dtypes (and builds without cuBLAS) use a plain tiled kernel.

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"
#ifdef SPIRALTORCH_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

namespace st::backend::cuda {

namespace {

// Row-major C (m x n) = alpha op(A) op(B) + beta C, one matrix per blockIdx.z, 16x16 tiles.
template <typename T, typename A>
__global__ void tiled_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, A alpha, const T* a, int64_t lda,
                           int64_t sa, const T* b, int64_t ldb, int64_t sb, A beta, T* c, int64_t ldc, int64_t sc) {
  __shared__ A As[16][17], Bs[16][17];
  const int64_t z = blockIdx.z;
  a += z * sa;
  b += z * sb;
  c += z * sc;
  const int64_t row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  A acc = 0;
  for (int64_t p0 = 0; p0 < k; p0 += 16) {
    const int64_t pa = p0 + threadIdx.x, pb = p0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] =
        (row < m && pa < k) ? static_cast<A>(to_d(ta ? a[pa * lda + row] : a[row * lda + pa])) : A(0);
    Bs[threadIdx.y][threadIdx.x] =
        (col < n && pb < k) ? static_cast<A>(to_d(tb ? b[col * ldb + pb] : b[pb * ldb + col])) : A(0);
    __syncthreads();
#pragma unroll
    for (int q = 0; q < 16; ++q) acc += As[threadIdx.y][q] * Bs[q][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) {
    T& out = c[row * ldc + col];
    const A prev = beta == A(0) ? A(0) : beta * static_cast<A>(to_d(out));
    out = convert<T>(alpha * acc + prev);
  }
}

template <typename T, typename A>
void plain_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda, int64_t sa,
                const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc, int64_t sc, int64_t batch) {
  for (int64_t z0 = 0; z0 < batch; z0 += 65535) {
    const int64_t nb = std::min<int64_t>(65535, batch - z0);
    dim3 grid(static_cast<unsigned>((n + 15) / 16), static_cast<unsigned>((m + 15) / 16), static_cast<unsigned>(nb));
    tiled_gemm<T, A><<<grid, dim3(16, 16), 0, stream()>>>(
        ta, tb, m, n, k, static_cast<A>(alpha), static_cast<const T*>(a) + z0 * sa, lda, sa,
        static_cast<const T*>(b) + z0 * sb, ldb, sb, static_cast<A>(beta), static_cast<T*>(c) + z0 * sc, ldc, sc);
    ST_CUDA_LAUNCH_CHECK();
  }
}

#ifdef SPIRALTORCH_HAVE_CUBLAS
const char* cublas_error(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return "CUBLAS error";
  }
}
#define ST_CUBLAS_CHECK(expr)                                                                          \
  do {                                                                                                 \
    cublasStatus_t s_ = (expr);                                                                        \
    if (s_ != CUBLAS_STATUS_SUCCESS) throw SpiralError(std::string("cuda gemm: ") + cublas_error(s_)); \
  } while (0)

cublasHandle_t handle() {
  return device_handle<cublasHandle_t>([] {
    cublasHandle_t made = nullptr;
    ST_CUBLAS_CHECK(cublasCreate(&made));
    return made;
  });
}
#endif

}  // namespace

void gemm(Dtype dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
          int64_t sa, const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc, int64_t sc,
          int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
#ifdef SPIRALTORCH_HAVE_CUBLAS
  if (is_floating(dtype)) {
    cublasHandle_t h = handle();
    ST_CUBLAS_CHECK(cublasSetStream(h, stream()));
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands.
    const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cudaDataType_t type;
    cublasComputeType_t compute;
    const void *alpha_p, *beta_p;
    const float af = static_cast<float>(alpha), bf = static_cast<float>(beta);
    if (dtype == Dtype::Float64) {
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      alpha_p = &alpha;
      beta_p = &beta;
    } else {
      type = dtype == Dtype::Float32 ? CUDA_R_32F : dtype == Dtype::Float16 ? CUDA_R_16F : CUDA_R_16BF;
      compute = dtype == Dtype::Float32 && st::cuda::allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      alpha_p = &af;
      beta_p = &bf;
    }
    ST_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, opb, opa, static_cast<int>(n), static_cast<int>(m),
                                               static_cast<int>(k), alpha_p, b, type, static_cast<int>(ldb), sb, a,
                                               type, static_cast<int>(lda), sa, beta_p, c, type, static_cast<int>(ldc),
                                               sc, static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT));
    return;
  }
#endif
  switch (dtype) {
    case Dtype::Float64:
      return plain_gemm<double, double>(ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
    case Dtype::Float32:
      return plain_gemm<float, float>(ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
    case Dtype::Float16:
      return plain_gemm<__half, float>(ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
    case Dtype::BFloat16:
      return plain_gemm<__nv_bfloat16, float>(ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
    case Dtype::Int64:
      return plain_gemm<int64_t, int64_t>(ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
    case Dtype::Int32:
      return plain_gemm<int32_t, int64_t>(ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
    case Dtype::UInt8:
      return plain_gemm<uint8_t, int64_t>(ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
    default:
      throw DtypeError(std::string("matmul: unsupported dtype on CUDA: ") + dtype_name(dtype));
  }
}

}  // namespace st::backend::cuda
