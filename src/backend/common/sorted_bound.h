#pragma once
// The binary search of Backend::searchsorted, one definition for the CPU (cpu/search.cpp) and CUDA
// (cuda/sort.cu) kernels, so both place ties and NaN alike.
#include <cstdint>
#include <string>

#include "core/host_device.h"
#include "spiraltorch/error.h"
#include "spiraltorch/tensor.h"

namespace st::backend {

// torch's lower/upper bound in the sorted row s[0, n): steps right while !(s >= v) (or !(s > v) with
// `right`), so a NaN value lands after everything.
template <typename T>
ST_HOST_DEVICE inline int64_t sorted_bound(const T* s, int64_t n, T v, bool right) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (right ? !(s[mid] > v) : !(s[mid] >= v)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Calls search.template operator()<T>() with T the element type of searchsorted's operands (the op
// casts them to float32, float64 or int64).
template <typename F>
void with_search_type(Dtype dt, F&& search) {
  switch (dt) {
    case Dtype::Float32:
      return search.template operator()<float>();
    case Dtype::Float64:
      return search.template operator()<double>();
    case Dtype::Int64:
      return search.template operator()<int64_t>();
    default:
      throw DtypeError(std::string("searchsorted kernel: unsupported dtype ") + dtype_name(dt));
  }
}

}  // namespace st::backend
