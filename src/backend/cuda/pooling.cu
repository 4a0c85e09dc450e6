// Average and adaptive average pooling over (planes, H, W) float planes. The forwards
// run one thread per output; the backwards run one thread per input element and gather
// the outputs whose windows hold it (no atomics: deterministic, and each element sums its
// contributions in the CPU kernel's (oh, ow) order).
#include "backend/cuda/checks.cuh"
#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"
#include "backend/common/pool_window.h"

namespace st::backend::cuda {

using backend::Pool2dGeom;

namespace {

__host__ __device__ inline int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
__host__ __device__ inline int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

}  // namespace

void avg_pool2d(const Tensor& x, const Pool2dGeom& g, int64_t planes, bool count_include_pad, int64_t divisor_override,
                Tensor& out) {
  require_float32_or_64(x, "avg_pool2d");
  ST_CUDA_FLOAT_CASES(x.dtype(), {
    const T* xp = static_cast<const T*>(x.raw_data());
    T* op = static_cast<T*>(out.raw_data());
    const Pool2dGeom G = g;
    const bool cip = count_include_pad;
    const int64_t dov = divisor_override;
    for_n(planes * G.OH * G.OW, [=] __device__(int64_t t) {
      const int64_t ow = t % G.OW, oh = (t / G.OW) % G.OH, p = t / (G.OW * G.OH);
      const T* in = xp + p * G.H * G.W;
      const AvgWindow win = avg_window(G, oh, ow, cip, dov);
      T s = 0;
      for (int64_t h = win.h0; h < win.h1; ++h)
        for (int64_t w = win.w0; w < win.w1; ++w) s += in[h * G.W + w];
      op[t] = win.divisor > 0 ? s / static_cast<T>(win.divisor) : T(0);
    });
  });
}

void avg_pool2d_backward(const Tensor& gy, const Pool2dGeom& g, int64_t planes, bool count_include_pad,
                         int64_t divisor_override, Tensor& gx) {
  require_float32_or_64(gx, "avg_pool2d_backward");
  ST_CUDA_FLOAT_CASES(gx.dtype(), {
    const T* gp = static_cast<const T*>(gy.raw_data());
    T* xp = static_cast<T*>(gx.raw_data());
    const Pool2dGeom G = g;
    const bool cip = count_include_pad;
    const int64_t dov = divisor_override;
    for_n(planes * G.H * G.W, [=] __device__(int64_t t) {
      const int64_t w = t % G.W, h = (t / G.W) % G.H, p = t / (G.W * G.H);
      const T* src = gp + p * G.OH * G.OW;
      // Windows start at o*s - pad and span k: a superset of the outputs covering (h, w);
      // each candidate is then checked against its exact (clipped) window.
      const int64_t oh_lo = imax(0, (h + G.ph - G.kh) / G.sh), oh_hi = imin(G.OH - 1, (h + G.ph) / G.sh);
      const int64_t ow_lo = imax(0, (w + G.pw - G.kw) / G.sw), ow_hi = imin(G.OW - 1, (w + G.pw) / G.sw);
      T acc = 0;
      for (int64_t oh = oh_lo; oh <= oh_hi; ++oh) {
        for (int64_t ow = ow_lo; ow <= ow_hi; ++ow) {
          const AvgWindow win = avg_window(G, oh, ow, cip, dov);
          if (win.divisor <= 0 || h < win.h0 || h >= win.h1 || w < win.w0 || w >= win.w1) continue;
          acc += src[oh * G.OW + ow] / static_cast<T>(win.divisor);
        }
      }
      xp[t] = acc;
    });
  });
}

void adaptive_avg_pool2d(const Tensor& x, const Pool2dGeom& g, int64_t planes, Tensor& out) {
  require_float32_or_64(x, "adaptive_avg_pool2d");
  ST_CUDA_FLOAT_CASES(x.dtype(), {
    const T* xp = static_cast<const T*>(x.raw_data());
    T* op = static_cast<T*>(out.raw_data());
    const Pool2dGeom G = g;
    for_n(planes * G.OH * G.OW, [=] __device__(int64_t t) {
      const int64_t ow = t % G.OW, oh = (t / G.OW) % G.OH, p = t / (G.OW * G.OH);
      const T* in = xp + p * G.H * G.W;
      const int64_t h0 = adaptive_start(oh, G.H, G.OH), h1 = adaptive_end(oh, G.H, G.OH);
      const int64_t w0 = adaptive_start(ow, G.W, G.OW), w1 = adaptive_end(ow, G.W, G.OW);
      T s = 0;
      for (int64_t h = h0; h < h1; ++h)
        for (int64_t w = w0; w < w1; ++w) s += in[h * G.W + w];
      op[t] = s / static_cast<T>((h1 - h0) * (w1 - w0));
    });
  });
}

void adaptive_avg_pool2d_backward(const Tensor& gy, const Pool2dGeom& g, int64_t planes, Tensor& gx) {
  require_float32_or_64(gx, "adaptive_avg_pool2d_backward");
  ST_CUDA_FLOAT_CASES(gx.dtype(), {
    const T* gp = static_cast<const T*>(gy.raw_data());
    T* xp = static_cast<T*>(gx.raw_data());
    const Pool2dGeom G = g;
    for_n(planes * G.H * G.W, [=] __device__(int64_t t) {
      const int64_t w = t % G.W, h = (t / G.W) % G.H, p = t / (G.W * G.H);
      const T* src = gp + p * G.OH * G.OW;
      // Output o covers h iff floor(o*H/OH) <= h < ceil((o+1)*H/OH), which needs
      // floor(h*OH/H) <= o <= ceil((h+1)*OH/H) - 1; candidates are checked exactly.
      const int64_t oh_lo = h * G.OH / G.H, oh_hi = imin(G.OH - 1, ((h + 1) * G.OH + G.H - 1) / G.H - 1);
      const int64_t ow_lo = w * G.OW / G.W, ow_hi = imin(G.OW - 1, ((w + 1) * G.OW + G.W - 1) / G.W - 1);
      T acc = 0;
      for (int64_t oh = oh_lo; oh <= oh_hi; ++oh) {
        const int64_t h0 = adaptive_start(oh, G.H, G.OH), h1 = adaptive_end(oh, G.H, G.OH);
        if (h < h0 || h >= h1) continue;
        for (int64_t ow = ow_lo; ow <= ow_hi; ++ow) {
          const int64_t w0 = adaptive_start(ow, G.W, G.OW), w1 = adaptive_end(ow, G.W, G.OW);
          if (w < w0 || w >= w1) continue;
          acc += src[oh * G.OW + ow] / static_cast<T>((h1 - h0) * (w1 - w0));
        }
      }
      xp[t] = acc;
    });
  });
}

}  // namespace st::backend::cuda
