// Fused row-wise cross-entropy (src/nn/loss_classification.cpp's index-target path): one block per
// row computes the row's log-sum-exp and loss; the backward writes softmax - onehot scaled by
// the row's gradient in one pass. Nothing of size (rows, C) is kept but the logits themselves.
#include <climits>

#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"

namespace st::backend::cuda {

namespace {

constexpr int kRowThreads = 256;

template <typename T, typename A>
__global__ void cross_entropy_kernel(const T* x, const int64_t* t, A* loss, A* lse, int64_t cols, int64_t ignore_index,
                                     A scale) {
  const int64_t r = blockIdx.x;
  const T* xr = x + r * cols;
  A m = -INFINITY;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmax(m, convert<A>(xr[j]));
  m = block_reduce(m, [](A a, A b) { return a > b ? a : b; }, A(-INFINITY));
  A s = 0;
  const A shift = m == -INFINITY ? A(0) : m;  // all -inf: lse = -inf
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += exp(convert<A>(xr[j]) - shift);
  s = block_reduce(s, [](A a, A b) { return a + b; }, A(0));
  if (threadIdx.x == 0) {
    const A l = shift + log(s);
    const int64_t y = t[r];
    lse[r] = l;
    // a target out of range (the op layer checks, unless the host copy's range vouched for it)
    // gives NaN, never a read past the row
    loss[r] = y == ignore_index ? A(0) : y < 0 || y >= cols ? A(NAN) : scale * (l - convert<A>(xr[y]));
  }
}

template <typename T, typename A>
__global__ void cross_entropy_backward_kernel(const T* x, const int64_t* t, const A* lse, const A* g, T* dx,
                                              int64_t cols, int64_t ignore_index, int64_t g_stride, A scale) {
  const int64_t r = blockIdx.x;
  const int64_t y = t[r];
  const A gr = y == ignore_index ? A(0) : scale * g[r * g_stride], l = lse[r];
  const T* xr = x + r * cols;
  T* dr = dx + r * cols;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const A p = exp(convert<A>(xr[j]) - l);
    dr[j] = convert<T>(gr * (p - (j == y ? A(1) : A(0))));
  }
}

void check_rows(int64_t rows, const char* op) {
  if (rows > INT_MAX) {
    throw ValueError(std::string(op) + ": " + std::to_string(rows) + " rows exceed the kernel's grid");
  }
}

}  // namespace

void cross_entropy_rows(const Tensor& x, const Tensor& t, int64_t ignore_index, double scale, Tensor& loss,
                        Tensor& lse) {
  const int64_t rows = x.size(0), cols = x.size(1);
  if (rows == 0) return;
  check_rows(rows, "cross_entropy");
  dispatch_float_accum(x.dtype(), [&](auto tag, auto acc) {
    using T = decltype(tag);
    using A = decltype(acc);
    cross_entropy_kernel<T, A><<<static_cast<unsigned>(rows), kRowThreads, 0, stream()>>>(
        static_cast<const T*>(x.raw_data()), t.data<int64_t>(), loss.data<A>(), lse.data<A>(), cols, ignore_index,
        static_cast<A>(scale));
    ST_CUDA_LAUNCH_CHECK();
  });
}

void cross_entropy_rows_backward(const Tensor& x, const Tensor& t, const Tensor& lse, const Tensor& g,
                                 int64_t ignore_index, double scale, Tensor& dx) {
  const int64_t rows = x.size(0), cols = x.size(1);
  if (rows == 0) return;
  check_rows(rows, "cross_entropy backward");
  dispatch_float_accum(x.dtype(), [&](auto tag, auto acc) {
    using T = decltype(tag);
    using A = decltype(acc);
    cross_entropy_backward_kernel<T, A><<<static_cast<unsigned>(rows), kRowThreads, 0, stream()>>>(
        static_cast<const T*>(x.raw_data()), t.data<int64_t>(), lse.data<A>(), g.data<A>(),
        static_cast<T*>(dx.raw_data()), cols, ignore_index, g.numel() == 1 ? 0 : 1, static_cast<A>(scale));
    ST_CUDA_LAUNCH_CHECK();
  });
}

}  // namespace st::backend::cuda
