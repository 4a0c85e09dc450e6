// Binary search of each value in its row of a sorted sequence, rows in parallel.
#include "backend/cpu/search.h"

#include "backend/cpu/loops.h"

namespace st::backend::cpu {

namespace {

// torch's lower/upper bound: step right while !(s >= v) (or !(s > v)), so a NaN value lands after
// everything.
template <typename scalar_t>
int64_t bound(const scalar_t* s, int64_t n, scalar_t v, bool right) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const bool go_right = right ? !(s[mid] > v) : !(s[mid] >= v);
    if (go_right) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

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
    o[i] = bound(s + (shared ? 0 : r * n), n, v[i], right);
  }
}

}  // namespace

void searchsorted(const Tensor& sorted, const Tensor& values, bool right, Tensor& out) {
  switch (values.dtype()) {
    case Dtype::Float32:
      return search_typed<float>(sorted, values, right, out);
    case Dtype::Float64:
      return search_typed<double>(sorted, values, right, out);
    default:
      return search_typed<int64_t>(sorted, values, right, out);
  }
}

}  // namespace st::backend::cpu
