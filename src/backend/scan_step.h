#pragma once
// The per-element rules of the scan() kernels, shared by the CPU and CUDA backends (host and device
// code) so both give the same values and indices. A line is scanned by scan_first() on its first
// element and scan_step() on each following one; floats are carried in float64, integers in int64.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "backend/backend.h"
#include "core/host_device.h"

namespace st::backend {

template <typename T>
using ScanCarry = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <typename A>
ST_HOST_DEVICE inline bool scan_is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) {
    return v != v;
  } else {
    return false;
  }
}

template <typename A>
ST_HOST_DEVICE inline void scan_first(A x, A& acc, int64_t& index) {
  acc = x;
  index = 0;
}

// Folds element j (value x) into the running value `acc` (and the running extreme's `index`).
template <typename A>
ST_HOST_DEVICE inline void scan_step(ScanOp op, A x, int64_t j, A& acc, int64_t& index) {
  switch (op) {
    case ScanOp::Prod:
      acc = acc * x;
      return;
    case ScanOp::LogSumExp:
      if constexpr (std::is_floating_point_v<A>) {
        if (scan_is_nan(acc) || scan_is_nan(x)) {
          acc = acc + x;  // NaN
          return;
        }
        const A hi = acc > x ? acc : x, lo = acc > x ? x : acc;
        // -inf + -inf stays -inf and +inf absorbs everything; otherwise shift by the larger term.
        if (hi == -std::numeric_limits<A>::infinity() || hi == std::numeric_limits<A>::infinity()) {
          acc = hi;
        } else {
          acc = hi + ::log1p(::exp(lo - hi));
        }
      }
      return;
    case ScanOp::Max:
      // torch.cummax: a later equal value takes over the index, and so does every NaN (a number after a
      // NaN never does).
      if (scan_is_nan(x) || (!scan_is_nan(acc) && x >= acc)) {
        acc = x;
        index = j;
      }
      return;
    case ScanOp::Min:
      if (scan_is_nan(x) || (!scan_is_nan(acc) && x <= acc)) {
        acc = x;
        index = j;
      }
      return;
  }
}

}  // namespace st::backend
