#pragma once
// Integer power by squaring, one function for the CPU and CUDA binary kernels: a negative
// exponent gives what torch gives (1 and -1 keep a magnitude of 1, any other base truncates to 0).
#include <type_traits>

#include "core/host_device.h"

namespace st::backend {

template <typename T>
ST_HOST_DEVICE inline T int_pow(T base, T exp) {
  if constexpr (std::is_same_v<T, bool>) {
    return base || !exp;
  } else {
    if constexpr (std::is_signed_v<T>) {
      if (exp < 0) return base == 1 ? T(1) : (base == T(-1) ? ((exp & 1) ? T(-1) : T(1)) : T(0));
    }
    T result = 1;
    while (exp) {
      if (exp & 1) result *= base;
      base *= base;
      exp >>= 1;
    }
    return result;
  }
}

}  // namespace st::backend
