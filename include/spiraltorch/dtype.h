#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace st {

enum class Dtype : uint8_t { Bool, UInt8, Int32, Int64, Float16, BFloat16, Float32, Float64 };

// IEEE binary16 storage; arithmetic happens in float32. The conversions are branch-free bit
// arithmetic (selects, one float add or subtract for subnormals) so that loops over half
// tensors vectorise; float -> half rounds to nearest even, overflow gives inf, NaN a quiet NaN.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) : bits(from_float(f)) {}
  operator float() const { return to_float(bits); }
  static uint16_t from_float(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t a = x & 0x7fffffffu;
    // Normal halves: rebias the exponent, round the 13 dropped bits to nearest even.
    const uint32_t normal = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    // Below 2^-14: adding 0.5f leaves the half's 10 mantissa bits at the bottom, rounded by the FPU.
    const uint32_t subnormal = std::bit_cast<uint32_t>(std::bit_cast<float>(a) + 0.5f) - 0x3f000000u;
    uint32_t r = a < 0x38800000u ? subnormal : normal;
    r = a >= 0x477ff000u ? 0x7c00u : r;  // 65520 and above round to inf
    r = a > 0x7f800000u ? 0x7e00u : r;   // NaN
    return static_cast<uint16_t>(r | sign);
  }
  static float to_float(uint16_t h) {
    const uint32_t em = static_cast<uint32_t>(h & 0x7fffu) << 13;
    const uint32_t e = em & 0x0f800000u;
    const uint32_t normal = em + 0x38000000u;  // exponent rebiased by 127 - 15
    const uint32_t infnan = em + 0x70000000u;  // exponent 31 -> 255, payload kept
    // Subnormals: 2^-14 (1 + m / 1024) - 2^-14 = m 2^-24, exact.
    const uint32_t subnormal =
        std::bit_cast<uint32_t>(std::bit_cast<float>(em + 0x38800000u) - std::bit_cast<float>(0x38800000u));
    const uint32_t r = e == 0x0f800000u ? infnan : (e == 0 ? subnormal : normal);
    return std::bit_cast<float>(r | (static_cast<uint32_t>(h & 0x8000u) << 16));
  }
};

// bfloat16 storage (upper half of a float32, round-to-nearest-even); arithmetic in float32.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) {
    uint32_t u = std::bit_cast<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      bits = static_cast<uint16_t>((u >> 16) | 0x40);  // keep NaN a quiet NaN
    } else {
      u += 0x7fffu + ((u >> 16) & 1u);
      bits = static_cast<uint16_t>(u >> 16);
    }
  }
  operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
};

size_t dtype_size(Dtype d);
const char* dtype_name(Dtype d);  // "float32", "int64", ...
Dtype dtype_from_name(const std::string& name);
inline bool is_floating(Dtype d) { return d >= Dtype::Float16; }
inline bool is_half(Dtype d) { return d == Dtype::Float16 || d == Dtype::BFloat16; }
inline bool is_integral(Dtype d) { return d <= Dtype::Int64; }  // bool included
// NumPy/PyTorch-style promotion between two tensor dtypes.
Dtype promote_types(Dtype a, Dtype b);
// The dtype float ops compute in: float64 stays, everything else float32.
inline Dtype compute_float(Dtype d) { return d == Dtype::Float64 ? Dtype::Float64 : Dtype::Float32; }
// Type that a float op returns for an input dtype (ints become float32, halves stay).
inline Dtype float_result(Dtype d) { return is_floating(d) ? d : Dtype::Float32; }

template <typename T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr Dtype value = Dtype::Bool;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr Dtype value = Dtype::UInt8;
};
template <>
struct dtype_of<int32_t> {
  static constexpr Dtype value = Dtype::Int32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr Dtype value = Dtype::Int64;
};
template <>
struct dtype_of<Half> {
  static constexpr Dtype value = Dtype::Float16;
};
template <>
struct dtype_of<BFloat16> {
  static constexpr Dtype value = Dtype::BFloat16;
};
template <>
struct dtype_of<float> {
  static constexpr Dtype value = Dtype::Float32;
};
template <>
struct dtype_of<double> {
  static constexpr Dtype value = Dtype::Float64;
};

}  // namespace st

// One case of a dtype switch: BODY with `scalar_t` bound to TYPE.
#define ST_DISPATCH_CASE(DTYPE, TYPE, ...) \
  case ::st::Dtype::DTYPE: {               \
    using scalar_t = TYPE;                 \
    return __VA_ARGS__();                  \
  }

// The bool and integer cases of the full and arithmetic dispatches.
#define ST_DISPATCH_INT_CASES(...)              \
  ST_DISPATCH_CASE(Bool, bool, __VA_ARGS__)     \
  ST_DISPATCH_CASE(UInt8, uint8_t, __VA_ARGS__) \
  ST_DISPATCH_CASE(Int32, int32_t, __VA_ARGS__) \
  ST_DISPATCH_CASE(Int64, int64_t, __VA_ARGS__)

// Calls BODY with `scalar_t` bound to the C++ type of a dtype, the 16-bit float types bound to
// HALF and BF16 (::st::Half/::st::BFloat16 on the host, __half/__nv_bfloat16 in CUDA code).
#define ST_DISPATCH_ALL_AS(DT, HALF, BF16, ...)     \
  [&] {                                             \
    switch (DT) {                                   \
      ST_DISPATCH_INT_CASES(__VA_ARGS__)            \
      ST_DISPATCH_CASE(Float16, HALF, __VA_ARGS__)  \
      ST_DISPATCH_CASE(BFloat16, BF16, __VA_ARGS__) \
      ST_DISPATCH_CASE(Float32, float, __VA_ARGS__) \
      case ::st::Dtype::Float64:                    \
      default: {                                    \
        using scalar_t = double;                    \
        return __VA_ARGS__();                       \
      }                                             \
    }                                               \
  }()

#define ST_DISPATCH_ALL(DT, ...) ST_DISPATCH_ALL_AS(DT, ::st::Half, ::st::BFloat16, __VA_ARGS__)

// Arithmetic kernels: no half types (they are computed in float32 by the op layer).
#define ST_DISPATCH_ARITH(DT, ...)                  \
  [&] {                                             \
    switch (DT) {                                   \
      ST_DISPATCH_INT_CASES(__VA_ARGS__)            \
      ST_DISPATCH_CASE(Float32, float, __VA_ARGS__) \
      default: {                                    \
        using scalar_t = double;                    \
        return __VA_ARGS__();                       \
      }                                             \
    }                                               \
  }()

#define ST_DISPATCH_FLOAT(DT, ...)      \
  [&] {                                 \
    if ((DT) == ::st::Dtype::Float64) { \
      using scalar_t = double;          \
      return __VA_ARGS__();             \
    }                                   \
    using scalar_t = float;             \
    return __VA_ARGS__();               \
  }()

namespace st {
// Value conversions that route the 16-bit float types through float32.
template <typename T>
inline double to_double(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(v);
  } else {
    return static_cast<double>(v);
  }
}
template <typename T>
inline T from_double(double v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else {
    return static_cast<T>(v);
  }
}
}  // namespace st
