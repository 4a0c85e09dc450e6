// Column sums of a (rows, cols) matrix in two deterministic passes: blocks write partial sums of
// their rows (one partial row per block), then finish_column_sums adds the partial rows column by
// column in a fixed order. Layer norm's weight gradients write their own partial rows (from g * xhat
// and g) and share the finishing pass; bias_grad sums a linear's output gradient.
#pragma once

#include "backend/cuda/common.cuh"

namespace st::backend::cuda {

namespace column_sums_detail {

// A block of kFinishCols columns x kFinishSplits threads per column: each thread sums every
// kFinishSplits-th partial, then the block adds the threads' sums in a fixed order (deterministic).
// One thread per column walking 170 partials took 35 us per call (latency-bound) at d=768.
constexpr int kFinishCols = 32, kFinishSplits = 32;

// a[j] and b[j]: the sums of the nsplit partial rows of pa and pb (either may be null, its output
// then unwritten).
template <typename P, typename T>
__global__ void finish_kernel(const P* pa, const P* pb, T* a, T* b, int64_t nsplit, int64_t cols) {
  __shared__ double part_a[kFinishSplits][kFinishCols + 1], part_b[kFinishSplits][kFinishCols + 1];
  const int64_t j = blockIdx.x * static_cast<int64_t>(kFinishCols) + threadIdx.x;
  double sa = 0, sb = 0;
  if (j < cols) {
    for (int64_t s = threadIdx.y; s < nsplit; s += kFinishSplits) {
      if (pa) sa += static_cast<double>(pa[s * cols + j]);
      if (pb) sb += static_cast<double>(pb[s * cols + j]);
    }
  }
  part_a[threadIdx.y][threadIdx.x] = sa;
  part_b[threadIdx.y][threadIdx.x] = sb;
  __syncthreads();
  if (threadIdx.y != 0 || j >= cols) return;
  for (int s = 1; s < kFinishSplits; ++s) {
    sa += part_a[s][threadIdx.x];
    sb += part_b[s][threadIdx.x];
  }
  if (a) a[j] = convert<T>(sa);
  if (b) b[j] = convert<T>(sb);
}

}  // namespace column_sums_detail

// a and b (cols,) of T from nsplit rows of partial column sums pa and pb of P (an undefined output
// skips its input, which may then be undefined too).
template <typename P, typename T>
void finish_column_sums(const Tensor& pa, const Tensor& pb, int64_t nsplit, int64_t cols, Tensor& a, Tensor& b) {
  using column_sums_detail::kFinishCols, column_sums_detail::kFinishSplits;
  const bool ha = a.defined(), hb = b.defined();
  column_sums_detail::finish_kernel<P, T><<<static_cast<unsigned>((cols + kFinishCols - 1) / kFinishCols),
                                            dim3(kFinishCols, kFinishSplits), 0, stream()>>>(
      ha ? pa.data<P>() : nullptr, hb ? pb.data<P>() : nullptr, ha ? static_cast<T*>(a.raw_data()) : nullptr,
      hb ? static_cast<T*>(b.raw_data()) : nullptr, nsplit, cols);
  ST_CUDA_LAUNCH_CHECK();
}

// db (n,) = the column sums of dy (m, n): a linear's bias gradient. dy float32, float16 or
// bfloat16, contiguous, 16-byte aligned, n a multiple of 8; db float32 or dy's dtype (summed in
// float32 per block, the blocks' sums in double). False, nothing written: declined.
bool bias_grad(const Tensor& dy, Tensor& db);

}  // namespace st::backend::cuda
