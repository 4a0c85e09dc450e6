// Indexing and convolution-support kernels.
#include "backend/cuda/common.cuh"
#include "backend/cuda/kernels.h"

namespace st::backend::cuda {

using backend::Conv2dGeom;
using backend::Pool2dGeom;

void cat(const std::vector<Tensor>& xs, int64_t outer, Tensor& out) {
  const size_t es = out.itemsize();
  const int64_t row = outer > 0 ? out.numel() / outer : 0;
  int64_t col = 0;
  for (const Tensor& x : xs) {
    const int64_t w = outer > 0 ? x.numel() / outer : 0;
    if (w > 0) {
      ST_CUDA_CHECK(cudaMemcpy2DAsync(static_cast<char*>(out.raw_data()) + col * es, row * es, x.raw_data(), w * es,
                                      w * es, outer, cudaMemcpyDeviceToDevice, stream()));
    }
    col += w;
  }
}

namespace {

// out[o, j, i] = x[o, index[..], i]: gather reads an index per output element (kPerElement),
// index_select one per position j along the dim.
template <bool kPerElement>
void take_along(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner, Tensor& out) {
  STK_DISPATCH_ALL(x.dtype(), [&] {
    using T = scalar_t;
    const T* xp = static_cast<const T*>(x.raw_data());
    const int64_t* ip = index.data<int64_t>();
    T* op = static_cast<T*>(out.raw_data());
    for_n(outer * k * inner, [=] __device__(int64_t t) {
      const int64_t i = t % inner, o = t / (k * inner);
      const int64_t at = kPerElement ? ip[t] : ip[(t / inner) % k];
      op[t] = xp[(o * n + at) * inner + i];
    });
  });
}

}  // namespace

void gather(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner, Tensor& out) {
  take_along<true>(x, index, outer, n, k, inner, out);
}

void index_select(const Tensor& x, const Tensor& index, int64_t outer, int64_t n, int64_t k, int64_t inner,
                  Tensor& out) {
  take_along<false>(x, index, outer, n, k, inner, out);
}

namespace {

template <typename T>
__device__ inline T add_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (is_half_t<T>::value) {
    return convert<T>(to_f(a) + to_f(b));  // rounded once per addition, like the CPU kernel
  } else {
    return static_cast<T>(a + b);
  }
}

// 1- and 2-byte types have no atomicAdd of their own on every architecture: swap the aligned
// 32-bit word that holds the element. The word stays inside the allocation (blocks are 512-byte
// rounded) and only other scatter-adds of this kernel touch its other bytes, atomically too.
template <typename T>
__device__ inline void atomic_add_narrow(T* p, T v) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2);
  const auto addr = reinterpret_cast<uintptr_t>(p);
  auto* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
  const unsigned int shift = static_cast<unsigned int>(addr & 3) * 8;
  constexpr unsigned int mask = sizeof(T) == 1 ? 0xffu : 0xffffu;
  unsigned int old = *word, assumed = 0;
  do {
    assumed = old;
    const unsigned int bits = (assumed >> shift) & mask;
    T cur;
    memcpy(&cur, &bits, sizeof(T));  // little-endian: the low bytes of `bits`
    const T next = add_values(cur, v);
    unsigned int next_bits = 0;
    memcpy(&next_bits, &next, sizeof(T));
    old = atomicCAS(word, assumed, (assumed & ~(mask << shift)) | (next_bits << shift));
  } while (old != assumed);
}

template <typename T>
__device__ inline void atomic_add(T* p, T v) {
  if constexpr (sizeof(T) <= 2) {
    atomic_add_narrow(p, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    atomicAdd(p, v);
  }
}

}  // namespace

void scatter_add(Tensor& out, const Tensor& index, const Tensor& src, int64_t outer, int64_t n, int64_t k,
                 int64_t inner) {
  STK_DISPATCH_ALL(out.dtype(), [&] {
    using T = scalar_t;
    T* op = static_cast<T*>(out.raw_data());
    const int64_t* ip = index.data<int64_t>();
    const T* sp = static_cast<const T*>(src.raw_data());
    for_n(outer * k * inner, [=] __device__(int64_t t) {
      const int64_t i = t % inner, o = t / (k * inner);
      atomic_add(&op[(o * n + ip[t]) * inner + i], sp[t]);
    });
  });
}

namespace {

// Sequential scan per (outer, inner) column; floats accumulate in float64 and integers
// in int64, like the CPU kernel.
template <typename T, typename A>
void cumsum_typed(const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out) {
  const T* xp = static_cast<const T*>(x.raw_data());
  T* op = static_cast<T*>(out.raw_data());
  for_n(outer * inner, [=] __device__(int64_t t) {
    const int64_t o = t / inner, i = t % inner;
    A acc = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t at = (o * n + j) * inner + i;
      acc += static_cast<A>(xp[at]);
      op[at] = static_cast<T>(acc);
    }
  });
}

}  // namespace

