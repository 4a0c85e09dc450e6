#pragma once
// Strided N-ary iteration with broadcasting, dimension coalescing and OpenMP
// splitting. The inner callback sees one run of `n` elements per call, with a
// byte stride per operand, so contiguous runs vectorise.
#include <omp.h>

#include <array>
#include <cstdint>
#include <vector>

#include "backend/common/loop_plan.h"
#include "spiraltorch/tensor.h"

namespace st::backend::cpu {

constexpr int64_t kParallelGrain = 32768;  // elements below which threads cost more than they give

inline int num_threads_for(int64_t work) {
  if (work < kParallelGrain) return 1;
  const int64_t by_work = work / kParallelGrain;
  const int max = omp_get_max_threads();
  return static_cast<int>(by_work < max ? by_work : max);
}

// The loop over an output shape (backend/common/loop_plan.h), with byte strides.
template <int N>
using LoopGeometry = backend::LoopPlan<N>;

// Builds the loop over `shape` for operands with element strides `strides[i]` and
// element sizes `itemsize[i]`.
template <int N>
LoopGeometry<N> make_geometry(const Shape& shape, const std::array<const Shape*, N>& strides,
                              const std::array<int64_t, N>& itemsize) {
  return backend::plan_loop<N>(shape, strides, itemsize);
}

// Calls inner(ptrs, n, inner_strides) over every element of the loop.
template <int N, typename F>
void for_each(const LoopGeometry<N>& g, std::array<char*, N> base, F&& inner) {
  // Nothing to visit: return before counting rows, which for (2**47, 0) would take hours.
  for (const int64_t s : g.sizes) {
    if (s == 0) return;
  }
  const int nd = static_cast<int>(g.sizes.size());
  const int64_t inner_n = g.sizes[nd - 1];
  const std::array<int64_t, N> inner_s = g.strides[nd - 1];
  int64_t rows = 1;
  for (int d = 0; d < nd - 1; ++d) rows *= g.sizes[d];
  const int64_t total = rows * inner_n;
  const int threads = num_threads_for(total);
  if (rows == 1) {
    if (threads <= 1) {
      inner(base, inner_n, inner_s);
      return;
    }
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      // Chunks aligned to 16 elements keep vector loops whole.
      const int64_t chunk = ((inner_n + nt - 1) / nt + 15) / 16 * 16;
      const int64_t begin = std::min<int64_t>(inner_n, t * chunk);
      const int64_t end = std::min<int64_t>(inner_n, begin + chunk);
      if (end > begin) {
        std::array<char*, N> p;
        for (int i = 0; i < N; ++i) p[i] = base[i] + begin * inner_s[i];
        inner(p, end - begin, inner_s);
      }
    }
    return;
  }
  auto run_rows = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      std::array<char*, N> p = base;
      int64_t rem = r;
      for (int d = nd - 2; d >= 0; --d) {
        const int64_t idx = rem % g.sizes[d];
        rem /= g.sizes[d];
        for (int i = 0; i < N; ++i) p[i] += idx * g.strides[d][i];
      }
      inner(p, inner_n, inner_s);
    }
  };
  if (threads <= 1) {
    run_rows(0, rows);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) run_rows(r, r + 1);
}

}  // namespace st::backend::cpu
