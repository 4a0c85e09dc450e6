// Depthwise 2-d convolution (groups == C == out channels) on contiguous NCHW float
// tensors. The forward runs one thread per output and the input gradient one thread per
// input element (a gather, no atomics); both add the kernel taps in the CPU kernel's
// (i, j) order. The weight gradient reduces over batch * OH * OW per tap: blocks of a
// (tap, split) grid write float64 partial sums that a second pass adds in a fixed order
// (deterministic).
#include "backend/cuda/checks.cuh"
#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"

namespace st::backend::cuda {

using backend::Conv2dGeom;

namespace {

struct PlusD {
  __device__ double operator()(double a, double b) const { return a + b; }
};

// Block (tap, split) of the weight gradient: partial[tap * nsplit + split] =
// sum over e in its chunk of [0, batch * OH * OW) of gy(n, c, oh, ow) * x(n, c, h, w).
template <typename T>
__global__ void dw_weight_partial(const T* __restrict__ gy, const T* __restrict__ x, Conv2dGeom g, int64_t batch,
                                  int64_t chunk, double* __restrict__ partial) {
  const int64_t tap = blockIdx.x, split = blockIdx.y, nsplit = gridDim.y;
  const int64_t j = tap % g.kw, i = (tap / g.kw) % g.kh, c = tap / (g.kw * g.kh);
  const int64_t L = g.OH * g.OW, total = batch * L;
  const int64_t lo = split * chunk;
  const int64_t hi = lo + chunk < total ? lo + chunk : total;
  double acc = 0;
  for (int64_t e = lo + threadIdx.x; e < hi; e += blockDim.x) {
    const int64_t n = e / L, l = e - n * L;
    const int64_t oh = l / g.OW, ow = l - oh * g.OW;
    const int64_t h = oh * g.sh - g.ph + i * g.dh, w = ow * g.sw - g.pw + j * g.dw;
    if (h < 0 || h >= g.H || w < 0 || w >= g.W) continue;
    const int64_t plane = n * g.C + c;
    acc += static_cast<double>(gy[plane * L + l]) * static_cast<double>(x[(plane * g.H + h) * g.W + w]);
  }
  acc = block_reduce(acc, PlusD{}, 0.0);
  if (threadIdx.x == 0) partial[tap * nsplit + split] = acc;
}

}  // namespace

void depthwise_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeom& g, int64_t batch,
                      Tensor& out) {
  require_float32_or_64(x, "depthwise_conv2d");
  ST_CUDA_FLOAT_CASES(x.dtype(), {
    const T* xp = static_cast<const T*>(x.raw_data());
    const T* wp = static_cast<const T*>(w.raw_data());
    const T* bp = bias.defined() ? static_cast<const T*>(bias.raw_data()) : nullptr;
    T* op = static_cast<T*>(out.raw_data());
    const Conv2dGeom G = g;
    for_n(batch * G.C * G.OH * G.OW, [=] __device__(int64_t t) {
      const int64_t ow = t % G.OW, oh = (t / G.OW) % G.OH, p = t / (G.OW * G.OH), c = p % G.C;
      const T* in = xp + p * G.H * G.W;
      const T* wc = wp + c * G.kh * G.kw;
      T acc = bp ? bp[c] : T(0);
      for_each_window_input(
          G, oh, ow, [&](int64_t i, int64_t j, int64_t h, int64_t w) { acc += wc[i * G.kw + j] * in[h * G.W + w]; });
      op[t] = acc;
    });
  });
}

void depthwise_conv2d_backward_input(const Tensor& gy, const Tensor& w, const Conv2dGeom& g, int64_t batch,
                                     Tensor& gx) {
  require_float32_or_64(gx, "depthwise_conv2d_backward_input");
  ST_CUDA_FLOAT_CASES(gx.dtype(), {
    const T* gp = static_cast<const T*>(gy.raw_data());
    const T* wp = static_cast<const T*>(w.raw_data());
    T* xp = static_cast<T*>(gx.raw_data());
    const Conv2dGeom G = g;
    for_n(batch * G.C * G.H * G.W, [=] __device__(int64_t t) {
      const int64_t x_w = t % G.W, x_h = (t / G.W) % G.H, p = t / (G.W * G.H), c = p % G.C;
      const T* src = gp + p * G.OH * G.OW;
      const T* wc = wp + c * G.kh * G.kw;
      T acc = 0;
      for_each_covering_output(G, x_h, x_w, [&](int64_t i, int64_t j, int64_t oh, int64_t ow) {
        acc += wc[i * G.kw + j] * src[oh * G.OW + ow];
      });
      xp[t] = acc;
    });
  });
}

void depthwise_conv2d_backward_weight(const Tensor& gy, const Tensor& x, const Conv2dGeom& g, int64_t batch,
                                      Tensor& gw) {
  require_float32_or_64(gw, "depthwise_conv2d_backward_weight");
  const int64_t taps = g.C * g.kh * g.kw;
  if (taps == 0) return;
  const int64_t total = batch * g.OH * g.OW;
  // About 8K products per block; at most 128 splits per tap.
  constexpr int64_t kPerBlock = 8192, kMaxSplits = 128;
  int64_t nsplit = (total + kPerBlock - 1) / kPerBlock;
  nsplit = nsplit < 1 ? 1 : (nsplit > kMaxSplits ? kMaxSplits : nsplit);
  const int64_t chunk = total > 0 ? (total + nsplit - 1) / nsplit : 0;
  if (taps > INT32_MAX) throw ShapeError("depthwise_conv2d: too many kernel taps for the CUDA kernel");
  Tensor partial = Tensor::empty({taps * nsplit}, Dtype::Float64, gw.device());
  double* pp = partial.data<double>();
  ST_CUDA_FLOAT_CASES(gw.dtype(), {
    const T* gp = static_cast<const T*>(gy.raw_data());
    const T* xp = static_cast<const T*>(x.raw_data());
    T* wp = static_cast<T*>(gw.raw_data());
    dw_weight_partial<T><<<dim3(static_cast<unsigned>(taps), static_cast<unsigned>(nsplit)), kThreads, 0, stream()>>>(
        gp, xp, g, batch, chunk, pp);
    ST_CUDA_LAUNCH_CHECK();
    const int64_t ns = nsplit;
    for_n(taps, [=] __device__(int64_t tap) {
      double s = 0;
      for (int64_t k = 0; k < ns; ++k) s += pp[tap * ns + k];
      wp[tap] = static_cast<T>(s);
    });
  });
}

}  // namespace st::backend::cuda
