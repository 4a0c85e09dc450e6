// Binary search of each value in its row of a sorted sequence, rows in parallel.
#include "backend/cpu/search.h"

#include "backend/common/sorted_bound.h"
#include "backend/cpu/loops.h"

namespace st::backend::cpu {

namespace {

template <typename scalar_t>
void search_typed(const Tensor& sorted, const Tensor& values, bool right, Tensor& out) {
  const int64_t rows = values.shape()[0], m = values.shape()[1], n = sorted.shape()[1];
  const bool shared = sorted.shape()[0] == 1 && rows != 1;
  const scalar_t* s = sorted.data<scalar_t>();
  const scalar_t* v = values.data<scalar_t>();
  int64_t* o = out.data<int64_t>();
  const int threads = num_threads_for(rows * m * 16);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < rows * m; ++i) {
    const int64_t r = i / m;
    o[i] = sorted_bound(s + (shared ? 0 : r * n), n, v[i], right);
  }
}

}  // namespace

void searchsorted(const Tensor& sorted, const Tensor& values, bool right, Tensor& out) {
  with_search_type(values.dtype(), [&]<typename T>() { search_typed<T>(sorted, values, right, out); });
}

}  // namespace st::backend::cpu
