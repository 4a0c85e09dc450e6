// CPU kernels of convolution and pooling: im2col/col2im for the GEMM route of
// conv1d/conv2d, and the max/avg/adaptive pooling loops. All work on contiguous
// NCHW float32/float64 data; threads split the (batch, channel) planes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "backend/common/pool_window.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/loops.h"

namespace st::backend::cpu {

using backend::Conv2dGeom;
using backend::Pool2dGeom;

namespace {

template <typename F>
void dispatch_float(Dtype dt, const char* op, F&& f) {
  if (dt == Dtype::Float32) {
    f(float{});
  } else if (dt == Dtype::Float64) {
    f(double{});
  } else {
    throw DtypeError(std::string(op) + ": expected float32 or float64, got " + dtype_name(dt));
  }
}

// Range of output positions o in [0, out) whose input o*s - p + off falls inside [0, in).
inline void valid_range(int64_t in, int64_t out, int64_t s, int64_t p, int64_t off, int64_t& lo, int64_t& hi) {
  // o*s >= p - off  ->  o >= ceil((p - off) / s)
  const int64_t a = p - off;
  lo = a <= 0 ? 0 : (a + s - 1) / s;
  // o*s - p + off <= in - 1  ->  o <= floor((in - 1 + p - off) / s)
  const int64_t b = in - 1 + p - off;
  hi = b < 0 ? 0 : b / s + 1;
  lo = std::min(lo, out);
  hi = std::clamp(hi, lo, out);
}

template <typename T>
void im2col_plane(const T* x, const Conv2dGeom& g, T* cols_c) {
  // cols_c points at row c*kh*kw of this batch item.
  const int64_t L = g.OH * g.OW;
  (void)L;
  for (int64_t i = 0; i < g.kh; ++i) {
    int64_t oh_lo, oh_hi;
    valid_range(g.H, g.OH, g.sh, g.ph, i * g.dh, oh_lo, oh_hi);
    for (int64_t j = 0; j < g.kw; ++j) {
      T* row = cols_c + (i * g.kw + j) * g.col_ld;
      int64_t ow_lo, ow_hi;
      valid_range(g.W, g.OW, g.sw, g.pw, j * g.dw, ow_lo, ow_hi);
      if (oh_lo > 0) std::memset(row, 0, sizeof(T) * oh_lo * g.OW);
      for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
        T* dst = row + oh * g.OW;
        const T* src = x + (oh * g.sh - g.ph + i * g.dh) * g.W + (j * g.dw - g.pw);
        for (int64_t ow = 0; ow < ow_lo; ++ow) dst[ow] = T(0);
        if (g.sw == 1) {
          if (ow_hi > ow_lo) std::memcpy(dst + ow_lo, src + ow_lo, sizeof(T) * (ow_hi - ow_lo));
        } else {
          for (int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow] = src[ow * g.sw];
        }
        for (int64_t ow = ow_hi; ow < g.OW; ++ow) dst[ow] = T(0);
      }
      if (oh_hi < g.OH) std::memset(row + oh_hi * g.OW, 0, sizeof(T) * (g.OH - oh_hi) * g.OW);
    }
  }
}

template <typename T>
void col2im_plane(const T* cols_c, const Conv2dGeom& g, T* x) {
  std::fill(x, x + g.H * g.W, T(0));
  for (int64_t i = 0; i < g.kh; ++i) {
    int64_t oh_lo, oh_hi;
    valid_range(g.H, g.OH, g.sh, g.ph, i * g.dh, oh_lo, oh_hi);
    for (int64_t j = 0; j < g.kw; ++j) {
      const T* row = cols_c + (i * g.kw + j) * g.col_ld;
      int64_t ow_lo, ow_hi;
      valid_range(g.W, g.OW, g.sw, g.pw, j * g.dw, ow_lo, ow_hi);
      for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
        const T* src = row + oh * g.OW;
        T* dst = x + (oh * g.sh - g.ph + i * g.dh) * g.W + (j * g.dw - g.pw);
        if (g.sw == 1) {
          for (int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow] += src[ow];
        } else {
          for (int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow * g.sw] += src[ow];
        }
      }
    }
  }
}

}  // namespace

void im2col(const Tensor& x, const Conv2dGeom& g, int64_t batch, Tensor& cols) {
  dispatch_float(x.dtype(), "im2col", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* cp = cols.data<T>();
    const int64_t planes = batch * g.C;
    const int threads = num_threads_for(planes * g.kh * g.kw * g.OH * g.OW);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const int64_t n = p / g.C, c = p % g.C;
      im2col_plane<T>(xp + p * g.H * g.W, g, cp + n * g.col_batch_stride + c * g.kh * g.kw * g.col_ld);
    }
  });
}

