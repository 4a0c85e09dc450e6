#pragma once
// Row kernels' shared pieces (softmax in reduce.cu, layer norm in layer_norm.cu): a row held in
// registers, the reduction functors, and the block sizes for a row length.
#include <cstdint>
#include <initializer_list>

#include "backend/cuda/common.cuh"

namespace st::backend::cuda {

// ---- rows that fit in registers: one read and one write per element ----
// Thread t of a block holds vectors t, t + blockDim.x, ... (kRowItems of them) of one row;
// cols must be a multiple of VEC and the row pointers VEC-aligned.
constexpr int kRowItems = 4;

template <typename T, int VEC, typename C = T>
struct RowRegs {
  C v[kRowItems][VEC];
  // Loads the row's vectors (converted to C); slots past the row end are set to `pad`.
  __device__ void load(const T* row, int64_t cols, C pad) {
#pragma unroll
    for (int it = 0; it < kRowItems; ++it) {
      const int64_t j = (static_cast<int64_t>(it) * blockDim.x + threadIdx.x) * VEC;
      if (j < cols) {
        const Pack<T, VEC> p = *reinterpret_cast<const Pack<T, VEC>*>(row + j);
#pragma unroll
        for (int q = 0; q < VEC; ++q) v[it][q] = convert<C>(p.v[q]);
      } else {
#pragma unroll
        for (int q = 0; q < VEC; ++q) v[it][q] = pad;
      }
    }
  }
  // Stores the row as D (T unless given), one rounding from C.
  template <typename D = T>
  __device__ void store(D* row, int64_t cols) const {
#pragma unroll
    for (int it = 0; it < kRowItems; ++it) {
      const int64_t j = (static_cast<int64_t>(it) * blockDim.x + threadIdx.x) * VEC;
      if (j < cols) {
        Pack<D, VEC> p;
#pragma unroll
        for (int q = 0; q < VEC; ++q) p.v[q] = convert<D>(v[it][q]);
        *reinterpret_cast<Pack<D, VEC>*>(row + j) = p;
      }
    }
  }
  __device__ static bool valid(int it, int64_t cols) {
    return (static_cast<int64_t>(it) * blockDim.x + threadIdx.x) * VEC < cols;
  }
};

template <typename T>
struct MaxOp {
  __device__ T operator()(T a, T b) const { return a > b ? a : b; }
};
template <typename T>
struct AddOp {
  __device__ T operator()(T a, T b) const { return a + b; }
};

// Threads per row for the register kernels (a power of two, 32..1024), or 0 when the row is not
// a multiple of the vector width, a pointer is not 16-byte aligned, or the row does not fit.
template <int VEC>
inline int regs_threads_vec(int64_t cols, std::initializer_list<const void*> ptrs) {
  if (cols % VEC != 0) return 0;
  for (const void* p : ptrs) {
    if (p && reinterpret_cast<uintptr_t>(p) % 16 != 0) return 0;
  }
  const int64_t vecs = (cols / VEC + kRowItems - 1) / kRowItems;
  int t = 32;
  while (t < vecs) t *= 2;
  return t <= 1024 ? t : 0;
}
template <typename T>
inline int regs_threads(int64_t cols, std::initializer_list<const void*> ptrs) {
  return regs_threads_vec<vec_width<T>()>(cols, ptrs);
}

// Threads per row for the plain (strided) row kernels.
inline int row_threads(int64_t cols) { return cols >= 2048 ? 512 : (cols >= 512 ? 256 : (cols >= 128 ? 128 : 64)); }

}  // namespace st::backend::cuda
