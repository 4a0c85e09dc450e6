#pragma once
// Element loads and stores of the elementwise loops (binary.cpp, unary.cpp). Each storage type T
// is read as Compute<T> and written back from it; bfloat16 goes through its raw 16 bits with
// integer operations that vectorise (the BFloat16 struct's converting constructor does not), with
// the same rounding as that constructor: nearest-even, NaN kept a quiet NaN. float16 goes through
// Half's branch-free conversions, which vectorise too (GCC 12 does not vectorise _Float16's F16C
// conversions without AVX512-FP16: 3-30x slower on a Zen 4).
#include <bit>
#include <cstdint>
#include <type_traits>

#include "backend/cpu/vmath.h"
#include "spiraltorch/dtype.h"

namespace st::cpu {

template <typename S>
inline constexpr bool kHalfType = std::is_same_v<S, BFloat16> || std::is_same_v<S, Half>;

// The type a storage type computes in: float for the half types, the type itself otherwise.
template <typename S>
using Compute = std::conditional_t<kHalfType<S>, float, S>;

// What the loops index: the 16-bit float types as uint16_t, everything else as itself.
template <typename S>
using Raw = std::conditional_t<kHalfType<S>, uint16_t, S>;

template <typename S>
ST_VINLINE Compute<S> load_elem(Raw<S> v) {
  if constexpr (std::is_same_v<S, BFloat16>) {
    return std::bit_cast<float>(static_cast<uint32_t>(v) << 16);
  } else if constexpr (std::is_same_v<S, Half>) {
    return Half::to_float(v);
  } else {
    return static_cast<Compute<S>>(v);
  }
}

template <typename S, typename C>
ST_VINLINE Raw<S> store_elem(C v) {
  if constexpr (std::is_same_v<S, BFloat16>) {
    const uint32_t u = std::bit_cast<uint32_t>(static_cast<float>(v));
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t quiet = (u >> 16) | 0x40u;
    return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
  } else if constexpr (std::is_same_v<S, Half>) {
    return Half::from_float(static_cast<float>(v));
  } else if constexpr (std::is_same_v<S, bool>) {
    return static_cast<bool>(v);
  } else {
    return S(v);
  }
}

}  // namespace st::cpu