void cumsum(const Tensor& x, int64_t outer, int64_t n, int64_t inner, Tensor& out) {
  switch (x.dtype()) {
    case Dtype::Float32:
      return cumsum_typed<float, double>(x, outer, n, inner, out);
    case Dtype::Float64:
      return cumsum_typed<double, double>(x, outer, n, inner, out);
    case Dtype::Int64:
      return cumsum_typed<int64_t, int64_t>(x, outer, n, inner, out);
    default:
      throw DtypeError(std::string("cumsum kernel: unsupported dtype ") + dtype_name(x.dtype()));
  }
}

void triangle(const Tensor& x, int64_t batch, int64_t rows, int64_t cols, int64_t diagonal, bool upper, Tensor& out) {
  STK_DISPATCH_ALL(x.dtype(), [&] {
    using T = scalar_t;
    const T* xp = static_cast<const T*>(x.raw_data());
    T* op = static_cast<T*>(out.raw_data());
    for_n(batch * rows * cols, [=] __device__(int64_t t) {
      const int64_t c = t % cols, r = (t / cols) % rows;
      const bool keep = upper ? (c - r >= diagonal) : (c - r <= diagonal);
      op[t] = keep ? xp[t] : convert<T>(0.0);
    });
  });
}

void im2col(const Tensor& x, const Conv2dGeom& g, int64_t batch, Tensor& cols) {
  ST_CUDA_FLOAT_CASES(x.dtype(), {
    const T* xp = static_cast<const T*>(x.raw_data());
    T* cp = static_cast<T*>(cols.raw_data());
    const Conv2dGeom G = g;
    const int64_t L = G.OH * G.OW, R = G.C * G.kh * G.kw;
    for_n(R * batch * L, [=] __device__(int64_t t) {
      const int64_t l = t % L, nb = (t / L) % batch, r = t / (L * batch);
      const int64_t j = r % G.kw, i = (r / G.kw) % G.kh, c = r / (G.kw * G.kh);
      const int64_t oh = l / G.OW, ow = l % G.OW;
      const int64_t h = oh * G.sh - G.ph + i * G.dh, w = ow * G.sw - G.pw + j * G.dw;
      const T v = (h >= 0 && h < G.H && w >= 0 && w < G.W) ? xp[((nb * G.C + c) * G.H + h) * G.W + w] : T(0);
      cp[r * G.col_ld + nb * G.col_batch_stride + l] = v;
    });
  });
}

void col2im(const Tensor& cols, const Conv2dGeom& g, int64_t batch, Tensor& x) {
  ST_CUDA_FLOAT_CASES(x.dtype(), {
    const T* cp = static_cast<const T*>(cols.raw_data());
    T* xp = static_cast<T*>(x.raw_data());
    const Conv2dGeom G = g;
    for_n(batch * G.C * G.H * G.W, [=] __device__(int64_t t) {
      const int64_t w = t % G.W, h = (t / G.W) % G.H, c = (t / (G.W * G.H)) % G.C, nb = t / (G.W * G.H * G.C);
      T acc = 0;
      for_each_covering_output(G, h, w, [&](int64_t i, int64_t j, int64_t oh, int64_t ow) {
        const int64_t r = (c * G.kh + i) * G.kw + j;
        acc += cp[r * G.col_ld + nb * G.col_batch_stride + oh * G.OW + ow];
      });
      xp[t] = acc;
    });
  });
}

void max_pool2d(const Tensor& x, const Pool2dGeom& g, int64_t planes, Tensor& out, Tensor& indices) {
  ST_CUDA_FLOAT_CASES(x.dtype(), {
    const T* xp = static_cast<const T*>(x.raw_data());
    T* op = static_cast<T*>(out.raw_data());
    int64_t* ip = indices.data<int64_t>();
    const Pool2dGeom G = g;
    for_n(planes * G.OH * G.OW, [=] __device__(int64_t t) {
      const int64_t ow = t % G.OW, oh = (t / G.OW) % G.OH, p = t / (G.OW * G.OH);
      const T* plane = xp + p * G.H * G.W;
      T best = T(-INFINITY);
      int64_t bi = -1;
      for_each_window_input(G, oh, ow, [&](int64_t, int64_t, int64_t h, int64_t w) {
        const T v = plane[h * G.W + w];
        if (bi < 0) bi = h * G.W + w;
        if (v > best || v != v) {
          best = v;
          bi = h * G.W + w;
        }
      });
      op[t] = best;
      ip[t] = bi < 0 ? 0 : bi;
    });
  });
}

void max_pool2d_backward(const Tensor& gy, const Tensor& indices, const Pool2dGeom& g, int64_t planes, Tensor& gx) {
  ST_CUDA_FLOAT_CASES(gx.dtype(), {
    const T* gp = static_cast<const T*>(gy.raw_data());
    const int64_t* ip = indices.data<int64_t>();
    T* xp = static_cast<T*>(gx.raw_data());
    const int64_t HW = g.H * g.W, L = g.OH * g.OW;
    ST_CUDA_CHECK(cudaMemsetAsync(xp, 0, planes * HW * sizeof(T), stream()));
    for_n(planes * L, [=] __device__(int64_t t) { atomicAdd(&xp[(t / L) * HW + ip[t]], gp[t]); });
  });
}

}  // namespace st::backend::cuda
