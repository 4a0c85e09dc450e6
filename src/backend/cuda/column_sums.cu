// A linear's bias gradient: the column sums of its output gradient (column_sums.cuh), read once
// with 16-byte loads. cuBLASLt's BGRADB epilogue ran the same sum as a separate kernel after the
// weight-gradient GEMM, a fifth slower (GPT-2 small's 48 bias gradients on an H100: 1.41 ms per
// step there, 1.15 ms here plus 0.16 ms of finishing passes).
#include "backend/cuda/column_sums.cuh"

namespace st::backend::cuda {

namespace {

// Each thread owns kVec adjacent columns (one 16-byte load of a half type, two of float32), a warp
// 32 * kVec columns; a block's kWarps warps take interleaved rows.
constexpr int kVec = 8, kWarps = 8, kTile = 32 * kVec;

template <typename T>
__device__ inline void add8(const T* p, float (&acc)[kVec]) {
  if constexpr (sizeof(T) == 4) {
    const float4 a = *reinterpret_cast<const float4*>(p), b = *reinterpret_cast<const float4*>(p + 4);
    acc[0] += a.x, acc[1] += a.y, acc[2] += a.z, acc[3] += a.w;
    acc[4] += b.x, acc[5] += b.y, acc[6] += b.z, acc[7] += b.w;
  } else {
    const uint4 raw = *reinterpret_cast<const uint4*>(p);
    const T* v = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int i = 0; i < kVec; ++i) acc[i] += convert<float>(v[i]);
  }
}

// Row blockIdx.y of `partial`: the sums of columns [blockIdx.x * kTile, + kTile) over the rows
// blockIdx.y * kWarps + warp, stepping gridDim.y * kWarps. A thread only adds what it loads, so
// its loads of successive rows are all in flight at once.
template <typename T>
__global__ void column_partials_kernel(const T* x, float* partial, int64_t rows, int64_t cols) {
  __shared__ float part[kWarps][kTile + 1];
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x) * kVec;
  float acc[kVec] = {};
  if (c0 < cols) {
    const int64_t step = static_cast<int64_t>(gridDim.y) * kWarps;
#pragma unroll 4
    for (int64_t r = static_cast<int64_t>(blockIdx.y) * kWarps + threadIdx.y; r < rows; r += step) {
      add8(x + r * cols + c0, acc);
    }
  }
#pragma unroll
  for (int i = 0; i < kVec; ++i) part[threadIdx.y][threadIdx.x * kVec + i] = acc[i];
  __syncthreads();
  // the block's 256 threads finish one column each, adding the warps' sums in a fixed order
  const int t = threadIdx.y * 32 + threadIdx.x;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kTile + t;
  if (c >= cols) return;
  float s = 0.f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) s += part[w][t];
  partial[blockIdx.y * cols + c] = s;
}

template <typename T>
void bias_grad_typed(const Tensor& dy, Tensor& db) {
  const int64_t m = dy.size(0), n = dy.size(1);
  const int64_t tiles = (n + kTile - 1) / kTile;
  // about eight 256-thread blocks per multiprocessor, each taking at least kWarps rows
  const int64_t splits =
      std::clamp<int64_t>(int64_t{8} * sm_count() / tiles, 1, std::min<int64_t>(65535, (m + kWarps - 1) / kWarps));
  Tensor partial = Tensor::empty({splits, n}, Dtype::Float32, dy.device());
  column_partials_kernel<T>
      <<<dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(splits)), dim3(32, kWarps), 0, stream()>>>(
          static_cast<const T*>(dy.raw_data()), partial.data<float>(), m, n);
  ST_CUDA_LAUNCH_CHECK();
  Tensor none;
  if (db.dtype() == Dtype::Float32) {
    finish_column_sums<float, float>(none, partial, splits, n, none, db);
  } else {
    finish_column_sums<float, T>(none, partial, splits, n, none, db);
  }
}

}  // namespace

bool bias_grad(const Tensor& dy, Tensor& db) {
  const Dtype dt = dy.dtype();
  if (dy.dim() != 2 || dy.numel() == 0 || db.dim() != 1 || db.size(0) != dy.size(1) || !dy.is_contiguous() ||
      !db.is_contiguous() || dy.size(1) % kVec != 0 || reinterpret_cast<uintptr_t>(dy.raw_data()) % 16 != 0 ||
      (db.dtype() != dt && db.dtype() != Dtype::Float32)) {
    return false;
  }
  if (dt == Dtype::Float32) {
    bias_grad_typed<float>(dy, db);
  } else if (dt == Dtype::Float16) {
    bias_grad_typed<__half>(dy, db);
  } else if (dt == Dtype::BFloat16) {
    bias_grad_typed<__nv_bfloat16>(dy, db);
  } else {
    return false;
  }
  return true;
}

}  // namespace st::backend::cuda
