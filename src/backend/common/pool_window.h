#pragma once
// The windows of PyTorch's avg_pool2d and adaptive_avg_pool2d, one definition for the CPU
// (cpu/conv.cpp) and CUDA (cuda/pooling.cu) kernels, so both average the same elements.
#include <cstdint>

#include "backend/backend.h"
#include "core/host_device.h"

namespace st::backend {

// The window [h0, h1) x [w0, w1) of avg_pool2d at output (oh, ow) and its divisor. The divisor
// can be <= 0 only for windows that lie wholly outside the padded input (ceil_mode); those
// outputs are 0.
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};

ST_HOST_DEVICE inline AvgWindow avg_window(const Pool2dGeom& g, int64_t oh, int64_t ow, bool count_include_pad,
                                           int64_t divisor_override) {
  int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
  int64_t h1 = h0 + g.kh < g.H + g.ph ? h0 + g.kh : g.H + g.ph;
  int64_t w1 = w0 + g.kw < g.W + g.pw ? w0 + g.kw : g.W + g.pw;
  const int64_t pool_size = (h1 - h0) * (w1 - w0);
  h0 = h0 > 0 ? h0 : 0;
  w0 = w0 > 0 ? w0 : 0;
  h1 = h1 < g.H ? h1 : g.H;
  w1 = w1 < g.W ? w1 : g.W;
  const int64_t div = divisor_override > 0 ? divisor_override : count_include_pad ? pool_size : (h1 - h0) * (w1 - w0);
  return {h0, h1, w0, w1, div};
}

// The adaptive window along one axis of `in` elements pooled to `out`: [floor(o*in/out), ceil((o+1)*in/out)).
ST_HOST_DEVICE inline int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return o * in / out; }
ST_HOST_DEVICE inline int64_t adaptive_end(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

}  // namespace st::backend