void col2im(const Tensor& cols, const Conv2dGeom& g, int64_t batch, Tensor& x) {
  dispatch_float(x.dtype(), "col2im", [&](auto tag) {
    using T = decltype(tag);
    T* xp = x.data<T>();
    const T* cp = cols.data<T>();
    const int64_t planes = batch * g.C;
    const int threads = num_threads_for(planes * g.kh * g.kw * g.OH * g.OW);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const int64_t n = p / g.C, c = p % g.C;
      col2im_plane<T>(cp + n * g.col_batch_stride + c * g.kh * g.kw * g.col_ld, g, xp + p * g.H * g.W);
    }
  });
}

namespace {

// The 2x2, stride-2 window without padding or dilation (the common pooling) over one plane, with the
// general loop's choice: the first maximum in row-major window order, or the last NaN. Branch-free,
// so the value loop vectorises; it writes the window position 0-3 and the indices come after.
template <typename T>
void max_pool2x2_plane(const T* in, const Pool2dGeom& g, T* o, int64_t* id) {
  constexpr int64_t kChunk = 256;
  int32_t code[kChunk];
  for (int64_t oh = 0; oh < g.OH; ++oh) {
    const T* __restrict r0 = in + 2 * oh * g.W;
    const T* __restrict r1 = r0 + g.W;
    T* __restrict orow = o + oh * g.OW;
    int64_t* __restrict irow = id + oh * g.OW;
    for (int64_t ow0 = 0; ow0 < g.OW; ow0 += kChunk) {
      const int64_t n = std::min(kChunk, g.OW - ow0);
      for (int64_t j = 0; j < n; ++j) {
        const int64_t w = 2 * (ow0 + j);
        const T b = r0[w + 1], c = r1[w], d = r1[w + 1];
        T m = r0[w];
        int32_t k = 0;
        bool t = b > m || b != b;
        m = t ? b : m, k = t ? 1 : k;
        t = c > m || c != c;
        m = t ? c : m, k = t ? 2 : k;
        t = d > m || d != d;
        m = t ? d : m, k = t ? 3 : k;
        orow[ow0 + j] = m;
        code[j] = k;
      }
      for (int64_t j = 0; j < n; ++j) irow[ow0 + j] = (2 * oh + (code[j] >> 1)) * g.W + 2 * (ow0 + j) + (code[j] & 1);
    }
  }
}

}  // namespace

void max_pool2d(const Tensor& x, const Pool2dGeom& g, int64_t planes, Tensor& out, Tensor& indices) {
  dispatch_float(x.dtype(), "max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    int64_t* ip = indices.data<int64_t>();
    const int threads = num_threads_for(planes * g.OH * g.OW * g.kh * g.kw);
    const bool two_by_two = g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 && g.dh == 1 &&
                            g.dw == 1 && 2 * g.OH <= g.H && 2 * g.OW <= g.W;
    if (two_by_two) {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t p = 0; p < planes; ++p)
        max_pool2x2_plane<T>(xp + p * g.H * g.W, g, op + p * g.OH * g.OW, ip + p * g.OH * g.OW);
      return;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const T* in = xp + p * g.H * g.W;
      T* o = op + p * g.OH * g.OW;
      int64_t* id = ip + p * g.OH * g.OW;
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        int64_t h0 = oh * g.sh - g.ph;
        const int64_t h1 = std::min(h0 + (g.kh - 1) * g.dh + 1, g.H);
        while (h0 < 0) h0 += g.dh;
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          int64_t w0 = ow * g.sw - g.pw;
          const int64_t w1 = std::min(w0 + (g.kw - 1) * g.dw + 1, g.W);
          while (w0 < 0) w0 += g.dw;
          int64_t best = h0 * g.W + w0;
          T m = -std::numeric_limits<T>::infinity();
          for (int64_t h = h0; h < h1; h += g.dh) {
            for (int64_t w = w0; w < w1; w += g.dw) {
              const int64_t idx = h * g.W + w;
              const T v = in[idx];
              if (v > m || std::isnan(v)) {
                m = v;
                best = idx;
              }
            }
          }
          o[oh * g.OW + ow] = m;
          id[oh * g.OW + ow] = best;
        }
      }
    }
  });
}

void max_pool2d_backward(const Tensor& gy, const Tensor& indices, const Pool2dGeom& g, int64_t planes, Tensor& gx) {
  dispatch_float(gx.dtype(), "max_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* gp = gy.data<T>();
    const int64_t* ip = indices.data<int64_t>();
    T* xp = gx.data<T>();
    const int threads = num_threads_for(planes * (g.OH * g.OW + g.H * g.W));
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      T* dst = xp + p * g.H * g.W;
      std::fill(dst, dst + g.H * g.W, T(0));
      const T* src = gp + p * g.OH * g.OW;
      const int64_t* id = ip + p * g.OH * g.OW;
      for (int64_t o = 0; o < g.OH * g.OW; ++o) dst[id[o]] += src[o];
    }
  });
}

void avg_pool2d(const Tensor& x, const Pool2dGeom& g, int64_t planes, bool count_include_pad, int64_t divisor_override,
                Tensor& out) {
  dispatch_float(x.dtype(), "avg_pool2d", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    const int threads = num_threads_for(planes * g.OH * g.OW * g.kh * g.kw);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const T* in = xp + p * g.H * g.W;
      T* o = op + p * g.OH * g.OW;
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          const AvgWindow win = avg_window(g, oh, ow, count_include_pad, divisor_override);
          T s = 0;
          for (int64_t h = win.h0; h < win.h1; ++h)
            for (int64_t w = win.w0; w < win.w1; ++w) s += in[h * g.W + w];
          o[oh * g.OW + ow] = win.divisor > 0 ? s / static_cast<T>(win.divisor) : T(0);
        }
      }
    }
  });
}

void avg_pool2d_backward(const Tensor& gy, const Pool2dGeom& g, int64_t planes, bool count_include_pad,
                         int64_t divisor_override, Tensor& gx) {
  dispatch_float(gx.dtype(), "avg_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* gp = gy.data<T>();
    T* xp = gx.data<T>();
    const int threads = num_threads_for(planes * g.OH * g.OW * g.kh * g.kw);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      T* dst = xp + p * g.H * g.W;
      std::fill(dst, dst + g.H * g.W, T(0));
      const T* src = gp + p * g.OH * g.OW;
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          const AvgWindow win = avg_window(g, oh, ow, count_include_pad, divisor_override);
          if (win.divisor <= 0) continue;
          const T v = src[oh * g.OW + ow] / static_cast<T>(win.divisor);
          for (int64_t h = win.h0; h < win.h1; ++h)
            for (int64_t w = win.w0; w < win.w1; ++w) dst[h * g.W + w] += v;
        }
      }
    }
  });
}

void adaptive_avg_pool2d(const Tensor& x, const Pool2dGeom& g, int64_t planes, Tensor& out) {
  dispatch_float(x.dtype(), "adaptive_avg_pool2d", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* op = out.data<T>();
    const int threads = num_threads_for(planes * g.H * g.W);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const T* in = xp + p * g.H * g.W;
      T* o = op + p * g.OH * g.OW;
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        const int64_t h0 = adaptive_start(oh, g.H, g.OH), h1 = adaptive_end(oh, g.H, g.OH);
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          const int64_t w0 = adaptive_start(ow, g.W, g.OW), w1 = adaptive_end(ow, g.W, g.OW);
          T s = 0;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) s += in[h * g.W + w];
          o[oh * g.OW + ow] = s / static_cast<T>((h1 - h0) * (w1 - w0));
        }
      }
    }
  });
}

void adaptive_avg_pool2d_backward(const Tensor& gy, const Pool2dGeom& g, int64_t planes, Tensor& gx) {
  dispatch_float(gx.dtype(), "adaptive_avg_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* gp = gy.data<T>();
    T* xp = gx.data<T>();
    const int threads = num_threads_for(planes * g.H * g.W);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      T* dst = xp + p * g.H * g.W;
      std::fill(dst, dst + g.H * g.W, T(0));
      const T* src = gp + p * g.OH * g.OW;
      for (int64_t oh = 0; oh < g.OH; ++oh) {
        const int64_t h0 = adaptive_start(oh, g.H, g.OH), h1 = adaptive_end(oh, g.H, g.OH);
        for (int64_t ow = 0; ow < g.OW; ++ow) {
          const int64_t w0 = adaptive_start(ow, g.W, g.OW), w1 = adaptive_end(ow, g.W, g.OW);
          const T v = src[oh * g.OW + ow] / static_cast<T>((h1 - h0) * (w1 - w0));
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) dst[h * g.W + w] += v;
        }
      }
    }
  });
}

// ---- depthwise convolution: one kernel tap at a time over each (n, c) plane ----

void depthwise_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dGeom& g, int64_t batch,
                      Tensor& out) {
  dispatch_float(x.dtype(), "depthwise_conv2d", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    const T* wp = w.data<T>();
    const T* bp = bias.defined() ? bias.data<T>() : nullptr;
    T* op = out.data<T>();
    const int64_t planes = batch * g.C;
    const int threads = num_threads_for(planes * g.kh * g.kw * g.OH * g.OW);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const int64_t c = p % g.C;
      const T* in = xp + p * g.H * g.W;
      T* o = op + p * g.OH * g.OW;
      std::fill(o, o + g.OH * g.OW, bp ? bp[c] : T(0));
      for (int64_t i = 0; i < g.kh; ++i) {
        int64_t oh_lo, oh_hi;
        valid_range(g.H, g.OH, g.sh, g.ph, i * g.dh, oh_lo, oh_hi);
        for (int64_t j = 0; j < g.kw; ++j) {
          const T wv = wp[(c * g.kh + i) * g.kw + j];
          int64_t ow_lo, ow_hi;
          valid_range(g.W, g.OW, g.sw, g.pw, j * g.dw, ow_lo, ow_hi);
          for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
            T* dst = o + oh * g.OW;
            const T* src = in + (oh * g.sh - g.ph + i * g.dh) * g.W + (j * g.dw - g.pw);
            if (g.sw == 1) {
              for (int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow] += wv * src[ow];
            } else {
              for (int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow] += wv * src[ow * g.sw];
            }
          }
        }
      }
    }
  });
}

void depthwise_conv2d_backward_input(const Tensor& gy, const Tensor& w, const Conv2dGeom& g, int64_t batch,
                                     Tensor& gx) {
  dispatch_float(gx.dtype(), "depthwise_conv2d_backward_input", [&](auto tag) {
    using T = decltype(tag);
    const T* gp = gy.data<T>();
    const T* wp = w.data<T>();
    T* xp = gx.data<T>();
    const int64_t planes = batch * g.C;
    const int threads = num_threads_for(planes * g.kh * g.kw * g.OH * g.OW);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const int64_t c = p % g.C;
      const T* src = gp + p * g.OH * g.OW;
      T* dst = xp + p * g.H * g.W;
      std::fill(dst, dst + g.H * g.W, T(0));
      for (int64_t i = 0; i < g.kh; ++i) {
        int64_t oh_lo, oh_hi;
        valid_range(g.H, g.OH, g.sh, g.ph, i * g.dh, oh_lo, oh_hi);
        for (int64_t j = 0; j < g.kw; ++j) {
          const T wv = wp[(c * g.kh + i) * g.kw + j];
          int64_t ow_lo, ow_hi;
          valid_range(g.W, g.OW, g.sw, g.pw, j * g.dw, ow_lo, ow_hi);
          for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
            const T* s = src + oh * g.OW;
            T* d = dst + (oh * g.sh - g.ph + i * g.dh) * g.W + (j * g.dw - g.pw);
            if (g.sw == 1) {
              for (int64_t ow = ow_lo; ow < ow_hi; ++ow) d[ow] += wv * s[ow];
            } else {
              for (int64_t ow = ow_lo; ow < ow_hi; ++ow) d[ow * g.sw] += wv * s[ow];
            }
          }
        }
      }
    }
  });
}

void depthwise_conv2d_backward_weight(const Tensor& gy, const Tensor& x, const Conv2dGeom& g, int64_t batch,
                                      Tensor& gw) {
  dispatch_float(gw.dtype(), "depthwise_conv2d_backward_weight", [&](auto tag) {
    using T = decltype(tag);
    const T* gp = gy.data<T>();
    const T* xp = x.data<T>();
    T* wp = gw.data<T>();
    const int threads = num_threads_for(batch * g.C * g.kh * g.kw * g.OH * g.OW);
    // Parallel over channels; each thread reduces its channel over the batch, so no races.
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t c = 0; c < g.C; ++c) {
      for (int64_t i = 0; i < g.kh; ++i) {
        int64_t oh_lo, oh_hi;
        valid_range(g.H, g.OH, g.sh, g.ph, i * g.dh, oh_lo, oh_hi);
        for (int64_t j = 0; j < g.kw; ++j) {
          int64_t ow_lo, ow_hi;
          valid_range(g.W, g.OW, g.sw, g.pw, j * g.dw, ow_lo, ow_hi);
          double acc = 0;
          for (int64_t n = 0; n < batch; ++n) {
            const T* in = xp + (n * g.C + c) * g.H * g.W;
            const T* s = gp + (n * g.C + c) * g.OH * g.OW;
            T part = 0;
            for (int64_t oh = oh_lo; oh < oh_hi; ++oh) {
              const T* row = s + oh * g.OW;
              const T* src = in + (oh * g.sh - g.ph + i * g.dh) * g.W + (j * g.dw - g.pw);
              if (g.sw == 1) {
                for (int64_t ow = ow_lo; ow < ow_hi; ++ow) part += row[ow] * src[ow];
              } else {
                for (int64_t ow = ow_lo; ow < ow_hi; ++ow) part += row[ow] * src[ow * g.sw];
              }
            }
            acc += part;
          }
          wp[(c * g.kh + i) * g.kw + j] = static_cast<T>(acc);
        }
      }
    }
  });
}

}  // namespace st::backend::cpu
